// Words for the API's messages, as players say them ("bid 84", "sixes", "seat 2 plays 6-4"):
// the same words as the terminal client (clients/describe.py).

import type { Action } from "./gen/boneyard/v1/actions_pb";
import type { Event as GameEvent } from "./gen/boneyard/v1/events_pb";
import { AbandonReason, TimeoutPolicy } from "./gen/boneyard/v1/events_pb";
import { GameStatus } from "./gen/boneyard/v1/game_pb";
import { BidKind, type Bid, type Contract, ContractKind, Family, type Ruleset, Trump } from "./gen/boneyard/v1/rules_pb";
import { Phase } from "./gen/boneyard/v1/view_pb";
import { tileName } from "./tiles";

const SUITS = ["blanks", "ones", "twos", "threes", "fours", "fives", "sixes"] as const;

/** "fives" for 5. */
export function suitName(suit: number): string {
  return SUITS[suit] ?? "?";
}

export function trumpText(trump: Trump): string {
  if (trump >= Trump.BLANKS && trump <= Trump.SIXES) return suitName(trump - Trump.BLANKS);
  if (trump === Trump.DOUBLES) return "doubles";
  if (trump === Trump.FOLLOW_ME) return "follow-me";
  return "?";
}

export function bidText(bid: Bid | undefined): string {
  if (bid === undefined) return "pass";
  switch (bid.kind) {
    case BidKind.POINTS:
    case BidKind.TRICKS:
      return String(bid.amount);
    case BidKind.MARKS:
      return `${42 * bid.amount} (${bid.amount} mark${bid.amount > 1 ? "s" : ""})`;
    case BidKind.MOON:
      return "the moon";
    case BidKind.OVERCALL:
      return "the overcall (42)";
    case BidKind.PLUNGE:
      return `plunge ${bid.amount} mark${bid.amount !== 1 ? "s" : ""}`;
    case BidKind.SPLASH:
      return `splash ${bid.amount} mark${bid.amount !== 1 ? "s" : ""}`;
    default:
      return "?";
  }
}

export function contractText(contract: Contract | undefined): string {
  if (contract === undefined) return "";
  switch (contract.kind) {
    case ContractKind.TRUMP:
      return trumpText(contract.trump);
    case ContractKind.NELLO:
      return "nello";
    case ContractKind.SEVENS:
      return "sevens";
    default:
      return "?";
  }
}

/** What a button offering `action` says. */
export function actionText(action: Action): string {
  const kind = action.kind;
  switch (kind.case) {
    case "bid":
      if (kind.value.kind === BidKind.MOON) return "Shoot the moon";
      if (kind.value.kind === BidKind.OVERCALL) return "Overcall: shoot for 42";
      return `Bid ${bidText(kind.value)}`;
    case "passBid":
      return "Pass";
    case "exchangeWidow":
      return `Lay out ${tileName(kind.value.discard ?? 0)}`;
    case "declineWidow":
      return "Leave the widow";
    case "declareContract":
      return kind.value.kind === ContractKind.TRUMP
        ? `Trump: ${contractText(kind.value)}`
        : `Declare ${contractText(kind.value)}`;
    case "playTile":
      return `Play ${tileName(kind.value.tile ?? 0)}`;
    case "resign":
      return "Resign";
    default:
      return "?";
  }
}

/** One line for an event (undefined for ones not worth a line). `name` names a seat;
 * `previous`, the event before it, tells a stuck dealer's pass (all_pass
 * forced_dealer_any_bid: the pass is given the lowest bid) from a bid that won. */
export function eventText(event: GameEvent, name: (seat: number) => string, previous?: GameEvent): string | undefined {
  const kind = event.kind;
  switch (kind.case) {
    case "gameCreated":
      return "the game was created";
    case "handDealt": {
      const players = kind.value.handSizes.length;
      return `hand ${kind.value.number} dealt; ${name(kind.value.dealer)} shakes, ${name((kind.value.dealer + 1) % players)} bids first`;
    }
    case "bidPlaced":
      return `${name(kind.value.seat)} bids ${bidText(kind.value.bid)}`;
    case "passed":
      return `${name(kind.value.seat)} passes`;
    case "auctionWon": {
      const e = kind.value;
      const partner = e.declarer !== e.seat ? `; ${name(e.declarer)} declares` : "";
      if (previous?.kind.case === "passed" && previous.kind.value.seat === e.seat) {
        return `${name(e.seat)} passed and is given ${bidText(e.bid)}: the dealer must take the hand${partner}`;
      }
      return `${name(e.seat)} wins the auction with ${bidText(e.bid)}${partner}`;
    }
    case "allPassed":
      return `everyone passed: ${name(kind.value.nextDealer)} deals again`;
    case "widowExchanged": {
      const e = kind.value;
      const seen = e.taken !== undefined && e.discard !== undefined
        ? ` (takes ${tileName(e.taken)}, lays out ${tileName(e.discard)})`
        : "";
      return `${name(e.seat)} takes the widow and lays a tile out${seen}`;
    }
    case "widowDeclined":
      return `${name(kind.value.seat)} leaves the widow`;
    case "contractDeclared": {
      const e = kind.value;
      const out = e.sittingOut.length ? ` (${e.sittingOut.map(name).join(", ")} sits out)` : "";
      return `${name(e.seat)} declares ${contractText(e.contract)}${out}`;
    }
    case "tilePlayed":
      return kind.value.faceDown
        ? `${name(kind.value.seat)} plays a tile face down`
        : `${name(kind.value.seat)} plays ${tileName(kind.value.tile)}`;
    case "trickWon": {
      const e = kind.value;
      const worth = e.faceDown ? "" : ` (${e.points} point${e.points !== 1 ? "s" : ""})`;
      return `${name(e.seat)} wins the trick${worth}`;
    }
    case "handScored": {
      const e = kind.value;
      return `${name(e.bidder)}'s ${bidText(e.bid)} is ${e.made ? "made" : "set"}: took ${e.taken.join(" / ")}, scores now ${e.scores.join(" / ")}`;
    }
    case "gameWon":
      return `game over: ${kind.value.seats.map(name).join(" and ")} win${kind.value.seats.length === 1 ? "s" : ""}`;
    case "clockExpired":
      return kind.value.policy === TimeoutPolicy.FORFEIT
        ? `${name(kind.value.seat)}'s clock ran out: forfeit`
        : `${name(kind.value.seat)}'s clock ran out: the lowest legal action is played`;
    case "resigned":
      return `${name(kind.value.seat)} resigns`;
    case "gameAbandoned":
      return kind.value.reason === AbandonReason.UNSTARTED
        ? "game over: the table never filled, and the game is closed with no winner"
        : "game over: nobody acted for too long, and the game is closed with no winner";
    default:
      return undefined;
  }
}

const PHASES: Record<Phase, string> = {
  [Phase.UNSPECIFIED]: "",
  [Phase.DEAL]: "dealing",
  [Phase.BIDDING]: "bidding",
  [Phase.WIDOW]: "the widow",
  [Phase.TRUMP]: "naming trump",
  [Phase.PLAY]: "play",
  [Phase.GAME_OVER]: "game over",
};

export function phaseText(phase: Phase): string {
  return PHASES[phase] ?? "?";
}

const STATUSES: Record<GameStatus, string> = {
  [GameStatus.UNSPECIFIED]: "",
  [GameStatus.OPEN]: "waiting for players",
  [GameStatus.PLAYING]: "in play",
  [GameStatus.FINISHED]: "finished",
  [GameStatus.ABANDONED]: "abandoned",
};

export function statusText(status: GameStatus): string {
  return STATUSES[status] ?? "?";
}

export function isMoon(rules: Ruleset | undefined): boolean {
  return rules?.family === Family.MOON;
}

/** "Texas 42" or "Moon", and the preset the game was made from. */
export function gameTitle(rules: Ruleset | undefined): string {
  const game = isMoon(rules) ? "Moon" : "Texas 42";
  return rules?.preset ? `${game} (${rules.preset})` : game;
}

/** What the scores count: Texas 42 plays for marks unless `points_to_win` is set; Moon for points. */
export function scoreUnit(rules: Ruleset | undefined): string {
  return isMoon(rules) || (rules?.pointsToWin ?? 0) > 0 ? "points" : "marks";
}

/** "7 marks", "1 mark", "-4 points". */
export function scoreText(score: number, rules: Ruleset | undefined): string {
  const unit = scoreUnit(rules);
  return `${score} ${score === 1 || score === -1 ? unit.slice(0, -1) : unit}`;
}
