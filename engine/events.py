"""What happened: the log of a game is a sequence of these, and folding ``evolve`` over it
rebuilds the game exactly."""

from __future__ import annotations

from dataclasses import dataclass

from boneyard.engine.bids import Bid
from boneyard.engine.contracts import Contract
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.tiles import Tile, TileSet, tile_name

__all__ = [
    "AllPassed",
    "AuctionWon",
    "BidPlaced",
    "ClockExpired",
    "ContractDeclared",
    "Event",
    "GameAbandoned",
    "GameCreated",
    "GameWon",
    "HandDealt",
    "HandScored",
    "Passed",
    "Resigned",
    "TilePlayed",
    "TrickWon",
    "WidowDeclined",
    "WidowExchanged",
]

Seat = int


@dataclass(frozen=True, slots=True)
class GameCreated:
    rules: Ruleset


@dataclass(frozen=True, slots=True)
class HandDealt:
    """``hands[seat]`` as dealt; ``rest`` is the widow (Moon) or the tiles out of play."""

    number: int
    dealer: Seat
    seed: bytes
    hands: tuple[TileSet, ...]
    rest: TileSet


@dataclass(frozen=True, slots=True)
class BidPlaced:
    seat: Seat
    bid: Bid


@dataclass(frozen=True, slots=True)
class Passed:
    seat: Seat


@dataclass(frozen=True, slots=True)
class AuctionWon:
    """The auction is over; ``declarer`` names trump and leads (the partner on a plunge or
    splash, otherwise the bidder)."""

    seat: Seat
    bid: Bid
    declarer: Seat


@dataclass(frozen=True, slots=True)
class AllPassed:
    """Everyone passed and the rules say redeal: the next dealer deals."""

    next_dealer: Seat


@dataclass(frozen=True, slots=True)
class WidowExchanged:
    seat: Seat
    taken: Tile
    discard: Tile


@dataclass(frozen=True, slots=True)
class WidowDeclined:
    seat: Seat


@dataclass(frozen=True, slots=True)
class ContractDeclared:
    seat: Seat
    contract: Contract
    sitting_out: tuple[Seat, ...]
    """Seats that lay their tiles face down for this hand (the nello bidder's partners)."""


@dataclass(frozen=True, slots=True)
class TilePlayed:
    seat: Seat
    tile: Tile

    def __str__(self) -> str:
        return f"seat {self.seat} played {tile_name(self.tile)}"


@dataclass(frozen=True, slots=True)
class TrickWon:
    seat: Seat
    points: int
    """1 for the trick plus the count in it (Moon: 1)."""


@dataclass(frozen=True, slots=True)
class HandScored:
    """The hand is over. ``taken[team]`` is what each team took (42: points; Moon: tricks);
    ``changes[team]`` is added to the score (marks, or points)."""

    bidder: Seat
    bid: Bid
    made: bool
    taken: tuple[int, ...]
    changes: tuple[int, ...]
    scores: tuple[int, ...]
    """The scores after this hand."""


@dataclass(frozen=True, slots=True)
class GameWon:
    team: int
    seats: tuple[Seat, ...]


@dataclass(frozen=True, slots=True)
class ClockExpired:
    """The seat to act ran out of time (the command ``TimeOut``); what the ``policy`` makes of
    it follows: the events of the seat's lowest legal action (``auto_play``), or ``GameWon``
    for another team (``forfeit``). Changes nothing by itself."""

    seat: Seat
    policy: str


@dataclass(frozen=True, slots=True)
class Resigned:
    """The seat resigned (the command ``Resign``); the ``GameWon`` of another team follows."""

    seat: Seat


@dataclass(frozen=True, slots=True)
class GameAbandoned:
    """The server closed the game with no winner (the command ``Abandon``): the last event
    of such a game."""

    reason: str


Event = (
    GameCreated | HandDealt | BidPlaced | Passed | AuctionWon | AllPassed | WidowExchanged
    | WidowDeclined | ContractDeclared | TilePlayed | TrickWon | HandScored | GameWon
    | ClockExpired | Resigned | GameAbandoned
)
