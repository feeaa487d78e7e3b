// The table drawn from one SeatView: the seats around it with names, the trick in progress,
// the auction, trump, what each team took, the scores, whose turn, the clocks, and the seat's
// own hand with its legal choices. Everything shown comes from the view (and the game's
// summary for names and clocks); nothing is worked out from the rules here.

import { h } from "./dom";
import {
  type Action, AllPass, BidKind, type CompletedTrick, ContractKind, Phase, type Play, type Ruleset,
  type SeatView,
} from "@boneyard/client";
import { handBySuit } from "./hand";
import { tileBack, tileElement, type Tile } from "./tiles";
import { actionText, bidText, contractText, count, isMoon, phaseText, scoreText } from "./words";

export interface SeatInfo {
  name: string;
  occupied: boolean;
  /** Played by the server (a house bot) or an account's bot. */
  note?: string;
  /** With a clock: what is left of the seat's bank. */
  bankMs?: number;
}

export interface TableModel {
  view: SeatView;
  rules: Ruleset | undefined;
  seats: SeatInfo[];
  /** The replay shows every hand face up, by seat. */
  openHands?: Tile[][];
  /** With a clock: when the seat to act runs out of time (ms since the epoch). */
  deadline?: number;
  /** Choosing is possible (a seat's own view, no request in flight). */
  onAction?: (action: Action) => void;
  /** A trick won a moment ago, shown whole in the middle a little longer while the next one
   * has begun (the game page: bots play faster than a person reads); the rest of the table is
   * the view as it is. */
  heldTrick?: HeldTrick;
}

/** A completed trick of the view's hand and its number in the hand (from 0). */
export interface HeldTrick {
  index: number;
  trick: CompletedTrick;
}

/** "alice" / "seat 2" / "you". */
export function seatName(model: TableModel, seat: number): string {
  const info = model.seats[seat];
  const name = info?.name || `seat ${seat}`;
  return model.view.seat === seat ? `${name} (you)` : name;
}

function teamOf(view: SeatView, seat: number): number {
  return view.teams.findIndex((t) => t.seats.includes(seat));
}

/** "alice and bob" for a team. */
export function teamName(model: TableModel, team: number): string {
  const seats = model.view.teams[team]?.seats ?? [];
  return seats.map((s) => seatName(model, s)).join(" and ");
}

/** Where a seat (or its tile in the trick) sits around the table, as CSS variables the
 * stylesheet places it with on a wide screen (a narrow one lays the seats out in rows). */
function position(index: number, players: number, radius: number): string {
  // Clockwise on the screen from the bottom: bottom, left, top, right for four players.
  const angle = (2 * Math.PI * index) / players;
  const x = 50 - radius * Math.sin(angle);
  const y = 50 + radius * 0.9 * Math.cos(angle);
  return `--x:${x.toFixed(1)}%;--y:${y.toFixed(1)}%`;
}

function bottomSeat(view: SeatView): number {
  return view.seat ?? 0;
}

function auctionEntry(view: SeatView, seat: number): string | undefined {
  // The seat's latest word: an auction that goes round (Moon's auction_goes_round) hears a seat more than once.
  const entry = [...view.bids].reverse().find((b) => b.seat === seat);
  return entry === undefined ? undefined : entry.bid ? bidText(entry.bid) : "pass";
}

function seconds(ms: number): string {
  return ms >= 60000 ? `${Math.floor(ms / 60000)}:${String(Math.floor((ms % 60000) / 1000)).padStart(2, "0")}` : `${(ms / 1000).toFixed(1)} s`;
}

function seatPanel(model: TableModel, seat: number, index: number): HTMLElement {
  const view = model.view;
  const info = model.seats[seat];
  const you = view.seat === seat;
  const turn = view.turn === seat && view.phase !== Phase.GAME_OVER;
  const badges: (string | false)[] = [
    view.dealer === seat && (isMoon(model.rules) ? "deals" : "shakes"),
    view.bidder === seat && view.highBid !== undefined && `bid ${bidText(view.highBid)}`,
    view.declarer === seat && view.declarer !== view.bidder && "declares",
    view.sittingOut.includes(seat) && "sits out",
    turn && (you ? "your turn" : "to play"),
  ];
  // The seat's word in the auction, unless it is the high bid (shown above).
  const bid = view.phase === Phase.BIDDING && view.bidder !== seat ? auctionEntry(view, seat) : undefined;
  const open = model.openHands?.[seat];
  const size = view.handSizes[seat] ?? 0;
  const hand = you && !open
    ? null
    : open
      ? h("div", { class: "mini-hand" }, handBySuit(open, view.contract).flatMap((g) => g.tiles).map((t) => tileElement(t, { class: "small" })))
      // One picture for the whole hand: a screen reader hears "7 tiles, face down" once.
      : h("div", { class: "mini-hand", role: "img", aria: { label: `${count(size, "tile")}, face down` } }, Array.from({ length: size }, () => h("span", { class: "tile back", aria: { hidden: "true" } })));
  const clock = info?.bankMs !== undefined || (turn && model.deadline !== undefined)
    ? h(
        "div",
        { class: "clock" },
        turn && model.deadline !== undefined
          ? h("span", { class: "countdown", data: { deadline: model.deadline } }, seconds(Math.max(0, model.deadline - Date.now())))
          : null,
        info?.bankMs !== undefined ? h("span", { class: "bank" }, ` bank ${seconds(info.bankMs)}`) : null,
      )
    : null;
  return h(
    "section",
    {
      class: `seat pos-${index}${turn ? " turn" : ""}${you ? " you" : ""}${view.sittingOut.includes(seat) ? " out" : ""}`,
      style: position(index, view.players, 40),
      aria: { label: `seat ${seat}` },
      data: { seat },
    },
    h("div", { class: "seat-name" }, seatName(model, seat), info?.note ? h("small", {}, ` ${info.note}`) : null),
    h("div", { class: "seat-meta" }, `seat ${seat}`, teamOf(view, seat) >= 0 && view.teams.length < view.players ? ` · team ${teamOf(view, seat)}` : ""),
    h("div", { class: "badges" }, badges.filter(Boolean).map((b) => h("span", { class: "badge" }, b as string)), bid ? h("span", { class: "badge bid" }, bid) : null),
    hand,
    clock,
  );
}

/** The tiles of trick number `index` of the hand, each where its seat sits; `data-play` names
 * a play for as long as it is on the table (the motion follows it from draw to draw). */
function trickTiles(model: TableModel, plays: readonly Play[], index: number): HTMLElement[] {
  const view = model.view;
  const bottom = bottomSeat(view);
  return plays.map((p) => {
    const at = (p.seat - bottom + view.players) % view.players;
    const tile = p.faceDown ? tileBack() : tileElement(p.tile);
    // (The name under the tile shows on a narrow screen, where the trick is a row.)
    return h(
      "div",
      { class: "played", style: position(at, view.players, 17), role: "group", aria: { label: `${seatName(model, p.seat)} played` }, data: { play: `${view.handNumber}:${index}:${p.seat}`, seat: p.seat } },
      tile,
      h("span", { class: "played-by", aria: { hidden: "true" } }, model.seats[p.seat]?.name || `seat ${p.seat}`),
    );
  });
}

/** A trick that is over, whole, with who won it and what it was worth (`held`: kept in sight
 * while the next trick has begun). */
function doneTrick(model: TableModel, trick: CompletedTrick, index: number, held = false): HTMLElement {
  const winner = model.view.seat === trick.winner ? "you" : seatName(model, trick.winner);
  const worth = trick.points !== undefined && !isMoon(model.rules) ? `: ${count(trick.points, "point")}` : "";
  const caption = `${winner} took the trick${worth}`;
  return h(
    "div",
    { class: `trick done${held ? " held" : ""}`, role: "group", aria: { label: caption }, data: { trick: index, winner: trick.winner } },
    trickTiles(model, trick.plays, index),
    h("div", { class: "trick-caption" }, caption),
  );
}

function centre(model: TableModel): HTMLElement {
  const view = model.view;
  const held = model.heldTrick;
  if (held) return doneTrick(model, held.trick, held.index, true);
  if (view.currentTrick.length) {
    const index = view.completedTricks.length;
    return h("div", { class: "trick", role: "group", aria: { label: "the trick" }, data: { trick: `${index}-playing` } }, trickTiles(model, view.currentTrick, index));
  }
  const last = view.completedTricks.at(-1);
  // The last trick stays in sight until the next is led, and once the hand is scored.
  if (last && !last.hidden && last.plays.length && (view.phase === Phase.PLAY || view.phase === Phase.DEAL)) {
    return doneTrick(model, last, view.completedTricks.length - 1);
  }
  return h("div", { class: "trick", role: "group", aria: { label: "the trick" } });
}

/** The team scores, what each took this hand, and the results of every hand. */
function scoreboard(model: TableModel): HTMLElement {
  const view = model.view;
  const takenUnit = isMoon(model.rules) ? "trick" : "point";
  const rows = view.teams.map((_, team) =>
    h(
      "tr",
      { class: view.seat !== undefined && view.teams[team].seats.includes(view.seat) ? "mine" : "" },
      h("th", { scope: "row" }, teamName(model, team)),
      h("td", { class: "score" }, scoreText(view.scores[team] ?? 0, model.rules)),
      h("td", {}, view.taken.length ? `${count(view.taken[team], takenUnit)} this hand` : view.tricksHidden ? "tricks face down" : ""),
      // (In Moon what a player took is its tricks: said once.)
      isMoon(model.rules) ? null : h("td", {}, view.tricksWon.length ? count(view.tricksWon[team], "trick") : ""),
    ),
  );
  return h("table", { class: "scores", aria: { label: "scores" } }, h("tbody", {}, rows));
}

function results(model: TableModel): HTMLElement | null {
  const view = model.view;
  if (!view.results.length) return null;
  return h(
    "details",
    { class: "results" },
    h("summary", {}, `Hands scored: ${view.results.length}`),
    h(
      "ol",
      {},
      view.results.map((r) =>
        h("li", {}, `${seatName(model, r.bidder)} bid ${bidText(r.bid)}: ${r.made ? "made" : "set"} (took ${r.taken.join(" / ")}; ${r.changes.map((c) => (c > 0 ? `+${c}` : String(c))).join(" / ")})`),
      ),
    ),
  );
}

function contractLine(model: TableModel): HTMLElement {
  const view = model.view;
  // (Between the hand's last trick and the next deal the hand is scored, not being dealt.)
  const phase = view.phase === Phase.DEAL && view.completedTricks.length ? "scored" : phaseText(view.phase);
  const parts: string[] = [`Hand ${view.handNumber}`, phase];
  if (view.highBid && view.bidder !== undefined) {
    parts.push(`${view.phase === Phase.BIDDING ? "high bid" : "bid"} ${bidText(view.highBid)} by ${seatName(model, view.bidder)}`);
  }
  if (view.contract) {
    const trump = contractText(view.contract);
    const who = view.declarer !== undefined ? ` named by ${seatName(model, view.declarer)}` : "";
    parts.push(`${["nello", "sevens"].includes(trump) ? "contract" : "trump"}: ${trump}${who}`);
  }
  if (view.sittingOut.length) parts.push(`${view.sittingOut.map((s) => seatName(model, s)).join(", ")} sits out`);
  if (view.discard !== undefined) parts.push("you laid out a tile");
  return h("p", { class: "contract" }, parts.join(" · "));
}

/** Whose turn, or the game's end, as the status line says it. */
export function turnText(model: TableModel): string {
  return turnLine(model).textContent ?? "";
}

/** Whose turn, or the game's end, in words. */
function turnLine(model: TableModel): HTMLElement {
  const view = model.view;
  if (view.phase === Phase.GAME_OVER) {
    const winner = view.winner;
    const others = view.scores.filter((_, team) => team !== winner).map((s) => String(s));
    const text = winner !== undefined
      ? `Game over: ${teamName(model, winner)} won with ${scoreText(view.scores[winner] ?? 0, model.rules)} to ${others.join(" and ")}`
      : "Game over: closed with no winner";
    return h("p", { class: "turn-line over", role: "status" }, text);
  }
  if (view.turn === undefined) return h("p", { class: "turn-line", role: "status" }, view.phase === Phase.DEAL ? (view.completedTricks.length ? "The hand is over" : "Dealing...") : "");
  if (view.seat === view.turn) {
    const what = view.phase === Phase.BIDDING ? "bid or pass"
      : view.phase === Phase.WIDOW ? "take the widow: choose the tile to lay out"
      : view.phase === Phase.TRUMP ? "name trump" : "play a tile";
    return h("p", { class: "turn-line yours", role: "status" }, `Your turn: ${what}`);
  }
  return h("p", { class: "turn-line", role: "status" }, `Waiting for ${seatName(model, view.turn)} (${phaseText(view.phase)})`);
}

/** The tile an action plays or lays out, if it is such an action. */
function tileOf(action: Action): Tile | undefined {
  if (action.kind.case === "playTile") return action.kind.value.tile;
  if (action.kind.case === "exchangeWidow") return action.kind.value.discard;
  return undefined;
}

function ownHand(model: TableModel): HTMLElement | null {
  const view = model.view;
  if (view.seat === undefined || model.openHands) return null;
  const byTile = new Map<Tile, Action>();
  for (const action of view.legalActions) {
    const tile = tileOf(action);
    if (tile !== undefined) byTile.set(tile, action);
  }
  const choose = model.onAction;
  const widow = view.phase === Phase.WIDOW && byTile.size > 0;
  const groups = handBySuit(view.hand, view.contract).map((g) =>
    h(
      "div",
      { class: `suit${g.trumps ? " trumps" : ""}`, role: "group", aria: { label: g.name } },
      h("div", { class: "suit-name" }, g.name),
      h(
        "div",
        { class: "tiles" },
        g.tiles.map((t) => {
          const action = byTile.get(t);
          // Only a legal tile is a button; the others are pictures a click cannot send.
          if (!action) return tileElement(t, { class: byTile.size ? "illegal" : "" });
          return choose
            ? tileElement(t, { class: "legal", title: actionText(action), data: { key: `tile ${t}` }, onclick: () => choose(action) })
            : tileElement(t, { class: "legal waiting" });
        }),
      ),
    ),
  );
  return h(
    "section",
    { class: "hand", aria: { label: "your hand" } },
    h("h2", {}, widow ? "Your hand: click the tile to lay out" : "Your hand"),
    widow ? h("p", { class: "hint" }, "The exchange is blind: you lay one of your own tiles out face down first, and only then is the widow's tile added to your hand.") : null,
    h("div", { class: "groups" }, groups),
  );
}

/** A word beside a forced or unusual choice: why there is no Pass, what a stuck dealer's pass
 * does, what a special contract asks. Said from the view's legal actions and the game's
 * options; what may be chosen still comes from the view alone. */
function hints(model: TableModel, buttons: readonly Action[]): string[] {
  const view = model.view;
  const out: string[] = [];
  const bids = buttons.filter((a) => a.kind.case === "bid");
  const canPass = buttons.some((a) => a.kind.case === "passBid");
  const othersPassed = view.bids.length > 0 && view.bids.every((b) => b.bid === undefined);
  if (view.phase === Phase.BIDDING && bids.length && !canPass) {
    out.push(othersPassed
      ? "Everyone else passed, so you, the dealer, must bid: passing is not allowed (the table's rule when all pass)."
      : "You may not pass here.");
  }
  if (view.phase === Phase.BIDDING && canPass && othersPassed && view.bids.length === view.players - 1 && model.rules?.allPass === AllPass.FORCED_DEALER_ANY_BID) {
    out.push("Everyone else passed: you may bid anything, and if you pass you are given the lowest bid and play the hand.");
  }
  if (bids.some((a) => a.kind.case === "bid" && a.kind.value.kind === BidKind.MARKS)) {
    out.push("A bid of 42 or more (84 = 2 marks ...) is made only by taking every trick.");
  }
  if (bids.some((a) => a.kind.case === "bid" && a.kind.value.kind === BidKind.MOON)) {
    out.push("Shooting the moon: you must take all 7 tricks, for 21 points (or lose 21).");
  }
  if (bids.some((a) => a.kind.case === "bid" && (a.kind.value.kind === BidKind.PLUNGE || a.kind.value.kind === BidKind.SPLASH))) {
    out.push("Plunge and splash (you hold enough doubles): your partner names trump and leads, and your team must take every trick.");
  }
  for (const a of buttons) {
    if (a.kind.case !== "declareContract") continue;
    if (a.kind.value.kind === ContractKind.NELLO) out.push("Nello: you must lose every trick; your partner sits out.");
    if (a.kind.value.kind === ContractKind.SEVENS) out.push("Sevens: everyone plays the tile nearest 7 pips; you must win every trick.");
  }
  if (buttons.some((a) => a.kind.case === "declineWidow")) out.push("You may also leave the widow and keep your hand as it is.");
  return out;
}

function choices(model: TableModel): HTMLElement | null {
  const view = model.view;
  const choose = model.onAction;
  const buttons = view.legalActions.filter((a) => tileOf(a) === undefined);
  if (!buttons.length || view.seat === undefined || model.openHands) return null;
  return h(
    "section",
    { class: "choices", aria: { label: "your choices" } },
    h("div", { class: "choice-buttons" },
      buttons.map((action) =>
        // Disabled while an action of this seat is on its way (one at a time).
        h("button", { type: "button", class: `choice ${action.kind.case ?? ""}`, disabled: !choose, data: { key: actionText(action) }, onclick: () => choose?.(action) }, actionText(action)),
      )),
    hints(model, buttons).map((text) => h("p", { class: "hint" }, text)),
  );
}

export function renderTable(model: TableModel): HTMLElement {
  const view = model.view;
  const bottom = bottomSeat(view);
  const seats = Array.from({ length: view.players }, (_, i) => (bottom + i) % view.players);
  return h(
    "div",
    { class: "table-view", data: { version: String(view.version), phase: phaseText(view.phase), deal: view.handNumber } },
    h("div", { class: "status" }, turnLine(model), contractLine(model)),
    h(
      "div",
      { class: `felt players-${view.players}` },
      seats.map((seat, index) => seatPanel(model, seat, index)),
      centre(model),
    ),
    choices(model),
    ownHand(model),
    h("div", { class: "board-info" }, scoreboard(model), results(model)),
  );
}

/** Keep the countdowns of the clocks moving between messages (display only). */
export function tickClocks(root: ParentNode): void {
  for (const el of root.querySelectorAll<HTMLElement>("[data-deadline]")) {
    el.textContent = seconds(Math.max(0, Number(el.dataset.deadline) - Date.now()));
  }
}
