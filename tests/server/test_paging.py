"""Pages of every listing: the size a request may ask for and the token of the next page."""

from __future__ import annotations

import pytest

from boneyard.server.errors import InvalidArgument
from boneyard.server.paging import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    decode_token,
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
