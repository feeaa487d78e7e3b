"""Pages of a listing: how many lines a request may ask for, and the opaque token that names
where the next page starts (the fields of the last line sent, ``|``-joined, in URL-safe base64
without padding). One way for every listing: games, the archive, the leaderboard."""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime

from boneyard.server.errors import InvalidArgument

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "decode_time_token",
    "decode_token",
    "encode_time_token",
    "encode_token",
    "page_size",
]

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
"""Lines in one answer, at most (a larger page_size is served this many)."""


def page_size(size: int, what: str = "page_size") -> int:
    """The lines to send for a request's ``size`` (0: the default; at most ``MAX_PAGE_SIZE``)."""
    if size < 0:
        raise InvalidArgument(f"{what} must not be negative, not {size}")
    return min(size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


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
