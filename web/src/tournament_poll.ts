// Following tournaments by asking, not by a stream.
//
// Why asking: the API streams a game (WatchGame) and the lobby (WatchLobby), not a tournament.
// A stream of one would have to be woken by what moves it: a game of it ending (the feed
// knows), but also the director publishing a deal and changing the tournament's status, which
// happen in the director's own step, in any of the server processes sharing a database, and
// reach no feed today. A tournament moves a few times a minute at most (a game ends, a deal's
// results are published), so asking every few seconds shows each move soon enough, for little:
//
// - the BASIC view (the tournament's row and two counts) at each look, every POLL_MS[0] while
//   it moves, backing off to the last of POLL_MS while it does not;
// - the FULL view (games and standings, which the server works out from every game's log) only
//   when the BASIC view moved (status, games over), and at least every FULL_EVERY_MS for the
//   games that start (which the BASIC counts do not show);
// - only while the page is shown (a hidden tab asks nothing; shown again, it asks at once), and
//   only until the tournament is over: then the last FULL view is the final one.

import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { refusal, tournaments } from "./api";
import { FINAL } from "./follow";
import {
  type GetTournamentResponse, GetTournamentResponseSchema, TournamentStatus, TournamentView,
} from "@boneyard/client";

export type Following = "loading" | "live" | "paused" | "reconnecting" | "ended" | "stopped";

/** The waits between two looks at a tournament being played: the first while it moves, each
 * next one while it does not, the last repeated. */
export const POLL_MS = [2000, 3000, 5000, 8000];
/** The FULL view at least this often while the tournament is being played. */
export const FULL_EVERY_MS = 10000;
/** The list of tournaments changes more slowly: the waits between two looks at it. */
export const LIST_MS = [5000, 10000, 20000];

export interface TournamentFollower {
  /** Each FULL answer that differs from the last one. */
  onAnswer: (answer: GetTournamentResponse) => void;
  onFollowing: (state: Following, note?: string) => void;
}

/** Resolves once the page is shown (at once if it is), or `signal` aborts. */
export function shown(signal: AbortSignal): Promise<void> {
  if (!document.hidden || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      if (document.hidden && !signal.aborted) return;
      document.removeEventListener("visibilitychange", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    document.addEventListener("visibilitychange", done);
    signal.addEventListener("abort", done);
  });
}

/** Wait `ms`, less if `signal` aborts or the page is shown again after it was hidden. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const finish = (): void => {
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onShown);
      signal.removeEventListener("abort", finish);
      resolve();
    };
    const onShown = (): void => { if (!document.hidden) finish(); };
    const timer = setTimeout(finish, ms);
    document.addEventListener("visibilitychange", onShown);
    signal.addEventListener("abort", finish);
  });
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function over(status: TournamentStatus | undefined): boolean {
  return status === TournamentStatus.FINISHED || status === TournamentStatus.CANCELLED;
}

/** Follow tournament `id` until it is over or `signal` aborts; rejects with a ConnectError
 * whose code is one of FINAL (no such tournament, a malformed id). */
export async function followTournament(id: string, f: TournamentFollower, signal: AbortSignal): Promise<void> {
  let last: GetTournamentResponse | undefined;
  let moved = "";
  let fullAt = 0;
  let wait = 0;
  while (!signal.aborted) {
    if (document.hidden) {
      f.onFollowing("paused");
      await shown(signal);
      if (signal.aborted) return;
    }
    try {
      const basic = (await tournaments.getTournament({ tournamentId: id, view: TournamentView.BASIC }, { signal })).tournament;
      const now = `${basic?.status}/${basic?.gamesFinished}/${basic?.gamesTotal}`;
      let changed = now !== moved;
      moved = now;
      if (changed || !last || Date.now() - fullAt >= FULL_EVERY_MS) {
        const full = await tournaments.getTournament({ tournamentId: id, view: TournamentView.FULL }, { signal });
        fullAt = Date.now();
        if (!last || !sameBytes(toBinary(GetTournamentResponseSchema, last), toBinary(GetTournamentResponseSchema, full))) {
          changed = true;
          last = full;
          f.onAnswer(full);
        }
      }
      // (The FULL view asked after the BASIC one is at least as new: when it says the
      // tournament is over, it is the final one.)
      if (over(last?.tournament?.status)) {
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

/** Ask `fetch` now and then while the page is shown, until `signal` aborts: `onAnswer` with
 * each answer whose `key` differs from the last one's (or that follows a refusal), `onError`
 * with a refusal in words (and the asking goes on). */
export async function pollList<T>(
  fetch: () => Promise<T>,
  onAnswer: (answer: T) => void,
  onError: (why: string) => void,
  key: (answer: T) => string,
  signal: AbortSignal,
): Promise<void> {
  let wait = 0;
  let before: string | undefined;
  let failed = false;
  while (!signal.aborted) {
    await shown(signal);
    if (signal.aborted) return;
    try {
      const answer = await fetch();
      const now = key(answer);
      wait = now === before ? Math.min(wait + 1, LIST_MS.length - 1) : 0;
      if (now !== before || failed) onAnswer(answer);
      before = now;
      failed = false;
    } catch (error) {
      if (signal.aborted) return;
      onError(refusal(error));
      failed = true;
      wait = Math.min(wait + 1, LIST_MS.length - 1);
    }
    await pause(LIST_MS[wait], signal);
  }
}
