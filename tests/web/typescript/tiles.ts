// Tiles named by the client package: every tile's name and suit names, and what it reads of
// the texts given as arguments (null where it reads no tile).
//
//   node tiles.js TEXT...
//
// Prints `report {"names": [...], "suits": [...], "parsed": {...}}`.

import { parseTile, suitName, tileName, TILES } from "@boneyard/client";

const texts = process.argv.slice(2);
const report = {
  names: Array.from({ length: TILES }, (_, tile) => tileName(tile)),
  suits: Array.from({ length: 7 }, (_, suit) => suitName(suit)),
  parsed: Object.fromEntries(texts.map((text) => [text, parseTile(text) ?? null])),
};
console.log(`report ${JSON.stringify(report)}`);
