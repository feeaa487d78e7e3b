// A hand's result, shown between hands: who bid what, made or set, what each side took (in
// Texas 42 its tricks and the count in them), what the hand changed and the scores now. Drawn
// from the HandScored event and the table as the hand ended (the view at that version);
// nothing is worked out from the rules but the count, which is a team's points less its
// tricks (one point each), both from the view. When the page was brought past the hand's end
// without that table (a click that raced another client while the stream was away), the
// result is drawn from the HandScored, with the hand's number, and its bids and contract if
// the page saw them, from the last view it had of the hand; the split into tricks and count
// is left out.

import { h } from "./dom";
import { type HandScored, Phase, type SeatView } from "@boneyard/client";
import { seatName, teamName, type TableModel } from "./table";
import { bidText, contractText, count, isMoon, scoreText } from "./words";

export interface SummaryOptions {
  /** The game ended with this hand. */
  final: boolean;
  /** A spectator's summary goes on by itself after a few seconds. */
  spectator: boolean;
  /** Continue to the next hand (none at the game's end). */
  onContinue?: () => void;
  /** The hand's own view: the table as it ended (`ended`), or the last the page saw of it;
   * undefined when the page never saw the hand. The model's view is the table shown. */
  hand: SeatView | undefined;
  ended: boolean;
}

function signed(n: number, text: string): string {
  return n > 0 ? `+${text}` : text;
}

export function handSummary(model: TableModel, scored: HandScored, options: SummaryOptions): HTMLElement {
  const view = model.view;
  const hand = options.hand;
  const moon = isMoon(model.rules);
  const you = view.seat;
  const bidder = scored.bidder === you ? "You" : seatName(model, scored.bidder);
  const result = scored.made ? "made it" : scored.bidder === you ? "were set" : "was set";
  const headline = `${bidder} bid ${bidText(scored.bid)} and ${result}`;
  const contract = hand?.contract ? contractText(hand.contract) : "";
  // (A view of the hand still in its auction has only part of it.)
  const auction = hand && (options.ended || hand.phase !== Phase.BIDDING)
    ? hand.bids.map((b) => `${b.seat === you ? "you" : seatName(model, b.seat)} ${b.bid ? bidText(b.bid) : "pass"}`).join(", ")
    : "";
  const rows = view.teams.map((team, t) => {
    const taken = scored.taken[t] ?? 0;
    const tricks = options.ended ? hand?.tricksWon[t] : undefined;
    const mine = you !== undefined && team.seats.includes(you);
    const isBidder = team.seats.includes(scored.bidder);
    let took: string;
    if (moon) took = count(taken, "trick");
    else if (tricks !== undefined) took = `${count(taken, "point")}: ${count(tricks, "trick")} and ${taken - tricks} in count`;
    else took = count(taken, "point");
    return h(
      "tr",
      { class: `${mine ? "mine" : ""}${isBidder ? " bidder" : ""}` },
      h("th", { scope: "row" }, teamName(model, t), isBidder ? h("small", {}, " (bid)") : null),
      h("td", {}, `took ${took}`),
      h("td", {}, `${signed(scored.changes[t] ?? 0, scoreText(scored.changes[t] ?? 0, model.rules))} this hand`),
      h("td", { class: "score" }, `now ${scoreText(scored.scores[t] ?? 0, model.rules)}`),
    );
  });
  return h(
    "section",
    { class: `hand-summary ${scored.made ? "made" : "set"}`, aria: { label: "hand result" } },
    h("h2", {}, hand ? `Hand ${hand.handNumber}: ${headline}` : `Hand scored: ${headline}`),
    h(
      "p",
      { class: "meta" },
      auction ? `Bids: ${auction}.` : "",
      contract ? ` ${["nello", "sevens"].includes(contract) ? "Contract" : "Trump"}: ${contract}.` : "",
    ),
    h("table", { class: "summary-table", aria: { label: moon ? "each player" : "each team" } }, h("tbody", {}, rows)),
    options.onContinue
      ? h(
          "p",
          { class: "continue" },
          h("button", { type: "button", class: "primary big", data: { key: "continue" }, onclick: options.onContinue }, "Continue"),
          options.spectator ? h("span", { class: "meta" }, " The next hand shows in a few seconds.") : null,
        )
      : null,
  );
}
