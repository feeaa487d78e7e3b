// Ratings: the leaderboard of each game type (RatingService.GetLeaderboard, a page at a time,
// each name linking to the account's page), and one account's ratings with their history
// (RatingService.GetRating), shown on its public page (#/player/NAME) and on your own (me.ts).
// Ratings are public: no key is sent.

import { Code, ConnectError } from "@connectrpc/connect";
import { ratings, refusal } from "./api";
import { GAME_TYPES, changeText, gameTypeTitle, ratingText, signedIn, timeText } from "./account";
import { draw, h, svg } from "./dom";
import { type GameTypeRating, type LeaderboardEntry, type RatingHistoryEntry } from "@boneyard/client";
import { count } from "./words";

/** Lines of the leaderboard asked for at a time. */
const PAGE = 50;
/** Rated games shown in a rating's history. */
const HISTORY = 50;
/** Of which shown at first (the newest). */
const HISTORY_SHOWN = 10;

function ordinal(mu: number, sigma: number): number {
  return mu - 3 * sigma;
}

export function playerHref(name: string): string {
  return `#/player/${encodeURIComponent(name)}`;
}

/** The leaderboard of one game type (`slug`: "texas42" or "moon"; unknown: the first). */
export function leaderboardPage(root: HTMLElement, slug: string | undefined, signal: AbortSignal): void {
  const type = GAME_TYPES.find((t) => t.slug === slug) ?? GAME_TYPES[0];
  const me = signedIn()?.name;
  const lines: LeaderboardEntry[] = [];
  let next = "";
  let loaded = false;
  let error: string | undefined;
  const load = async (more: boolean): Promise<void> => {
    try {
      const page = await ratings.getLeaderboard({ gameType: type.family, pageSize: PAGE, pageToken: more ? next : "" }, { signal });
      lines.push(...page.entries);
      next = page.nextPageToken;
      error = undefined;
    } catch (e) {
      if (signal.aborted) return;
      error = refusal(e);
    }
    loaded = true;
    render();
  };
  const row = (entry: LeaderboardEntry): HTMLElement => {
    const r = entry.rating!;
    const mine = r.accountName === me;
    return h(
      "tr",
      { class: mine ? "mine" : undefined, data: { account: r.accountName } },
      h("td", { class: "rank" }, String(entry.rank)),
      h(
        "th",
        { scope: "row" },
        h("a", { href: playerHref(r.accountName) }, r.accountName),
        mine ? " (you)" : "",
        r.provisional ? h("span", { class: "provisional", title: "fewer than 10 rated games" }, " provisional") : null,
      ),
      h("td", { class: "rating" }, ratingText(r.ordinal)),
      h("td", { class: "mu-sigma" }, `${r.mu.toFixed(1)} ± ${r.sigma.toFixed(1)}`),
      h("td", { class: "games" }, String(r.games)),
    );
  };
  const render = (): void => {
    draw(
      root,
      h("header", {}, h("h1", {}, "Leaderboard"), h("p", { class: "meta" }, `The accounts rated in ${type.title}, the best first.`)),
      h(
        "nav",
        { class: "tabs", aria: { label: "game types" } },
        GAME_TYPES.map((t) => h("a", { href: `#/leaderboard/${t.slug}`, class: "tab", aria: t === type ? { current: "page" } : undefined }, t.title)),
      ),
      error ? h("p", { class: "refusal", role: "alert" }, error) : null,
      !loaded
        ? h("p", {}, "Reading the leaderboard…")
        : lines.length
          ? h(
              "table",
              { class: "leaderboard", aria: { label: `${type.title} leaderboard` } },
              h(
                "thead",
                {},
                h("tr", {},
                  h("th", { scope: "col", class: "rank" }, h("abbr", { title: "place" }, "#")),
                  h("th", { scope: "col" }, "Player"),
                  h("th", { scope: "col", class: "rating" }, "Rating"),
                  h("th", { scope: "col", class: "mu-sigma" }, "μ ± σ"),
                  h("th", { scope: "col", class: "games" }, "Games")),
              ),
              h("tbody", {}, lines.map(row)),
            )
          : error
            ? null
            : h("p", {}, `No account has a ${type.title} rating yet: ratings come from rated games (a rated challenge, a seek, a tournament).`),
      next ? h("button", { type: "button", onclick: () => void load(true) }, "More") : null,
      h(
        "p",
        { class: "hint" },
        "The rating is OpenSkill's μ − 3σ: the skill an account almost surely has at least. μ is the estimate (25 to start), σ how unsure it still is (8.3 to start); it narrows as games are played. ",
        "A rating is provisional until 10 rated games. Rated games: ",
        h("a", { href: "#/challenges" }, "a rated challenge or a seek"),
        ", and tournaments.",
      ),
    );
  };
  render();
  void load(false);
}

/** The line of a rating's path: after each rated game, oldest first (and where it started). */
function chart(history: readonly RatingHistoryEntry[], title: string): HTMLElement | null {
  if (!history.length) return null;
  const oldest = [...history].reverse();
  const points = [ordinal(oldest[0].muBefore, oldest[0].sigmaBefore), ...oldest.map((e) => ordinal(e.muAfter, e.sigmaAfter))];
  const low = Math.min(...points);
  const high = Math.max(...points);
  const span = Math.max(high - low, 1);
  const W = 300;
  const H = 80;
  const x = (i: number): number => 6 + (i * (W - 12)) / Math.max(points.length - 1, 1);
  const y = (v: number): number => H - 8 - ((v - low) * (H - 16)) / span;
  const line = points.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const said = `${title} rating over its last ${count(history.length, "rated game")}: from ${ratingText(points[0])} to ${ratingText(points.at(-1)!)}`;
  return h(
    "figure",
    { class: "rating-figure" },
    svg(
      "svg",
      { class: "rating-chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": said, preserveAspectRatio: "none" },
      svg("polyline", { points: line, fill: "none", stroke: "#1f5fa8", "stroke-width": 2, "vector-effect": "non-scaling-stroke" }),
      ...points.map((v, i) => svg("circle", { cx: x(i), cy: y(v), r: 3, fill: i === points.length - 1 ? "#c0392b" : "#1f5fa8" })),
    ),
    h("figcaption", { class: "meta", aria: { hidden: "true" } }, `After each rated game, oldest first: from ${ratingText(points[0])} to ${ratingText(points.at(-1)!)}; highest ${ratingText(high)}, lowest ${ratingText(low)}.`),
  );
}

function historyLine(e: RatingHistoryEntry): HTMLElement {
  const before = ordinal(e.muBefore, e.sigmaBefore);
  const after = ordinal(e.muAfter, e.sigmaAfter);
  const delta = after - before;
  return h(
    "li",
    { data: { game: e.gameId } },
    h("span", { class: `change ${delta > 0 ? "up" : delta < 0 ? "down" : "same"}` }, changeText(delta)),
    ` ${ratingText(before)} → ${ratingText(after)} · `,
    h("a", { href: `#/replay/${encodeURIComponent(e.gameId)}` }, `game ${e.gameId.slice(0, 8)}`),
    h("span", { class: "when" }, timeText(e.rateTime)),
  );
}

function gameTypeCard(rating: GameTypeRating): HTMLElement {
  const r = rating.rating!;
  const title = gameTypeTitle(r.gameType);
  return h(
    "section",
    { class: "rating-card", aria: { label: `${title} rating` }, data: { "game-type": title } },
    h("h3", {}, title),
    h(
      "p",
      { class: "rating-now" },
      h("span", { class: "rating-value" }, ratingText(r.ordinal)),
      r.provisional ? h("span", { class: "provisional" }, "provisional") : null,
    ),
    h(
      "p",
      { class: "meta rating-parts" },
      `μ ${r.mu.toFixed(2)} · σ ${r.sigma.toFixed(2)} · ${count(r.games, "rated game")}`,
      r.provisional ? ` (provisional until ${count(10, "game")})` : "",
    ),
    chart(rating.history, title),
    rating.history.length
      ? h("details", { class: "rating-history", open: true },
          h("summary", {}, rating.history.length < r.games ? `The last ${count(rating.history.length, "rated game")}` : "Rated games, the newest first"),
          h("ul", { class: "history" }, rating.history.slice(0, HISTORY_SHOWN).map(historyLine)),
          rating.history.length > HISTORY_SHOWN
            ? h("details", { class: "earlier" }, h("summary", {}, `${count(rating.history.length - HISTORY_SHOWN, "earlier game")}`),
                h("ul", { class: "history" }, rating.history.slice(HISTORY_SHOWN).map(historyLine)))
            : null)
      : null,
  );
}

/** An account's ratings, one card per game type, drawn in `root`; `reload` asks again (a
 * rated game finished). `own`: worded for the signed-in account. */
export function ratingPanel(root: HTMLElement, name: string, signal: AbortSignal, own = false): { reload: () => Promise<void> } {
  let error: string | undefined;
  let shown: GameTypeRating[] | undefined;
  let missing = false;
  const render = (): void => {
    draw(
      root,
      error ? h("p", { class: "refusal", role: "alert" }, error) : null,
      missing ? h("p", {}, `No account is named “${name}”.`) : null,
      shown === undefined && !error && !missing ? h("p", {}, "Reading the ratings…") : null,
      shown && !shown.length
        ? h("p", {}, own ? "No rated game yet. " : `${name} has played no rated game yet. `, "Ratings come from rated games: ", h("a", { href: "#/challenges" }, "a rated challenge or a seek"), ", and tournaments.")
        : null,
      shown?.length ? h("div", { class: "rating-cards" }, shown.map(gameTypeCard)) : null,
    );
  };
  const reload = async (): Promise<void> => {
    try {
      const answer = await ratings.getRating({ accountName: name, historySize: HISTORY }, { signal });
      // In the leaderboard's order of game types (Texas 42, then Moon).
      const order = (r: GameTypeRating): number => GAME_TYPES.findIndex((t) => t.family === r.rating?.gameType);
      shown = [...answer.ratings].sort((a, b) => order(a) - order(b));
      error = undefined;
    } catch (e) {
      if (signal.aborted) return;
      if (ConnectError.from(e).code === Code.NotFound) missing = true;
      else error = refusal(e);
    }
    render();
  };
  render();
  void reload();
  return { reload };
}

/** An account's public page: its ratings and their history. */
export function playerPage(root: HTMLElement, name: string, signal: AbortSignal): void {
  const me = signedIn();
  const panel = h("div", { class: "ratings" });
  draw(
    root,
    h("header", {}, h("h1", {}, name), h("p", { class: "meta" }, "Ratings and rated games. ", h("a", { href: "#/leaderboard" }, "The leaderboard"))),
    me && me.name !== name
      ? h("p", {}, h("a", { href: `#/challenges/${encodeURIComponent(name)}`, class: "button-link" }, `Challenge ${name}`))
      : null,
    h("section", { aria: { label: "ratings" } }, h("h2", {}, "Ratings"), panel),
  );
  ratingPanel(panel, name, signal, me?.name === name);
}
