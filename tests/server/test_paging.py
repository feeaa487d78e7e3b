"""Pages of every listing: the size a request may ask for and the token of the next page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from boneyard.server.errors import InvalidArgument
from boneyard.server.paging import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    decode_time_token,
    decode_token,
    encode_time_token,
    encode_token,
    page_size,
)


def test_no_page_size_is_the_default_and_a_larger_one_is_cut_to_the_most() -> None:
    assert page_size(0) == DEFAULT_PAGE_SIZE
    assert page_size(7) == 7
    assert page_size(MAX_PAGE_SIZE + 1) == MAX_PAGE_SIZE


def test_a_negative_page_size_is_refused_by_its_name() -> None:
    with pytest.raises(InvalidArgument, match="history_size must not be negative, not -1"):
        page_size(-1, "history_size")


def test_a_token_gives_back_its_fields_and_the_last_keeps_any_bar() -> None:
    token = encode_token("2026-12-02T00:00:00+00:00", "game|1")
    assert "=" not in token and "|" not in token
    assert decode_token(token, 2) == ["2026-12-02T00:00:00+00:00", "game|1"]


@pytest.mark.parametrize("token", ["%%%", "a", encode_token("only one field"), "gA"])
def test_what_is_no_token_of_that_shape_is_none(token: str) -> None:
    assert decode_token(token, 2) is None


def test_a_time_token_gives_back_its_time_and_game() -> None:
    at = datetime(2026, 12, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert decode_time_token(encode_time_token(at, "g-1")) == (at, "g-1")


@pytest.mark.parametrize(
    "token",
    [
        encode_token("2026-12-02T03:04:05", "g-1"),  # a time without its zone
        encode_token("2026-12-02T03:04:05+00:00", ""),  # no game
        encode_token("yesterday", "g-1"),
        "%%%",
    ],
)
def test_what_is_no_time_token_is_none(token: str) -> None:
    assert decode_time_token(token) is None
