"""Accounts' API keys: made here, shown once, stored only as their SHA-256.

A key starts with ``byk_`` so the server can tell it from a seat token (both travel as
``authorization: Bearer ...``) without a second lookup.
"""

from __future__ import annotations

import secrets

from boneyard.records.hashing import hash_token

__all__ = ["KEY_PREFIX", "is_api_key", "key_hash", "new_api_key"]

KEY_PREFIX = "byk_"


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def is_api_key(token: str) -> bool:
    return token.startswith(KEY_PREFIX)


def key_hash(key: str) -> str:
    """How an account's key is stored: as a seat token is (``hashing.hash_token``)."""
    return hash_token(key)
