"""The table of ``boneyard play`` fits 80×24 with the longest menu and a full log, says marks
as players do, and names a variant's preset and options; the seat file is the owner's only."""

from __future__ import annotations

import io
import stat
from pathlib import Path

from rich.console import Console

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import actions_pb2, rules_pb2, view_pb2
from boneyard.clients.choices import choice_label
from boneyard.clients.seat_store import KeptSeat, SeatStore
from boneyard.clients.table import TableInfo, rule_differences, table_screen
from boneyard.engine.tiles import parse_tile
from tests.clients.test_choices import TEXAS_BIDS

HOUSE = rules_pb2.Ruleset(
    preset="texas42-house", family=rules_pb2.FAMILY_TEXAS42, players=4, marks_to_win=7,
    nello=True, plunge=True, splash=True, sevens=True, min_bid=30,
)


def bidding_view() -> view_pb2.SeatView:
    hand = [parse_tile(t) for t in ("6-6", "6-4", "5-5", "5-0", "4-1", "3-2", "1-0")]
    return view_pb2.SeatView(
        version=9, phase=view_pb2.PHASE_BIDDING, seat=0, players=4,
        teams=[view_pb2.Team(seats=[0, 2]), view_pb2.Team(seats=[1, 3])], scores=[1, 2],
        hand_number=3, dealer=3, turn=0, hand=hand,
        bids=[view_pb2.AuctionEntry(seat=1, bid=rules_pb2.Bid(kind=1, amount=30)),
              view_pb2.AuctionEntry(seat=2), view_pb2.AuctionEntry(seat=3)],
        legal_actions=TEXAS_BIDS + [
            actions_pb2.Action(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_SPLASH, amount=m))
            for m in (2, 3, 4, 5, 6, 7)
        ],
        rules=HOUSE,
    )


def screen_text(view: view_pb2.SeatView, log: list[str]) -> list[str]:
    console = Console(width=80, height=24, record=True, file=io.StringIO())
    info = TableInfo("ann's table", ("ann", "bob", "cy", "dee"))
    menu = [choice_label(a) for a in view.legal_actions]
    console.print(table_screen(view, info, log, menu, "refused: 'x' is none of the choices"))
    return console.export_text().splitlines()


def test_the_longest_bid_list_and_a_full_log_fit_80_by_24() -> None:
    lines = screen_text(bidding_view(), [f"seat 1 plays 6-{i}" for i in range(30)])
    assert len(lines) <= 23, "\n".join(lines)  # and the prompt's line below
    assert max(len(line) for line in lines) <= 80
    assert any("[21] splash 7 marks" in line for line in lines), "\n".join(lines)
    assert any("refused: 'x' is none" in line for line in lines)


def test_marks_are_said_as_players_say_them() -> None:
    text = "\n".join(screen_text(bidding_view(), []))
    assert "us 1 mark " in text and "them 2 marks" in text and "1 marks" not in text


def test_the_hand_marks_its_count_tiles() -> None:
    text = "\n".join(screen_text(bidding_view(), []))
    for count in ("6-4*", "5-5*", "5-0*", "4-1*", "3-2*"):
        assert count in text
    assert "6-6*" not in text and "1-0*" not in text


def test_the_seats_sit_around_the_table_with_their_names() -> None:
    lines = screen_text(bidding_view(), [])
    row = {name: next(i for i, line in enumerate(lines) if name in line)
           for name in ("1 bob", "2 cy", "3 dee", "▶ 0 you")}
    assert row["2 cy"] < row["1 bob"] == row["3 dee"] < row["▶ 0 you"]
    left = lines[row["1 bob"]]
    assert left.index("1 bob") < left.index("3 dee")  # the next to play sits on the left


def test_a_variant_table_is_titled_by_its_preset_and_lists_what_differs() -> None:
    lines = screen_text(bidding_view(), [])
    assert "texas42-house · ann's table" in lines[0]
    assert rule_differences(HOUSE) == ["nello", "plunge", "splash", "sevens"]
    assert "nello · plunge · splash · sevens" in lines[-1] or any(
        "nello · plunge · splash · sevens" in line for line in lines
    )


def test_the_standard_preset_lists_no_options() -> None:
    assert rule_differences(rules_pb2.Ruleset(preset="texas42", family=1, marks_to_win=7)) == []
    assert rule_differences(rules_pb2.Ruleset(family=1, marks_to_win=5)) == ["marks_to_win=5"]


def test_the_seat_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    store = SeatStore(tmp_path / "state" / "seats.json")
    store.put("g1", KeptSeat("127.0.0.1:1", 0, "secret", "ann", {1: "t1"}))
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert SeatStore(store.path).get("g1") == KeptSeat("127.0.0.1:1", 0, "secret", "ann", {1: "t1"})
    store.forget("g1")
    assert store.get("g1") is None


def _moon_view_after(preset: str, *bids: str) -> view_pb2.SeatView:
    """The view of the seat to bid after ``bids`` on a first hand of ``preset``, over the API."""
    state = engine.replay(engine.start(engine.ruleset(preset)))
    for command in (engine.Deal(bytes(32)), *bids):
        for event in engine.decide(state, _command(state, command)):
            state = engine.evolve(state, event)
    assert state.hand is not None and state.hand.turn is not None
    return codec.view_to_proto(engine.view(state, state.hand.turn), 9)


def _command(state: engine.GameState, said: object) -> engine.Command:
    if isinstance(said, engine.Deal):
        return said
    assert state.hand is not None and state.hand.turn is not None
    seat = state.hand.turn
    if said == "pass":
        return engine.Pass(seat)
    return engine.PlaceBid(seat, engine.parse_bid(str(said), state.rules))


def test_an_auction_that_goes_round_shows_each_seats_latest_bid() -> None:
    view = _moon_view_after("moon-no-widow", "3", "4", "pass", "5")
    first = view.bids[0].seat
    assert [b.seat for b in view.bids] == [first, view.seat, (view.seat + 1) % 3, first]
    lines = screen_text(view, [])
    name = ("ann", "bob", "cy")[first]
    cell = next(i for i, line in enumerate(lines) if f"{first} {name}" in line)
    assert "bid 5" in lines[cell + 1] and "bid 3" not in lines[cell + 1], "\n".join(lines)


def test_a_house_table_lists_its_house_rules() -> None:
    view = _moon_view_after("moon-no-widow")
    assert rule_differences(view.rules) == [
        "all_pass=forced_dealer_any_bid",
        "widow=none",
        "auction_goes_round",
        "moon_min_bid=3",
        "tie_to_earliest_seat",
    ]
