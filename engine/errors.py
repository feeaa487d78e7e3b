"""Why the engine refuses something.

``RulesetError`` is a nonsense set of options. ``IllegalAction`` and its subclasses are a
command the rules do not allow now; each message quotes the command and the position.

Each class names its ``reason``: the stable name a program switches on (the API sends it as the
``ErrorInfo.reason`` of the refusal, ``ErrorReason`` in proto/boneyard/v1/errors.proto). An
``IllegalAction`` may carry ``details`` (``seat``, ``tile`` ...), the facts its message quotes, as
strings a program can read without parsing the message.
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


from typing import ClassVar


class RulesetError(ValueError):
    """An unknown preset or option, or options that do not go together."""

    reason: ClassVar[str] = "BAD_RULESET"


class IllegalAction(Exception):
    """A command the rules do not allow in this position."""

    reason: ClassVar[str] = "ILLEGAL_ACTION"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.details: dict[str, str] = {name: str(value) for name, value in details.items()}


class InvalidCommand(IllegalAction):
    """A command that cannot mean anything here (a seat that is not at the table...)."""

    reason = "INVALID_COMMAND"


class GameOver(IllegalAction):
    """The game has ended; nothing more can be done."""

    reason = "GAME_OVER"


class WrongPhase(IllegalAction):
    """Bidding during play, playing during the auction..."""

    reason = "WRONG_PHASE"


class NotYourTurn(IllegalAction):
    """Another seat is to act."""

    reason = "NOT_YOUR_TURN"


class BidTooLow(IllegalAction):
    """A bid that does not beat the high bid (or is under the minimum)."""

    reason = "BID_TOO_LOW"


class BidNotAllowed(IllegalAction):
    """A bid this ruleset, this auction or this hand does not allow."""

    reason = "BID_NOT_ALLOWED"


class MustBid(IllegalAction):
    """A forced dealer tried to pass."""

    reason = "MUST_BID"


class IllegalDiscard(IllegalAction):
    """A widow exchange the rules do not allow."""

    reason = "ILLEGAL_DISCARD"


class IllegalContract(IllegalAction):
    """A trump or contract this seat may not declare."""

    reason = "ILLEGAL_CONTRACT"


class TileNotInHand(IllegalAction):
    """A tile the seat does not hold."""

    reason = "TILE_NOT_IN_HAND"


class MustFollowSuit(IllegalAction):
    """A tile played while holding one of the led suit."""

    reason = "MUST_FOLLOW_SUIT"


class MustLeadTrump(IllegalAction):
    """A non-trump first lead while the bidder holds a trump (option bidder_leads_trump)."""

    reason = "MUST_LEAD_TRUMP"


class MustPlayNearestSeven(IllegalAction):
    """In sevens, a tile that is not among the nearest to 7 in the hand."""

    reason = "MUST_PLAY_NEAREST_SEVEN"
