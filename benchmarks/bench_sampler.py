"""Bot strength: the sampler against the heuristic bot, on duplicate deals, in process.

No server: each hand runs on the engine directly, and each strategy gets the engine's view of
its seat (``engine.view(state, seat)``, what a client's bot decodes from the API and a house bot
is handed); its command goes to ``engine.decide``.

A *deal* is the first hand of a new game dealt from one seed, played once for each seating,
so that luck of the tiles cancels out:

- Texas 42 (preset ``texas42``): the sampler team in seats 0 & 2 against the heuristic team,
  then the same deal with the teams swapped. The deal's score is the marks the sampler team
  won minus the marks the heuristic team won, over both plays.
- Moon (preset ``moon``): one sampler and two heuristic players, the sampler in seat 0, 1 and 2
  in turn (three plays). The deal's score is, summed over the seats, what the sampler scored
  in that seat minus what the heuristic scored there on average.

A redeal (everyone passed, ``all_pass=redeal``) is dealt from the deal's seed and its count, the
same in every play. The sampler wins a deal when its score is above 0; a tie counts half. Prints
each game's deals, win rate with a 95% Wilson interval, mean score, and the sampler's time a
decision (play, and auction/widow/trump). Runs as many deals as fit in ``--minutes`` (default 5)
up to ``--deals`` of each game (default 500), alternating the games.

    make bench-sampler
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field

from intervals import Z95, wilson

from boneyard import engine
from boneyard.bots import Strategy, strategy
from boneyard.engine import AllPassed, Deal, HandScored, Phase, PlayTile


@dataclass(frozen=True, slots=True)
class Job:
    family: str
    seed: int


@dataclass(slots=True)
class Outcome:
    family: str
    score: float
    play_times: list[float] = field(default_factory=list)
    setup_times: list[float] = field(default_factory=list)


def play_hand(
    preset: str, names: tuple[str, ...], seed: int, timing: Outcome
) -> tuple[int, ...]:
    """Play the first hand of a game dealt from ``seed``: each team's score change."""
    rules = engine.ruleset(preset)
    rng = random.Random(seed)
    bots: list[Strategy] = [strategy(name, rng.randrange(2**31)) for name in names]
    state = engine.replay(engine.start(rules))
    deals = 0
    while True:
        if state.phase is Phase.DEAL:
            digest = hashlib.sha256(f"{seed}/{deals}".encode()).digest()
            command: engine.Command = Deal(digest[:16])
            deals += 1
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            view = engine.view(state, seat)
            started = time.perf_counter()
            command = bots[seat].choose(view)
            spent = time.perf_counter() - started
            if names[seat] == "sampler" and len(view.legal) > 1:
                played = isinstance(command, PlayTile)
                (timing.play_times if played else timing.setup_times).append(spent)
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
            if isinstance(event, HandScored):
                return event.changes
            if isinstance(event, AllPassed) and deals > 20:
                return (0,) * len(rules.teams)


def play_deal(job: Job) -> Outcome:
    outcome = Outcome(job.family, 0.0)
    if job.family == "texas42":
        for hero_team in (0, 1):
            names = tuple("sampler" if seat % 2 == hero_team else "heuristic" for seat in range(4))
            changes = play_hand("texas42", names, job.seed, outcome)
            outcome.score += changes[hero_team] - changes[1 - hero_team]
        return outcome
    sampler_scores = [0.0] * 3
    heuristic_scores: list[list[float]] = [[], [], []]
    for hero in range(3):
        names = tuple("sampler" if seat == hero else "heuristic" for seat in range(3))
        changes = play_hand("moon", names, job.seed, outcome)
        for seat in range(3):
            if seat == hero:
                sampler_scores[seat] = changes[seat]
            else:
                heuristic_scores[seat].append(changes[seat])
    outcome.score = sum(sampler_scores[s] - statistics.mean(heuristic_scores[s]) for s in range(3))
    return outcome


def jobs(deals: int, seed: int, families: tuple[str, ...]) -> Iterator[Job]:
    rng = random.Random(seed)
    for _ in range(deals):
        for family in ("texas42", "moon"):
            seed_of_deal = rng.randrange(2**63)
            if family in families:
                yield Job(family, seed_of_deal)



TITLES = {
    "texas42": "Texas 42, sampler team vs heuristic team, duplicate (score: marks, both seatings)",
    "moon": "Moon, 1 sampler vs 2 heuristic, duplicate over 3 seats (score: points vs heuristic)",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=500, help="deals of each game at most")
    parser.add_argument("--minutes", type=float, default=5.0, help="stop starting deals after this")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--game", choices=("both", "texas42", "moon"), default="both")
    args = parser.parse_args()
    families = ("texas42", "moon") if args.game == "both" else (args.game,)
    print(
        f"sampler benchmark: sampler vs heuristic on duplicate deals, up to {args.deals} of each "
        f"game in {args.minutes:g} minutes, {args.workers} worker process(es)"
    )
    started = time.perf_counter()
    deadline = started + args.minutes * 60
    outcomes: dict[str, list[Outcome]] = {"texas42": [], "moon": []}
    todo = jobs(args.deals, args.seed, families)
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        running: set[Future[Outcome]] = set()
        while True:
            while len(running) < args.workers and time.perf_counter() < deadline:
                job = next(todo, None)
                if job is None:
                    break
                running.add(pool.submit(play_deal, job))
            if not running:
                break
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                outcome = future.result()
                outcomes[outcome.family].append(outcome)
    elapsed = time.perf_counter() - started
    for family, results in outcomes.items():
        if not results:
            continue
        n = len(results)
        wins = sum(r.score > 0 for r in results) + 0.5 * sum(r.score == 0 for r in results)
        low, high = wilson(wins, n)
        scores = [r.score for r in results]
        spread = statistics.stdev(scores) / math.sqrt(n) if n > 1 else 0.0
        plays = [t for r in results for t in r.play_times]
        setups = [t for r in results for t in r.setup_times]
        print(f"{TITLES[family]}:")
        print(
            f"  {n} deals: sampler won {wins:g} (ties count half), win rate {wins / n:.1%}, "
            f"95% Wilson interval [{low:.1%}, {high:.1%}]"
        )
        print(f"  mean score a deal {statistics.mean(scores):+.2f} (+/- {Z95 * spread:.2f})")
        if plays:
            print(
                f"  sampler time a decision: play {statistics.mean(plays) * 1000:.0f} ms mean, "
                f"{max(plays) * 1000:.0f} ms max ({len(plays)} decisions); auction, widow and "
                f"trump {statistics.mean(setups) * 1000 if setups else 0:.0f} ms mean "
                f"({len(setups)} decisions)"
            )
    print(f"{sum(len(r) for r in outcomes.values())} deals in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
