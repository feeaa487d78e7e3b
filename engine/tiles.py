"""Tiles of the double-six set as small ints, and sets of tiles as bitmasks.

A tile is the int ``high * (high + 1) // 2 + low`` for pips ``high >= low``: ``0-0`` is 0,
``1-0`` is 1, ``1-1`` is 2, ``2-0`` is 3 ... ``6-6`` is 27. A set of tiles (a hand, the
tiles played, the boneyard) is an int whose bit ``t`` is set when tile ``t`` is in it.
Players write a tile high end first (``6-4``, ``5-5``); ``tile_name`` prints that and
``parse_tile`` reads it back (either order, so ``4-6`` is ``6-4``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = [
    "ALL_TILES",
    "COUNT",
    "DOUBLE_TILES",
    "FULL_SET",
    "HIGH",
    "LOW",
    "PIPS",
    "Tile",
    "TileSet",
    "count_of",
    "format_tiles",
    "iter_tiles",
    "parse_tile",
    "parse_tiles",
    "tile",
    "tile_name",
    "tileset",
]

Tile = int
TileSet = int

HIGH: tuple[int, ...] = tuple(h for h in range(7) for _ in range(h + 1))
LOW: tuple[int, ...] = tuple(lo for h in range(7) for lo in range(h + 1))
PIPS: tuple[int, ...] = tuple(h + lo for h, lo in zip(HIGH, LOW, strict=True))
ALL_TILES: tuple[Tile, ...] = tuple(range(28))
FULL_SET: TileSet = (1 << 28) - 1
DOUBLE_TILES: TileSet = sum(1 << t for t in ALL_TILES if HIGH[t] == LOW[t])

_COUNT_TILES = {(5, 0): 5, (4, 1): 5, (3, 2): 5, (6, 4): 10, (5, 5): 10}
COUNT: tuple[int, ...] = tuple(_COUNT_TILES.get((HIGH[t], LOW[t]), 0) for t in ALL_TILES)
"""Count points of each tile: ``5-0``, ``4-1``, ``3-2`` are worth 5, ``6-4`` and ``5-5`` 10."""
_FIVES = sum(1 << t for t in ALL_TILES if COUNT[t] == 5)
_TENS = sum(1 << t for t in ALL_TILES if COUNT[t] == 10)

_NAMES: tuple[str, ...] = tuple(f"{HIGH[t]}-{LOW[t]}" for t in ALL_TILES)


def tile(high: int, low: int) -> Tile:
    """The tile with these two ends, in either order."""
    if not (0 <= high <= 6 and 0 <= low <= 6):
        raise ValueError(f"a double-six tile has ends 0..6, not {high}-{low}")
    if low > high:
        high, low = low, high
    return high * (high + 1) // 2 + low


def tile_name(t: Tile) -> str:
    """The tile as players write it, high end first: ``6-4``."""
    return _NAMES[t]


def parse_tile(text: str) -> Tile:
    """Read a tile written ``6-4`` (or ``4-6``, ``6:4``, ``64``)."""
    s = text.strip().replace(":", "-").replace("/", "-").replace("|", "-")
    if "-" in s:
        parts = s.split("-")
    elif len(s) == 2:
        parts = [s[0], s[1]]
    else:
        parts = []
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"not a tile: {text!r} (write it like 6-4)")
    high, low = int(parts[0]), int(parts[1])
    if not (0 <= high <= 6 and 0 <= low <= 6):
        raise ValueError(f"not a double-six tile: {text!r} (ends are 0..6)")
    return tile(high, low)


def iter_tiles(tiles: TileSet) -> Iterator[Tile]:
    """The tiles of a set, lowest first."""
    while tiles:
        low_bit = tiles & -tiles
        yield low_bit.bit_length() - 1
        tiles ^= low_bit


def tileset(tiles: Iterable[Tile]) -> TileSet:
    """The set of these tiles."""
    mask = 0
    for t in tiles:
        mask |= 1 << t
    return mask


def parse_tiles(text: str) -> TileSet:
    """Read tiles separated by spaces or commas: ``"6-4 5-5 3-0"``."""
    return tileset(parse_tile(word) for word in text.replace(",", " ").split())


def format_tiles(tiles: TileSet) -> str:
    """The tiles of a set as players write them, highest first: ``"6-4 5-5 3-0"``."""
    return " ".join(_NAMES[t] for t in sorted(iter_tiles(tiles), reverse=True))


def count_of(tiles: TileSet) -> int:
    """Count points in a set of tiles."""
    return 5 * (tiles & _FIVES).bit_count() + 10 * (tiles & _TENS).bit_count()
