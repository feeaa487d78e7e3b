"""A bid: what a player offers to take.

Texas 42 bids are points (30..41), marks (1 mark = the all-tricks bid "42", 2 = "84" ...) and
the special bids plunge and splash (marks that hand trump to the partner). Moon bids are a
number of tricks (4..7; 3..7 or 5..7 by ``moon_min_bid``) or the moon (all 7, scoring 21), and
where ``moon_overcall`` is on the overcall over the moon (all 7, scoring 42). ``Bid.rank``
orders them: any mark bid is above any point bid, the moon above any number of tricks and the
overcall above the moon.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["Bid", "BidKind", "parse_bid"]


class BidKind(str, Enum):
    POINTS = "points"
    MARKS = "marks"
    PLUNGE = "plunge"
    SPLASH = "splash"
    TRICKS = "tricks"
    MOON = "moon"
    OVERCALL = "overcall"


_MARK_KINDS = (BidKind.MARKS, BidKind.PLUNGE, BidKind.SPLASH)
MOON_POINTS = 21
OVERCALL_POINTS = 42
_MOON_SHOTS = (BidKind.MOON, BidKind.OVERCALL)


@dataclass(frozen=True, slots=True)
class Bid:
    kind: BidKind
    amount: int
    """Points, marks or tricks; 21 for the moon."""

    @classmethod
    def points(cls, amount: int) -> Bid:
        return cls(BidKind.POINTS, amount)

    @classmethod
    def marks(cls, amount: int) -> Bid:
        return cls(BidKind.MARKS, amount)

    @classmethod
    def plunge(cls, amount: int) -> Bid:
        return cls(BidKind.PLUNGE, amount)

    @classmethod
    def splash(cls, amount: int) -> Bid:
        return cls(BidKind.SPLASH, amount)

    @classmethod
    def tricks(cls, amount: int) -> Bid:
        return cls(BidKind.TRICKS, amount)

    @classmethod
    def moon(cls) -> Bid:
        return cls(BidKind.MOON, MOON_POINTS)

    @classmethod
    def overcall(cls) -> Bid:
        return cls(BidKind.OVERCALL, OVERCALL_POINTS)

    @property
    def shoots_the_moon(self) -> bool:
        """The moon or the overcall: every trick, scored plus or minus the bid."""
        return self.kind in _MOON_SHOTS

    @property
    def is_mark_bid(self) -> bool:
        """A bid of marks (plunge and splash included): it needs every trick."""
        return self.kind in _MARK_KINDS

    @property
    def marks_worth(self) -> int:
        """Marks won or lost on it: 1 for a point bid."""
        return self.amount if self.kind in _MARK_KINDS else 1

    @property
    def rank(self) -> int:
        """Higher beats lower."""
        if self.kind in _MARK_KINDS:
            return 1000 * self.amount
        if self.kind is BidKind.MOON:
            return 1000
        if self.kind is BidKind.OVERCALL:
            return 2000
        return self.amount

    def __str__(self) -> str:
        if self.kind is BidKind.POINTS or self.kind is BidKind.TRICKS:
            return str(self.amount)
        if self.kind is BidKind.MARKS:
            return str(42 * self.amount)
        if self.kind is BidKind.MOON:
            return "moon"
        if self.kind is BidKind.OVERCALL:
            return "overcall"
        return f"{self.kind.value} {self.amount}"


def parse_bid(text: str, moon: bool = False) -> Bid:
    """Read a bid as players say it: ``30``, ``42``, ``84``, ``2 marks``, ``plunge 4``,
    ``splash 2``; in Moon ``5``, ``moon`` or ``overcall`` (also ``42``)."""
    words = text.strip().lower().split()
    if not words:
        raise ValueError("an empty bid")
    if moon:
        if words == ["moon"] or words == ["21"]:
            return Bid.moon()
        if words == ["overcall"] or words == ["42"]:
            return Bid.overcall()
        if len(words) == 1 and words[0].isdigit():
            return Bid.tricks(int(words[0]))
        raise ValueError(f"not a Moon bid: {text!r} (4..7, moon or overcall)")
    if len(words) == 2 and words[1].isdigit() and words[0] in ("plunge", "splash"):
        return Bid(BidKind(words[0]), int(words[1]))
    if len(words) == 2 and words[0].isdigit() and words[1] in ("mark", "marks"):
        return Bid.marks(int(words[0]))
    if len(words) == 1 and words[0].isdigit():
        n = int(words[0])
        if n >= 42 and n % 42 == 0:
            return Bid.marks(n // 42)
        return Bid.points(n)
    raise ValueError(f"not a bid: {text!r} (30..41, 42, 84, 2 marks, plunge 4 ...)")
