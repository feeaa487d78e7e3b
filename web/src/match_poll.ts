// Following a match by asking, as a tournament is followed (tournament_poll.ts says why: the
// API has no stream of a match, and a match moves when a deal is counted, which happens in the
// match director's own step, in any of the server processes sharing a database).
//
// - GetMatch (one row and its figures) at each look, every POLL_MS[0] while the match moves,
//   backing off to the last of POLL_MS while it does not;
// - its deals (ListMatchDeals, the first the page shows) only when the match moved (status,
//   deals started or counted), when the page wants more of them, and at least every
//   FULL_EVERY_MS (a playing that starts moves no count);
// - only while the page is shown, and only until the match is over: then the last answer is
//   the final one.

import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { matches } from "./api";
import { FINAL } from "./follow";
import { type Match, type MatchDeal, MatchSchema, MatchStatus } from "@boneyard/client";
import { FULL_EVERY_MS, type Following, pause, POLL_MS, sameBytes, shown } from "./tournament_poll";

/** The most deals one ListMatchDeals call returns (the server's bound). */
const DEALS_PAGE = 200;

export interface MatchFollower {
  /** How many deals the page shows: the first ones. */
  dealsWanted: () => number;
  /** Each answer that differs from the last one: the match, its first deals, and whether it
   * has more. */
  onAnswer: (match: Match, deals: MatchDeal[], more: boolean) => void;
  onFollowing: (state: Following, note?: string) => void;
}

export function isOver(m: Match | undefined): boolean {
  return m?.status === MatchStatus.FINISHED || m?.status === MatchStatus.CANCELLED;
}

/** The first `limit` deals of match `id` (a page of the server at a time), and whether there
 * are more. */
export async function matchDeals(id: string, limit: number, signal: AbortSignal): Promise<{ deals: MatchDeal[]; more: boolean }> {
  const deals: MatchDeal[] = [];
  let token = "";
  do {
    const page = await matches.listMatchDeals({ matchId: id, pageSize: Math.min(DEALS_PAGE, limit - deals.length), pageToken: token }, { signal });
    deals.push(...page.deals);
    token = page.nextPageToken;
  } while (token && deals.length < limit);
  return { deals, more: token !== "" };
}

function dealsKey(deals: readonly MatchDeal[], more: boolean): string {
  return `${more}|${deals.map((d) => `${d.deal}:${d.gameIds.join(",")}:${d.statuses.join(",")}:${d.counted}:${d.scoreA}:${d.scoreB}`).join(" ")}`;
}

/** Follow match `id` until it is over or `signal` aborts; rejects with a ConnectError whose
 * code is one of FINAL (no such match, a malformed id). */
export async function followMatch(id: string, f: MatchFollower, signal: AbortSignal): Promise<void> {
  let last: Match | undefined;
  let listed: { deals: MatchDeal[]; more: boolean } | undefined;
  let listedKey = "";
  let asked = 0;
  let moved = "";
  let dealsAt = 0;
  let wait = 0;
  while (!signal.aborted) {
    if (document.hidden) {
      f.onFollowing("paused");
      await shown(signal);
      if (signal.aborted) return;
    }
    try {
      const match = (await matches.getMatch({ matchId: id }, { signal })).match!;
      const now = `${match.status}/${match.dealsStarted}/${match.dealsFinished}`;
      let changed = now !== moved;
      moved = now;
      const wanted = f.dealsWanted();
      let dealsChanged = false;
      if (changed || !listed || wanted !== asked || Date.now() - dealsAt >= FULL_EVERY_MS) {
        // (asked after the match: when it says the match is over, these are its final deals)
        listed = await matchDeals(id, wanted, signal);
        dealsAt = Date.now();
        asked = wanted;
        const key = dealsKey(listed.deals, listed.more);
        dealsChanged = key !== listedKey;
        listedKey = key;
      }
      if (!last || dealsChanged || !sameBytes(toBinary(MatchSchema, last), toBinary(MatchSchema, match))) {
        changed = true;
        last = match;
        f.onAnswer(match, listed.deals, listed.more);
      }
      if (isOver(match)) {
        f.onFollowing("ended");
        return;
      }
      f.onFollowing("live");
      wait = changed ? 0 : Math.min(wait + 1, POLL_MS.length - 1);
    } catch (error) {
      if (signal.aborted) return;
      const e = ConnectError.from(error);
      if (FINAL.has(e.code)) throw e;
      f.onFollowing("reconnecting", e.rawMessage || Code[e.code]);
      wait = Math.min(wait + 1, POLL_MS.length - 1);
    }
    await pause(POLL_MS[wait], signal);
  }
}
