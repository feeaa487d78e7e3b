// A game's page: play the seat this browser holds (its token in localStorage), or watch as a
// spectator; take a free seat of a game waiting for players. The page shows the view it got
// last and follows the game with WatchGame; a click sends one of the view's legal actions,
// and a refusal shows the server's reason.

import { Code } from "@connectrpc/connect";
import { asSeat, codeOf, games, refusal, requestId } from "./api";
import { announce, draw, h } from "./dom";
import { clearVersionMarks, follow, type Connection } from "./follow";
import type { Action } from "./gen/boneyard/v1/actions_pb";
import { GameStatus, type GameSummary } from "./gen/boneyard/v1/game_pb";
import type { Event as GameEvent, HandScored } from "./gen/boneyard/v1/events_pb";
import type { WatchGameResponse } from "./gen/boneyard/v1/game_service_pb";
import type { Ruleset } from "./gen/boneyard/v1/rules_pb";
import { Phase, type SeatView } from "./gen/boneyard/v1/view_pb";
import { dropSeat, heldSeat, holdSeat, playerName, setPlayerName, type HeldSeat } from "./seats";
import { handSummary } from "./summary";
import { renderTable, tickClocks, turnText, type SeatInfo, type TableModel } from "./table";
import { eventText, gameTitle, statusText } from "./words";

/** "What happened" keeps this many events (the current hand is never longer). */
const LOG_LINES = 200;
/** How far back a page that opens mid-game first looks for the current hand's deal: more
 * events than any hand has (a redeal or a long Moon auction: then from the start). */
const BACKFILL = 150n;
/** A spectator's hand result stays this long, unless they press Continue first. */
const SPECTATOR_PAUSE_MS = 6000;

interface Logged {
  version: bigint;
  event: GameEvent;
}

/** A hand's result held on the screen until the player continues: the event and the table
 * as it was when the hand was scored. */
interface HeldResult {
  scored: HandScored;
  view: SeatView;
  timer?: number;
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
  /** The last hand scored, shown until the player presses Continue. */
  private result?: HeldResult;
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
      if (line) this.heard.push(line);
      if (m.event.kind.case === "handScored" && m.view) this.holdResult(m.event.kind.value, m.view);
    }
    // A SubmitAction answer may already have brought a later view.
    if (m.view && (!this.view || m.view.version > this.view.version)) this.view = m.view;
    const s = this.summary;
    if (!s || s.status === GameStatus.OPEN || (s.timeControl?.perMoveMs ?? 0) > 0 || m.view?.phase === Phase.GAME_OVER) {
      this.refreshSummary();
    }
    this.render();
  }

  /** Show the hand's result until the player presses Continue (a spectator: for a few
   * seconds, or until Continue). */
  private holdResult(scored: HandScored, view: SeatView): void {
    if (this.result?.timer !== undefined) clearTimeout(this.result.timer);
    this.result = { scored, view };
    if (!this.held) this.result.timer = window.setTimeout(() => this.continue(), SPECTATOR_PAUSE_MS);
  }

  private continue(): void {
    if (this.result?.timer !== undefined) clearTimeout(this.result.timer);
    this.result = undefined;
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
      // An answer past the end of a hand waits for the stream: the stream brings the table as
      // the hand ended, with its result, which must show before the next hand does.
      const scoredMeanwhile = answer.view && this.view && answer.view.results.length > this.view.results.length;
      if (answer.view && !scoredMeanwhile && (!this.view || answer.view.version > this.view.version)) this.view = answer.view;
    } catch (error) {
      this.error = refusal(error);
      if (codeOf(error) === Code.Aborted) {
        // The page was behind: show the table as it is now, and let the person choose again.
        try {
          const now = (await games.getView({ gameId: this.gameId }, asSeat(this.held.token, this.signal))).view;
          if (now && now.version > (this.view?.version ?? 0n)) this.view = now;
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
    // While a hand's result is shown, the table stays as the hand ended (at the game's end the
    // final table shows, with the result above it).
    const held = this.result;
    const view = held && !over ? held.view : this.view;
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
      onAction: this.held && !this.busy && !(held && !over) ? (a) => void this.act(a) : undefined,
    };
    const who = this.held ? `you play seat ${this.held.seat}` : "you are watching as a spectator";
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
      held && model ? handSummary(model, held.scored, { final: over, spectator: !this.held, onContinue: over ? undefined : () => this.continue() }) : null,
      model && view && view.handNumber > 0 ? renderTable(model) : null,
      this.resignControls(),
      this.logSection(),
    );
    const details = this.root.querySelector<HTMLDetailsElement>("details.results");
    if (details) details.open = openResults;
    const box = this.root.querySelector<HTMLElement>(".log ol");
    if (box && logAtEnd) box.scrollTop = box.scrollHeight;
    this.refocus(focusKey);
    this.say(model);
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
    if (lines.length) announce(lines.slice(-6).join(". "));
  }
}

export function gamePage(root: HTMLElement, gameId: string, signal: AbortSignal): void {
  void new GamePage(root, gameId, signal).start();
}
