// Tiles as the API numbers them and as players name them. A tile is a small integer
// (rules.proto: tile = high * (high + 1) / 2 + low, so 0 is 0-0 and 27 is 6-6) and is written
// high end first: "6-4". A suit is a number of pips, named as players say it: "sixes".

/** A tile as the API sends it (0..27 for the double-six set). */
export type Tile = number;

/** The number of tiles of a double-six set. */
export const TILES = 28;

const SUITS = ["blanks", "ones", "twos", "threes", "fours", "fives", "sixes"] as const;

/** The tile of two ends, in either order: `tileOf(6, 4) === tileOf(4, 6)`. */
export function tileOf(a: number, b: number): Tile {
  const [top, bottom] = a >= b ? [a, b] : [b, a];
  return (top * (top + 1)) / 2 + bottom;
}

/** The higher end of a tile. */
export function high(tile: Tile): number {
  let top = 0;
  while (((top + 1) * (top + 2)) / 2 <= tile) top++;
  return top;
}

/** The lower end of a tile. */
export function low(tile: Tile): number {
  const top = high(tile);
  return tile - (top * (top + 1)) / 2;
}

export function isDouble(tile: Tile): boolean {
  return high(tile) === low(tile);
}

/** The pips on both ends (5-5 and 6-4 are the count tiles of 10, 5-0 4-1 3-2 of 5). */
export function pipTotal(tile: Tile): number {
  return high(tile) + low(tile);
}

/** "6-4": the higher end first. */
export function tileName(tile: Tile): string {
  return `${high(tile)}-${low(tile)}`;
}

/** The tile a player names: "6-4", "4-6", "6:4", "6/4", "6|4" or "64" (either end first), as
 * the terminal client reads it; `undefined` for anything else, an end above 6 included. */
export function parseTile(text: string): Tile | undefined {
  const ends = /^\s*([0-6])(?:\s*[-:/|]\s*|)([0-6])\s*$/.exec(text);
  return ends ? tileOf(Number(ends[1]), Number(ends[2])) : undefined;
}

/** "fives" for 5. */
export function suitName(suit: number): string {
  return SUITS[suit] ?? "?";
}
