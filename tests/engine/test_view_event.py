"""RULES.md section 4 for events: what a seat, or a spectator, may see of each event as it
happens (``engine.view_event``), decided in the engine alone (issue 32): the server and the
codec only encode what it says. One test per rule, then every event of random games of every
preset, for every seat."""

import random

import pytest
from helpers import DEAL_A, auction, deal_hands, declare, exchange, plays

from boneyard.engine import (
    PRESETS,
    SPECTATOR,
    Bid,
    Deal,
    GameState,
    HandDealt,
    TilePlayed,
    TrickWon,
    WidowExchanged,
    decide,
    evolve,
    face_down_through,
    legal_actions,
    replay,
    ruleset,
    start,
    view,
    view_event,
)

DEAL_MOON = [
    "6-6 6-5 6-4 6-3 6-2 6-1 5-5",
    "5-4 5-3 5-2 5-1 4-4 4-3 4-2",
    "4-1 3-3 3-2 3-1 2-2 2-1 1-1",
]


def test_a_seat_sees_its_own_hand_dealt_and_no_other():
    state = replay(start(ruleset("texas42")))
    (dealt,) = decide(state, Deal(b"seen"))
    assert isinstance(dealt, HandDealt)
    for seat in range(4):
        assert view_event(dealt, state, seat).own_hand == dealt.hands[seat]


def test_a_spectator_sees_no_hand_dealt():
    state = replay(start(ruleset("moon")))
    (dealt,) = decide(state, Deal(b"seen"))
    assert view_event(dealt, state, SPECTATOR).own_hand is None


def test_the_widow_exchange_is_shown_to_the_bidder_only():
    state = deal_hands("moon", DEAL_MOON, rest="0-0", dealer=2)
    state, _ = auction(state, {0: Bid.tricks(5)})
    (exchanged,) = decide(state, legal_actions(state, 0)[0])
    assert isinstance(exchanged, WidowExchanged)
    assert view_event(exchanged, state, 0).exchange_shown
    assert not view_event(exchanged, state, 1).exchange_shown
    assert not view_event(exchanged, state, SPECTATOR).exchange_shown


def test_a_live_play_is_shown_even_when_tricks_lie_face_down():
    state = deal_hands("texas42", DEAL_A)
    state, _ = auction(state, {0: Bid.marks(2)})
    state = declare(state, 6)
    (played, *_) = decide(state, legal_actions(state, 0)[0])
    after = evolve(state, played)
    assert not view_event(played, state, 1, after=after).face_down


def mark_bid_hand_with_a_trick_won():
    state = deal_hands("texas42", DEAL_A)
    state, _ = auction(state, {0: Bid.marks(2)})
    state = declare(state, 6)
    return plays(state, "6-6 5-5 4-3 3-0")


def test_a_play_re_sent_behind_a_face_down_hand_is_face_down():
    state, events = mark_bid_hand_with_a_trick_won()
    won = events[-1]
    assert isinstance(won, TrickWon)
    assert view_event(won, state, 1, after=state, behind=True).face_down
    assert view(state, 1, behind=True).tricks_hidden


def test_a_trick_in_progress_re_sent_behind_a_face_down_hand_is_face_down():
    state, _ = mark_bid_hand_with_a_trick_won()
    state, _ = plays(state, "6-5")
    assert view(state, 2, behind=True).trick_face_down
    assert not view(state, 2).trick_face_down


def test_tricks_of_a_point_bid_are_never_re_sent_face_down():
    state = deal_hands("texas42", DEAL_A)
    state, _ = auction(state, {0: Bid.points(30)})
    state = declare(state, 6)
    state, events = plays(state, "6-6 5-5 4-3 3-0")
    assert not view_event(events[-1], state, 1, after=state, behind=True).face_down
    assert not view(state, 1, behind=True).trick_face_down


def test_moon_tricks_never_lie_face_down():
    # Seat 0 takes the widow's 2-1, lays out the 0-0, names sixes and wins the first trick.
    hands = ["6-6 6-5 6-4 6-3 6-2 3-2 0-0", "6-1 5-5 5-4 5-3 5-2 5-1 4-4", "4-3 4-2 4-1 3-3 3-1 2-2 1-1"]
    state = deal_hands("moon", hands, rest="2-1", dealer=2)
    state, _ = auction(state, {0: Bid.tricks(7)})
    state = declare(exchange(state, "0-0"), 6)
    state, events = plays(state, "6-6 6-1 4-1")
    assert face_down_through(events, state) == 0
    assert not view_event(events[-1], state, 1, after=state, behind=True).face_down


def test_a_stream_starting_now_shows_the_tricks_won_so_far_face_down():
    state, events = mark_bid_hand_with_a_trick_won()
    log = [*start(state.rules), *events]
    assert face_down_through(log, state) == len(log)


def test_an_event_no_rule_sorts_is_refused():
    class SecretRevealed:
        pass

    state = replay(start(ruleset("moon")))
    with pytest.raises(TypeError, match="no seat form"):
        view_event(SecretRevealed(), state, 0)  # type: ignore[arg-type]


def test_a_seat_off_the_table_is_refused():
    state = replay(start(ruleset("moon")))
    (dealt,) = decide(state, Deal(b"x"))
    with pytest.raises(ValueError, match="no seat 3"):
        view_event(dealt, state, 3)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_event_of_random_games_shows_a_seat_only_what_it_may_see(preset):
    rng = random.Random(preset)
    state: GameState = replay(start(ruleset(preset)))
    seats = [*range(state.rules.players), SPECTATOR]
    for _ in range(600):
        if state.winner is not None:
            break
        if state.hand is None or state.hand.turn is None:
            events = decide(state, Deal(rng.randbytes(8)))
        else:
            seat = state.hand.turn
            events = decide(state, rng.choice(legal_actions(state, seat)))
        for event in events:
            after = evolve(state, event)
            for seat in seats:
                seen = view_event(event, state, seat, after=after)
                assert seen.event is event and not seen.face_down
                if isinstance(event, HandDealt):
                    expected = event.hands[seat] if seat is not None else None
                    assert seen.own_hand == expected
                else:
                    assert seen.own_hand is None
                exchanged = isinstance(event, WidowExchanged) and seat == event.seat
                assert seen.exchange_shown == exchanged
                if isinstance(event, TilePlayed | TrickWon):
                    behind = view_event(event, state, seat, after=after, behind=True)
                    assert behind.face_down == view(after, seat).tricks_hidden
            state = after
