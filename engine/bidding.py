"""The auction: one round clockwise from the dealer's left, each player bids once or passes
(or in Moon with ``auction_goes_round``, round and round until all but the high bidder passed).

``legal_bids`` lists every bid a seat may make now; ``check_bid`` says exactly why any other
bid is refused. Texas 42 [S2] and Moon [S0][S1] differ only in what a bid is.
"""

from __future__ import annotations

from boneyard.engine.bids import Bid, BidKind
from boneyard.engine.errors import BidNotAllowed, BidTooLow, MustBid
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.state import HandState
from boneyard.engine.tiles import DOUBLE_TILES

__all__ = [
    "auction_over",
    "check_bid",
    "check_pass",
    "declarer_for",
    "forced_bid",
    "is_forced",
    "is_stuck",
    "legal_bids",
    "next_bidder",
]

MOON_MAX_TRICKS = 7

Bids = tuple[tuple[int, Bid | None], ...]


def _everyone_else_passed(rules: Ruleset, hand: HandState) -> bool:
    # Without a bid the first players - 1 entries are passes, in either auction.
    return len(hand.bids) == rules.players - 1 and hand.high_bid is None


def is_forced(rules: Ruleset, hand: HandState) -> bool:
    """The last bidder after everyone else passed, when all_pass is forced_dealer."""
    return rules.all_pass == "forced_dealer" and _everyone_else_passed(rules, hand)


def is_stuck(rules: Ruleset, hand: HandState) -> bool:
    """The last bidder after everyone else passed, when all_pass is forced_dealer_any_bid:
    any bid, or a pass that is given ``forced_bid``."""
    return rules.all_pass == "forced_dealer_any_bid" and _everyone_else_passed(rules, hand)


def forced_bid(rules: Ruleset) -> Bid:
    """The bid a forced (or stuck) dealer is held to: the lowest bid."""
    return Bid.tricks(rules.moon_min_bid) if rules.is_moon else Bid.points(rules.min_bid)


def _doubles_in(hand: HandState, seat: int) -> int:
    return (hand.hands[seat] & DOUBLE_TILES).bit_count()


def legal_bids(rules: Ruleset, hand: HandState, seat: int) -> list[Bid]:
    """Every bid ``seat`` may make now (it is assumed to be ``seat``'s turn)."""
    if is_forced(rules, hand):
        return [forced_bid(rules)]
    high = hand.high_bid
    high_rank = high.rank if high is not None else 0
    if rules.is_moon:
        bids = [
            Bid.tricks(n) for n in range(rules.moon_min_bid, MOON_MAX_TRICKS + 1) if n > high_rank
        ]
        moon = Bid.moon()
        if high_rank < moon.rank and (
            not rules.moon_only_over_seven or high == Bid.tricks(MOON_MAX_TRICKS)
        ):
            bids.append(moon)
        if rules.moon_overcall and high == moon:
            bids.append(Bid.overcall())
        return bids
    bids = list(_POINT_BIDS[max(rules.min_bid, high_rank + 1) : rules.all_tricks_points])
    high_marks = high.amount if high is not None and high.is_mark_bid else 0
    if high_marks:
        bids.append(Bid.marks(high_marks + 1))
    else:
        bids.extend(Bid.marks(m) for m in range(1, rules.max_opening_marks + 1))
    if rules.plunge and _doubles_in(hand, seat) >= 4:
        bids.append(Bid.plunge(max(4, high_marks + 1)))
    if rules.splash and _doubles_in(hand, seat) >= 3:
        splash = max(rules.splash_marks, high_marks + 1)
        if not rules.splash_capped or splash <= SPLASH_CAP:
            bids.append(Bid.splash(splash))
    return bids


SPLASH_CAP = 3
"""The most marks a splash is worth with ``splash_capped``."""

_POINT_BIDS: tuple[Bid, ...] = tuple(Bid.points(n) for n in range(64))
"""``_POINT_BIDS[n]`` is ``Bid.points(n)``, made once (point bids stop at 48, with 2 players)."""


def check_bid(rules: Ruleset, hand: HandState, seat: int, bid: Bid) -> None:
    """Raise the reason ``bid`` is not legal for ``seat`` now; return if it is."""
    if bid in legal_bids(rules, hand, seat):
        return
    high = hand.high_bid
    where = f"hand {hand.number}, high bid {high if high is not None else 'none'}"
    if is_forced(rules, hand):
        raise BidNotAllowed(
            f"seat {seat} is the dealer after {rules.players - 1} passes and must bid "
            f"{forced_bid(rules)}, not {bid} ({where})"
        )
    moon_kinds = (BidKind.TRICKS, BidKind.MOON, BidKind.OVERCALL)
    if (bid.kind in moon_kinds) != rules.is_moon:
        game = "Moon" if rules.is_moon else "Texas 42"
        raise BidNotAllowed(f"{bid.kind.value} is not a {game} bid ({where})")
    if bid.kind is BidKind.OVERCALL:
        if not rules.moon_overcall:
            raise BidNotAllowed(f"the overcall is off in this ruleset (moon_overcall) ({where})")
        if bid.amount != Bid.overcall().amount:
            raise BidNotAllowed(f"an overcall is worth 42, not {bid.amount} ({where})")
        if high is not None and high.kind is BidKind.OVERCALL:
            raise BidTooLow(f"nothing beats the overcall ({where})")
        raise BidNotAllowed(f"the overcall may be bid only over a moon ({where})")
    if bid.kind is BidKind.MOON:
        if bid.amount != Bid.moon().amount:
            raise BidNotAllowed(f"a moon is worth 21, not {bid.amount} ({where})")
        if high is not None and high.rank >= bid.rank:
            raise BidTooLow(f"seat {seat} bid {bid}, which does not beat the high bid ({where})")
        raise BidNotAllowed(f"the moon may be bid only over a 7 (moon_only_over_seven) ({where})")
    lowest = rules.moon_min_bid
    if bid.kind is BidKind.TRICKS and bid.amount < lowest:
        raise BidTooLow(f"the lowest Moon bid is {lowest} tricks, not {bid.amount} ({where})")
    if bid.kind is BidKind.TRICKS and not lowest <= bid.amount <= MOON_MAX_TRICKS:
        raise BidNotAllowed(
            f"a Moon bid is {lowest}..{MOON_MAX_TRICKS} tricks or the moon, not {bid.amount} "
            f"({where})"
        )
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
    if bid.kind is BidKind.SPLASH and rules.splash_capped and bid.amount > SPLASH_CAP:
        raise BidNotAllowed(
            f"a splash is worth at most {SPLASH_CAP} marks (splash_capped), not {bid.amount} "
            f"({where})"
        )
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
            f"{forced_bid(rules)} (all_pass=forced_dealer)"
        )


_MOON, _OVERCALL = BidKind.MOON, BidKind.OVERCALL  # read once a bid: module names are faster


def _is_top(rules: Ruleset, bid: Bid | None) -> bool:
    """A bid nothing can beat: the moon [S0], or with ``moon_overcall`` the overcall."""
    if bid is None:
        return False
    return bid.kind is _OVERCALL or (bid.kind is _MOON and not rules.moon_overcall)


def auction_over(rules: Ruleset, bids: Bids) -> bool:
    """After ``bids`` (the auction so far, the latest last): one round, everyone has bid or
    passed once; going round, every player but the high bidder has passed (or all have). The
    top bid ends it at once either way."""
    if _is_top(rules, bids[-1][1]):
        return True
    if not rules.auction_goes_round:
        return len(bids) == rules.players
    passed = {seat for seat, bid in bids if bid is None}
    has_bid = len(passed) < len(bids)
    return len(passed) == rules.players - (1 if has_bid else 0)


def next_bidder(rules: Ruleset, bids: Bids) -> int | None:
    """Whose turn it is after ``bids``; ``None`` once the auction is over."""
    if auction_over(rules, bids):
        return None
    n = rules.players
    seat = (bids[-1][0] + 1) % n
    if rules.auction_goes_round:
        passed = {s for s, bid in bids if bid is None}
        while seat in passed:
            seat = (seat + 1) % n
    return seat


def declarer_for(rules: Ruleset, bidder: int, bid: Bid) -> int:
    """Who names trump and leads: the partner on a plunge or splash, else the bidder."""
    if bid.kind in (BidKind.PLUNGE, BidKind.SPLASH):
        team = rules.teams[rules.team_of[bidder]]
        return next(seat for seat in team if seat != bidder)
    return bidder
