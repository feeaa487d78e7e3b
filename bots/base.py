"""What every strategy is, and helpers to read an engine view."""

from __future__ import annotations

import hashlib
import random
from typing import Protocol

from boneyard.engine import Bid, BidKind, Ruleset, SeatCommand, SeatView, trump_menu
from boneyard.engine.bidding import forced_bid
from boneyard.engine.tiles import Tile, TileSet, iter_tiles

__all__ = [
    "BID_ORDER",
    "Strategy",
    "may_be_overcalled",
    "moon_bid_worth",
    "nothing_to_do",
    "stuck_dealer_bid",
    "tiles_in",
    "trump_menu",
    "view_rng",
]

BID_ORDER: dict[BidKind, int] = {
    BidKind.POINTS: 1,
    BidKind.MARKS: 2,
    BidKind.PLUNGE: 3,
    BidKind.SPLASH: 4,
    BidKind.TRICKS: 5,
    BidKind.MOON: 6,
    BidKind.OVERCALL: 7,
}
"""The kinds of bid in the order the API numbers them: the cheapest bid of a forced auction is
the least by ``(BID_ORDER[kind], amount)``, as the strategies chose when they read the API."""


def stuck_dealer_bid(view: SeatView) -> Bid | None:
    """The bid a stuck dealer is given for passing (``all_pass=forced_dealer_any_bid``, every
    other seat passed), or ``None`` when this seat is not stuck: passing then is no escape, so
    it is worth what bidding the minimum is worth."""
    rules = view.rules
    stuck = (
        rules.all_pass == "forced_dealer_any_bid"
        and view.high_bid is None
        and len(view.bids) == view.players - 1
    )
    return forced_bid(rules) if stuck else None


def moon_bid_worth(rules: Ruleset, bid: Bid, p: float) -> float:
    """The expected score of a Moon bid made with chance ``p``: the bid won or lost. With
    ``missed_moon_loses_game`` a set moon (or overcall) loses the game as well, counted as a
    game's points more: shooting is riskier, so the bots shoot only with a surer hand."""
    if bid.shoots_the_moon and rules.missed_moon_loses_game:
        return bid.amount * p - (bid.amount + rules.points_to_win) * (1 - p)
    return bid.amount * (2 * p - 1)


def may_be_overcalled(view: SeatView) -> bool:
    """With ``moon_overcall``: whether a seat may still bid after a moon from this seat (one
    round: a seat that has not bid yet; going round: one that has not passed). The moon then
    no longer ends the auction, and the hand may be taken from it."""
    if not view.rules.moon_overcall:
        return False
    if view.rules.auction_goes_round:
        out = {s for s, bid in view.bids if bid is None}
    else:
        out = {s for s, _ in view.bids}
    return any(s != view.seat and s not in out for s in range(view.players))


class Strategy(Protocol):
    name: str

    def choose(self, view: SeatView) -> SeatCommand:
        """One of ``view.legal``: a function of the view (and the strategy's seed) alone."""
        ...


def view_rng(seed: int, view: SeatView) -> random.Random:
    """A generator seeded by the strategy's seed and the view itself, so that the same view
    always gets the same choice: a bot that reconnects chooses as it did before, and a house
    bot on the server chooses as the same strategy would in a client. The view's ``repr`` is
    its canonical text (frozen values of ints, strings and tuples, printed the same in every
    process)."""
    digest = hashlib.sha256(seed.to_bytes(8, "big", signed=True) + repr(view).encode())
    return random.Random(digest.digest())


def tiles_in(mask: TileSet) -> list[Tile]:
    """The tiles of a set, lowest first."""
    return list(iter_tiles(mask))


def nothing_to_do(view: SeatView) -> ValueError:
    """The error of a strategy asked to choose with no legal action."""
    return ValueError(f"seat {view.seat} has nothing to do (phase {view.phase.value})")
