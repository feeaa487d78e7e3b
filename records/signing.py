"""Signatures of game records: the server's Ed25519 signature over a record's header and the
head of its hash chain (docs/record-format.md, "The signature").

The hash chain shows an edit only to someone who knows the head the server holds: a forger who
recomputes the chain after an edit makes a record that verifies, and the header (ids, names,
times) is in no event at all. The signature closes both: it covers every header field and the
head of the chain, and only the server holds its private key.

``signed_bytes(record)`` is what is signed, defined so that another language can rebuild it:

    prefix   the 28 ASCII bytes "boneyard.record.signature.v1" and one zero byte
    u32      format_version
    text     game_id
    text     name
    bytes    rules: its canonical bytes (deterministic protobuf, no unknown fields)
    u32      number of seats, then for each: u32 seat, text player_name, u32 team
    u32      number of hands, then for each: u32 number, bytes seed_commitment, bytes seed
    u32      number of scores, then each as i32; u32 winner; u32 number of winning seats,
             then each as u32
    time     create_time
    time     finish_time
    u64      number of events
    32 bytes the head of the hash chain, computed from the events' canonical bytes (for a
             valid record, the last event's hash; 32 zero bytes for a record with no events)

where u32/u64 are unsigned and i32 signed (two's complement) big-endian integers of 4/8/4
bytes, ``text`` is a u32 byte length and the UTF-8 bytes, ``bytes`` a u32 length and the
bytes, and ``time`` is one byte (1: set, 0: unset), then the seconds as a signed 8-byte
big-endian integer and the nanos as a u32 (both 0 when unset).

Pure functions, no I/O: the server signs with ``sign_record``; the verifier
(``boneyard.records.verify``) and the clients check with ``check_signature``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import struct

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from google.protobuf.timestamp_pb2 import Timestamp

from boneyard.api.v1 import archive_pb2, rules_pb2
from boneyard.records.hashing import chain_head
from boneyard.records.record import canonical_bytes

__all__ = [
    "FINGERPRINT_DIGITS",
    "KEY_SIZE",
    "PREFIX",
    "SIGNATURE_SIZE",
    "SIGNATURE_VERSION",
    "BadKey",
    "BadSignature",
    "check_signature",
    "head_of",
    "key_fingerprint",
    "key_text",
    "parse_public_key",
    "public_key_of",
    "sign_record",
    "signed_bytes",
]

SIGNATURE_VERSION = 1
"""The version of the signed bytes this module makes and checks (``RecordSignature.version``)."""
PREFIX = b"boneyard.record.signature.v1\x00"
"""Domain separation: no other message this key could ever sign starts with these bytes."""
KEY_SIZE = 32
SIGNATURE_SIZE = 64
FINGERPRINT_DIGITS = 20
"""The hex digits of SHA-256 a fingerprint shows, in groups of four: 80 bits, so that making
another key with a given fingerprint takes some 2**80 tries."""


class BadKey(ValueError):
    """Text or bytes that are no Ed25519 public key."""


class BadSignature(Exception):
    """A record's signature that does not hold, or cannot be checked: what a verifier expected
    and what it found, in words (a discrepancy's ``expected`` and ``found``)."""

    def __init__(self, expected: str, found: str) -> None:
        super().__init__(f"expected {expected}; found {found}")
        self.expected = expected
        self.found = found


# ---------------------------------------------------------------- the signed bytes


def _u32(value: int) -> bytes:
    return struct.pack(">I", value)


def _blob(data: bytes) -> bytes:
    return _u32(len(data)) + data


def _text(value: str) -> bytes:
    return _blob(value.encode("utf-8"))


MIN_SECONDS = -62_135_596_800
"""0001-01-01T00:00:00Z, the first second a protobuf ``Timestamp`` may hold."""
MAX_SECONDS = 253_402_300_799
"""9999-12-31T23:59:59Z, its last."""


def _time(record: archive_pb2.GameRecord, field: str) -> bytes:
    if not record.HasField(field):  # type: ignore[arg-type]  # a name the stubs cannot check
        return b"\x00" + struct.pack(">qI", 0, 0)
    stamp: Timestamp = getattr(record, field)
    if not (MIN_SECONDS <= stamp.seconds <= MAX_SECONDS and 0 <= stamp.nanos < 1_000_000_000):
        # No clock signs such a time (protobuf's Timestamp is years 1 to 9999), and the
        # signed bytes have no form for it.
        raise BadSignature(
            f"a {field} that is a time (years 1 to 9999, nanos 0 to 999,999,999)",
            f"seconds {stamp.seconds}, nanos {stamp.nanos}",
        )
    return b"\x01" + struct.pack(">qI", stamp.seconds, stamp.nanos)


def _canonical_rules(rules: rules_pb2.Ruleset) -> bytes:
    bare = rules_pb2.Ruleset()
    bare.CopyFrom(rules)
    bare.DiscardUnknownFields()
    return bare.SerializeToString(deterministic=True)


def head_of(record: archive_pb2.GameRecord) -> bytes:
    """The head of the hash chain of the record's events, computed from their canonical
    bytes (the hashes the record carries are not read)."""
    return chain_head(canonical_bytes(recorded.event) for recorded in record.events)


def signed_bytes(record: archive_pb2.GameRecord, head: bytes | None = None) -> bytes:
    """The bytes a record's signature signs (the module's doc). ``head``: the head of the
    chain when the caller has computed it already (the verifier has)."""
    parts = [PREFIX, _u32(record.format_version), _text(record.game_id), _text(record.name)]
    parts.append(_blob(_canonical_rules(record.rules)))
    parts.append(_u32(len(record.seats)))
    for seat in record.seats:
        parts += [_u32(seat.seat), _text(seat.player_name), _u32(seat.team)]
    parts.append(_u32(len(record.hands)))
    for hand in record.hands:
        parts += [_u32(hand.number), _blob(hand.seed_commitment), _blob(hand.seed)]
    result = record.result
    parts.append(_u32(len(result.scores)))
    parts += [struct.pack(">i", score) for score in result.scores]
    parts.append(_u32(result.winner))
    parts.append(_u32(len(result.winning_seats)))
    parts += [_u32(seat) for seat in result.winning_seats]
    parts += [_time(record, "create_time"), _time(record, "finish_time")]
    parts.append(struct.pack(">Q", len(record.events)))
    parts.append(head_of(record) if head is None else head)
    return b"".join(parts)


# ---------------------------------------------------------------- signing and checking


def public_key_of(private_key: Ed25519PrivateKey) -> bytes:
    """The 32 bytes of the public key of ``private_key``."""
    return private_key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )


def sign_record(record: archive_pb2.GameRecord, private_key: Ed25519PrivateKey) -> None:
    """Sign ``record`` in place (any signature it had is replaced). Ed25519 is deterministic:
    the same record and key give the same signature every time."""
    record.ClearField("signature")
    record.signature.CopyFrom(
        archive_pb2.RecordSignature(
            version=SIGNATURE_VERSION,
            algorithm=archive_pb2.SIGNATURE_ALGORITHM_ED25519,
            public_key=public_key_of(private_key),
            signature=private_key.sign(signed_bytes(record)),
        )
    )


def check_signature(
    record: archive_pb2.GameRecord,
    public_key: bytes | None = None,
    *,
    head: bytes | None = None,
) -> bytes | None:
    """The public key whose signature ``record`` carries, once checked; ``None`` when it
    carries none. Raises ``BadSignature`` when the signature does not hold, cannot be checked,
    or, with ``public_key`` (the key the caller trusts), is missing or by another key."""
    wanted = f"a signature by {key_text(public_key)}" if public_key is not None else ""
    if not record.HasField("signature"):
        if public_key is not None:
            raise BadSignature(wanted, "no signature")
        return None
    signature = record.signature
    if signature.version != SIGNATURE_VERSION:
        raise BadSignature(
            f"signature version {SIGNATURE_VERSION}", f"signature version {signature.version}"
        )
    if signature.algorithm != archive_pb2.SIGNATURE_ALGORITHM_ED25519:
        raise BadSignature(
            "an Ed25519 signature",
            f"algorithm {_algorithm_name(signature.algorithm)}",
        )
    if len(signature.public_key) != KEY_SIZE:
        raise BadSignature(
            f"a public key of {KEY_SIZE} bytes", f"{len(signature.public_key)} bytes"
        )
    if public_key is not None and not hmac.compare_digest(signature.public_key, public_key):
        raise BadSignature(wanted, f"a signature by {key_text(signature.public_key)}")
    if len(signature.signature) != SIGNATURE_SIZE:
        raise BadSignature(
            f"a signature of {SIGNATURE_SIZE} bytes", f"{len(signature.signature)} bytes"
        )
    try:
        key = Ed25519PublicKey.from_public_bytes(signature.public_key)
        key.verify(signature.signature, signed_bytes(record, head))
    except InvalidSignature:
        raise BadSignature(
            f"a signature by {key_text(signature.public_key)} of the record's header and chain",
            "a signature that does not hold for them: the header or the log was changed "
            "after signing",
        ) from None
    return bytes(signature.public_key)


def _algorithm_name(value: int) -> str:
    try:
        # Any number: one the enum does not have is the ValueError below.
        return archive_pb2.SignatureAlgorithm.Name(value)  # type: ignore[arg-type]
    except ValueError:
        return str(value)


# ---------------------------------------------------------------- keys as text


def key_fingerprint(public_key: bytes) -> str:
    """The one way a public key is shown for a person to compare by eye: the first
    ``FINGERPRINT_DIGITS`` hex digits of SHA-256 of its 32 raw bytes, in groups of four
    (``3376 8e95 04c1 9a2b 7f0d``). ``boneyard verify``, ``boneyard public-key``,
    ``boneyard-server admin signing-key``, ``ArchiveService.GetSigningKey``, a verdict's
    summary and the web app all show this string."""
    digits = hashlib.sha256(public_key).hexdigest()[:FINGERPRINT_DIGITS]
    return " ".join(digits[i : i + 4] for i in range(0, FINGERPRINT_DIGITS, 4))


def key_text(public_key: bytes) -> str:
    """A public key in words: its base64 (what ``--public-key`` takes) and its fingerprint
    (``ed25519 key 3q2+7w...= (fingerprint 3376 8e95 04c1 9a2b 7f0d)``)."""
    encoded = base64.b64encode(public_key).decode("ascii")
    return f"ed25519 key {encoded} (fingerprint {key_fingerprint(public_key)})"


def parse_public_key(data: bytes) -> bytes:
    """The 32 bytes of an Ed25519 public key given as 32 raw bytes, base64 or hex text, or a
    PEM ``PUBLIC KEY`` (surrounding white space ignored). Raises ``BadKey`` saying why not."""
    if len(data) == KEY_SIZE:
        return data
    text = data.strip()
    if text.startswith(b"-----BEGIN"):
        try:
            loaded = serialization.load_pem_public_key(text)
        except ValueError as e:
            raise BadKey(f"not a PEM public key: {e}") from None
        if not isinstance(loaded, Ed25519PublicKey):
            raise BadKey(f"a PEM public key, but not an Ed25519 one ({type(loaded).__name__})")
        return loaded.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    try:
        if len(text) == 2 * KEY_SIZE:
            raw = bytes.fromhex(text.decode("ascii"))
        else:
            raw = base64.b64decode(text + b"=" * (-len(text) % 4), validate=True)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raw = b""
    if len(raw) != KEY_SIZE:
        shown = text[:60].decode("utf-8", "replace")
        raise BadKey(
            f"{shown!r} is not an Ed25519 public key: give its {KEY_SIZE} bytes in base64 "
            f"(44 characters) or hex (64), a PEM public key, or a file holding one"
        )
    return raw
