// Which calls of the client package carry the `boneyard-game` header: a node HTTP server here
// records every request's path and header, and refuses it (404); the calls are made through a
// Connect transport with the package's `gameAffinity` interceptor, and by `playSeat` through a
// transport without it.
//
//   node game_header.js
//
// Prints `report {"withInterceptor": [[path, header]...], "playSeat": [[path, header]...]}`
// (header null where none was sent).

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { GAME_HEADER, gameAffinity, GameService, playSeat } from "@boneyard/client";

const seen: [string, string | null][] = [];
const server = createServer((req, res) => {
  const header = req.headers[GAME_HEADER];
  seen.push([req.url ?? "", typeof header === "string" ? header : null]);
  req.resume();
  req.on("end", () => {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: "not_found", message: "recorded" }));
  });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const refused = async (call: () => Promise<unknown>): Promise<void> => {
  try {
    await call();
  } catch {
    return;
  }
  throw new Error("the call was answered");
};

const games = createClient(
  GameService,
  createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [gameAffinity] }),
);
await refused(() => games.getGame({ gameId: "g-get" }));
await refused(() => games.getView({ gameId: "g-view" }));
await refused(() =>
  games.submitAction({ gameId: "g-submit", expectedVersion: 3n, requestId: "r" }, { headers: { authorization: "Bearer t" } }),
);
await refused(async () => {
  for await (const _ of games.watchGame({ gameId: "g-watch", fromVersion: 2n })) break;
});
await refused(() => games.createGame({ rules: { preset: "texas42" } }));
await refused(() => games.listPresets({}));
const withInterceptor = seen.splice(0);

const bare = createClient(GameService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
await refused(() => playSeat(bare, "g-seat", "token", (view) => view.legalActions[0]));
const playSeatCalls = seen.splice(0);

server.close();
console.log(`report ${JSON.stringify({ withInterceptor, playSeat: playSeatCalls })}`);
