// A seat of Texas 42 played from node by the client package (@boneyard/client: its generated
// code and playSeat) over @connectrpc/connect-node, against the server's HTTP listener: over
// HTTP/2 in the clear (h2c, prior knowledge) or HTTP/1.1, with the Connect protocol or gRPC.
// The server's house bots hold the other seats.
//
//   node play_seat.js BASE_URL HTTP_VERSION PROTOCOL HANDS [PAUSE_AT GO_FILE]
//
// HTTP_VERSION 1.1 or 2; PROTOCOL connect or grpc; HANDS the game's hand limit. With PAUSE_AT,
// the seat's choice number PAUSE_AT says `paused` and waits until GO_FILE exists (while the
// test kills the server and starts it again) before it is sent.
//
// Prints `game ID`, `view VERSION` for every view, `plays TILE` for its tiles, `resumed after
// VERSION (CODE)` when its stream dropped, then `report {...}` and `team T wins (A, B)`.

import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { gameAffinity, GameService, Phase, playSeat, tileName, type SeatView } from "@boneyard/client";

const [baseUrl, httpVersion, protocol, hands, pauseAt, goFile] = process.argv.slice(2);
if (!baseUrl || (httpVersion !== "1.1" && httpVersion !== "2") || (protocol !== "connect" && protocol !== "grpc")) {
  throw new Error("usage: play_seat.js BASE_URL 1.1|2 connect|grpc HANDS");
}
// Our own session manager for HTTP/2, to say at the end that an HTTP/2 session was open.
const session = httpVersion === "2" ? new Http2SessionManager(baseUrl) : undefined;
// With the package's game header on every call, as the web app's transport has it (the
// WatchGame streams' one request read and handed on by it).
const interceptors = [gameAffinity];
const transport =
  protocol === "grpc"
    ? createGrpcTransport({ baseUrl, sessionManager: session, interceptors })
    : httpVersion === "2"
      ? createConnectTransport({ baseUrl, httpVersion: "2", sessionManager: session, useBinaryFormat: true, interceptors })
      : createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true, interceptors });
const games = createClient(GameService, transport);

const { gameId } = await games.createGame({
  rules: { preset: "texas42", handLimit: Number(hands) },
  houseBots: [1, 2, 3].map((seat) => ({ seat, strategy: "random" })),
  requestId: crypto.randomUUID(),
});
const { seat, seatToken } = await games.takeSeat({ gameId, seat: 0, playerName: "node", requestId: crypto.randomUUID() });
console.log(`game ${gameId}`);

const versions: bigint[] = [];
const resumed: { after: string; code: string }[] = [];
let plays = 0;
let actions = 0;
const last: SeatView = await playSeat(
  games,
  gameId,
  seatToken,
  async (view) => {
    actions++;
    if (goFile !== undefined && actions === Number(pauseAt)) {
      console.log("paused");
      while (!existsSync(goFile)) await sleep(50);
    }
    const action = view.legalActions[0];
    if (action.kind.case === "playTile") {
      plays++;
      const tile = action.kind.value.tile;
      console.log(`plays ${tile === undefined ? "no tile" : tileName(tile)}`);
    }
    return action;
  },
  {
    onView: (view) => {
      versions.push(view.version);
      console.log(`view ${view.version}`);
    },
    onResume: (error, from) => {
      resumed.push({ after: String(from), code: Code[error.code] });
      console.log(`resumed after ${from} (${Code[error.code]})`);
    },
    patienceMs: 300_000,
  },
);
const report = {
  seat,
  over: last.phase === Phase.GAME_OVER,
  winner: last.winner,
  scores: last.scores,
  finalVersion: String(last.version),
  views: versions.length,
  inOrder: versions.every((v, i) => i === 0 || v > versions[i - 1]),
  actions,
  plays,
  resumed,
  http2Session: session?.state() ?? null,
};
session?.abort();
console.log(`report ${JSON.stringify(report)}`);
console.log(`team ${last.winner} wins (${last.scores.join(", ")})`);
