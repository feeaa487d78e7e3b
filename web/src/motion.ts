// The table's motion, drawn over a page that is redrawn whole from each view (FLIP: the First
// places are read before a draw, the Last after it, and the Web Animations API plays the way
// between): a played tile glides from its seat, or from the hand it left, to its place in the
// trick; a trick that leaves the table is gathered toward its winner's seat; the tiles left in
// a hand close up. Decoration only: the page is the new state the moment it is drawn (a tile
// in the trick is there, a button is there), and the motion plays over it for a quarter of a
// second. A tile still gliding when the next draw comes is that draw's tile: the element drawn
// before, with its motion, takes the new one's place (the same markup), so a glide goes on
// through draws without a new motion each time (which cost the page more than it showed in a
// game moving quicker than the motion); a gathered trick is a copy over the page, gone when its
// motion ends. When the table is drawn again and again (more than RUSH_DRAWS draws within
// RUSH_MS: bots, or a spectator of a quick game), nothing moves until it calms down: motion that
// plays over a page redrawn every few milliseconds holds up the page's reading of the stream
// (bench-browser measured it) and shows nothing a person could follow. With
// prefers-reduced-motion: reduce, nothing moves.

/** How long a tile takes to reach the trick, to be gathered, and for a hand to close up. */
export const GLIDE_MS = 240;
export const GATHER_MS = 260;
const CLOSE_UP_MS = 160;
/** Tiles played together (the bots' plays of one draw) start one after another. */
const STAGGER_MS = 110;
const EASE = "cubic-bezier(0.2, 0.7, 0.2, 1)";
const RUSH_DRAWS = 6;
const RUSH_MS = 300;
/** When the table was drawn lately (performance.now()). */
let draws: number[] = [];

/** What the table looked like just before a draw. */
export interface Before {
  /** The plays on the table (`data-play`), and the elements of those still gliding. */
  plays: Set<string>;
  gliding: Map<string, HTMLElement>;
  /** The tricks shown (`data-trick`) and their winner, tiles and where they were. */
  tricks: Map<string, { winner: string | undefined; tiles: { tile: Element; rect: DOMRect }[] }>;
  /** The own hand's tiles by name, where they were, in order. */
  hand: Map<string, DOMRect>;
  handOrder: string;
  /** The hand (deal) shown, so that nothing is gathered across deals. */
  deal: string | undefined;
  /** Where the felt and the hand were: a place read before is moved by as much as its table or
   * hand moved in the page (a result or a refusal drawn above them), so that the motion is
   * about the table, not about the page's layout. */
  felt?: DOMRect;
  handBox?: DOMRect;
}

export function reducedMotion(): boolean {
  return window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
}

function tileOf(played: Element): HTMLElement | null {
  return played.querySelector<HTMLElement>(".tile");
}

/** Read the table's places before a draw. */
export function capture(root: ParentNode): Before {
  const plays = new Set<string>();
  const gliding = new Map<string, HTMLElement>();
  for (const played of root.querySelectorAll<HTMLElement>(".felt .played[data-play]")) {
    const key = played.dataset.play ?? "";
    plays.add(key);
    if (tileOf(played)?.getAnimations().some((a) => a.playState === "running")) gliding.set(key, played);
  }
  const tricks = new Map<string, { winner: string | undefined; tiles: { tile: Element; rect: DOMRect }[] }>();
  for (const trick of root.querySelectorAll<HTMLElement>(".felt .trick.done[data-trick]")) {
    const tiles = [...trick.querySelectorAll<HTMLElement>(".played .tile")].map((tile) => ({ tile, rect: tile.getBoundingClientRect() }));
    tricks.set(trick.dataset.trick ?? "", { winner: trick.dataset.winner, tiles });
  }
  const hand = new Map<string, DOMRect>();
  for (const tile of root.querySelectorAll<HTMLElement>(".hand [data-tile]")) hand.set(tile.dataset.tile ?? "", tile.getBoundingClientRect());
  const deal = root.querySelector<HTMLElement>(".table-view")?.dataset.deal;
  const felt = root.querySelector(".felt")?.getBoundingClientRect();
  const handBox = root.querySelector(".hand")?.getBoundingClientRect();
  return { plays, gliding, tricks, hand, handOrder: [...hand.keys()].join(" "), deal, felt, handBox };
}

/** `r` moved by as much as `box` moved from `was` to `now`. */
function moved(r: DOMRect, was: DOMRect | undefined, now: Element | null): DOMRect {
  if (!was || !now) return r;
  const at = now.getBoundingClientRect();
  return new DOMRect(r.left + at.left - was.left, r.top + at.top - was.top, r.width, r.height);
}

function centre(r: DOMRect): [number, number] {
  return [r.left + r.width / 2, r.top + r.height / 2];
}

/** The transform that puts an element drawn at `to` where `from` was: at its size when
 * `from` is a tile, small (a tile coming out of a hand) when it is a seat. */
function from(fromRect: DOMRect, to: DOMRect, size: "tile" | "seat" = "tile"): string {
  const [fx, fy] = centre(fromRect);
  const [tx, ty] = centre(to);
  const scale = size === "seat" ? 0.6 : to.width > 0 ? Math.min(1.5, Math.max(0.4, fromRect.width / to.width)) : 1;
  return `translate(${(fx - tx).toFixed(1)}px, ${(fy - ty).toFixed(1)}px) scale(${scale.toFixed(3)})`;
}

function seatRect(root: ParentNode, seat: string | undefined): DOMRect | undefined {
  if (seat === undefined) return undefined;
  return root.querySelector<HTMLElement>(`.felt .seat[data-seat="${CSS.escape(seat)}"]`)?.getBoundingClientRect();
}

/** Play the way from `seen` (read before the draw) to the table now drawn in `root`; `mySeat`
 * is the page's seat (its plays come from its hand). */
export function animate(root: ParentNode, seen: Before | undefined, mySeat: number | undefined): void {
  const now = performance.now();
  draws = [...draws.filter((t) => now - t < RUSH_MS), now];
  if (!seen || reducedMotion() || draws.length > RUSH_DRAWS) return;
  const view = root.querySelector<HTMLElement>(".table-view");
  const deal = view?.dataset.deal;
  if (!view || deal === undefined) return;
  const felt = root.querySelector(".felt");
  const hand = root.querySelector(".hand");
  const before: Before = {
    ...seen,
    tricks: new Map([...seen.tricks].map(([k, t]) => [k, { ...t, tiles: t.tiles.map((x) => ({ ...x, rect: moved(x.rect, seen.felt, felt) })) }])),
    hand: new Map([...seen.hand].map(([k, r]) => [k, moved(r, seen.handBox, hand)])),
  };
  glide(root, before, mySeat);
  if (before.deal === deal) gather(root, before);
  closeUp(root, before);
}

/** Tiles new on the table glide in from their seat, or from the hand; a tile still gliding
 * goes on (its element, drawn the same, is put back). */
function glide(root: ParentNode, before: Before, mySeat: number | undefined): void {
  const arriving: { tile: HTMLElement; start: DOMRect; size: "tile" | "seat" }[] = [];
  for (const played of root.querySelectorAll<HTMLElement>(".felt .played[data-play]")) {
    const tile = tileOf(played);
    if (!tile) continue;
    const key = played.dataset.play ?? "";
    if (before.plays.has(key)) {
      const still = before.gliding.get(key);
      if (still && still.outerHTML === played.outerHTML) played.replaceWith(still);
      continue;
    }
    const seat = played.dataset.seat;
    const name = tile.dataset.tile;
    const inHand = seat !== undefined && Number(seat) === mySeat && name ? before.hand.get(name) : undefined;
    const start = inHand ?? seatRect(root, seat);
    if (start) arriving.push({ tile, start, size: inHand ? "tile" : "seat" });
  }
  arriving.forEach(({ tile, start, size }, i) => {
    tile.animate([{ transform: from(start, tile.getBoundingClientRect(), size) }, { transform: "none" }], {
      duration: GLIDE_MS,
      delay: i * STAGGER_MS,
      easing: EASE,
      fill: "backwards",
    });
  });
}

/** A trick shown before and gone now is gathered toward its winner: copies of its tiles, over
 * the page, slide to the winner's seat and fade. */
function gather(root: ParentNode, before: Before): void {
  const shown = new Set([...root.querySelectorAll<HTMLElement>(".felt .trick[data-trick]")].map((t) => t.dataset.trick));
  for (const [key, trick] of before.tricks) {
    if (shown.has(key)) continue;
    const target = seatRect(root, trick.winner);
    if (!target) continue;
    const [tx, ty] = centre(target);
    for (const { tile, rect } of trick.tiles) {
      const ghost = tile.cloneNode(true) as HTMLElement;
      ghost.classList.add("gathering");
      if (trick.winner !== undefined) ghost.dataset.to = trick.winner;
      ghost.setAttribute("aria-hidden", "true");
      ghost.removeAttribute("role");
      ghost.removeAttribute("aria-label");
      Object.assign(ghost.style, {
        position: "fixed", left: `${rect.left}px`, top: `${rect.top}px`, width: `${rect.width}px`, height: `${rect.height}px`, margin: "0",
      });
      document.body.appendChild(ghost);
      const [cx, cy] = centre(rect);
      const motion = ghost.animate(
        [
          { transform: "none", opacity: 1 },
          { transform: `translate(${(tx - cx).toFixed(1)}px, ${(ty - cy).toFixed(1)}px) scale(0.45)`, opacity: 0 },
        ],
        { duration: GATHER_MS, easing: "ease-in", fill: "forwards" },
      );
      motion.finished.then(() => ghost.remove(), () => ghost.remove());
    }
  }
}

/** The tiles left in the hand close up where a tile left it (or move to their new suit). */
function closeUp(root: ParentNode, before: Before): void {
  const tiles = [...root.querySelectorAll<HTMLElement>(".hand [data-tile]")];
  const order = tiles.map((t) => t.dataset.tile).join(" ");
  if (order === before.handOrder || !before.handOrder) return;
  for (const tile of tiles) {
    const was = before.hand.get(tile.dataset.tile ?? "");
    if (!was) continue;
    const now = tile.getBoundingClientRect();
    const dx = was.left - now.left;
    const dy = was.top - now.top;
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
    tile.animate([{ transform: `translate(${dx.toFixed(1)}px, ${dy.toFixed(1)}px)` }, { transform: "none" }], { duration: CLOSE_UP_MS, easing: EASE });
  }
}

/** Gathered tricks still in flight, removed (a page left mid-gather). */
export function stopMotion(): void {
  draws = [];
  for (const ghost of document.querySelectorAll(".tile.gathering")) ghost.remove();
}
