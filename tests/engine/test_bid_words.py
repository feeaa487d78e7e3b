"""A bid's words (``engine.bids``): one printer, ``bid_text``, writes a bid as players write it
and as the notation records it (docs/notation.md), and one parser, ``parse_bid``, reads it back
at the same table, whatever the table."""

from __future__ import annotations

import pytest

from boneyard import engine
from boneyard.engine import Bid, Ruleset, bid_text, parse_bid


def _tables() -> list[Ruleset]:
    presets = [engine.ruleset(name) for name in engine.preset_names()]
    sizes = [engine.ruleset("texas42", players=n) for n in (2, 3, 5, 6, 7)]
    return presets + sizes + [engine.ruleset("texas42-house", players=6, six_player_teams="pairs")]


def _bids(rules: Ruleset) -> list[Bid]:
    """Every bid of the table's kinds, legal now or not."""
    if rules.is_moon:
        return [*(Bid.tricks(n) for n in range(rules.moon_min_bid, 8)), Bid.moon(), Bid.overcall()]
    return [
        *(Bid.points(n) for n in range(rules.min_bid, rules.all_tricks_points)),
        *(Bid.marks(n) for n in range(1, 8)),
        *(Bid.plunge(n) for n in range(4, 8)),
        *(Bid.splash(n) for n in range(2, 8)),
    ]


@pytest.mark.parametrize("rules", _tables(), ids=lambda r: f"{r.name}-{r.players}")
def test_every_bid_reads_back_from_its_words_at_its_table(rules: Ruleset) -> None:
    for bid in _bids(rules):
        assert parse_bid(bid_text(bid, rules), rules) == bid


@pytest.mark.parametrize(
    ("bid", "words"),
    [
        (Bid.points(30), "30"),
        (Bid.marks(1), "42"),
        (Bid.marks(2), "84"),
        (Bid.plunge(4), "plunge 4"),
        (Bid.splash(2), "splash 2"),
        (Bid.tricks(5), "5"),
        (Bid.moon(), "moon"),
        (Bid.overcall(), "overcall"),
    ],
)
def test_a_bid_prints_as_a_table_of_four_writes_it(bid: Bid, words: str) -> None:
    assert str(bid) == bid_text(bid) == words


def test_where_42_may_be_a_point_bid_marks_are_written_as_marks() -> None:
    three = engine.ruleset("texas42", players=3)
    assert bid_text(Bid.marks(1), three) == "1 mark"
    assert bid_text(Bid.marks(2), three) == "2 marks"
    assert parse_bid("42", three) == Bid.points(42)


def test_a_number_above_the_points_that_is_no_mark_bid_is_refused_quoted() -> None:
    with pytest.raises(ValueError, match="not a bid at this table: '43'"):
        parse_bid("43")


def test_the_refusal_of_a_moon_bid_says_what_the_table_bids() -> None:
    with pytest.raises(ValueError, match=r"'banana' \(a number of tricks 5..7, moon or overcall\)"):
        parse_bid("banana", engine.ruleset("moon-overcall"))


def test_an_empty_bid_is_refused() -> None:
    with pytest.raises(ValueError, match="an empty bid"):
        parse_bid("  ")
