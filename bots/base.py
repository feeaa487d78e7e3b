"""What every strategy is, and helpers to read an engine view."""

from __future__ import annotations

import hashlib
import random
from typing import Protocol

from boneyard.engine import BidKind, SeatCommand, SeatView
from boneyard.engine.tiles import Tile, TileSet, iter_tiles

__all__ = ["BID_ORDER", "Strategy", "nothing_to_do", "tiles_in", "view_rng"]

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
