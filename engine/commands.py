"""What a player (or the dealer's shuffle) asks the engine to do."""

from __future__ import annotations

from dataclasses import dataclass

from engine.bids import Bid
from engine.contracts import Contract
from engine.tiles import Tile, tile_name

__all__ = [
    "Command",
    "Deal",
    "DeclareContract",
    "DeclineWidow",
    "ExchangeWidow",
    "Pass",
    "PlaceBid",
    "PlayTile",
    "SeatCommand",
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


SeatCommand = PlaceBid | Pass | ExchangeWidow | DeclineWidow | DeclareContract | PlayTile
Command = Deal | SeatCommand
