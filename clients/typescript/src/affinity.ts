// The game a call is about, where a load balancer can hash on it: every call whose request
// names a game (its `gameId`) carries the id in the `boneyard-game` header, so that a
// consistent-hash balancer in front of several server processes sends one game's calls to the
// process that holds it fresh (docs/scaling.md). A routing hint only: the server does not read
// it, and a missing or wrong one costs a reload there, never a wrong answer.

import type { Interceptor } from "@connectrpc/connect";

/** The header (gRPC metadata) naming the game a call is about. */
export const GAME_HEADER = "boneyard-game";

/** The game a request message names (its `gameId`), or `undefined`. */
function gameOf(message: unknown): string | undefined {
  const id = (message as { gameId?: unknown } | undefined)?.gameId;
  return typeof id === "string" && id !== "" ? id : undefined;
}

async function* replay<T>(messages: readonly T[]): AsyncIterable<T> {
  yield* messages;
}

/** A transport's interceptor (`createConnectTransport({ ..., interceptors: [gameAffinity] })`):
 * a call whose request names a game carries it in `GAME_HEADER`. A server stream's one request
 * is read first, then handed on unchanged. */
export const gameAffinity: Interceptor = (next) => async (req) => {
  if (!req.stream) {
    const game = gameOf(req.message);
    if (game !== undefined) req.header.set(GAME_HEADER, game);
    return next(req);
  }
  if (req.method.methodKind !== "server_streaming") return next(req);
  const messages = [];
  for await (const message of req.message) messages.push(message);
  const game = gameOf(messages[0]);
  if (game !== undefined) req.header.set(GAME_HEADER, game);
  return next({ ...req, message: replay(messages) });
};
