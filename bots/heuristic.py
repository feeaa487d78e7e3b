"""The heuristic bot: plays Texas 42 and Moon by the rules of thumb a club player would name.

It reads the engine's view of its seat: the ruleset (Moon or Texas 42, the tiles in play, how
doubles play in nello), the trump from the declared contract, what the other seats may hold
from the tiles not yet seen and the suits each seat has shown out of.

**Bidding.** For every trump the hand could name (each suit, doubles, follow-me) it predicts
what the hand makes with a small linear model over the hand (trumps held, their unbroken top
run, trumps out, off-suit tiles nothing out can beat, doubles, count held and count on winners
...), fitted to self-play: in Texas 42 the points its side takes, in Moon its tricks. Texas 42:
it bids the lowest legal point bid it makes with a chance of 62% or more and passes otherwise;
never over its partner; marks only with a hand that takes every trick by itself (a plunge or
splash only when it does so with doubles trump, which the partner then names), one mark for
nello only with a hand clearly made for it (no doubles, low tiles). Moon: the bid with the best
expected score (the bid, won or lost, times its chance), passing when no bid beats what a
defender expects; the overcall is valued as the moon at 42, a moon a seat may still overcall
needs a surer hand, and so does any moon where a missed one loses the game. Only trumps the
ruleset lets it name count. A forced bid is made; a stuck dealer (who may pass and is then
given the lowest bid) bids only what is worth more than the lowest bid, and passes for it.

**Trump and widow.** It names the trump with the best prediction (the one that takes every
trick, if any); in Moon it lays out the tile whose loss costs the prediction least (the widow
is face down when it chooses), and keeps its tiles, where it may, when they take every trick.

**Play.** Leading, it pulls trumps while it holds the highest one out and an opponent may
still hold one, then leads what is likely to win (doubles, the top tile of a suit), else its
cheapest tile. Following, it never overtakes a partner who is winning: it throws count on a
partner's trick that is safe, and its cheapest tile on one that is not. Against an opponent's
tile it wins with the cheapest tile that holds (trumping in when there is count at stake),
weighing the chance that a seat still to play beats it, and otherwise discards low, keeping
count, trumps and winners. Under these rules each candidate tile is scored
``(2p - 1) * (points at stake + its count) - 0.6 * (what keeping it is worth)``, where ``p`` is
the chance its side takes the trick, from what the seats still to play may hold (the unseen
tiles, less the suits each has shown out of). Nello: the bidder plays to lose every trick, the
defenders to make it win one. Sevens leaves no choice worth making.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from boneyard.bots.base import (
    BID_ORDER,
    may_be_overcalled,
    moon_bid_worth,
    nothing_to_do,
    stuck_dealer_bid,
    tiles_in,
    trump_menu,
    view_rng,
)
from boneyard.engine import (
    Bid,
    BidKind,
    ContractKind,
    DeclareContract,
    DeclineWidow,
    ExchangeWidow,
    Pass,
    PlaceBid,
    PlayTile,
    Ruleset,
    SeatCommand,
    SeatView,
)
from boneyard.engine.contracts import (
    DOUBLES,
    DOUBLES_SUIT,
    FOLLOW_ME,
    SuitTable,
    nello_table,
    suit_table,
)
from boneyard.engine.tiles import (
    ALL_TILES,
    COUNT,
    DOUBLE_TILES,
    HIGH,
    LOW,
    Tile,
    TileSet,
    tileset,
)

__all__ = ["HeuristicStrategy", "hand_value", "p_makes", "takes_every_trick"]

# --- tuning ---
_TRICK_POINTS = 6.0
"""What a trick is worth on average in Texas 42 (42 points over 7 tricks): the unit of the
play's values, in Moon too."""
_KEEP_WEIGHT = 0.6
"""How much a tile's chance to win a later trick weighs against the trick now."""
_LEAD_EXTRA = 2.0
"""Count the other seats are expected to add to a Texas 42 trick."""

# The hand models: linear in ``_features`` (see there), fitted by least squares to what the
# declarer's side took when the heuristic played every seat and the declarer named a trump at
# random: one model for a suit trump, one for doubles, one for follow-me. Texas 42 (34,000
# hands played to the last trick) predicts the side's points, with a residual sd of about 10.5
# (the partner's hand is unknown); Moon (34,000 hands) the bidder's tricks after the widow,
# residual sd 0.8 to 1.0.
_FEATURES = (
    "bias",
    "trumps",
    "top_run",
    "other_trumps",
    "falling_trumps",
    "trumps_out",
    "top_tiles",
    "top_tiles_in_control",
    "second_tiles",
    "off_doubles",
    "count",
    "count_on_winners",
    "trump_duel",
    "count_at_risk",
    "voids",
    "trumps_squared",
)


def _weights(**weights: float) -> tuple[float, ...]:
    unknown = set(weights) - set(_FEATURES)
    if unknown:
        raise ValueError(f"no features {sorted(unknown)}")
    return tuple(weights.get(name, 0.0) for name in _FEATURES)


_POINTS_42_SUIT = _weights(
    bias=0.145,
    trumps=-0.73,
    top_run=0.616,
    other_trumps=-1.346,
    falling_trumps=0.963,
    trumps_out=1.745,
    top_tiles=0.059,
    top_tiles_in_control=0.869,
    second_tiles=0.238,
    off_doubles=1.804,
    count=0.113,
    count_on_winners=0.178,
    trump_duel=4.001,
    count_at_risk=-0.065,
    voids=0.623,
    trumps_squared=0.835,
)
_POINTS_42_DOUBLES = _weights(
    bias=0.291,
    trumps=0.313,
    top_run=1.017,
    other_trumps=-0.704,
    falling_trumps=0.549,
    trumps_out=1.727,
    top_tiles=1.73,
    top_tiles_in_control=2.188,
    second_tiles=0.837,
    count=0.116,
    count_on_winners=-0.017,
    trump_duel=2.784,
    count_at_risk=0.133,
    voids=0.57,
    trumps_squared=0.545,
)
_POINTS_42_FOLLOW_ME = _weights(
    bias=14.404,
    top_tiles=1.9,
    top_tiles_in_control=1.9,
    second_tiles=1.186,
    off_doubles=-0.774,
    count=0.215,
    count_on_winners=0.395,
    count_at_risk=-0.181,
)
_TRICKS_MOON_SUIT = _weights(
    bias=1.107,
    trumps=0.059,
    top_run=0.373,
    other_trumps=-0.314,
    falling_trumps=0.363,
    trumps_out=-0.387,
    top_tiles=0.117,
    top_tiles_in_control=0.263,
    second_tiles=0.091,
    off_doubles=0.522,
    trump_duel=0.493,
    voids=0.198,
    trumps_squared=0.091,
)
_TRICKS_MOON_DOUBLES = _weights(
    bias=-0.022,
    trumps=-0.098,
    top_run=0.246,
    other_trumps=-0.344,
    falling_trumps=0.328,
    trumps_out=-0.056,
    top_tiles=0.56,
    top_tiles_in_control=0.267,
    second_tiles=0.248,
    trump_duel=0.652,
    voids=-0.015,
    trumps_squared=0.148,
)
_TRICKS_MOON_FOLLOW_ME = _weights(
    bias=0.276,
    top_tiles=0.508,
    top_tiles_in_control=0.508,
    second_tiles=0.338,
    off_doubles=0.128,
)
_SD_42 = 10.0
_SHIFT_42 = 3.0
"""P(the side takes >= b points) ~ Phi((predicted - b + _SHIFT_42) / _SD_42), from the fit's
buckets (the points are skewed: a good hand often takes all 42)."""
_SD_MOON = 0.93
_FOLLOW_ME_MOON = 0.3
"""Tricks taken off a Moon follow-me estimate: its model errs the most, so the best of nine
estimates is too often follow-me by chance."""
_WIDOW_MOON = 1.0
"""Tricks added to a Moon hand's estimate when bidding: the widow adds about half a trick on
average (take it, lay out the worst tile), and bidding boldly wins head to head (tuned)."""
_BOLD_MOON = 0.5
"""What is added instead without a widow (``widow=none``): the boldness half alone."""
_OVERCALL_RISK = 0.3
"""Tricks taken off the estimate for the moon when a seat still to bid may overcall it
(``moon_overcall``): a moon no longer ends the auction, and the hand may be taken from it."""
_MOON_SHIFT = 0.3
"""Tricks taken off the estimate when weighing the moon itself."""
_MAKE_42 = 0.62
"""The chance of making a Texas 42 point bid the heuristic wants before bidding it."""
_PASS_MOON = 1.5
"""What a Moon player expects from passing: the tricks it takes against the bidder."""




@cache
def _above(trump: int) -> tuple[TileSet, ...]:
    """``_above(trump)[t]``: the tiles that beat ``t`` when ``t`` is led (higher trumps for a
    trump; higher tiles of its suit, not trumps, otherwise)."""
    table = suit_table(trump)
    out = []
    for t in ALL_TILES:
        led = table.lead_suit[t]
        power = table.power[led]
        if table.trumps >> t & 1:
            out.append(tileset([u for u in ALL_TILES if table.trumps >> u & 1 and power[u] > power[t]]))
        else:
            members = table.members[led] & ~table.trumps
            out.append(tileset([u for u in ALL_TILES if members >> u & 1 and power[u] > power[t]]))
    return tuple(out)


def _trump_suit(trump: int) -> int | None:
    if trump == FOLLOW_ME:
        return None
    return DOUBLES_SUIT if trump == DOUBLES else trump


def _p_any(pool: int, special: int, drawn: int) -> float:
    """Chance that ``drawn`` tiles taken at random from ``pool`` include one of ``special``."""
    if special <= 0 or drawn <= 0:
        return 0.0
    if drawn > pool - special:
        return 1.0
    return 1.0 - math.comb(pool - special, drawn) / math.comb(pool, drawn)


# ---------------------------------------------------------------- hand estimates


@dataclass(frozen=True, slots=True)
class _Estimate:
    trump: int
    value: float
    """Texas 42: the points the bidder's side should take; Moon: the bidder's tricks."""
    sure: bool
    """The hand takes every trick whatever the others hold (leading first)."""


def _features(hand: TileSet, trump: int, universe: TileSet) -> tuple[tuple[float, ...], bool]:
    """What the hand models weigh, for this trump (``_FEATURES``, in order): trumps held, the
    unbroken run of top trumps, the other trumps, trumps that fall to the ones led before
    them, trumps out; off-suit tiles nothing out can beat (and those once trumps are under
    control), tiles with one tile out above them, off-suit doubles; count held, count on
    winners; trumps held against trumps out; count at risk; voids to trump in; trumps squared.
    And whether the hand takes every trick whatever the others hold, leading first."""
    table = suit_table(trump)
    above = _above(trump)
    others = universe & ~hand
    trumps = table.trumps
    mine = sorted(tiles_in(hand & trumps), key=lambda t: -table.power[table.lead_suit[t]][t])
    n_trumps = len(mine)
    out = (others & trumps).bit_count()
    run = nearly = 0
    count_top = 0
    for j, t in enumerate(mine):
        higher = (others & above[t]).bit_count()
        if higher == 0 and run == j:
            run += 1
            count_top += COUNT[t]
        elif 0 < higher <= j:
            nearly += 1
    top = second = doubles = 0
    suits = [0] * 7
    for t in tiles_in(hand & ~trumps):
        higher = (others & above[t]).bit_count()
        if higher == 0:
            top += 1
            count_top += COUNT[t]
        elif higher == 1:
            second += 1
        if HIGH[t] == LOW[t]:
            doubles += 1
        suits[HIGH[t]] += 1
        if LOW[t] != HIGH[t]:
            suits[LOW[t]] += 1
    count = sum(COUNT[t] for t in tiles_in(hand))
    control = 1.0 if out == 0 or (run and n_trumps >= out) else 0.0
    voids = sum(1 for suit in range(7) if suit != trump and not suits[suit])
    features = (
        1.0, n_trumps, run, n_trumps - run, nearly, out, top, top * control, second, doubles,
        count, count_top, min(n_trumps, out), count - count_top, voids * (n_trumps > 0),
        n_trumps * n_trumps,
    )  # fmt: skip
    # Every trick, whatever the deal: the trumps are the top ones and at least as many as are
    # out (one seat may hold them all), and every other tile is the top of its suit.
    sure = top == len(tiles_in(hand & ~trumps)) and run == n_trumps and n_trumps >= out
    return tuple(float(f) for f in features), sure


def _estimate(hand: TileSet, trump: int, rules: Ruleset) -> _Estimate:
    moon = rules.is_moon
    features, sure = _features(hand, trump, rules.tiles)
    bias = 0.0
    if trump == FOLLOW_ME:
        weights = _TRICKS_MOON_FOLLOW_ME if moon else _POINTS_42_FOLLOW_ME
        bias = -_FOLLOW_ME_MOON if moon else 0.0
    elif trump == DOUBLES:
        weights = _TRICKS_MOON_DOUBLES if moon else _POINTS_42_DOUBLES
    else:
        weights = _TRICKS_MOON_SUIT if moon else _POINTS_42_SUIT
    value = bias + sum(f * w for f, w in zip(features, weights, strict=True))
    return _Estimate(trump, value, sure)


def _best_estimate(
    hand: TileSet, rules: Ruleset, trumps: Sequence[int] | None = None
) -> _Estimate:
    """The best of ``trumps``, by default every trump the ruleset lets a declarer name."""
    menu = trump_menu(rules) if trumps is None else trumps
    return max((_estimate(hand, t, rules) for t in menu), key=lambda e: (e.sure, e.value))


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _p_make_42(points: float, bid: int) -> float:
    return _phi((points - bid + _SHIFT_42) / _SD_42)


def _p_make_moon(tricks: float, bid: int) -> float:
    return _phi((tricks - bid + 0.5) / _SD_MOON)


def hand_value(hand: TileSet, rules: Ruleset) -> float:
    """What the heuristic expects a hand as dealt to make under its best trump, as it bids:
    in Texas 42 its side's points; in Moon its tricks, with what the widow adds."""
    value = _best_estimate(hand, rules).value
    if rules.is_moon:
        value += _WIDOW_MOON if rules.has_widow else _BOLD_MOON
    return value


def takes_every_trick(hand: TileSet, rules: Ruleset) -> bool:
    """The hand takes every trick, leading, whatever the others hold, under a trump the
    ruleset lets it name: its trumps are the top ones and as many as are out, every other
    tile the top of its suit."""
    return any(_estimate(hand, t, rules).sure for t in trump_menu(rules))


def p_makes(value: float, need: int, moon: bool) -> float:
    """The chance that a hand of ``hand_value`` ``value`` makes ``need`` (points or tricks),
    by the spread of what hands took around the model's estimate."""
    return _p_make_moon(value, need) if moon else _p_make_42(value, need)


def _nello_hand(hand: TileSet) -> bool:
    """Clearly made to lose every trick: no doubles, only low tiles."""
    tiles = tiles_in(hand)
    return (
        not hand & DOUBLE_TILES
        and all(HIGH[t] <= 4 for t in tiles)
        and sum(1 for t in tiles if HIGH[t] == 4) <= 2
    )


# ---------------------------------------------------------------- what a seat knows in play




class _Table:
    """One seat's reading of the hand in play."""

    def __init__(self, view: SeatView, seat: int) -> None:
        self.view = view
        self.seat = seat
        self.moon = view.rules.is_moon
        self.players = view.players
        self.hand = view.hand
        self.team = next((t for t in view.teams if seat in t), (seat,))
        self.out = set(view.sitting_out)
        contract = view.contract
        self.nello = contract is not None and contract.kind is ContractKind.NELLO
        trump = contract is not None and contract.kind is ContractKind.TRUMP
        self.trump = contract.trump if contract is not None and trump else FOLLOW_ME
        # Nello plays by the ruleset's nello_doubles (doubles high, low or a suit of their own).
        self.table: SuitTable = (
            nello_table(view.rules.nello_doubles) if self.nello else suit_table(self.trump)
        )
        self.above = _above(self.trump)
        self.trump_suit = _trump_suit(self.trump)
        self.trick = list(view.trick)
        universe = view.rules.tiles
        played = 0
        voids = [0] * self.players
        tricks = [list(t.plays or ()) for t in view.tricks]
        for plays in tricks + [self.trick]:
            if not plays:
                continue
            played |= tileset([t for _, t in plays])
            lead = plays[0][1]
            led = self.table.lead_suit[lead]
            members = self.table.members[led]
            led_trump = bool(self.table.trumps >> lead & 1)
            for who, t in plays[1:]:
                if members >> t & 1:
                    continue
                # Playing a trump to a plain lead proves a void only where a seat must follow
                # when able; some rulesets let it trump instead, so do not count on it.
                if led_trump or not self.table.trumps >> t & 1:
                    voids[who] |= members
        known = self.hand | played
        if view.discard is not None:
            known |= 1 << view.discard
        self.unseen = universe & ~known
        self.sizes = list(view.hand_sizes)
        self.possible = [
            self.unseen & ~voids[s] if s != self.seat and self.sizes[s] > 0 and s not in self.out else 0
            for s in range(self.players)
        ]
        self.opponents = [s for s in range(self.players) if s not in self.team and s not in self.out]
        self.after = self._after()

    def _after(self) -> list[int]:
        """Seats still to play to this trick after this one, in order (clockwise)."""
        played = {s for s, _ in self.trick}
        seats = ((self.seat + i) % self.players for i in range(1, self.players))
        return [s for s in seats if s not in played and s not in self.out]

    # --- probabilities

    def p_beat(self, seat: int, led: int, power: int) -> float:
        """Chance that ``seat`` holds a tile that beats ``power`` in suit ``led`` and may play it."""
        pool = self.possible[seat]
        n = pool.bit_count()
        drawn = min(self.sizes[seat], n)
        if not drawn:
            return 0.0
        pw = self.table.power[led]
        higher = tileset([u for u in tiles_in(pool) if pw[u] > power])
        if not higher:
            return 0.0
        if led == self.trump_suit:
            return _p_any(n, higher.bit_count(), drawn)
        follow = pool & self.table.members[led]
        f = follow.bit_count()
        p_follow = _p_any(n, (higher & follow).bit_count(), drawn)
        trumps = (higher & ~follow).bit_count()
        if not trumps:
            return p_follow
        p_void = 1.0 - _p_any(n, f, drawn)
        p_trump = _p_any(n - f, trumps, drawn)
        return min(1.0, p_follow + p_void * p_trump)

    def p_hold(self, led: int, power: int, seats: Sequence[int]) -> float:
        """Chance that no seat of ``seats`` beats ``power``."""
        p = 1.0
        for s in seats:
            p *= 1.0 - self.p_beat(s, led, power)
        return p

    def opponents_may_trump(self) -> bool:
        return any(self.possible[s] & self.table.trumps for s in self.opponents)

    # --- values

    def lead_power(self, t: Tile) -> int:
        return self.table.power[self.table.lead_suit[t]][t]

    def future(self, t: Tile) -> float:
        """Chance that ``t`` wins a trick later on if kept."""
        higher = (self.unseen & self.above[t]).bit_count()
        if self.table.trumps >> t & 1:
            return 1.0 if higher == 0 else max(0.2, 0.8 - 0.25 * higher)
        w = 0.85 if higher == 0 else 0.3 if higher == 1 else 0.05
        return w * (0.6 if self.opponents_may_trump() else 1.0)

    def keep(self, t: Tile) -> float:
        """What keeping ``t`` is worth, in points, with a touch of rank to break ties."""
        return self.future(t) * _TRICK_POINTS + 0.01 * self.lead_power(t)

    def count(self, t: Tile) -> int:
        return 0 if self.moon else COUNT[t]

    def stake(self) -> float:
        """The trick in progress so far, in points."""
        if self.moon:
            return _TRICK_POINTS
        return 1 + sum(COUNT[t] for _, t in self.trick)

    def winning(self) -> tuple[int, int, int]:
        """Led suit, the seat winning the trick in progress, and its tile's power."""
        led = self.table.lead_suit[self.trick[0][1]]
        pw = self.table.power[led]
        seat, best = self.trick[0][0], pw[self.trick[0][1]]
        for s, t in self.trick[1:]:
            if pw[t] > best:
                seat, best = s, pw[t]
        return led, seat, best


# ---------------------------------------------------------------- the strategy


class HeuristicStrategy:
    name = "heuristic"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def choose(self, view: SeatView) -> SeatCommand:
        legal = list(view.legal)
        if not legal or view.seat is None:
            raise nothing_to_do(view)
        if len(legal) == 1:
            return legal[0]
        moon = view.rules.is_moon
        chosen: SeatCommand | None
        if any(isinstance(a, PlayTile) for a in legal):
            chosen = self._play(view, view.seat, legal)
        elif any(isinstance(a, PlaceBid | Pass) for a in legal):
            chosen = self._bid(view, view.seat, moon, legal)
        elif any(isinstance(a, ExchangeWidow | DeclineWidow) for a in legal):
            chosen = self._widow(view, legal)
        elif any(isinstance(a, DeclareContract) for a in legal):
            chosen = self._declare(view, view.seat, moon, legal)
        else:
            chosen = None
        if chosen is None:
            return view_rng(self.seed, view).choice(legal)
        return chosen

    # --- the auction

    def _bid(
        self, view: SeatView, seat: int, moon: bool, legal: list[SeatCommand]
    ) -> SeatCommand:
        bids = [a for a in legal if isinstance(a, PlaceBid)]
        passes = [a for a in legal if isinstance(a, Pass)]
        if not passes:  # forced: the cheapest bid there is
            return min(bids, key=lambda a: (BID_ORDER[a.bid.kind], a.bid.amount))
        hand = view.hand
        # A stuck dealer's pass is the lowest bid: bid only what beats it, and pass for it.
        stuck = stuck_dealer_bid(view)
        if moon:
            chosen = self._bid_moon(view, hand, bids, stuck)
        else:
            chosen = self._bid_42(view, seat, hand, bids)
        if chosen is None or chosen.bid == stuck:
            return passes[0]
        return chosen

    def _bid_moon(
        self, view: SeatView, hand: TileSet, bids: list[PlaceBid], stuck: Bid | None
    ) -> PlaceBid | None:
        rules = view.rules
        tricks = _best_estimate(hand, rules).value + (
            _WIDOW_MOON if rules.has_widow else _BOLD_MOON
        )
        moon_shift = _MOON_SHIFT + (_OVERCALL_RISK if may_be_overcalled(view) else 0.0)

        def worth(a: PlaceBid) -> float:
            bid = a.bid
            if bid.shoots_the_moon:  # the moon (21) or the overcall (42): every trick
                shift = moon_shift if bid.kind is BidKind.MOON else _MOON_SHIFT
                p = _p_make_moon(tricks - shift, 7)
            else:
                p = _p_make_moon(tricks, bid.amount)
            return moon_bid_worth(rules, bid, p)

        best = max(bids, key=worth)
        if stuck is not None:
            return best  # passing is no way out: the best bid (the minimum, if that is best)
        return best if worth(best) > _PASS_MOON else None

    def _bid_42(
        self, view: SeatView, seat: int, hand: TileSet, bids: list[PlaceBid]
    ) -> PlaceBid | None:
        team = next((t for t in view.teams if seat in t), (seat,))
        if view.bidder is not None and view.bidder in team and view.bidder != seat:
            return None  # never bid over the partner
        best = _best_estimate(hand, view.rules)

        def of(kind: BidKind) -> list[PlaceBid]:
            return [a for a in bids if a.bid.kind is kind]

        if _estimate(hand, DOUBLES, view.rules).sure:
            # Every trick with doubles trump, whoever leads: a plunge or splash (the partner
            # names doubles) is worth more marks than a mark bid of one's own.
            special = of(BidKind.PLUNGE) or of(BidKind.SPLASH)
            if special:
                return special[0]
        if best.sure and of(BidKind.MARKS):
            return max(of(BidKind.MARKS), key=lambda a: a.bid.amount)
        one_mark = [a for a in of(BidKind.MARKS) if a.bid.amount == 1]
        if _nello_hand(hand) and one_mark:
            return one_mark[0]  # for nello, if the ruleset has it (else the best trump)
        points = [a for a in of(BidKind.POINTS) if _p_make_42(best.value, a.bid.amount) >= _MAKE_42]
        return min(points, key=lambda a: a.bid.amount, default=None)

    # --- widow and trump

    def _widow(self, view: SeatView, legal: list[SeatCommand]) -> SeatCommand | None:
        exchanges = [a for a in legal if isinstance(a, ExchangeWidow)]
        declines = [a for a in legal if isinstance(a, DeclineWidow)]
        hand = view.hand
        rules = view.rules
        trumps: Sequence[int] = trump_menu(rules)
        if view.contract is not None and view.contract.kind is ContractKind.TRUMP:
            trumps = (view.contract.trump,)
        if declines and (not exchanges or _best_estimate(hand, rules, trumps).sure):
            return declines[0]  # a hand that takes every trick keeps its tiles
        if not exchanges:
            return None

        def worth(action: ExchangeWidow) -> tuple[float, int]:
            d = action.discard
            e = _best_estimate(hand & ~(1 << d), rules, trumps)
            return (e.value, -HIGH[d] - LOW[d])

        return max(exchanges, key=worth)

    def _declare(
        self, view: SeatView, seat: int, moon: bool, legal: list[SeatCommand]
    ) -> SeatCommand | None:
        hand = view.hand
        by_kind: dict[ContractKind, list[DeclareContract]] = {}
        for a in legal:
            if isinstance(a, DeclareContract):
                by_kind.setdefault(a.contract.kind, []).append(a)
        trumps = by_kind.get(ContractKind.TRUMP, [])
        nello = by_kind.get(ContractKind.NELLO, [])
        high = view.high_bid
        special = high is not None and high.kind in (BidKind.PLUNGE, BidKind.SPLASH)
        if special and view.bidder != seat:
            # the partner plunged or splashed on its doubles: they are the trumps it wants
            doubles = [a for a in trumps if a.contract.trump == DOUBLES]
            if doubles:
                return doubles[0]
        if nello and _nello_hand(hand):
            return nello[0]
        if not trumps:
            others = nello or by_kind.get(ContractKind.SEVENS, [])
            return others[0] if others else None

        def worth(a: DeclareContract) -> tuple[bool, float]:
            e = _estimate(hand, a.contract.trump, view.rules)
            return (e.sure, e.value)

        return max(trumps, key=worth)

    # --- the play

    def _play(self, view: SeatView, seat: int, legal: list[SeatCommand]) -> SeatCommand:
        by_tile = {a.tile: a for a in legal if isinstance(a, PlayTile)}
        tiles = sorted(by_tile)
        if view.contract is not None and view.contract.kind is ContractKind.SEVENS:
            return by_tile[tiles[0]]  # every legal tile is as near 7 as the others
        table = _Table(view, seat)
        if table.nello:
            if view.bidder == seat:
                tile = _nello_bidder(table, tiles)
            else:
                tile = _nello_defender(table, tiles, view.bidder)
        elif not table.trick:
            tile = _lead(table, tiles)
        else:
            tile = _follow(table, tiles)
        return by_tile[tile]


def _lead(k: _Table, tiles: list[Tile]) -> Tile:
    trumps = [t for t in tiles if k.table.trumps >> t & 1]
    if trumps and k.opponents_may_trump():
        top = max(trumps, key=k.lead_power)
        if not k.unseen & k.above[top]:
            return top  # pull trumps while holding the highest one out
    extra = 0.0 if k.moon else _LEAD_EXTRA

    def value(t: Tile) -> float:
        led = k.table.lead_suit[t]
        p = k.p_hold(led, k.table.power[led][t], k.opponents)
        stake = (_TRICK_POINTS if k.moon else 1 + extra) + k.count(t)
        return (2 * p - 1) * stake - _KEEP_WEIGHT * k.keep(t)

    return max(tiles, key=value)


def _follow(k: _Table, tiles: list[Tile]) -> Tile:
    led, winner, best = k.winning()
    pw = k.table.power[led]
    ours = winner in k.team
    opp_after = [s for s in k.after if s not in k.team]
    mate_after = [s for s in k.after if s in k.team]
    stake = k.stake()
    under = [t for t in tiles if pw[t] <= best]
    if ours and under:
        # never overtake a partner who is winning; throw count on its trick when it holds
        candidates = under
    else:
        candidates = tiles
    hold_partner = k.p_hold(led, best, opp_after) if ours else 0.0

    def value(t: Tile) -> float:
        if pw[t] > best:
            p = k.p_hold(led, pw[t], opp_after)
        elif ours:
            p = hold_partner
        else:
            p = 0.3 if mate_after else 0.0
        return (2 * p - 1) * (stake + k.count(t)) - _KEEP_WEIGHT * k.keep(t)

    return max(candidates, key=value)


def _danger(k: _Table, t: Tile) -> int:
    """How likely ``t`` is to win a trick in nello: its best rank in either of its suits."""
    return max(k.table.power[s][t] for s in range(8) if k.table.members[s] >> t & 1)


def _nello_bidder(k: _Table, tiles: list[Tile]) -> Tile:
    if not k.trick:
        # lead what someone is most likely to beat
        def lose(t: Tile) -> tuple[float, int]:
            led = k.table.lead_suit[t]
            return (1 - k.p_hold(led, k.table.power[led][t], k.opponents), _danger(k, t))

        return max(tiles, key=lose)
    led, _, best = k.winning()
    pw = k.table.power[led]
    under = [t for t in tiles if pw[t] <= best]
    if under:
        return max(under, key=lambda t: (_danger(k, t), pw[t]))  # shed the dangerous tiles
    return min(tiles, key=lambda t: pw[t])


def _nello_defender(k: _Table, tiles: list[Tile], bidder: int | None) -> Tile:
    if not k.trick:
        return min(tiles, key=lambda t: (_danger(k, t), k.lead_power(t)))
    led, winner, best = k.winning()
    pw = k.table.power[led]
    played = {s for s, _ in k.trick}
    if bidder in played:
        if winner == bidder:
            under = [t for t in tiles if pw[t] <= best]
            if under:
                return max(under, key=lambda t: (pw[t], _danger(k, t)))
        return max(tiles, key=lambda t: (_danger(k, t), pw[t]))
    return min(tiles, key=lambda t: (pw[t], _danger(k, t)))
