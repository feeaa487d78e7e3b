// Matches: the list (MatchService.ListMatches), and a match's page (GetMatch and
// ListMatchDeals): who plays whom, how long (a number of deals, or until the SPRT decides),
// where it is, its answer in words, its figures (the mean a deal with its 95% interval, the win
// rate with its Wilson interval, the SPRT's log-likelihood ratio between its bounds) and its
// deals, each playing linked to its replay once the deal is counted. docs/competitions.md
// says what each number means; the page shows the server's numbers and works none out.
//
// The server plays a match by itself; the page follows it without a click, by asking
// (match_poll.ts), until it is over.

import { Code, ConnectError } from "@connectrpc/connect";
import { games, matches, refusal } from "./api";
import { announce, type Child, h } from "./dom";
import {
  GameStatus, type GameSummary, type Match, type MatchDeal, MatchScoring, MatchStatus,
  MatchVerdict,
} from "@boneyard/client";
import { followMatch, matchDeals } from "./match_poll";
import { clockText, redrawKeepingFocus, when } from "./tournaments";
import { type Following, pollList } from "./tournament_poll";
import { count, gameTitle, scoreUnit } from "./words";

/** Deals shown at first, and how many more each "More deals" shows. */
const DEALS_SHOWN = 50;
/** The deals the SPRT needs before it may decide (docs/competitions.md). */
const SPRT_FIRST_DEALS = 30;
/** Playings whose scores are asked for at once (GetGame, once each: a counted deal's games are
 * over and never change). */
const SUMMARIES_AT_ONCE = 8;

const STATES: Record<MatchStatus, string> = {
  [MatchStatus.UNSPECIFIED]: "",
  [MatchStatus.RUNNING]: "being played",
  [MatchStatus.FINISHED]: "finished",
  [MatchStatus.CANCELLED]: "cancelled",
};

function stateClass(m: Match): string {
  return `t-${STATES[m.status].replace(" ", "-")}`;
}

/** "+0.25", "−1.50", "0.00": a figure with its sign (a true minus sign). */
function signed(x: number, digits = 2): string {
  const shown = Math.abs(x).toFixed(digits);
  if (/^[0.]*$/.test(shown)) return shown;
  return `${x > 0 ? "+" : "−"}${shown}`;
}

function percent(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

/** What a deal's figure counts: "marks", or "points" (count points, or a game to points). */
function unitOf(m: Match): string {
  return m.scoring === MatchScoring.POINTS ? "points" : scoreUnit(m.rules);
}

function isSprt(m: Match): boolean {
  return m.sprt !== undefined;
}

/** "0.1": the edge H1 says A has over H0. */
function edge(m: Match): string {
  return String(Number(((m.sprt?.m1 ?? 0) - (m.sprt?.m0 ?? 0)).toFixed(6)));
}

/** "10,000". */
function big(n: number): string {
  return n.toLocaleString("en-US");
}

/** How long the match is, in a line: "100 deals", or the SPRT's hypotheses and error rates:
 * "SPRT: better by 0.1 marks a deal or no better, α 0.05, β 0.05, at most 10,000 deals". */
function lengthText(m: Match): string {
  if (!m.sprt) return `${big(m.deals)} deal${m.deals === 1 ? "" : "s"}`;
  const s = m.sprt;
  const unit = unitOf(m);
  const hypotheses = s.m0 === 0 ? `better by ${s.m1} ${unit} a deal or no better` : `A − B ${s.m1} or ${s.m0} ${unit} a deal`;
  return `SPRT: ${hypotheses}, α ${s.alpha}, β ${s.beta}, at most ${big(s.maxDeals)} deals`;
}

/** "Texas 42 (texas42), each game one hand". */
function gameText(m: Match): string {
  const hands = m.rules?.handLimit ? `, each game ${m.rules.handLimit === 1 ? "one hand" : `${m.rules.handLimit} hands`}` : "";
  return `${gameTitle(m.rules)}${hands}`;
}

interface Answer {
  /** What the answer is, for the browser tests (data-answer). */
  kind: "stronger" | "not-stronger" | "undecided" | "b-stronger" | "no-difference" | "none";
  title: string;
  detail: string;
}

/** The match's answer to "is A stronger than B?" in words: the SPRT's verdict, or, for a
 * match of a fixed number of deals, what the mean's 95% interval says (clear of 0, or not). */
function answerOf(m: Match): Answer {
  const [a, b, unit] = [m.entrantA, m.entrantB, unitOf(m)];
  const running = m.status === MatchStatus.RUNNING;
  const cancelled = m.status === MatchStatus.CANCELLED;
  if (isSprt(m)) {
    const after = m.dealsFinished - m.dealsAtVerdict;
    const playedOut = after > 0 ? ` The ${count(after, "deal")} then in play ${after === 1 ? "was" : "were"} played out: ${after === 1 ? "it counts" : "they count"} in the figures, not in the verdict.` : "";
    switch (m.verdict) {
      case MatchVerdict.A_STRONGER:
        return {
          kind: "stronger",
          title: `${a} is stronger than ${b}`,
          detail: `The SPRT accepted H1, ${a} better by ${edge(m)} ${unit} a deal, after ${count(m.dealsAtVerdict, "deal")}: its LLR reached ${signed(m.llrAtVerdict)}, at or above its upper bound ${signed(m.llrUpperBound)}.${playedOut}`,
        };
      case MatchVerdict.A_NOT_STRONGER:
        return {
          kind: "not-stronger",
          title: `${a} is not stronger than ${b} by ${edge(m)} ${unit} a deal`,
          detail: `The SPRT accepted H0, ${a} no better (${m.sprt!.m0} ${unit} a deal), after ${count(m.dealsAtVerdict, "deal")}: its LLR reached ${signed(m.llrAtVerdict)}, at or below its lower bound ${signed(m.llrLowerBound)}.${playedOut}`,
        };
      default: {
        const between = `its LLR, ${signed(m.llr)}, is between its bounds ${signed(m.llrLowerBound)} and ${signed(m.llrUpperBound)}`;
        if (running && m.dealsFinished < SPRT_FIRST_DEALS) {
          return { kind: "undecided", title: "Undecided so far", detail: `The test decides nothing before ${SPRT_FIRST_DEALS} deals (the spread of fewer is no measure): ${m.dealsFinished} counted.` };
        }
        if (running) return { kind: "undecided", title: "Undecided so far", detail: `The SPRT has not decided: ${between}. The match plays on until it leaves them, or ${big(m.sprt!.maxDeals)} deals.` };
        return {
          kind: "undecided",
          title: "Undecided",
          detail: cancelled
            ? `Cancelled before the SPRT decided: ${between}.`
            : `${count(m.dealsFinished, "deal")} played and the SPRT never decided: ${between}.`,
        };
      }
    }
  }
  if (m.dealsFinished < 2) {
    const none = cancelled ? "No answer: cancelled" : running ? "No answer yet" : "No answer";
    return {
      kind: "none",
      title: none,
      detail: m.dealsFinished
        ? "One deal is counted: an interval needs two (a deal counts once both its playings are over)."
        : "No deal is counted yet: a deal counts once both its playings are over.",
    };
  }
  const i = m.meanInterval ?? { low: 0, high: 0 };
  const where = `${a} minus ${b}: ${signed(m.mean)} ${unit} a deal, its 95% interval ${signed(i.low)} to ${signed(i.high)}`;
  const sofar = running ? "So far, " : "";
  const after = ` (${count(m.dealsFinished, "deal")})`;
  if (i.low > 0) return { kind: "stronger", title: `${sofar}${a} is stronger than ${b}`, detail: `${where}, clear of 0${after}.` };
  if (i.high < 0) return { kind: "b-stronger", title: `${sofar}${b} is stronger than ${a}`, detail: `${where}, clear of 0${after}.` };
  return {
    kind: "no-difference",
    title: running ? "No clear difference so far" : "No clear difference",
    detail: `${where}, holds 0${after}: neither is shown stronger.`,
  };
}

/** The answer in one line of the list. */
function answerLine(m: Match): string {
  const answer = answerOf(m);
  if (isSprt(m)) {
    if (answer.kind !== "undecided") return `${answer.title} (after ${count(m.dealsAtVerdict, "deal")})`;
    return `${answer.title}: LLR ${signed(m.llr)}, bounds ${signed(m.llrLowerBound)} and ${signed(m.llrUpperBound)}`;
  }
  if (answer.kind === "none") return answer.title;
  const i = m.meanInterval ?? { low: 0, high: 0 };
  return `${answer.title}: ${signed(m.mean)} ${unitOf(m)} a deal (95%: ${signed(i.low)} to ${signed(i.high)})`;
}

/** "12 of 100 deals counted, 2 in play" / "34 deals counted". */
function dealsLine(m: Match): string {
  const inPlay = m.dealsStarted - m.dealsFinished;
  const counted = isSprt(m) ? `${count(m.dealsFinished, "deal")} counted` : `${m.dealsFinished} of ${count(m.deals, "deal")} counted`;
  return inPlay > 0 ? `${counted}, ${inPlay} in play` : counted;
}

function progressOf(m: Match, label: string): HTMLElement | null {
  if (isSprt(m)) return null; // (its progress is the LLR's way to a bound, not a count)
  return h("progress", { max: String(Math.max(m.deals, 1)), value: String(m.dealsFinished), aria: { label } });
}

// --- the list ------------------------------------------------------------------------------

export function matchesPage(root: HTMLElement, signal: AbortSignal): void {
  let listed: Match[] | undefined;
  let error: string | undefined;
  const render = (): void => {
    redrawKeepingFocus(root, () => [
      h(
        "header",
        {},
        h("h1", {}, "Matches"),
        h("p", {}, "Is A stronger than B? The server plays each match by itself: two accounts' bots on duplicate deals, each deal twice with the hands swapped, until the deals asked for are played or a sequential test (SPRT) decides."),
      ),
      error ? h("p", { class: "refusal", role: "alert" }, error) : null,
      listed === undefined && !error ? h("p", { class: "meta" }, "Reading the matches…") : null,
      listed?.length === 0 ? h("p", {}, "No match yet. An organiser makes one with ", h("code", {}, "boneyard match create"), "; the two accounts' bots play it.") : null,
      listed?.length
        ? h("ul", { class: "tournament-list match-list" }, listed.map((m) => h(
            "li",
            { data: { match: m.matchId, answer: answerOf(m).kind } },
            h("a", { href: `#/match/${m.matchId}`, class: "t-name" }, `${m.entrantA} v ${m.entrantB}`),
            " ",
            h("span", { class: `t-state ${stateClass(m)}` }, STATES[m.status]),
            h("p", { class: "t-line m-answer-line" }, answerLine(m)),
            h("p", { class: "t-line" }, `${gameText(m)} · ${lengthText(m)}`),
            h("p", { class: "t-line t-progress" }, progressOf(m, `${m.entrantA} v ${m.entrantB}: deals counted`), ` ${dealsLine(m)}`),
            h("p", { class: "t-line meta" }, `organised by ${m.organiser || "?"} · made ${when(m.createTime)}`),
          )))
        : null,
      h("p", { class: "hint" }, "What the numbers mean: the mean is how much more A scores a deal than B (over the deal's two playings), with a 95% interval; the win rate counts the deals A won, a draw half; the SPRT's log-likelihood ratio (LLR) climbs while A does better than halfway between its two hypotheses and falls otherwise, and reaching a bound decides."),
    ]);
  };
  render();
  void pollList(
    async () => (await matches.listMatches({}, { signal })).matches,
    (answer) => {
      listed = answer;
      error = undefined;
      render();
    },
    (why) => {
      error = why;
      render();
    },
    (answer) => answer.map((m) => `${m.matchId}/${m.status}/${m.dealsStarted}/${m.dealsFinished}`).join(" "),
    signal,
  );
}

// --- a match -------------------------------------------------------------------------------

/** Where a figure lies on a line from `min` to `max`, in percent, kept on the line. */
function at(x: number, min: number, max: number): number {
  return Math.min(100, Math.max(0, ((x - min) / (max - min || 1)) * 100));
}

/** An interval drawn on a line (for the eye only: the text beside it says the same), with a
 * mark at `ref` (0, or 50%): whether the interval is clear of it shows at a glance. */
function intervalScale(o: { low: number; high: number; value: number; min: number; max: number; ref: number; labels: [string, string, string] }): HTMLElement {
  const pos = (x: number): string => `${at(x, o.min, o.max).toFixed(2)}%`;
  const left = at(o.low, o.min, o.max);
  const right = at(o.high, o.min, o.max);
  return h(
    "div",
    { class: "m-scale", aria: { hidden: "true" } },
    h("div", { class: "m-track" }),
    h("div", { class: "m-ref", style: `left: ${pos(o.ref)}` }),
    h("div", { class: "m-span", style: `left: ${left.toFixed(2)}%; width: ${Math.max(right - left, 0.6).toFixed(2)}%` }),
    h("div", { class: "m-point", style: `left: ${pos(o.value)}` }),
    h("span", { class: "m-tick m-tick-min" }, o.labels[0]),
    h("span", { class: "m-tick", style: `left: ${pos(o.ref)}` }, o.labels[1]),
    h("span", { class: "m-tick m-tick-max" }, o.labels[2]),
  );
}

/** The SPRT's LLR between its bounds: a meter (its value in words for a screen reader), the
 * line from the lower bound ("not stronger") to the upper ("stronger") with 0 marked. */
function llrMeter(m: Match): HTMLElement {
  const [low, high] = [m.llrLowerBound, m.llrUpperBound];
  const clamped = Math.min(high, Math.max(low, m.llr));
  const side = m.llr >= high ? "high" : m.llr <= low ? "low" : "";
  const beyond = side ? ` (at or past the ${side === "high" ? "upper" : "lower"} bound)` : "";
  return h(
    "div",
    {
      class: "m-llr",
      role: "meter",
      aria: {
        label: "log-likelihood ratio between its bounds",
        valuemin: String(low),
        valuemax: String(high),
        valuenow: String(clamped),
        valuetext: `LLR ${signed(m.llr)}${beyond}; lower bound ${signed(low)}: not stronger; upper bound ${signed(high)}: stronger`,
      },
    },
    h(
      "div",
      { class: "m-scale m-llr-scale", aria: { hidden: "true" } },
      h("div", { class: "m-track" }),
      h("div", { class: "m-bound m-bound-low" }),
      h("div", { class: "m-bound m-bound-high" }),
      h("div", { class: "m-ref", style: `left: ${at(0, low, high).toFixed(2)}%` }),
      h("div", { class: `m-point m-llr-point${side ? ` m-beyond-${side}` : ""}`, style: `left: ${at(m.llr, low, high).toFixed(2)}%` }),
      h("span", { class: "m-tick m-tick-min" }, `${signed(low)} not stronger`),
      h("span", { class: "m-tick", style: `left: ${at(0, low, high).toFixed(2)}%` }, "0"),
      h("span", { class: "m-tick m-tick-max" }, `stronger ${signed(high)}`),
    ),
  );
}

/** A playing of a deal: its game (empty while it is being made) and where that game is. */
interface Playing {
  gameId: string;
  status: GameStatus;
}

class MatchView {
  private match?: Match;
  private deals: MatchDeal[] = [];
  private more = false;
  private following: Following = "loading";
  private note = "";
  /** Why the last "More deals" failed. */
  private moreError?: string;
  /** The deals shown: the first ones. */
  wanted = DEALS_SHOWN;
  /** Each counted playing's summary (its scores), asked once; null while asked. */
  private summaries = new Map<string, GameSummary | null>();

  constructor(private readonly root: HTMLElement, private readonly id: string, private readonly signal: AbortSignal) {}

  show(match: Match, deals: MatchDeal[], more: boolean): void {
    const before = this.match;
    this.match = match;
    this.deals = deals;
    this.more = more;
    if (before && (before.status !== match.status || before.verdict !== match.verdict)) {
      announce(`${match.entrantA} v ${match.entrantB}: ${STATES[match.status]}. ${answerOf(match).title}.`);
    }
    this.render();
    void this.askScores();
  }

  follows(state: Following, note = ""): void {
    if (state === this.following && note === this.note) return;
    this.following = state;
    this.note = note;
    this.render();
  }

  /** Show `DEALS_SHOWN` more deals (the button under the deals). */
  async showMore(): Promise<void> {
    this.wanted += DEALS_SHOWN;
    try {
      const { deals, more } = await matchDeals(this.id, this.wanted, this.signal);
      this.deals = deals;
      this.more = more;
      this.moreError = undefined;
    } catch (error) {
      if (this.signal.aborted) return;
      this.wanted -= DEALS_SHOWN;
      this.moreError = refusal(error);
    }
    this.render();
    // (the button drawn anew: the keyboard stays on it, or on the last deal's first link)
    const next = this.root.querySelector<HTMLElement>("button.m-more") ?? this.root.querySelector<HTMLElement>(".m-deals tbody tr:last-child a");
    next?.focus({ preventScroll: true });
    void this.askScores();
  }

  /** Each playing's marks, for a match counted in marks (or points of a game to points): a
   * game's scores are that; a match counting the tricks' count points shows each deal's
   * figures only. Asked once per game, a few at a time, for the deals shown. */
  private async askScores(): Promise<void> {
    if (!this.match || this.match.scoring === MatchScoring.POINTS) return;
    const missing = this.deals.filter((d) => d.counted).flatMap((d) => d.gameIds).filter((id) => id && !this.summaries.has(id));
    for (let i = 0; i < missing.length && !this.signal.aborted; i += SUMMARIES_AT_ONCE) {
      const batch = missing.slice(i, i + SUMMARIES_AT_ONCE);
      for (const id of batch) this.summaries.set(id, null);
      const got = await Promise.all(batch.map((id) => games.getGame({ gameId: id }, { signal: this.signal }).then((r) => r.game, () => undefined)));
      batch.forEach((id, k) => {
        if (got[k]) this.summaries.set(id, got[k]!);
        else this.summaries.delete(id); // asked again at the next answer
      });
      if (this.signal.aborted) return;
      this.render();
    }
  }

  private connectionLine(): HTMLElement | null {
    const said = {
      loading: "Reading the match…",
      live: "● Following live: the page asks the server every few seconds while the match is being played.",
      paused: "Paused while the page is hidden.",
      reconnecting: `The server cannot be reached (${this.note}): trying again…`,
      ended: "",
      stopped: `Not following the match (${this.note}): reload the page to try again.`,
    }[this.following];
    return said ? h("p", { class: `meta connection ${this.following}`, data: { connection: this.following } }, said) : null;
  }

  private stateLine(m: Match): string {
    switch (m.status) {
      case MatchStatus.RUNNING:
        return m.verdict === MatchVerdict.A_STRONGER || m.verdict === MatchVerdict.A_NOT_STRONGER
          ? `Decided: no more deals are started, those in play are played out · ${dealsLine(m)}`
          : `Being played · ${dealsLine(m)}`;
      case MatchStatus.FINISHED:
        return `Finished · ${dealsLine(m)}`;
      case MatchStatus.CANCELLED:
        return `Cancelled by its organiser: no more deals were started, and those in play were played out and counted · ${dealsLine(m)}`;
      default:
        return dealsLine(m);
    }
  }

  private answerSection(m: Match): HTMLElement {
    const answer = answerOf(m);
    return h(
      "section",
      { class: `m-answer m-${answer.kind}`, aria: { label: "the answer" }, data: { answer: answer.kind } },
      h("h2", {}, answer.title),
      h("p", {}, answer.detail),
    );
  }

  private figures(m: Match): HTMLElement {
    const unit = unitOf(m);
    const [a, b] = [m.entrantA, m.entrantB];
    const parts: Child[] = [h("h2", {}, "Figures")];
    if (!m.dealsFinished) {
      parts.push(h("p", {}, m.status === MatchStatus.RUNNING
        ? "No deal is counted yet: a deal counts once both its playings are over."
        : "No deal was counted."));
    } else {
      const i = m.meanInterval ?? { low: 0, high: 0 };
      const w = m.winRateInterval ?? { low: 0, high: 0 };
      // The mean's line: symmetric about 0, wide enough for the interval (and H1's edge).
      const reach = Math.max(Math.abs(i.low), Math.abs(i.high), Math.abs(m.mean), m.sprt ? Math.abs(m.sprt.m1) : 0, 0.1) * 1.15;
      parts.push(
        h("p", { class: "m-totals" }, `Over ${count(m.dealsFinished, "deal")} (${count(m.dealsFinished * 2, "game")}): ${a} ${m.totalA} ${unit}, ${b} ${m.totalB}.`),
        h("div", { class: "m-cards" },
          h(
            "div",
            { class: "m-figure", data: { figure: "mean" } },
            h("h3", {}, `${a} minus ${b}, a deal`),
            h("p", { class: "m-value" }, h("span", { class: "m-big" }, signed(m.mean)), ` ${unit} a deal`),
            h("p", { class: "m-interval" }, `95% interval: ${signed(i.low)} to ${signed(i.high)}`),
            intervalScale({ low: i.low, high: i.high, value: m.mean, min: -reach, max: reach, ref: 0, labels: [signed(-reach, 1), "0", signed(reach, 1)] }),
          ),
          h(
            "div",
            { class: "m-figure", data: { figure: "win-rate" } },
            h("h3", {}, `${a}'s win rate`),
            h("p", { class: "m-value" }, h("span", { class: "m-big" }, percent(m.winRate)), " of the deals won"),
            h("p", { class: "m-interval" }, `95% Wilson interval: ${percent(w.low)} to ${percent(w.high)}`),
            h("p", { class: "m-wdl" }, `${m.wins} won, ${m.draws} drawn, ${m.losses} lost (a draw counts half)`),
            intervalScale({ low: w.low, high: w.high, value: m.winRate, min: 0, max: 1, ref: 0.5, labels: ["0%", "50%", "100%"] }),
          ),
        ),
      );
    }
    if (m.sprt) {
      const s = m.sprt;
      parts.push(h(
        "div",
        { class: "m-figure m-sprt", data: { figure: "sprt" } },
        h("h3", {}, "The sequential test (SPRT)"),
        h("p", { class: "m-value" }, "LLR ", h("span", { class: "m-big" }, signed(m.llr)), ` between ${signed(m.llrLowerBound)} and ${signed(m.llrUpperBound)}`),
        llrMeter(m),
        m.dealsAtVerdict
          ? h("p", { class: "m-interval" }, `Decided after ${count(m.dealsAtVerdict, "deal")}, at LLR ${signed(m.llrAtVerdict)}.`)
          : null,
        h(
          "dl",
          { class: "m-hypotheses" },
          h("dt", {}, "H0"), h("dd", {}, `${a} minus ${b} is ${s.m0} ${unit} a deal: ${a} is no better`),
          h("dt", {}, "H1"), h("dd", {}, `${a} minus ${b} is ${s.m1} ${unit} a deal: better by ${edge(m)}`),
          h("dt", {}, "α"), h("dd", {}, `${s.alpha}: the chance of saying “stronger” when ${a} is no better`),
          h("dt", {}, "β"), h("dd", {}, `${s.beta}: the chance of saying “not stronger” when ${a} is better by ${edge(m)}`),
          h("dt", {}, "Bounds"), h("dd", {}, `${signed(m.llrLowerBound)} = ln(β / (1 − α)) accepts H0; ${signed(m.llrUpperBound)} = ln((1 − β) / α) accepts H1`),
        ),
      ));
    }
    parts.push(h(
      "p",
      { class: "hint" },
      `A deal's figure is ${a}'s ${unit} minus ${b}'s over its two playings. The interval of the mean is normal, with the deals' standard deviation: clear of 0, it says one side is better.`,
      m.sprt ? ` The SPRT's LLR climbs while ${a} does better than halfway between H0 and H1, and falls otherwise; it decides nothing before ${SPRT_FIRST_DEALS} deals.` : "",
    ));
    return h("section", { class: "m-figures", aria: { label: "figures" } }, parts);
  }

  private playingCell(deal: MatchDeal, p: Playing | undefined, n: number): HTMLElement {
    const where = `deal ${deal.deal + 1}, playing ${n + 1}`;
    if (!p?.gameId) return h("td", { class: "m-playing", data: { label: `playing ${n + 1}`, state: "to-come" } }, "being made");
    if (!deal.counted) {
      const said = p.status === GameStatus.FINISHED ? "over" : p.status === GameStatus.OPEN ? "waiting for its bots" : p.status === GameStatus.ABANDONED ? "abandoned" : "in play";
      return h("td", { class: "m-playing", data: { label: `playing ${n + 1}`, state: "closed" } }, h("span", { class: "closed-doors" }, "behind closed doors"), ` ${said}`);
    }
    const summary = this.summaries.get(p.gameId);
    // A holds the first partnership's seats at playing 1, the second's at playing 2.
    const [mine, theirs] = n === 0 ? [0, 1] : [1, 0];
    const marks = summary && summary.scores.length >= 2 ? `A ${summary.scores[mine]} · B ${summary.scores[theirs]}` : null;
    return h(
      "td",
      { class: "m-playing", data: { label: `playing ${n + 1}`, state: "counted", game: p.gameId } },
      h("a", { href: `#/replay/${p.gameId}`, class: "t-go", aria: { label: `Replay ${where}` } }, "Replay"),
      marks ? h("span", { class: "m-playing-marks" }, marks) : null,
    );
  }

  private dealsSection(m: Match): HTMLElement {
    const unit = unitOf(m);
    const [a, b] = [m.entrantA, m.entrantB];
    const rows = this.deals.map((d) => {
      const figure = d.scoreA - d.scoreB;
      const playings: Playing[] = d.gameIds.map((gameId, i) => ({ gameId, status: d.statuses[i] ?? GameStatus.UNSPECIFIED }));
      return h(
        "tr",
        { data: { deal: d.deal, counted: String(d.counted) } },
        h("th", { scope: "row", class: "m-deal-no" }, h("span", { class: "m-phone-only" }, "Deal "), String(d.deal + 1)),
        this.playingCell(d, playings[0], 0),
        this.playingCell(d, playings[1], 1),
        h("td", { class: "num m-score", data: { label: "A" } }, d.counted ? String(d.scoreA) : "—"),
        h("td", { class: "num m-score", data: { label: "B" } }, d.counted ? String(d.scoreB) : "—"),
        h("td", { class: `num m-deal-figure${d.counted ? (figure > 0 ? " m-up" : figure < 0 ? " m-down" : "") : ""}`, data: { label: "A − B" } }, d.counted ? signed(figure, 0) : "—"),
      );
    });
    return h(
      "section",
      { class: "m-deals-section", aria: { label: "deals" } },
      h("h2", {}, "Deals"),
      h("p", { class: "hint" }, `A is ${a}, B ${b}. Each deal is played twice at once with the same hands: at playing 1 A holds the first partnership's seats and B the second's, at playing 2 they swap. A deal's playings are behind closed doors until both are over; then it is counted and its games are public, signed records. Each playing's ${unit}, and the deal's over both.`),
      this.deals.length
        ? h(
            "table",
            { class: "m-deals", aria: { label: "deals" } },
            h("thead", {}, h("tr", {},
              h("th", { scope: "col" }, "Deal"),
              h("th", { scope: "col" }, "Playing 1"),
              h("th", { scope: "col" }, "Playing 2"),
              h("th", { scope: "col", class: "num" }, "A"),
              h("th", { scope: "col", class: "num" }, "B"),
              h("th", { scope: "col", class: "num" }, "A − B"),
            )),
            h("tbody", {}, rows),
          )
        : h("p", {}, m.status === MatchStatus.RUNNING ? "No deal is started yet." : "No deal was started."),
      this.moreError ? h("p", { class: "refusal", role: "alert" }, this.moreError) : null,
      this.more
        ? h("button", { type: "button", class: "m-more", onclick: () => void this.showMore() }, `Show ${count(Math.min(DEALS_SHOWN, m.dealsStarted - this.deals.length), "more deal")}`)
        : null,
    );
  }

  render(): void {
    const m = this.match;
    redrawKeepingFocus(this.root, () => {
      if (!m) {
        return [
          h("header", {}, h("h1", {}, "Match"), this.following === "stopped" ? null : this.connectionLine()),
          this.following === "stopped" ? h("p", { class: "refusal", role: "alert" }, this.note) : null,
          h("p", {}, h("a", { href: "#/matches" }, "All matches")),
        ];
      }
      const clock = clockText(m);
      return [
        h(
          "header",
          { class: "t-head" },
          h("p", { class: "crumbs" }, h("a", { href: "#/matches" }, "Matches")),
          h("h1", {}, `${m.entrantA} v ${m.entrantB}`),
          h("p", { class: "meta" }, `${gameText(m)} · duplicate deals · ${lengthText(m)}`),
          h("p", { class: "meta" }, `A: ${m.entrantA} · B: ${m.entrantB} · figures in ${unitOf(m)}${m.scoring === MatchScoring.POINTS ? " (the count points the tricks took)" : ""} · organised by ${m.organiser || "?"} · made ${when(m.createTime)} · at most ${count(m.maxGamesInFlight, "game")} at once`, clock ? ` · ${clock}` : ""),
          this.connectionLine(),
        ),
        h(
          "section",
          { class: `t-status ${stateClass(m)}`, aria: { label: "progress" }, data: { status: STATES[m.status] } },
          h("p", { class: "t-state-line" }, this.stateLine(m)),
          progressOf(m, "deals counted"),
        ),
        this.answerSection(m),
        this.figures(m),
        this.dealsSection(m),
      ];
    });
  }
}

/** Why the page cannot show a match, as a person reads it: the address names none. */
function refusedText(error: unknown): string {
  const e = ConnectError.from(error);
  if (e.code === Code.NotFound) return `There is no such match on this server (${e.rawMessage}).`;
  if (e.code === Code.InvalidArgument) return `This address does not name a match (${e.rawMessage}).`;
  return refusal(e);
}

export function matchPage(root: HTMLElement, id: string, signal: AbortSignal): void {
  const view = new MatchView(root, id, signal);
  view.render();
  void followMatch(id, {
    dealsWanted: () => view.wanted,
    onAnswer: (match, deals, more) => view.show(match, deals, more),
    onFollowing: (state, note) => view.follows(state, note),
  }, signal).catch((error) => view.follows("stopped", refusedText(error)));
}
