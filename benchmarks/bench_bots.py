"""Bot strength: the heuristic strategy against random play, whole games, in process.

No server: each game runs on the engine directly (``start``, ``decide``, ``evolve``; every
hand dealt from a seed drawn from ``random.Random``), and each strategy (``boneyard.bots``) gets
the engine's view of its seat, ``engine.view(state, seat)``, the very view a client's bot
decodes from the API (``codec.view_from_proto``) and a house bot is handed on the server; the
command it returns goes to ``engine.decide``, which refuses anything illegal.

- Texas 42 (preset ``texas42``, to 7 marks): the heuristic team against the random team, half
  the games in seats 0 & 2 and half in seats 1 & 3. Random play wins half the time.
- Moon (preset ``moon``, to 21 points): one heuristic player against two random ones, its seat
  rotating 0, 1, 2. Random play wins a third of the time. A game still going after
  ``--max-hands`` hands is stopped and counts as a draw (not a win).

Prints each game type's win rate with a 95% Wilson interval and the random baseline; exits 1
when an interval's low end is not above its baseline.

    make bench-bots
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from intervals import wilson
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from boneyard import engine
from boneyard.bots import Strategy, strategy
from boneyard.engine import Deal, HandDealt, Phase


@dataclass(frozen=True, slots=True)
class Job:
    """One whole game: ``strategies[seat]`` names the strategy in each seat."""

    family: str
    preset: str
    strategies: tuple[str, ...]
    hero_team: int
    seed: int
    max_hands: int


@dataclass(frozen=True, slots=True)
class Outcome:
    family: str
    won: bool
    draw: bool
    hands: int
    decisions: int


def play(job: Job) -> Outcome:
    """Play one game to its end (or to ``max_hands`` hands dealt)."""
    rng = random.Random(job.seed)
    rules = engine.ruleset(job.preset)
    bots: list[Strategy] = [strategy(name, rng.randrange(2**31)) for name in job.strategies]
    state = engine.replay(engine.start(rules))
    hands = decisions = 0
    while state.phase is not Phase.GAME_OVER:
        if state.phase is Phase.DEAL:
            if hands >= job.max_hands:
                return Outcome(job.family, False, True, hands, decisions)
            command: engine.Command = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            command = bots[seat].choose(engine.view(state, seat))
            decisions += 1
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
            if type(event) is HandDealt:
                hands += 1
    return Outcome(job.family, state.winner == job.hero_team, False, hands, decisions)


def jobs(games_42: int, games_moon: int, seed: int, max_hands: int) -> Iterator[Job]:
    rng = random.Random(seed)
    for i in range(games_42):
        hero = i % 2  # team 0 is seats 0 & 2, team 1 seats 1 & 3
        seats = tuple("heuristic" if seat % 2 == hero else "random" for seat in range(4))
        yield Job("texas42", "texas42", seats, hero, rng.randrange(2**63), max_hands)
    for i in range(games_moon):
        hero = i % 3  # in Moon each seat is its own team
        seats = tuple("heuristic" if seat == hero else "random" for seat in range(3))
        yield Job("moon", "moon", seats, hero, rng.randrange(2**63), max_hands)



BASELINES = {"texas42": 1 / 2, "moon": 1 / 3}
TITLES = {
    "texas42": "Texas 42, heuristic team vs random team (to 7 marks)",
    "moon": "Moon, 1 heuristic vs 2 random (to 21 points)",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-42", type=int, default=1000, help="Texas 42 games (default 1000)")
    parser.add_argument("--games-moon", type=int, default=1000, help="Moon games (default 1000)")
    parser.add_argument("--max-hands", type=int, default=200, help="hands before a game is a draw")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    todo = list(jobs(args.games_42, args.games_moon, args.seed, args.max_hands))
    outcomes: dict[str, list[Outcome]] = {family: [] for family in BASELINES}
    started = time.perf_counter()
    print(
        f"bot benchmark: heuristic vs random, {args.games_42} Texas 42 and {args.games_moon} "
        f"Moon games, {args.workers} worker process(es)"
    )
    with (
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
        ) as progress,
        ProcessPoolExecutor(max_workers=args.workers) as pool,
    ):
        task = progress.add_task("games", total=len(todo))
        for outcome in pool.map(play, todo, chunksize=4):
            outcomes[outcome.family].append(outcome)
            progress.advance(task)
    elapsed = time.perf_counter() - started

    ok = True
    for family, results in outcomes.items():
        if not results:
            continue
        n = len(results)
        wins = sum(r.won for r in results)
        draws = sum(r.draw for r in results)
        hands = sum(r.hands for r in results)
        low, high = wilson(wins, n)
        baseline = BASELINES[family]
        clear = low > baseline
        ok &= clear
        print(f"{TITLES[family]}:")
        print(
            f"  {wins}/{n} won ({draws} drawn at {args.max_hands} hands), {hands / n:.1f} hands "
            f"a game: win rate {wins / n:.1%}, 95% Wilson interval [{low:.1%}, {high:.1%}]"
        )
        print(
            f"  random baseline {baseline:.1%}: "
            + ("heuristic clearly better" if clear else "NOT clearly better than random")
        )
    decisions = sum(r.decisions for rs in outcomes.values() for r in rs)
    print(f"{decisions} decisions in {elapsed:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
