"""The auction: one round clockwise from the dealer's left, each player bids once or passes.

``legal_bids`` lists every bid a seat may make now; ``check_bid`` says exactly why any other
bid is refused. Texas 42 [S2] and Moon [S0][S1] differ only in what a bid is.
"""

from __future__ import annotations

from boneyard.engine.bids import Bid, BidKind
from boneyard.engine.errors import BidNotAllowed, BidTooLow, MustBid
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.state import HandState
from boneyard.engine.tiles import DOUBLE_TILES

__all__ = ["auction_over", "check_bid", "check_pass", "declarer_for", "is_forced", "legal_bids"]

MOON_MIN_TRICKS = 4
MOON_MAX_TRICKS = 7


def is_forced(rules: Ruleset, hand: HandState) -> bool:
    """The last bidder after everyone else passed, when all_pass is forced_dealer."""
    return (
        rules.all_pass == "forced_dealer"
        and len(hand.bids) == rules.players - 1
        and hand.high_bid is None
    )


def _forced_bid(rules: Ruleset) -> Bid:
    return Bid.tricks(MOON_MIN_TRICKS) if rules.is_moon else Bid.points(rules.min_bid)


def _doubles_in(hand: HandState, seat: int) -> int:
    return (hand.hands[seat] & DOUBLE_TILES).bit_count()


def legal_bids(rules: Ruleset, hand: HandState, seat: int) -> list[Bid]:
    """Every bid ``seat`` may make now (it is assumed to be ``seat``'s turn)."""
    if is_forced(rules, hand):
        return [_forced_bid(rules)]
    high = hand.high_bid
    high_rank = high.rank if high is not None else 0
    if rules.is_moon:
        bids = [Bid.tricks(n) for n in range(MOON_MIN_TRICKS, MOON_MAX_TRICKS + 1) if n > high_rank]
        if not rules.moon_only_over_seven or high == Bid.tricks(MOON_MAX_TRICKS):
            bids.append(Bid.moon())
        return bids
    bids = [
        Bid.points(n) for n in range(max(rules.min_bid, high_rank + 1), rules.all_tricks_points)
    ]
    high_marks = high.amount if high is not None and high.is_mark_bid else 0
    if high_marks:
        bids.append(Bid.marks(high_marks + 1))
    else:
        bids.extend(Bid.marks(m) for m in range(1, rules.max_opening_marks + 1))
    if rules.plunge and _doubles_in(hand, seat) >= 4:
        bids.append(Bid.plunge(max(4, high_marks + 1)))
    if rules.splash and _doubles_in(hand, seat) >= 3:
        bids.append(Bid.splash(max(rules.splash_marks, high_marks + 1)))
    return bids


def check_bid(rules: Ruleset, hand: HandState, seat: int, bid: Bid) -> None:
    """Raise the reason ``bid`` is not legal for ``seat`` now; return if it is."""
    if bid in legal_bids(rules, hand, seat):
        return
    high = hand.high_bid
    where = f"hand {hand.number}, high bid {high if high is not None else 'none'}"
    if is_forced(rules, hand):
        raise BidNotAllowed(
            f"seat {seat} is the dealer after {rules.players - 1} passes and must bid "
            f"{_forced_bid(rules)}, not {bid} ({where})"
        )
    moon_kinds = (BidKind.TRICKS, BidKind.MOON)
    if (bid.kind in moon_kinds) != rules.is_moon:
        game = "Moon" if rules.is_moon else "Texas 42"
        raise BidNotAllowed(f"{bid.kind.value} is not a {game} bid ({where})")
    if bid.kind is BidKind.MOON:
        raise BidNotAllowed(f"the moon may be bid only over a 7 (moon_only_over_seven) ({where})")
    if bid.kind is BidKind.TRICKS and bid.amount < MOON_MIN_TRICKS:
        raise BidTooLow(f"the lowest Moon bid is {MOON_MIN_TRICKS} tricks, not {bid.amount} ({where})")
    if bid.kind is BidKind.TRICKS and not MOON_MIN_TRICKS <= bid.amount <= MOON_MAX_TRICKS:
        raise BidNotAllowed(f"a Moon bid is 4..7 tricks or the moon, not {bid.amount} ({where})")
    if bid.kind is BidKind.POINTS and bid.amount < rules.min_bid:
        raise BidTooLow(f"the lowest bid is {rules.min_bid}, not {bid.amount} ({where})")
    if bid.kind is BidKind.POINTS and not rules.min_bid <= bid.amount < rules.all_tricks_points:
        raise BidNotAllowed(
            f"point bids run {rules.min_bid}..{rules.all_tricks_points - 1}, not {bid.amount} "
            f"({where})"
        )
    if bid.kind in (BidKind.PLUNGE, BidKind.SPLASH):
        enabled = rules.plunge if bid.kind is BidKind.PLUNGE else rules.splash
        if not enabled:
            raise BidNotAllowed(f"{bid.kind.value} is off in this ruleset ({where})")
        need = 4 if bid.kind is BidKind.PLUNGE else 3
        if _doubles_in(hand, seat) < need:
            raise BidNotAllowed(
                f"a {bid.kind.value} needs {need} doubles in hand; seat {seat} holds "
                f"{_doubles_in(hand, seat)} ({where})"
            )
    if high is not None and bid.rank <= high.rank:
        raise BidTooLow(f"seat {seat} bid {bid}, which does not beat the high bid ({where})")
    if bid.amount < 1:
        raise BidNotAllowed(f"a bid of {bid.amount} {bid.kind.value} ({where})")
    raise BidNotAllowed(
        f"seat {seat} may not bid {bid}: mark bids open at 1..{rules.max_opening_marks} marks "
        f"and then go up one mark at a time; a plunge is 4 marks or one over the high bid, a "
        f"splash {rules.splash_marks} or one over ({where})"
    )


def check_pass(rules: Ruleset, hand: HandState, seat: int) -> None:
    if is_forced(rules, hand):
        raise MustBid(
            f"seat {seat} is the dealer and everyone else passed: the dealer must bid "
            f"{_forced_bid(rules)} (all_pass=forced_dealer)"
        )


def auction_over(rules: Ruleset, bids_made: int, last: Bid | None) -> bool:
    """Everyone has bid once, or the moon was shot (it ends the bidding at once [S0])."""
    return bids_made == rules.players or (last is not None and last.kind is BidKind.MOON)


def declarer_for(rules: Ruleset, bidder: int, bid: Bid) -> int:
    """Who names trump and leads: the partner on a plunge or splash, else the bidder."""
    if bid.kind in (BidKind.PLUNGE, BidKind.SPLASH):
        team = rules.teams[rules.team_of[bidder]]
        return next(seat for seat in team if seat != bidder)
    return bidder
