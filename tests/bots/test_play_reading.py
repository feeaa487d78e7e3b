"""Reading the plays: the last seat to a trick throws count to its partner, keeps it off the
opponents' tricks and takes their tricks when it can; deals where a seat broke those rules
weigh less."""

from __future__ import annotations

import random

import pytest

from boneyard import engine
from boneyard.bots import expert, play_reading
from boneyard.bots.expert import ExpertStrategy
from boneyard.bots.play_reading import FLOOR, PlayReading, moment, moments, rules_met
from boneyard.engine import (
    Bid,
    Contract,
    DeclareContract,
    HandDealt,
    PlaceBid,
    PlayTile,
    decide,
    evolve,
)
from boneyard.engine.contracts import suit_table
from boneyard.engine.tiles import parse_tile, parse_tiles

SIXES = suit_table(6)
MEASURED = dict(play_reading.CHANCES)
TEAM_0 = (0, 2)
TEAM_1 = (1, 3)


def t(name: str) -> int:
    return parse_tile(name)


def _moment(before: list[tuple[int, str]], seat: int, tile: str, team: tuple[int, int]):
    return moment(SIXES, False, team, [(s, t(x)) for s, x in before], seat, t(tile), 0)


@pytest.fixture(autouse=True)
def _chances(monkeypatch):
    monkeypatch.setattr(
        play_reading,
        "CHANCES",
        {"count_to_partner": 0.9, "count_off_opponents": 0.8, "take_count": 0.95, "take_bare": 0.6},
    )


def test_a_seat_whose_partner_wins_the_trick_and_plays_a_blank_broke_the_count_rule_if_it_held_count():
    # Seat 2's partner (seat 0) wins the trick of fours; seat 2, void in fours, lays 1-0.
    m = _moment([(3, "4-2"), (0, "4-4"), (1, "4-0")], 2, "1-0", TEAM_0)
    assert m.partner_winning
    assert rules_met(m, parse_tiles("1-0 5-0 2-1")) == [("count_to_partner", False)]
    assert rules_met(m, parse_tiles("1-0 2-0 2-1")) == []


def test_a_seat_must_follow_so_a_count_tile_of_another_suit_is_no_rule_broken():
    m = _moment([(3, "4-2"), (0, "4-4"), (1, "4-0")], 2, "4-3", TEAM_0)
    assert rules_met(m, parse_tiles("4-3 5-0")) == []
    assert rules_met(m, parse_tiles("4-3 4-1")) == [("count_to_partner", False)]


def test_a_seat_that_gives_count_to_the_opponents_with_a_worthless_tile_in_hand_broke_a_rule():
    # Seat 1's opponents win with 4-4; seat 1 is void in fours and holds no trump.
    m = _moment([(2, "4-2"), (3, "4-0"), (0, "4-4")], 1, "5-0", TEAM_1)
    assert not m.partner_winning
    assert rules_met(m, parse_tiles("5-0 2-1")) == [("count_off_opponents", False)]
    assert rules_met(m, parse_tiles("5-0 3-2")) == []


def test_a_seat_that_lets_the_opponents_have_a_trick_of_count_it_could_trump_broke_a_rule():
    m = _moment([(2, "4-1"), (3, "4-0"), (0, "4-4")], 1, "2-1", TEAM_1)
    assert m.count == 5
    assert rules_met(m, parse_tiles("2-1 6-0")) == [
        ("count_off_opponents", True),
        ("take_count", False),
    ]
    taken = _moment([(2, "4-1"), (3, "4-0"), (0, "4-4")], 1, "6-0", TEAM_1)
    assert rules_met(taken, parse_tiles("2-1 6-0")) == [
        ("count_off_opponents", True),
        ("take_count", True),
    ]


def test_a_trick_without_count_is_its_own_rule():
    m = _moment([(2, "4-2"), (3, "4-0"), (0, "4-4")], 1, "2-1", TEAM_1)
    assert rules_met(m, parse_tiles("2-1 6-0")) == [
        ("count_off_opponents", True),
        ("take_bare", False),
    ]


def test_where_a_seat_may_trump_instead_of_following_a_trump_beats_even_with_the_suit_in_hand():
    before = [(2, t("4-2")), (3, t("4-0")), (0, t("4-4"))]
    strict = moment(SIXES, False, TEAM_1, before, 1, t("4-3"), 0)
    loose = moment(SIXES, True, TEAM_1, before, 1, t("4-3"), 0)
    hand = parse_tiles("4-3 6-0")
    assert ("take_bare", False) not in rules_met(strict, hand)
    assert ("take_bare", False) in rules_met(loose, hand)


# ---------------------------------------------------------------- read from a view

FOUR = [
    "6-6 6-5 6-4 5-5 4-4 3-3 2-2",
    "6-3 6-2 5-4 5-3 5-2 4-3 4-2",
    "6-1 6-0 5-1 5-0 4-1 4-0 3-2",
    "3-1 3-0 2-1 2-0 1-1 1-0 0-0",
]


def _first_trick_played():
    """Seat 0 bids 30 and names sixes; the trick of fours: 4-4, 4-2, 4-0, and seat 3 (void,
    no trump) lays 0-0 on the opponents' trick; then seat 0 leads 3-3."""
    rules = engine.ruleset("texas42")
    state = engine.replay(engine.start(rules))
    state = evolve(state, HandDealt(1, 3, b"chosen", tuple(parse_tiles(h) for h in FOUR), 0))
    commands = [
        PlaceBid(0, Bid.points(30)),
        engine.Pass(1),
        engine.Pass(2),
        engine.Pass(3),
        DeclareContract(0, Contract.of_trump(6)),
        PlayTile(0, t("4-4")),
        PlayTile(1, t("4-2")),
        PlayTile(2, t("4-0")),
        PlayTile(3, t("0-0")),
        PlayTile(0, t("3-3")),
    ]
    for command in commands:
        for event in decide(state, command):
            state = evolve(state, event)
    return state


def test_the_last_play_of_each_trick_by_another_seat_is_read():
    state = _first_trick_played()
    (m,) = moments(engine.view(state, 1))
    assert (m.seat, m.tile, m.then) == (3, t("0-0"), parse_tiles("0-0"))
    assert moments(engine.view(state, 3)) == ()  # its own play says nothing to itself


def test_a_deal_where_the_last_seat_could_have_trumped_the_opponents_trick_weighs_less():
    state = _first_trick_played()
    reading = PlayReading(engine.view(state, 1))
    no_trump = [0, 0, 0, parse_tiles("3-1 3-0 2-1 2-0 1-1 1-0")]
    a_trump = [0, 0, 0, parse_tiles("3-1 3-0 2-1 2-0 1-1 6-1")]
    assert reading.weight(no_trump) == 1.0
    assert reading.weight(a_trump) == pytest.approx(1 - 0.6)


def test_a_rule_the_model_is_sure_of_never_rules_a_deal_out(monkeypatch):
    monkeypatch.setattr(play_reading, "CHANCES", dict.fromkeys(play_reading.CHANCES, 1.0))
    reading = PlayReading(engine.view(_first_trick_played(), 1))
    assert reading.weight([0, 0, 0, parse_tiles("3-1 3-0 2-1 2-0 1-1 6-1")]) == FLOOR


def _one_trick_under(bid: Bid, contract: Contract):
    """The FOUR deal in ``texas42-house``: seat 0 bids ``bid``, the others pass, it names
    ``contract``, and one trick is played, the first legal tile each."""
    state = engine.replay(engine.start(engine.ruleset("texas42-house")))
    state = evolve(state, HandDealt(1, 3, b"chosen", tuple(parse_tiles(h) for h in FOUR), 0))
    while not state.hand.tricks:
        seat = state.hand.turn
        legal = engine.legal_actions(state, seat)
        wanted = [a for a in legal if a in (PlaceBid(seat, bid), DeclareContract(seat, contract))]
        passes = [a for a in legal if isinstance(a, engine.Pass)]
        command = (wanted or passes or legal)[0]
        for event in decide(state, command):
            state = evolve(state, event)
    return state


def test_plays_are_read_in_a_trump_contract_and_not_in_nello():
    trump = _one_trick_under(Bid.marks(1), Contract.of_trump(6))
    nello = _one_trick_under(Bid.marks(1), Contract.nello())
    assert nello.hand.contract == Contract.nello()
    assert len(moments(engine.view(trump, 1))) == 1
    assert moments(engine.view(nello, 1)) == ()


# ---------------------------------------------------------------- the expert's deals


@pytest.mark.parametrize("read_plays", [True, False])
def test_the_expert_deals_no_trump_to_a_seat_that_let_the_opponents_have_a_trick(
    monkeypatch, read_plays
):
    # Seat 3 laid 0-0 on the opponents' trick of fours: holding a six, it would have trumped.
    monkeypatch.setattr(play_reading, "CHANCES", MEASURED)
    monkeypatch.setattr(expert, "READ_PLAYS", read_plays)
    view = engine.view(_first_trick_played(), 1)
    bot = ExpertStrategy(1, move_ms=20)
    reading = bot._read(view, 1)
    rng = random.Random(5)
    sixes = SIXES.trumps
    plain = super(ExpertStrategy, bot)._deal_hands
    plain_none = sum(not plain(rng, reading)[3] & sixes for _ in range(200)) / 200
    read_none = sum(not bot._deal_hands(rng, reading)[3] & sixes for _ in range(200)) / 200
    if read_plays:
        assert read_none > plain_none + 0.4
    else:  # the auction alone says little of seat 3's trumps (it passed at 31)
        assert abs(read_none - plain_none) < 0.1
