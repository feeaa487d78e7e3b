"""Duplicate play in process: strategies against strategies on the engine directly, no server.

A hand is the first hand of a new game dealt from a seed (``hand_seed``; a redeal, everyone
having passed, is dealt from the seed and the count of deals, the same at every playing),
played from the deal through the auction, the widow and the declaration to its
``HandScored``. A *duplicate deal* plays that hand once for each seating of two sides, so that
the luck of the tiles cancels: in Texas 42 side A's partnership holds seats 0 and 2, then,
the same hands dealt again, seats 1 and 3 (as a match on the server seats its entrants).

What ``benchmarks/bench_duplicate.py`` (any strategy against any other, with its tables of
contracts and decision times) and the seeded match simulations of the tests share. Pure like
every strategy here: the caller's ``choose`` and ``observe`` hooks are where a benchmark
times decisions or counts contracts.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

from boneyard.bots.base import Strategy
from boneyard.engine import (
    AllPassed,
    Command,
    Deal,
    Event,
    HandScored,
    Phase,
    Ruleset,
    SeatCommand,
    SeatView,
    decide,
    evolve,
    replay,
    start,
    view,
)

__all__ = [
    "MAX_REDEALS",
    "DuplicateDeal",
    "hand_seed",
    "play_duplicate_deal",
    "play_hand",
    "strategies",
]

MAX_REDEALS = 20
"""A hand everyone keeps passing is scored 0 after this many redeals (it never happens with
bots that bid, but a pair of strategies that always pass must not hang a run)."""

Chooser = Callable[[int, SeatView], SeatCommand]
"""``choose(seat, view) -> command``: the strategy in ``seat`` chooses."""
Observer = Callable[[Event], None]


def hand_seed(seed: int, deals: int) -> bytes:
    """The ``Deal`` seed of a hand's ``deals``-th deal (0 for the first, then each redeal)."""
    return hashlib.sha256(f"{seed}/{deals}".encode()).digest()[:16]


def play_hand(
    rules: Ruleset, choose: Chooser, seed: int, observe: Observer | None = None
) -> HandScored | None:
    """Play the first hand of a game of ``rules`` dealt from ``seed``, each seat's command
    from ``choose``; every event goes to ``observe``. Its ``HandScored``, or ``None`` when
    everyone passed more than ``MAX_REDEALS`` times."""
    state = replay(start(rules))
    deals = 0
    while True:
        command: Command
        if state.phase is Phase.DEAL:
            command = Deal(hand_seed(seed, deals))
            deals += 1
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            command = choose(seat, view(state, seat))
        for event in decide(state, command):
            state = evolve(state, event)
            if observe is not None:
                observe(event)
            if isinstance(event, HandScored):
                return event
            if isinstance(event, AllPassed) and deals > MAX_REDEALS:
                return None


def strategies(make: Callable[[int], Strategy], seed: int, side: str, count: int) -> list[Strategy]:
    """``count`` strategies of one side, each seeded from ``seed`` and the side's name: the two
    sides of a duplicate deal never share a seed, so two copies of a strategy that draws on its
    seed play as two players would, not as one mirrored."""
    rng = random.Random(f"{seed}/{side}")
    return [make(rng.randrange(2**31)) for _ in range(count)]


def _seated(bots: list[Strategy]) -> Chooser:
    """The chooser of a table: the strategy in each seat."""
    return lambda seat, seen: bots[seat].choose(seen)


@dataclass(frozen=True, slots=True)
class DuplicateDeal:
    """One duplicate deal of two sides: what each scored over both playings."""

    a: int
    b: int

    @property
    def figure(self) -> int:
        """A's score minus B's: the deal's figure in a match."""
        return self.a - self.b


def play_duplicate_deal(
    rules: Ruleset,
    make_a: Callable[[int], Strategy],
    make_b: Callable[[int], Strategy],
    seed: int,
    *,
    points: bool = False,
) -> DuplicateDeal:
    """A Texas 42 deal played twice, side A's partnership in seats 0 and 2 and then, the same
    hands dealt, in seats 1 and 3; each side's marks (``points``: the count points its tricks
    took) summed over both playings. A hand passed out more than ``MAX_REDEALS`` times scores
    nothing."""
    if len(rules.teams) != 2:
        raise ValueError(f"a duplicate deal of two sides needs two teams, not {rules.teams}")
    a, b = 0, 0
    for a_team in (0, 1):
        side_a = iter(strategies(make_a, seed, "a", len(rules.teams[a_team])))
        side_b = iter(strategies(make_b, seed, "b", len(rules.teams[1 - a_team])))
        bots = [
            next(side_a) if rules.team_of[s] == a_team else next(side_b)
            for s in range(rules.players)
        ]
        scored = play_hand(rules, _seated(bots), seed)
        if scored is None:
            continue
        figures = scored.taken if points else scored.changes
        a += figures[a_team]
        b += figures[1 - a_team]
    return DuplicateDeal(a, b)
