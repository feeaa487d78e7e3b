"""The one definition of everything a verifier checks by hashing: the event hash chain (its
genesis, each link, the head of a log), the seed commitments of the deals, and the stored form
of a secret token (seat tokens and account keys).

The server writes with these functions and the offline verifier (``boneyard.records.verify``)
checks with them: there is no second copy to drift, so the server can never write a record its
own verifier rejects. Pure ``hashlib``: this module imports nothing of Boneyard.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable

__all__ = [
    "GENESIS_HASH",
    "HASH_SIZE",
    "chain_hash",
    "chain_head",
    "first_chain_break",
    "hash_token",
    "is_token_hash",
    "seed_commitment",
]

HASH_SIZE = 32
#: The ``prev_hash`` of a game's first event.
GENESIS_HASH = bytes(HASH_SIZE)

_TOKEN_HASH = re.compile(r"[0-9a-f]{64}")


def chain_hash(prev_hash: bytes, payload: bytes) -> bytes:
    """``sha256(prev_hash || payload)``: the hash stored with an event."""
    if len(prev_hash) != HASH_SIZE:
        raise ValueError(f"prev_hash must be {HASH_SIZE} bytes, got {len(prev_hash)}")
    return hashlib.sha256(prev_hash + payload).digest()


def chain_head(payloads: Iterable[bytes], head: bytes = GENESIS_HASH) -> bytes:
    """The hash of the last of ``payloads`` chained after ``head`` (from the genesis: a whole
    log's head)."""
    for payload in payloads:
        head = chain_hash(head, payload)
    return head


def first_chain_break(events: Iterable[tuple[int, bytes, bytes]]) -> tuple[int, str] | None:
    """Check ``(seq, payload, hash)`` triples, in order, from the first event of a game.

    Returns ``(seq, reason)`` for the first event that is out of sequence or whose hash does
    not match, or ``None`` when the whole chain holds.
    """
    prev = GENESIS_HASH
    expected_seq = 1
    for seq, payload, stored in events:
        if seq != expected_seq:
            return seq, f"expected event {expected_seq} here, found event {seq}"
        if not hmac.compare_digest(chain_hash(prev, payload), stored):
            return seq, "stored hash does not match sha256(previous hash || payload)"
        prev = stored
        expected_seq += 1
    return None


def hash_token(token: str) -> str:
    """The form a secret token is stored in (a seat token, an account's API key): sha256 of its
    UTF-8 bytes, lowercase hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def is_token_hash(value: str) -> bool:
    """Whether ``value`` looks like ``hash_token`` output (guards against storing a raw token)."""
    return _TOKEN_HASH.fullmatch(value) is not None


def seed_commitment(seed: bytes) -> bytes:
    """The commitment published for a hand before it is played: sha256 of the seed."""
    return hashlib.sha256(seed).digest()
