"""Boneyard's rules engine: Texas 42 and Moon as a pure decider.

    >>> from engine import ruleset, start, replay, decide, evolve, Deal
    >>> state = replay(start(ruleset("texas42")))
    >>> for event in decide(state, Deal(b"seed")):
    ...     state = evolve(state, event)

No I/O, no clock, no randomness: the deal takes a seed (see ``engine.deal``).
"""

from engine.bids import Bid, BidKind, parse_bid
from engine.commands import (
    Command,
    Deal,
    DeclareContract,
    DeclineWidow,
    ExchangeWidow,
    Pass,
    PlaceBid,
    PlayTile,
    SeatCommand,
)
from engine.contracts import DOUBLES, FOLLOW_ME, Contract, ContractKind, suit_table, trump_name
from engine.deal import deal, shuffle
from engine.decider import decide, evolve, legal_actions, legal_contracts, replay, start
from engine.errors import (
    BidNotAllowed,
    BidTooLow,
    GameOver,
    IllegalAction,
    IllegalContract,
    IllegalDiscard,
    InvalidCommand,
    MustBid,
    MustFollowSuit,
    MustLeadTrump,
    MustPlayNearestSeven,
    NotYourTurn,
    RulesetError,
    TileNotInHand,
    WrongPhase,
)
from engine.events import (
    AllPassed,
    AuctionWon,
    BidPlaced,
    ContractDeclared,
    Event,
    GameCreated,
    GameWon,
    HandDealt,
    HandScored,
    Passed,
    TilePlayed,
    TrickWon,
    WidowDeclined,
    WidowExchanged,
)
from engine.rulesets import PRESETS, Ruleset, option_names, preset_names, ruleset
from engine.state import GameState, HandState, Phase, Trick
from engine.tiles import (
    Tile,
    TileSet,
    format_tiles,
    iter_tiles,
    parse_tile,
    parse_tiles,
    tile,
    tile_name,
    tileset,
)
from engine.views import SPECTATOR, SeatView, TrickView, view

__all__ = [
    "DOUBLES", "FOLLOW_ME", "PRESETS", "SPECTATOR",
    "AllPassed", "AuctionWon", "Bid", "BidKind", "BidNotAllowed", "BidPlaced", "BidTooLow",
    "Command", "Contract", "ContractDeclared", "ContractKind", "Deal", "DeclareContract",
    "DeclineWidow", "Event", "ExchangeWidow", "GameCreated", "GameOver", "GameState", "GameWon",
    "HandDealt", "HandScored", "HandState", "IllegalAction", "IllegalContract", "IllegalDiscard",
    "InvalidCommand", "MustBid", "MustFollowSuit", "MustLeadTrump", "MustPlayNearestSeven",
    "NotYourTurn", "Pass", "Passed", "Phase", "PlaceBid", "PlayTile", "Ruleset", "RulesetError",
    "SeatCommand", "SeatView", "Tile", "TilePlayed", "TileNotInHand", "TileSet", "Trick",
    "TrickView", "TrickWon", "WidowDeclined", "WidowExchanged", "WrongPhase",
    "deal", "decide", "evolve", "format_tiles", "iter_tiles", "legal_actions", "legal_contracts",
    "option_names", "parse_bid", "parse_tile", "parse_tiles", "preset_names", "replay", "ruleset",
    "shuffle", "start", "suit_table", "tile", "tile_name", "tileset", "trump_name", "view",
]
