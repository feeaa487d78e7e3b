"""The heuristic bot: plays Texas 42 and Moon by the rules of thumb a club player would name.

The view does not carry the ruleset, so everything is read from the view itself: Moon is told
by its bids (tricks or the moon) and its widow; the trump from the declared contract; what the
other seats may hold from the tiles not yet seen and the suits each seat has shown out of.

**Bidding.** For every trump the hand could name (each suit, doubles, follow-me) it estimates
the tricks the hand takes by itself (top trumps, long trumps once the top ones have pulled the
rest, off-suit doubles and tiles no unseen tile can beat), and in Texas 42 the points that
makes with a partner's help. It bids the lowest legal bid the estimate covers (in Moon, the
highest number of tricks it covers, since a made Moon bid scores the bid) and passes otherwise;
it never bids over its partner, bids marks (or the moon) only when the hand takes every trick
on its own, and a plunge, splash or nello only with a hand that is clearly made for it.

**Trump and widow.** It names the trump with the best estimate; in Moon it lays out the tile
whose loss costs the least (the widow is face down when it chooses).

**Play.** Leading, it pulls trumps while it holds the highest one out and an opponent may
still hold one, then leads what is likely to win (doubles, the top tile of a suit), else its
cheapest tile. Following, it never overtakes a partner who is winning: it throws count on a
partner's trick that is safe, and its cheapest tile on one that is not. Against an opponent's
tile it wins with the cheapest tile that holds (trumping in when there is count at stake),
weighing the chance that a seat still to play beats it, and otherwise discards low, keeping
count, trumps and winners. Nello: the bidder plays to lose every trick, the defenders to make it
win one. Sevens leaves no choice worth making.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from boneyard.v1 import actions_pb2, rules_pb2, view_pb2
from clients.strategies.base import view_rng
from engine.contracts import DOUBLES, DOUBLES_SUIT, FOLLOW_ME, SuitTable, suit_table
from engine.tiles import ALL_TILES, COUNT, DOUBLE_TILES, FULL_SET, HIGH, LOW, Tile, TileSet

__all__ = ["HeuristicStrategy"]

_MOON_TILES: TileSet = sum(1 << t for t in ALL_TILES if LOW[t] > 0 or HIGH[t] == 0)
"""Moon's 22 tiles: the double-six set without the blanks other than 0-0."""
_TRUMPS: tuple[int, ...] = tuple(range(7)) + (DOUBLES, FOLLOW_ME)
_MOON_BIDS = (rules_pb2.BID_KIND_TRICKS, rules_pb2.BID_KIND_MOON)
_TEXAS_BIDS = (
    rules_pb2.BID_KIND_POINTS,
    rules_pb2.BID_KIND_MARKS,
    rules_pb2.BID_KIND_PLUNGE,
    rules_pb2.BID_KIND_SPLASH,
)

# --- tuning (Texas 42 points; Moon tricks are scaled to the same) ---
_TRICK_POINTS = 6.0
"""What a trick is worth on average in Texas 42 (42 points over 7 tricks)."""
_PARTNER_TRICKS = 1.0
"""Tricks a bidder can expect its partner to add."""
_BID_MARGIN_42 = 0.0
"""Points the estimate must exceed a Texas 42 point bid by."""
_BID_MARGIN_MOON = 0.5
"""Tricks the estimate must exceed a Moon bid by."""
_WIDOW_TRICKS = 0.3
"""What taking the widow (and laying out the worst tile) adds to a Moon hand."""
_KEEP_WEIGHT = 0.6
"""How much a tile's chance to win a later trick weighs against the trick now."""
_LEAD_EXTRA = 2.0
"""Count the other seats are expected to add to a Texas 42 trick."""


def _bits(mask: TileSet) -> list[Tile]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _mask(tiles: Sequence[int]) -> TileSet:
    m = 0
    for t in tiles:
        m |= 1 << t
    return m


def _kind(action: actions_pb2.Action) -> str | None:
    return action.WhichOneof("kind")


def _trump_of(contract: rules_pb2.Contract) -> int:
    """The engine's trump (0..6, DOUBLES, FOLLOW_ME) of a trump contract."""
    return int(contract.trump) - 1


@cache
def _above(trump: int, doubles: str = "high") -> tuple[TileSet, ...]:
    """``_above(trump)[t]``: the tiles that beat ``t`` when ``t`` is led (higher trumps for a
    trump; higher tiles of its suit, not trumps, otherwise)."""
    table = suit_table(trump, doubles)
    out = []
    for t in ALL_TILES:
        led = table.lead_suit[t]
        power = table.power[led]
        if table.trumps >> t & 1:
            out.append(_mask([u for u in ALL_TILES if table.trumps >> u & 1 and power[u] > power[t]]))
        else:
            members = table.members[led] & ~table.trumps
            out.append(_mask([u for u in ALL_TILES if members >> u & 1 and power[u] > power[t]]))
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
    tricks: float
    """Tricks the hand should take by itself with this trump, leading first."""
    sure: bool
    """The hand takes every trick whatever the others hold (leading first)."""
    count: int
    """Count on the hand's own likely winners."""


def _estimate(hand: TileSet, trump: int, universe: TileSet) -> _Estimate:
    table = suit_table(trump)
    above = _above(trump)
    others = universe & ~hand
    trumps = table.trumps
    mine = sorted(_bits(hand & trumps), key=lambda t: -table.power[table.lead_suit[t]][t])
    outstanding = (others & trumps).bit_count()
    tricks = 0.0
    count = 0
    top_run = 0
    for j, t in enumerate(mine):
        higher = (others & above[t]).bit_count()
        if higher == 0:
            value = 1.0
            if j == top_run:
                top_run += 1
        elif higher <= j:
            value = 0.8  # the higher ones fall to the trumps led before it
        elif higher == j + 1 and len(mine) >= 3:
            value = 0.45
        else:
            value = 0.15
        tricks += value
        if value >= 0.8:
            count += COUNT[t]
    if not outstanding:
        control = 1.0
    elif top_run and len(mine) >= outstanding:
        control = 0.9
    elif top_run or len(mine) >= outstanding:
        control = 0.7
    else:
        control = 0.5
    off_sure = True
    for t in _bits(hand & ~trumps):
        higher = (others & above[t]).bit_count()
        if higher == 0:
            tricks += control
            count += COUNT[t]
        else:
            off_sure = False
            if higher == 1:
                tricks += 0.25 * control
    # Every trick, whatever the deal: the trumps are the top ones and at least as many as are
    # out (one seat may hold them all), and every other tile is the top of its suit.
    sure = off_sure and top_run == len(mine) and len(mine) >= outstanding
    return _Estimate(trump, min(tricks, 7.0), sure, count)


def _best_estimate(hand: TileSet, universe: TileSet, trumps: Sequence[int] = _TRUMPS) -> _Estimate:
    return max((_estimate(hand, t, universe) for t in trumps), key=lambda e: (e.tricks, e.count))


def _points(estimate: _Estimate) -> float:
    """Texas 42 points the bidding team should take with this hand and trump."""
    return _TRICK_POINTS * (estimate.tricks + _PARTNER_TRICKS) + 0.3 * estimate.count


def _nello_hand(hand: TileSet) -> bool:
    """Clearly made to lose every trick: no doubles, only low tiles."""
    tiles = _bits(hand)
    return (
        not hand & DOUBLE_TILES
        and all(HIGH[t] <= 4 for t in tiles)
        and sum(1 for t in tiles if HIGH[t] == 4) <= 2
    )


# ---------------------------------------------------------------- what a seat knows in play


def _is_moon(view: view_pb2.SeatView) -> bool:
    kinds = [a.bid.kind for a in view.legal_actions if _kind(a) == "bid"]
    kinds += [entry.bid.kind for entry in view.bids if entry.HasField("bid")]
    if view.HasField("high_bid"):
        kinds.append(view.high_bid.kind)
    if any(k in _MOON_BIDS for k in kinds):
        return True
    if any(k in _TEXAS_BIDS for k in kinds):
        return False
    if view.phase == view_pb2.PHASE_WIDOW or view.HasField("discard"):
        return True
    return view.players == 3 and sum(view.hand_sizes) <= 22


class _Table:
    """One seat's reading of the hand in play."""

    def __init__(self, view: view_pb2.SeatView, moon: bool) -> None:
        self.view = view
        self.seat = view.seat
        self.moon = moon
        self.players = view.players
        self.hand = _mask(view.hand)
        self.team = next((tuple(t.seats) for t in view.teams if self.seat in t.seats), (self.seat,))
        self.out = set(view.sitting_out)
        contract = view.contract
        self.nello = contract.kind == rules_pb2.CONTRACT_KIND_NELLO
        self.trump = _trump_of(contract) if contract.kind == rules_pb2.CONTRACT_KIND_TRUMP else FOLLOW_ME
        self.table: SuitTable = suit_table(self.trump)
        self.above = _above(self.trump)
        self.trump_suit = _trump_suit(self.trump)
        self.trick = [(p.seat, p.tile) for p in view.current_trick]
        universe = _MOON_TILES if moon else FULL_SET
        played = 0
        voids = [0] * self.players
        tricks = [[(p.seat, p.tile) for p in t.plays] for t in view.completed_tricks]
        for plays in tricks + [self.trick]:
            if not plays:
                continue
            played |= _mask([t for _, t in plays])
            lead = plays[0][1]
            led = self.table.lead_suit[lead]
            members = self.table.members[led]
            led_trump = bool(self.table.trumps >> lead & 1)
            for seat, t in plays[1:]:
                if members >> t & 1:
                    continue
                # Playing a trump to a plain lead proves a void only where a seat must follow
                # when able; some rulesets let it trump instead, so do not count on it.
                if led_trump or not self.table.trumps >> t & 1:
                    voids[seat] |= members
        known = self.hand | played
        if view.HasField("discard"):
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
        """Seats still to play to this trick after this one, in order."""
        if not self.trick:
            first = self.seat
        else:
            first = self.trick[0][0]
        active = self.players - len(self.out)
        seats = []
        s = self.seat
        while len(seats) + len(self.trick) + 1 < active:
            s = (s + 1) % self.players
            if s in self.out or s == first:
                if s == first:
                    break
                continue
            seats.append(s)
        return seats

    # --- probabilities

    def p_beat(self, seat: int, led: int, power: int) -> float:
        """Chance that ``seat`` holds a tile that beats ``power`` in suit ``led`` and may play it."""
        pool = self.possible[seat]
        n = pool.bit_count()
        drawn = min(self.sizes[seat], n)
        if not drawn:
            return 0.0
        pw = self.table.power[led]
        higher = _mask([u for u in _bits(pool) if pw[u] > power])
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

    def choose(self, view: view_pb2.SeatView) -> actions_pb2.Action:
        legal = list(view.legal_actions)
        if not legal:
            raise ValueError(f"seat {view.seat} has nothing to do at version {view.version}")
        if len(legal) == 1:
            return legal[0]
        kinds = {_kind(a) for a in legal}
        moon = _is_moon(view)
        if "play_tile" in kinds:
            chosen = self._play(view, moon, legal)
        elif "bid" in kinds or "pass_bid" in kinds:
            chosen = self._bid(view, moon, legal)
        elif "exchange_widow" in kinds or "decline_widow" in kinds:
            chosen = self._widow(view, legal)
        elif "declare_contract" in kinds:
            chosen = self._declare(view, moon, legal)
        else:
            chosen = None
        if chosen is None:
            return view_rng(self.seed, view).choice(legal)
        return chosen

    # --- the auction

    def _bid(
        self, view: view_pb2.SeatView, moon: bool, legal: list[actions_pb2.Action]
    ) -> actions_pb2.Action:
        bids = [a for a in legal if _kind(a) == "bid"]
        passes = [a for a in legal if _kind(a) == "pass_bid"]
        if not passes:  # forced: the cheapest bid there is
            return min(bids, key=lambda a: (a.bid.kind, a.bid.amount))
        hand = _mask(view.hand)
        if moon:
            return self._bid_moon(hand, bids) or passes[0]
        return self._bid_42(view, hand, bids) or passes[0]

    def _bid_moon(self, hand: TileSet, bids: list[actions_pb2.Action]) -> actions_pb2.Action | None:
        best = _best_estimate(hand, _MOON_TILES)
        moon = [a for a in bids if a.bid.kind == rules_pb2.BID_KIND_MOON]
        if best.sure and moon:
            return moon[0]
        covered = best.tricks + _WIDOW_TRICKS - _BID_MARGIN_MOON
        tricks = [a for a in bids if a.bid.kind == rules_pb2.BID_KIND_TRICKS and a.bid.amount <= covered]
        return max(tricks, key=lambda a: a.bid.amount, default=None)

    def _bid_42(
        self, view: view_pb2.SeatView, hand: TileSet, bids: list[actions_pb2.Action]
    ) -> actions_pb2.Action | None:
        seat = view.seat
        team = next((tuple(t.seats) for t in view.teams if seat in t.seats), (seat,))
        if view.HasField("bidder") and view.bidder in team and view.bidder != seat:
            return None  # never bid over the partner
        best = _best_estimate(hand, FULL_SET)

        def of(kind: int) -> list[actions_pb2.Action]:
            return [a for a in bids if a.bid.kind == kind]

        doubles = (hand & DOUBLE_TILES).bit_count()
        if best.sure and of(rules_pb2.BID_KIND_MARKS):
            return max(of(rules_pb2.BID_KIND_MARKS), key=lambda a: a.bid.amount)
        if doubles >= 6 and of(rules_pb2.BID_KIND_PLUNGE):
            return of(rules_pb2.BID_KIND_PLUNGE)[0]
        if doubles >= 5 and of(rules_pb2.BID_KIND_SPLASH):
            return of(rules_pb2.BID_KIND_SPLASH)[0]
        one_mark = [a for a in of(rules_pb2.BID_KIND_MARKS) if a.bid.amount == 1]
        if _nello_hand(hand) and one_mark:
            return one_mark[0]  # for nello, if the ruleset has it (else the best trump)
        covered = _points(best) - _BID_MARGIN_42
        points = [a for a in of(rules_pb2.BID_KIND_POINTS) if a.bid.amount <= covered]
        return min(points, key=lambda a: a.bid.amount, default=None)

    # --- widow and trump

    def _widow(self, view: view_pb2.SeatView, legal: list[actions_pb2.Action]) -> actions_pb2.Action | None:
        exchanges = [a for a in legal if _kind(a) == "exchange_widow"]
        if not exchanges:
            return None
        hand = _mask(view.hand)
        trumps: Sequence[int] = _TRUMPS
        if view.contract.kind == rules_pb2.CONTRACT_KIND_TRUMP:
            trumps = (_trump_of(view.contract),)

        def worth(action: actions_pb2.Action) -> tuple[float, int, int]:
            d = action.exchange_widow.discard
            e = _best_estimate(hand & ~(1 << d), _MOON_TILES, trumps)
            return (e.tricks, -int(d >> 0 and 0), -HIGH[d] - LOW[d])

        return max(exchanges, key=worth)

    def _declare(
        self, view: view_pb2.SeatView, moon: bool, legal: list[actions_pb2.Action]
    ) -> actions_pb2.Action | None:
        hand = _mask(view.hand)
        universe = _MOON_TILES if moon else FULL_SET
        by_kind: dict[int, list[actions_pb2.Action]] = {}
        for a in legal:
            if _kind(a) == "declare_contract":
                by_kind.setdefault(a.declare_contract.kind, []).append(a)
        trumps = by_kind.get(rules_pb2.CONTRACT_KIND_TRUMP, [])
        nello = by_kind.get(rules_pb2.CONTRACT_KIND_NELLO, [])
        if nello and _nello_hand(hand):
            return nello[0]
        if not trumps:
            return (nello or by_kind.get(rules_pb2.CONTRACT_KIND_SEVENS, [None]))[0]

        def worth(a: actions_pb2.Action) -> tuple[float, int]:
            e = _estimate(hand, _trump_of(a.declare_contract), universe)
            return (e.tricks, e.count)

        return max(trumps, key=worth)

    # --- the play

    def _play(
        self, view: view_pb2.SeatView, moon: bool, legal: list[actions_pb2.Action]
    ) -> actions_pb2.Action | None:
        by_tile = {a.play_tile.tile: a for a in legal if _kind(a) == "play_tile"}
        tiles = sorted(by_tile)
        if view.contract.kind == rules_pb2.CONTRACT_KIND_SEVENS:
            return by_tile[tiles[0]]  # every legal tile is as near 7 as the others
        table = _Table(view, moon)
        if table.nello:
            bidder = view.bidder if view.HasField("bidder") else None
            if bidder == view.seat:
                tile = _nello_bidder(table, tiles)
            else:
                tile = _nello_defender(table, tiles, bidder)
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
    over = [t for t in tiles if pw[t] > best]
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

    del over
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
