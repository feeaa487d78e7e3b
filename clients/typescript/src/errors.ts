// A refusal as a program reads it, decoded by the generated types: every refusal of the
// server carries a google.rpc.ErrorInfo (proto/boneyard/v1/errors.proto) whose `reason` is an
// ErrorReason name without its prefix ("NOT_YOUR_TURN") and whose `metadata` holds what the
// server knows (`game_id`, `seat`, `tile` ...). ConnectError.findDetails decodes it on every
// transport (Connect's error body, gRPC's and gRPC-Web's `grpc-status-details-bin`).
// The reason is for programs to switch on; its words (reasonWords) are for people, beside the
// server's own message, which is prose and may change.

import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorReason, ErrorReasonSchema } from "./gen/boneyard/v1/errors_pb.js";
import { type ErrorInfo, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

/** The `ErrorInfo.domain` of the server's refusals: the API's package. */
export const ERROR_DOMAIN = "boneyard.v1";

const PREFIX = "ERROR_REASON_";

/** What a refused call said. */
export interface Refusal {
  /** The status code. */
  readonly code: Code;
  /** The server's message, prose for people (may change from one version to the next). */
  readonly message: string;
  /** The stable reason; `ErrorReason.UNSPECIFIED` when the answer carried none (a connection
   * that failed before reaching the server) or one this client does not know (a later
   * version's: treat it as its status code alone). */
  readonly reason: ErrorReason;
  /** The reason as it was sent ("NOT_YOUR_TURN"; "" for none), known or not. */
  readonly reasonName: string;
  /** The details the server knows, as strings (each reason's comment in errors.proto says
   * which it sends). */
  readonly metadata: Readonly<Record<string, string>>;
}

/** The server's ErrorInfo of a refused call, if it carries one. */
export function errorInfo(error: unknown): ErrorInfo | undefined {
  return ConnectError.from(error)
    .findDetails(ErrorInfoSchema)
    .find((info) => info.domain === ERROR_DOMAIN);
}

/** The ErrorReason value sent as `name` ("NOT_YOUR_TURN"); UNSPECIFIED for an unknown one. */
export function reasonNamed(name: string): ErrorReason {
  const value = ErrorReasonSchema.values.find((v) => v.name === PREFIX + name);
  return value ? (value.number as ErrorReason) : ErrorReason.UNSPECIFIED;
}

/** What a refused call said: its code, its message, and its ErrorInfo's reason and metadata. */
export function refusalOf(error: unknown): Refusal {
  const e = ConnectError.from(error);
  const info = errorInfo(e);
  return {
    code: e.code,
    message: e.rawMessage,
    reason: info ? reasonNamed(info.reason) : ErrorReason.UNSPECIFIED,
    reasonName: info?.reason ?? "",
    metadata: { ...info?.metadata },
  };
}

/** Every reason a refusal may give (all of ErrorReason but UNSPECIFIED). */
export type Reason = Exclude<keyof typeof ErrorReason, "UNSPECIFIED">;

// A reason added to errors.proto fails the type check here until it has its words.
const WORDS: Readonly<Record<Reason, string>> = {
  INVALID_COMMAND: "That is no move of this game",
  GAME_OVER: "The game is over",
  WRONG_PHASE: "That is not a move of this part of the hand",
  NOT_YOUR_TURN: "It is not your turn",
  BID_TOO_LOW: "That bid is too low",
  BID_NOT_ALLOWED: "That bid is not allowed here",
  MUST_BID: "The dealer may not pass: the dealer must bid",
  ILLEGAL_DISCARD: "Those tiles may not be laid away",
  ILLEGAL_CONTRACT: "That trump or contract may not be declared",
  TILE_NOT_IN_HAND: "That tile is not in your hand",
  MUST_FOLLOW_SUIT: "You must follow suit",
  MUST_LEAD_TRUMP: "The first lead must be a trump",
  MUST_PLAY_NEAREST_SEVEN: "You must play a tile nearest to seven pips",
  ILLEGAL_ACTION: "The rules do not allow that",
  BAD_RULESET: "Those rules are unknown or do not go together",
  BAD_ARGUMENT: "A value is missing or out of bounds",
  MALFORMED_REQUEST: "The request could not be read",
  REQUEST_TOO_LARGE: "The request is too large",
  BAD_PAGE_TOKEN: "That page of the list is not one the server gave",
  BAD_GAME_ID: "That is not a game id",
  MALFORMED_RECORD: "The server cannot make a record of that game",
  MALFORMED_AUTHORIZATION: "The credentials are not a seat's token or an account's key",
  TOKEN_REQUIRED: "Only the seat's player may do that: take a seat first",
  BAD_TOKEN: "This seat's token opens no seat of the game",
  API_KEY_REQUIRED: "That needs an account's key",
  BAD_API_KEY: "That key belongs to no account",
  NOT_YOUR_SEAT: "That is not your seat",
  NOT_AN_ORGANISER: "A bot's account may not organise games or tournaments",
  EMBARGOED: "That deal is still being played at other tables",
  NOT_YOUR_TOURNAMENT: "That tournament is not yours to manage",
  GAME_NOT_FOUND: "There is no such game",
  ACCOUNT_NOT_FOUND: "There is no account of that name",
  TOURNAMENT_NOT_FOUND: "There is no such tournament",
  HAND_NOT_FOUND: "The game has no hand of that number",
  STALE_VERSION: "Someone acted first",
  SEAT_TAKEN: "That seat is taken",
  GAME_FULL: "Every seat is taken",
  GAME_NOT_OPEN: "The game has started or ended: its seats are not open",
  GAME_NOT_STARTED: "The game has not started",
  GAME_NOT_OVER: "The game is not over yet",
  TOURNAMENT_STATUS: "The tournament cannot do that now",
  NOT_SIGNING: "This server signs no records",
  VERSION_OUT_OF_RANGE: "The game has not come that far",
  SEEK_CANCELLED: "The seek was cancelled",
  QUOTA_EXCEEDED: "A limit is reached: try again later",
  TIMED_OUT: "The server ran out of time",
  INTERNAL: "The server failed: try again",
  SHUTTING_DOWN: "The server is shutting down",
  CHALLENGE_NOT_FOUND: "There is no such challenge",
  CHALLENGE_NOT_OPEN: "The challenge is over, or you have answered it",
  NOT_CHALLENGED: "That challenge is not to you",
  SEQUENCE_OUT_OF_RANGE: "The account's stream has not come that far",
  MATCH_NOT_FOUND: "There is no such match",
  NOT_YOUR_MATCH: "That match is not yours to manage",
  MATCH_STATUS: "The match cannot do that now",
  MATCH_RULES: "A match is played by two partnerships: not under those rules",
  SEAT_REQUIRED: "Your account holds several seats of that game: say which",
  SWISS_RULES: "A Swiss tournament pairs two partnerships: not under those rules (Texas 42 only)",
};

/** A reason in words, as a person reads it ("You must follow suit"); "" for UNSPECIFIED (or
 * a number this client does not know). */
export function reasonWords(reason: ErrorReason): string {
  const name = ErrorReason[reason] as Reason | "UNSPECIFIED" | undefined;
  return name === undefined || name === "UNSPECIFIED" ? "" : WORDS[name];
}
