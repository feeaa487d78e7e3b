"""Solver speed: a whole Texas 42 hand solved from the opening lead.

Random deals (``engine.deal`` from seeds drawn from ``random.Random(--seed)``); seat 0 is the
bidder, names as trump the suit it holds most of (ties to the higher suit) and leads; the
solver finds the exact points its team takes with best play by everyone
(``boneyard.engine.solver.Solver.value``, a fresh solver, so a fresh transposition table, for each deal).
Prints the median and 95th-percentile time and the nodes a second, for the compiled core and
(on fewer deals) the pure-Python one; the last line is ``solver: median N ms`` for the core the
bots use. The target is a median under 100 ms.

    make bench-solver
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from boneyard import engine
from boneyard.engine.contracts import Contract
from boneyard.engine.solver import CORES, Game, Position, Solver, best_core
from boneyard.engine.tiles import HIGH, LOW, TileSet, iter_tiles


def bidders_suit(hand: TileSet) -> int:
    """The suit the hand holds most tiles of (ties: the higher suit)."""
    return max(
        range(7), key=lambda s: (sum(1 for t in iter_tiles(hand) if s in (HIGH[t], LOW[t])), s)
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(core: str, deals: int, seed: int) -> tuple[list[float], int, list[int]]:
    rules = engine.ruleset("texas42")
    rng = random.Random(seed)
    times: list[float] = []
    nodes = 0
    values: list[int] = []
    for _ in range(deals):
        hands, _rest = engine.deal(rng.randbytes(16), rules.tiles, rules.players, rules.hand_size)
        game = Game.of(rules, Contract.of_trump(bidders_suit(hands[0])))
        solver = Solver(game, (0, 2), core=core)  # type: ignore[arg-type]
        started = time.perf_counter()
        values.append(solver.value(Position(hands, leader=0)))
        times.append(time.perf_counter() - started)
        nodes += solver.nodes
    return times, nodes, values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=500, help="deals for the compiled core")
    parser.add_argument("--python-deals", type=int, default=20, help="deals for the Python core")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    print(f"solver benchmark: whole Texas 42 hands from the opening lead; cores built: {', '.join(CORES)}")
    medians: dict[str, float] = {}
    results: dict[str, list[int]] = {}
    for core in CORES:
        deals = args.deals if core == "c" else args.python_deals
        times, nodes, values = run(core, deals, args.seed)
        results[core] = values
        total = sum(times)
        medians[core] = statistics.median(times) * 1000
        print(
            f"  {core:6}: {deals} deals, median {medians[core]:.1f} ms, 95th percentile "
            f"{percentile(times, 0.95) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms, "
            f"{nodes / deals:,.0f} nodes a deal, {nodes / total:,.0f} nodes/s"
        )
    if len(results) == 2:
        n = len(results["python"])
        same = results["python"] == results["c"][:n]
        print(f"  the two cores agree on the first {n} deals: {'yes' if same else 'NO'}")
        if not same:
            return 1
    mean_points = statistics.mean(results[best_core()])
    print(f"  the bidding team takes {mean_points:.1f} points on average with best play")
    print(f"solver: median {medians[best_core()]:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
