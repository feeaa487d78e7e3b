"""The heuristic bot on positions set up by hand: each test builds the engine's ``SeatView`` a
seat would get and checks the bot's choice, so each reads like the rule of thumb it tests.

Tiles are written as players write them (``"6-4"``); a trick is a list of ``(seat, tile)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from boneyard import engine
from boneyard.bots import strategy
from boneyard.bots.heuristic import HeuristicStrategy
from boneyard.engine import (
    Bid,
    BidKind,
    Contract,
    DeclareContract,
    ExchangeWidow,
    Pass,
    Phase,
    PlaceBid,
    PlayTile,
    Ruleset,
    SeatCommand,
    SeatView,
    TrickView,
)
from boneyard.engine.contracts import DOUBLES, FOLLOW_ME
from boneyard.engine.tiles import parse_tile

SIXES = 6
FIVES = 5
TEXAS42 = engine.ruleset("texas42")
HOUSE = engine.ruleset("texas42-house")
MOON = engine.ruleset("moon")


def tiles(text: str) -> list[int]:
    return sorted(parse_tile(word) for word in text.split())


def plays(seat: int, text: str) -> list[SeatCommand]:
    return [PlayTile(seat, parse_tile(word)) for word in text.split()]


def points_bids(seat: int, low: int = 30) -> list[SeatCommand]:
    """The legal bids of a Texas 42 auction whose high bid is ``low - 1`` (or none)."""
    return [PlaceBid(seat, Bid.points(n)) for n in range(low, 42)] + [
        PlaceBid(seat, Bid.marks(1)),
        PlaceBid(seat, Bid.marks(2)),
    ]


def moon_bids(seat: int) -> list[SeatCommand]:
    return [PlaceBid(seat, Bid.tricks(n)) for n in range(4, 8)] + [PlaceBid(seat, Bid.moon())]


def declare(seat: int, trump: int) -> DeclareContract:
    return DeclareContract(seat, Contract.of_trump(trump))


def every_trump(seat: int) -> list[SeatCommand]:
    return [declare(seat, t) for t in range(FOLLOW_ME + 1)]


def seat_view(
    seat: int,
    hand: str,
    legal: Sequence[SeatCommand],
    *,
    phase: Phase = Phase.PLAY,
    rules: Ruleset = TEXAS42,
    trump: int | None = None,
    contract: Contract | None = None,
    bidder: int | None = None,
    high_bid: Bid | None = None,
    trick: Sequence[tuple[int, str]] = (),
    done: Sequence[Sequence[tuple[int, str]]] = (),
    auction: Sequence[tuple[int, Bid | None]] = (),
    sitting_out: Sequence[int] = (),
) -> SeatView:
    """The view of ``seat``: its hand, its legal actions, the trick in progress and the tricks
    ``done`` (each marked won by its leader: the bot reads only the tiles played)."""
    mine = tiles(hand)
    players = rules.players
    on_table = [(s, parse_tile(t)) for s, t in trick]
    if trump is not None:
        contract = Contract.of_trump(trump)
    return SeatView(
        rules=rules,
        seat=seat,
        phase=phase,
        players=players,
        teams=rules.teams,
        scores=(0,) * len(rules.teams),
        hand_number=1,
        dealer=None,
        turn=seat,
        hand=engine.tileset(mine),
        hand_sizes=tuple(
            len(mine) + (1 if s in {p for p, _ in on_table} else 0) for s in range(players)
        ),
        bids=tuple(auction),
        high_bid=high_bid,
        bidder=bidder,
        declarer=bidder,
        contract=contract,
        sitting_out=tuple(sitting_out),
        trick=tuple(on_table),
        tricks=tuple(
            TrickView(tuple((s, parse_tile(t)) for s, t in d), d[0][0], None) for d in done
        ),
        tricks_hidden=False,
        taken=None,
        tricks_won=(0,) * len(rules.teams),
        discard=None,
        legal=tuple(legal),
        results=(),
        winner=None,
    )


def chosen_tile(view: SeatView) -> str:
    action = HeuristicStrategy(0).choose(view)
    assert action in view.legal
    assert isinstance(action, PlayTile)
    return engine.tile_name(action.tile)


# ---------------------------------------------------------------- the play, Texas 42


def test_never_overtakes_a_partner_who_is_winning():
    # Threes led; the partner (seat 0) holds the trick with 3-3, the top three. Seat 2 is void
    # in threes and could trump with 6-5 or 6-2: it must not.
    view = seat_view(
        2, "6-5 6-2 2-1 4-0", plays(2, "6-5 6-2 2-1 4-0"), trump=SIXES, bidder=0,
        high_bid=Bid.points(30), trick=[(3, "3-1"), (0, "3-3"), (1, "3-2")],
    )
    assert chosen_tile(view) in ("2-1", "4-0")


def test_throws_count_under_a_partners_double():
    # Fours led; the partner's 4-4 cannot be beaten and seat 2 plays last. It must follow fours
    # with 5-4 or 4-2, both under the double: it gives the partner the count.
    view = seat_view(
        2, "5-4 4-2 6-6 1-0", plays(2, "5-4 4-2"), trump=SIXES, bidder=0,
        high_bid=Bid.points(30), trick=[(3, "4-1"), (0, "4-4"), (1, "4-3")],
    )
    assert chosen_tile(view) == "5-4"


def test_throws_count_on_a_partners_winning_trick():
    view = seat_view(
        2, "6-5 5-0 4-2 2-1", plays(2, "6-5 5-0 4-2 2-1"), trump=SIXES, bidder=0,
        high_bid=Bid.points(30), trick=[(3, "3-1"), (0, "3-3"), (1, "3-2")],
    )
    assert chosen_tile(view) == "5-0"


def test_keeps_count_off_an_opponents_winning_trick():
    # Seat 3 (an opponent) wins the trick with 4-4; seat 2 cannot follow fours or beat it.
    view = seat_view(
        2, "5-0 3-1 2-0 1-1", plays(2, "5-0 3-1 2-0 1-1"), trump=SIXES, bidder=0,
        high_bid=Bid.points(30), trick=[(3, "4-4"), (0, "4-1"), (1, "4-0")],
    )
    assert chosen_tile(view) != "5-0"


def test_trumps_in_when_count_is_at_stake():
    # Fives led by seat 3 (5-4, 5 count), seat 1 added 5-0 (5 count): 10 count on a trick the
    # opponents win. Seat 2, void in fives, trumps in with its 6-1.
    view = seat_view(
        2, "6-1 4-2 3-1 2-0", plays(2, "6-1 4-2 3-1 2-0"), trump=SIXES, bidder=0,
        high_bid=Bid.points(30), trick=[(3, "5-4"), (0, "5-1"), (1, "5-0")],
    )
    assert chosen_tile(view) == "6-1"


def test_follows_suit_with_a_legal_tile():
    # Fives led: only the fives in hand are legal; it wins with the cheapest that does.
    view = seat_view(
        1, "6-6 5-5 5-2 3-3 2-0", plays(1, "5-5 5-2"), trump=SIXES, bidder=0,
        high_bid=Bid.points(30), trick=[(0, "5-3")],
    )
    assert chosen_tile(view) in ("5-5", "5-2")


def test_leads_its_top_trump_to_pull_trumps():
    hand = "6-6 6-4 6-1 5-5 3-2 2-0 1-0"
    view = seat_view(0, hand, plays(0, hand), trump=SIXES, bidder=0, high_bid=Bid.points(30))
    assert chosen_tile(view) == "6-6"


def test_leads_a_low_tile_without_winners():
    # No trumps, no doubles, nothing on top of its suit: lead something cheap, not the count.
    hand = "5-0 4-1 3-2 3-0 2-1"
    view = seat_view(
        1, hand, plays(1, hand), trump=SIXES, bidder=0, high_bid=Bid.points(30),
        done=[[(0, "6-6"), (1, "6-0"), (2, "6-2"), (3, "6-3")],
              [(0, "6-5"), (1, "1-0"), (2, "6-1"), (3, "4-4")]],
    )
    assert chosen_tile(view) not in ("5-0", "4-1", "3-2")


# ---------------------------------------------------------------- trump and bidding


def test_names_its_longest_suit_trump():
    view = seat_view(
        0, "5-5 5-4 5-3 5-2 5-1 6-2 3-1", every_trump(0), phase=Phase.TRUMP, bidder=0,
        high_bid=Bid.points(30),
    )
    assert HeuristicStrategy(0).choose(view) == declare(0, FIVES)


def test_names_doubles_or_follow_me_with_a_hand_of_doubles():
    view = seat_view(
        0, "6-6 5-5 4-4 3-3 2-2 6-1 5-0", every_trump(0), phase=Phase.TRUMP, bidder=0,
        high_bid=Bid.points(30),
    )
    assert HeuristicStrategy(0).choose(view) in (declare(0, DOUBLES), declare(0, FOLLOW_ME))


def test_passes_with_a_weak_hand():
    view = seat_view(
        1, "6-2 5-1 4-0 3-1 2-0 1-0 4-3", [Pass(1), *points_bids(1)], phase=Phase.BIDDING,
        auction=[(0, None)],
    )
    assert HeuristicStrategy(0).choose(view) == Pass(1)


def test_bids_with_a_strong_hand():
    view = seat_view(
        1, "6-6 6-5 6-4 6-3 5-5 4-1 3-3", [Pass(1), *points_bids(1)], phase=Phase.BIDDING,
        auction=[(0, None)],
    )
    action = HeuristicStrategy(0).choose(view)
    assert isinstance(action, PlaceBid)
    assert action.bid.kind is BidKind.POINTS


def test_bids_marks_only_with_every_trick_in_hand():
    # The five top sixes with both other sixes out, and two doubles: every trick, whatever the
    # other hands hold.
    view = seat_view(
        1, "6-6 6-5 6-4 6-3 6-2 5-5 4-4", [Pass(1), *points_bids(1)], phase=Phase.BIDDING,
    )
    action = HeuristicStrategy(0).choose(view)
    assert isinstance(action, PlaceBid)
    assert action.bid.kind is BidKind.MARKS


def test_does_not_bid_over_its_partner():
    view = seat_view(
        2, "6-6 6-5 6-4 6-3 5-5 4-1 3-3", [Pass(2), *points_bids(2, 31)], phase=Phase.BIDDING,
        auction=[(0, Bid.points(30)), (1, None)], bidder=0,
        high_bid=Bid.points(30),
    )
    assert HeuristicStrategy(0).choose(view) == Pass(2)


def test_does_not_plunge_on_doubles_alone():
    # Four doubles allow a plunge (4 marks, every trick, the partner names trump): not with
    # tiles that lose tricks.
    plunge = PlaceBid(1, Bid.plunge(4))
    view = seat_view(
        1, "6-6 5-5 2-2 1-1 4-0 3-1 2-0", [Pass(1), *points_bids(1), plunge],
        phase=Phase.BIDDING,
    )
    assert HeuristicStrategy(0).choose(view) != plunge


def test_makes_a_forced_bid():
    forced = PlaceBid(3, Bid.points(30))
    view = seat_view(
        3, "6-2 5-1 4-0 3-1 2-0 1-0 4-3", [forced], phase=Phase.BIDDING,
        auction=[(0, None), (1, None), (2, None)],
    )
    assert HeuristicStrategy(0).choose(view) == forced


# ---------------------------------------------------------------- Moon


def test_moon_passes_with_a_weak_hand():
    view = seat_view(
        1, "6-2 5-1 4-1 3-1 2-1 4-3 3-2", [Pass(1), *moon_bids(1)], phase=Phase.BIDDING,
        rules=MOON,
    )
    assert HeuristicStrategy(0).choose(view) == Pass(1)


def test_moon_bids_tricks_with_a_strong_hand():
    view = seat_view(
        1, "6-6 6-5 6-4 6-3 5-5 4-4 2-1", [Pass(1), *moon_bids(1)], phase=Phase.BIDDING,
        rules=MOON,
    )
    action = HeuristicStrategy(0).choose(view)
    assert isinstance(action, PlaceBid)
    assert action.bid.kind is BidKind.MOON or action.bid.amount >= 5


def test_moon_lays_out_its_weakest_tile():
    hand = "6-6 6-5 6-4 6-3 5-5 4-4 2-1"
    exchanges = [ExchangeWidow(0, t) for t in tiles(hand)]
    view = seat_view(
        0, hand, exchanges, phase=Phase.WIDOW, rules=MOON, bidder=0,
        high_bid=Bid.tricks(5),
    )
    action = HeuristicStrategy(0).choose(view)
    assert isinstance(action, ExchangeWidow)
    assert engine.tile_name(action.discard) == "2-1"


def test_moon_takes_a_trick_it_can_win():
    # The bidder (seat 2) led 4-2; seat 0 holds 4-4 and 4-1 and is the last to play.
    view = seat_view(
        0, "4-4 4-1 6-6 2-1", plays(0, "4-4 4-1"), rules=MOON, trump=SIXES, bidder=2,
        high_bid=Bid.tricks(5), trick=[(2, "4-2"), (1, "3-1")],
    )
    assert chosen_tile(view) == "4-4"


def moon_bids_from(rules: Ruleset, seat: int) -> list[SeatCommand]:
    """The opening bids of a Moon auction under ``rules`` (its lowest bid to the moon)."""
    return [PlaceBid(seat, Bid.tricks(n)) for n in range(rules.moon_min_bid, 8)] + [
        PlaceBid(seat, Bid.moon())
    ]


STUCK_MOON = engine.ruleset("moon", all_pass="forced_dealer_any_bid")


def test_moon_stuck_dealer_passes_to_take_the_lowest_bid_with_a_weak_hand():
    # Both others passed: the dealer must take the hand, and passing gives it the lowest bid
    # (4), which is all a weak hand should risk.
    view = seat_view(
        0, "6-2 5-1 4-1 3-1 2-1 4-3 3-2", [Pass(0), *moon_bids_from(STUCK_MOON, 0)],
        phase=Phase.BIDDING, rules=STUCK_MOON, auction=[(1, None), (2, None)],
    )
    assert HeuristicStrategy(0).choose(view) == Pass(0)


def test_moon_stuck_dealer_bids_higher_than_the_lowest_with_a_strong_hand():
    view = seat_view(
        0, "6-6 6-5 6-4 6-3 5-5 4-4 2-1", [Pass(0), *moon_bids_from(STUCK_MOON, 0)],
        phase=Phase.BIDDING, rules=STUCK_MOON, auction=[(1, None), (2, None)],
    )
    action = HeuristicStrategy(0).choose(view)
    assert isinstance(action, PlaceBid)
    assert action.bid.rank > STUCK_MOON.moon_min_bid


def test_texas42_stuck_dealer_passes_rather_than_bid_the_minimum():
    rules = engine.ruleset("texas42", all_pass="forced_dealer_any_bid")
    view = seat_view(
        3, "6-6 6-5 6-4 6-3 5-5 4-1 3-3", [Pass(3), *points_bids(3)], phase=Phase.BIDDING,
        rules=rules, auction=[(0, None), (1, None), (2, None)],
    )
    # The hand is worth a bid (test_bids_with_a_strong_hand), but no more than 30: the pass.
    assert HeuristicStrategy(0).choose(view) == Pass(3)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, Bid.moon()),
        ({"missed_moon_loses_game": True}, Bid.tricks(6)),
        ({"moon_overcall": True}, Bid.tricks(6)),
    ],
)
def test_moon_shoots_more_carefully_when_a_miss_loses_the_game_or_may_be_overcalled(
    options, expected
):
    rules = engine.ruleset("moon", **options)
    view = seat_view(
        0, "6-6 5-5 4-4 6-1 5-4 4-2 1-1", [Pass(0), *moon_bids_from(rules, 0)],
        phase=Phase.BIDDING, rules=rules,
    )
    action = HeuristicStrategy(0).choose(view)
    assert isinstance(action, PlaceBid)
    assert action.bid == expected


def test_moon_shoots_as_before_when_nobody_is_left_to_overcall():
    rules = engine.ruleset("moon", moon_overcall=True)
    view = seat_view(
        0, "6-6 5-5 4-4 6-1 5-4 4-2 1-1", [Pass(0), *moon_bids_from(rules, 0)],
        phase=Phase.BIDDING, rules=rules, auction=[(1, None), (2, None)],
    )
    assert HeuristicStrategy(0).choose(view) == PlaceBid(0, Bid.moon())


@pytest.mark.parametrize(
    ("hand", "overcalls"),
    [("6-6 6-5 6-4 6-3 6-2 6-1 5-5", True), ("6-6 6-4 5-5 4-2 3-1 2-1 5-3", False)],
)
def test_moon_overcalls_only_with_every_trick_in_hand(hand, overcalls):
    rules = engine.ruleset("moon", moon_overcall=True)
    overcall = PlaceBid(1, Bid.overcall())
    view = seat_view(
        1, hand, [Pass(1), overcall], phase=Phase.BIDDING, rules=rules,
        auction=[(0, Bid.moon())], bidder=0, high_bid=Bid.moon(),
    )
    assert (HeuristicStrategy(0).choose(view) == overcall) is overcalls


def test_moon_values_a_hand_only_by_the_trumps_it_may_name():
    # Six doubles: the moon with doubles trump; a 5 where only a suit may be trump.
    hand = "6-6 5-5 4-4 3-3 2-2 1-1 6-5"
    chosen = {}
    for menu in ("all", "suits"):
        rules = engine.ruleset("moon", moon_trumps=menu)
        view = seat_view(
            0, hand, [Pass(0), *moon_bids_from(rules, 0)], phase=Phase.BIDDING, rules=rules
        )
        action = HeuristicStrategy(0).choose(view)
        assert isinstance(action, PlaceBid)
        chosen[menu] = action.bid
    assert chosen["all"] == Bid.moon()
    assert chosen["suits"].rank < Bid.moon().rank


# ---------------------------------------------------------------- nello


def test_nello_bidder_plays_under_the_trick():
    view = seat_view(
        0, "5-5 5-1 3-0 2-1", plays(0, "5-5 5-1"), rules=HOUSE, contract=Contract.nello(),
        bidder=0, high_bid=Bid.marks(1), trick=[(1, "5-4")], sitting_out=[2],
    )
    assert chosen_tile(view) == "5-1"


@pytest.mark.parametrize(("nello_doubles", "played"), [("high", "5-4"), ("low", "5-5")])
def test_nello_bidder_reads_how_doubles_play_from_the_ruleset(nello_doubles, played):
    # Fives led with 5-3; the bidder must follow with 5-5 or 5-4. With doubles high both win
    # the trick and it plays the lower, 5-4; with doubles low 5-5 is the lowest five and ducks.
    # The view's ruleset says which: nothing is guessed.
    view = seat_view(
        0, "5-5 5-4 3-0 2-1", plays(0, "5-5 5-4"),
        rules=engine.ruleset("texas42-house", nello_doubles=nello_doubles),
        contract=Contract.nello(), bidder=0, high_bid=Bid.marks(1), trick=[(1, "5-3")],
        sitting_out=[2],
    )
    assert chosen_tile(view) == played


# ---------------------------------------------------------------- whole games


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("texas42", {}),
        ("texas42-house", {}),
        ("texas42-points", {}),
        ("texas42", {"players": 3}),
        ("texas42-house", {"players": 6}),
        ("moon", {}),
        ("moon-s1", {}),
        ("moon-pagat", {}),
        ("moon-no-widow", {}),
        ("moon-overcall", {}),
        ("texas42-house", {"splash_capped": True, "all_pass": "forced_dealer_any_bid"}),
        ("texas42", {"all_pass": "forced_dealer_any_bid"}),
        ("moon", {"auction_goes_round": True}),
        ("moon", {"widow": "none"}),
        ("moon", {"moon_min_bid": 3}),
        ("moon", {"moon_min_bid": 5}),
        ("moon", {"moon_trumps": "suits_and_doubles"}),
        ("moon", {"missed_moon_loses_game": True}),
        ("moon", {"tie_to_earliest_seat": True}),
        ("moon", {"moon_overcall": True}),
        ("moon", {"all_pass": "forced_dealer_any_bid"}),
        ("moon", {"auction_goes_round": True, "moon_overcall": True, "widow": "none"}),
    ],
)
def test_plays_whole_games_with_legal_actions_only(preset, options):
    """Every seat heuristic, through the engine's views: the engine refuses any action that
    is not legal, so a game that ends proves every choice was one of the view's."""
    rules = engine.ruleset(preset, **options)
    bots = [strategy("heuristic", seed) for seed in range(rules.players)]
    for game in range(3):
        state = engine.replay(engine.start(rules))
        version = 1
        for _ in range(5000):
            if state.phase is engine.Phase.GAME_OVER:
                break
            if state.phase is engine.Phase.DEAL:
                command: engine.Command = engine.Deal(f"{preset}-{game}-{version}".encode())
            else:
                seat = state.hand.turn
                view = engine.view(state, seat)
                command = bots[seat].choose(view)
                assert command in view.legal
            for event in engine.decide(state, command):
                state = engine.evolve(state, event)
                version += 1
        assert state.phase is engine.Phase.GAME_OVER


def test_same_view_same_choice():
    hand = "6-6 6-4 6-1 5-5 3-2 2-0 1-0"
    view = seat_view(0, hand, plays(0, hand), trump=SIXES, bidder=0)
    assert HeuristicStrategy(3).choose(view) == HeuristicStrategy(3).choose(view)
