"""RULES.md section 1: the double-six set, how tiles are written, the count tiles; Moon's 22."""

import hashlib

import pytest

from boneyard.engine import deal as deal_tiles
from boneyard.engine import (
    format_tiles,
    iter_tiles,
    parse_tile,
    parse_tiles,
    ruleset,
    shuffle,
    tile,
    tile_name,
    tileset,
)
from boneyard.engine.tiles import COUNT, FULL_SET, count_of

ALL_NAMES = [f"{high}-{low}" for high in range(7) for low in range(high + 1)]


def test_double_six_set_has_28_tiles_one_for_each_pair_of_pips():
    assert len(list(iter_tiles(FULL_SET))) == 28
    assert sorted(tile_name(t) for t in iter_tiles(FULL_SET)) == sorted(ALL_NAMES)


def test_a_tile_is_written_high_end_first():
    assert tile_name(tile(4, 6)) == "6-4"
    assert tile_name(tile(6, 4)) == "6-4"
    assert tile_name(tile(5, 5)) == "5-5"
    assert tile_name(tile(0, 3)) == "3-0"


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_tile_name_parses_back_to_the_same_tile(name):
    assert tile_name(parse_tile(name)) == name


def test_a_tile_written_low_end_first_is_the_same_tile():
    assert parse_tile("4-6") == parse_tile("6-4") == tile(6, 4)


@pytest.mark.parametrize("text", ["7-1", "6-7", "x", "", "6-4-1", "-1-0"])
def test_a_tile_outside_the_double_six_set_is_refused(text):
    with pytest.raises(ValueError):
        parse_tile(text)


def test_tile_ends_outside_0_to_6_are_refused():
    with pytest.raises(ValueError):
        tile(7, 0)


def test_a_set_of_tiles_prints_highest_first_and_parses_back():
    hand = parse_tiles("3-0 6-4 5-5")
    assert format_tiles(hand) == "6-4 5-5 3-0"
    assert parse_tiles(format_tiles(hand)) == hand
    assert hand == tileset([tile(3, 0), tile(6, 4), tile(5, 5)])


def test_the_seven_suits_are_the_pip_numbers_each_with_seven_tiles():
    for suit in range(7):
        members = [n for n in ALL_NAMES if str(suit) in n.split("-")]
        assert len(members) == 7


@pytest.mark.parametrize("name", ["5-0", "4-1", "3-2"])
def test_count_tile_worth_five(name):
    assert COUNT[parse_tile(name)] == 5


@pytest.mark.parametrize("name", ["6-4", "5-5"])
def test_count_tile_worth_ten(name):
    assert COUNT[parse_tile(name)] == 10


def test_other_tiles_count_nothing():
    others = [n for n in ALL_NAMES if n not in ("5-0", "4-1", "3-2", "6-4", "5-5")]
    assert all(COUNT[parse_tile(n)] == 0 for n in others)


def test_the_count_is_35_in_all_and_a_four_player_hand_holds_42_points():
    assert count_of(FULL_SET) == 35
    assert count_of(FULL_SET) + ruleset("texas42").hand_size == 42


def test_moon_plays_22_tiles_without_the_blanks_other_than_0_0():
    moon = ruleset("moon").tiles
    assert len(list(iter_tiles(moon))) == 22
    removed = FULL_SET & ~moon
    assert format_tiles(removed) == "6-0 5-0 4-0 3-0 2-0 1-0"
    assert moon >> parse_tile("0-0") & 1


def test_in_moon_the_blank_suit_is_0_0_alone():
    moon = ruleset("moon").tiles
    blanks = [t for t in iter_tiles(moon) if 0 in (int(tile_name(t)[0]), int(tile_name(t)[2]))]
    assert [tile_name(t) for t in blanks] == ["0-0"]


def _documented_shuffle(seed: bytes, deck: list[int]) -> list[int]:
    """engine/deal.py's shuffle, written out from its docstring (anyone can re-deal a seed)."""

    def stream():
        counter = 0
        while True:
            yield from hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
            counter += 1

    deck = list(deck)
    source = stream()
    for i in range(len(deck) - 1, 0, -1):
        limit = 256 - 256 % (i + 1)
        b = next(source)
        while b >= limit:
            b = next(source)
        j = b % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@pytest.mark.parametrize("seed", [b"a", b"boneyard", bytes(range(40))])
def test_the_shuffle_is_the_documented_one_so_a_seed_redeals_the_same_hand(seed):
    assert shuffle(seed, FULL_SET) == _documented_shuffle(seed, list(range(28)))
    assert shuffle(seed, FULL_SET) == shuffle(seed, FULL_SET)


def test_the_deal_gives_every_tile_exactly_once():
    for players in range(2, 8):
        size = 28 // players
        hands, rest = deal_tiles(b"conserve", FULL_SET, players, size)
        assert all(h.bit_count() == size for h in hands)
        union = rest
        for h in hands:
            assert union & h == 0
            union |= h
        assert union == FULL_SET
        assert rest.bit_count() == 28 - players * size
