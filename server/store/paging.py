"""The opaque token that names where the next page of a listing starts: the fields of the last
line sent, ``|``-joined, in URL-safe base64 without padding. One way for every listing: games,
the archive, the leaderboard (``boneyard.server.paging`` says how long a page is)."""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime

__all__ = ["decode_time_token", "decode_token", "encode_time_token", "encode_token"]

def encode_token(*fields: str) -> str:
    """The token of a page that starts after the line of these fields."""
    raw = "|".join(fields).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_token(token: str, count: int) -> list[str] | None:
    """The ``count`` fields of ``token`` (the last holds any further ``|``), or ``None`` when
    it is no token of that shape: the caller says what it is not a token of."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    fields = raw.split("|", count - 1)
    return fields if len(fields) == count else None


def encode_time_token(at: datetime, game_id: str) -> str:
    """The token of a page of games ordered by a time, then by id, after this one."""
    return encode_token(at.astimezone(UTC).isoformat(), game_id)


def decode_time_token(token: str) -> tuple[datetime, str] | None:
    """The (time with its zone, game id) of ``encode_time_token``, or ``None`` for anything
    else."""
    fields = decode_token(token, 2)
    if fields is None or not fields[1]:
        return None
    try:
        at = datetime.fromisoformat(fields[0])
    except ValueError:
        return None
    return (at, fields[1]) if at.tzinfo is not None else None
