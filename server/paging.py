"""Pages of a listing: how many lines a request may ask for. Where the next page starts is an
opaque token (``boneyard.server.store.paging``)."""

from __future__ import annotations

from boneyard.server.errors import InvalidArgument
from boneyard.server.store.paging import (
    decode_time_token,
    decode_token,
    encode_time_token,
    encode_token,
)

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
