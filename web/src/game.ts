// A game's page: play the seat this browser holds (its token in localStorage), or watch as a
// spectator; take a free seat of a game waiting for players. The page shows the view it got
// last and follows the game with WatchGame; a click sends one of the view's legal actions,
// and a refusal shows the server's reason.

import { Code } from "@connectrpc/connect";
import { asSeat, codeOf, games, refusal, requestId } from "./api";
import { draw, h } from "./dom";
import { clearVersionMarks, follow, type Connection } from "./follow";
import type { Action } from "./gen/boneyard/v1/actions_pb";
import { GameStatus, type GameSummary } from "./gen/boneyard/v1/game_pb";
import type { Event as GameEvent } from "./gen/boneyard/v1/events_pb";
import type { WatchGameResponse } from "./gen/boneyard/v1/game_service_pb";
import type { Ruleset } from "./gen/boneyard/v1/rules_pb";
import { Phase, type SeatView } from "./gen/boneyard/v1/view_pb";
import { dropSeat, heldSeat, holdSeat, playerName, setPlayerName, type HeldSeat } from "./seats";
import { renderTable, tickClocks, type SeatInfo, type TableModel } from "./table";
import { eventText, gameTitle, statusText } from "./words";

const LOG_LINES = 60;

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
  /** The events seen, newest first (worded when drawn: names may arrive later). */
  private readonly log: GameEvent[] = [];
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
    if (this.view) this.startFollowing(this.view.version);
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
      this.log.unshift(m.event);
      this.log.length = Math.min(this.log.length, LOG_LINES);
    }
    // A SubmitAction answer may already have brought a later view.
    if (m.view && (!this.view || m.view.version > this.view.version)) this.view = m.view;
    const s = this.summary;
    if (!s || s.status === GameStatus.OPEN || (s.timeControl?.perMoveMs ?? 0) > 0 || m.view?.phase === Phase.GAME_OVER) {
      this.refreshSummary();
    }
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
      if (answer.view && (!this.view || answer.view.version > this.view.version)) this.view = answer.view;
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
    const view = this.view;
    const rules = rulesOf(view, s);
    const openResults = this.root.querySelector<HTMLDetailsElement>("details.results")?.open ?? false;
    const model: TableModel | undefined = view && {
      view,
      rules,
      seats: seatInfos(s),
      deadline: deadlineOf(s),
      onAction: this.held && !this.busy ? (a) => void this.act(a) : undefined,
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
      model && view && view.handNumber > 0 ? renderTable(model) : null,
      this.resignControls(),
      h("section", { class: "log", aria: { label: "what happened" } }, h("h2", {}, "What happened"), h("ol", {}, this.log.map((e, i) => eventText(e, (seat) => this.name(seat), this.log[i + 1])).filter((line) => line !== undefined).map((line) => h("li", {}, line)))),
    );
    const details = this.root.querySelector<HTMLDetailsElement>("details.results");
    if (details) details.open = openResults;
  }
}

export function gamePage(root: HTMLElement, gameId: string, signal: AbortSignal): void {
  void new GamePage(root, gameId, signal).start();
}
