"""What the winning bidder declares, and the suit tables each declaration plays by.

A *trump* is a pip suit 0..6, ``DOUBLES`` (the seven doubles form the trump suit) or
``FOLLOW_ME`` (no trump). A *contract* is a trump, or one of the special Texas 42
contracts ``nello`` and ``sevens``.

Suits are numbered 0..6 for the pips and 7 for the doubles when the doubles form a suit
of their own (doubles trump, or nello with ``nello_doubles=own_suit``). For each way of
playing there is one precomputed ``SuitTable``: which suit a led tile calls for, which
tiles follow each suit, which are trumps, and the power of every tile in a trick for each
led suit, so that following and winning are a few bitmask and table look-ups.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from boneyard.engine.tiles import ALL_TILES, HIGH, LOW, Tile, TileSet

__all__ = [
    "DOUBLES",
    "DOUBLES_SUIT",
    "FOLLOW_ME",
    "Contract",
    "ContractKind",
    "SuitTable",
    "nello_table",
    "suit_name",
    "suit_table",
    "trump_name",
]

DOUBLES = 7
"""The trump value that makes the seven doubles the trump suit."""
FOLLOW_ME = 8
"""The trump value for no trump ("follow-me")."""
DOUBLES_SUIT = 7
"""The suit number of the doubles when they form a suit of their own."""

_SUIT_NAMES = ("blanks", "ones", "twos", "threes", "fours", "fives", "sixes", "doubles")


def suit_name(suit: int) -> str:
    """``fives``, ``blanks``, ``doubles``."""
    return _SUIT_NAMES[suit]


def trump_name(trump: int) -> str:
    """``sixes``, ``doubles`` or ``follow-me``."""
    return "follow-me" if trump == FOLLOW_ME else _SUIT_NAMES[trump]


class ContractKind(str, Enum):
    TRUMP = "trump"
    NELLO = "nello"
    SEVENS = "sevens"


@dataclass(frozen=True, slots=True)
class Contract:
    """A declaration: ``Contract.trump(5)``, ``Contract.nello()``, ``Contract.sevens()``."""

    kind: ContractKind
    trump: int = FOLLOW_ME

    def __post_init__(self) -> None:
        if not 0 <= self.trump <= FOLLOW_ME:
            raise ValueError(f"trump must be a suit 0..6, doubles (7) or follow-me (8), not {self.trump}")
        if self.kind is not ContractKind.TRUMP and self.trump != FOLLOW_ME:
            raise ValueError(f"{self.kind.value} has no trump")

    @classmethod
    def of_trump(cls, trump: int) -> Contract:
        return cls(ContractKind.TRUMP, trump)

    @classmethod
    def nello(cls) -> Contract:
        return cls(ContractKind.NELLO)

    @classmethod
    def sevens(cls) -> Contract:
        return cls(ContractKind.SEVENS)

    def __str__(self) -> str:
        if self.kind is ContractKind.TRUMP:
            return trump_name(self.trump)
        return str(self.kind.value)


@dataclass(frozen=True, slots=True)
class SuitTable:
    """How tiles follow and win under one declaration."""

    trumps: TileSet
    lead_suit: tuple[int, ...]
    """The suit a tile calls for when led (the trump suit's number for a trump)."""
    members: tuple[TileSet, ...]
    """``members[suit]``: the tiles that follow that suit."""
    power: tuple[tuple[int, ...], ...]
    """``power[led_suit][tile]``: higher wins; -1 for a tile that neither follows nor trumps."""


_TRUMP_POWER = 100


def _build(trump: int, doubles: str) -> SuitTable:
    """``doubles``: ``high`` or ``low`` in their number's suit, or ``suit`` of their own."""
    doubles_form_suit = trump == DOUBLES or doubles == "suit"
    trump_suit = None if trump == FOLLOW_ME else trump

    def suits_of(t: Tile) -> tuple[int, ...]:
        high, low = HIGH[t], LOW[t]
        double = high == low
        is_trump = double if trump_suit == DOUBLES else trump_suit in (high, low)
        if trump_suit is not None and is_trump:
            return (trump_suit,)
        if double:
            return (DOUBLES_SUIT,) if doubles_form_suit else (high,)
        return (high, low)

    def rank(t: Tile, suit: int) -> int:
        high, low = HIGH[t], LOW[t]
        if suit == DOUBLES_SUIT and doubles_form_suit:
            return high
        if high == low:
            return 0 if doubles == "low" and suit != trump_suit else 8
        return (low if high == suit else high) + 1

    tile_suits = [suits_of(t) for t in ALL_TILES]
    trumps = 0
    if trump_suit is not None:
        trumps = sum(1 << t for t in ALL_TILES if tile_suits[t] == (trump_suit,))
    members = tuple(
        sum(1 << t for t in ALL_TILES if suit in tile_suits[t]) for suit in range(8)
    )
    lead_suit = tuple(
        tile_suits[t][0] if len(tile_suits[t]) == 1 else HIGH[t] for t in ALL_TILES
    )
    power = tuple(
        tuple(
            _TRUMP_POWER + rank(t, trump_suit)
            if trump_suit is not None and trumps >> t & 1
            else rank(t, led) if members[led] >> t & 1 else -1
            for t in ALL_TILES
        )
        for led in range(8)
    )
    return SuitTable(trumps, lead_suit, members, power)


_TABLES: dict[tuple[int, str], SuitTable] = {
    (trump, doubles): _build(trump, doubles)
    for trump in range(FOLLOW_ME + 1)
    for doubles in ("high", "low", "suit")
}


def suit_table(trump: int, doubles: str = "high") -> SuitTable:
    """The table for a trump (0..6, ``DOUBLES``, ``FOLLOW_ME``); ``doubles`` matters only
    without trump (nello): ``high``, ``low`` or ``suit``."""
    return _TABLES[(trump, doubles)]


_NELLO_DOUBLES = {"high": "high", "low": "low", "own_suit": "suit"}
"""The ruleset's option ``nello_doubles`` and the ``doubles`` of its table."""


def nello_table(nello_doubles: str) -> SuitTable:
    """The table nello plays by (no trump) under the ruleset's ``nello_doubles``: ``high``,
    ``low`` or ``own_suit``."""
    return suit_table(FOLLOW_ME, _NELLO_DOUBLES[nello_doubles])
