"""A bid: what a player offers to take.

Texas 42 bids are points (30..41), marks (1 mark = the all-tricks bid "42", 2 = "84" ...) and
the special bids plunge and splash (marks that hand trump to the partner). Moon bids are a
number of tricks (4..7; 3..7 or 5..7 by ``moon_min_bid``) or the moon (all 7, scoring 21), and
where ``moon_overcall`` is on the overcall over the moon (all 7, scoring 42). ``Bid.rank``
orders them: any mark bid is above any point bid, the moon above any number of tricks and the
overcall above the moon.

A bid prints as players write it and as the notation records it (docs/notation.md):
``bid_text(bid, rules)`` writes it for a table, ``str(bid)`` for a table of four, and
``parse_bid(text, rules)`` reads it back, in any of its common spellings:
``parse_bid(bid_text(bid, rules), rules) == bid``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from boneyard.engine.rulesets import PRESETS, TEXAS42, Ruleset

__all__ = ["Bid", "BidKind", "bid_text", "parse_bid"]


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
        """The bid as written at a table of four (``bid_text``): ``30``, ``84``, ``moon``."""
        return bid_text(self)


_STANDARD = PRESETS[TEXAS42]
"""The table a bid is written for when no ruleset is given: Texas 42 with four players."""


def _marks_as_multiples_of_42(rules: Ruleset) -> bool:
    """Texas 42 at a table of four, where no point bid reaches 42: there 42, 84, 126 ... are
    the mark bids. At other tables 42 may be a point bid (three players hold 9 tiles each, so
    the points run to 43), and marks are written ``1 mark``, ``2 marks``."""
    return rules.players == 4 and not rules.is_moon


def bid_text(bid: Bid, rules: Ruleset | None = None) -> str:
    """A bid as players write it and the notation records it: ``30``; marks ``84`` at a table
    of four and ``2 marks`` (``1 mark``) at other tables; ``plunge 4``, ``splash 2``; Moon ``5``,
    ``moon`` or ``overcall`` (``moon_overcall``: 42 over the moon). ``rules``: the table's
    (``None``: Texas 42 with four players)."""
    if bid.kind is BidKind.MARKS:
        if _marks_as_multiples_of_42(rules or _STANDARD):
            return str(42 * bid.amount)
        return f"{bid.amount} mark{'s' if bid.amount != 1 else ''}"
    if bid.kind is BidKind.MOON:
        return "moon"
    if bid.kind is BidKind.OVERCALL:
        return "overcall"
    if bid.kind is BidKind.PLUNGE or bid.kind is BidKind.SPLASH:
        return f"{bid.kind.value} {bid.amount}"
    return str(bid.amount)


_MOON_WORDS = (["moon"], ["shoot", "the", "moon"], ["shoot"], ["21"])
_OVERCALL_WORDS = (
    ["overcall"], ["42"], ["shoot", "for", "42"], ["shoot", "the", "moon", "for", "42"],
    ["overcall", "42"],
)


def parse_bid(text: str, rules: Ruleset | None = None) -> Bid:
    """Read a bid at a table of ``rules`` (``None``: Texas 42 with four players) in any of its
    common spellings: what ``bid_text`` writes, and ``1 mark`` at any table, ``plunge 4 marks``;
    in Moon ``5 tricks``, ``shoot the moon``, ``21`` (the moon), ``42`` and ``shoot for 42`` (the
    overcall). Whether the bid is legal now is the rules' to say; a text that is no bid at this
    table is a ``ValueError`` that quotes it and says what a bid is."""
    rules = rules or _STANDARD
    words = text.lower().replace("-", " ").split()
    if not words:
        raise ValueError("an empty bid")
    if rules.is_moon:
        if words in _MOON_WORDS:
            return Bid.moon()
        # 42 is never a number of tricks, so it is the overcall whatever the table plays; the
        # rules refuse it where moon_overcall is off.
        if words in _OVERCALL_WORDS:
            return Bid.overcall()
        if words[0].isdigit() and words[1:] in ([], ["tricks"], ["trick"]):
            return Bid.tricks(int(words[0]))
        lowest = rules.moon_min_bid
        also = ", moon or overcall" if rules.moon_overcall else ", or moon"
        raise ValueError(f"not a Moon bid: {text!r} (a number of tricks {lowest}..7{also})")
    special = words[0] in ("plunge", "splash")
    if special and len(words) > 1 and words[1].isdigit() and words[2:] in ([], ["marks"]):
        return Bid(BidKind(words[0]), int(words[1]))
    if len(words) == 2 and words[0].isdigit() and words[1] in ("mark", "marks"):
        return Bid.marks(int(words[0]))
    if len(words) == 1 and words[0].isdigit():
        n = int(words[0])
        if n < rules.all_tricks_points:
            return Bid.points(n)
        if n % 42 == 0 and _marks_as_multiples_of_42(rules):
            return Bid.marks(n // 42)
        raise ValueError(
            f"not a bid at this table: {text!r} (points {rules.min_bid}.."
            f"{rules.all_tricks_points - 1}, or marks as '2 marks')"
        )
    raise ValueError(
        f"not a bid: {text!r} (a number of points like 30, marks like 84 or '2 marks', "
        f"'plunge 4', 'splash 2', or pass)"
    )
