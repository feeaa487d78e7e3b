// A game's page: play the seat this browser holds (its token in localStorage), or watch as a
// spectator; take a free seat of a game waiting for players. The page shows the view it got
// last and follows the game with WatchGame; a click sends one of the view's legal actions,
// and a refusal shows the server's reason.
//
// A hand's result is owed to the player from the view itself (SeatView.results, which every
// view carries), whichever way the view came: the stream, the answer to a click, or the view
// fetched again after a refusal. So no result is passed over when the page is brought past the
// end of a hand by anything but the stream (a click that raced another client, a stream
// reconnecting or refused): each is shown in turn until the player continues.

import { Code } from "@connectrpc/connect";
import { asSeat, codeOf, games, refusal, requestId } from "./api";
import { announce, draw, h } from "./dom";
import { clearVersionMarks, follow, type Connection } from "./follow";
import { animate, capture, stopMotion } from "./motion";
import {
  type Action, type CompletedTrick, type Event as GameEvent, GameStatus, type GameSummary,
  type HandScored, Phase, type Ruleset, type SeatView, type WatchGameResponse,
} from "@boneyard/client";
import { dropSeat, heldSeat, holdSeat, playerName, setPlayerName, type HeldSeat } from "./seats";
import { handSummary } from "./summary";
import { renderTable, tickClocks, turnText, type HeldTrick, type SeatInfo, type TableModel } from "./table";
import { eventText, gameTitle, statusText } from "./words";

/** "What happened" keeps this many events (the current hand is never longer). */
const LOG_LINES = 200;
/** How far back a page that opens mid-game first looks for the current hand's deal: more
 * events than any hand has (a redeal or a long Moon auction: then from the start). */
const BACKFILL = 150n;
/** A spectator's hand result stays this long, unless they press Continue first. */
const SPECTATOR_PAUSE_MS = 6000;
/** A trick won stays whole in the middle at least this long (from when it is first drawn
 * whole) before it is gathered, even if the next trick has begun meanwhile. */
export const TRICK_HOLD_MS = 1100;
/** How long a view past the end of a hand (a click's answer, or the view fetched after a
 * refusal) waits for the stream to bring the hand's end in order, before it is shown anyway. */
const STREAM_GRACE_MS = 1500;

interface Logged {
  version: bigint;
  event: GameEvent;
}

/** A hand's result owed to the player, shown until they continue. */
interface OwedResult {
  /** Its place in SeatView.results. */
  index: number;
  scored: HandScored;
  /** The table as the hand ended (`ended`: the stream's view of the HandScored event); else
   * the last the page saw of that hand, if it saw any. */
  view?: SeatView;
  ended: boolean;
  timer?: number;
}

/** A trick held whole in the middle (TableModel.heldTrick) until `until`. */
interface TrickHold extends HeldTrick {
  deal: number;
  until: number;
  timer: number;
}

export function seatInfos(summary: GameSummary | undefined): SeatInfo[] {
  const clock = (summary?.timeControl?.perMoveMs ?? 0) > 0;
  return (summary?.seats ?? []).map((s) => ({
    name: s.playerName,
    occupied: s.occupied,
    note: s.houseBot ? "(house bot)" : s.account ? "(account)" : undefined,
    bankMs: clock ? s.bankRemainingMs : undefined,
  }));
}

/** The rules of the game: the view's own copy when the server sends one, else the summary's. */
export function rulesOf(view: SeatView | undefined, summary: GameSummary | undefined): Ruleset | undefined {
  return (view as { rules?: Ruleset } | undefined)?.rules ?? summary?.rules;
}

function deadlineOf(summary: GameSummary | undefined): number | undefined {
  const t = summary?.turnDeadline;
  return t ? Number(t.seconds) * 1000 + t.nanos / 1e6 : undefined;
}

class GamePage {
  private summary?: GameSummary;
  private view?: SeatView;
  private held?: HeldSeat;
  /** The events seen, oldest first (worded when drawn: names may arrive later). */
  private log: Logged[] = [];
  /** The hands' results not yet continued from, oldest first (a spectator: the latest only). */
  private owed: OwedResult[] = [];
  /** How many of SeatView.results the page has owed or shown (those before it opened are not
   * shown again). */
  private resultsSeen = 0;
  /** A view past the end of a hand, waiting for the stream to bring the hand's end first. */
  private awaiting?: { view: SeatView; timer: number };
  /** The trick held whole in the middle, and when each trick of the deal was first drawn whole
   * (`deal:index`). */
  private trickHold?: TrickHold;
  private wholeSince = new Map<string, number>();
  /** The deal and completed tricks of the view drawn last (not the result's table). */
  private drawnTricks?: { deal: number; completed: number };
  /** Lines for the screen reader's live region, said at the next draw. */
  private heard: string[] = [];
  private lastTurn = "";
  private error?: string;
  private busy = false;
  private confirmResign = false;
  /** "stopped": the stream was refused for good (the page must be reloaded to follow again). */
  private connection: Connection | "loading" | "stopped" = "loading";
  private connectionNote = "";
  private follower?: AbortController;
  private summaryWanted = false;
  private summaryInFlight = false;
  private readonly ticker: number;
  private frame?: number;

  constructor(private readonly root: HTMLElement, private readonly gameId: string, private readonly signal: AbortSignal) {
    this.ticker = window.setInterval(() => tickClocks(this.root), 200);
    signal.addEventListener("abort", () => {
      clearInterval(this.ticker);
      this.follower?.abort();
      clearVersionMarks();
      stopMotion();
      for (const owed of this.owed) clearTimeout(owed.timer);
      if (this.awaiting) clearTimeout(this.awaiting.timer);
      if (this.trickHold) clearTimeout(this.trickHold.timer);
    });
  }

  async start(): Promise<void> {
    this.render();
    try {
      this.summary = (await games.getGame({ gameId: this.gameId })).game;
    } catch (error) {
      this.fail(error);
      return;
    }
    await this.seatAndFollow(heldSeat(this.gameId));
  }

  /** Look as `held` (or as a spectator), then follow the game from that view's version. */
  private async seatAndFollow(held: HeldSeat | undefined): Promise<void> {
    this.follower?.abort();
    this.held = held;
    try {
      this.view = (await games.getView({ gameId: this.gameId }, asSeat(held?.token, this.signal))).view;
    } catch (error) {
      if (held && [Code.Unauthenticated, Code.PermissionDenied].includes(codeOf(error))) {
        // A token this server does not know (or a seat left): watch instead.
        dropSeat(this.gameId);
        await this.seatAndFollow(undefined);
        return;
      }
      this.fail(error);
      return;
    }
    // Results scored before the page looked are in the log, not shown again.
    for (const owed of this.owed) clearTimeout(owed.timer);
    this.owed = [];
    this.resultsSeen = this.view?.results.length ?? 0;
    this.render();
    if (this.view) {
      this.startFollowing(this.view.version);
      void this.backfill(this.view.version);
    }
  }

  /** "What happened" for a page that opens mid-game (a reload, a late spectator): the events
   * of the current hand up to `upTo`, read from the game's stream as this seat may see them. */
  private async backfill(upTo: bigint): Promise<void> {
    if (upTo === 0n) return;
    const starts = upTo > BACKFILL ? [upTo - BACKFILL, 0n] : [0n];
    for (const from of starts) {
      const read: Logged[] = [];
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      this.signal.addEventListener("abort", stop, { once: true });
      try {
        const stream = games.watchGame({ gameId: this.gameId, fromVersion: from }, asSeat(this.held?.token, controller.signal));
        for await (const m of stream) {
          if (m.event) read.push({ version: m.version, event: m.event });
          if (m.version >= upTo) break;
        }
      } catch {
        return; // the live stream says what is wrong
      } finally {
        controller.abort();
        this.signal.removeEventListener("abort", stop);
      }
      let deal = read.length - 1;
      while (deal >= 0 && read[deal].event.kind.case !== "handDealt") deal--;
      if (deal < 0 && from > 0n) continue;
      const known = new Set(this.log.map((l) => l.version));
      const earlier = read.slice(Math.max(deal, 0)).filter((l) => !known.has(l.version));
      this.log = [...earlier, ...this.log].sort((a, b) => (a.version < b.version ? -1 : 1));
      this.render();
      return;
    }
  }

  private startFollowing(from: bigint): void {
    const controller = new AbortController();
    this.follower = controller;
    this.signal.addEventListener("abort", () => controller.abort(), { once: true });
    follow(
      {
        gameId: this.gameId,
        token: this.held?.token,
        from,
        onMessage: (m) => this.onMessage(m),
        onConnection: (state, why) => {
          this.connection = state;
          this.connectionNote = why ?? "";
          this.render();
        },
      },
      controller.signal,
    ).catch((error) => {
      // Said beside the game's name as well as in the refusal, which the next choice clears.
      this.connection = "stopped";
      this.connectionNote = refusal(error);
      this.fail(error);
    });
  }

  private onMessage(m: WatchGameResponse): void {
    if (m.event) {
      this.log.push({ version: m.version, event: m.event });
      if (this.log.length > LOG_LINES) this.log.splice(0, this.log.length - LOG_LINES);
      const line = eventText(m.event, (seat) => this.name(seat), this.log.at(-2)?.event, this.held?.seat);
      // (The person's own choices are not said back to them: they made them.)
      if (line && !this.ownChoice(m.event)) this.heard.push(line);
      if (m.event.kind.case === "handScored" && m.view) this.handEnded(m.event.kind.value, m.view);
    }
    // A SubmitAction answer may already have brought a later view.
    if (m.view && (!this.view || m.view.version > this.view.version)) this.setView(m.view);
    if (this.awaiting && m.version >= this.awaiting.view.version) this.stopAwaiting();
    const s = this.summary;
    if (!s || s.status === GameStatus.OPEN || (s.timeControl?.perMoveMs ?? 0) > 0 || m.view?.phase === Phase.GAME_OVER) {
      this.refreshSummary();
    }
    this.render();
  }

  /** The stream's view of a HandScored event: the table as the hand ended. Its result is
   * owed (or, when a view past it came first, now shown with that table). */
  private handEnded(scored: HandScored, view: SeatView): void {
    const index = view.results.length - 1;
    const owed = this.owed.find((o) => o.index === index);
    if (owed) {
      owed.view = view;
      owed.ended = true;
    } else if (index >= this.resultsSeen) {
      this.owe({ index, scored, view, ended: true });
    }
    this.resultsSeen = Math.max(this.resultsSeen, index + 1);
  }

  /** Take `view` as the game now; a result it has that the page has not shown is owed. */
  private setView(view: SeatView): void {
    const previous = this.view;
    this.view = view;
    for (let index = this.resultsSeen; index < view.results.length; index++) {
      // The table as the page last saw that hand, if it did (its number, bids and contract).
      const seen = previous && previous.results.length === index ? previous : undefined;
      this.owe({ index, scored: view.results[index], view: seen, ended: false });
    }
    this.resultsSeen = Math.max(this.resultsSeen, view.results.length);
  }

  /** Owe a result: a player sees each until they continue; a spectator sees the latest for a
   * few seconds (or until Continue), so that watching fast bots never falls behind. */
  private owe(result: OwedResult): void {
    if (!this.held) {
      for (const owed of this.owed) clearTimeout(owed.timer);
      this.owed = [];
      result.timer = window.setTimeout(() => this.continue(), SPECTATOR_PAUSE_MS);
    }
    this.owed.push(result);
    this.owed.sort((a, b) => a.index - b.index);
    this.endTrickHold();
  }

  private continue(): void {
    // The last result of a game that is over stays with the final table (a spectator's too).
    if (this.view?.phase === Phase.GAME_OVER && this.owed.length <= 1) return;
    const done = this.owed.shift();
    clearTimeout(done?.timer);
    this.render();
  }

  /** A view newer than the page's that is not the stream's (a click's answer, the view fetched
   * after a refusal). When a hand ended in between, the stream brings that hand's end first,
   * in order (the table as it ended, and its result); meanwhile there is nothing to click.
   * Without a live stream, or after STREAM_GRACE_MS, the view is taken as it is and the result
   * is owed from it. */
  private adopt(view: SeatView | undefined): void {
    if (!view || (this.view && view.version <= this.view.version)) return;
    const pastHandEnd = this.view !== undefined && view.results.length > this.view.results.length;
    if (!pastHandEnd || this.connection !== "live") {
      this.setView(view);
      return;
    }
    if (this.awaiting && this.awaiting.view.version >= view.version) return;
    if (this.awaiting) clearTimeout(this.awaiting.timer);
    this.awaiting = { view, timer: window.setTimeout(() => this.stopAwaiting(true), STREAM_GRACE_MS) };
  }

  private stopAwaiting(takeIt = false): void {
    const awaiting = this.awaiting;
    if (!awaiting) return;
    clearTimeout(awaiting.timer);
    this.awaiting = undefined;
    if (takeIt && (!this.view || awaiting.view.version > this.view.version)) this.setView(awaiting.view);
    this.render();
  }

  /** The summary (names, clocks, status) again, after a message that may have changed it. */
  private refreshSummary(): void {
    this.summaryWanted = true;
    if (this.summaryInFlight) return;
    this.summaryInFlight = true;
    this.summaryWanted = false;
    games
      .getGame({ gameId: this.gameId }, { signal: this.signal })
      .then((r) => { this.summary = r.game; this.render(); })
      .catch(() => { /* the next message asks again */ })
      .finally(() => {
        this.summaryInFlight = false;
        if (this.summaryWanted) this.refreshSummary();
      });
  }

  private ownChoice(event: GameEvent): boolean {
    const kind = event.kind;
    const choices = ["bidPlaced", "passed", "widowExchanged", "widowDeclined", "contractDeclared", "tilePlayed"];
    return this.held !== undefined && kind.case !== undefined && choices.includes(kind.case) && (kind.value as { seat?: number }).seat === this.held.seat;
  }

  private name(seat: number): string {
    const name = this.summary?.seats[seat]?.playerName || `seat ${seat}`;
    return this.held?.seat === seat ? `${name} (you)` : name;
  }

  private fail(error: unknown): void {
    this.error = refusal(error);
    this.render();
  }

  private async act(action: Action): Promise<void> {
    const view = this.view;
    if (!view || !this.held || this.busy) return;
    this.busy = true;
    // The person acts on the table as it is: a trick held in the middle goes at once, and the
    // last trick won is not held after their play.
    this.endTrickHold();
    this.wholeSince.set(`${view.handNumber}:${view.completedTricks.length - 1}`, -Infinity);
    this.confirmResign = false;
    // The last refusal answered the last choice; this choice waits for its own answer.
    this.error = undefined;
    this.render();
    try {
      const answer = await games.submitAction(
        { gameId: this.gameId, expectedVersion: view.version, requestId: requestId(), action },
        asSeat(this.held.token, this.signal),
      );
      this.error = undefined;
      this.adopt(answer.view);
    } catch (error) {
      this.error = refusal(error);
      if (codeOf(error) === Code.Aborted) {
        // The page was behind: show the table as it is now (after the result of a hand that
        // ended meanwhile), and let the person choose again.
        try {
          this.adopt((await games.getView({ gameId: this.gameId }, asSeat(this.held.token, this.signal))).view);
        } catch {
          // The stream brings it.
        }
      }
    } finally {
      this.busy = false;
      this.render();
    }
  }

  private async take(seat: number, nameInput: HTMLInputElement): Promise<void> {
    const name = nameInput.value.trim() || `player ${seat}`;
    setPlayerName(name);
    try {
      const taken = await games.takeSeat({ gameId: this.gameId, seat, playerName: name, requestId: requestId() });
      const held = { gameId: this.gameId, seat: taken.seat, token: taken.seatToken, name };
      holdSeat(held);
      this.summary = taken.game;
      this.error = undefined;
      await this.seatAndFollow(held);
    } catch (error) {
      this.fail(error);
    }
  }

  private async leave(): Promise<void> {
    if (!this.held) return;
    try {
      const left = await games.leaveSeat({ gameId: this.gameId }, asSeat(this.held.token));
      this.summary = left.game;
      dropSeat(this.gameId);
      await this.seatAndFollow(undefined);
    } catch (error) {
      this.fail(error);
    }
  }

  private seatsOpen(): HTMLElement | null {
    const s = this.summary;
    if (!s || s.status !== GameStatus.OPEN) return null;
    const name = h("input", { id: "player-name", value: playerName(), placeholder: "your name" });
    return h(
      "section",
      { class: "open-seats", aria: { label: "seats" } },
      h("h2", {}, "Waiting for players"),
      this.held ? null : h("label", { for: "player-name" }, "Your name ", name),
      h(
        "ul",
        {},
        s.seats.map((seat) =>
          h(
            "li",
            {},
            `seat ${seat.seat}: `,
            seat.occupied
              ? seat.playerName + (this.held?.seat === seat.seat ? " (you)" : "")
              : this.held
                ? "free"
                : h("button", { type: "button", onclick: () => void this.take(seat.seat, name) }, `Take seat ${seat.seat}`),
          ),
        ),
      ),
      this.held ? h("button", { type: "button", onclick: () => void this.leave() }, "Leave the table") : null,
    );
  }

  private resignControls(): HTMLElement | null {
    const view = this.view;
    if (!this.held || !view || this.summary?.status !== GameStatus.PLAYING || view.phase === Phase.GAME_OVER) return null;
    const resign = { kind: { case: "resign" as const, value: {} } } as Action;
    return h(
      "div",
      { class: "resign" },
      this.confirmResign
        ? [
            "Resign the game? Your team loses. ",
            h("button", { type: "button", class: "danger", onclick: () => void this.act(resign) }, "Yes, resign"),
            h("button", { type: "button", onclick: () => { this.confirmResign = false; this.render(); } }, "No"),
          ]
        : h("button", { type: "button", onclick: () => { this.confirmResign = true; this.render(); } }, "Resign"),
    );
  }

  /** Draw at the next frame: the messages of one action (a trick won, the hand scored, the
   * next deal) come together, and the page is drawn once for all of them. */
  private render(): void {
    if (this.frame !== undefined || this.signal.aborted) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = undefined;
      // (A page left meanwhile draws nothing: its element belongs to the next page.)
      if (!this.signal.aborted) this.draw();
    });
  }

  private draw(): void {
    const s = this.summary;
    const over = this.view?.phase === Phase.GAME_OVER;
    // The result shown, oldest first. The last of a game that is over is said above the final
    // table, and nothing follows it.
    const shown = this.owed[0];
    const final = over && this.owed.length === 1;
    // While a hand's result is shown, the table stays as the hand ended (when the page has that
    // table: else it is the table as it is now, with nothing to click until Continue).
    const view = shown && !final && shown.ended ? shown.view : this.view;
    const rules = rulesOf(view, s);
    const openResults = this.root.querySelector<HTMLDetailsElement>("details.results")?.open ?? false;
    // The focused control, found again after the redraw (a keyboard player keeps their place).
    const active = document.activeElement;
    const focusKey = active instanceof HTMLElement && this.root.contains(active) ? active.dataset.key ?? "" : undefined;
    const logBox = this.root.querySelector<HTMLElement>(".log ol");
    const logAtEnd = !logBox || logBox.scrollTop + logBox.clientHeight >= logBox.scrollHeight - 8;
    const model: TableModel | undefined = view && {
      view,
      rules,
      seats: seatInfos(s),
      deadline: deadlineOf(s),
      onAction: this.held && !this.busy && !this.awaiting && !(shown && !final) ? (a) => void this.act(a) : undefined,
      heldTrick: shown ? undefined : this.heldTrick(view),
    };
    const who = this.held ? `you play seat ${this.held.seat}` : "you are watching as a spectator";
    const before = capture(this.root);
    const connection = this.connection === "reconnecting"
      ? `reconnecting (${this.connectionNote})`
      : this.connection === "stopped" ? `not following the game (${this.connectionNote}): reload to try again`
      : this.connection === "live" ? "live" : this.connection === "ended" ? "" : "loading";
    draw(
      this.root,
      h(
        "header",
        { class: "game-head" },
        h("h1", {}, gameTitle(rules), s?.name ? ` · ${s.name}` : ""),
        h("p", { class: "meta" }, `game ${this.gameId} · ${s ? statusText(s.status) : ""} · ${who}`, connection ? h("span", { class: `connection ${this.connection}` }, ` · ${connection}`) : null),
      ),
      this.error ? h("p", { class: "refusal", role: "alert" }, this.error) : null,
      this.seatsOpen(),
      shown && model
        ? handSummary(model, shown.scored, {
            final,
            spectator: !this.held,
            onContinue: final ? undefined : () => this.continue(),
            hand: shown.view,
            ended: shown.ended,
          })
        : null,
      model && view && view.handNumber > 0 ? renderTable(model) : null,
      this.resignControls(),
      this.logSection(),
    );
    const details = this.root.querySelector<HTMLDetailsElement>("details.results");
    if (details) details.open = openResults;
    const box = this.root.querySelector<HTMLElement>(".log ol");
    if (box && logAtEnd) box.scrollTop = box.scrollHeight;
    animate(this.root, before, this.held?.seat);
    this.refocus(focusKey);
    this.say(model);
  }

  /** The trick to hold whole in the middle while the next one has begun: the last trick won,
   * until it has been in sight TRICK_HOLD_MS (counted from when it was first drawn whole, or
   * now when it was never drawn whole: bots that play faster than a frame). Only the centre
   * waits; the rest of the table is `view` as it is, and the person acting ends the hold. */
  private heldTrick(view: SeatView): HeldTrick | undefined {
    const now = performance.now();
    const deal = view.handNumber;
    const drawn = this.drawnTricks;
    if (drawn?.deal !== deal) this.wholeSince.clear();
    this.drawnTricks = { deal, completed: view.completedTricks.length };
    if (this.trickHold && (this.trickHold.deal !== deal || now >= this.trickHold.until)) this.endTrickHold();
    const index = view.completedTricks.length - 1;
    const trick: CompletedTrick | undefined = view.completedTricks[index];
    const visible = trick !== undefined && !trick.hidden && trick.plays.length > 0;
    if (!this.trickHold && visible && view.currentTrick.length && drawn?.deal === deal && drawn.completed <= index + 1) {
      const since = drawn.completed <= index ? now : this.wholeSince.get(`${deal}:${index}`) ?? now;
      const until = since + TRICK_HOLD_MS;
      if (until > now) {
        const timer = window.setTimeout(() => {
          this.trickHold = undefined;
          this.render();
        }, until - now);
        this.trickHold = { deal, index, trick, until, timer };
      }
    }
    const hold = this.trickHold;
    const whole = hold ? hold.index : visible && !view.currentTrick.length ? index : undefined;
    if (whole !== undefined && !this.wholeSince.has(`${deal}:${whole}`)) this.wholeSince.set(`${deal}:${whole}`, now);
    return hold && { index: hold.index, trick: hold.trick };
  }

  /** Let the held trick go (for good: it is not held again). */
  private endTrickHold(): void {
    const hold = this.trickHold;
    if (!hold) return;
    clearTimeout(hold.timer);
    this.wholeSince.set(`${hold.deal}:${hold.index}`, -Infinity);
    this.trickHold = undefined;
  }

  /** "What happened", oldest first, numbered from the first event it holds. */
  private logSection(): HTMLElement {
    const you = this.held?.seat;
    const lines = this.log
      .map((l, i) => eventText(l.event, (seat) => this.name(seat), this.log[i - 1]?.event, you))
      .filter((line) => line !== undefined);
    return h(
      "section",
      { class: "log", aria: { label: "what happened" } },
      h("h2", {}, "What happened"),
      lines.length
        ? h("ol", { tabindex: "0", aria: { label: "events, oldest first" } }, lines.map((line) => h("li", {}, line)))
        : h("p", { class: "meta" }, "Nothing yet."),
    );
  }

  /** Give the focus back to the control that had it, or, when that one is gone (the tile
   * played, the result dismissed), to the next thing to do: Continue, or a legal choice. */
  private refocus(key: string | undefined): void {
    if (key === undefined || this.root.contains(document.activeElement)) return;
    const same = key ? this.root.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`) : null;
    const next = same ?? this.root.querySelector<HTMLElement>(".hand-summary button, .choices button:not([disabled]), .hand button.tile");
    next?.focus({ preventScroll: true });
  }

  /** Say what happened since the last draw, and whose turn it is when that changed, in the
   * screen reader's live region. */
  private say(model: TableModel | undefined): void {
    const turn = model ? turnText(model) : "";
    const lines = this.heard.splice(0);
    if (turn && turn !== this.lastTurn) lines.push(turn);
    this.lastTurn = turn;
    if (lines.length) announce(lines.slice(-8).join(". "));
  }
}

export function gamePage(root: HTMLElement, gameId: string, signal: AbortSignal): void {
  void new GamePage(root, gameId, signal).start();
}
