// Tournaments: the list (TournamentService.ListTournaments), and a tournament's page
// (GetTournament): where it is, its standings (each entrant, and in Texas 42 each partnership;
// a Swiss tournament's by score with its tie-breaks, and its rounds' pairings and byes) and its
// games, each linking to its table or its replay.
//
// The server runs a tournament by itself; the page follows it without a click. The API has
// no stream of a tournament, so the page asks (tournament_poll.ts): the cheap BASIC view
// every few seconds, backed off while nothing moves, and the FULL view (games and standings,
// worked out from every game's log) only when the BASIC one moved or now and then for the
// games that start; only while the page is shown and the tournament is not over.

import { Code, ConnectError } from "@connectrpc/connect";
import { refusal, tournaments } from "./api";
import { announce, h, redraw, type Child } from "./dom";
import {
  GameStatus, type GetTournamentResponse, type Standing, type SwissRound, type SwissStanding,
  type TimeControl, TimeoutPolicy, type Tournament, TournamentFormat, type TournamentGame, TournamentStatus,
} from "@boneyard/client";
import { followTournament, pollList, type Following } from "./tournament_poll";
import { count, gameTitle, scoreText, scoreUnit } from "./words";

const STATES: Record<TournamentStatus, string> = {
  [TournamentStatus.UNSPECIFIED]: "",
  [TournamentStatus.CREATED]: "not started",
  [TournamentStatus.RUNNING]: "being played",
  [TournamentStatus.FINISHED]: "finished",
  [TournamentStatus.CANCELLED]: "cancelled",
};

function isOver(t: Tournament | undefined): boolean {
  return t?.status === TournamentStatus.FINISHED || t?.status === TournamentStatus.CANCELLED;
}

function isSwiss(t: Tournament | undefined): boolean {
  return t?.format === TournamentFormat.SWISS;
}

/** A Swiss score as people write it: "2", "1½". */
function points(x: number): string {
  const whole = Math.floor(x);
  return x - whole >= 0.5 ? `${whole || ""}½` : String(whole);
}

/** "1 entrant", "4 entrants". */
function entrantsText(t: Tournament): string {
  return count(t.entrants.length, "entrant");
}

/** "3 of 8 games over". */
function gamesOver(t: Tournament): string {
  return `${t.gamesFinished} of ${count(t.gamesTotal, "game")} over`;
}

function progressBar(t: Tournament, label: string): HTMLElement {
  return h("progress", { max: String(Math.max(t.gamesTotal, 1)), value: String(t.gamesFinished), aria: { label } });
}

export function when(t: { seconds: bigint } | undefined): string {
  return t ? new Date(Number(t.seconds) * 1000).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" }) : "";
}

/** "clock: 5 s a move, 1:00 bank, then a forfeit" (a tournament's or a match's). */
export function clockText(t: { timeControl?: TimeControl }): string | null {
  const c = t.timeControl;
  if (!c || c.perMoveMs <= 0) return null;
  const s = (ms: number): string => (ms >= 60000 ? `${Math.floor(ms / 60000)}:${String(Math.floor((ms % 60000) / 1000)).padStart(2, "0")}` : `${ms / 1000} s`);
  const then = c.policy === TimeoutPolicy.FORFEIT ? "then a forfeit" : "then the lowest legal action is played";
  return `clock: ${s(c.perMoveMs)} a move, ${s(c.bankMs)} bank, ${then}`;
}

/** Draw `root` anew, keeping the keyboard's place: a link focused before the redraw (a person
 * tabbing through the games while the page follows the tournament) is focused again after it,
 * found by its address. */
export function redrawKeepingFocus(root: HTMLElement, build: () => Child[]): void {
  const active = document.activeElement;
  const href = active instanceof HTMLAnchorElement && root.contains(active) ? active.getAttribute("href") : null;
  redraw(root, build);
  if (href && !root.contains(active)) root.querySelector<HTMLElement>(`a[href="${CSS.escape(href)}"]`)?.focus({ preventScroll: true });
}

// --- the list ------------------------------------------------------------------------------

export function tournamentsPage(root: HTMLElement, signal: AbortSignal): void {
  let listed: Tournament[] | undefined;
  let error: string | undefined;
  const render = (): void => {
    redrawKeepingFocus(root, () => [
      h(
        "header",
        {},
        h("h1", {}, "Tournaments"),
        h("p", {}, "The server plays each tournament by itself: deal after deal, the entrants' bots meet at every table the schedule makes, and each deal's results are rated."),
      ),
      error ? h("p", { class: "refusal", role: "alert" }, error) : null,
      listed === undefined && !error ? h("p", { class: "meta" }, "Reading the tournaments…") : null,
      listed?.length === 0 ? h("p", {}, "No tournament yet. An organiser makes one with ", h("code", {}, "boneyard tournament create"), " and starts it with ", h("code", {}, "boneyard tournament run"), ".") : null,
      listed?.length
        ? h("ul", { class: "tournament-list" }, listed.map((t) => h(
            "li",
            { data: { tournament: t.tournamentId } },
            h("a", { href: `#/tournament/${t.tournamentId}`, class: "t-name" }, t.name),
            " ",
            h("span", { class: `t-state t-${STATES[t.status].replace(" ", "-")}` }, STATES[t.status]),
            h("p", { class: "t-line" }, `${gameTitle(t.rules)} · ${count(t.deals, "deal")}${t.duplicate ? ", duplicate" : ""} · ${entrantsText(t)}: ${t.entrants.join(", ")}`),
            h("p", { class: "t-line t-progress" }, progressBar(t, `${t.name}: games over`), ` ${gamesOver(t)}`),
            h("p", { class: "t-line meta" }, `organised by ${t.organiser || "?"} · made ${when(t.createTime)}`),
          )))
        : null,
    ]);
  };
  render();
  void pollList(
    async () => (await tournaments.listTournaments({}, { signal })).tournaments,
    (answer) => {
      listed = answer;
      error = undefined;
      render();
    },
    (why) => {
      error = why;
      render();
    },
    (answer) => answer.map((t) => `${t.tournamentId}/${t.status}/${t.gamesFinished}`).join(" "),
    signal,
  );
}

// --- a tournament --------------------------------------------------------------------------

/** A deal's games, in schedule order, and where the deal is. */
interface Deal {
  number: number;
  games: TournamentGame[];
  state: "to come" | "closed" | "open" | "over" | "not played";
}

/** The deals of the schedule. A duplicate deal's playings are played at once behind closed
 * doors: until every one of them is over nobody may watch them or see their records and
 * results (docs/competitions.md, "Tournaments"; the server refuses a spectator with
 * EMBARGOED), so a closed deal's games are shown without a link. */
function dealsOf(answer: GetTournamentResponse): Deal[] {
  const t = answer.tournament!;
  const by = new Map<number, TournamentGame[]>();
  for (const g of answer.games) by.set(g.deal, [...(by.get(g.deal) ?? []), g]);
  return [...by.entries()].sort(([a], [b]) => a - b).map(([number, games]) => {
    const made = games.filter((g) => g.gameId);
    const over = made.filter((g) => g.status === GameStatus.FINISHED);
    let state: Deal["state"];
    if (!made.length) state = t.status === TournamentStatus.CANCELLED ? "not played" : "to come";
    else if (over.length === games.length || (t.status === TournamentStatus.CANCELLED && over.length === made.length)) state = "over";
    else state = t.duplicate ? "closed" : "open";
    return { number, games, state };
  });
}

class TournamentView {
  private answer?: GetTournamentResponse;
  private following: Following = "loading";
  private note = "";

  constructor(private readonly root: HTMLElement) {}

  show(answer: GetTournamentResponse): void {
    const before = this.answer?.tournament;
    this.answer = answer;
    const t = answer.tournament!;
    if (before && (before.status !== t.status || before.gamesFinished !== t.gamesFinished)) announce(`${t.name}: ${this.stateLine(answer)}`);
    this.render();
  }

  follows(state: Following, note = ""): void {
    if (state === this.following && note === this.note) return;
    this.following = state;
    this.note = note;
    this.render();
  }

  private teamName(g: TournamentGame, team: number): string {
    const seats = this.answer?.tournament?.teams[team]?.seats ?? [];
    // Each name once: a Swiss entrant's account holds both seats of its partnership.
    return [...new Set(seats.map((s) => g.seats[s] ?? `seat ${s}`))].join(" & ");
  }

  private stateLine(answer: GetTournamentResponse): string {
    const t = answer.tournament!;
    const deals = dealsOf(answer);
    const done = deals.filter((d) => d.state === "over").length;
    const progress = isSwiss(t)
      ? `${gamesOver(t)} · round ${t.roundsPaired} of ${t.rounds}`
      : `${gamesOver(t)} · ${done} of ${count(t.deals, "deal")} done`;
    switch (t.status) {
      case TournamentStatus.CREATED:
        return "Not started yet: its organiser starts it, and then the server plays it by itself.";
      case TournamentStatus.RUNNING: {
        const playing = deals.filter((d) => d.state === "closed" || d.state === "open").map((d) => d.number + 1);
        const now = playing.length ? `Playing deal ${playing.join(" and ")}` : "Being played";
        return `${now} · ${progress}`;
      }
      case TournamentStatus.FINISHED:
        return `Finished · ${progress}`;
      case TournamentStatus.CANCELLED:
        return `Cancelled by its organiser: no more games were made, and the standings count the deals played out · ${progress}`;
      default:
        return progress;
    }
  }

  private connectionLine(): HTMLElement | null {
    const said = {
      loading: "Reading the tournament…",
      live: "● Following live: the page asks the server every few seconds while the tournament is being played.",
      paused: "Paused while the page is hidden.",
      reconnecting: `The server cannot be reached (${this.note}): trying again…`,
      ended: "",
      stopped: `Not following the tournament (${this.note}): reload the page to try again.`,
    }[this.following];
    return said ? h("p", { class: `meta connection ${this.following}`, data: { connection: this.following } }, said) : null;
  }

  /** The winner, once the tournament is over: the first of the standings. */
  private winner(): HTMLElement | null {
    const answer = this.answer!;
    const t = answer.tournament!;
    if (isSwiss(t)) {
      const top = answer.swissStandings[0];
      if (!isOver(t) || !top || !answer.rounds.length) return null;
      const finished = t.status === TournamentStatus.FINISHED;
      return h(
        "section",
        { class: "t-winner", aria: { label: "winner" } },
        h("h2", {}, finished ? `${top.name} won the tournament` : `${top.name} led when it was stopped`),
        h("p", {}, `${points(top.score)} of ${t.roundsPaired} (${top.wins} won, ${top.draws} drawn, ${top.losses} lost${top.byes ? `, ${count(top.byes, "bye")}` : ""}), Buchholz ${points(top.buchholz)}.`),
      );
    }
    const first = answer.individuals[0];
    if (!isOver(t) || !first) return null;
    const pair = answer.partnerships[0];
    const finished = t.status === TournamentStatus.FINISHED;
    return h(
      "section",
      { class: "t-winner", aria: { label: "winner" } },
      h("h2", {}, finished ? `${first.name} won the tournament` : `${first.name} led when it was stopped`),
      h("p", {}, `${count(first.wins, "win")} in ${count(first.games, "game")}, ordinal ${fixed(first.ordinal)} (rating ${fixed(first.rating)} ± ${fixed(first.uncertainty)})`,
        pair ? `; the best partnership: ${pair.name}, ${count(pair.wins, "win")} in ${count(pair.games, "game")}` : "", "."),
    );
  }

  private standings(list: readonly Standing[], who: string, label: string): HTMLElement {
    const unit = scoreUnit(this.answer!.tournament!.rules);
    const unitCap = unit[0].toUpperCase() + unit.slice(1);
    return h(
      "table",
      { class: "standings", aria: { label } },
      h("thead", {}, h("tr", {},
        h("th", { scope: "col", class: "num" }, h("span", { class: "sr-only" }, "Place"), h("span", { aria: { hidden: "true" } }, "#")),
        h("th", { scope: "col" }, who),
        h("th", { scope: "col", class: "num" }, "Ordinal"),
        h("th", { scope: "col", class: "num" }, "Rating"),
        h("th", { scope: "col", class: "num" }, "Uncertainty"),
        h("th", { scope: "col", class: "num" }, "Games"),
        h("th", { scope: "col", class: "num" }, "Wins"),
        h("th", { scope: "col", class: "num" }, `${unitCap} for`),
        h("th", { scope: "col", class: "num" }, `${unitCap} against`),
      )),
      h("tbody", {}, list.map((s, i) => h(
        "tr",
        { data: { name: s.name } },
        h("td", { class: "num place" }, String(i + 1)),
        h("th", { scope: "row", class: "who" }, s.name),
        h("td", { class: "num ordinal", data: { label: "ordinal" } }, fixed(s.ordinal)),
        h("td", { class: "num", data: { label: "rating" } }, fixed(s.rating)),
        h("td", { class: "num", data: { label: "±" } }, fixed(s.uncertainty)),
        h("td", { class: "num", data: { label: "games" } }, String(s.games)),
        h("td", { class: "num", data: { label: "wins" } }, String(s.wins)),
        h("td", { class: "num", data: { label: `${unit} for` } }, String(s.scoreFor)),
        h("td", { class: "num", data: { label: "against" } }, String(s.scoreAgainst)),
      ))),
    );
  }

  /** A Swiss tournament's standings: score, then its tie-breaks (docs/competitions.md). */
  private swissStandings(list: readonly SwissStanding[]): HTMLElement {
    return h(
      "table",
      { class: "standings", aria: { label: "standings of the entrants" } },
      h("thead", {}, h("tr", {},
        h("th", { scope: "col", class: "num" }, h("span", { class: "sr-only" }, "Place"), h("span", { aria: { hidden: "true" } }, "#")),
        h("th", { scope: "col" }, "Entrant"),
        h("th", { scope: "col", class: "num" }, "Score"),
        h("th", { scope: "col", class: "num" }, "Buchholz"),
        h("th", { scope: "col", class: "num" }, "Marks +/−"),
        h("th", { scope: "col", class: "num" }, "Won"),
        h("th", { scope: "col", class: "num" }, "Drawn"),
        h("th", { scope: "col", class: "num" }, "Lost"),
        h("th", { scope: "col", class: "num" }, "Byes"),
      )),
      h("tbody", {}, list.map((s, i) => h(
        "tr",
        { data: { name: s.name } },
        h("td", { class: "num place" }, String(i + 1)),
        h("th", { scope: "row", class: "who" }, s.name),
        // (class ordinal: the figure the rows are ordered by, on the first line on a phone)
        h("td", { class: "num ordinal", data: { label: "score" } }, points(s.score)),
        h("td", { class: "num", data: { label: "Buchholz" } }, points(s.buchholz)),
        h("td", { class: "num", data: { label: "marks +/−" } }, (d => (d > 0 ? `+${d}` : String(d)))(Number(s.marksFor - s.marksAgainst))),
        h("td", { class: "num", data: { label: "won" } }, String(s.wins)),
        h("td", { class: "num", data: { label: "drawn" } }, String(s.draws)),
        h("td", { class: "num", data: { label: "lost" } }, String(s.losses)),
        h("td", { class: "num", data: { label: "byes" } }, String(s.byes)),
      ))),
    );
  }

  /** A Swiss tournament's rounds: each pairing with its marks once over, and the bye. */
  private roundsSection(rounds: readonly SwissRound[]): HTMLElement {
    return h(
      "section",
      { class: "t-rounds", aria: { label: "rounds" } },
      h("h2", {}, "Rounds"),
      rounds.map((r) => h(
        "section",
        { class: "t-round", aria: { label: `round ${r.round}` } },
        h("h3", {}, `Round ${r.round}`),
        h("ul", {},
          r.pairings.map((p) => h(
            "li",
            { class: "t-pairing", data: { first: p.first, second: p.second, state: p.over ? "over" : "playing" } },
            `${p.first} v ${p.second}: `,
            p.over
              ? `${p.firstMarks}–${p.secondMarks} marks, ${p.firstMarks > p.secondMarks ? `${p.first} won` : p.secondMarks > p.firstMarks ? `${p.second} won` : "drawn"}`
              : "being played",
          )),
          r.bye ? h("li", { class: "t-bye", data: { bye: r.bye } }, `${r.bye} sits out: a bye, scored as a win`) : null,
        ),
      )),
    );
  }

  private gameLine(t: Tournament, deal: Deal, g: TournamentGame): HTMLElement {
    const title = t.duplicate ? `Playing ${g.rotation + 1}` : `Game ${g.number + 1}`;
    const sides = t.teams.map((team, i) => h("span", { class: `side${g.winner === i ? " won" : ""}` },
      this.teamName(g, i), h("small", {}, ` (${team.seats.length > 1 ? "seats" : "seat"} ${team.seats.join(", ")})`)));
    const versus: Child[] = sides.flatMap((side, i) => (i ? [" v ", side] : [side]));
    const where = `deal ${deal.number + 1}${t.duplicate ? `, playing ${g.rotation + 1}` : ""}`;
    // kind: what the game is to a person (and to the browser tests, as data-state).
    let kind: "to come" | "not played" | "closed" | "waiting" | "playing" | "finished" | "abandoned";
    let state: Child;
    let go: Child = null;
    if (!g.gameId) {
      kind = t.status === TournamentStatus.CANCELLED ? "not played" : "to come";
      state = kind;
    } else if (deal.state === "closed") {
      kind = "closed";
      state = [
        h("span", { class: "closed-doors" }, "behind closed doors"),
        g.status === GameStatus.FINISHED
          ? " over: shown once the deal's other playings are over"
          : " in play: its deal is being played at other tables",
      ];
    } else if (g.status === GameStatus.FINISHED) {
      kind = "finished";
      const w = g.winner ?? 0;
      const others = g.scores.filter((_, i) => i !== w).map((s) => String(s)).join(" and ");
      state = g.scores.length ? `${this.teamName(g, w)} won, ${scoreText(g.scores[w], t.rules)} to ${others}` : "over";
      go = h("a", { href: `#/replay/${g.gameId}`, class: "t-go", aria: { label: `Replay ${where}` } }, "Replay");
    } else if (g.status === GameStatus.ABANDONED) {
      kind = "abandoned";
      state = "abandoned: closed with no winner";
    } else {
      kind = g.status === GameStatus.OPEN ? "waiting" : "playing";
      state = kind === "waiting" ? "waiting for its players" : "in play";
      go = h("a", { href: `#/game/${g.gameId}`, class: "t-go", aria: { label: `Watch ${where}` } }, "Watch");
    }
    return h(
      "li",
      { class: `t-game t-${kind.replace(" ", "-")}`, data: { game: g.gameId, number: g.number, deal: g.deal, state: kind } },
      h("div", { class: "t-game-head" }, h("span", { class: "t-game-title" }, title), go),
      h("div", { class: "t-sides" }, versus),
      h("div", { class: "t-game-state" }, state),
    );
  }

  private gamesSection(answer: GetTournamentResponse): HTMLElement {
    const t = answer.tournament!;
    const said: Record<Deal["state"], string> = {
      "to come": "to come",
      "not played": "not played",
      closed: `behind closed doors until all its playings are over`,
      open: "being played",
      over: "over",
    };
    return h(
      "section",
      { class: "t-games", aria: { label: "games" } },
      h("h2", {}, "Games"),
      t.duplicate ? h("p", { class: "hint" }, `Duplicate: each deal is played ${t.teams.length === 2 ? "twice" : `${t.teams.length} times`} with the same hands, the ${t.teams[0]?.seats.length > 1 ? "partnerships" : "players"} swapping them, so every side plays every hand. A deal's playings are played at once, and nothing of them is shown until all are over.`) : null,
      dealsOf(answer).map((deal) => h(
        "section",
        { class: `t-deal t-deal-${deal.state.replace(" ", "-")}`, aria: { label: `deal ${deal.number + 1}` } },
        h("h3", {}, `Deal ${deal.number + 1}`, isSwiss(t) && deal.games[0] ? ` (round ${deal.games[0].round})` : "", h("span", { class: "t-deal-state" }, ` · ${said[deal.state]}`)),
        h("ul", {}, deal.games.map((g) => this.gameLine(t, deal, g))),
      )),
    );
  }

  render(): void {
    const answer = this.answer;
    const t = answer?.tournament;
    redrawKeepingFocus(this.root, () => {
      if (!answer || !t) {
        return [
          h("header", {}, h("h1", {}, "Tournament"), this.following === "stopped" ? null : this.connectionLine()),
          this.following === "stopped" ? h("p", { class: "refusal", role: "alert" }, this.note) : null,
          h("p", {}, h("a", { href: "#/tournaments" }, "All tournaments")),
        ];
      }
      const clock = clockText(t);
      const hands = t.rules?.handLimit ? `, each game ${t.rules.handLimit === 1 ? "one hand" : `${t.rules.handLimit} hands`}` : "";
      const deals = dealsOf(answer);
      const done = deals.filter((d) => d.state === "over").length;
      const partners = t.teams.some((team) => team.seats.length > 1);
      return [
        h(
          "header",
          { class: "t-head" },
          h("p", { class: "crumbs" }, h("a", { href: "#/tournaments" }, "Tournaments")),
          h("h1", {}, t.name),
          h("p", { class: "meta" }, `${gameTitle(t.rules)}${hands} · ${isSwiss(t) ? `Swiss, ${count(t.rounds, "round")} of ${count(t.deals, "deal")} a pairing, each played twice` : `${count(t.deals, "deal")}${t.duplicate ? ", duplicate" : ""}`} · ${entrantsText(t)}: ${t.entrants.join(", ")}`),
          h("p", { class: "meta" }, `organised by ${t.organiser || "?"} · made ${when(t.createTime)}`, clock ? ` · ${clock}` : ""),
          this.connectionLine(),
        ),
        h(
          "section",
          { class: `t-status t-${STATES[t.status].replace(" ", "-")}`, aria: { label: "progress" }, data: { status: STATES[t.status] } },
          h("p", { class: "t-state-line" }, this.stateLine(answer)),
          t.status === TournamentStatus.CREATED ? null : progressBar(t, "games over"),
        ),
        this.winner(),
        isSwiss(t)
          ? [
              h(
                "section",
                { class: "t-standings", aria: { label: "standings" } },
                h("h2", {}, "Standings"),
                answer.rounds.length
                  ? [
                      h("p", { class: "hint" }, "A pairing plays each deal of its round twice, the partnerships swapping seats; more marks over its games wins it: 1 point, a draw ½; a bye scores as a win. Ties are broken by Buchholz (the scores of the opponents met), then by the marks difference, then by name."),
                      this.swissStandings(answer.swissStandings),
                    ]
                  : h("p", {}, t.status === TournamentStatus.CREATED ? "No game is played yet." : "No round is paired yet."),
              ),
              answer.rounds.length ? this.roundsSection(answer.rounds) : null,
            ]
          : h(
          "section",
          { class: "t-standings", aria: { label: "standings" } },
          h("h2", {}, "Standings"),
          answer.individuals.length
            ? [
                h("p", { class: "hint" }, `From ${done} of ${count(t.deals, "deal")} (a deal counts once every playing of it is over). OpenSkill ratings; ordered by the ordinal, rating − 3 × uncertainty: a rating the player is almost surely above.`),
                this.standings(answer.individuals, "Entrant", "standings of the entrants"),
                partners && answer.partnerships.length
                  ? [h("h3", {}, "Partnerships"), this.standings(answer.partnerships, "Partnership", "standings of the partnerships")]
                  : null,
              ]
            : h("p", {}, t.status === TournamentStatus.CREATED
                ? "No game is played yet."
                : t.status === TournamentStatus.CANCELLED
                  ? "No deal was played out before it was cancelled."
                  : "No deal is over yet: a deal counts in the standings once every playing of it is over."),
        ),
        this.gamesSection(answer),
      ];
    });
  }
}

/** Why the page cannot show a tournament, as a person reads it: the address names none. */
function refusedText(error: unknown): string {
  const e = ConnectError.from(error);
  if (e.code === Code.NotFound) return `There is no such tournament on this server (${e.rawMessage}).`;
  if (e.code === Code.InvalidArgument) return `This address does not name a tournament (${e.rawMessage}).`;
  return refusal(e);
}

function fixed(x: number): string {
  return x.toFixed(2);
}

export function tournamentPage(root: HTMLElement, id: string, signal: AbortSignal): void {
  const view = new TournamentView(root);
  view.render();
  void followTournament(id, {
    onAnswer: (answer) => view.show(answer),
    onFollowing: (state, note) => view.follows(state, note),
  }, signal).catch((error) => view.follows("stopped", refusedText(error)));
}
