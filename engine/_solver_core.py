"""The trick-play solver's core in pure Python: the fallback of the C extension ``_solver_c``.

``boneyard.engine._solver_c.Core`` (``engine/_solver_c.c``) and ``Core`` here are the same algorithm,
written twice: the same legal moves, the same move ordering, the same equivalent-tile merging,
the same alpha-beta; so they return the same values (``tests/solver`` checks it). The C one is
some hundred times faster; this one is used when the extension was not built. Only the
transposition table differs (a dict here, a fixed-size table there), which changes how many
nodes a search visits, never a value.

Read ``boneyard.engine.solver`` first: it describes the positions, the objective and the API. In short,
a ``Core`` is made for one way of playing (the suit tables of the contract, the seats in play,
what each tile is worth, which seats maximise) and then answers, for positions given as the
hands, the trick in progress and its leader:

- ``search(hands, trick, leader, alpha, beta)``: fail-soft alpha-beta value of the rest of the
  hand for the maximising side (exact when strictly inside the window);
- ``move_values(hands, trick, leader, allowed)``: the exact value of each tile the seat to play
  may play.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Core", "SearchAborted"]

_TILES = 28
_INFINITY = 1 << 20
"""Above any value: the window of an exact search is ``(-1, _INFINITY)``."""


class SearchAborted(Exception):
    """The search visited ``node_limit`` nodes and stopped: nothing it was doing is returned."""


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class Core:
    """One way of playing, and a transposition table of the trick-start positions solved."""

    def __init__(
        self,
        lead_suit: Sequence[int],
        members: Sequence[int],
        power: Sequence[Sequence[int]],
        trumps: int,
        may_trump: bool,
        points: Sequence[int],
        trick_value: int,
        players: int,
        active: int,
        side: int,
        scorers: int,
        tt_bits: int = 18,
    ) -> None:
        if not 2 <= players <= 7:
            raise ValueError(f"players must be 2..7, not {players}")
        if len(lead_suit) != _TILES or len(points) != _TILES or len(members) != 8 or len(power) != 8:
            raise ValueError("lead_suit and points need 28 entries, members and power 8")
        self.lead_suit = tuple(int(s) for s in lead_suit)
        self.members = tuple(int(m) for m in members)
        self.power = tuple(tuple(int(p) for p in row) for row in power)
        if any(len(row) != _TILES for row in self.power):
            raise ValueError("each power row needs 28 entries")
        self.trumps = int(trumps)
        self.may_trump = bool(may_trump)
        self.points = tuple(int(p) for p in points)
        self.trick_value = int(trick_value)
        self.players = players
        self.active = active
        self.side = side
        self.scorers = scorers
        self.tt_bits = tt_bits
        seats = [s for s in range(players) if active >> s & 1]
        if len(seats) < 2:
            raise ValueError("at least two seats must be in play")
        self.trick_size = len(seats)
        self.next_seat = tuple(
            next((s + i) % players for i in range(1, players + 1) if active >> ((s + i) % players) & 1)
            for s in range(players)
        )
        # higher[s][t]: tiles more powerful than t in a trick led in suit s.
        self.higher = tuple(
            tuple(
                sum(1 << u for u in range(_TILES) if self.power[s][u] > self.power[s][t])
                for t in range(_TILES)
            )
            for s in range(8)
        )
        # leaders[s]: tiles that call for suit s when led.
        self.leaders = tuple(
            sum(1 << t for t in range(_TILES) if self.lead_suit[t] == s) for s in range(8)
        )
        # opponents[seat]: the seats in play on the other side.
        self.opponents = tuple(
            sum(
                1 << o
                for o in range(players)
                if active >> o & 1 and (side >> o & 1) != (side >> s & 1)
            )
            for s in range(players)
        )
        # A tile's worth when thrown away: its best power in any suit (trumps highest).
        self.rank = tuple(max(self.power[s][t] for s in range(8)) for t in range(_TILES))
        self.nodes = 0
        self.node_limit = 0
        self._tt: dict[tuple[int, ...], list[int]] = {}

    def clear(self) -> None:
        """Forget every position solved."""
        self._tt.clear()

    # ------------------------------------------------------------ rules

    def _legal(self, held: int, lead: int) -> int:
        """Tiles of ``held`` that may be played to a trick led with ``lead`` (-1: leading)."""
        if lead < 0:
            return held
        led = self.lead_suit[lead]
        follow = held & self.members[led]
        if not follow:
            return held
        if self.may_trump and not self.trumps >> lead & 1:
            return follow | (held & self.trumps)
        return follow

    def _merge(
        self, moves: list[int], others: int, remaining: int, led: int, rep_of: dict[int, int] | None = None
    ) -> list[int]:
        """The moves less each one equivalent to a move kept before it (``boneyard.engine.solver``:
        equivalent tiles); ``rep_of`` gets, for every move, the kept move standing for it."""
        live = [s for s in range(8) if remaining & self.leaders[s] or s == led]
        kept: list[int] = []
        lead_suit, points, trumps, members, higher, power = (
            self.lead_suit, self.points, self.trumps, self.members, self.higher, self.power
        )
        for b in moves:
            rep = b
            for a in kept:
                if (
                    points[a] != points[b]
                    or lead_suit[a] != lead_suit[b]
                    or (trumps >> a & 1) != (trumps >> b & 1)
                ):
                    continue
                same = True
                for s in live:
                    if (members[s] >> a & 1) != (members[s] >> b & 1):
                        same = False
                        break
                    pa, pb = power[s][a], power[s][b]
                    if pa == pb:
                        continue
                    hi, lo = (a, b) if pa > pb else (b, a)
                    if higher[s][lo] & ~higher[s][hi] & ~(1 << hi) & others:
                        same = False
                        break
                if same:
                    rep = a
                    break
            if rep == b:
                kept.append(b)
            if rep_of is not None:
                rep_of[b] = rep
        return kept

    def _order(
        self, moves: int, seat: int, trick: list[tuple[int, int]], hands: list[int], best: int
    ) -> list[int]:
        """The moves, most promising first (identical to the C core's ``order_moves``)."""
        scored: list[tuple[int, int]] = []
        side = self.side
        mine = side >> seat & 1
        if not trick:
            opponents = self.opponents[seat]
            for t in _bits(moves):
                led = self.lead_suit[t]
                above = self.higher[led][t]
                beaten = False
                for s in _bits(opponents):
                    h = hands[s]
                    follow = h & self.members[led]
                    if follow:
                        reach = follow | (h & self.trumps) if self.may_trump else follow
                    else:
                        reach = h
                    if reach & above:
                        beaten = True
                        break
                score = self.power[led][t] + (0 if beaten else 200 + 4 * self.points[t])
                if t == best:
                    score = 10_000
                scored.append((score, t))
        else:
            led = self.lead_suit[trick[0][1]]
            power = self.power[led]
            win_seat, win_power = trick[0][0], power[trick[0][1]]
            for s, t in trick[1:]:
                if power[t] > win_power:
                    win_seat, win_power = s, power[t]
            ours = (side >> win_seat & 1) == mine
            for t in _bits(moves):
                p = power[t]
                if p > win_power:
                    score = (100 + self.points[t]) if ours else (400 - p + 4 * self.points[t])
                elif ours:
                    score = 300 + 4 * self.points[t] - (self.rank[t] >> 2)
                else:
                    score = 200 - 4 * self.points[t] - (self.rank[t] >> 2)
                scored.append((score, t))
        scored.sort(key=lambda st: (-st[0], st[1]))
        return [t for _, t in scored]

    # ------------------------------------------------------------ search

    def _search(
        self, hands: list[int], trick: list[tuple[int, int]], leader: int, alpha: int, beta: int,
        pending: int,
    ) -> int:
        """Value for the side of the rest of the hand; ``pending``: points of ``trick`` so far."""
        self.nodes += 1
        if self.node_limit and self.nodes > self.node_limit:
            raise SearchAborted(f"node limit {self.node_limit} reached")
        remaining = 0
        for h in hands:
            remaining |= h
        if not remaining:
            return 0
        tricks_left = (remaining.bit_count() + len(trick)) // self.trick_size
        ceiling = tricks_left * self.trick_value + pending
        for t in _bits(remaining):
            ceiling += self.points[t]
        if tricks_left == 1:
            # The last trick: every seat still to play holds one tile, so the plays are forced.
            plays = list(trick)
            seat = self.next_seat[trick[-1][0]] if trick else leader
            while len(plays) < self.trick_size:
                plays.append((seat, hands[seat].bit_length() - 1))
                seat = self.next_seat[seat]
            return ceiling if self.scorers >> self._winner(plays) & 1 else 0
        if ceiling <= alpha:
            return ceiling
        if beta <= 0:
            return 0
        key: tuple[int, ...] | None = None
        best_move = -1
        entry: list[int] | None = None
        if not trick:
            key = (leader, *hands)
            entry = self._tt.get(key)
            if entry is not None:
                lower, upper, best_move = entry
                if lower >= beta:
                    return lower
                if upper <= alpha:
                    return upper
                if lower == upper:
                    return lower
                alpha = max(alpha, lower)
                beta = min(beta, upper)
            seat = leader
        else:
            seat = self.next_seat[trick[-1][0]]
        held = hands[seat]
        lead = trick[0][1] if trick else -1
        moves = self._legal(held, lead)
        ordered = self._order(moves, seat, trick, hands, best_move)
        if len(ordered) > 1:
            others = remaining & ~held
            for _, t in trick:
                others |= 1 << t
            ordered = self._merge(
                ordered, others, remaining, self.lead_suit[lead] if lead >= 0 else -1
            )
        maximise = self.side >> seat & 1
        best = -1 if maximise else _INFINITY
        chosen = -1
        a, b = alpha, beta
        for t in ordered:
            hands[seat] = held & ~(1 << t)
            trick.append((seat, t))
            if len(trick) == self.trick_size:
                winner = self._winner(trick)
                gain = pending + self.points[t] + self.trick_value if self.scorers >> winner & 1 else 0
                saved = trick[:]
                trick.clear()
                v = gain + self._search(hands, trick, winner, a - gain, b - gain, 0)
                trick.extend(saved)
            else:
                v = self._search(hands, trick, leader, a, b, pending + self.points[t])
            trick.pop()
            hands[seat] = held
            if maximise:
                if v > best:
                    best, chosen = v, t
                    if best > a:
                        a = best
                        if a >= b:
                            break
            else:
                if v < best:
                    best, chosen = v, t
                    if best < b:
                        b = best
                        if a >= b:
                            break
        if key is not None:
            lower, upper = (entry[0], entry[1]) if entry is not None else (0, _INFINITY)
            if best <= alpha:
                upper = min(upper, best)
            elif best >= beta:
                lower = max(lower, best)
            else:
                lower = upper = best
            self._tt[key] = [lower, upper, chosen]
        return best

    def _winner(self, trick: list[tuple[int, int]]) -> int:
        power = self.power[self.lead_suit[trick[0][1]]]
        seat, best = trick[0][0], power[trick[0][1]]
        for s, t in trick[1:]:
            if power[t] > best:
                seat, best = s, power[t]
        return seat

    # ------------------------------------------------------------ API

    def _position(
        self, hands: Sequence[int], trick: Sequence[tuple[int, int]], leader: int
    ) -> tuple[list[int], list[tuple[int, int]], int]:
        if len(hands) != self.players:
            raise ValueError(f"{len(hands)} hands for {self.players} players")
        plays = [(int(s), int(t)) for s, t in trick]
        if len(plays) >= self.trick_size:
            raise ValueError("the trick in progress is already complete")
        return [int(h) for h in hands], plays, int(leader)

    def search(
        self,
        hands: Sequence[int],
        trick: Sequence[tuple[int, int]],
        leader: int,
        alpha: int,
        beta: int,
    ) -> int:
        """Fail-soft alpha-beta value of the position (exact when ``alpha < v < beta``)."""
        h, plays, lead = self._position(hands, trick, leader)
        pending = sum(self.points[t] for _, t in plays)
        return self._search(h, plays, lead, alpha, beta, pending)

    def move_values(
        self,
        hands: Sequence[int],
        trick: Sequence[tuple[int, int]],
        leader: int,
        allowed: int = -1,
        alpha: int = -1,
        beta: int = _INFINITY,
    ) -> list[tuple[int, int]]:
        """``(tile, value)`` for each tile the seat to play may play (and ``allowed`` lets),
        lowest tile first; each value exact when inside ``(alpha, beta)`` (the default: always),
        otherwise a bound on the same side of the window, as ``search``."""
        h, plays, lead = self._position(hands, trick, leader)
        seat = self.next_seat[plays[-1][0]] if plays else lead
        held = h[seat]
        moves = self._legal(held, plays[0][1] if plays else -1) & allowed
        pending = sum(self.points[t] for _, t in plays)
        remaining = 0
        for x in h:
            remaining |= x
        others = remaining & ~held
        for _, t in plays:
            others |= 1 << t
        ordered = self._order(moves, seat, plays, h, -1)
        rep_of: dict[int, int] = {}
        reps = self._merge(
            ordered, others, remaining, self.lead_suit[plays[0][1]] if plays else -1, rep_of
        )
        values: dict[int, int] = {}
        for t in reps:
            h[seat] = held & ~(1 << t)
            plays.append((seat, t))
            if len(plays) == self.trick_size:
                winner = self._winner(plays)
                gain = pending + self.points[t] + self.trick_value if self.scorers >> winner & 1 else 0
                saved = plays[:]
                plays.clear()
                v = gain + self._search(h, plays, winner, alpha - gain, beta - gain, 0)
                plays.extend(saved)
            else:
                v = self._search(h, plays, lead, alpha, beta, pending + self.points[t])
            plays.pop()
            h[seat] = held
            values[t] = v
        return [(t, values[rep_of[t]]) for t in _bits(moves)]
