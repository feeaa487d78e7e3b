// A seat's play loop, the network part every bot and front end shares: follow the game's
// stream, on the seat's turn choose one of the view's legal actions and submit it, and after a
// dropped stream (a server restarting, a connection cut) resume from the last event seen.
// Choosing is the caller's: `choose(view)` returns one of `view.legalActions`.
//
// An action is sent with a request id made of the game, the seat and the version it was chosen
// at: sent again after a dropped connection, it is answered, not applied twice.

import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Action } from "./gen/boneyard/v1/actions_pb.js";
import { ErrorReason } from "./gen/boneyard/v1/errors_pb.js";
import type { GameService } from "./gen/boneyard/v1/game_service_pb.js";
import { Phase, type SeatView } from "./gen/boneyard/v1/view_pb.js";
import { GAME_HEADER } from "./affinity.js";
import { refusalOf } from "./errors.js";

/** Chooses the seat's action: one of `view.legalActions`. */
export type Choose = (view: SeatView) => Action | Promise<Action>;

/** The codes of a dropped stream or an unreachable server: worth trying again. */
export const RESUMABLE_CODES: ReadonlySet<Code> = new Set([
  Code.Unavailable,
  Code.DeadlineExceeded,
  Code.Canceled,
  Code.Unknown,
  Code.Internal,
  Code.ResourceExhausted,
]);

/** Whether a failed call is worth trying again: a code of RESUMABLE_CODES, or a connection
 * reset, which @connectrpc/connect-node reports as ABORTED (the server's own ABORTED, a stale
 * version, carries its ErrorInfo; a reset carries none). */
export function resumable(error: unknown): boolean {
  const e = ConnectError.from(error);
  return RESUMABLE_CODES.has(e.code) || (e.code === Code.Aborted && refusalOf(e).reasonName === "");
}

export interface PlaySeatOptions {
  /** Every view the seat sees, in order (to draw it, to log it). */
  onView?: (view: SeatView) => void;
  /** Told when the stream dropped and the loop will resume after `fromVersion`. */
  onResume?: (error: ConnectError, fromVersion: bigint) => void;
  /** How long the server may stay unreachable before the loop gives up: 60 s by default. */
  patienceMs?: number;
  /** Stops the loop (it then throws the abort's ConnectError, code Canceled). */
  signal?: AbortSignal;
}

/** The server stayed unreachable for longer than the loop's patience. */
export class SeatGaveUp extends Error {
  override name = "SeatGaveUp";
}

/** Play the seat of `token` in game `gameId` to the game's end; returns the last view. */
export async function playSeat(
  games: Client<typeof GameService>,
  gameId: string,
  token: string,
  choose: Choose,
  options: PlaySeatOptions = {},
): Promise<SeatView> {
  // The game's header too (affinity.ts), whatever the caller's transport adds.
  const call = { headers: { authorization: `Bearer ${token}`, [GAME_HEADER]: gameId }, signal: options.signal };
  const patienceMs = options.patienceMs ?? 60_000;
  const actedAt = new Set<bigint>();
  let last: SeatView | undefined;
  let downSince: number | undefined;
  let drops = 0;

  const seen = (view: SeatView): void => {
    last = view;
    options.onView?.(view);
  };
  // The server answered (a stream's headers): it is reachable again.
  const reached = (): void => {
    downSince = undefined;
    drops = 0;
  };

  const act = async (view: SeatView): Promise<void> => {
    if (view.turn === undefined || view.turn !== view.seat || view.legalActions.length === 0) return;
    if (actedAt.has(view.version)) return;
    // A view re-sent from before the stream began shows its tricks face down since: the game
    // is further on, and the views after it are the ones to act on.
    if (view.currentTrick.some((play) => play.faceDown)) return;
    const action = await choose(view);
    try {
      await games.submitAction(
        { gameId, expectedVersion: view.version, requestId: `${gameId}:${view.seat}:${view.version}`, action },
        call,
      );
      actedAt.add(view.version);
    } catch (error) {
      // The stream is behind the game: the event that moved it is on its way.
      if (refusalOf(error).reason !== ErrorReason.STALE_VERSION) throw error;
    }
  };

  for (;;) {
    let dropped: ConnectError;
    try {
      let from = last;
      if (from === undefined) {
        const { view } = await games.getView({ gameId }, { ...call, onHeader: reached });
        if (view === undefined) throw new ConnectError(`game ${gameId}: GetView answered no view`, Code.Internal);
        seen((from = view));
      }
      if (from.phase === Phase.GAME_OVER) return from;
      await act(from);
      const stream = games.watchGame({ gameId, fromVersion: from.version }, { ...call, onHeader: reached });
      for await (const { view } of stream) {
        if (view === undefined) continue;
        seen(view);
        if (view.phase === Phase.GAME_OVER) return view;
        await act(view);
      }
      // The server ended the stream before the game's end (it is shutting down).
      dropped = new ConnectError("the stream ended before the game did", Code.Unavailable);
    } catch (error) {
      const e = ConnectError.from(error);
      if (options.signal?.aborted || !resumable(e)) throw e;
      dropped = e;
    }
    const now = Date.now();
    downSince ??= now;
    if (now - downSince > patienceMs) {
      throw new SeatGaveUp(`game ${gameId}: the server was unreachable for ${patienceMs} ms`, { cause: dropped });
    }
    drops++;
    if (last !== undefined) options.onResume?.(dropped, last.version);
    await pause(Math.min(200 * drops, 2_000), options.signal);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener("abort", stop);
      resolve();
    }
    function stop(): void {
      clearTimeout(timer);
      reject(ConnectError.from(signal?.reason, Code.Canceled));
    }
    signal?.addEventListener("abort", stop, { once: true });
  });
}
