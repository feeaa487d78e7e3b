// The server's services, called with the generated client over the Connect protocol on the
// origin the app was served from (the HTTP listener serves both, so no CORS is involved).

import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  AccountService, ArchiveService, ChallengeService, gameAffinity, GameService, LobbyService,
  MatchService,
  RatingService, reasonWords, refusalOf, TournamentService,
} from "@boneyard/client";

const transport = createConnectTransport({
  // The directory the page was served from: `/` of the listener, or a proxy's path prefix.
  baseUrl: new URL(".", location.href).href,
  // Binary protobuf, not JSON: smaller messages and no 64-bit numbers as strings.
  useBinaryFormat: true,
  // Every call about one game names it in the boneyard-game header, for a load balancer's hash.
  interceptors: [gameAffinity],
});

export const games: Client<typeof GameService> = createClient(GameService, transport);
export const archive: Client<typeof ArchiveService> = createClient(ArchiveService, transport);
export const lobby: Client<typeof LobbyService> = createClient(LobbyService, transport);
// Accounts (sign in with a key, the account's stream), challenges and ratings: account.ts.
export const accounts: Client<typeof AccountService> = createClient(AccountService, transport);
export const challenges: Client<typeof ChallengeService> = createClient(ChallengeService, transport);
export const ratings: Client<typeof RatingService> = createClient(RatingService, transport);
export const tournaments: Client<typeof TournamentService> = createClient(TournamentService, transport);
export const matches: Client<typeof MatchService> = createClient(MatchService, transport);

/** Call options that act (or see) as a seat. */
export function asSeat(token: string | undefined, signal?: AbortSignal): { headers?: Record<string, string>; signal?: AbortSignal } {
  return {
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    ...(signal ? { signal } : {}),
  };
}

/** The server's answer to a refused call, as a person reads it: the words of its reason (the
 * ErrorInfo's, decoded by the client package), then the server's own message; without a
 * reason, what the status means. */
export function refusal(error: unknown): string {
  const r = refusalOf(error);
  const said = r.message || Code[r.code];
  const words = reasonWords(r.reason);
  switch (r.code) {
    case Code.Aborted:
      return `${words || "Someone acted first"}, so the table was brought up to date. The server said: ${said}`;
    case Code.Unavailable:
    case Code.Unknown:
      return words ? `${words}. The server said: ${said}` : `The server cannot be reached (${said}).`;
    case Code.FailedPrecondition:
      return words ? `Not allowed: ${lowerFirst(words)}. The server said: ${said}` : `Not allowed: ${said}`;
    default:
      return words ? `${words}. The server said: ${said}` : `${Code[r.code]}: ${said}`;
  }
}

function lowerFirst(words: string): string {
  return words.charAt(0).toLowerCase() + words.slice(1);
}

export function codeOf(error: unknown): Code {
  return ConnectError.from(error).code;
}

/** A random UUID for a request id; crypto.randomUUID exists only in secure contexts (https or
 * loopback), getRandomValues everywhere. */
export function requestId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = Array.from(b, (v) => v.toString(16).padStart(2, "0")).join("");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
