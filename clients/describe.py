"""Words for the API's messages, as players say them: ``6-4``, ``bids 84``, ``sixes``."""

from __future__ import annotations

from collections.abc import Sequence

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import actions_pb2, events_pb2, rules_pb2, view_pb2
from boneyard.engine import BidKind
from boneyard.engine.contracts import FOLLOW_ME, suit_table, trump_name
from boneyard.engine.tiles import HIGH, LOW, tile_name

__all__ = [
    "action_text",
    "bid_label",
    "bid_text",
    "contract_text",
    "count_text",
    "engine_trump",
    "event_text",
    "final_score_text",
    "hand_by_suit",
    "phase_text",
    "refusal_text",
    "side_text",
]


_MOON_KINDS = (rules_pb2.BID_KIND_TRICKS, rules_pb2.BID_KIND_MOON, rules_pb2.BID_KIND_OVERCALL)
"""The bids of Moon, which counts tricks (Texas 42 counts points)."""


def bid_label(bid: rules_pb2.Bid) -> str:
    """A bid as a menu shows it: its word as players write it (``engine.bid_text``, the
    notation's) with what that word leaves unsaid: ``30``, ``84 (2 marks)``, ``plunge 4 marks``,
    ``moon``, ``overcall (42)``."""
    try:
        said = codec.bid_from_proto(bid)
    except codec.MalformedMessage:
        return "?"
    word = engine.bid_text(said)
    if said.kind is BidKind.MARKS:
        return f"{word} ({count_text(said.amount, 'marks')})"
    if said.kind is BidKind.PLUNGE or said.kind is BidKind.SPLASH:
        return f"{word} mark{'s' if said.amount != 1 else ''}"
    if said.kind is BidKind.OVERCALL:
        return f"{word} ({said.amount})"
    return word


def bid_text(bid: rules_pb2.Bid) -> str:
    """A bid in a sentence: its label, the moon and the overcall with their article
    (``seat 2 bids the moon``, ``... wins the auction with 84 (2 marks)``)."""
    label = bid_label(bid)
    if bid.kind in (rules_pb2.BID_KIND_MOON, rules_pb2.BID_KIND_OVERCALL):
        return f"the {label}"
    return label


def engine_trump(contract: rules_pb2.Contract) -> int | None:
    """The engine's trump number (0..6, 7 doubles, 8 follow-me) of a trump contract."""
    if contract.kind == rules_pb2.CONTRACT_KIND_TRUMP and contract.trump:
        return int(contract.trump) - 1
    return None


def contract_text(contract: rules_pb2.Contract) -> str:
    trump = engine_trump(contract)
    if trump is not None:
        return trump_name(trump)
    if contract.kind == rules_pb2.CONTRACT_KIND_NELLO:
        return "nello"
    if contract.kind == rules_pb2.CONTRACT_KIND_SEVENS:
        return "sevens"
    return "?"


def action_text(action: actions_pb2.Action) -> str:
    which = action.WhichOneof("kind")
    if which == "bid":
        return f"bid {bid_text(action.bid)}"
    if which == "pass_bid":
        return "pass"
    if which == "exchange_widow":
        return f"take the widow, lay out {tile_name(action.exchange_widow.discard)}"
    if which == "decline_widow":
        return "leave the widow"
    if which == "declare_contract":
        return f"declare {contract_text(action.declare_contract)}"
    if which == "play_tile":
        return f"play {tile_name(action.play_tile.tile)}"
    return "?"


def event_text(event: events_pb2.Event, previous: events_pb2.Event | None = None) -> str | None:
    """One line for a stream event (``None`` for ones not worth a line). ``previous``, the
    event before it, tells a stuck dealer's pass (``all_pass`` = ``forced_dealer_any_bid``)
    that won the auction from a bid that did."""
    which = event.WhichOneof("kind")
    if which is None:
        return None
    # The oneof's field names each hold a message type of their own: a case per type is a case
    # per field, with the message typed.
    match getattr(event, which):
        case events_pb2.HandDealt() as e:
            first = (e.dealer + 1) % len(e.hand_sizes)
            return f"hand {e.number} dealt; seat {e.dealer} shakes, seat {first} bids first"
        case events_pb2.BidPlaced() as e:
            return f"seat {e.seat} bids {bid_text(e.bid)}"
        case events_pb2.Passed() as e:
            return f"seat {e.seat} passes"
        case events_pb2.AuctionWon() as e:
            extra = f"; seat {e.declarer} declares" if e.declarer != e.seat else ""
            if _passed_by(previous, e.seat):
                return (
                    f"seat {e.seat} passed and is given {bid_text(e.bid)}: "
                    f"the dealer must take the hand{extra}"
                )
            return f"seat {e.seat} wins the auction with {bid_text(e.bid)}{extra}"
        case events_pb2.AllPassed() as e:
            return f"everyone passed: seat {e.next_dealer} deals again"
        case events_pb2.WidowExchanged() as e:
            if e.HasField("taken") and e.HasField("discard"):  # the bidder's own view
                return (
                    f"seat {e.seat} takes the widow: {tile_name(e.taken)} comes in, "
                    f"{tile_name(e.discard)} is laid out"
                )
            return f"seat {e.seat} takes the widow and lays a tile out"
        case events_pb2.WidowDeclined() as e:
            return f"seat {e.seat} leaves the widow"
        case events_pb2.ContractDeclared() as e:
            out = f" (seat {', '.join(map(str, e.sitting_out))} sits out)" if e.sitting_out else ""
            return f"seat {e.seat} declares {contract_text(e.contract)}{out}"
        case events_pb2.TilePlayed() as e:
            # A play re-sent face down carries tile 0, which is no 0-0.
            return f"seat {e.seat} plays {'a tile face down' if e.face_down else tile_name(e.tile)}"
        case events_pb2.TrickWon() as e:
            if e.face_down:
                return f"seat {e.seat} wins the trick (face down)"
            return f"seat {e.seat} wins the trick ({e.points} point{'s' if e.points != 1 else ''})"
        case events_pb2.HandScored() as e:
            verdict = "made" if e.made else "set"
            moon = e.bid.kind in _MOON_KINDS
            took = " to ".join(map(str, e.taken)) + (" tricks" if moon else " points")
            # "seat 2's moon", not "seat 2's the moon": the label, without bid_text's article.
            return (
                f"seat {e.bidder}'s {bid_label(e.bid)} is {verdict} ({took}); "
                f"score {' to '.join(map(str, e.scores))}"
            )
        case events_pb2.GameWon() as e:
            return f"game over: {side_text(e.team, e.seats)} wins"
        case events_pb2.ClockExpired() as e:
            if e.policy == events_pb2.TIMEOUT_POLICY_FORFEIT:
                return f"seat {e.seat}'s clock ran out: seat {e.seat} forfeits"
            return f"seat {e.seat}'s clock ran out: its lowest legal action is played"
        case events_pb2.Resigned() as e:
            return f"seat {e.seat} resigns"
        case events_pb2.GameAbandoned() as e:
            if e.reason == events_pb2.ABANDON_REASON_UNSTARTED:
                return "game over: the table never filled, and the game is closed with no winner"
            return "game over: nobody acted for too long, and the game is closed with no winner"
    return None


def _passed_by(event: events_pb2.Event | None, seat: int) -> bool:
    return event is not None and event.WhichOneof("kind") == "passed" and event.passed.seat == seat


def side_text(team: int, seats: Sequence[int]) -> str:
    """Who scores or wins, as the table says it: ``seat 2`` where each seat plays for itself
    (Moon, Texas 42 for 3, 5 or 7), ``team 0 (seats 0, 2)`` where partners play together."""
    if len(seats) == 1:
        return f"seat {seats[0]}"
    return f"team {team} (seats {', '.join(map(str, seats))})"


def final_score_text(view: view_pb2.SeatView) -> str:
    """A game's last score on one line, for a program to read as well as a person:
    ``team 0 (seats 0 2): 7, team 1 (seats 1 3): 3; team 0 wins`` with partners,
    ``seat 0: 21, seat 1: 12, seat 2: -21; seat 0 wins`` where each seat plays for itself."""
    sides = []
    for team, score in enumerate(view.scores):
        seats = list(view.teams[team].seats) if team < len(view.teams) else []
        if len(seats) == 1:
            sides.append(f"seat {seats[0]}: {score}")
        else:
            sides.append(f"team {team} (seats {' '.join(map(str, seats))}): {score}")
    text = ", ".join(sides)
    if view.HasField("winner"):
        seats = list(view.teams[view.winner].seats) if view.winner < len(view.teams) else []
        who = f"seat {seats[0]}" if len(seats) == 1 else f"team {view.winner}"
        text += f"; {who} wins"
    return text


def refusal_text(reason: str, message: str) -> str:
    """A refused action as a person reads it: the rule in the reason's words, then the
    server's message (``must follow suit: seat 0 must follow sixes (6-4 led) with 6-3 ...``)."""
    words = reason.lower().replace("_", " ")
    return f"{words}: {message}" if words and message else words or message


def family_preset(rules: rules_pb2.Ruleset) -> str:
    """The standard preset of the rules' game, ``moon`` or ``texas42``: what a table without a
    preset of its own is called, and what its options are told apart from."""
    return "moon" if rules.family == rules_pb2.FAMILY_MOON else "texas42"


def count_text(n: int, unit: str) -> str:
    """``1 mark``, ``2 marks``, ``0 points``: a number of marks, points or tricks as said."""
    return f"{n} {unit.removesuffix('s')}" if n == 1 else f"{n} {unit}"


def hand_by_suit(view: view_pb2.SeatView) -> list[tuple[str, list[int]]]:
    """The seat's tiles grouped by the suit they belong to under the trump (by their higher
    end before trump is named), trumps first, each group high to low."""
    trump = engine_trump(view.contract) if view.HasField("contract") else None
    table = suit_table(trump if trump is not None else FOLLOW_ME)
    groups: dict[str, list[int]] = {}
    order: list[str] = []
    for tile in sorted(view.hand, key=lambda t: (HIGH[t], LOW[t]), reverse=True):
        if trump is not None and trump != FOLLOW_ME and table.trumps >> tile & 1:
            name = f"trumps ({trump_name(trump)})"
        else:
            name = trump_name(table.lead_suit[tile])
        if name not in groups:
            groups[name] = []
            order.append(name)
        groups[name].append(tile)
    order.sort(key=lambda n: (not n.startswith("trumps"), -len(groups[n])))
    return [(n, groups[n]) for n in order]


_PHASES: dict[int, str] = {
    view_pb2.PHASE_DEAL: "dealing",
    view_pb2.PHASE_BIDDING: "bidding",
    view_pb2.PHASE_WIDOW: "widow",
    view_pb2.PHASE_TRUMP: "naming trump",
    view_pb2.PHASE_PLAY: "play",
    view_pb2.PHASE_GAME_OVER: "game over",
}


def phase_text(phase: int) -> str:
    return _PHASES.get(phase, "?")
