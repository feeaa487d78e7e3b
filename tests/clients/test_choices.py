"""What a person may type at the table: one test per accepted spelling, and the refusals,
each read against a list of legal actions as a seat's view carries them."""

from __future__ import annotations

import pytest

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import actions_pb2, rules_pb2
from boneyard.clients.choices import (
    AmbiguousChoice,
    NoSuchChoice,
    NotLegal,
    choice_label,
    parse_choice,
)
from boneyard.engine import Bid, parse_bid
from boneyard.engine.tiles import parse_tile

P, M, T = rules_pb2.BID_KIND_POINTS, rules_pb2.BID_KIND_MARKS, rules_pb2.BID_KIND_TRICKS


def bid(kind: int, amount: int) -> actions_pb2.Action:
    return actions_pb2.Action(bid=rules_pb2.Bid(kind=kind, amount=amount))


PASS = actions_pb2.Action(pass_bid=actions_pb2.Pass())
TEXAS_BIDS = [PASS, *(bid(P, n) for n in range(31, 42)), bid(M, 1), bid(M, 2),
              bid(rules_pb2.BID_KIND_PLUNGE, 4)]
MOON_BIDS = [PASS, *(bid(T, n) for n in (4, 5, 6, 7)), bid(rules_pb2.BID_KIND_MOON, 21)]


def trump(t: int) -> actions_pb2.Action:
    return actions_pb2.Action(
        declare_contract=rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_TRUMP, trump=t)
    )


NELLO = actions_pb2.Action(declare_contract=rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_NELLO))
DECLARES = [*(trump(t) for t in range(1, 10)), NELLO]


def play(name: str) -> actions_pb2.Action:
    return actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=parse_tile(name)))


PLAYS = [play("6-4"), play("5-5"), play("3-2")]
WIDOW = [
    actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=parse_tile("6-1"))),
    actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=parse_tile("2-0"))),
    actions_pb2.Action(decline_widow=actions_pb2.DeclineWidow()),
]


def test_the_menu_number_chooses_that_line() -> None:
    assert parse_choice("3", TEXAS_BIDS) == TEXAS_BIDS[2]


def test_hash_and_number_is_always_the_menu_line() -> None:
    assert parse_choice("#5", MOON_BIDS) == MOON_BIDS[4]


def test_30_odd_points_typed_bid_that_many() -> None:
    assert parse_choice("35", TEXAS_BIDS) == bid(P, 35)


def test_bid_and_points_typed_bid_that_many() -> None:
    assert parse_choice("bid 33", TEXAS_BIDS) == bid(P, 33)


def test_42_is_a_one_mark_bid() -> None:
    assert parse_choice("42", TEXAS_BIDS) == bid(M, 1)


def test_84_is_a_two_mark_bid() -> None:
    assert parse_choice("84", TEXAS_BIDS) == bid(M, 2)


def test_1_mark_is_a_one_mark_bid() -> None:
    assert parse_choice("1 mark", TEXAS_BIDS) == bid(M, 1)


def test_2_marks_is_a_two_mark_bid() -> None:
    assert parse_choice("2 marks", TEXAS_BIDS) == bid(M, 2)


def test_the_label_as_shown_is_the_choice() -> None:
    assert choice_label(bid(M, 2)) == "84 (2 marks)"
    assert parse_choice("84 (2 marks)", TEXAS_BIDS) == bid(M, 2)


def test_pass() -> None:
    assert parse_choice("pass", TEXAS_BIDS) == PASS


def test_p_is_pass() -> None:
    assert parse_choice("P", TEXAS_BIDS) == PASS


def test_plunge_alone_when_one_plunge_is_legal() -> None:
    assert parse_choice("plunge", TEXAS_BIDS) == bid(rules_pb2.BID_KIND_PLUNGE, 4)


def test_a_moon_bid_of_tricks_by_its_number_not_the_menu_line() -> None:
    assert parse_choice("5", MOON_BIDS) == bid(T, 5)


def test_tricks_spelled_out() -> None:
    assert parse_choice("6 tricks", MOON_BIDS) == bid(T, 6)


def test_shoot_the_moon() -> None:
    assert parse_choice("shoot the moon", MOON_BIDS) == MOON_BIDS[-1]
    assert parse_choice("moon", MOON_BIDS) == MOON_BIDS[-1]


def test_sixes() -> None:
    assert parse_choice("sixes", DECLARES) == trump(rules_pb2.TRUMP_SIXES)


def test_six_singular() -> None:
    assert parse_choice("six", DECLARES) == trump(rules_pb2.TRUMP_SIXES)


def test_doubles() -> None:
    assert parse_choice("Doubles", DECLARES) == trump(rules_pb2.TRUMP_DOUBLES)


def test_follow_me_with_a_space() -> None:
    assert parse_choice("follow me", DECLARES) == trump(rules_pb2.TRUMP_FOLLOW_ME)


def test_follow_me_as_shown() -> None:
    assert parse_choice("follow-me", DECLARES) == trump(rules_pb2.TRUMP_FOLLOW_ME)


def test_declare_and_a_trump() -> None:
    assert parse_choice("declare blanks", DECLARES) == trump(rules_pb2.TRUMP_BLANKS)


def test_nello() -> None:
    assert parse_choice("nello", DECLARES) == NELLO


def test_6_4() -> None:
    assert parse_choice("6-4", PLAYS) == play("6-4")


def test_4_6_the_ends_either_way() -> None:
    assert parse_choice("4-6", PLAYS) == play("6-4")


def test_64_without_a_dash() -> None:
    assert parse_choice("64", PLAYS) == play("6-4")


def test_play_and_a_tile() -> None:
    assert parse_choice("play 3-2", PLAYS) == play("3-2")


def test_lay_out_a_tile_at_the_widow() -> None:
    assert parse_choice("lay out 2-0", WIDOW) == WIDOW[1]


def test_a_tile_alone_at_the_widow_is_the_one_laid_out() -> None:
    assert parse_choice("1-6", WIDOW) == WIDOW[0]


def test_leave_the_widow() -> None:
    assert parse_choice("leave the widow", WIDOW) == WIDOW[2]
    assert parse_choice("leave", WIDOW) == WIDOW[2]


def test_a_bid_below_the_legal_ones_is_well_formed_but_not_legal() -> None:
    with pytest.raises(NotLegal) as refused:
        parse_choice("30", TEXAS_BIDS)
    assert refused.value.action == bid(P, 30)
    assert "30 is not a legal choice now" in str(refused.value)


def test_a_tile_not_among_the_plays_is_not_legal() -> None:
    with pytest.raises(NotLegal) as refused:
        parse_choice("1-1", PLAYS)
    assert refused.value.action == play("1-1")


def test_a_number_past_the_menu_says_the_menu_range() -> None:
    with pytest.raises(NoSuchChoice, match="there is no choice 9: the choices are 1 to 3"):
        parse_choice("9", PLAYS)


def test_a_word_that_names_nothing_is_refused_with_itself_quoted() -> None:
    with pytest.raises(NoSuchChoice, match="'banana' is none of the choices"):
        parse_choice("banana", DECLARES)


def test_a_text_naming_two_choices_is_ambiguous() -> None:
    plunges = [bid(rules_pb2.BID_KIND_PLUNGE, 4), bid(rules_pb2.BID_KIND_PLUNGE, 5)]
    with pytest.raises(AmbiguousChoice, match="'plunge 4 marks' or 'plunge 5 marks'"):
        parse_choice("plunge", plunges)


def test_nothing_typed_is_refused() -> None:
    with pytest.raises(NoSuchChoice, match="type a choice"):
        parse_choice("  ", PLAYS)


# ---------------------------------------------------------------- house rules, from the engine


def _legal_after(preset: str, *said: str) -> list[actions_pb2.Action]:
    """The legal actions, as a view carries them, of the seat to bid after the bids ``said``
    (``pass`` or a bid) on a hand of ``preset``."""
    state = _after(engine.replay(engine.start(engine.ruleset(preset))), engine.Deal(bytes(32)))
    for word in said:
        state = _after(state, _bid(state, word))
    assert state.hand is not None and state.hand.turn is not None
    return [codec.action_to_proto(a) for a in engine.legal_actions(state, state.hand.turn)]


def _after(state: engine.GameState, command: engine.Command) -> engine.GameState:
    for event in engine.decide(state, command):
        state = engine.evolve(state, event)
    return state


def _bid(state: engine.GameState, said: str) -> engine.Command:
    assert state.hand is not None and state.hand.turn is not None
    seat = state.hand.turn
    return engine.Pass(seat) if said == "pass" else engine.PlaceBid(seat, parse_bid(said, state.rules))


OVERCALL = actions_pb2.Action(bid=codec.bid_to_proto(Bid.overcall()))


@pytest.mark.parametrize("typed", ["overcall", "42", "shoot for 42", "bid overcall", "overcall (42)"])
def test_overcall_typed_over_a_moon_is_the_overcall(typed: str) -> None:
    legal = _legal_after("moon-overcall", "moon")
    assert parse_choice(typed, legal) == OVERCALL


def test_the_overcall_is_shown_with_what_it_is_worth() -> None:
    assert choice_label(OVERCALL) == "overcall (42)"


def test_the_overcall_before_any_moon_is_well_formed_but_not_legal() -> None:
    legal = _legal_after("moon-overcall")
    assert OVERCALL not in legal
    with pytest.raises(NotLegal) as refused:
        parse_choice("overcall", legal)
    assert refused.value.action.bid.kind == rules_pb2.BID_KIND_OVERCALL


def test_42_at_a_moon_table_is_never_42_tricks() -> None:
    with pytest.raises(NotLegal) as refused:
        parse_choice("42", _legal_after("moon"))
    assert refused.value.action.bid.kind == rules_pb2.BID_KIND_OVERCALL


def test_3_is_a_bid_where_the_table_bids_from_3() -> None:
    legal = _legal_after("moon-no-widow")
    assert parse_choice("3", legal) == bid(T, 3)


def test_the_stuck_dealer_may_pass_or_bid_higher() -> None:
    legal = _legal_after("moon-no-widow", "pass", "pass")
    assert parse_choice("pass", legal) == PASS
    assert parse_choice("6", legal) == bid(T, 6)
