"""Swiss tournaments: who meets whom in a round, and the standings with their tie-breaks.

Pure: no I/O, no clock, no randomness; the same inputs give the same pairing and the same
standings. Entrants are strings (the director passes account names, unique): the last
tie-break, of standings and of pairing alike, is the name.

**Score.** A round's bout is a duplicate mini-match (each deal played twice, the pairing's
partnerships swapping seats). The entrant whose partnership scored more marks over the bout's
games wins it: 1 point; equal marks are a draw: ½ point each; a loss 0. A bye scores as a win:
1 point, and no marks.

**Standings** are ordered by (``standings``):

1. score (points), most first;
2. Buchholz: the sum of the final scores of the opponents met (a bye adds nothing), most first;
3. marks difference: marks scored minus marks conceded over all its bouts, most first;
4. name, alphabetically.

**Pairing a round** (``pair``), from the standings before it, best first. The rules, most
important first:

1. *No second bye where avoidable*: with an odd number of entrants, the bye goes to an entrant
   who has had the fewest byes (none, until everyone has had one).
2. *No repeated pairing where avoidable*: if the round can be paired with no two entrants
   meeting again, it is; if it cannot, the fewest rematches are made.
3. *The bye to the lowest-ranked*: among those rule 1 allows, the lowest-ranked entrant whose
   bye lets rule 2 hold.
4. *Pairing within score groups, floaters moved down*: entrants of equal score are a group,
   paired top half against bottom half (in a group of eight, 1st-5th, 2nd-6th, 3rd-7th,
   4th-8th, as the Dutch system does); the lowest of an odd group (or one that cannot be paired
   within it without a rematch) floats down and meets the highest of the next group it can.

The search for a pairing is exhaustive (backtracking, with the subsets known to fail
remembered, in the order rule 4 prefers, so the first pairing found is the one rule 4 wants)
up to ``SEARCH_STEPS`` steps for the whole round; a field too tangled for that gets the
pairing rule 4 prefers with new opponents before rematches. (Measured: 64 entrants over 32
rounds with random results pair with no rematch, in half a second for all the rounds.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "BYE_POINTS",
    "SEARCH_STEPS",
    "Bout",
    "Pairing",
    "SwissStanding",
    "pair",
    "standings",
]

BYE_POINTS = 1.0
"""A bye scores as a won bout."""
SEARCH_STEPS = 200_000
"""The most steps one search for a pairing takes (each step tries one opponent)."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One round's pairing: each pair, the higher-ranked entrant first (it holds the first
    team's seats at each deal's first playing), best pair first; and the bye, if any."""

    pairs: tuple[tuple[str, str], ...]
    bye: str | None


@dataclass(frozen=True, slots=True)
class Bout:
    """One pairing's result in a round: each entrant's marks summed over the bout's games."""

    round: int
    entrants: tuple[str, str]
    marks: tuple[int, int]

    def points(self, side: int) -> float:
        mine, theirs = self.marks[side], self.marks[1 - side]
        return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


@dataclass(frozen=True, slots=True)
class SwissStanding:
    """An entrant's line in a Swiss tournament's standings."""

    name: str
    score: float
    """Points: 1 a bout won or a bye, ½ a bout drawn."""
    buchholz: float
    """The sum of the (final) scores of the opponents it met."""
    marks_for: int
    marks_against: int
    wins: int
    draws: int
    losses: int
    byes: int
    opponents: tuple[str, ...]
    """Whom it met, round by round (a bye is no opponent)."""

    @property
    def marks_difference(self) -> int:
        return self.marks_for - self.marks_against


def standings(
    entrants: Sequence[str], bouts: Sequence[Bout], byes: Collection[str]
) -> list[SwissStanding]:
    """Every entrant's line after these bouts (the finished ones) and byes (an entrant once
    per bye), ordered by score, Buchholz, marks difference, name."""
    points: dict[str, float] = dict.fromkeys(entrants, 0.0)
    marks_for: Counter[str] = Counter()
    marks_against: Counter[str] = Counter()
    results: dict[str, Counter[str]] = {e: Counter() for e in entrants}
    opponents: dict[str, list[str]] = {e: [] for e in entrants}
    for bout in sorted(bouts, key=lambda b: b.round):
        for side, entrant in enumerate(bout.entrants):
            won = bout.points(side)
            points[entrant] = points.get(entrant, 0.0) + won
            marks_for[entrant] += bout.marks[side]
            marks_against[entrant] += bout.marks[1 - side]
            results[entrant]["win" if won == 1 else "draw" if won else "loss"] += 1
            opponents[entrant].append(bout.entrants[1 - side])
    bye_count = Counter(byes)
    for entrant, count in bye_count.items():
        points[entrant] = points.get(entrant, 0.0) + BYE_POINTS * count
    lines = [
        SwissStanding(
            name=e,
            score=points[e],
            buchholz=sum(points.get(o, 0.0) for o in opponents[e]),
            marks_for=marks_for[e],
            marks_against=marks_against[e],
            wins=results[e]["win"],
            draws=results[e]["draw"],
            losses=results[e]["loss"],
            byes=bye_count[e],
            opponents=tuple(opponents[e]),
        )
        for e in entrants
    ]
    return sorted(lines, key=lambda s: (-s.score, -s.buchholz, -s.marks_difference, s.name))


def pair(
    ranked: Sequence[str],
    scores: Mapping[str, float],
    met: Collection[tuple[str, str]],
    byes: Collection[str],
) -> Pairing:
    """The next round's pairing of ``ranked`` (the standings, best first), by the rules of the
    module's doc: ``scores`` are their points, ``met`` the pairs of the rounds before (one
    entry a bout), ``byes`` who had a bye (once per bye)."""
    if len(set(ranked)) != len(ranked):
        raise ValueError(f"an entrant is ranked twice: {list(ranked)}")
    if len(ranked) < 2:
        raise ValueError(f"a Swiss round pairs at least two entrants, not {list(ranked)}")
    # Score groups in the order of the standings (a stable sort keeps its order within them).
    order = sorted(ranked, key=lambda e: -scores.get(e, 0.0))
    search = _Search(
        order, {e: scores.get(e, 0.0) for e in order}, Counter(frozenset(p) for p in met)
    )
    if len(order) % 2 == 0:
        return Pairing(search.best(order), None)
    had = Counter(byes)
    fewest = min(had[e] for e in order)
    # Rule 1, then 3: the lowest-ranked first among those with the fewest byes.
    candidates = [e for e in reversed(order) if had[e] == fewest]
    for bye in candidates:
        pairs = search.without_rematch(tuple(e for e in order if e != bye))
        if pairs is not None:
            return Pairing(pairs, bye)
    bye = candidates[0]
    return Pairing(search.best(tuple(e for e in order if e != bye)), bye)


class _Search:
    """Backtracking over the entrants left, the highest first, its opponents in the order
    rule 4 prefers; ``allowed`` rematches at most. Entrants are their places in ``order``
    (bits of a mask) inside; what has failed is remembered by (entrants left, allowed)."""

    def __init__(
        self, order: Sequence[str], scores: Mapping[str, float], met: Counter[frozenset[str]]
    ) -> None:
        self._order = list(order)
        self._score = [scores[e] for e in order]
        n = len(order)
        self._met = [[met[frozenset((order[i], order[j]))] for j in range(n)] for i in range(n)]
        self._new = [
            sum(1 << j for j in range(n) if j != i and not self._met[i][j]) for i in range(n)
        ]
        """Each entrant's opponents not met yet, as a mask."""
        self._steps = 0
        self._failed: set[tuple[int, int]] = set()

    def without_rematch(self, players: Sequence[str]) -> tuple[tuple[str, str], ...] | None:
        found = self._run(self._mask(players), 0)
        return None if found is None else self._named(found)

    def best(self, players: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """The pairing with the fewest rematches (rule 2), preferred by rule 4 among those."""
        left = self._mask(players)
        for allowed in range(len(players) // 2 + 1):
            found = self._run(left, allowed)
            if found is not None:
                return self._named(found)
        raise AssertionError("with every pair allowed to be a rematch, some pairing exists")

    def _mask(self, players: Sequence[str]) -> int:
        return sum(1 << self._order.index(e) for e in players)

    def _named(self, pairs: list[tuple[int, int]]) -> tuple[tuple[str, str], ...]:
        return tuple((self._order[i], self._order[j]) for i, j in pairs)

    def _run(self, left: int, allowed: int) -> list[tuple[int, int]] | None:
        try:
            return self._pairs(left, allowed)
        except _OutOfSteps:
            return None  # try again with more rematches allowed (the last try cannot fail)

    def _pairs(self, left: int, allowed: int) -> list[tuple[int, int]] | None:
        if not left:
            return []
        if (left, allowed) in self._failed:
            return None
        members = [i for i in range(len(self._order)) if left >> i & 1]
        top = members[0]
        opponents = self._opponents(members)
        unbounded = allowed >= len(members) // 2
        if unbounded:
            # Nothing left can fail: still, a new opponent before a rematch.
            opponents.sort(key=lambda o: self._met[top][o])
        for other in opponents:
            rematch = 1 if self._met[top][other] else 0
            if rematch > allowed:
                continue
            if not unbounded:  # a search that cannot fail counts no steps
                self._steps += 1
                if self._steps > SEARCH_STEPS:
                    raise _OutOfSteps
            rest = left & ~(1 << top) & ~(1 << other)
            if not allowed - rematch and not self._each_has_a_new_opponent(rest):
                continue
            found = self._pairs(rest, allowed - rematch)
            if found is not None:
                return [(top, other), *found]
        self._failed.add((left, allowed))
        return None

    def _opponents(self, members: list[int]) -> list[int]:
        """``members[0]``'s opponents in the order rule 4 prefers: in its score group, the top
        of the group's bottom half first, down to its bottom, then up from the half to its
        second; then the lower groups, highest first."""
        top = members[0]
        group = [e for e in members if self._score[e] == self._score[top]]
        half = len(group) // 2
        within = group[half:] + group[half - 1 : 0 : -1] if half else []
        below = [e for e in members[1:] if self._score[e] != self._score[top]]
        return within + below

    def _each_has_a_new_opponent(self, left: int) -> bool:
        """Forward checking: with no rematch to spare, each entrant left must have someone
        left it has not met."""
        rest = left
        while rest:
            low = rest & -rest
            if not self._new[low.bit_length() - 1] & left:
                return False
            rest ^= low
        return True


class _OutOfSteps(Exception):
    pass
