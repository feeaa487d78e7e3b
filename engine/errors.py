"""Why the engine refuses something.

``RulesetError`` is a nonsense set of options. ``IllegalAction`` and its subclasses are a
command the rules do not allow now; each message quotes the command and the position.
"""

from __future__ import annotations

__all__ = [
    "BidNotAllowed",
    "BidTooLow",
    "GameOver",
    "IllegalAction",
    "IllegalContract",
    "IllegalDiscard",
    "InvalidCommand",
    "MustBid",
    "MustFollowSuit",
    "MustLeadTrump",
    "MustPlayNearestSeven",
    "NotYourTurn",
    "RulesetError",
    "TileNotInHand",
    "WrongPhase",
]


class RulesetError(ValueError):
    """An unknown preset or option, or options that do not go together."""


class IllegalAction(Exception):
    """A command the rules do not allow in this position."""


class InvalidCommand(IllegalAction):
    """A command that cannot mean anything here (a seat that is not at the table...)."""


class GameOver(IllegalAction):
    """The game has ended; nothing more can be done."""


class WrongPhase(IllegalAction):
    """Bidding during play, playing during the auction..."""


class NotYourTurn(IllegalAction):
    """Another seat is to act."""


class BidTooLow(IllegalAction):
    """A bid that does not beat the high bid (or is under the minimum)."""


class BidNotAllowed(IllegalAction):
    """A bid this ruleset, this auction or this hand does not allow."""


class MustBid(IllegalAction):
    """A forced dealer tried to pass."""


class IllegalDiscard(IllegalAction):
    """A widow exchange the rules do not allow."""


class IllegalContract(IllegalAction):
    """A trump or contract this seat may not declare."""


class TileNotInHand(IllegalAction):
    """A tile the seat does not hold."""


class MustFollowSuit(IllegalAction):
    """A tile played while holding one of the led suit."""


class MustLeadTrump(IllegalAction):
    """A non-trump first lead while the bidder holds a trump (option bidder_leads_trump)."""


class MustPlayNearestSeven(IllegalAction):
    """In sevens, a tile that is not among the nearest to 7 in the hand."""
