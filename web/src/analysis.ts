// The analysis of a finished hand, as ArchiveService.AnalyzeHand gives it (the server's solver,
// every hand known): for each play, the value of each tile the seat could play there, and what
// the tile played cost against the best. The page only shows the server's numbers; it values
// nothing itself.

import { h } from "./dom";
import { AnalysisMeasure, type AnalyzedPlay, type AnalyzeHandResponse, type GameRecord } from "@boneyard/client";
import { tileName } from "./tiles";
import { count } from "./words";

/** Where a hand's plays are in the record: the version of each TilePlayed and its trick. */
export interface PlayPlace {
  version: number;
  trick: number;
}

/** The hand number (HandDealt.number) of each version of the record (0 before the first deal),
 * and the places of each hand's plays, in order. */
export function handsOf(record: GameRecord): { handAt: number[]; plays: Map<number, PlayPlace[]> } {
  const handAt: number[] = [0];
  const plays = new Map<number, PlayPlace[]>();
  let hand = 0;
  let trick = 1;
  record.events.forEach(({ event }, i) => {
    const kind = event?.kind;
    if (kind?.case === "handDealt") {
      hand = kind.value.number;
      trick = 1;
      plays.set(hand, []);
    } else if (kind?.case === "tilePlayed") {
      plays.get(hand)?.push({ version: i + 1, trick });
    } else if (kind?.case === "trickWon") {
      trick += 1;
    }
    handAt.push(hand);
  });
  return { handAt, plays };
}

export type Analysis =
  | { state: "loading" }
  | { state: "refused"; why: string }
  | { state: "done"; answer: AnalyzeHandResponse };

function unit(answer: AnalyzeHandResponse): string {
  return answer.measure === AnalysisMeasure.POINTS ? "point" : "trick";
}

/** "a, b and c" (`word` "or": "a, b or c"). */
function listed(all: readonly string[], word = "and"): string {
  return all.length > 1 ? `${all.slice(0, -1).join(", ")} ${word} ${all[all.length - 1]}` : (all[0] ?? "");
}

function orList(all: readonly string[]): string {
  return listed(all, "or");
}

function names(seats: readonly number[], name: (seat: number) => string): string {
  return listed(seats.map(name));
}

/** What a play cost, in words: "cost 4 points", or "best". */
function costText(play: AnalyzedPlay, answer: AnalyzeHandResponse): string {
  return play.cost > 0 ? `cost ${count(play.cost, unit(answer))}` : play.options.length === 1 ? "only tile" : "best";
}

/** One line for the step the replay is at, when it is a play: what it was worth, and the best. */
export function playNote(answer: AnalyzeHandResponse, play: AnalyzedPlay, name: (seat: number) => string): string {
  const u = unit(answer);
  const played = `${name(play.seat)}'s ${tileName(play.tile)} leaves the bidding side ${count(play.playedValue, u)}`;
  if (play.options.length === 1) return `${played}: the only legal tile.`;
  if (play.cost === 0) return `${played}: a best play.`;
  const best = orList(play.options.filter((o) => o.value === play.bestValue).map((o) => tileName(o.tile)));
  return `${played}; ${best} would leave ${count(play.bestValue, u)}: this play cost ${count(play.cost, u)}.`;
}

export interface PanelOptions {
  hand: number;
  analysis: Analysis;
  places: readonly PlayPlace[];
  /** The version the replay is at: its play, if one, is marked. */
  at: number;
  name: (seat: number) => string;
  /** Step the replay to a version. */
  go: (version: number) => void;
  retry: () => void;
}

export function analysisPanel(o: PanelOptions): HTMLElement {
  const head = h("h2", {}, `Analysis of hand ${o.hand}`);
  const section = (...children: (HTMLElement | null)[]): HTMLElement =>
    h("section", { class: "analysis", aria: { label: "analysis" }, data: { hand: o.hand, state: o.analysis.state } }, head, ...children);
  if (o.analysis.state === "loading") return section(h("p", { class: "meta" }, "The solver is valuing every play of this hand…"));
  if (o.analysis.state === "refused") {
    return section(
      h("p", { class: "refusal", role: "alert" }, `No analysis: ${o.analysis.why}`),
      h("button", { type: "button", onclick: o.retry }, "Try again"),
    );
  }
  const answer = o.analysis.answer;
  if (answer.measure === AnalysisMeasure.UNSPECIFIED || !answer.plays.length) {
    return section(h("p", { class: "meta" }, "Nothing to analyse in this hand: no tile was played, or its contract leaves no choice to value."));
  }
  const u = unit(answer);
  const side = names(answer.biddingSide, o.name);
  const wants = answer.biddingSideWantsMore ? "more" : "fewer";
  const costly = answer.plays.filter((p) => p.cost > 0);
  const total = (seats: (p: AnalyzedPlay) => boolean): number => costly.filter(seats).reduce((n, p) => n + p.cost, 0);
  const onSide = (p: AnalyzedPlay): boolean => answer.biddingSide.includes(p.seat);
  const lost = (n: number): string => (n ? count(n, u) : "nothing");
  const summary = costly.length
    ? `${count(costly.length, "play")} ${costly.length === 1 ? "was" : "were"} not best: the bidding side's plays cost it ${lost(total(onSide))}, the other side's cost it ${lost(total((p) => !onSide(p)))}.`
    : "Every play was a best play.";
  return section(
    h(
      "p",
      { class: "meta" },
      `Each legal tile's value is the ${u}s the bidding side (${side}) ends the hand with if that tile is played there and everyone plays best after it; it wants ${wants}, the others the opposite. Exact, with every hand known.`,
    ),
    h("p", { class: `an-summary${costly.length ? " an-costly" : ""}` }, summary),
    h(
      "ol",
      { class: "an-plays" },
      answer.plays.map((play, i) => {
        const place = o.places[i];
        const current = place !== undefined && place.version === o.at;
        const label = `${place ? `Trick ${place.trick}: ` : ""}${o.name(play.seat)} played ${tileName(play.tile)}`;
        return h(
          "li",
          {
            class: `an-play${play.cost > 0 ? " an-costly" : ""}${current ? " an-current" : ""}`,
            data: { seat: play.seat, tile: play.tile, cost: play.cost },
            aria: current ? { current: "step" } : {},
          },
          h(
            "div",
            { class: "an-head" },
            place
              ? h("button", { type: "button", class: "an-go", title: "show this play", onclick: () => o.go(place.version) }, label)
              : h("span", { class: "an-go" }, label),
            h("span", { class: `an-badge ${play.cost > 0 ? "an-badge-cost" : "an-badge-best"}` }, play.cost > 0 ? `✗ ${costText(play, answer)}` : `✓ ${costText(play, answer)}`),
          ),
          h(
            "ul",
            { class: "an-values", aria: { label: `values of ${o.name(play.seat)}'s legal tiles` } },
            play.options.map((option) => {
              const best = option.value === play.bestValue;
              const played = option.tile === play.tile;
              return h(
                "li",
                { class: `an-value${best ? " an-best" : ""}${played ? " an-played" : ""}`, data: { tile: option.tile } },
                h("span", { class: "an-tile" }, tileName(option.tile)),
                " ",
                h("span", { class: "an-number" }, String(option.value)),
                played || (best && play.options.length > 1)
                  ? h("small", {}, ` ${[played ? "played" : "", best && play.options.length > 1 ? "best" : ""].filter(Boolean).join(", ")}`)
                  : null,
              );
            }),
          ),
        );
      }),
    ),
  );
}
