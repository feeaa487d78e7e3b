"""The words the terminal clients (``play``, ``watch``, ``replay``) say for the house rules'
events: a stuck dealer's pass, the overcall, Moon without a widow."""

from __future__ import annotations

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import events_pb2
from boneyard.clients.describe import bid_text, event_text
from boneyard.engine import Bid


def _auction(preset: str, *said: str) -> list[events_pb2.Event]:
    """The events (log form) of a hand's deal and its auction, ``said`` bid by bid."""
    state = engine.replay(engine.start(engine.ruleset(preset)))
    events: list[events_pb2.Event] = []
    for word in ("deal", *said):
        if word == "deal":
            command: engine.Command = engine.Deal(bytes(32))
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            if word == "pass":
                command = engine.Pass(seat)
            else:
                command = engine.PlaceBid(seat, engine.parse_bid(word, state.rules))
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
            events.append(codec.event_to_proto(event, len(events) + 1))
    return events


def _said(events: list[events_pb2.Event]) -> list[str]:
    lines = [event_text(e, events[i - 1] if i else None) for i, e in enumerate(events)]
    return [line for line in lines if line]


def test_a_stuck_dealer_who_passes_is_said_to_be_given_the_lowest_bid() -> None:
    events = _auction("moon-no-widow", "pass", "pass", "pass")
    last = events[-2].passed.seat  # the seat that bid last: the stuck one
    assert events[-1].auction_won.seat == last
    assert _said(events)[-2:] == [
        f"seat {last} passes",
        f"seat {last} passed and is given 3: the dealer must take the hand",
    ]


def test_a_stuck_dealer_who_bids_wins_the_auction_as_usual() -> None:
    events = _auction("moon-no-widow", "pass", "pass", "5")
    seat = events[-1].auction_won.seat
    assert _said(events)[-1] == f"seat {seat} wins the auction with 5"


def test_a_winner_after_the_others_passed_is_not_said_to_be_given_anything() -> None:
    events = _auction("moon", "5", "pass", "pass")
    assert events[-2].WhichOneof("kind") == "passed"
    assert _said(events)[-1] == f"seat {events[-1].auction_won.seat} wins the auction with 5"


def test_the_overcall_is_named_with_its_42() -> None:
    assert bid_text(codec.bid_to_proto(Bid.overcall())) == "the overcall (42)"
    events = _auction("moon-overcall", "moon", "overcall")
    seat = events[-1].auction_won.seat
    assert _said(events)[-2:] == [
        f"seat {seat} bids the overcall (42)",
        f"seat {seat} wins the auction with the overcall (42)",
    ]


def test_a_bid_is_said_in_the_notations_words_with_what_they_leave_unsaid() -> None:
    bids = [Bid.points(30), Bid.marks(1), Bid.marks(2), Bid.plunge(4), Bid.splash(2), Bid.moon()]
    assert [bid_text(codec.bid_to_proto(bid)) for bid in bids] == [
        "30", "42 (1 mark)", "84 (2 marks)", "plunge 4 marks", "splash 2 marks", "the moon"
    ]


def test_a_trick_re_sent_face_down_is_told_without_its_tiles_or_worth() -> None:
    played = events_pb2.Event(tile_played=events_pb2.TilePlayed(seat=1, tile=0, face_down=True))
    won = events_pb2.Event(trick_won=events_pb2.TrickWon(seat=1, points=0, face_down=True))
    assert _said([played, won]) == [
        "seat 1 plays a tile face down",
        "seat 1 wins the trick (face down)",
    ]
