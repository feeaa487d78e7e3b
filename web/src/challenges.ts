// Challenges and seeking (#/challenges, #/challenges/NAME to challenge NAME): seek a table
// (LobbyService.Seek: "2 of 4 players waiting", Cancel, then to the table), challenge accounts
// to a table (ChallengeService.CreateChallenge: a preset and its options from
// GameService.ListPresets, the account in each seat, yours or none, a clock, rated or not,
// how long they have to answer), and the challenges sent and received (ListChallenges), the
// received ones answered with Accept or Decline.
//
// The lists follow the account's stream (AccountService.WatchAccount, from the page's opening):
// a challenge received or answered shows at once, and a game started from a challenge this
// page sent (playing) or accepted takes the person to its table, seated with the account's key.

import {
  GAME_TYPES, accountRefusal, reroute, followAccount, goSeated, seatLink, signInForm, signedIn, streamLine, timeText, type SignedIn,
  type StreamState,
} from "./account";
import { accounts, asSeat, challenges, games, lobby, ratings } from "./api";
import { announce, h, redraw } from "./dom";
import {
  type Challenge, ChallengeAnswer, ChallengeRole, ChallengeStatus, GameStatus, type Preset,
  type Ruleset, type TimeControl, TimeoutPolicy,
} from "@boneyard/client";
import { playerHref } from "./leaderboard";
import { optionsForm } from "./options";
import { count, gameTitle, isMoon } from "./words";

/** Challenges of each list shown (the newest). */
const LISTED = 20;
/** How long the challenged have to answer: the choices, in seconds (the server's default, ten
 * minutes, first). */
const EXPIRIES: readonly [number, string][] = [
  [600, "10 minutes"],
  [60, "1 minute"],
  [3600, "1 hour"],
  [86400, "1 day"],
];

/** The game of a challenge in a few words: "Texas 42 (texas42), rated, 1 hand, 30 s a move". */
export function challengeRules(c: Challenge | undefined): string {
  if (!c) return "a game";
  return [
    gameTitle(c.rules),
    c.rated ? "rated" : "unrated",
    c.rules?.handLimit ? count(c.rules.handLimit, "hand") : null,
    clockText(c.timeControl),
  ].filter(Boolean).join(", ");
}

function clockText(t: TimeControl | undefined): string | null {
  if (!t || !t.perMoveMs) return null;
  const bank = t.bankMs ? ` and ${Math.round(t.bankMs / 1000)} s in the bank` : "";
  return `${t.perMoveMs / 1000} s a move${bank}`;
}

function seconds(input: HTMLInputElement): number {
  const v = Number(input.value.trim() || "0");
  return Number.isFinite(v) && v > 0 ? Math.round(v * 1000) : 0;
}

class ChallengesPage {
  private received: Challenge[] = [];
  private sent: Challenge[] = [];
  private listsLoaded = false;
  private presets: Preset[] = [];
  private error?: string;
  private notice?: string;
  private state: StreamState = "loading";
  private why?: string;
  /** Challenges this page sent (playing) or accepted: their game takes the person there. */
  private readonly going = new Set<string>();
  private seek?: { controller: AbortController; preset: string; seekers: number; players: number };
  private seekNote?: string;
  private seekForm?: HTMLElement;
  private challengeForm?: HTMLElement;
  private readonly known = h("datalist", { id: "known-accounts" });
  /** Games of accepted challenges that are over. */
  private readonly over = new Set<string>();

  constructor(
    private readonly root: HTMLElement,
    private readonly account: SignedIn,
    private readonly signal: AbortSignal,
    private readonly invite: string | undefined,
  ) {}

  async start(): Promise<void> {
    this.render();
    void this.loadPresets();
    void this.loadKnown();
    let last = 0n;
    try {
      last = (await accounts.getAccount({}, asSeat(this.account.key, this.signal))).lastSequence;
    } catch (error) {
      if (this.signal.aborted) return;
      this.error = accountRefusal(error);
      this.state = "stopped";
      this.render();
      return;
    }
    await this.loadLists();
    await followAccount(
      this.account,
      last,
      (event) => {
        const kind = event.kind;
        if (kind.case === "challengeReceived" || kind.case === "challengeAnswered") {
          if (kind.case === "challengeReceived") announce(`${kind.value.challenge?.challenger ?? "Someone"} challenges you.`);
          void this.loadLists();
        }
        if (kind.case === "gameStarted" && this.going.has(kind.value.challengeId)) {
          announce("Everybody accepted: to the table.");
          goSeated(this.account, kind.value.gameId, kind.value.seat);
        }
      },
      (state, why) => { this.state = state; this.why = why; this.render(); },
      this.signal,
    );
  }

  private async loadPresets(): Promise<void> {
    try {
      this.presets = (await games.listPresets({}, { signal: this.signal })).presets;
      this.seekForm = this.makeSeekForm();
      this.challengeForm = this.makeChallengeForm();
    } catch (error) {
      if (this.signal.aborted) return;
      this.error = accountRefusal(error);
    }
    this.render();
  }

  /** Names to suggest in the seats: the accounts on the leaderboards' first pages. */
  private async loadKnown(): Promise<void> {
    const names = new Set<string>();
    for (const t of GAME_TYPES) {
      try {
        const page = await ratings.getLeaderboard({ gameType: t.family, pageSize: 100 }, { signal: this.signal });
        for (const e of page.entries) if (e.rating && e.rating.accountName !== this.account.name) names.add(e.rating.accountName);
      } catch {
        return; // suggestions only: the seats take any name without them
      }
    }
    this.known.replaceChildren(...[...names].sort().map((n) => h("option", { value: n })));
  }

  private async loadLists(): Promise<void> {
    try {
      const [received, sent] = await Promise.all([
        challenges.listChallenges({ role: ChallengeRole.RECEIVED, limit: LISTED }, asSeat(this.account.key, this.signal)),
        challenges.listChallenges({ role: ChallengeRole.SENT, limit: LISTED }, asSeat(this.account.key, this.signal)),
      ]);
      // Where the games of accepted challenges are (a game over is replayed, not joined).
      const made = [...received.challenges, ...sent.challenges].filter((c) => c.gameId && !this.over.has(c.gameId));
      await Promise.all(made.map(async (c) => {
        try {
          const status = (await games.getGame({ gameId: c.gameId }, { signal: this.signal })).game?.status;
          if (status === GameStatus.FINISHED || status === GameStatus.ABANDONED) this.over.add(c.gameId);
        } catch {
          // Not known here (another server's): shown as made.
        }
      }));
      this.received = received.challenges;
      this.sent = sent.challenges;
      this.listsLoaded = true;
    } catch (error) {
      if (this.signal.aborted) return;
      this.error = accountRefusal(error);
    }
    this.render();
  }

  // --- seeking ------------------------------------------------------------------------

  private makeSeekForm(): HTMLElement {
    const preset = h("select", { id: "seek-preset" }, this.presets.map((p) => h("option", { value: p.name }, p.description)));
    const button = h("button", { type: "submit", class: "primary" }, "Seek");
    return h(
      "form",
      { class: "seek-form", aria: { label: "seek a table" }, onsubmit: (e) => { e.preventDefault(); void this.startSeek(preset.value); } },
      h("div", { class: "option" }, h("label", { for: "seek-preset" }, "Game"), preset, button),
      h("p", { class: "hint" }, "The server seats you at a rated table, without a clock, as soon as enough accounts seek the same game; the seats are drawn at random. Leaving this page stops seeking."),
    );
  }

  private async startSeek(preset: string): Promise<void> {
    if (this.seek) return;
    const controller = new AbortController();
    const stop = (): void => controller.abort();
    this.signal.addEventListener("abort", stop, { once: true });
    const players = this.presets.find((p) => p.name === preset)?.rules?.players ?? 0;
    this.seek = { controller, preset, seekers: 0, players };
    this.seekNote = undefined;
    this.render();
    try {
      const stream = lobby.seek({ rules: { preset } }, asSeat(this.account.key, controller.signal));
      for await (const m of stream) {
        if (m.kind.case === "waiting") {
          this.seek.seekers = m.kind.value.seekers;
          this.seek.players = m.kind.value.players;
          this.render();
        } else if (m.kind.case === "seated") {
          const seated = m.kind.value;
          this.seek = undefined;
          announce("A table is formed: to the table.");
          goSeated(this.account, seated.gameId, seated.seat);
          return;
        }
      }
      this.seekNote = "The server stopped the seek: seek again.";
    } catch (error) {
      if (this.signal.aborted) return;
      this.seekNote = controller.signal.aborted ? "You stopped seeking." : accountRefusal(error);
    } finally {
      this.signal.removeEventListener("abort", stop);
    }
    this.seek = undefined;
    this.render();
  }

  private seekSection(): HTMLElement {
    const s = this.seek;
    const preset = s && this.presets.find((p) => p.name === s.preset);
    return h(
      "section",
      { class: "seek", aria: { label: "seeking" } },
      h("h2", {}, "Seek a table"),
      s
        ? h(
            "div",
            { class: "seeking" },
            h(
              "p",
              { class: "seek-status", role: "status" },
              `Seeking a ${gameTitle(preset?.rules)} table: `,
              h("strong", {}, s.seekers ? `${s.seekers} of ${count(s.players, "player")} waiting` : "asking the server…"),
              s.seekers ? `, ${s.players - s.seekers} more to come.` : "",
            ),
            h("button", { type: "button", onclick: () => s.controller.abort() }, "Cancel"),
          )
        : this.seekForm ?? h("p", {}, "Reading the server's games…"),
      this.seekNote ? h("p", { class: "meta seek-note" }, this.seekNote) : null,
    );
  }

  // --- challenging ----------------------------------------------------------------------

  private makeChallengeForm(): HTMLElement {
    const preset = h("select", { id: "ch-preset" }, this.presets.map((p) => h("option", { value: p.name }, p.description)));
    const options = optionsForm();
    const players = options.element.querySelector<HTMLInputElement>("#option-players");
    const yourSeat = h("select", { id: "ch-your-seat" });
    const seatRows = h("div", { class: "ch-seats" });
    const names: HTMLInputElement[] = [];
    const rated = h("input", { id: "ch-rated", type: "checkbox" });
    const perMove = h("input", { id: "ch-per-move", type: "number", min: "0", placeholder: "no clock" });
    const bank = h("input", { id: "ch-bank", type: "number", min: "0", placeholder: "0" });
    const policy = h(
      "select",
      { id: "ch-policy" },
      h("option", { value: String(TimeoutPolicy.AUTO_PLAY) }, "auto play"),
      h("option", { value: String(TimeoutPolicy.FORFEIT) }, "forfeit"),
    );
    const expires = h("select", { id: "ch-expires" }, EXPIRIES.map(([s, text]) => h("option", { value: String(s) }, text)));
    const said = h("p", { class: "refusal", role: "alert", hidden: true });
    const chosen = (): Preset | undefined => this.presets.find((p) => p.name === preset.value);
    const seatCount = (): number => Number(players?.value || 0) || (chosen()?.rules?.players ?? 4);
    // Your seat: seat 0 until you choose another (or none).
    let picked = "0";
    yourSeat.addEventListener("change", () => { picked = yourSeat.value; });
    const drawSeats = (): void => {
      const n = seatCount();
      yourSeat.replaceChildren(
        ...Array.from({ length: n }, (_, i) => h("option", { value: String(i) }, `seat ${i}`)),
        h("option", { value: "" }, "none: I only organise"),
      );
      yourSeat.value = picked === "" || Number(picked) < n ? picked : "0";
      while (names.length < n) {
        const i = names.length;
        const input = h("input", { id: `ch-seat-${i}`, placeholder: "account name" });
        input.setAttribute("list", "known-accounts");
        input.setAttribute("autocomplete", "off");
        names.push(input);
      }
      const mine = yourSeat.value === "" ? undefined : Number(yourSeat.value);
      // Texas 42 at four: seats 0 and 2 are partners against 1 and 3.
      const partners = chosen()?.rules !== undefined && !isMoon(chosen()?.rules) && n === 4;
      const side = (i: number): string => {
        if (!partners || i === mine) return "";
        if (mine === undefined) return i % 2 ? " (team 2)" : " (team 1)";
        return i % 2 === mine % 2 ? " (your partner)" : " (against you)";
      };
      seatRows.replaceChildren(
        ...names.slice(0, n).map((input, i) =>
          h(
            "div",
            { class: "option" },
            h("label", { for: `ch-seat-${i}` }, `seat ${i}`, h("small", {}, side(i))),
            i === mine ? h("span", { class: "you-seat" }, `you (${this.account.name})`) : input,
          ),
        ),
      );
    };
    if (this.invite) {
      // #/challenges/NAME: NAME in the first seat that is not yours.
      drawSeats();
      names[1].value = this.invite;
    }
    preset.addEventListener("change", () => { options.showPreset(chosen()?.rules); drawSeats(); });
    players?.addEventListener("input", drawSeats);
    yourSeat.addEventListener("change", drawSeats);
    options.showPreset(chosen()?.rules);
    drawSeats();
    const send = async (event: SubmitEvent): Promise<void> => {
      event.preventDefault();
      said.hidden = true;
      const n = seatCount();
      const mine = yourSeat.value === "" ? undefined : Number(yourSeat.value);
      const invited: { account: string; seat: number }[] = [];
      const free: number[] = [];
      for (let i = 0; i < n; i++) {
        if (i === mine) continue;
        const name = names[i].value.trim();
        if (name) invited.push({ account: name, seat: i });
        else free.push(i);
      }
      const refuse = (text: string): void => { said.textContent = text; said.hidden = false; };
      if (!invited.length) return refuse("Name at least one account to challenge, in a seat.");
      if (rated.checked && free.length) {
        return refuse(`A rated game needs an account in every seat: name one for ${free.map((s) => `seat ${s}`).join(" and ")}, or send it unrated.`);
      }
      const perMoveMs = seconds(perMove);
      const rules: Ruleset = options.read(preset.value);
      try {
        const made = await challenges.createChallenge(
          {
            rules,
            challenged: invited,
            challengerPlays: mine !== undefined,
            challengerSeat: mine,
            rated: rated.checked,
            timeControl: perMoveMs ? { perMoveMs, bankMs: seconds(bank), policy: Number(policy.value) } : undefined,
            expiresInSeconds: Number(expires.value),
          },
          asSeat(this.account.key, this.signal),
        );
        const c = made.challenge!;
        if (mine !== undefined) this.going.add(c.challengeId);
        this.notice = `Challenge sent to ${invited.map((i) => i.account).join(", ")}: ${challengeRules(c)}. ${mine !== undefined ? "When everybody accepts, you go to the table." : "When everybody accepts, the game is made."}`;
        announce(this.notice);
        for (const input of names) input.value = "";
        drawSeats();
        await this.loadLists();
      } catch (error) {
        refuse(accountRefusal(error));
      }
    };
    return h(
      "form",
      { class: "new-game challenge-form", aria: { label: "challenge" }, onsubmit: (e) => void send(e) },
      h("h2", {}, "Challenge"),
      h("div", { class: "option" }, h("label", { for: "ch-preset" }, "game"), preset),
      h("div", { class: "option" }, h("label", { for: "ch-your-seat" }, "your seat"), yourSeat),
      h("fieldset", { class: "seats-fieldset" }, h("legend", {}, "Who sits where"), seatRows, this.known,
        h("p", { class: "hint" }, "A seat left empty is free for anybody to take.")),
      h("label", { class: "radio check" }, rated, "Rated: counts for the leaderboard (every seat an account's)"),
      h("div", { class: "option" }, h("label", { for: "ch-expires" }, "they have to answer within"), expires),
      h(
        "details",
        { class: "options" },
        h("summary", {}, "Clock"),
        h("div", { class: "option" }, h("label", { for: "ch-per-move" }, "per move (seconds)"), perMove),
        h("div", { class: "option" }, h("label", { for: "ch-bank" }, "bank (seconds)"), bank),
        h("div", { class: "option" }, h("label", { for: "ch-policy" }, "when time runs out"), policy),
      ),
      options.element,
      said,
      h("button", { type: "submit", class: "primary" }, "Send the challenge"),
    );
  }

  private async answer(c: Challenge, accept: boolean): Promise<void> {
    try {
      const key = asSeat(this.account.key, this.signal);
      const answered = accept
        ? (await challenges.acceptChallenge({ challengeId: c.challengeId }, key)).challenge
        : (await challenges.declineChallenge({ challengeId: c.challengeId }, key)).challenge;
      if (accept) this.going.add(c.challengeId);
      const mine = answered?.participants.find((p) => p.account === this.account.name);
      if (accept && answered?.gameId && mine) {
        // The last acceptance made the game: to the table.
        goSeated(this.account, answered.gameId, mine.seat);
        return;
      }
      this.notice = accept ? `You accepted ${c.challenger}’s challenge: waiting for the others.` : `You declined ${c.challenger}’s challenge.`;
      announce(this.notice);
    } catch (error) {
      this.error = accountRefusal(error);
    }
    await this.loadLists();
  }

  private statusLine(c: Challenge): HTMLElement {
    const mine = c.participants.find((p) => p.account === this.account.name);
    switch (c.status) {
      case ChallengeStatus.OPEN:
        return h("p", { class: "ch-status open" }, `Waiting for answers until ${timeText(c.expireTime)}.`);
      case ChallengeStatus.ACCEPTED:
        if (this.over.has(c.gameId)) {
          return h("p", { class: "ch-status accepted" }, "Accepted by everybody; the game is over. ", h("a", { href: `#/replay/${encodeURIComponent(c.gameId)}` }, "Replay"));
        }
        return h(
          "p",
          { class: "ch-status accepted" },
          "Accepted by everybody: the game is made. ",
          c.gameId
            ? mine
              ? seatLink(this.account, c.gameId, mine.seat, "Go to the table")
              : h("a", { href: `#/game/${encodeURIComponent(c.gameId)}` }, "Watch it")
            : null,
        );
      case ChallengeStatus.DECLINED:
        return h("p", { class: "ch-status declined" }, `Declined by ${c.declinedBy === this.account.name ? "you" : c.declinedBy}.`);
      case ChallengeStatus.EXPIRED:
        return h("p", { class: "ch-status expired" }, "Expired: not everybody answered in time.");
      default:
        return h("p", { class: "ch-status" }, "");
    }
  }

  private seatsLine(c: Challenge): HTMLElement {
    const players = c.rules?.players ?? c.participants.length;
    const answerWord = (a: ChallengeAnswer): string =>
      a === ChallengeAnswer.ACCEPTED ? "accepted" : a === ChallengeAnswer.DECLINED ? "declined" : "not answered yet";
    const parts = Array.from({ length: players }, (_, seat) => {
      const p = c.participants.find((x) => x.seat === seat);
      if (!p) return `seat ${seat}: free`;
      const who = p.account === this.account.name ? "you" : p.account;
      return `seat ${seat}: ${who}${p.challenger ? " (challenger)" : `, ${answerWord(p.answer)}`}`;
    });
    return h("p", { class: "meta ch-seats-line" }, parts.join(" · "));
  }

  private challengeItem(c: Challenge, received: boolean): HTMLElement {
    const me = c.participants.find((p) => p.account === this.account.name);
    const canAnswer = received && c.status === ChallengeStatus.OPEN && me?.answer === ChallengeAnswer.UNSPECIFIED;
    const others = c.participants.filter((p) => !p.challenger).map((p) => p.account);
    return h(
      "li",
      { class: `challenge ${ChallengeStatus[c.status].toLowerCase()}`, data: { challenge: c.challengeId } },
      h(
        "p",
        { class: "ch-head" },
        received
          ? ["From ", h("a", { href: playerHref(c.challenger) }, c.challenger)]
          : ["To ", others.map((name, i) => [i ? ", " : "", h("a", { href: playerHref(name) }, name)])],
        `: ${challengeRules(c)}`,
      ),
      this.seatsLine(c),
      this.statusLine(c),
      canAnswer
        ? h(
            "div",
            { class: "ch-answer" },
            h("button", { type: "button", class: "primary", onclick: () => void this.answer(c, true) }, "Accept"),
            h("button", { type: "button", onclick: () => void this.answer(c, false) }, "Decline"),
          )
        : null,
    );
  }

  /** A challenge still to answer, or whose game is being played. */
  private current(c: Challenge): boolean {
    return c.status === ChallengeStatus.OPEN || (c.status === ChallengeStatus.ACCEPTED && !this.over.has(c.gameId));
  }

  private list(title: string, label: string, items: Challenge[], received: boolean, empty: string): HTMLElement {
    const now = items.filter((c) => this.current(c));
    const earlier = items.filter((c) => !this.current(c));
    return h(
      "section",
      { class: "challenges", aria: { label } },
      h("h2", {}, title),
      !this.listsLoaded
        ? h("p", {}, "Reading your challenges…")
        : [
            now.length ? h("ul", {}, now.map((c) => this.challengeItem(c, received))) : h("p", {}, empty),
            earlier.length
              ? h("details", { class: "earlier" }, h("summary", {}, `Earlier: ${count(earlier.length, "challenge")} answered or over`),
                  h("ul", {}, earlier.map((c) => this.challengeItem(c, received))))
              : null,
          ],
    );
  }

  render(): void {
    redraw(this.root, () => [
      h("header", {}, h("h1", {}, "Challenges and seeking"), streamLine(this.state, this.why)),
      this.error ? h("p", { class: "refusal", role: "alert" }, this.error) : null,
      this.notice ? h("p", { class: "notice", role: "status" }, this.notice) : null,
      this.seekSection(),
      h(
        "div",
        { class: "lobby challenge-page" },
        h(
          "div",
          { class: "lobby-lists" },
          this.list("Received", "received challenges", this.received, true, "No challenge to answer."),
          this.list("Sent", "sent challenges", this.sent, false, "No challenge of yours is waiting or being played."),
        ),
        this.challengeForm ?? h("section", { class: "new-game" }, h("h2", {}, "Challenge"), h("p", {}, "Reading the server's games…")),
      ),
    ]);
  }
}

export function challengesPage(root: HTMLElement, invite: string | undefined, signal: AbortSignal): void {
  const account = signedIn();
  if (!account) {
    root.replaceChildren(
      h("header", {}, h("h1", {}, "Challenges and seeking")),
      h("p", {}, "Sign in with your account's key to challenge other accounts, answer their challenges, and seek a rated table."),
      signInForm(reroute),
    );
    return;
  }
  void new ChallengesPage(root, account, signal, invite).start();
}

