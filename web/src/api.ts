// The server's services, called with the generated client over the Connect protocol on the
// origin the app was served from (the HTTP listener serves both, so no CORS is involved).

import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ArchiveService } from "./gen/boneyard/v1/archive_pb";
import { LobbyService, TournamentService } from "./gen/boneyard/v1/competition_pb";
import { GameService } from "./gen/boneyard/v1/game_service_pb";
import { AccountService, ChallengeService } from "./gen/boneyard/v1/challenges_pb";
import { RatingService } from "./gen/boneyard/v1/ratings_pb";

const transport = createConnectTransport({
  // The directory the page was served from: `/` of the listener, or a proxy's path prefix.
  baseUrl: new URL(".", location.href).href,
  // Binary protobuf, not JSON: smaller messages and no 64-bit numbers as strings.
  useBinaryFormat: true,
});

export const games: Client<typeof GameService> = createClient(GameService, transport);
export const archive: Client<typeof ArchiveService> = createClient(ArchiveService, transport);
export const lobby: Client<typeof LobbyService> = createClient(LobbyService, transport);
// Accounts (sign in with a key, the account's stream), challenges and ratings: account.ts.
export const accounts: Client<typeof AccountService> = createClient(AccountService, transport);
export const challenges: Client<typeof ChallengeService> = createClient(ChallengeService, transport);
export const ratings: Client<typeof RatingService> = createClient(RatingService, transport);
export const tournaments: Client<typeof TournamentService> = createClient(TournamentService, transport);

/** Call options that act (or see) as a seat. */
export function asSeat(token: string | undefined, signal?: AbortSignal): { headers?: Record<string, string>; signal?: AbortSignal } {
  return {
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    ...(signal ? { signal } : {}),
  };
}

/** The server's answer to a refused call, as a person reads it: its own reason, and what the
 * status means. */
export function refusal(error: unknown): string {
  const e = ConnectError.from(error);
  const reason = e.rawMessage || Code[e.code];
  switch (e.code) {
    case Code.Aborted:
      return `Someone acted first, so the table was brought up to date. The server said: ${reason}`;
    case Code.FailedPrecondition:
      return `Not allowed: ${reason}`;
    case Code.Unavailable:
    case Code.Unknown:
      return `The server cannot be reached (${reason}).`;
    default:
      return `${Code[e.code]}: ${reason}`;
  }
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
