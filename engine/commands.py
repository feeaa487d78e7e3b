"""What a player, the dealer's shuffle or the server's clock asks the engine to do."""

from __future__ import annotations

from dataclasses import dataclass

from boneyard.engine.bids import Bid
from boneyard.engine.contracts import Contract
from boneyard.engine.tiles import Tile, tile_name

__all__ = [
    "ABANDON_REASONS",
    "TIMEOUT_POLICIES",
    "Abandon",
    "Command",
    "Deal",
    "DeclareContract",
    "DeclineWidow",
    "ExchangeWidow",
    "Pass",
    "PlaceBid",
    "PlayTile",
    "Resign",
    "SeatCommand",
    "TimeOut",
]

Seat = int


def _name(t: object) -> str:
    """A tile's name, or the raw value when a command carries something that is no tile."""
    return tile_name(t) if type(t) is int and 0 <= t < 28 else repr(t)


@dataclass(frozen=True, slots=True)
class Deal:
    """Shuffle with this seed and deal the next hand (the server draws the seed)."""

    seed: bytes


@dataclass(frozen=True, slots=True)
class PlaceBid:
    seat: Seat
    bid: Bid

    def __str__(self) -> str:
        return f"seat {self.seat} bids {self.bid}"


@dataclass(frozen=True, slots=True)
class Pass:
    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} passes"


@dataclass(frozen=True, slots=True)
class ExchangeWidow:
    """Take the widow into hand and lay out ``discard``, a tile of the hand as dealt."""

    seat: Seat
    discard: Tile

    def __str__(self) -> str:
        return f"seat {self.seat} takes the widow and lays out {_name(self.discard)}"


@dataclass(frozen=True, slots=True)
class DeclineWidow:
    """Leave the widow where it lies (only with ``widow=may_exchange``)."""

    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} leaves the widow"


@dataclass(frozen=True, slots=True)
class DeclareContract:
    seat: Seat
    contract: Contract

    def __str__(self) -> str:
        return f"seat {self.seat} declares {self.contract}"


@dataclass(frozen=True, slots=True)
class PlayTile:
    seat: Seat
    tile: Tile

    def __str__(self) -> str:
        return f"seat {self.seat} plays {_name(self.tile)}"


TIMEOUT_POLICIES = ("auto_play", "forfeit")
"""What happens when a seat's clock runs out (see ``TimeOut``)."""


@dataclass(frozen=True, slots=True)
class TimeOut:
    """The seat to act has run out of time (the server keeps the clock; the engine has none).

    ``policy`` is one of ``TIMEOUT_POLICIES``: ``auto_play`` plays the seat's lowest legal
    action for it (the first of ``legal_actions``); ``forfeit`` ends the game, the seat's team
    losing. Issued by the server, like ``Deal``, never by a seat."""

    seat: Seat
    policy: str

    def __str__(self) -> str:
        return f"seat {self.seat} times out ({self.policy})"


@dataclass(frozen=True, slots=True)
class Resign:
    """A seat gives up the game: its team loses at once, the scores as they are. Any seated
    player may resign at any time before the game is over, in turn or not."""

    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} resigns"


ABANDON_REASONS = ("idle", "unstarted", "absent")
"""Why the server closes a game nobody will finish (see ``Abandon``)."""


@dataclass(frozen=True, slots=True)
class Abandon:
    """The server closes a game with no winner: ``idle``, nobody acted for the server's
    allowed time (games without a clock); ``unstarted``, its seats were never all taken;
    ``absent``, every seat the server does not play itself ran out of time several times in a
    row (``engine.absence``). Issued by the server, like ``Deal``, never by a seat."""

    reason: str

    def __str__(self) -> str:
        return f"the game is abandoned ({self.reason})"


SeatCommand = PlaceBid | Pass | ExchangeWidow | DeclineWidow | DeclareContract | PlayTile
Command = Deal | TimeOut | Resign | Abandon | SeatCommand
