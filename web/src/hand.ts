// The order a hand is shown in: grouped by suit, trumps first, each group high to low, as a
// player sorts tiles in hand (RULES.md section 1: a tile bearing the trump number is a trump;
// otherwise it is shown under its higher end). Display only: what may be played comes from the
// view's legal_actions, never from here.

import { type Contract, ContractKind, Trump } from "@boneyard/client";
import { high, isDouble, low, type Tile } from "./tiles";
import { suitName, trumpText } from "./words";

export interface SuitGroup {
  /** "trumps (sixes)", "fives" ... */
  name: string;
  trumps: boolean;
  tiles: Tile[];
}

/** The trump suit's number 0..6, "doubles", or undefined (no trump, or not named yet). */
function trumpOf(contract: Contract | undefined): number | "doubles" | undefined {
  if (contract?.kind !== ContractKind.TRUMP) return undefined;
  if (contract.trump >= Trump.BLANKS && contract.trump <= Trump.SIXES) return contract.trump - Trump.BLANKS;
  return contract.trump === Trump.DOUBLES ? "doubles" : undefined;
}

function isTrump(tile: Tile, trump: number | "doubles" | undefined): boolean {
  if (trump === undefined) return false;
  if (trump === "doubles") return isDouble(tile);
  return high(tile) === trump || low(tile) === trump;
}

/** Rank within a suit: the double first, then the other end high to low. */
function rankIn(suit: number, tile: Tile): number {
  if (isDouble(tile)) return 100;
  return high(tile) === suit ? low(tile) : high(tile);
}

export function handBySuit(hand: readonly Tile[], contract: Contract | undefined): SuitGroup[] {
  const trump = trumpOf(contract);
  const trumps = hand.filter((t) => isTrump(t, trump));
  const groups: SuitGroup[] = [];
  if (trumps.length) {
    trumps.sort((a, b) =>
      trump === "doubles" ? high(b) - high(a) : rankIn(trump as number, b) - rankIn(trump as number, a),
    );
    groups.push({ name: `trumps (${trumpText(contract!.trump)})`, trumps: true, tiles: trumps });
  }
  for (let suit = 6; suit >= 0; suit--) {
    const tiles = hand.filter((t) => !isTrump(t, trump) && high(t) === suit);
    if (!tiles.length) continue;
    tiles.sort((a, b) => rankIn(suit, b) - rankIn(suit, a));
    groups.push({ name: suitName(suit), trumps: false, tiles });
  }
  return groups;
}
