"""The sampling bot: deals the unseen tiles many ways and solves each deal exactly.

It sees what any seat sees (the engine's view, the complete ruleset included) and nothing
else. For each decision it draws deals of the tiles it has not seen that agree with everything
the view tells (``_Knowledge``):

- the tiles played (unless the tricks lie face down), its own hand, its Moon discard;
- how many tiles each seat holds; the rest lie out of play (the Moon widow or discard, tiles
  out of play with 3, 5 or 6 players, a nello partner's hand, tricks played face down);
- suits a seat has shown out of: a seat that did not follow a led suit holds none of it (a
  trump played to a plain lead counts only where the ruleset says a player must follow when
  able: ``may_trump_when_able_to_follow`` off);
- the bids: a plunge needs 4 doubles in the bidder's hand as dealt, a splash 3; and a
  declarer names the trump it is long in, so deals are kept with a chance that grows with the
  declarer's trumps (``_DECLARER_TRUMPS``).

Each deal is solved by ``boneyard.engine.solver`` (perfect information), and the play best on average
over the deals is chosen. What "best" means is the hand's result, not raw points: the bidding
side wants to make its bid and the others to set it, so each deal scores 1 when the seat's
side gets what it wants, plus a small share of the points (tricks) it takes as tie-breaker:

- Texas 42, point bid: the seat's team's points (tricks + count) from here on; made when the
  bidding team's points reach the bid.
- Texas 42, 42 and mark bids (plunge and splash too): tricks; made when the bidding team has
  taken every trick.
- Nello: the bidder's tricks, the opponents trying to make it take one.
- Moon: the bidder against the two others together; made when the bidder reaches its bid.

Only the side of the goal needs to be exact, so each deal is searched in a window around it
(fail-soft alpha-beta): the tie-breaker is only known near the goal, which is all it is for.

**Auction, widow and trump.** It simulates its own hand: over deals of the other hands, it
solves the whole hand from its opening lead under each trump worth trying (the best few by a
quick count of sure winners) and bids what it makes often enough: in Texas 42 the lowest legal
point bid it makes with probability ``_MAKE_42`` (42 or 84 when it takes every trick that
often), in Moon the bid (or the moon) with the best expected score; it names the trump that
makes the bid most often (nello too, when it may), and in Moon lays out the tile whose loss
costs least, over deals of the widow too (when the ruleset has one). It never bids over its
partner. Only the trumps the ruleset lets it name are tried. The overcall is valued as the
moon at 42; a moon a seat may still overcall must clear ``_OVERCALL_RISK`` more, and a moon
that loses the game when missed costs the game's points more when set. A stuck dealer (who
may pass and is then given the lowest bid) bids only what beats the lowest bid, and passes for
it. Solved deals are played with perfect information, so they promise more than a table
gives: a Texas 42 bid counts as made in a deal only with ``_SHIFT_42`` points to spare
(measured). In Moon the opposite correction (``_SHIFT_MOON``, half a trick bolder) won more against the heuristic.

**Time.** ``time_budget`` (seconds) bounds each decision: it is turned into a budget of solver
nodes (``NODES_PER_SECOND`` of the core in use), so that the decision is a function of the view
alone, never of the machine's speed or load: the same view always gets the same action.
Auction, widow and trump decisions get ``auction_budget`` (default five times as much): they
solve whole hands under several trumps. ``samples`` caps the deals per decision.

The pseudo-random deals come from ``view_rng(seed, view)``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TypeVar

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
    Phase,
    PlaceBid,
    PlayTile,
    SeatCommand,
    SeatView,
)
from boneyard.engine.contracts import FOLLOW_ME, SuitTable, nello_table, suit_table
from boneyard.engine.solver import (
    CoreName,
    Game,
    Position,
    SearchAborted,
    Solver,
    best_core,
    remaining_points,
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

__all__ = ["NODES_PER_SECOND", "SamplerStrategy"]

_T = TypeVar("_T")

NODES_PER_SECOND: dict[str, int] = {"c": 12_000_000, "python": 150_000}
"""Solver nodes a second, a little under what each core does on the development machine
(``make bench-solver``): ``time_budget`` seconds are this many nodes a second."""

_ALL_TRICKS_BIDS = (BidKind.MARKS, BidKind.PLUNGE, BidKind.SPLASH)

# --- tuning ---
_TIE_BREAK = 0.02
"""Weight of the points (tricks) taken, as a share of those left, beside making the bid (1)."""
_MAKE_42 = 0.6
"""The chance of making a Texas 42 point bid, over the simulated deals, it wants to bid it."""
_SHIFT_42 = 5
"""Points the solved deals overstate what a team takes at the table: perfect information plays
every hand as if it saw the others (measured: the sampler team declaring against the heuristic
took 4 to 5 points less than the solved value of the same deals). A bid counts as made in a
simulated deal when the solved value clears it by this much."""
_MAKE_ALL = 0.75
"""The chance of taking every trick it wants to bid 42 (1 mark) when a point bid will not do."""
_MAKE_84 = 0.9
"""The chance of taking every trick it wants to bid 84 (2 marks) or more."""
_SHIFT_MOON = -0.5
"""As ``_SHIFT_42``, in tricks, for the Moon bidder; negative: bidding half a trick bolder than
the solved deals say won more head to head with the heuristic (+0.5 and -1.0 did worse)."""
_PASS_MOON = 1.5
"""What a Moon player expects from passing (the tricks it takes against another bidder)."""
_OVERCALL_RISK = 0.25
"""The share of a trick a moon must clear by, beside ``_SHIFT_MOON``, while a seat still to bid
may overcall it (``moon_overcall``): the moon no longer ends the auction."""
_TRUMPS_TRIED = 4
"""Trumps simulated in the auction and for the declaration (the best by the quick count)."""
_DECLARER_TRUMPS = (0.03, 0.1, 0.3, 0.7, 1.0)
"""The chance a deal is kept when the declarer (not this seat) held 0, 1, 2, 3, 4+ trumps of
the trump it named (doubles for doubles): players name the trump they are long in."""
_FIRST_SAMPLE = 4
"""The first deal may spend this many budgets (so that there is nearly always an answer);
past that the decision falls back on a rule of thumb (``_fallback_play``)."""


def _made(value: float, need: int, shift: float) -> float:
    """Whether ``value`` clears ``need`` by ``shift``: 1 or 0, and in between for a fractional
    shift (``value = need`` with ``shift = 0.5`` is half made)."""
    return min(1.0, max(0.0, value - (need + shift) + 1))






# ---------------------------------------------------------------- a quick count of winners


@cache
def _beaters(trump: int) -> tuple[tuple[TileSet, TileSet], ...]:
    """For each tile led under ``trump``: the tiles of its suit that beat it, and the trumps
    that beat it (for a trump: the higher trumps, and nothing)."""
    table = suit_table(trump)
    out = []
    for t in ALL_TILES:
        led = table.lead_suit[t]
        power = table.power[led]
        above = tileset([u for u in ALL_TILES if power[u] > power[t]])
        if table.trumps >> t & 1:
            out.append((above, 0))
        else:
            out.append((above & ~table.trumps, above & table.trumps))
    return tuple(out)


def _quick_tricks(hand: TileSet, trump: int, universe: TileSet) -> float:
    """A rough count of the tricks ``hand`` takes under ``trump`` (only to rank trumps and
    discards before simulating): top trumps and long trumps, tiles nothing out beats, doubles."""
    table = suit_table(trump)
    beaters = _beaters(trump)
    others = universe & ~hand
    trumps_out = (others & table.trumps).bit_count()
    mine = hand & table.trumps
    n_trumps = mine.bit_count()
    value = 0.0
    for t in tiles_in(mine):
        higher = (others & beaters[t][0]).bit_count()
        value += 1.0 if higher == 0 else 0.55 if higher == 1 else 0.3
    value += 0.25 * max(0, n_trumps - trumps_out)
    control = 1.0 if trumps_out == 0 or n_trumps >= trumps_out else 0.6 if n_trumps else 0.35
    for t in tiles_in(hand & ~table.trumps):
        in_suit = (others & beaters[t][0]).bit_count()
        base = 0.9 if in_suit == 0 else 0.3 if in_suit == 1 else 0.05
        value += base * control
    return value


def _ranked_trumps(hand: TileSet, trumps: Sequence[int], universe: TileSet, keep: int) -> list[int]:
    ranked = sorted(trumps, key=lambda t: (-_quick_tricks(hand, t, universe), t))
    return ranked[:keep]


# ---------------------------------------------------------------- what the seat knows


@dataclass(frozen=True, slots=True)
class _Bin:
    """Where unseen tiles may lie: a seat's hand (``seat``) or out of play (``seat=None``)."""

    seat: int | None
    size: int
    forbidden: TileSet


class _Knowledge:
    """Everything the view tells about where the unseen tiles are."""

    def __init__(self, view: SeatView, seat: int) -> None:
        self.view = view
        self.rules = view.rules
        self.moon = view.rules.is_moon
        self.universe = view.rules.tiles
        self.seat = seat
        self.players = view.players
        self.teams = view.teams
        self.hand = view.hand
        self.sitting_out = view.sitting_out
        self.sizes = list(view.hand_sizes)
        contract = view.contract
        self.contract_kind = contract.kind if contract is not None else None
        if contract is not None and contract.kind is ContractKind.TRUMP:
            self.trump = contract.trump
            self.table: SuitTable | None = suit_table(self.trump)
        elif contract is not None and contract.kind is ContractKind.NELLO:
            self.trump = FOLLOW_ME
            self.table = nello_table(view.rules.nello_doubles)
        else:
            self.trump = FOLLOW_ME
            self.table = None
        self.trick = view.trick
        tricks = [t.plays for t in view.tricks if t.plays is not None]
        played = tileset([t for plays in tricks for _, t in plays] + [t for _, t in self.trick])
        self.played = played
        self.may_trump = view.rules.may_trump_when_able_to_follow
        self.voids = self._voids(tricks + [self.trick] if self.trick else tricks)
        self._played_by = [0] * self.players
        for plays in tricks + [self.trick]:
            for s, t in plays:
                self._played_by[s] |= 1 << t
        self.declarer: int | None = view.declarer
        self.declared_trumps: TileSet = 0
        if self.table is not None and self.contract_kind is ContractKind.TRUMP:
            self.declared_trumps = self.table.trumps  # the doubles, for doubles; none, follow-me
        known = self.hand | played
        if view.discard is not None:
            known |= 1 << view.discard
        self.pool = self.universe & ~known

    def team_of(self, seat: int) -> tuple[int, ...]:
        return next((t for t in self.teams if seat in t), (seat,))

    def _voids(self, tricks: list[tuple[tuple[int, int], ...]]) -> list[TileSet]:
        """Suits each seat has shown out of (by not following them)."""
        voids = [0] * self.players
        table = self.table
        if table is None:
            return voids
        for plays in tricks:
            lead = plays[0][1]
            led = table.lead_suit[lead]
            members = table.members[led]
            led_trump = bool(table.trumps >> lead & 1)
            for seat, t in plays[1:]:
                if members >> t & 1:
                    continue
                if led_trump or not self.may_trump or not table.trumps >> t & 1:
                    voids[seat] |= members
        return voids

    def bins(self, exclude: int | None = None) -> list[_Bin]:
        """Where the unseen tiles lie: every other seat in play, and out of play."""
        me = self.seat if exclude is None else exclude
        bins = [
            _Bin(s, self.sizes[s], self.voids[s] & self.pool)
            for s in range(self.players)
            if s != me and s not in self.sitting_out and self.sizes[s] > 0
        ]
        rest = self.pool.bit_count() - sum(b.size for b in bins)
        if rest > 0:
            bins.append(_Bin(None, rest, 0))
        return bins

    def doubles_needed(self) -> dict[int, int]:
        """Doubles a seat held as dealt, by its bid: 4 for a plunge, 3 for a splash."""
        need: dict[int, int] = {}
        for seat, bid in self.view.bids:
            if bid is None:
                continue
            if bid.kind is BidKind.PLUNGE:
                need[seat] = 4
            elif bid.kind is BidKind.SPLASH:
                need[seat] = max(need.get(seat, 0), 3)
        need.pop(self.seat, None)
        return need

    def played_by(self, seat: int) -> TileSet:
        """The tiles ``seat`` has played that this seat saw."""
        return self._played_by[seat]


# ---------------------------------------------------------------- dealing


def _deal(rng: random.Random, pool: TileSet, bins: Sequence[_Bin]) -> list[TileSet] | None:
    """The pool dealt into the bins (each its size, none a forbidden tile), near uniformly:
    tiles in random order, each to a bin chosen in proportion to the room left in it, among
    the bins that leave the rest dealable (Hall's condition on the bins). ``None`` if the
    constraints cannot be met."""
    tiles = tiles_in(pool)
    k = len(bins)
    if sum(b.size for b in bins) != len(tiles):
        return None
    hands = [0] * k
    if not any(b.forbidden for b in bins):
        rng.shuffle(tiles)
        start = 0
        for i, b in enumerate(bins):
            hands[i] = tileset(tiles[start : start + b.size])
            start += b.size
        return hands
    full = (1 << k) - 1
    sig = {t: full & ~sum(1 << i for i, b in enumerate(bins) if b.forbidden >> t & 1) for t in tiles}
    counts: dict[int, int] = {}
    for s in sig.values():
        counts[s] = counts.get(s, 0) + 1
    room = [b.size for b in bins]
    subsets = range(1, full + 1)

    def feasible() -> bool:
        for subset in subsets:
            cap = sum(room[i] for i in range(k) if subset >> i & 1)
            need = sum(n for s, n in counts.items() if s & ~subset == 0)
            if need > cap:
                return False
        return True

    if not feasible():
        return None
    rng.shuffle(tiles)
    for t in tiles:
        s = sig[t]
        choices = [i for i in range(k) if s >> i & 1 and room[i] > 0]
        counts[s] -= 1
        while choices:
            weights = [room[i] for i in choices]
            i = rng.choices(choices, weights)[0]
            room[i] -= 1
            if feasible():
                hands[i] |= 1 << t
                break
            room[i] += 1
            choices.remove(i)
        else:
            return None
    return hands


def _sample_hands(
    rng: random.Random, k: _Knowledge, my_hand: TileSet | None = None, tries: int = 30
) -> tuple[TileSet, ...] | None:
    """One deal of every seat's hand now (this seat's as given, or as it is).

    Deals where a plunger or splasher lacks its doubles are refused; a deal is kept with the
    chance ``_DECLARER_TRUMPS`` gives the declarer's trumps (dealt, played ones included), so
    that the deals lean towards hands that would have named this trump."""
    bins = k.bins()
    need = {s: (n, k.played_by(s)) for s, n in k.doubles_needed().items()}
    declarer = k.declarer
    lean = declarer is not None and declarer != k.seat and k.declared_trumps != 0
    best: tuple[float, tuple[TileSet, ...]] | None = None
    for _ in range(tries):
        dealt = _deal(rng, k.pool, bins)
        if dealt is None:
            return None
        hands = [0] * k.players
        hands[k.seat] = k.hand if my_hand is None else my_hand
        for b, tiles in zip(bins, dealt, strict=True):
            if b.seat is not None:
                hands[b.seat] = tiles
        if not all(((hands[s] | p) & DOUBLE_TILES).bit_count() >= n for s, (n, p) in need.items()):
            continue
        if not lean:
            return tuple(hands)
        assert declarer is not None
        held = ((hands[declarer] | k.played_by(declarer)) & k.declared_trumps).bit_count()
        chance = _DECLARER_TRUMPS[min(held, len(_DECLARER_TRUMPS) - 1)]
        if rng.random() < chance:
            return tuple(hands)
        if best is None or chance > best[0]:
            best = (chance, tuple(hands))
    return best[1] if best is not None else tuple(hands)


# ---------------------------------------------------------------- the budget


class _Budget:
    """Solver nodes a decision may spend; deterministic, so the decision depends on the view
    alone."""

    def __init__(self, nodes: int, samples: int) -> None:
        self.nodes = max(nodes, 1)
        self.left = nodes
        self.samples = samples
        self.done = 0

    def call(self, solver: Solver, work: Callable[..., _T], *args: object) -> _T | None:
        """``work(*args)`` (a solve on ``solver``), or ``None`` (and nothing done) once the
        budget is spent (the first deal may spend ``_FIRST_SAMPLE`` budgets)."""
        if self.left <= 0 and self.done:
            return None
        before = solver.nodes
        solver.node_limit = before + (self.left if self.done else _FIRST_SAMPLE * self.nodes)
        try:
            result = work(*args)
        except SearchAborted:
            self.left = 0
            return None
        finally:
            solver.node_limit = 0
        self.left -= solver.nodes - before
        return result


# ---------------------------------------------------------------- objectives


@dataclass(frozen=True, slots=True)
class _Objective:
    """What a deal's solved value ``v`` (the side's points or tricks from here on) means to
    this seat: its side gets what it wants when ``v >= boundary(left)`` (``at_least``) or
    ``v < boundary(left)`` (``left``: all that is still to win)."""

    game: Game
    side: tuple[int, ...]
    scorers: tuple[int, ...]
    boundary: Callable[[int], int]
    at_least: bool
    more_is_better: bool
    """The tie-breaker: a larger ``v`` is better for this seat."""
    margin: int
    """The solver's window reaches this far past the boundary: values further away are only
    bounds (fail-soft), which is all the goal needs; the tie-breaker is clipped there."""

    def utility(self, value: int, left: int) -> float:
        b = self.boundary(left)
        goal = value >= b if self.at_least else value < b
        share = min(max(value, b - 1 - self.margin), b + self.margin) / max(left, 1)
        return float(goal) + _TIE_BREAK * (share if self.more_is_better else 1 - share)

    def window(self, left: int) -> tuple[int, int]:
        b = self.boundary(left)
        return b - 1 - self.margin, b + self.margin


def _tricks_needed(bid: Bid) -> int:
    """The tricks a Moon bid needs: its number, or all seven for the moon (and the overcall)."""
    return 7 if bid.shoots_the_moon else bid.amount


def _others(k: _Knowledge, team: Sequence[int]) -> tuple[int, ...]:
    return tuple(s for s in range(k.players) if s not in team and s not in k.sitting_out)


def _play_objective(k: _Knowledge) -> _Objective | None:
    view = k.view
    table = k.table
    bidder, bid = view.bidder, view.high_bid
    if table is None or bidder is None or bid is None:
        return None
    mine = k.team_of(k.seat)
    bidding = k.team_of(bidder)
    we_bid = k.seat in bidding
    team_index = {s: i for i, t in enumerate(k.teams) for s in t}
    won = list(view.tricks_won)
    lost_one = any(n for i, n in enumerate(won) if i != team_index.get(bidder, 0))

    def game(points: bool) -> Game:
        return Game(
            table=table,
            players=k.players,
            teams=k.teams,
            sitting_out=k.sitting_out,
            points=COUNT if points else (0,) * 28,
            trick_value=1,
            may_trump=k.may_trump,
        )

    if k.moon:  # v: the bidder's tricks, the two others against it
        need = _tricks_needed(bid)
        have = won[team_index.get(bidder, 0)] if won else 0
        return _Objective(
            game(False), (bidder,), (bidder,), lambda n: need - have, we_bid, we_bid, 1
        )
    if k.contract_kind is ContractKind.NELLO:  # v: the bidder's tricks
        return _Objective(
            game(False), _others(k, bidding), (bidder,), lambda n: 1, not we_bid, not we_bid, 1
        )
    if bid.kind in _ALL_TRICKS_BIDS:  # v: this seat's team's tricks
        if lost_one:
            return _Objective(game(False), mine, mine, lambda n: -99, True, True, 1)
        return _Objective(
            game(False), mine, mine, (lambda n: n) if we_bid else (lambda n: 1), True, True, 1
        )
    # A point bid; v: this seat's team's points.
    taken = list(view.taken) if view.taken else [0] * len(k.teams)
    amount = bid.amount
    ours = taken[team_index.get(k.seat, 0)] if taken else 0
    theirs = taken[team_index.get(bidder, 0)] if taken else 0
    if we_bid:
        return _Objective(game(True), mine, mine, lambda n: amount - ours, True, True, 6)
    # The bidders fail when theirs + (left - v) < amount.
    return _Objective(
        game(True), mine, mine, lambda n: n + theirs - amount + 1, True, True, 6
    )


def _fallback_play(k: _Knowledge, tiles: list[Tile]) -> Tile:
    """A rule of thumb for when not even one deal could be solved in the budget: lead the
    strongest tile; follow with the cheapest tile that wins when an opponent is winning, else
    the cheapest tile."""
    table = k.table
    assert table is not None
    if not k.trick:
        return max(tiles, key=lambda t: (table.power[table.lead_suit[t]][t], -t))
    power = table.power[table.lead_suit[k.trick[0][1]]]
    winner, best = k.trick[0][0], power[k.trick[0][1]]
    for s, t in k.trick[1:]:
        if power[t] > best:
            winner, best = s, power[t]
    cheapest = min(tiles, key=lambda t: (COUNT[t], power[t], t))
    if winner in k.team_of(k.seat):
        return cheapest
    winners = [t for t in tiles if power[t] > best]
    return min(winners, key=lambda t: (power[t], t)) if winners else cheapest


# ---------------------------------------------------------------- the strategy


class SamplerStrategy:
    """See the module's doc. ``core``: the solver core (``"c"`` or ``"python"``; the fastest
    built)."""

    name = "sampler"
    every_trick_shift: float = _SHIFT_MOON
    """``_SHIFT_MOON`` for a Moon bid of every trick (7 tricks, the moon, the overcall): a
    subclass may calibrate its own."""

    def __init__(
        self,
        seed: int = 0,
        time_budget: float = 0.2,
        samples: int = 48,
        auction_budget: float | None = None,
        core: CoreName | None = None,
    ) -> None:
        self.seed = seed
        self.time_budget = time_budget
        self.samples = samples
        self.auction_budget = 5 * time_budget if auction_budget is None else auction_budget
        self.core: CoreName = core or best_core()

    def _shift(self, need: int) -> float:
        """The correction of the solved tricks for a Moon bid of ``need`` tricks."""
        return self.every_trick_shift if need >= 7 else _SHIFT_MOON

    def _budget(self, seconds: float) -> _Budget:
        return _Budget(int(seconds * NODES_PER_SECOND[self.core]), self.samples)

    def choose(self, view: SeatView) -> SeatCommand:
        legal = list(view.legal)
        if not legal or view.seat is None:
            raise nothing_to_do(view)
        if len(legal) == 1:
            return legal[0]
        rng = view_rng(self.seed, view)
        k = self._read(view, view.seat)
        chosen: SeatCommand | None
        if any(isinstance(a, PlayTile) for a in legal):
            chosen = self._play(k, legal, rng)
        elif any(isinstance(a, PlaceBid | Pass) for a in legal):
            chosen = self._bid(k, legal, rng)
        elif any(isinstance(a, ExchangeWidow | DeclineWidow) for a in legal):
            chosen = self._widow(k, legal, rng)
        elif any(isinstance(a, DeclareContract) for a in legal):
            chosen = self._declare(k, legal, rng)
        else:
            chosen = None
        return chosen if chosen is not None else legal[0]

    # --- what the seat knows, and the deals it draws (a subclass may weigh them)

    def _read(self, view: SeatView, seat: int) -> _Knowledge:
        return _Knowledge(view, seat)

    def _deal_hands(self, rng: random.Random, k: _Knowledge) -> tuple[TileSet, ...] | None:
        """One deal of every seat's hand now (``_sample_hands``)."""
        return _sample_hands(rng, k)

    # --- the play

    def _play(
        self, k: _Knowledge, legal: list[SeatCommand], rng: random.Random
    ) -> SeatCommand | None:
        by_tile = {a.tile: a for a in legal if isinstance(a, PlayTile)}
        objective = _play_objective(k)
        if objective is None:  # sevens: every legal tile is as near 7 as the others
            return by_tile[min(by_tile)]
        solver = Solver(objective.game, objective.side, objective.scorers, core=self.core)
        leader = k.trick[0][0] if k.trick else k.seat
        allowed = tileset(list(by_tile))
        totals = dict.fromkeys(by_tile, 0.0)
        budget = self._budget(self.time_budget)
        while budget.done < budget.samples:
            hands = self._deal_hands(rng, k)
            if hands is None:
                break
            position = Position(hands, leader, k.trick)
            left = remaining_points(objective.game, position)
            alpha, beta = objective.window(left)
            out = budget.call(solver, solver.move_values, position, allowed, alpha, beta)
            if out is None:
                break
            budget.done += 1
            for t, v in out.items():
                totals[t] += objective.utility(v, left)
        if not budget.done:
            return by_tile[_fallback_play(k, sorted(by_tile))]
        return by_tile[max(sorted(totals), key=lambda t: totals[t])]

    # --- simulating a whole hand

    def _simulate(
        self,
        k: _Knowledge,
        rng: random.Random,
        trumps: Sequence[int],
        moon: bool,
        widow_discards: Sequence[int] | None = None,
        nello: bool = False,
        floor: int = -1,
        every_trick: list[int] | None = None,
    ) -> dict[tuple[int, int], list[int]]:
        """Deals of the other hands, each solved from this seat's opening lead: for each
        ``(trump, discard)`` (discard -1 when there is none) the values over the deals, all of
        the same deals: its team's points (Texas 42) or its tricks (Moon). In Moon before the
        widow is taken (``widow_discards``), the widow is dealt too and joins the hand in place
        of each discard. ``nello`` adds ``(-1, -1)``: the bidder's tricks in nello. Values at or
        below ``floor`` only need to be known to be there: the search is cut off below it.
        ``every_trick`` (Texas 42, with at least one trump), when given, gets what every trick
        is worth on each deal solved, in the same order: the tricks and the count dealt (with
        3, 5 or 6 players some count may lie out of play, so it is not always
        ``all_tricks_points``)."""
        seat = k.seat
        team = k.team_of(seat)
        solvers: dict[tuple[int, bool], Solver] = {}

        def solver_for(trump: int) -> Solver:
            key = (trump, False)
            if key not in solvers:
                table = suit_table(trump)
                game = Game(
                    table=table, players=k.players, teams=k.teams,
                    points=(0,) * 28 if moon else COUNT, may_trump=k.may_trump,
                )
                solvers[key] = Solver(game, (seat,) if moon else team, core=self.core)
            return solvers[key]

        nello_solver: Solver | None = None
        if nello:
            out = tuple(s for s in team if s != seat)
            game = Game(
                table=nello_table(k.rules.nello_doubles), players=k.players, teams=k.teams,
                sitting_out=out, may_trump=k.may_trump,
            )
            nello_solver = Solver(game, _others(k, team), (seat,), core=self.core)

        results: dict[tuple[int, int], list[int]] = {}
        discards = list(widow_discards) if widow_discards is not None else [-1]
        budget = self._budget(self.auction_budget)
        widow_bins = widow_discards is not None
        while budget.done < budget.samples:
            if widow_bins:
                hands_w = self._deal_with_widow(k, rng)
                if hands_w is None:
                    break
                hands, widow = hands_w
            else:
                dealt = self._deal_hands(rng, k)
                if dealt is None:
                    break
                hands, widow = dealt, -1
            sample: dict[tuple[int, int], int] = {}
            ok = True
            for d in discards:
                mine = k.hand if d < 0 else (k.hand & ~(1 << d)) | (1 << widow)
                position = Position(hands[:seat] + (mine,) + hands[seat + 1 :], seat)
                for trump in trumps:
                    s = solver_for(trump)
                    v = budget.call(s, s.value, position, floor)
                    if v is None:
                        ok = False
                        break
                    sample[(trump, d)] = v
                if not ok:
                    break
            if ok and nello_solver is not None:
                v = budget.call(nello_solver, nello_solver.value, Position(hands, seat))
                if v is None:
                    ok = False
                else:
                    sample[(-1, -1)] = v
            if not ok:
                break
            budget.done += 1
            for key, v in sample.items():
                results.setdefault(key, []).append(v)
            if every_trick is not None:
                every_trick.append(remaining_points(solver_for(trumps[0]).game, Position(hands, seat)))
        return results

    def _deal_with_widow(
        self, k: _Knowledge, rng: random.Random
    ) -> tuple[tuple[TileSet, ...], int] | None:
        """Moon before the exchange: the other hands and the widow."""
        bins = [b for b in k.bins() if b.seat is not None] + [_Bin(None, 1, 0)]
        if sum(b.size for b in bins) != k.pool.bit_count():
            return None
        dealt = _deal(rng, k.pool, bins)
        if dealt is None:
            return None
        hands = [0] * k.players
        hands[k.seat] = k.hand
        for b, tiles in zip(bins, dealt, strict=True):
            if b.seat is not None:
                hands[b.seat] = tiles
        return tuple(hands), dealt[-1].bit_length() - 1

    # --- the auction

    def _bid(
        self, k: _Knowledge, legal: list[SeatCommand], rng: random.Random
    ) -> SeatCommand | None:
        bids = [a for a in legal if isinstance(a, PlaceBid)]
        passes = [a for a in legal if isinstance(a, Pass)]
        if not bids:
            return passes[0] if passes else None
        if not passes:  # forced: the cheapest bid there is
            return min(bids, key=lambda a: (BID_ORDER[a.bid.kind], a.bid.amount))
        # A stuck dealer's pass is the lowest bid: bid only what beats it, and pass for it.
        stuck = stuck_dealer_bid(k.view)
        chosen = self._bid_moon(k, bids, rng, stuck) if k.moon else self._bid_42(k, bids, rng)
        if chosen is None or chosen.bid == stuck:
            return passes[0]
        return chosen

    def _bid_42(
        self, k: _Knowledge, bids: list[PlaceBid], rng: random.Random
    ) -> PlaceBid | None:
        view = k.view
        team = k.team_of(k.seat)
        if view.bidder is not None and view.bidder in team and view.bidder != k.seat:
            return None  # never bid over the partner
        trumps = _ranked_trumps(k.hand, trump_menu(k.rules), k.universe, _TRUMPS_TRIED)
        lowest = min((a.bid.amount for a in bids if a.bid.kind is BidKind.POINTS), default=42)
        results = self._simulate(k, rng, trumps, moon=False, floor=lowest + _SHIFT_42 - 1)
        if not results:
            return None
        total = 42 if k.players == 4 else None

        def p_make(points: int) -> float:
            return max(
                sum(v >= points + _SHIFT_42 for v in vs) / len(vs) for vs in results.values()
            )

        p_all = (
            max(sum(v == total for v in vs) / len(vs) for vs in results.values())
            if total is not None
            else 0.0
        )
        point_bids = sorted(
            (a for a in bids if a.bid.kind is BidKind.POINTS), key=lambda a: a.bid.amount
        )
        marks = sorted(
            (a for a in bids if a.bid.kind is BidKind.MARKS), key=lambda a: a.bid.amount
        )
        if marks and p_all >= _MAKE_84 and marks[-1].bid.amount >= 2:
            return marks[-1]
        for a in point_bids:
            if p_make(a.bid.amount) >= _MAKE_42:
                return a
        if marks and p_all >= _MAKE_ALL:
            return marks[0]
        return None

    def _moon_hand_tricks(self, k: _Knowledge, rng: random.Random) -> list[int]:
        """Before a Moon auction: over deals of the other hands (and the widow, taken with the
        worst tile laid out), the tricks this hand takes leading under its better of two
        trumps, one number a deal (none when nothing could be solved)."""
        menu = trump_menu(k.rules)
        if k.rules.has_widow:  # the widow is dealt too, and the worst tile laid out
            discard = self._quick_discard(k.hand, k.universe, menu)
            trumps = _ranked_trumps(k.hand & ~(1 << discard), menu, k.universe, 2)
            results = self._simulate(k, rng, trumps, moon=True, widow_discards=[discard])
        else:
            trumps = _ranked_trumps(k.hand, menu, k.universe, 2)
            results = self._simulate(k, rng, trumps, moon=True)
        return [max(vs) for vs in zip(*results.values(), strict=True)]

    def _bid_moon(
        self, k: _Knowledge, bids: list[PlaceBid], rng: random.Random, stuck: Bid | None
    ) -> PlaceBid | None:
        per_deal = self._moon_hand_tricks(k, rng)
        if not per_deal:
            return None
        n = len(per_deal)
        overcall_risk = _OVERCALL_RISK if may_be_overcalled(k.view) else 0.0

        def worth(a: PlaceBid) -> float:
            need = _tricks_needed(a.bid)
            shift = self._shift(need) + (overcall_risk if a.bid.kind is BidKind.MOON else 0.0)
            p = sum(_made(v, need, shift) for v in per_deal) / n
            # The moon scores 21 and the overcall 42 (their amounts), a number of tricks its number.
            return moon_bid_worth(k.rules, a.bid, p)

        best = max(bids, key=lambda a: (worth(a), -a.bid.amount))
        if stuck is not None:
            return best  # passing is no way out: the best bid (the minimum, if that is best)
        return best if worth(best) > _PASS_MOON else None

    @staticmethod
    def _quick_discard(hand: TileSet, universe: TileSet, trumps: Sequence[int]) -> int:
        """The tile whose loss costs the quick count least (then the fewest pips)."""

        def worth(d: int) -> tuple[float, int, int]:
            rest = hand & ~(1 << d)
            return (max(_quick_tricks(rest, t, universe) for t in trumps), -(HIGH[d] + LOW[d]), -d)

        return max(tiles_in(hand), key=worth)

    # --- widow and trump

    def _widow(
        self, k: _Knowledge, legal: list[SeatCommand], rng: random.Random
    ) -> SeatCommand | None:
        exchanges = {a.discard: a for a in legal if isinstance(a, ExchangeWidow)}
        declines = [a for a in legal if isinstance(a, DeclineWidow)]
        view = k.view
        if view.contract is not None and view.contract.kind is ContractKind.TRUMP:
            trumps: Sequence[int] = (view.contract.trump,)
        else:
            trumps = trump_menu(k.rules)
        need = self._moon_need(view)
        # The discards worth simulating: the best few by the quick count.
        candidates = sorted(
            exchanges,
            key=lambda d: -max(_quick_tricks(k.hand & ~(1 << d), t, k.universe) for t in trumps),
        )[:4]
        if not candidates:
            return declines[0] if declines else None
        best_trumps = _ranked_trumps(k.hand, trumps, k.universe, 2)
        results = self._simulate(k, rng, best_trumps, moon=True, widow_discards=candidates)
        if not results:
            return exchanges[candidates[0]]

        shift = self._shift(need)

        def worth(d: int) -> float:
            rows = [vs for (t, dd), vs in results.items() if dd == d]
            if not rows:
                return -1.0
            per_deal: list[int] = [max(vs) for vs in zip(*rows, strict=True)]
            return sum(_made(v, need, shift) + _TIE_BREAK * v / 7 for v in per_deal) / len(per_deal)

        best = max(candidates, key=lambda d: (worth(d), -d))
        if declines:
            kept = self._simulate(k, rng, best_trumps, moon=True)
            if kept:
                per_deal = [max(vs) for vs in zip(*kept.values(), strict=True)]
                stay = sum(_made(v, need, shift) + _TIE_BREAK * v / 7 for v in per_deal) / len(per_deal)
                if stay > worth(best):
                    return declines[0]
        return exchanges[best]

    @staticmethod
    def _moon_need(view: SeatView) -> int:
        if view.high_bid is None:
            return view.rules.moon_min_bid
        return _tricks_needed(view.high_bid)

    def _declare(
        self, k: _Knowledge, legal: list[SeatCommand], rng: random.Random
    ) -> SeatCommand | None:
        by_kind: dict[ContractKind, list[DeclareContract]] = {}
        for a in legal:
            if isinstance(a, DeclareContract):
                by_kind.setdefault(a.contract.kind, []).append(a)
        trump_actions = {a.contract.trump: a for a in by_kind.get(ContractKind.TRUMP, [])}
        nello = by_kind.get(ContractKind.NELLO, [])
        if not trump_actions:
            others = nello or by_kind.get(ContractKind.SEVENS, [])
            return others[0] if others else None
        view = k.view
        trumps = _ranked_trumps(k.hand, list(trump_actions), k.universe, _TRUMPS_TRIED)
        if k.moon:
            need = self._moon_need(view)
            # Trump named before the widow (widow_before_trump off): the widow is still to come.
            if view.phase is Phase.TRUMP and k.rules.has_widow and not k.rules.widow_before_trump:
                discard = self._quick_discard(k.hand, k.universe, list(trump_actions))
                results = self._simulate(k, rng, trumps, moon=True, widow_discards=[discard])
            else:
                results = self._simulate(k, rng, trumps, moon=True)

            shift = self._shift(need)

            def worth(t: int) -> float:
                vs = next((v for (tt, _), v in results.items() if tt == t), [])
                return sum(_made(v, need, shift) + _TIE_BREAK * v / 7 for v in vs) / max(len(vs), 1)

            return trump_actions[max(trumps, key=lambda t: (worth(t), -t))]
        bid = view.high_bid
        if bid is None:  # no auction won: nothing to weigh the trumps by
            return trump_actions[trumps[0]]
        all_tricks = bid.kind in _ALL_TRICKS_BIDS
        amount = bid.amount
        floor = 41 if all_tricks else amount + _SHIFT_42 - 1
        results = self._simulate(k, rng, trumps, moon=False, nello=bool(nello), floor=floor)
        if not results:
            return trump_actions[trumps[0]]
        total = 42 if k.players == 4 else 10**6

        def made(v: int) -> bool:
            return v >= total if all_tricks else v >= amount + _SHIFT_42

        def worth42(t: int) -> float:
            vs = results.get((t, -1), [])
            return sum(made(v) + _TIE_BREAK * v / 42 for v in vs) / max(len(vs), 1)

        best = max(trumps, key=lambda t: (worth42(t), -t))
        if nello and (-1, -1) in results:
            vs = results[(-1, -1)]
            p_nello = sum(v == 0 for v in vs) / len(vs)
            if p_nello > worth42(best):
                return nello[0]
        return trump_actions[best]
