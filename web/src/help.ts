// Help: how to play Texas 42 and Moon, for players, and what the table's options change.
// Written from the project's rules (RULES.md); the server's engine is the authority, and the
// table only ever offers what its rules allow.

import { h, type Child } from "./dom";

function section(id: string, title: string, ...children: Child[]): HTMLElement {
  return h("section", { id, aria: { label: title } }, h("h2", {}, title), ...children);
}

function options(rows: [string, string][]): HTMLElement {
  return h("dl", {}, rows.map(([name, what]) => [h("dt", {}, name), h("dd", {}, what)]));
}

export function helpPage(root: HTMLElement): void {
  root.replaceChildren(
    h(
      "article",
      { class: "help" },
      h("h1", {}, "How to play"),
      h("p", {}, "Both games are played with dominoes, by taking tricks, as in Spades or Bridge. ",
        h("a", { href: "#/" }, "Play the computer"), " from the lobby to try them: the table only lets you choose what the rules allow, and the legal tiles are raised."),
      h("nav", { aria: { label: "help topics" } }, h("ul", {},
        h("li", {}, h("a", { href: "#/help", onclick: (e) => { e.preventDefault(); root.querySelector("#tiles")?.scrollIntoView(); } }, "Tiles, suits and tricks")),
        h("li", {}, h("a", { href: "#/help", onclick: (e) => { e.preventDefault(); root.querySelector("#texas42")?.scrollIntoView(); } }, "Texas 42")),
        h("li", {}, h("a", { href: "#/help", onclick: (e) => { e.preventDefault(); root.querySelector("#moon")?.scrollIntoView(); } }, "Moon")),
        h("li", {}, h("a", { href: "#/help", onclick: (e) => { e.preventDefault(); root.querySelector("#options")?.scrollIntoView(); } }, "House options")),
      )),
      section(
        "tiles",
        "Tiles, suits and tricks (both games)",
        h("p", {}, "A tile is written high end first: 6-4, 5-5. Each pip number 0 (blanks) to 6 is a suit, so a tile belongs to two suits until trump and the lead decide which."),
        h("ul", {},
          h("li", {}, "In a suit the double is highest, then the other end from high to low: 3-3, 6-3, 5-3, 4-3, 3-2, 3-1, 3-0."),
          h("li", {}, "Trump is named by whoever wins the bidding: a suit (every tile with that number is a trump, and only a trump), doubles (the seven doubles are the trump suit), or follow-me (no trump)."),
          h("li", {}, "A led tile that is not a trump leads its higher end (a double leads its own number)."),
          h("li", {}, "You must follow the led suit if you can (any trump when trump is led). If you cannot, play anything, a trump included."),
          h("li", {}, "The highest trump wins the trick; without trumps, the highest tile of the led suit. The winner leads next."),
        ),
      ),
      section(
        "texas42",
        "Texas 42",
        h("p", {}, "Four players in two teams; partners sit opposite. Seven tiles each, seven tricks a hand."),
        h("ul", {},
          h("li", {}, "Every hand holds 42 points: one for each trick, plus the count tiles: 5-0, 4-1 and 3-2 are worth 5; 6-4 and 5-5 are worth 10."),
          h("li", {}, "Bidding: one round, starting left of the dealer (the \"shaker\"). Bid 30 to 41 points, 42 (every trick, 1 mark), or marks: 84 is 2 marks, 126 is 3 ... A bid must beat the last one. On the first hand the holder of 1-0 bids first."),
          h("li", {}, "If everyone passes, the dealer must bid 30 (with the standard rules: the table may redeal instead)."),
          h("li", {}, "The winning bidder names trump and leads. Your team makes its bid by taking at least that many points (42 and mark bids: every trick). Made: your team scores the bid's marks; set: the other team does."),
          h("li", {}, "The first team to 7 marks wins. Play stops as soon as the hand's result cannot change."),
        ),
        h("h3", {}, "Special contracts (the house preset)"),
        options([
          ["Nello", "Bid at least 1 mark, then try to lose every trick. Your partner sits out; there is no trump."],
          ["Plunge", "With 4 or more doubles: bid at least 4 marks; your partner names trump and leads, and your team must take every trick."],
          ["Splash", "With 3 or more doubles: 2 marks (or 3), as a plunge."],
          ["Sevens", "No suits: everyone must play the tile whose pips are nearest 7; nearest wins (a tie goes to the first played). You must take every trick."],
        ]),
      ),
      section(
        "moon",
        "Moon",
        h("p", {}, "Three players, each alone. The blank tiles are taken out except 0-0, leaving 22: seven each, and one face down, the widow."),
        h("ul", {},
          h("li", {}, "Bidding: one round, each bids a number of tricks, 4 to 7, or shoots the moon (all 7 tricks, worth 21), or passes. Shooting the moon ends the bidding."),
          h("li", {}, "The widow: the winning bidder lays one tile of their hand out face down, and takes the widow into hand. The exchange is blind: you choose the tile to lay out before you see the widow."),
          h("li", {}, "The bidder names trump (a suit, doubles or follow-me) and leads any tile. Every trick is 1 point."),
          h("li", {}, "Made: the bidder scores the bid (not extra tricks); set: the bidder loses the bid. The moon: +21 made, -21 set. The others always score the tricks they took."),
          h("li", {}, "First to 21 points wins; if several pass 21 on one hand, a bidder who made it wins, otherwise the highest score."),
        ),
      ),
      section(
        "options",
        "House options",
        h("p", {}, "A new game can change these from its preset (the lobby's \"Options\"); the table plays by them for the whole game."),
        options([
          ["all pass", "What happens when everyone passes: the dealer must bid the minimum (forced dealer), everyone redeals, or the dealer may bid anything and a pass is given the minimum."],
          ["min bid", "Texas 42: the lowest bid (30)."],
          ["max opening marks", "Texas 42: the most marks an opening mark bid may be (2); later mark bids go one mark up."],
          ["first hand opener", "Who bids first on the first hand: the holder of 1-0, or a chosen seat."],
          ["marks to win / points to win", "How long the game is: 7 marks, or a number of points (each side then scores the points it took)."],
          ["end hand when decided", "Stop a hand as soon as its result cannot change."],
          ["hide tricks on mark bids", "On a bid of 84 or more, won tricks are turned face down."],
          ["may trump when able to follow", "You may trump instead of following suit."],
          ["nello, plunge, splash, sevens", "Allow these special contracts (Texas 42). Nello doubles: high or low in their suit, or a suit of their own."],
          ["widow", "Moon: the bidder must exchange, may exchange, or there is no widow (and no 0-0)."],
          ["widow before trump", "Moon: take the widow before naming trump (on), or after."],
          ["moon only over seven", "Moon: the moon may only be bid after someone bid 7."],
          ["made scores / set scores", "Moon: a made bid scores the bid or the tricks taken; a set bid loses the bid, or gives it to the others."],
          ["moon min bid", "Moon: the lowest bid (4)."],
          ["moon trumps", "Moon: which trumps may be named (suits and follow-me, suits and doubles ...)."],
          ["auction goes round", "Moon: bidding goes round until all but one have passed."],
          ["moon overcall", "Moon: a bid of 42 over the moon: all seven tricks for 42."],
          ["moon wins game / missed moon loses game", "Moon: a made moon wins at once; a set moon loses at once."],
          ["tie to earliest seat", "Moon: a tie at the end goes to the seat nearest the dealer's left."],
          ["bidder leads trump", "Moon: the first lead must be a trump if the bidder has one."],
        ]),
      ),
    ),
  );
}
