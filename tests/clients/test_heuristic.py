"""The heuristic bot on positions set up by hand: each test builds the ``SeatView`` a seat would
get over the API and checks the bot's choice, so each reads like the rule of thumb it tests.

Tiles are written as players write them (``"6-4"``); a trick is a list of ``(seat, tile)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import pytest

from boneyard import engine
from boneyard.clients.strategies import strategy
from boneyard.clients.strategies.heuristic import HeuristicStrategy
from boneyard.codec import action_from_proto, view_to_proto
from boneyard.engine.tiles import parse_tile
from boneyard.v1 import actions_pb2, rules_pb2, view_pb2

SIXES = rules_pb2.TRUMP_SIXES
FIVES = rules_pb2.TRUMP_FIVES
BidKind: TypeAlias = rules_pb2.BidKind.ValueType
Trump: TypeAlias = rules_pb2.Trump.ValueType
Phase: TypeAlias = view_pb2.Phase.ValueType
TEAMS_42 = ((0, 2), (1, 3))
TEAMS_MOON = ((0,), (1,), (2,))


def tiles(text: str) -> list[int]:
    return sorted(parse_tile(word) for word in text.split())


def play(tile: str) -> actions_pb2.Action:
    return actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=parse_tile(tile)))


def plays(text: str) -> list[actions_pb2.Action]:
    return [play(word) for word in text.split()]


def bid(kind: BidKind, amount: int) -> actions_pb2.Action:
    return actions_pb2.Action(bid=rules_pb2.Bid(kind=kind, amount=amount))


PASS = actions_pb2.Action(pass_bid=actions_pb2.Pass())


def points_bids(low: int = 30) -> list[actions_pb2.Action]:
    """The legal bids of a Texas 42 auction whose high bid is ``low - 1`` (or none)."""
    return [bid(rules_pb2.BID_KIND_POINTS, n) for n in range(low, 42)] + [
        bid(rules_pb2.BID_KIND_MARKS, 1),
        bid(rules_pb2.BID_KIND_MARKS, 2),
    ]


MOON_BIDS = [bid(rules_pb2.BID_KIND_TRICKS, n) for n in range(4, 8)] + [
    bid(rules_pb2.BID_KIND_MOON, 21)
]


def declare(trump: Trump) -> actions_pb2.Action:
    return actions_pb2.Action(
        declare_contract=rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_TRUMP, trump=trump)
    )


EVERY_TRUMP = [declare(Trump(t)) for t in range(rules_pb2.TRUMP_BLANKS, rules_pb2.TRUMP_FOLLOW_ME + 1)]


def seat_view(
    seat: int,
    hand: str,
    legal: Sequence[actions_pb2.Action],
    *,
    phase: Phase = view_pb2.PHASE_PLAY,
    players: int = 4,
    trump: Trump | None = None,
    bidder: int | None = None,
    high_bid: tuple[BidKind, int] | None = None,
    trick: Sequence[tuple[int, str]] = (),
    done: Sequence[Sequence[tuple[int, str]]] = (),
    auction: Sequence[tuple[int, tuple[BidKind, int] | None]] = (),
) -> view_pb2.SeatView:
    """The view of ``seat``: its hand, its legal actions, the trick in progress and the tricks
    ``done`` (each marked won by its leader: the bot reads only the tiles played)."""
    teams = TEAMS_42 if players == 4 else TEAMS_MOON
    mine = tiles(hand)
    view = view_pb2.SeatView(
        version=7,
        phase=phase,
        seat=seat,
        players=players,
        teams=[view_pb2.Team(seats=t) for t in teams],
        hand=mine,
        hand_sizes=[len(mine) + (1 if s in {p for p, _ in trick} else 0) for s in range(players)],
        current_trick=[view_pb2.Play(seat=s, tile=parse_tile(t)) for s, t in trick],
        completed_tricks=[
            view_pb2.CompletedTrick(
                plays=[view_pb2.Play(seat=s, tile=parse_tile(t)) for s, t in done_trick],
                winner=done_trick[0][0],
            )
            for done_trick in done
        ],
        bids=[
            view_pb2.AuctionEntry(seat=s, bid=rules_pb2.Bid(kind=b[0], amount=b[1]) if b else None)
            for s, b in auction
        ],
        legal_actions=legal,
    )
    view.turn = seat
    if trump is not None:
        view.contract.CopyFrom(rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_TRUMP, trump=trump))
    if high_bid is not None:
        view.high_bid.CopyFrom(rules_pb2.Bid(kind=high_bid[0], amount=high_bid[1]))
    if bidder is not None:
        view.bidder = bidder
        view.declarer = bidder
    return view


def chosen_tile(view: view_pb2.SeatView) -> str:
    action = HeuristicStrategy(0).choose(view)
    assert action in list(view.legal_actions)
    assert action.WhichOneof("kind") == "play_tile"
    return engine.tile_name(action.play_tile.tile)


# ---------------------------------------------------------------- the play, Texas 42


def test_never_overtakes_a_partner_who_is_winning():
    # Threes led; the partner (seat 0) holds the trick with 3-3, the top three. Seat 2 is void
    # in threes and could trump with 6-5 or 6-2: it must not.
    view = seat_view(
        2, "6-5 6-2 2-1 4-0", plays("6-5 6-2 2-1 4-0"), trump=SIXES, bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30), trick=[(3, "3-1"), (0, "3-3"), (1, "3-2")],
    )
    assert chosen_tile(view) in ("2-1", "4-0")


def test_throws_count_under_a_partners_double():
    # Fours led; the partner's 4-4 cannot be beaten and seat 2 plays last. It must follow fours
    # with 5-4 or 4-2, both under the double: it gives the partner the count.
    view = seat_view(
        2, "5-4 4-2 6-6 1-0", plays("5-4 4-2"), trump=SIXES, bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30), trick=[(3, "4-1"), (0, "4-4"), (1, "4-3")],
    )
    assert chosen_tile(view) == "5-4"


def test_throws_count_on_a_partners_winning_trick():
    view = seat_view(
        2, "6-5 5-0 4-2 2-1", plays("6-5 5-0 4-2 2-1"), trump=SIXES, bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30), trick=[(3, "3-1"), (0, "3-3"), (1, "3-2")],
    )
    assert chosen_tile(view) == "5-0"


def test_keeps_count_off_an_opponents_winning_trick():
    # Seat 3 (an opponent) wins the trick with 4-4; seat 2 cannot follow fours or beat it.
    view = seat_view(
        2, "5-0 3-1 2-0 1-1", plays("5-0 3-1 2-0 1-1"), trump=SIXES, bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30), trick=[(3, "4-4"), (0, "4-1"), (1, "4-0")],
    )
    assert chosen_tile(view) != "5-0"


def test_trumps_in_when_count_is_at_stake():
    # Fives led by seat 3 (5-4, 5 count), seat 1 added 5-0 (5 count): 10 count on a trick the
    # opponents win. Seat 2, void in fives, trumps in with its 6-1.
    view = seat_view(
        2, "6-1 4-2 3-1 2-0", plays("6-1 4-2 3-1 2-0"), trump=SIXES, bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30), trick=[(3, "5-4"), (0, "5-1"), (1, "5-0")],
    )
    assert chosen_tile(view) == "6-1"


def test_follows_suit_with_a_legal_tile():
    # Fives led: only the fives in hand are legal; it wins with the cheapest that does.
    view = seat_view(
        1, "6-6 5-5 5-2 3-3 2-0", plays("5-5 5-2"), trump=SIXES, bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30), trick=[(0, "5-3")],
    )
    assert chosen_tile(view) in ("5-5", "5-2")


def test_leads_its_top_trump_to_pull_trumps():
    hand = "6-6 6-4 6-1 5-5 3-2 2-0 1-0"
    view = seat_view(
        0, hand, plays(hand), trump=SIXES, bidder=0, high_bid=(rules_pb2.BID_KIND_POINTS, 30)
    )
    assert chosen_tile(view) == "6-6"


def test_leads_a_low_tile_without_winners():
    # No trumps, no doubles, nothing on top of its suit: lead something cheap, not the count.
    hand = "5-0 4-1 3-2 3-0 2-1"
    view = seat_view(
        1, hand, plays(hand), trump=SIXES, bidder=0, high_bid=(rules_pb2.BID_KIND_POINTS, 30),
        done=[[(0, "6-6"), (1, "6-0"), (2, "6-2"), (3, "6-3")],
              [(0, "6-5"), (1, "1-0"), (2, "6-1"), (3, "4-4")]],
    )
    assert chosen_tile(view) not in ("5-0", "4-1", "3-2")


# ---------------------------------------------------------------- trump and bidding


def test_names_its_longest_suit_trump():
    view = seat_view(
        0, "5-5 5-4 5-3 5-2 5-1 6-2 3-1", EVERY_TRUMP, phase=view_pb2.PHASE_TRUMP, bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30),
    )
    assert HeuristicStrategy(0).choose(view) == declare(FIVES)


def test_names_doubles_or_follow_me_with_a_hand_of_doubles():
    view = seat_view(
        0, "6-6 5-5 4-4 3-3 2-2 6-1 5-0", EVERY_TRUMP, phase=view_pb2.PHASE_TRUMP, bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30),
    )
    action = HeuristicStrategy(0).choose(view)
    assert action.declare_contract.trump in (rules_pb2.TRUMP_DOUBLES, rules_pb2.TRUMP_FOLLOW_ME)


def test_passes_with_a_weak_hand():
    view = seat_view(
        1, "6-2 5-1 4-0 3-1 2-0 1-0 4-3", [PASS, *points_bids()], phase=view_pb2.PHASE_BIDDING,
        auction=[(0, None)],
    )
    assert HeuristicStrategy(0).choose(view) == PASS


def test_bids_with_a_strong_hand():
    view = seat_view(
        1, "6-6 6-5 6-4 6-3 5-5 4-1 3-3", [PASS, *points_bids()], phase=view_pb2.PHASE_BIDDING,
        auction=[(0, None)],
    )
    action = HeuristicStrategy(0).choose(view)
    assert action.WhichOneof("kind") == "bid"
    assert action.bid.kind == rules_pb2.BID_KIND_POINTS


def test_bids_marks_only_with_every_trick_in_hand():
    # The five top sixes with both other sixes out, and two doubles: every trick, whatever the
    # other hands hold.
    view = seat_view(
        1, "6-6 6-5 6-4 6-3 6-2 5-5 4-4", [PASS, *points_bids()], phase=view_pb2.PHASE_BIDDING,
    )
    action = HeuristicStrategy(0).choose(view)
    assert action.bid.kind == rules_pb2.BID_KIND_MARKS


def test_does_not_bid_over_its_partner():
    view = seat_view(
        2, "6-6 6-5 6-4 6-3 5-5 4-1 3-3", [PASS, *points_bids(31)], phase=view_pb2.PHASE_BIDDING,
        auction=[(0, (rules_pb2.BID_KIND_POINTS, 30)), (1, None)], bidder=0,
        high_bid=(rules_pb2.BID_KIND_POINTS, 30),
    )
    assert HeuristicStrategy(0).choose(view) == PASS


def test_does_not_plunge_on_doubles_alone():
    # Four doubles allow a plunge (4 marks, every trick, the partner names trump): not with
    # tiles that lose tricks.
    plunge = bid(rules_pb2.BID_KIND_PLUNGE, 4)
    view = seat_view(
        1, "6-6 5-5 2-2 1-1 4-0 3-1 2-0", [PASS, *points_bids(), plunge],
        phase=view_pb2.PHASE_BIDDING,
    )
    assert HeuristicStrategy(0).choose(view) != plunge


def test_makes_a_forced_bid():
    forced = bid(rules_pb2.BID_KIND_POINTS, 30)
    view = seat_view(
        3, "6-2 5-1 4-0 3-1 2-0 1-0 4-3", [forced], phase=view_pb2.PHASE_BIDDING,
        auction=[(0, None), (1, None), (2, None)],
    )
    assert HeuristicStrategy(0).choose(view) == forced


# ---------------------------------------------------------------- Moon


def test_moon_passes_with_a_weak_hand():
    view = seat_view(
        1, "6-2 5-1 4-1 3-1 2-1 4-3 3-2", [PASS, *MOON_BIDS], phase=view_pb2.PHASE_BIDDING,
        players=3,
    )
    assert HeuristicStrategy(0).choose(view) == PASS


def test_moon_bids_tricks_with_a_strong_hand():
    view = seat_view(
        1, "6-6 6-5 6-4 6-3 5-5 4-4 2-1", [PASS, *MOON_BIDS], phase=view_pb2.PHASE_BIDDING,
        players=3,
    )
    action = HeuristicStrategy(0).choose(view)
    assert action.WhichOneof("kind") == "bid"
    assert action.bid.kind == rules_pb2.BID_KIND_MOON or action.bid.amount >= 5


def test_moon_lays_out_its_weakest_tile():
    hand = "6-6 6-5 6-4 6-3 5-5 4-4 2-1"
    exchanges = [
        actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=t)) for t in tiles(hand)
    ]
    view = seat_view(
        0, hand, exchanges, phase=view_pb2.PHASE_WIDOW, players=3, bidder=0,
        high_bid=(rules_pb2.BID_KIND_TRICKS, 5),
    )
    action = HeuristicStrategy(0).choose(view)
    assert engine.tile_name(action.exchange_widow.discard) == "2-1"


def test_moon_takes_a_trick_it_can_win():
    # The bidder (seat 2) led 4-2; seat 0 holds 4-4 and 4-1 and is the last to play.
    view = seat_view(
        0, "4-4 4-1 6-6 2-1", plays("4-4 4-1"), players=3, trump=SIXES, bidder=2,
        high_bid=(rules_pb2.BID_KIND_TRICKS, 5), trick=[(2, "4-2"), (1, "3-1")],
    )
    assert chosen_tile(view) == "4-4"


# ---------------------------------------------------------------- nello


def test_nello_bidder_plays_under_the_trick():
    view = seat_view(
        0, "5-5 5-1 3-0 2-1", plays("5-5 5-1"), trump=None, bidder=0,
        high_bid=(rules_pb2.BID_KIND_MARKS, 1), trick=[(1, "5-4")],
    )
    view.contract.CopyFrom(rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_NELLO))
    view.sitting_out.append(2)
    assert chosen_tile(view) == "5-1"


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
    ],
)
def test_plays_whole_games_with_legal_actions_only(preset, options):
    """Every seat heuristic, through the engine and the API's view: the engine refuses any
    action that is not legal, so a game that ends proves every choice was one of the view's."""
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
                view = view_to_proto(engine.view(state, seat), version)
                action = bots[seat].choose(view)
                assert action in list(view.legal_actions)
                command = action_from_proto(action, seat)
            for event in engine.decide(state, command):
                state = engine.evolve(state, event)
                version += 1
        assert state.phase is engine.Phase.GAME_OVER


def test_same_view_same_choice():
    hand = "6-6 6-4 6-1 5-5 3-2 2-0 1-0"
    view = seat_view(0, hand, plays(hand), trump=SIXES, bidder=0)
    assert HeuristicStrategy(3).choose(view) == HeuristicStrategy(3).choose(view)
