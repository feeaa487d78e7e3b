// Tiles drawn as dominoes with pips. Their numbers and names ("6-4", high end first) are the
// client package's (clients/typescript/src/tiles.ts).

import { high, low, tileName, type Tile } from "@boneyard/client";
import { h, svg, type Attrs } from "./dom";

export { high, isDouble, low, pipTotal, tileName, type Tile } from "@boneyard/client";

// Where the pips of 0..6 sit on a 3 x 3 grid of one half (column, row).
const PIPS: readonly (readonly [number, number])[][] = [
  [],
  [[1, 1]],
  [[0, 0], [2, 2]],
  [[0, 0], [1, 1], [2, 2]],
  [[0, 0], [2, 0], [0, 2], [2, 2]],
  [[0, 0], [2, 0], [1, 1], [0, 2], [2, 2]],
  [[0, 0], [2, 0], [0, 1], [2, 1], [0, 2], [2, 2]],
];

const faces = new Map<Tile, SVGElement>();

/** A tile's picture: made once per tile, then cloned (a table is redrawn many times). */
function face(tile: Tile): Node {
  let made = faces.get(tile);
  if (!made) {
    made = drawFace(tile);
    faces.set(tile, made);
  }
  return made.cloneNode(true);
}

function drawFace(tile: Tile): SVGElement {
  const dots: Node[] = [];
  for (const [half, pips] of [[0, high(tile)], [1, low(tile)]] as const) {
    for (const [x, y] of PIPS[pips]) {
      dots.push(svg("circle", { cx: half * 30 + 7 + x * 8, cy: 7 + y * 8, r: 2.6 }));
    }
  }
  return svg(
    "svg",
    { viewBox: "0 0 60 30", "aria-hidden": "true", focusable: "false" },
    svg("rect", { x: 0.5, y: 0.5, width: 59, height: 29, rx: 4, class: "tile-body" }),
    svg("line", { x1: 30, y1: 4, x2: 30, y2: 26, class: "tile-bar" }),
    ...dots,
  );
}

/** A face-up tile: a button when `onclick` is given (a legal choice), else a picture. Either
 * way its accessible name is the tile's ("6-4"), as a person reads it. */
export function tileElement(tile: Tile, attrs: Attrs = {}): HTMLElement {
  const label = tileName(tile);
  const cls = `tile${attrs.class ? ` ${attrs.class}` : ""}`;
  const data = { tile: label, ...attrs.data };
  if (attrs.onclick || attrs.disabled) {
    return h("button", { ...attrs, class: cls, type: "button", data, aria: { label } }, face(tile));
  }
  return h("span", { ...attrs, class: cls, role: "img", data, aria: { label } }, face(tile));
}

/** A face-down tile (another player's hand, a face-down trick). */
export function tileBack(label = "face-down tile"): HTMLElement {
  return h("span", { class: "tile back", role: "img", aria: { label } });
}
