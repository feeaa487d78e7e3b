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

import functools
import hashlib

from boneyard.engine.tiles import Tile, TileSet, iter_tiles

__all__ = ["deal", "shuffle"]


def _block(seed: bytes, counter: int) -> bytes:
    """Bytes ``32 * counter`` .. ``32 * counter + 31`` of the stream."""
    return hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()


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
    # The stream read by index, a block at a time: a deal of 28 tiles takes 27 bytes and a few
    # discarded, so the first block almost always serves (a generator took a call a byte).
    stream = _block(seed, 0)
    at = 0
    for i, bound, limit in _steps(len(deck)):
        while True:
            try:
                b = stream[at]
            except IndexError:
                stream += _block(seed, len(stream) // 32)
                b = stream[at]
            at += 1
            if b < limit:
                break
        j = b % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@functools.cache
def _steps(size: int) -> tuple[tuple[int, int, int], ...]:
    """Fisher-Yates' steps for a deck of ``size``: ``i``, the draw's bound ``i + 1`` and the
    least byte discarded (``256 - 256 % (i + 1)``)."""
    return tuple((i, i + 1, 256 - 256 % (i + 1)) for i in range(size - 1, 0, -1))


def deal(seed: bytes, tiles: TileSet, players: int, hand_size: int) -> tuple[tuple[TileSet, ...], TileSet]:
    """Each seat's hand and the tiles left over (step 4 above)."""
    deck = list(map(_BIT.__getitem__, shuffle(seed, tiles)))
    cut = players * hand_size
    hands = tuple(sum(deck[start : start + hand_size]) for start in range(0, cut, hand_size))
    return hands, sum(deck[cut:])


_BIT = tuple(1 << t for t in range(28))
