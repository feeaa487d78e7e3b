"""What the auction says about the hands: a model of how players bid, to weigh sampled deals.

A seat that bid 34 holds a hand it expects to make 34 with; a seat that passed when 30 was
there to bid holds one that does not make 30 (most of the time). ``Beliefs`` reads every bid
and pass of the hand's auction from a view (``claims``) and gives a deal of the other hands a
weight, the chance that players holding those hands would have bid as they did. The model is
the heuristic bot's (``boneyard.bots.heuristic``): its linear estimate of what a hand makes
under its best trump, fitted to 34,000 hands of self-play, and the spread of what the hand
really takes around that estimate. A sampling bot keeps a deal with that chance (rejection),
so its deals lean towards the hands the auction tells of, without ever ruling one out.

What says nothing is left out: the seat's own actions; a forced bid; a pass over the partner's
bid (players do not bid over a partner) or over a mark bid; mark bids (a hand that bids 42 may
be a nello hand; plunge and splash already fix the doubles a hand holds). The hands are weighed
as dealt: a seat's tiles now and the tiles it has played. When the tricks lie face down the
played tiles are unknown and the auction is not weighed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from boneyard.bots.heuristic import hand_value, p_makes
from boneyard.engine import Bid, BidKind, SeatView
from boneyard.engine.tiles import TileSet

__all__ = ["Beliefs", "Claim", "claims"]

FLOOR = 0.08
"""The least weight a deal gets for one claim: players misjudge hands, and a model that ruled
deals out would be sure of what it cannot know."""


@dataclass(frozen=True, slots=True)
class Claim:
    """``seat`` bid to make ``need`` (``bid``), or passed when ``need`` was the cheapest bid
    there was: points in Texas 42, tricks in Moon."""

    seat: int
    bid: bool
    need: int


def _cheapest(view: SeatView, high: Bid | None) -> int | None:
    """The cheapest bid a seat could have made over ``high``, as a need; ``None`` when that is
    a mark bid or beyond the moon (a pass there says little)."""
    rules = view.rules
    if rules.is_moon:
        if high is None:
            return rules.moon_min_bid
        if high.kind is BidKind.TRICKS and high.amount < 7:
            return max(rules.moon_min_bid, high.amount + 1)
        return None
    if high is None:
        return rules.min_bid
    if high.kind is BidKind.POINTS and high.amount + 1 < rules.all_tricks_points:
        return max(rules.min_bid, high.amount + 1)
    return None


def claims(view: SeatView) -> tuple[Claim, ...]:
    """What every other seat's bids and passes in this hand's auction claim."""
    rules = view.rules
    teams = view.teams
    team_of = {s: i for i, t in enumerate(teams) for s in t}
    out: list[Claim] = []
    high: Bid | None = None
    bidder: int | None = None
    for index, (seat, bid) in enumerate(view.bids):
        forced = (
            index == rules.players - 1
            and high is None
            and rules.all_pass in ("forced_dealer", "forced_dealer_any_bid")
        )
        if seat != view.seat and not forced:
            if bid is None:
                partner_high = bidder is not None and team_of.get(bidder) == team_of.get(seat)
                need = _cheapest(view, high)
                if need is not None and not partner_high:
                    out.append(Claim(seat, False, need))
            elif bid.kind is BidKind.POINTS or bid.kind is BidKind.TRICKS:
                out.append(Claim(seat, True, bid.amount))
            elif bid.shoots_the_moon:
                out.append(Claim(seat, True, 7))
        if bid is not None:
            high, bidder = bid, seat
    # Going round, a seat may bid several times: its last bid says the most about its hand.
    last_bid = {c.seat: i for i, c in enumerate(out) if c.bid}
    return tuple(c for i, c in enumerate(out) if not c.bid or last_bid[c.seat] == i)


class Beliefs:
    """The weight of deals against the auction of one view."""

    def __init__(self, view: SeatView) -> None:
        self.rules = view.rules
        self.moon = view.rules.is_moon
        self.claims = () if view.tricks_hidden else claims(view)
        self._values: dict[TileSet, float] = {}

    def _value(self, hand: TileSet) -> float:
        value = self._values.get(hand)
        if value is None:
            value = hand_value(hand, self.rules)
            self._values[hand] = value
        return value

    def weight(self, dealt: Sequence[TileSet]) -> float:
        """The chance, by the model, that seats dealt ``dealt[seat]`` bid and passed as they
        did (each claim at least ``FLOOR``)."""
        w = 1.0
        for c in self.claims:
            p = p_makes(self._value(dealt[c.seat]), c.need, self.moon)
            w *= max(FLOOR, p if c.bid else 1.0 - p)
        return w
