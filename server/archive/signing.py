"""The server's signing key: where it comes from, and signing records with it.

A server signs every record it gives (``boneyard.records.signing`` defines the signature). Its key is

- the key file given with ``boneyard-server --signing-key FILE`` (env ``BONEYARD_SIGNING_KEY``):
  an Ed25519 private key in PEM (PKCS #8, unencrypted, as ``openssl genpkey -algorithm
  ed25519`` writes it) or its 32 raw bytes. The file is read, never written; or else
- the key pair in the database, made by the first process that needs it: every process on one
  database signs with the same key, across restarts (``boneyard.server.store.keys``).

The public key is what ``ArchiveService.GetSigningKey`` serves and ``boneyard-server admin
signing-key`` prints.
"""

from __future__ import annotations

import logging
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from boneyard.api.v1 import archive_pb2
from boneyard.records.signing import KEY_SIZE, public_key_of, sign_record
from boneyard.server.store.keys import KeyStore, StoredKey
from boneyard.server.store.repository import EventStore

__all__ = [
    "RECORDS",
    "RecordSigner",
    "SigningKeyError",
    "kept_key_pair",
    "load_signer",
    "private_key_from_bytes",
    "signer_from_database",
    "signer_from_file",
]

log = logging.getLogger(__name__)

RECORDS = "records"
"""The purpose of the key pair that signs records (``signing_keys.purpose``)."""
ALGORITHM = "ed25519"


class SigningKeyError(Exception):
    """No signing key can be had: an unreadable key file, or one that holds no Ed25519 private
    key; a key in the database that does not match itself."""


class RecordSigner:
    """Signs records with one private key."""

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._key = private_key
        self.public_key = public_key_of(private_key)
        """The 32 bytes of the public key."""

    def sign(self, record: archive_pb2.GameRecord) -> None:
        """Sign ``record`` in place."""
        sign_record(record, self._key)


def private_key_from_bytes(data: bytes, source: str) -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM (PKCS #8) text or its 32 raw bytes; ``source`` names
    where the bytes came from in the error."""
    if len(data) == KEY_SIZE:
        return Ed25519PrivateKey.from_private_bytes(data)
    if data.lstrip().startswith(b"-----BEGIN"):
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as e:  # TypeError: the PEM is encrypted
            raise SigningKeyError(f"{source}: not an unencrypted PEM private key: {e}") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningKeyError(
                f"{source}: a {type(key).__name__}, not an Ed25519 private key "
                f"(make one with: openssl genpkey -algorithm ed25519 -out FILE)"
            )
        return key
    raise SigningKeyError(
        f"{source}: neither a PEM private key nor {KEY_SIZE} raw bytes ({len(data)} bytes) "
        f"(make one with: openssl genpkey -algorithm ed25519 -out FILE)"
    )


def signer_from_file(path: str) -> RecordSigner:
    """The signer of a key file (PEM or 32 raw bytes). Raises ``SigningKeyError``."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise SigningKeyError(f"cannot read the signing key {path}: {e.strerror or e}") from None
    return RecordSigner(private_key_from_bytes(data, path))


def signer_from_database(store: EventStore) -> RecordSigner:
    """The signer of the database's key pair, made and kept now if it has none. Raises
    ``SigningKeyError``."""
    kept, made = kept_key_pair(KeyStore(store), RECORDS)
    if made:
        log.info("made the key pair that signs records (kept in the database)")
    if kept.algorithm != ALGORITHM:
        raise SigningKeyError(f"the database's signing key is {kept.algorithm}, not {ALGORITHM}")
    key = Ed25519PrivateKey.from_private_bytes(kept.private_key)
    if public_key_of(key) != kept.public_key:
        raise SigningKeyError("the database's signing key pair does not match itself")
    return RecordSigner(key)


def kept_key_pair(keys: KeyStore, purpose: str) -> tuple[StoredKey, bool]:
    """The Ed25519 key pair the database keeps for ``purpose``, made and kept now if it has
    none (race-safe: every process gets the one kept); and whether this call made it."""
    kept = keys.key(purpose)
    if kept is not None:
        return kept, False
    candidate = Ed25519PrivateKey.generate()
    raw = candidate.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    kept = keys.key_or_keep(purpose, StoredKey(ALGORITHM, raw, public_key_of(candidate)))
    return kept, kept.private_key == raw


def load_signer(store: EventStore, key_file: str | None = None) -> RecordSigner:
    """The server's signer: the key of ``key_file`` if given, else the database's (made now if
    it has none). Raises ``SigningKeyError``."""
    return signer_from_file(key_file) if key_file is not None else signer_from_database(store)
