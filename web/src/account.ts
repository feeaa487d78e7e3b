// The account this browser is signed in with: its API key (`byk_...`, made by the operator with
// `boneyard-server admin create-player NAME`), kept in localStorage as a seat's token is and
// sent as `authorization: Bearer byk_...`; never drawn on a page once entered. Signing in asks
// the server whose key it is (AccountService.GetAccount); a key it does not know, or one
// revoked or replaced since, is said so and forgotten.
//
// Also here, for the account's pages (me.ts, challenges.ts): the account's stream
// (AccountService.WatchAccount), resumed from the last sequence received when it drops, and a
// seat of a game reserved for the account, taken with the key.

import { Code, ConnectError } from "@connectrpc/connect";
import { accounts, asSeat, refusal } from "./api";
import { h } from "./dom";
import { BACKOFF_MS, FINAL, sleep } from "./follow";
import { type AccountEvent, AccountKind, Family } from "@boneyard/client";
import { heldSeat, heldSeats, holdSeat, dropSeat } from "./seats";

export interface SignedIn {
  key: string;
  name: string;
  kind: AccountKind;
}

const STORED = "boneyard.account";
const PREFIX = "byk_";
/** Longer than any key the server makes (`byk_` and 43 characters). */
const KEY_MAX = 200;

/** The account this browser is signed in with, if any. */
export function signedIn(): SignedIn | undefined {
  try {
    const v = JSON.parse(localStorage.getItem(STORED) ?? "null") as Partial<SignedIn> | null;
    if (v && typeof v.key === "string" && typeof v.name === "string") {
      return { key: v.key, name: v.name, kind: Number(v.kind) as AccountKind };
    }
  } catch {
    // Damaged: as if signed out.
  }
  return undefined;
}

/** What a person is told when a key is refused for good. */
export const KEY_REFUSED =
  "The server does not know this key: it belongs to no account, or it was revoked or replaced. Ask the server's operator for your account's key.";

/** Check a key with the server and keep it. Rejects with an Error a person can read. */
export async function signIn(typed: string): Promise<SignedIn> {
  const key = typed.trim();
  if (!key) throw new Error("Paste your account's key first.");
  if (!key.startsWith(PREFIX) || key.length > KEY_MAX || /\s/.test(key)) {
    throw new Error(`That is not an account key: an account key starts with ${PREFIX} and has no spaces (the operator makes one with boneyard-server admin create-player NAME).`);
  }
  try {
    const me = await accounts.getAccount({}, asSeat(key));
    const account = { key, name: me.name, kind: me.kind };
    localStorage.setItem(STORED, JSON.stringify(account));
    return account;
  } catch (error) {
    if (ConnectError.from(error).code === Code.Unauthenticated) throw new Error(KEY_REFUSED);
    throw new Error(refusal(error));
  }
}

/** Forget the key, and the seats this browser held with it. */
export function signOut(): void {
  const account = signedIn();
  localStorage.removeItem(STORED);
  if (!account) return;
  for (const seat of heldSeats()) if (seat.token === account.key) dropSeat(seat.gameId);
}

/** Why this browser was signed out without asking (its key refused): said once, above the
 * sign-in form. */
let signedOutBecause: string | undefined;

/** Draw the page again, as the router does (after signing in or out). */
export function reroute(): void {
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

/** A call refused because the stored key is no longer good (revoked, or replaced by a new
 * one): sign out, and draw the page again, signed out, the reason above its sign-in form.
 * Other refusals: the server's words. */
export function accountRefusal(error: unknown): string {
  if (ConnectError.from(error).code === Code.Unauthenticated && signedIn()) {
    signOut();
    signedOutBecause = `You are signed out. ${KEY_REFUSED}`;
    setTimeout(reroute, 0);
    return signedOutBecause;
  }
  return refusal(error);
}

/** Hold a seat reserved for the account, with its key as the seat's token (a seat held
 * otherwise, by a token of TakeSeat, is kept). */
export function holdWithKey(account: SignedIn, gameId: string, seat: number): void {
  if (!heldSeat(gameId)) holdSeat({ gameId, seat, token: account.key, name: account.name });
}

/** Go to a game's table, in the account's seat. */
export function goSeated(account: SignedIn, gameId: string, seat: number): void {
  holdWithKey(account, gameId, seat);
  location.hash = `#/game/${encodeURIComponent(gameId)}`;
}

/** A link to a game's table that takes the account's seat on the way. */
export function seatLink(account: SignedIn, gameId: string, seat: number, text: string): HTMLElement {
  return h("a", { href: `#/game/${encodeURIComponent(gameId)}`, onclick: () => holdWithKey(account, gameId, seat) }, text);
}

export type StreamState = "loading" | "live" | "reconnecting" | "stopped";

/** Follow the account's events after `from` until `signal` aborts: the stream opened again
 * after a wait when it drops, from the last event received (nothing missed or told twice).
 * A refusal for good (the key revoked) ends it, said through `onState`. */
export async function followAccount(
  account: SignedIn,
  from: bigint,
  onEvent: (event: AccountEvent) => void,
  onState: (state: StreamState, why?: string) => void,
  signal: AbortSignal,
): Promise<void> {
  let after = from;
  let failures = 0;
  while (!signal.aborted) {
    try {
      const stream = accounts.watchAccount({ fromSequence: after }, asSeat(account.key, signal));
      onState("live");
      for await (const message of stream) {
        failures = 0;
        if (!message.event) continue;
        after = message.event.sequence;
        onEvent(message.event);
      }
    } catch (error) {
      if (signal.aborted) return;
      if (FINAL.has(ConnectError.from(error).code)) {
        onState("stopped", accountRefusal(error));
        return;
      }
    }
    if (signal.aborted) return;
    onState("reconnecting");
    await sleep(BACKOFF_MS[Math.min(failures++, BACKOFF_MS.length - 1)], signal);
  }
}

/** "● Live ..." as the lobby says it, for an account's stream. */
export function streamLine(state: StreamState, why?: string): HTMLElement {
  const said = {
    loading: "Connecting…",
    live: "● Live: what happens to your account shows here as it happens.",
    reconnecting: "The server cannot be reached: reconnecting…",
    stopped: `Not following your account: ${why ?? "reload the page to try again"}`,
  }[state];
  return h("p", { class: `meta connection ${state}`, data: { connection: state } }, said);
}

/** The form that signs in: the key in a password field (never shown), a clear word when it is
 * refused. `done` runs once the key is kept. */
export function signInForm(done: (account: SignedIn) => void): HTMLElement {
  const input = h("input", { id: "account-key", type: "password", placeholder: "byk_…" });
  input.setAttribute("autocomplete", "off");
  input.setAttribute("spellcheck", "false");
  const said = h("p", { class: "refusal", role: "alert", hidden: !signedOutBecause }, signedOutBecause ?? "");
  signedOutBecause = undefined;
  const button = h("button", { type: "submit", class: "primary" }, "Sign in");
  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    button.disabled = true;
    said.hidden = true;
    const typed = input.value;
    // The field is emptied either way: a key is never kept on the page, even masked.
    input.value = "";
    try {
      done(await signIn(typed));
    } catch (error) {
      said.textContent = error instanceof Error ? error.message : String(error);
      said.hidden = false;
      input.focus();
    } finally {
      button.disabled = false;
    }
  };
  return h(
    "form",
    { class: "sign-in", aria: { label: "sign in" }, onsubmit: (e) => void submit(e) },
    h("div", { class: "option" }, h("label", { for: "account-key" }, "Your account's key"), input, button),
    said,
    h(
      "p",
      { class: "hint" },
      "The server's operator makes your account and its key (",
      h("code", {}, "boneyard-server admin create-player NAME"),
      "). The key stays in this browser, as a seat at a table does, and is never shown again; Sign out forgets it.",
    ),
  );
}

/** The game types a rating is kept for, with their words and their route. */
export const GAME_TYPES: readonly { family: Family; slug: string; title: string }[] = [
  { family: Family.TEXAS42, slug: "texas42", title: "Texas 42" },
  { family: Family.MOON, slug: "moon", title: "Moon" },
];

export function gameTypeTitle(family: Family | string): string {
  return GAME_TYPES.find((t) => t.family === family || t.slug === family)?.title ?? String(family);
}

export function kindText(kind: AccountKind): string {
  return kind === AccountKind.BOT ? "a bot's account" : kind === AccountKind.PLAYER ? "a player's account" : "an account";
}

/** A rating as people read it: one decimal, a true minus sign. */
export function ratingText(value: number): string {
  const text = Math.abs(value).toFixed(1);
  return value < 0 && text !== "0.0" ? `−${text}` : text;
}

/** A change of rating: "+1.3", "−0.8", "±0.0". */
export function changeText(delta: number): string {
  const text = Math.abs(delta).toFixed(1);
  if (text === "0.0") return "±0.0";
  return delta > 0 ? `+${text}` : `−${text}`;
}

/** A timestamp as a local date and time (short). */
export function timeText(t: { seconds: bigint; nanos: number } | undefined): string {
  if (!t) return "";
  return new Date(Number(t.seconds) * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
