"""Seat tokens that a retry gets back unchanged.

A TakeSeat with a ``request_id`` may be retried (its answer lost on the way): the retry must
get the very token the first attempt made, since tokens are stored only as hashes and the
seat's holder may already be playing with it. So such a token is not drawn at random but
derived from the request: ``HMAC-SHA256(server secret, game id, request id)``. A retry gets
the same token and nothing is revoked; nobody without the request id (which the client keeps
as secret as the token itself: a new random UUID) can get it.

The server secret is 32 random bytes kept in the database (the table of the signing keys,
purpose ``seat-tokens``: the private half of an Ed25519 key pair made for this and nothing
else), so that every process on one database derives the same tokens.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging

from boneyard.server.archive.signing import kept_key_pair
from boneyard.server.competition.accounts import is_api_key
from boneyard.server.store.keys import KeyStore

__all__ = ["SEAT_TOKENS", "SeatTokens"]

log = logging.getLogger(__name__)

SEAT_TOKENS = "seat-tokens"
"""The purpose of the secret that derives retried seats' tokens (``signing_keys.purpose``)."""


class SeatTokens:
    def __init__(self, keys: KeyStore) -> None:
        self._keys = keys
        self._secret: bytes | None = None

    def token(self, game_id: str, request_id: str) -> str:
        """The seat token of a TakeSeat with ``request_id`` in ``game_id`` (the same for
        every attempt). Reads the database the first time (call it off the event loop)."""
        secret = self._secret or self._load()
        for attempt in range(1000):
            message = f"seat\x1e{game_id}\x1e{request_id}\x1e{attempt}".encode()
            digest = hmac.new(secret, message, hashlib.sha256).digest()
            token = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if not is_api_key(token):  # never one that reads as an account's key
                return token
        raise AssertionError("no seat token after 1000 attempts")  # pragma: no cover

    def _load(self) -> bytes:
        kept, made = kept_key_pair(self._keys, SEAT_TOKENS)
        if made:
            log.info("made the secret of retried seats' tokens (kept in the database)")
        self._secret = kept.private_key
        return self._secret
