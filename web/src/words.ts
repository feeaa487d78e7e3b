// Words for the API's messages, as players say them ("bid 84", "sixes", "seat 2 plays 6-4"):
// the same words as the terminal client (clients/describe.py).

import {
  AbandonReason, type Action, type Bid, BidKind, type Contract, ContractKind,
  type Event as GameEvent, Family, GameStatus, Phase, type Ruleset, suitName, TimeoutPolicy,
  Trump,
} from "@boneyard/client";
import { tileName } from "./tiles";

export { suitName };

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

/** "1 point", "2 points", "1 trick". */
export function count(n: number, unit: string): string {
  return `${n} ${n === 1 || n === -1 ? unit : `${unit}s`}`;
}

/** One line for an event (undefined for ones not worth a line). `name` names a seat;
 * `previous`, the event before it, tells a stuck dealer's pass (all_pass
 * forced_dealer_any_bid: the pass is given the lowest bid) from a bid that won. `you`, the
 * seat the page plays: its lines say "You bid 31" rather than "alice (you) bids 31". */
export function eventText(event: GameEvent, name: (seat: number) => string, previous?: GameEvent, you?: number): string | undefined {
  const kind = event.kind;
  /** "You pass" / "alice passes". */
  const does = (seat: number, youVerb: string, verb: string): string => (seat === you ? `You ${youVerb}` : `${name(seat)} ${verb}`);
  const who = (seat: number): string => (seat === you ? "you" : name(seat));
  switch (kind.case) {
    case "gameCreated":
      return "The game was created";
    case "handDealt": {
      const players = kind.value.handSizes.length;
      const dealer = kind.value.dealer;
      return `Hand ${kind.value.number} dealt: ${does(dealer, "shake", "shakes")}, ${who((dealer + 1) % players)} ${(dealer + 1) % players === you ? "bid" : "bids"} first`;
    }
    case "bidPlaced":
      return `${does(kind.value.seat, "bid", "bids")} ${bidText(kind.value.bid)}`;
    case "passed":
      return does(kind.value.seat, "pass", "passes");
    case "auctionWon": {
      const e = kind.value;
      const partner = e.declarer !== e.seat ? `; ${does(e.declarer, "name", "names")} trump` : "";
      if (previous?.kind.case === "passed" && previous.kind.value.seat === e.seat) {
        return `${does(e.seat, "passed and are", "passed and is")} given ${bidText(e.bid)}: the dealer must take the hand${partner}`;
      }
      return `${does(e.seat, "win", "wins")} the auction with ${bidText(e.bid)}${partner}`;
    }
    case "allPassed":
      return `Everyone passed: ${does(kind.value.nextDealer, "deal", "deals")} again`;
    case "widowExchanged": {
      const e = kind.value;
      const seen = e.taken !== undefined && e.discard !== undefined
        ? ` (${tileName(e.discard)} out, ${tileName(e.taken)} in)`
        : "";
      return `${does(e.seat, "lay", "lays")} a tile out and ${e.seat === you ? "take" : "takes"} the widow${seen}`;
    }
    case "widowDeclined":
      return `${does(kind.value.seat, "leave", "leaves")} the widow`;
    case "contractDeclared": {
      const e = kind.value;
      const out = e.sittingOut.length ? ` (${e.sittingOut.map(who).join(", ")} ${e.sittingOut.length === 1 && e.sittingOut[0] !== you ? "sits" : "sit"} out)` : "";
      const what = e.contract?.kind === ContractKind.TRUMP ? `${contractText(e.contract)} as trump` : contractText(e.contract);
      return `${does(e.seat, "declare", "declares")} ${what}${out}`;
    }
    case "tilePlayed":
      return kind.value.faceDown
        ? `${does(kind.value.seat, "play", "plays")} a tile face down`
        : `${does(kind.value.seat, "play", "plays")} ${tileName(kind.value.tile)}`;
    case "trickWon": {
      const e = kind.value;
      const worth = e.faceDown ? "" : ` (${count(e.points, "point")})`;
      return `${does(e.seat, "win", "wins")} the trick${worth}`;
    }
    case "handScored": {
      const e = kind.value;
      const result = e.made ? "made it" : e.bidder === you ? "were set" : "was set";
      return `${does(e.bidder, "bid", "bid")} ${bidText(e.bid)} and ${result}: took ${e.taken.join(" / ")}, scores now ${e.scores.join(" / ")}`;
    }
    case "gameWon": {
      const seats = kind.value.seats;
      const youWon = you !== undefined && seats.includes(you);
      const others = seats.filter((s) => s !== you).map(name);
      return `Game over: ${youWon ? ["you", ...others].join(" and ") : others.join(" and ")} ${seats.length === 1 && !youWon ? "wins" : "win"}`;
    }
    case "clockExpired":
      return kind.value.policy === TimeoutPolicy.FORFEIT
        ? `${who(kind.value.seat)}: the clock ran out, a forfeit`
        : `${who(kind.value.seat)}: the clock ran out, so the lowest legal action is played`;
    case "resigned":
      return does(kind.value.seat, "resign", "resigns");
    case "gameAbandoned":
      return kind.value.reason === AbandonReason.UNSTARTED
        ? "Game over: the table never filled, and the game is closed with no winner"
        : "Game over: nobody acted for too long, and the game is closed with no winner";
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
  return count(score, scoreUnit(rules).slice(0, -1));
}
