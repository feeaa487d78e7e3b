"""Set up positions and play them, so that each rule test reads like the rule.

Positions are dealt exactly: ``deal_hands(rules, ["6-6 6-5 ...", ...])`` folds ``GameCreated``
and a ``HandDealt`` event carrying the chosen hands (``evolve`` takes any ``HandDealt``).
Everything after the deal goes through ``decide`` like a real game, except where a helper says
it takes a shortcut.

Tiles are written as players write them (``"6-4"``); hands as space-separated tiles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from boneyard.engine import (
    Bid,
    Contract,
    Deal,
    DeclareContract,
    DeclineWidow,
    Event,
    ExchangeWidow,
    GameState,
    HandDealt,
    HandScored,
    Pass,
    Phase,
    PlaceBid,
    PlayTile,
    Ruleset,
    SeatCommand,
    TrickWon,
    WidowDeclined,
    decide,
    evolve,
    format_tiles,
    legal_actions,
    parse_tile,
    parse_tiles,
    replay,
    ruleset,
    start,
    tileset,
)

T = parse_tile
"""``T("6-4")``: one tile."""


SIXES = 6
"""The trump of sixes (a pip trump is its number)."""

DEAL_A = [  # seat 0 holds every six: with sixes trump it takes every trick
    "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
    "5-5 5-4 5-3 5-2 5-1 5-0 4-4",
    "4-3 4-2 4-1 4-0 3-3 3-2 3-1",
    "3-0 2-2 2-1 2-0 1-1 1-0 0-0",
]


def tiles(text: str) -> int:
    """``tiles("6-4 5-5")``: a set of tiles."""
    return parse_tiles(text)


def rules_of(rules: Ruleset | str, **options: object) -> Ruleset:
    return ruleset(rules, **options) if isinstance(rules, str) else rules


def new_game(rules: Ruleset | str = "texas42", **options: object) -> GameState:
    """A game just created, waiting for its first deal."""
    return replay(start(rules_of(rules, **options)))


def deal_hands(
    rules: Ruleset | str | GameState,
    hands: Sequence[str],
    rest: str = "",
    dealer: int | None = None,
) -> GameState:
    """The next hand dealt exactly as given: ``hands[seat]`` and ``rest`` (the widow, or the
    tiles out of play). ``dealer`` defaults to the seat the game says deals next, else the last
    seat (so seat 0 bids first)."""
    state = rules if isinstance(rules, GameState) else new_game(rules)
    if dealer is None:
        dealer = state.next_dealer if state.next_dealer is not None else state.rules.players - 1
    event = HandDealt(
        state.deals + 1, dealer, b"chosen", tuple(parse_tiles(h) for h in hands), parse_tiles(rest)
    )
    return evolve(state, event)


def deal_seed(rules: Ruleset | str | GameState, seed: bytes) -> GameState:
    """The next hand dealt by the engine's shuffle of ``seed``."""
    state = rules if isinstance(rules, GameState) else new_game(rules)
    return run(state, Deal(seed))


def act(state: GameState, *commands: object) -> tuple[GameState, list[Event]]:
    """Decide and apply each command in turn; the new state and every event."""
    events: list[Event] = []
    for command in commands:
        new = decide(state, command)  # type: ignore[arg-type]
        for event in new:
            state = evolve(state, event)
        events.extend(new)
    return state, events


def run(state: GameState, *commands: object) -> GameState:
    return act(state, *commands)[0]


def turn(state: GameState) -> int:
    assert state.hand is not None and state.hand.turn is not None
    return state.hand.turn


def auction(state: GameState, bids: Mapping[int, Bid]) -> tuple[GameState, list[Event]]:
    """One round of bidding from the seat whose turn it is: the seats in ``bids`` bid that,
    every other seat passes."""
    events: list[Event] = []
    while state.phase is Phase.BIDDING:
        seat = turn(state)
        command: SeatCommand = PlaceBid(seat, bids[seat]) if seat in bids else Pass(seat)
        state, new = act(state, command)
        events.extend(new)
    return state, events


def plays(state: GameState, text: str) -> tuple[GameState, list[Event]]:
    """Play these tiles in order, each by the seat whose turn it is."""
    events: list[Event] = []
    for word in text.split():
        if state.phase is not Phase.PLAY:
            raise AssertionError(f"the hand is over before {word} ({state.phase.value})")
        state, new = act(state, PlayTile(turn(state), T(word)))
        events.extend(new)
    return state, events


def trump(suit: int) -> Contract:
    return Contract.of_trump(suit)


def in_play(
    rules: Ruleset | str,
    hands: Sequence[str],
    contract: Contract | int,
    bidder: int = 0,
    bid: Bid | None = None,
    rest: str = "",
) -> GameState:
    """A hand in the play phase: dealt as given, ``bidder`` wins the auction with ``bid``
    (every other seat passes), and the declarer declares ``contract``; the declarer is to lead.

    Shortcut: in Moon the widow is left where it lies (a ``WidowDeclined`` event is folded in
    even under ``must_exchange``), since these positions are about the play.
    """
    r = rules_of(rules)
    if bid is None:
        bid = Bid.tricks(4) if r.is_moon else Bid.points(r.min_bid)
    if isinstance(contract, int):
        contract = Contract.of_trump(contract)
    if r.is_moon and not rest:
        rest = _spare_moon_tile(hands)
    state = deal_hands(r, hands, rest, dealer=(bidder - 1) % r.players)
    state, _ = auction(state, {bidder: bid})
    while state.phase is not Phase.PLAY:
        if state.phase is Phase.WIDOW:
            state = evolve(state, WidowDeclined(bidder))
        else:
            state = run(state, DeclareContract(turn(state), contract))
    return state


def _spare_moon_tile(hands: Sequence[str]) -> str:
    used = 0
    for h in hands:
        used |= parse_tiles(h)
    spare = next(t for t in ("0-0", "1-1", "2-1", "6-6", "5-5") if not used >> T(t) & 1)
    return spare


def trick_winner(events: Iterable[Event]) -> int:
    """The seat that won the (first) trick among these events."""
    return next(e.seat for e in events if isinstance(e, TrickWon))


def scored(events: Iterable[Event]) -> HandScored:
    """The hand's ``HandScored`` event among these events."""
    found = [e for e in events if isinstance(e, HandScored)]
    assert len(found) == 1, f"expected one HandScored, got {found}"
    return found[0]


def exchange(state: GameState, discard: str) -> GameState:
    return run(state, ExchangeWidow(turn(state), T(discard)))


def decline(state: GameState) -> GameState:
    return run(state, DeclineWidow(turn(state)))


def declare(state: GameState, contract: Contract | int) -> GameState:
    if isinstance(contract, int):
        contract = Contract.of_trump(contract)
    return run(state, DeclareContract(turn(state), contract))


def legal_tiles(state: GameState) -> str:
    """The tiles the seat to play may play now, as ``format_tiles`` writes them."""
    seat = turn(state)
    return format_tiles(
        tileset(a.tile for a in legal_actions(state, seat) if isinstance(a, PlayTile))
    )


def play_out(state: GameState) -> tuple[GameState, list[Event]]:
    """Play the rest of the hand, every seat playing its lowest legal tile."""
    events: list[Event] = []
    while state.phase is Phase.PLAY:
        seat = turn(state)
        state, new = act(state, legal_actions(state, seat)[0])
        events.extend(new)
    return state, events


def with_scores(state: GameState, *scores: int) -> GameState:
    """The same game with these scores (to set up a position near the end of a game)."""
    return dataclasses.replace(state, scores=tuple(scores))
