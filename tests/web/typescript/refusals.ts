// Refusals read by a TypeScript client through the generated types: each refused call's
// google.rpc.ErrorInfo decoded by ConnectError.findDetails(ErrorInfoSchema) (refusalOf), its
// reason an ErrorReason, its words reasonWords', over @connectrpc/connect-node with the Connect
// protocol, gRPC or gRPC-Web, on HTTP/1.1 or HTTP/2 (h2c) as asked.
//
//   node refusals.js BASE_URL HTTP_VERSION PROTOCOL    (1.1 or 2; connect, grpc or grpc-web)
//
// Prints `report {...}`: for each case, what the client read.

import { Code, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport, createGrpcTransport, createGrpcWebTransport, Http2SessionManager,
} from "@connectrpc/connect-node";
import { ErrorReason, GameService, reasonWords, refusalOf, type ErrorInfo, errorInfo } from "@boneyard/client";

const [baseUrl, httpVersion, protocol] = process.argv.slice(2);
if (!baseUrl || (httpVersion !== "1.1" && httpVersion !== "2")) throw new Error("usage: refusals.js BASE_URL 1.1|2 PROTOCOL");
const session = httpVersion === "2" ? new Http2SessionManager(baseUrl) : undefined;
const options = { baseUrl, httpVersion, sessionManager: session } as const;
function transportFor(name: string | undefined): Transport {
  switch (name) {
    case "connect": return createConnectTransport({ ...options, useBinaryFormat: true });
    case "grpc-web": return createGrpcWebTransport({ ...options, useBinaryFormat: true });
    case "grpc": return createGrpcTransport({ baseUrl, sessionManager: session });
    default: throw new Error(`no protocol ${name}`);
  }
}
const games = createClient(GameService, transportFor(protocol));

/** What the client reads of a call's refusal; the call must be refused. */
async function refused(call: Promise<unknown>): Promise<object> {
  try {
    await call;
  } catch (error) {
    const r = refusalOf(error);
    const info: ErrorInfo | undefined = errorInfo(error);
    return {
      code: Code[r.code],
      reason: ErrorReason[r.reason],
      reasonName: r.reasonName,
      metadata: r.metadata,
      domain: info?.domain,
      words: reasonWords(r.reason),
    };
  }
  throw new Error("the call was not refused");
}

const { gameId } = await games.createGame({ rules: { preset: "texas42" }, requestId: crypto.randomUUID() });
const tokens: string[] = [];
for (const seat of [0, 1, 2, 3]) {
  const taken = await games.takeSeat({ gameId, seat, playerName: `p${seat}`, requestId: crypto.randomUUID() });
  tokens.push(taken.seatToken);
}
const as = (seat: number) => ({ headers: { authorization: `Bearer ${tokens[seat]}` } });
const { view } = await games.getView({ gameId }, as(0));
if (view?.turn === undefined) throw new Error("no seat is to act");
const turn = view.turn;
const { view: turnView } = await games.getView({ gameId }, as(turn));
const action = turnView!.legalActions[0];
const other = (turn + 1) % 4;
const missing = crypto.randomUUID();

const report = {
  gameId,
  turn,
  other,
  version: String(view.version),
  missing,
  notYourTurn: await refused(
    games.submitAction({ gameId, expectedVersion: view.version, requestId: crypto.randomUUID(), action }, as(other)),
  ),
  staleVersion: await refused(
    games.submitAction({ gameId, expectedVersion: view.version - 1n, requestId: crypto.randomUUID(), action }, as(turn)),
  ),
  gameNotFound: await refused(games.getGame({ gameId: missing })),
};
session?.abort();
console.log(`report ${JSON.stringify(report)}`);
