// Your page (#/me): sign in with your account's key; then your name, your seats in games not
// over (LobbyService.WatchSeats), your rating in each game type with its history
// (RatingService.GetRating), and what happens to your account, live (AccountService.WatchAccount
// from a few events back): challenges received and answered, games started (a link to the
// table, your seat taken with your key), games finished, rating changes as they come.

import { ConnectError } from "@connectrpc/connect";
import {
  accountRefusal, reroute, changeText, followAccount, gameTypeTitle, kindText, ratingText, seatLink, signInForm, signOut, signedIn,
  streamLine, timeText, type SignedIn, type StreamState,
} from "./account";
import { accounts, asSeat, lobby } from "./api";
import { challengeRules } from "./challenges";
import { announce, h, redraw, type Child } from "./dom";
import { BACKOFF_MS, FINAL, sleep } from "./follow";
import { type AccountEvent, ChallengeOutcome, GameOutcome, type SeatAssignment } from "@boneyard/client";
import { playerHref, ratingPanel } from "./leaderboard";
import { count, gameTitle } from "./words";

/** Events shown when the page opens (the newest), and at most while it stays open. */
const RECENT = 20n;
const KEPT = 50;
/** Events shown until the person asks for the earlier ones. */
const SHOWN = 8;

function ordinalOf(s: { mu: number; sigma: number; ordinal: number } | undefined): number {
  return s ? s.ordinal : 0;
}

class MePage {
  private events: AccountEvent[] = [];
  private seats = new Map<string, SeatAssignment>();
  private finished = new Set<string>();
  /** Challenges answered by this account, or over: no longer to answer. */
  private readonly closed = new Set<string>();
  /** Show every event kept, not only the newest. */
  private all = false;
  private state: StreamState = "loading";
  private why?: string;
  private error?: string;
  /** The sequence number the page opened at: later events are live. */
  private openedAt = 0n;
  /** A game started while the page is open: said at the top, with its link. */
  private ready?: { gameId: string; seat: number; what: string };
  private created = "";
  private readonly ratings = h("div", { class: "ratings" });
  private panel?: { reload: () => Promise<void> };

  constructor(private readonly root: HTMLElement, private readonly account: SignedIn, private readonly signal: AbortSignal) {}

  async start(): Promise<void> {
    this.render();
    this.panel = ratingPanel(this.ratings, this.account.name, this.signal, true);
    let last: bigint;
    try {
      const me = await accounts.getAccount({}, asSeat(this.account.key, this.signal));
      this.created = timeText(me.createTime);
      last = me.lastSequence;
    } catch (error) {
      if (this.signal.aborted) return;
      this.error = accountRefusal(error);
      this.state = "stopped";
      this.render();
      return;
    }
    this.openedAt = last;
    void this.watchSeats();
    await followAccount(
      this.account,
      last > RECENT ? last - RECENT : 0n,
      (event) => this.onEvent(event),
      (state, why) => { this.state = state; this.why = why; this.render(); },
      this.signal,
    );
  }

  private onEvent(event: AccountEvent): void {
    this.events.unshift(event);
    this.events.length = Math.min(this.events.length, KEPT);
    const kind = event.kind;
    const live = event.sequence > this.openedAt;
    if (kind.case === "challengeAnswered" && kind.value.challenge) {
      const c = kind.value.challenge;
      if (kind.value.account === this.account.name || kind.value.outcome !== ChallengeOutcome.ACCEPTED || c.gameId) this.closed.add(c.challengeId);
    }
    if (kind.case === "gameFinished") {
      this.finished.add(kind.value.gameId);
      this.seats.delete(kind.value.gameId);
      if (this.ready?.gameId === kind.value.gameId) this.ready = undefined;
    }
    if (live && kind.case === "gameStarted" && !this.finished.has(kind.value.gameId)) {
      const what = `Your seat ${kind.value.seat} at a new table (${kind.value.preset}) is ready.`;
      this.ready = { gameId: kind.value.gameId, seat: kind.value.seat, what };
      announce(what);
    }
    if (live && kind.case === "gameRated") {
      const r = kind.value.rating;
      announce(`Your ${gameTypeTitle(r?.gameType ?? "")} rating: ${ratingText(ordinalOf(r?.before))} → ${ratingText(ordinalOf(r?.after))}.`);
      void this.panel?.reload();
    }
    this.render();
  }

  /** Your seats in games not over: those there are, then each new one (the stream opened
   * again after a wait when it drops; its first messages are every seat again). */
  private async watchSeats(): Promise<void> {
    let failures = 0;
    while (!this.signal.aborted) {
      try {
        const stream = lobby.watchSeats({}, asSeat(this.account.key, this.signal));
        for await (const m of stream) {
          failures = 0;
          const a = m.assignment;
          if (a && !this.finished.has(a.gameId)) this.seats.set(a.gameId, a);
          this.render();
        }
      } catch (error) {
        if (this.signal.aborted) return;
        if (FINAL.has(ConnectError.from(error).code)) return; // said by the account's stream
      }
      await sleep(BACKOFF_MS[Math.min(failures++, BACKOFF_MS.length - 1)], this.signal);
    }
  }

  private eventLine(event: AccountEvent): Child[] {
    const me = this.account.name;
    const kind = event.kind;
    switch (kind.case) {
      case "challengeReceived": {
        const c = kind.value.challenge;
        return [
          `${c?.challenger ?? "Someone"} challenges you: ${challengeRules(c)}. `,
          c && !this.closed.has(c.challengeId) ? h("a", { href: "#/challenges" }, "Answer") : null,
        ];
      }
      case "challengeAnswered": {
        const c = kind.value.challenge;
        const whose = c?.challenger === me ? "your challenge" : `${c?.challenger ?? "a"}’s challenge`;
        const who = kind.value.account === me ? "You" : kind.value.account;
        switch (kind.value.outcome) {
          case ChallengeOutcome.ACCEPTED:
            return [`${who} accepted ${whose} (${challengeRules(c)})`, c?.gameId ? ": everybody accepted, the game is made." : "."];
          case ChallengeOutcome.DECLINED:
            return [`${who} declined ${whose} (${challengeRules(c)}).`];
          case ChallengeOutcome.EXPIRED:
            return [`${whose[0].toUpperCase()}${whose.slice(1)} (${challengeRules(c)}) expired: not everybody answered in time.`];
          default:
            return [`${whose} changed.`];
        }
      }
      case "gameStarted": {
        const g = kind.value;
        const from = g.tournamentId ? " (a tournament game)" : g.challengeId ? " (a challenge)" : "";
        return [
          `A seat at a new table (${g.preset}) is yours: seat ${g.seat}${from}. `,
          this.finished.has(g.gameId)
            ? h("a", { href: `#/replay/${encodeURIComponent(g.gameId)}` }, "Replay")
            : seatLink(this.account, g.gameId, g.seat, "Go to the table"),
        ];
      }
      case "gameFinished": {
        const g = kind.value;
        const result = g.outcome === GameOutcome.WON ? "you won" : g.outcome === GameOutcome.LOST ? "you lost" : "abandoned, nobody won";
        const others = g.scores.filter((_, team) => team !== g.team);
        return [
          `Game over, ${result}: your side ${g.scores[g.team] ?? 0}, ${others.length === 1 ? "the other" : "the others"} ${others.join(" and ")}. `,
          h("a", { href: `#/replay/${encodeURIComponent(g.gameId)}` }, "Replay"),
        ];
      }
      case "gameRated": {
        const r = kind.value.rating;
        const before = ordinalOf(r?.before);
        const after = ordinalOf(r?.after);
        return [
          h("span", { class: `change ${after > before ? "up" : after < before ? "down" : "same"}` }, changeText(after - before)),
          ` Your ${gameTypeTitle(r?.gameType ?? "")} rating: ${ratingText(before)} → ${ratingText(after)}, after `,
          h("a", { href: `#/replay/${encodeURIComponent(kind.value.gameId)}` }, `game ${kind.value.gameId.slice(0, 8)}`),
          ".",
        ];
      }
      default:
        return ["Something happened to your account that this page cannot show."];
    }
  }

  private seatsSection(): HTMLElement | null {
    const open = [...this.seats.values()].filter((a) => !this.finished.has(a.gameId));
    if (!open.length) return null;
    return h(
      "section",
      { class: "games", aria: { label: "your tables" } },
      h("h2", {}, "Your tables"),
      h("ul", {}, open.map((a) =>
        h("li", { data: { game: a.gameId } },
          `${gameTitle(a.game?.rules)} · seat ${a.seat}`,
          a.game?.seats.length ? ` · ${a.game.seats.map((s) => s.playerName || "free").join(", ")}` : "",
          " ",
          seatLink(this.account, a.gameId, a.seat, "Go to the table")))),
    );
  }

  render(): void {
    redraw(this.root, () => [
      h(
        "header",
        { class: "me-head" },
        h("h1", {}, this.account.name),
        h("p", { class: "meta" }, kindText(this.account.kind), this.created ? `, made ${this.created}` : "", " · ",
          h("a", { href: playerHref(this.account.name) }, "your public page"), " · ",
          h("a", { href: "#/challenges" }, "challenges and seeking")),
        h("button", { type: "button", class: "sign-out", onclick: () => { signOut(); reroute(); } }, "Sign out"),
      ),
      this.error ? h("p", { class: "refusal", role: "alert" }, this.error) : null,
      this.ready
        ? h("p", { class: "ready", role: "status" }, this.ready.what, " ", seatLink(this.account, this.ready.gameId, this.ready.seat, "Go to the table"))
        : null,
      this.seatsSection(),
      h("div", { class: "me-grid" },
        h("section", { aria: { label: "your ratings" } }, h("h2", {}, "Your ratings"), this.ratings),
        h(
          "section",
          { class: "activity", aria: { label: "your account's news" } },
          h("h2", {}, "What happened"),
          streamLine(this.state, this.why),
          this.events.length
            ? h("ul", { class: "feed" }, (this.all ? this.events : this.events.slice(0, SHOWN)).map((e) =>
                h("li", { data: { kind: e.kind.case ?? "", sequence: String(e.sequence) } },
                  h("span", { class: "when" }, timeText(e.time)), " ", this.eventLine(e))))
            : this.state === "loading" ? null : h("p", {}, "Nothing yet: challenges, games and rating changes will show here."),
          !this.all && this.events.length > SHOWN
            ? h("button", { type: "button", onclick: () => { this.all = true; this.render(); } }, `Show ${count(this.events.length - SHOWN, "earlier event")}`)
            : null,
        )),
    ]);
  }
}

export function mePage(root: HTMLElement, signal: AbortSignal): void {
  const account = signedIn();
  if (!account) {
    root.replaceChildren(
      h("header", {}, h("h1", {}, "Sign in")),
      h("p", {}, "Sign in with your account's key to see your ratings, challenge other accounts, and seek a rated table."),
      signInForm(reroute),
      h("p", {}, "No account? You can still ", h("a", { href: "#/" }, "play the computer"), " or join a table in the lobby, and see the ", h("a", { href: "#/leaderboard" }, "leaderboard"), "."),
    );
    root.querySelector<HTMLInputElement>("#account-key")?.focus();
    return;
  }
  void new MePage(root, account, signal).start();
}
