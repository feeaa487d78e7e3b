"""Property tests of the rules engine: invariants that hold under random legal play, for every
preset and for random combinations of options (RULES.md; STYLE.md rule 10).

Each test plays random games: a ruleset drawn from ``rulesets`` (every preset, and random valid
combinations of options), then a random legal command at every step (a ``Deal`` whenever a hand
is to be dealt), up to a few deals (random Moon play can stay under 21 for a long time). The
choices come from Hypothesis (``Chance``), so a failure shrinks to a short game and replays
from the example database. ``BONEYARD_PROPERTY_SCALE=20`` searches twenty times deeper.

The properties:

- random legal play never raises, and there is always someone to act until the game is over;
- at random positions, every legal action is accepted and every other command of a broad
  enumeration is refused with the ``IllegalAction`` subclass that names the reason, leaving the
  state as it was;
- tiles are conserved: every tile of the set is in exactly one place;
- a hand played out holds its points: 42 with 4 players (``hand_size + 35`` less the count
  that nobody plays otherwise), 7 tricks in Moon;
- folding the events of a game rebuilds its state, and the same commands give the same events;
- a seat's view never shows another seat's unplayed tile, the widow, a discard or tiles out
  of play; a spectator sees no hand;
- the deal is a deterministic permutation of the ruleset's tiles.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boneyard import engine
from boneyard.engine import (
    PRESETS,
    Abandon,
    Bid,
    BidKind,
    BidNotAllowed,
    BidTooLow,
    Command,
    Contract,
    ContractKind,
    Deal,
    DeclareContract,
    DeclineWidow,
    Event,
    ExchangeWidow,
    GameOver,
    GameState,
    GameWon,
    HandDealt,
    HandScored,
    IllegalAction,
    IllegalContract,
    IllegalDiscard,
    InvalidCommand,
    MustBid,
    MustFollowSuit,
    MustLeadTrump,
    MustPlayNearestSeven,
    NotYourTurn,
    Pass,
    Phase,
    PlaceBid,
    PlayTile,
    Resign,
    Ruleset,
    RulesetError,
    SeatCommand,
    TileNotInHand,
    WrongPhase,
    decide,
    evolve,
    format_tiles,
    iter_tiles,
    legal_actions,
    replay,
    ruleset,
    shuffle,
    start,
    tile,
    tileset,
    view,
)

# ---------------------------------------------------------------- rulesets


def _choice(*values: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from(values)


@st.composite
def texas42_rulesets(draw: st.DrawFn, **fixed: Any) -> Ruleset:
    """Any valid Texas 42 ruleset (RULES.md section 2); ``fixed`` options are not drawn."""
    players = fixed["players"] if "players" in fixed else draw(st.integers(2, 7))
    options: dict[str, Any] = {"players": players}
    teams = "pairs"
    if players == 6:
        teams = draw(_choice("pairs", "threes"))
        options["six_player_teams"] = teams
    partnered = players == 4 or (players == 6 and teams == "pairs")
    top_bid = 28 // players + 35 - 1
    options["min_bid"] = draw(st.one_of(st.just(min(30, top_bid)), st.integers(1, top_bid)))
    options["max_opening_marks"] = draw(st.integers(1, 5))
    options["marks_to_win"] = draw(st.integers(1, 10))
    options["points_to_win"] = draw(st.one_of(st.just(0), st.integers(1, 300)))
    options["first_hand_opener"] = draw(
        st.one_of(st.just("holds_1_0"), st.integers(0, players - 1).map(str))
    )
    options["all_pass"] = draw(_choice("forced_dealer", "redeal", "forced_dealer_any_bid"))
    for flag in (
        "end_hand_when_decided",
        "hide_tricks_on_mark_bids",
        "may_trump_when_able_to_follow",
        "nello",
        "sevens",
    ):
        options[flag] = draw(st.booleans())
    if options["nello"]:
        options["nello_doubles"] = draw(_choice("high", "low", "own_suit"))
    if partnered:
        options["plunge"] = draw(st.booleans())
        options["splash"] = draw(st.booleans())
        if options["splash"]:
            options["splash_marks"] = draw(_choice(2, 3))
            options["splash_capped"] = draw(st.booleans())
    options.update(fixed)
    return ruleset("texas42", **options)


@st.composite
def moon_rulesets(draw: st.DrawFn, **fixed: Any) -> Ruleset:
    """Any valid Moon ruleset (RULES.md section 3): every Moon option drawn."""
    options: dict[str, Any] = {
        "first_hand_opener": str(draw(st.integers(0, 2))),
        "points_to_win": draw(st.one_of(st.just(21), st.integers(1, 40))),
        "all_pass": draw(_choice("redeal", "forced_dealer", "forced_dealer_any_bid")),
        "widow": draw(_choice("must_exchange", "may_exchange", "none")),
        "moon_trumps": draw(_choice("all", "suits_and_follow_me", "suits", "suits_and_doubles")),
        "moon_min_bid": draw(_choice(3, 4, 5)),
        "made_scores": draw(_choice("bid", "tricks")),
        "set_scores": draw(_choice("minus_bid", "opponents_get_bid")),
    }
    for flag in (
        "may_trump_when_able_to_follow",
        "moon_only_over_seven",
        "widow_before_trump",
        "bidder_leads_trump",
        "moon_wins_game",
        "auction_goes_round",
        "missed_moon_loses_game",
        "tie_to_earliest_seat",
        "moon_overcall",
    ):
        options[flag] = draw(st.booleans())
    if options["widow"] == "none":
        options["widow_before_trump"] = True  # without a widow there is nothing to do first
    options.update(fixed)
    return ruleset("moon", **options)


presets = st.sampled_from(list(PRESETS.values()))
house_rulesets = texas42_rulesets(players=4, nello=True, plunge=True, splash=True, sevens=True)
"""Four players with every special contract on (and the other options drawn): plunge and splash
need a deal with 3 or 4 doubles in one hand, so they come up only where they are on."""
rulesets = st.one_of(presets, texas42_rulesets(), house_rulesets, moon_rulesets())
"""Every preset, and random valid combinations of options of both games."""

seeds = st.binary(min_size=1, max_size=32)


@pytest.mark.parametrize(
    "preset, options",
    [
        ("texas42", {"players": 1}),
        ("texas42", {"players": 8}),
        ("texas42", {"players": "four"}),
        ("texas42", {"players": True}),
        ("texas42", {"six_player_teams": "threes"}),
        ("texas42", {"players": 3, "plunge": True}),
        ("texas42", {"players": 6, "six_player_teams": "threes", "splash": True}),
        ("texas42", {"nello_doubles": "low"}),
        ("texas42", {"splash_marks": 3}),
        ("texas42", {"splash": True, "splash_marks": 4}),
        ("texas42", {"min_bid": 0}),
        ("texas42", {"min_bid": 42}),
        ("texas42", {"players": 7, "min_bid": 39}),
        ("texas42", {"max_opening_marks": 0}),
        ("texas42", {"max_opening_marks": 8}),
        ("texas42", {"max_opening_marks": 1653443733}),
        ("texas42", {"marks_to_win": 0}),
        ("texas42", {"marks_to_win": 101}),
        ("texas42", {"points_to_win": 10_001}),
        ("texas42", {"hand_limit": 10_001}),
        ("moon", {"points_to_win": 2**31}),
        ("texas42", {"points_to_win": -1}),
        ("texas42", {"all_pass": "sometimes"}),
        ("texas42", {"first_hand_opener": "4"}),
        ("texas42", {"widow": "may_exchange"}),
        ("texas42", {"moon_wins_game": True}),
        ("texas42", {"no_such_option": 1}),
        ("moon", {"players": 4}),
        ("moon", {"nello": True}),
        ("moon", {"min_bid": 31}),
        ("moon", {"points_to_win": 0}),
        ("moon", {"first_hand_opener": "holds_1_0"}),
        ("moon", {"first_hand_opener": "3"}),
        ("moon", {"moon_trumps": "doubles"}),
        ("moon", {"widow": "never"}),
        ("moon", {"moon_min_bid": 2}),
        ("moon", {"moon_min_bid": 6}),
        ("moon", {"moon_min_bid": "four"}),
        ("moon", {"widow": "none", "widow_before_trump": False}),
        ("moon-pagat", {"widow": "none"}),
        ("moon", {"splash_capped": True}),
        ("moon", {"moon_trumps": "doubles_and_follow_me"}),
        ("texas42", {"moon_min_bid": 3}),
        ("texas42", {"auction_goes_round": True}),
        ("texas42", {"moon_overcall": True}),
        ("texas42", {"missed_moon_loses_game": True}),
        ("texas42", {"tie_to_earliest_seat": True}),
        ("texas42", {"splash_capped": True}),
        ("texas42", {"all_pass": "forced_dealer_may_raise"}),
        ("chess", {}),
    ],
)
def test_nonsense_ruleset_is_refused_at_creation(preset: str, options: dict[str, Any]) -> None:
    with pytest.raises(RulesetError):
        ruleset(preset, **options)


# ---------------------------------------------------------------- random play


class Game:
    """A game driven command by command, keeping every event and command."""

    def __init__(self, rules: Ruleset) -> None:
        self.rules = rules
        self.events: list[Event] = list(start(rules))
        self.commands: list[Command] = []
        self.state: GameState = replay(self.events)

    def apply(self, command: Command) -> list[Event]:
        events = decide(self.state, command)
        for event in events:
            self.state = evolve(self.state, event)
        self.events.extend(events)
        self.commands.append(command)
        return events

    def random_command(self, chance: Chance, max_deals: int) -> Command | None:
        """A random legal command, or ``None`` when the game is over or has had its deals."""
        state, rng = self.state, chance.rng
        if state.phase is Phase.GAME_OVER:
            return None
        if state.phase is Phase.DEAL:
            if state.deals >= max_deals:
                return None
            return Deal(chance.salt + state.deals.to_bytes(2, "big"))
        assert state.hand is not None and state.hand.turn is not None
        actions = legal_actions(state, state.hand.turn)
        assert actions, f"seat {state.hand.turn} is to act but has nothing legal to do"
        # Uniform choice would make special contracts rare: favour them, and passes, so that
        # all-pass hands, mark bids, plunge, splash, nello and sevens all come up often.
        seat = state.hand.turn
        if state.phase is Phase.BIDDING:
            bids = [a for a in actions if isinstance(a, PlaceBid)]
            special = [b for b in bids if b.bid.kind in (BidKind.PLUNGE, BidKind.SPLASH)]
            if special and rng.random() < 0.7:
                return rng.choice(special)
            if Pass(seat) in actions and rng.random() < 0.4:
                return Pass(seat)
            marks = [b for b in bids if b.bid.kind is BidKind.MARKS]
            if marks and rng.random() < 0.3:
                return rng.choice(marks)
        if state.phase is Phase.TRUMP:
            special = [
                a
                for a in actions
                if isinstance(a, DeclareContract) and a.contract.kind is not ContractKind.TRUMP
            ]
            if special and rng.random() < 0.6:
                return rng.choice(special)
        return rng.choice(actions)

    def play(self, chance: Chance, max_deals: int) -> Iterator[list[Event]]:
        """Play randomly; yield the events of each step, after the state has moved on."""
        while (command := self.random_command(chance, max_deals)) is not None:
            yield self.apply(command)


@dataclass(frozen=True)
class Chance:
    """Where a random game's choices come from: ``rng`` picks the commands, and the seed of
    deal ``n`` is ``salt`` followed by ``n``. (Seeds drawn from ``rng`` alone repeat a lot:
    Hypothesis draws zero bits often.)"""

    rng: random.Random
    salt: bytes


chances = st.builds(
    Chance, rng=st.randoms(use_true_random=False), salt=st.binary(min_size=8, max_size=8)
)


_SCALE = int(os.environ.get("BONEYARD_PROPERTY_SCALE", "1"))
"""Multiply every test's examples, for a deeper search than CI's (``=20`` takes minutes)."""

_SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=300 * _SCALE, **_SETTINGS)
@given(rules=rulesets, chance=chances)
def test_random_legal_play_never_raises(rules: Ruleset, chance: Chance) -> None:
    game = Game(rules)
    for events in game.play(chance, max_deals=4):
        state = game.state
        assert events, "an accepted command must cause events"
        hand = state.hand
        if state.phase in (Phase.BIDDING, Phase.WIDOW, Phase.TRUMP, Phase.PLAY):
            assert hand is not None and hand.turn is not None
            assert hand.turn not in hand.sitting_out, "a seat sitting out is never to act"
            assert legal_actions(state, hand.turn), f"seat {hand.turn} is stuck in {state.phase}"
        for seat in range(rules.players):
            if hand is None or seat != hand.turn or state.phase in (Phase.DEAL, Phase.GAME_OVER):
                assert legal_actions(state, seat) == [], f"seat {seat} may act out of turn"
        for event in events:
            if isinstance(event, GameWon):
                assert state.phase is Phase.GAME_OVER and state.winner == event.team
                assert event.seats == rules.teams[event.team]
                target = rules.points_to_win or rules.marks_to_win
                scored = state.results[-1]
                shot = scored.bid.shoots_the_moon
                moon_win = rules.moon_wins_game and scored.made and shot
                moon_loss = rules.missed_moon_loses_game and not scored.made and shot
                assert moon_win or moon_loss or state.scores[event.team] >= target
                if moon_loss:
                    assert event.team != rules.team_of[scored.bidder]


# ---------------------------------------------------------------- accepted and refused


_BIDS: tuple[Bid, ...] = (
    *(Bid.points(n) for n in range(-1, 51)),
    *(Bid.marks(n) for n in range(13)),
    *(Bid.plunge(n) for n in range(13)),
    *(Bid.splash(n) for n in range(13)),
    *(Bid.tricks(n) for n in range(9)),
    Bid.moon(),
    Bid.overcall(),
    Bid(BidKind.OVERCALL, 21),
    Bid(BidKind.MOON, 42),
)
_CONTRACTS: tuple[Contract, ...] = (
    *(Contract.of_trump(t) for t in range(9)),
    Contract.nello(),
    Contract.sevens(),
)
_TILE_VALUES: tuple[Any, ...] = (*range(-1, 29), "6-4")
"""Every tile, a number on either side that is no tile, and a tile not parsed from text."""


def every_command(seat: Any) -> list[SeatCommand]:
    """A broad set of commands from ``seat``: every kind, every tile, every bid, every contract,
    and values of the wrong type (strings are parsed at the edges, never by the engine)."""
    return [
        Pass(seat),
        DeclineWidow(seat),
        *(PlaceBid(seat, bid) for bid in _BIDS),
        PlaceBid(seat, "30"),  # type: ignore[arg-type]
        *(DeclareContract(seat, contract) for contract in _CONTRACTS),
        DeclareContract(seat, "sixes"),  # type: ignore[arg-type]
        *(PlayTile(seat, t) for t in _TILE_VALUES),
        *(ExchangeWidow(seat, t) for t in _TILE_VALUES),
    ]


_PHASE_OF: dict[type, Phase] = {
    PlaceBid: Phase.BIDDING,
    Pass: Phase.BIDDING,
    ExchangeWidow: Phase.WIDOW,
    DeclineWidow: Phase.WIDOW,
    DeclareContract: Phase.TRUMP,
    PlayTile: Phase.PLAY,
}


def _is_tile(value: Any) -> bool:
    return type(value) is int and 0 <= value < 28


def malformed(state: GameState, command: Command) -> bool:
    """A command that means nothing at this table, whatever the position: no such seat, no
    such tile, a seed that is not bytes, a value of the wrong type."""
    if isinstance(command, Deal):
        return not (isinstance(command.seed, bytes) and command.seed)
    if type(command.seat) is not int or not 0 <= command.seat < state.rules.players:
        return True
    if isinstance(command, PlayTile):
        return not _is_tile(command.tile)
    if isinstance(command, ExchangeWidow):
        return not _is_tile(command.discard)
    if isinstance(command, PlaceBid):
        return not isinstance(command.bid, Bid)
    if isinstance(command, DeclareContract):
        return not isinstance(command.contract, Contract)
    return False


def expected_refusal(
    state: GameState, command: Command, legal: list[SeatCommand]
) -> tuple[type[IllegalAction], ...] | None:
    """The errors that may refuse ``command`` (each names a reason it is wrong), or ``None``
    if it is legal. A command wrong in several ways may be refused for any of them."""
    bad = (InvalidCommand,) if malformed(state, command) else ()
    if state.phase is Phase.GAME_OVER:
        return (GameOver, *bad)
    if isinstance(command, Deal):
        if state.phase is not Phase.DEAL:
            return (WrongPhase, *bad)
        return bad or None
    hand = state.hand
    turn = hand.turn if hand is not None else None
    reasons: list[type[IllegalAction]] = list(bad)
    seat = command.seat
    if _PHASE_OF[type(command)] is not state.phase:
        reasons.append(WrongPhase)
    if type(seat) is int and 0 <= seat < state.rules.players and seat != turn:
        reasons.append(NotYourTurn)
    if reasons:
        return tuple(reasons)
    if command in legal:
        return None
    assert hand is not None
    if isinstance(command, PlayTile):
        if not hand.hands[seat] >> command.tile & 1:
            return (TileNotInHand,)
        if hand.contract is not None and hand.contract.kind is ContractKind.SEVENS:
            return (MustPlayNearestSeven,)
        return (MustLeadTrump,) if not hand.trick else (MustFollowSuit,)
    if isinstance(command, (ExchangeWidow, DeclineWidow)):
        return (IllegalDiscard,)
    if isinstance(command, PlaceBid):
        return (BidTooLow, BidNotAllowed)
    if isinstance(command, Pass):
        return (MustBid,)
    return (IllegalContract,)


def check_commands_at(state: GameState) -> None:
    """Every legal action is accepted; every other command is refused for the right reason and
    changes nothing."""
    rules = state.rules
    before = copy.deepcopy(state)
    turn = state.hand.turn if state.hand is not None else None
    legal = legal_actions(state, turn) if turn is not None else []
    assert len(set(legal)) == len(legal), f"duplicate legal actions: {legal}"
    if turn is not None:
        missing = set(legal) - set(every_command(turn))
        assert not missing, f"the enumeration of commands misses legal {missing}"
    for action in legal:
        events = decide(state, action)
        assert events, f"{action} was accepted but caused nothing"
        after = state
        for event in events:
            after = evolve(after, event)
    commands: list[Command] = [Deal(b"seed"), Deal(b""), Deal("seed")]  # type: ignore[arg-type]
    for seat in (*range(-1, rules.players + 1), "0"):
        commands.extend(every_command(seat))
    for command in commands:
        expected = expected_refusal(state, command, legal)
        if expected is None:
            decide(state, command)
            continue
        try:
            decide(state, command)
        except IllegalAction as error:
            assert type(error) is not IllegalAction, f"{command}: refused without a reason"
            assert isinstance(error, expected), (
                f"{command} in the {state.phase.value} phase (turn {turn}) was refused with "
                f"{type(error).__name__}({error}), expected one of "
                f"{[e.__name__ for e in expected]}"
            )
            assert str(error), f"{command}: refused with an empty message"
        else:
            raise AssertionError(
                f"{command} was accepted in the {state.phase.value} phase (turn {turn}); "
                f"legal: {legal}"
            )
    assert state == before, "a command changed the state"


@settings(max_examples=80 * _SCALE, **_SETTINGS)
@given(rules=rulesets, chance=chances)
def test_legal_actions_are_accepted_and_every_other_command_refused(
    rules: Ruleset, chance: Chance
) -> None:
    game = Game(rules)
    check_commands_at(game.state)
    for _ in game.play(chance, max_deals=2):
        if chance.rng.random() < 0.2 or game.state.phase in (Phase.DEAL, Phase.GAME_OVER):
            check_commands_at(game.state)


# ---------------------------------------------------------------- tiles conserved


def assert_tiles_conserved(state: GameState) -> None:
    """Hands (the sitting-out partner's included), completed tricks, the trick in progress and
    the rest (widow, discard, tiles out of play) hold every tile of the set exactly once."""
    rules, hand = state.rules, state.hand
    if hand is None:
        return
    places: list[tuple[str, int]] = [(f"seat {s}'s hand", h) for s, h in enumerate(hand.hands)]
    for k, trick in enumerate(hand.tricks):
        places.append((f"trick {k + 1}", tileset(t for _, t in trick.plays)))
        assert len(trick.plays) == rules.players - len(hand.sitting_out), trick
    places.append(("the trick in progress", tileset(t for _, t in hand.trick)))
    places.append(("the rest (widow, discard, out of play)", hand.rest))
    seen = 0
    where: dict[int, str] = {}
    for name, tiles in places:
        for t in iter_tiles(tiles):
            assert not seen >> t & 1, f"{format_tiles(1 << t)} is in {where[t]} and in {name}"
            where[t] = name
        seen |= tiles
    assert seen == rules.tiles, (
        f"missing {format_tiles(rules.tiles & ~seen)}, extra {format_tiles(seen & ~rules.tiles)}"
    )
    played_by = [0] * rules.players
    for trick in hand.tricks:
        seats = [s for s, _ in trick.plays]
        assert len(set(seats)) == len(seats), f"a seat played twice to {trick}"
        for s in seats:
            played_by[s] += 1
    for s, _ in hand.trick:
        played_by[s] += 1
    for s in range(rules.players):
        assert hand.hands[s].bit_count() == rules.hand_size - played_by[s], (
            f"seat {s} holds {format_tiles(hand.hands[s])} after playing {played_by[s]} tiles"
        )
        if s in hand.sitting_out:
            assert played_by[s] == 0 and hand.hands[s] == hand.dealt[s]


@settings(max_examples=300 * _SCALE, **_SETTINGS)
@given(rules=rulesets, chance=chances)
def test_tiles_are_conserved(rules: Ruleset, chance: Chance) -> None:
    game = Game(rules)
    for _ in game.play(chance, max_deals=4):
        assert_tiles_conserved(game.state)


@settings(max_examples=200 * _SCALE, **_SETTINGS)
@given(rules=rulesets, chance=chances, steps=st.integers(0, 120), seat=st.integers(0, 6))
def test_a_game_resigned_or_abandoned_anywhere_ends_and_replays(
    rules: Ruleset, chance: Chance, steps: int, seat: int
) -> None:
    game = Game(rules)
    for _, _ in zip(range(steps), game.play(chance, max_deals=4), strict=False):
        pass
    if game.state.phase is Phase.GAME_OVER:
        return
    resign = chance.rng.random() < 0.5
    game.apply(Resign(seat % rules.players) if resign else Abandon("idle"))
    state = game.state
    assert state.phase is Phase.GAME_OVER
    assert (state.winner is not None) == resign
    if resign:
        assert state.winner != rules.team_of[seat % rules.players]
    assert replay(game.events) == state
    assert all(legal_actions(state, s) == [] for s in range(rules.players))
    assert_tiles_conserved(state)


# ---------------------------------------------------------------- points per hand


_COUNT_TILES = {tile(5, 0): 5, tile(4, 1): 5, tile(3, 2): 5, tile(6, 4): 10, tile(5, 5): 10}


def count(tiles: int) -> int:
    """Count points in these tiles (RULES.md section 2), computed apart from the engine."""
    return sum(_COUNT_TILES.get(t, 0) for t in iter_tiles(tiles))


@settings(max_examples=300 * _SCALE, **_SETTINGS)
@given(
    rules=st.one_of(
        st.just(ruleset("texas42", end_hand_when_decided=False)),
        st.just(PRESETS["texas42-points"]),
        texas42_rulesets(end_hand_when_decided=False),
        texas42_rulesets(
            players=4,
            nello=True,
            plunge=True,
            splash=True,
            sevens=True,
            end_hand_when_decided=False,
        ),
    ),
    chance=chances,
)
def test_texas42_hand_played_out_holds_tricks_plus_35_points(
    rules: Ruleset, chance: Chance
) -> None:
    """42 points in a 4-player hand; in general one a trick plus the 35 count, less the count
    of tiles nobody plays (out of play, or the hand of a nello bidder's partner)."""
    game = Game(rules)
    for events in game.play(chance, max_deals=4):
        for event in events:
            if not isinstance(event, HandScored):
                continue
            hand = game.state.hand
            assert hand is not None
            for team in range(len(rules.teams)):
                won = [t for t in hand.tricks if rules.team_of[t.winner] == team]
                assert event.taken[team] == sum(t.points for t in won)
            for trick in hand.tricks:
                assert trick.points == 1 + count(tileset(t for _, t in trick.plays))
            nello = hand.contract is not None and hand.contract.kind is ContractKind.NELLO
            if len(hand.tricks) < rules.hand_size:
                # Only nello ends early when end_hand_when_decided is off: set on the first
                # trick the bidder wins.
                assert nello and not event.made and hand.tricks[-1].winner == hand.bidder
                continue
            unplayed = hand.rest
            for seat in hand.sitting_out:
                unplayed |= hand.dealt[seat]
            assert sum(event.taken) == rules.hand_size + 35 - count(unplayed)
            if rules.players == 4 and not nello:
                assert sum(event.taken) == 42


@settings(max_examples=150 * _SCALE, **_SETTINGS)
@given(rules=moon_rulesets(), chance=chances)
def test_moon_hand_holds_seven_tricks(rules: Ruleset, chance: Chance) -> None:
    game = Game(rules)
    for events in game.play(chance, max_deals=4):
        for event in events:
            if isinstance(event, HandScored):
                hand = game.state.hand
                assert hand is not None and len(hand.tricks) == 7
                assert sum(event.taken) == 7


# ---------------------------------------------------------------- replay


@settings(max_examples=200 * _SCALE, **_SETTINGS)
@given(rules=rulesets, chance=chances)
def test_folding_the_events_rebuilds_the_state(rules: Ruleset, chance: Chance) -> None:
    game = Game(rules)
    for events in game.play(chance, max_deals=4):
        if any(isinstance(e, (HandDealt, HandScored)) for e in events):
            assert replay(game.events) == game.state
    assert replay(game.events) == game.state
    # The same commands from the start give the same events: decide is deterministic.
    again = Game(rules)
    for command in game.commands:
        again.apply(command)
    assert again.events == game.events
    assert again.state == game.state


# ---------------------------------------------------------------- views


def tiles_in(value: Any, annotation: str, path: str) -> Iterator[tuple[str, int]]:
    """Every tile in ``value``, read by its annotation: ``Tile`` is a tile, ``TileSet`` a set
    of tiles, ``Play`` a (seat, tile) pair; dataclasses are walked field by field."""
    yield from _walk(ast.parse(annotation, mode="eval").body, value, path)


_NO_TILES = {"int", "bool", "str", "bytes", "Seat"}


def _walk(node: ast.expr, value: Any, path: str) -> Iterator[tuple[str, int]]:
    if value is None:
        return
    if isinstance(node, ast.Name):
        if node.id == "Tile":
            yield path, value
        elif node.id == "TileSet":
            yield from ((path, t) for t in iter_tiles(value))
        elif node.id == "Play":
            yield f"{path} (seat {value[0]})", value[1]
        elif dataclasses.is_dataclass(value):
            yield from walk_dataclass(value, path)
        elif node.id not in _NO_TILES and not isinstance(value, Enum):
            raise AssertionError(f"{path}: does a {node.id} hold tiles? teach tiles_in")
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        options = [
            n
            for n in (node.left, node.right)
            if not (isinstance(n, ast.Constant) and n.value is None)
        ]
        if len(options) == 1:
            yield from _walk(options[0], value, path)
        elif dataclasses.is_dataclass(value):
            yield from walk_dataclass(value, path)
        else:
            raise AssertionError(f"{path}: cannot read the union {ast.unparse(node)}")
        return
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "tuple":
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
            for i, item in enumerate(value):
                yield from _walk(args[0], item, f"{path}[{i}]")
        else:
            for i, (arg, item) in enumerate(zip(args, value, strict=True)):
                yield from _walk(arg, item, f"{path}[{i}]")
        return
    raise AssertionError(f"{path}: cannot read the annotation {ast.unparse(node)}")


def walk_dataclass(obj: Any, path: str) -> Iterator[tuple[str, int]]:
    if isinstance(obj, Ruleset):
        return  # the rules are the same for every seat and known before the deal
    for f in dataclasses.fields(obj):
        assert isinstance(f.type, str), f"{type(obj).__name__}.{f.name}: annotation not a string"
        yield from tiles_in(getattr(obj, f.name), f.type, f"{path}.{f.name}")


def assert_view_hides_what_it_must(state: GameState, seat: int | None) -> None:
    rules, hand = state.rules, state.hand
    seen = view(state, seat)
    found = list(walk_dataclass(seen, "view"))
    if hand is None:
        assert seen.hand == 0 and not found
        return
    if seat is None:
        assert seen.hand == 0, "a spectator is shown a hand"
        assert seen.legal == () and seen.discard is None
        hidden = hand.rest
        for h in hand.hands:
            hidden |= h
    else:
        assert seen.hand == hand.hands[seat]
        assert seen.legal == tuple(legal_actions(state, seat))
        hidden = hand.rest
        for other, h in enumerate(hand.hands):
            if other != seat:
                hidden |= h
        shown = {t for _, t in found}
        assert set(iter_tiles(hand.hands[seat])) <= shown, "tiles_in missed the seat's own hand"
    own_discard = None
    if (
        seat is not None
        and rules.is_moon
        and seat == hand.bidder
        and hand.widow_settled
        and hand.rest
        and hand.dealt[seat] & hand.rest
    ):
        own_discard = next(iter_tiles(hand.rest))  # the tile the bidder laid out itself
    assert seen.discard == own_discard
    for path, t in found:
        if path == "view.discard" and t == own_discard:
            continue
        assert not hidden >> t & 1, (
            f"seat {seat} sees {format_tiles(1 << t)} at {path} ({state.phase.value}, "
            f"hand {hand.number}): it lies in "
            + (
                "the rest"
                if hand.rest >> t & 1
                else f"seat {next(s for s, h in enumerate(hand.hands) if h >> t & 1)}'s hand"
            )
        )
    bid = hand.high_bid
    face_down = (
        not rules.is_moon
        and rules.hide_tricks_on_mark_bids
        and bid is not None
        and bid.is_mark_bid
        and bid.amount >= 2
    )
    for shown_trick, trick in zip(seen.tricks, hand.tricks, strict=True):
        if face_down:
            assert shown_trick.plays is None, "a trick won on an 84+ bid is shown face up"
        else:
            assert shown_trick.plays == trick.plays
    assert seen.trick == hand.trick


@settings(max_examples=120 * _SCALE, **_SETTINGS)
@given(rules=rulesets, chance=chances)
def test_a_view_never_shows_another_seats_unplayed_tiles(rules: Ruleset, chance: Chance) -> None:
    game = Game(rules)
    for _ in game.play(chance, max_deals=3):
        for seat in (*range(rules.players), None):
            assert_view_hides_what_it_must(game.state, seat)


# ---------------------------------------------------------------- deal


@settings(max_examples=300 * _SCALE, **_SETTINGS)
@given(rules=rulesets, seed=seeds)
def test_the_same_seed_deals_the_same_permutation_of_the_tiles(rules: Ruleset, seed: bytes) -> None:
    state = replay(start(rules))
    first = decide(state, Deal(seed))
    assert decide(state, Deal(seed)) == first
    assert decide(replay(start(rules)), Deal(bytes(seed))) == first
    [dealt] = first
    assert isinstance(dealt, HandDealt) and dealt.seed == seed and dealt.number == 1
    deck = shuffle(seed, rules.tiles)
    assert sorted(deck) == list(iter_tiles(rules.tiles)), "the deal is not a permutation"
    assert shuffle(seed, rules.tiles) == deck
    k = rules.hand_size
    assert len(dealt.hands) == rules.players
    for s, held in enumerate(dealt.hands):
        assert held == tileset(deck[s * k : (s + 1) * k])
        assert held.bit_count() == k
    assert dealt.rest == tileset(deck[rules.players * k :])
    union = dealt.rest
    for held in dealt.hands:
        assert not union & held
        union |= held
    assert union == rules.tiles
    if rules.is_moon:
        widows = 1 if rules.has_widow else 0
        assert dealt.rest.bit_count() == widows, "Moon leaves one tile, the widow [S0][S1]"
    if rules.first_hand_opener == "holds_1_0" and not dealt.rest >> tile(1, 0) & 1:
        opener = (dealt.dealer + 1) % rules.players
        assert dealt.hands[opener] >> tile(1, 0) & 1, "the holder of 1-0 bids first [S2]"
    elif rules.first_hand_opener != "holds_1_0":
        assert dealt.dealer == (int(rules.first_hand_opener) - 1) % rules.players


def test_public_face_exports_what_the_tests_use() -> None:
    for name in (
        "ruleset",
        "PRESETS",
        "option_names",
        "start",
        "replay",
        "decide",
        "evolve",
        "legal_actions",
        "view",
        "IllegalAction",
        "RulesetError",
    ):
        assert name in engine.__all__
