"""The shuffle and the deal, reproducible from a seed in any language.

The shuffle is defined exactly so that anyone can re-deal a hand from its revealed seed:

1. The *deck* is the ruleset's tiles in ascending tile number (``0-0``=0, ``1-0``=1, ``1-1``=2,
   ``2-0``=3 ... ``6-6``=27; Moon leaves out ``1-0 2-0 3-0 4-0 5-0 6-0``, and ``0-0`` too
   when it plays without a widow).
2. A byte stream: ``SHA-256(seed || counter)`` for ``counter`` = 0, 1, 2 ... as a 4-byte
   big-endian number, each digest's 32 bytes in order.
3. Fisher-Yates: for ``i`` from ``len(deck) - 1`` down to 1, draw ``j`` uniformly in ``0..i``:
   take the next byte ``b`` of the stream; if ``b >= 256 - 256 % (i + 1)`` discard it and take
   the next; otherwise ``j = b % (i + 1)``. Swap ``deck[i]`` and ``deck[j]``.
4. Seat ``s`` (0, 1, ...) receives ``deck[s * k : (s + 1) * k]`` where ``k`` is the hand size;
   the tiles after the last hand are the widow (Moon) or lie out of play (Texas 42 with 3, 5
   or 6 players).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from boneyard.engine.tiles import Tile, TileSet, iter_tiles

__all__ = ["deal", "shuffle"]


def _bytes(seed: bytes) -> Iterator[int]:
    counter = 0
    while True:
        yield from hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
        counter += 1


_DECKS: dict[TileSet, list[Tile]] = {}
"""The decks of the tile sets dealt so far, in order (a game deals 28 tiles, or Moon's 22 or
21: a handful of sets)."""
_DECKS_MOST = 64


def shuffle(seed: bytes, tiles: TileSet) -> list[Tile]:
    """The deck of ``tiles`` shuffled by ``seed`` (steps 1-3 above)."""
    ordered = _DECKS.get(tiles)
    if ordered is None:
        if len(_DECKS) >= _DECKS_MOST:
            _DECKS.clear()
        ordered = _DECKS[tiles] = list(iter_tiles(tiles))
    deck = ordered.copy()
    stream = _bytes(seed)
    for i in range(len(deck) - 1, 0, -1):
        bound = i + 1
        limit = 256 - 256 % bound
        b = next(stream)
        while b >= limit:
            b = next(stream)
        j = b % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal(seed: bytes, tiles: TileSet, players: int, hand_size: int) -> tuple[tuple[TileSet, ...], TileSet]:
    """Each seat's hand and the tiles left over (step 4 above)."""
    deck = shuffle(seed, tiles)
    hands = tuple(
        sum(1 << t for t in deck[s * hand_size : (s + 1) * hand_size]) for s in range(players)
    )
    rest = sum(1 << t for t in deck[players * hand_size :])
    return hands, rest
