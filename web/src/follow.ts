// Following a game: the WatchGame stream from the last version the page has, resumed from the
// last version it received when the stream drops. Never polling: while the game is quiet, the
// stream simply waits.

import { Code, ConnectError } from "@connectrpc/connect";
import { asSeat, games } from "./api";
import { Phase, type WatchGameResponse } from "@boneyard/client";

export type Connection = "live" | "reconnecting" | "ended";

export interface Follower {
  gameId: string;
  token?: string;
  /** The version the page has: the stream starts after it. */
  from: bigint;
  onMessage: (message: WatchGameResponse) => void;
  onConnection?: (state: Connection, why?: string) => void;
}

/** Errors that another try cannot mend: the page must change its request. */
export const FINAL = new Set([Code.NotFound, Code.PermissionDenied, Code.Unauthenticated, Code.InvalidArgument, Code.OutOfRange]);
/** The waits before each try again of a dropped stream (the last one repeats). */
export const BACKOFF_MS = [250, 500, 1000, 2000, 4000];

/** Wait `ms`, or less if `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/** Follow until the game is over or `signal` aborts; rejects with a ConnectError of FINAL. */
export async function follow(f: Follower, signal: AbortSignal): Promise<void> {
  let from = f.from;
  let over = false;
  let failures = 0;
  while (!signal.aborted && !over) {
    try {
      const stream = games.watchGame({ gameId: f.gameId, fromVersion: from }, asSeat(f.token, signal));
      f.onConnection?.("live");
      for await (const message of stream) {
        failures = 0;
        from = message.version;
        // The moment the page holds this version (bench_browser.py reads these marks).
        performance.mark(`boneyard:version:${message.version}`);
        over = message.view?.phase === Phase.GAME_OVER;
        f.onMessage(message);
      }
      // The stream ends after the event that ends the game; an end before that is a server
      // going away (a restart): reconnect like after an error.
      if (over) break;
      f.onConnection?.("reconnecting", "the stream ended");
    } catch (error) {
      if (signal.aborted) return;
      const e = ConnectError.from(error);
      if (FINAL.has(e.code)) throw e;
      f.onConnection?.("reconnecting", e.rawMessage || Code[e.code]);
    }
    await sleep(BACKOFF_MS[Math.min(failures++, BACKOFF_MS.length - 1)], signal);
  }
  f.onConnection?.("ended");
}

/** performance.mark entries pile up over a long game: the page drops them when it leaves. */
export function clearVersionMarks(): void {
  for (const mark of performance.getEntriesByType("mark")) {
    if (mark.name.startsWith("boneyard:version:")) performance.clearMarks(mark.name);
  }
}
