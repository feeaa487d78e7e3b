"""The state of a game, folded from its events. Frozen: ``evolve`` makes a new one."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from boneyard.engine.bids import Bid
from boneyard.engine.contracts import Contract, SuitTable
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.tiles import Tile, TileSet

__all__ = ["GameState", "HandState", "Phase", "Play", "Trick"]

Seat = int
Play = tuple[Seat, Tile]


class Phase(str, Enum):
    DEAL = "deal"
    """Waiting for the next hand to be dealt."""
    BIDDING = "bidding"
    WIDOW = "widow"
    """Moon: the bidder exchanges with the widow."""
    TRUMP = "trump"
    """The declarer names trump or a contract."""
    PLAY = "play"
    GAME_OVER = "game_over"


@dataclass(frozen=True, slots=True)
class Trick:
    plays: tuple[Play, ...]
    winner: Seat
    points: int


_set_plays, _set_winner, _set_points = (
    getattr(Trick, name).__set__ for name in ("plays", "winner", "points")
)


def completed_trick(plays: tuple[Play, ...], winner: Seat, points: int) -> Trick:
    """``Trick(plays, winner, points)`` as the engine makes one at every trick's end: set
    through its slots, where a frozen dataclass's ``__init__`` takes half as long again."""
    trick = object.__new__(Trick)
    _set_plays(trick, plays)
    _set_winner(trick, winner)
    _set_points(trick, points)
    return trick


@dataclass(frozen=True)
class HandState:
    number: int
    """Deals so far in the game, counting this one (redeals included), from 1."""
    dealer: Seat
    seed: bytes
    dealt: tuple[TileSet, ...]
    """The hands as dealt (kept for the archive; never shown before the game ends)."""
    hands: tuple[TileSet, ...]
    """What each seat holds now."""
    rest: TileSet
    """Moon: the widow, then after an exchange the bidder's discard. 42: tiles out of play."""
    bids: tuple[tuple[Seat, Bid | None], ...] = ()
    """The auction so far; ``None`` is a pass."""
    high_bid: Bid | None = None
    bidder: Seat | None = None
    declarer: Seat | None = None
    contract: Contract | None = None
    widow_settled: bool = False
    """Moon: the widow has been exchanged or left."""
    sitting_out: tuple[Seat, ...] = ()
    table: SuitTable | None = None
    trick: tuple[Play, ...] = ()
    """The trick in progress."""
    tricks: tuple[Trick, ...] = ()
    """Tricks completed this hand."""
    taken: tuple[int, ...] = ()
    """Per team: points taken this hand (Moon: tricks)."""
    turn: Seat | None = None
    """The seat to act (in the auction, widow, trump or play)."""


@dataclass(frozen=True)
class GameState:
    rules: Ruleset
    phase: Phase
    scores: tuple[int, ...]
    """Per team: marks, or points."""
    hand: HandState | None = None
    next_dealer: Seat | None = None
    """Who deals next; ``None`` before the first deal when the holder of 1-0 decides it."""
    deals: int = 0
    results: tuple[Any, ...] = ()
    """The ``HandScored`` event of every hand played."""
    winner: int | None = None
    """The winning team, once the game is over."""


_T = TypeVar("_T", GameState, HandState)


_new = object.__new__
_set = object.__setattr__


def replace(obj: _T, **changes: Any) -> _T:
    """A copy with some fields changed (a lean ``dataclasses.replace`` for the hot path).

    ``GameState`` and ``HandState`` keep their fields in an instance dict rather than slots
    for this: a copy is a new object whose own dict is filled from the old one's, where slots
    took a call per field (five times as long, and the engine makes two or three copies for
    every event). Filling the new object's dict is one call where copying a dict and setting it
    as a frozen object's ``__dict__`` took two, and half as long again."""
    cls = type(obj)
    if not _FIELDS[cls].issuperset(changes):
        unknown = ", ".join(sorted(set(changes) - _FIELDS[cls]))
        raise TypeError(f"{cls.__name__} has no field {unknown}")
    new = _new(cls)
    fields = new.__dict__
    fields.update(obj.__dict__)
    fields.update(changes)
    return new


_FIELDS: dict[type, frozenset[str]] = {
    cls: frozenset(f.name for f in dataclasses.fields(cls)) for cls in (GameState, HandState)
}
"""The names ``replace`` may change: a misspelt one is refused, as ``dataclasses.replace``
refuses it, rather than kept as a stray attribute."""


def with_fields(cls: type[_T], fields: dict[str, Any]) -> _T:
    """A new ``cls`` whose fields are ``fields``, a dict the caller made and gives up (every
    field in it): how the engine's hot paths build a state from a changed copy of another's."""
    new = _new(cls)
    _set(new, "__dict__", fields)
    return new
