"""Bot strength: any strategy against any other, on duplicate deals with full auctions, in process.

No server: each hand runs on the engine directly, and each strategy gets the engine's view of
its seat (``engine.view(state, seat)``, what a client's bot decodes from the API and a house bot
is handed); its command goes to ``engine.decide``. This is bench_sampler.py with the two sides,
the games and the budgets chosen on the command line.

A *deal* is the first hand of a new game dealt from one seed, played from the deal through the
auction, the widow and the declaration to its ``HandScored`` (``boneyard.bots.duplicate``, which
the tests' seeded matches play too), once for each seating, so that the luck of the tiles
cancels out:

- A Texas 42 preset (4 players, two partnerships): the hero team in seats 0 & 2 against the
  other team, then the same deal with the teams swapped. The deal's score is the marks (points
  in a points game) the hero team won minus what the other team won, over both plays.
- A Moon preset (3 players): one hero and two of the other strategy, the hero in seat 0, 1 and
  2 in turn (three plays). The deal's score is, summed over the seats, what the hero scored in
  that seat minus what the other strategy scored there on average.

A redeal (everyone passed, ``all_pass=redeal``) is dealt from the deal's seed and its count, the
same in every play. The hero wins a deal when its score is above 0; a tie counts half.

Prints for each game: the deals played, the hero's win rate with a 95% Wilson interval (and
whether it is clear of 50%), the mean score a deal with its 95% interval, how often each kind of
contract was bid and made by each side, and the median and p95 time of each strategy's
decisions (play apart from auction, widow and trump; only decisions with more than one legal
choice). The last lines, one a game, read e.g.::

    texas42: expert vs sampler 57.2% [52.8, 61.5] over 500 deals, +0.21 marks a deal, clear of 50%

Plays ``--deals`` of each game, alternating the games, or as many as start within
``--minutes`` when that is given (or the deals of an earlier ``--dump`` file, ``--replay
FILE``). ``--dump FILE`` writes one JSON line a deal (its game, seed,
score, and each play's auction, contract, result and score changes by role), to study the
decisive deals. A benchmark reports: the exit code is 0 whatever the figures say.

    make bench-bots
    python benchmarks/bench_duplicate.py --hero sampler --against heuristic --deals 20,10,10
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field

from intervals import Z95, wilson

from boneyard import engine
from boneyard.bots import Strategy, duplicate, strategy, strategy_names
from boneyard.engine import (
    AllPassed,
    AuctionWon,
    BidKind,
    ContractDeclared,
    ContractKind,
    Pass,
    PlaceBid,
    PlayTile,
    Ruleset,
)

HERO, AGAINST = "hero", "against"
"""The two sides, by role: the same strategy may play both."""


@dataclass(frozen=True, slots=True)
class Side:
    name: str
    move_ms: int | None


@dataclass(frozen=True, slots=True)
class Job:
    game: str
    seed: int
    hero: Side
    against: Side


@dataclass(slots=True)
class Outcome:
    game: str
    score: float = 0.0
    seconds: float = 0.0
    """Wall time of the deal's plays, in its worker."""
    bids: Counter[tuple[str, str]] = field(default_factory=Counter)
    """``(role, contract row)``: hands whose auction that side won, with that contract."""
    made: Counter[tuple[str, str]] = field(default_factory=Counter)
    times: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    """``(role, "play" | "setup")``: seconds a decision."""
    seed: int = 0
    plays: list[dict[str, object]] = field(default_factory=list)
    """Each play of the deal (one a seating), for ``--dump``: the auction by role, the
    contract, whether it was made and the score changes by role."""

    def time(self, role: str, kind: str, seconds: float) -> None:
        self.times.setdefault((role, kind), []).append(seconds)


def make(name: str, seed: int, move_ms: int | None) -> Strategy:
    """The strategy, with a budget only when one is given (not every strategy takes one)."""
    if move_ms is None:
        return strategy(name, seed)
    return strategy(name, seed, move_ms=move_ms)  # type: ignore[call-arg]


def contract_rows(rules: Ruleset) -> tuple[str, ...]:
    """The kinds of contract this ruleset allows, in the order the table prints them."""
    if rules.family == "moon":
        tricks = tuple(f"{n} tricks" for n in range(rules.moon_min_bid, 8))
        return tricks + ("moon",) + (("overcall",) if rules.moon_overcall else ())
    rows = ["30-31", "32-34", "35-41", "1 mark", "2+ marks"]
    rows += [kind for kind in ("plunge", "splash", "nello", "sevens") if getattr(rules, kind)]
    return tuple(rows)


def contract_row(won: AuctionWon, declared: ContractDeclared | None) -> str:
    """The row of the contract table a hand counts under: nello and sevens by the declaration
    (whatever mark bid won), every other contract by its bid."""
    if declared is not None and declared.contract.kind is ContractKind.NELLO:
        return "nello"
    if declared is not None and declared.contract.kind is ContractKind.SEVENS:
        return "sevens"
    bid = won.bid
    if bid.kind is BidKind.POINTS:
        return "30-31" if bid.amount <= 31 else "32-34" if bid.amount <= 34 else "35-41"
    if bid.kind is BidKind.MARKS:
        return "1 mark" if bid.amount == 1 else "2+ marks"
    if bid.kind is BidKind.TRICKS:
        return f"{bid.amount} tricks"
    return bid.kind.value  # plunge, splash, moon, overcall


def play_hand(
    preset: str, sides: tuple[Side, ...], roles: tuple[str, ...], seed: int, outcome: Outcome
) -> tuple[int, ...]:
    """Play the first hand of a game dealt from ``seed``, ``sides[seat]`` in each seat
    (``boneyard.bots.duplicate.play_hand``): each team's score change (marks, or points).
    Counts the contract and the decision times in ``outcome`` under each seat's role."""
    rules = engine.ruleset(preset)
    rng = random.Random(seed)
    bots = [make(side.name, rng.randrange(2**31), side.move_ms) for side in sides]
    won: AuctionWon | None = None
    declared: ContractDeclared | None = None
    auction: list[tuple[str, str]] = []

    def choose(seat: int, view: engine.SeatView) -> engine.SeatCommand:
        started = time.perf_counter()
        command = bots[seat].choose(view)
        spent = time.perf_counter() - started
        if len(view.legal) > 1:
            outcome.time(roles[seat], "play" if isinstance(command, PlayTile) else "setup", spent)
        if isinstance(command, PlaceBid | Pass):
            said = "pass" if isinstance(command, Pass) else engine.bid_text(command.bid, rules)
            auction.append((roles[seat], said))
        return command

    def observe(event: engine.Event) -> None:
        nonlocal won, declared
        if isinstance(event, AllPassed):
            auction.clear()
        elif isinstance(event, AuctionWon):
            won = event
        elif isinstance(event, ContractDeclared):
            declared = event

    scored = duplicate.play_hand(rules, choose, seed, observe)
    if scored is None:
        return (0,) * len(rules.teams)
    assert won is not None
    row = (roles[scored.bidder], contract_row(won, declared))
    outcome.bids[row] += 1
    outcome.made[row] += scored.made
    outcome.plays.append(
        {
            "auction": auction,
            "bidder": roles[scored.bidder],
            "contract": row[1],
            "declared": str(declared.contract) if declared is not None else None,
            "made": scored.made,
            "taken": _by_role(rules, roles, scored.taken),
            "changes": _by_role(rules, roles, scored.changes),
        }
    )
    return scored.changes


def _by_role(rules: Ruleset, roles: tuple[str, ...], values: tuple[int, ...]) -> dict[str, int]:
    """A team's (Moon: a seat's) figures summed by the role that sat there."""
    out = {HERO: 0, AGAINST: 0}
    for team, value in zip(rules.teams, values, strict=True):
        out[roles[team[0]]] += value
    return out


def play_deal(job: Job) -> Outcome:
    """Every seating of one deal; the hero's score over them."""
    outcome = Outcome(job.game, seed=job.seed)
    started = time.perf_counter()
    rules = engine.ruleset(job.game)
    if rules.family == "texas42":
        for hero_team in (0, 1):
            roles = tuple(HERO if rules.team_of[s] == hero_team else AGAINST for s in range(4))
            sides = tuple(job.hero if role == HERO else job.against for role in roles)
            changes = play_hand(job.game, sides, roles, job.seed, outcome)
            outcome.score += changes[hero_team] - changes[1 - hero_team]
    else:
        hero_scores = [0.0] * 3
        other_scores: list[list[float]] = [[], [], []]
        for hero in range(3):
            roles = tuple(HERO if seat == hero else AGAINST for seat in range(3))
            sides = tuple(job.hero if role == HERO else job.against for role in roles)
            changes = play_hand(job.game, sides, roles, job.seed, outcome)
            for seat in range(3):
                if seat == hero:
                    hero_scores[seat] = changes[seat]
                else:
                    other_scores[seat].append(changes[seat])
        outcome.score = sum(hero_scores[s] - statistics.mean(other_scores[s]) for s in range(3))
    outcome.seconds = time.perf_counter() - started
    return outcome


def deal_seed(seed: int, game: str, index: int) -> int:
    """The seed of a game's ``index``-th deal: the same whoever plays and whatever other games
    run, so that two runs (expert vs sampler, expert vs heuristic) play the very same deals."""
    return int.from_bytes(hashlib.sha256(f"{seed}/{game}/{index}".encode()).digest()[:8], "big")


def jobs(deals: dict[str, int], seed: int, hero: Side, against: Side) -> Iterator[Job]:
    """The games' deals in turn (one of each while each has some left)."""
    for index in range(max(deals.values(), default=0)):
        for game, count in deals.items():
            if index < count:
                yield Job(game, deal_seed(seed, game, index), hero, against)


def replayed(path: str, games: tuple[str, ...], hero: Side, against: Side) -> Iterator[Job]:
    """The deals of a ``--dump`` file, of the games chosen, in its order: a change to a
    strategy that alters only some deals is measured on those alone (the others are played
    the same, decisions being a function of the view, the seed and the budget)."""
    with open(path) as lines:
        for line in lines:
            record = json.loads(line)
            if record["game"] in games:
                yield Job(record["game"], int(record["seed"]), hero, against)


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value with ``fraction`` of them at or below."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def unit(rules: Ruleset) -> str:
    return "points" if rules.family == "moon" or rules.points_to_win else "marks"


def describe(game: str, rules: Ruleset, hero: Side, against: Side) -> str:
    if rules.family == "texas42":
        return (
            f"{game}: {hero.name} team vs {against.name} team, both seatings (score: {unit(rules)})"
        )
    return (
        f"{game}: 1 {hero.name} vs 2 {against.name}, the {hero.name} in each seat (score: points)"
    )


def report(game: str, results: list[Outcome], hero: Side, against: Side) -> str:
    """Print a game's figures; return its summary line."""
    rules = engine.ruleset(game)
    n = len(results)
    wins = sum(r.score > 0 for r in results) + 0.5 * sum(r.score == 0 for r in results)
    low, high = wilson(wins, n)
    clear = low > 0.5 or high < 0.5
    scores = [r.score for r in results]
    mean = statistics.mean(scores)
    half = Z95 * statistics.stdev(scores) / math.sqrt(n) if n > 1 else 0.0
    per = unit(rules)
    print(describe(game, rules, hero, against))
    print(
        f"  {n} deals: {hero.name} won {wins:g} (ties count half), win rate {wins / n:.1%}, "
        f"95% Wilson interval [{low:.1%}, {high:.1%}]"
    )
    if not clear:
        print(f"  NOT CLEAR of 50%: {n} deals do not separate {hero.name} from {against.name}")
    print(
        f"  mean score a deal {mean:+.2f} {per}, 95% interval [{mean - half:+.2f}, {mean + half:+.2f}]"
    )
    print(f"  wall time a deal {statistics.mean(r.seconds for r in results):.3f} s in its worker")
    bids: Counter[tuple[str, str]] = sum((r.bids for r in results), Counter())
    made: Counter[tuple[str, str]] = sum((r.made for r in results), Counter())
    special = "; nello and sevens whatever the bid" if rules.family == "texas42" else ""
    print(f"  contracts (hands whose auction each side won, and % made{special}):")
    print(
        f"    {'contract':<10} {hero.name + ' bid':>14} {'made':>7} {against.name + ' bid':>16} {'made':>7}"
    )
    for row in contract_rows(rules):
        cells = []
        for role, width in ((HERO, 14), (AGAINST, 16)):
            count = bids[role, row]
            rate = f"{made[role, row] / count:.0%}" if count else "-"
            cells.append(f"{count:>{width}} {rate:>7}")
        print(f"    {row:<10} {' '.join(cells)}")
    for role, side in ((HERO, hero), (AGAINST, against)):
        parts = []
        for kind, label in (("play", "play"), ("setup", "auction/widow/trump")):
            times = [t for r in results for t in r.times.get((role, kind), [])]
            if times:
                parts.append(
                    f"{label} median {statistics.median(times) * 1000:.1f} ms, "
                    f"p95 {percentile(times, 0.95) * 1000:.1f} ms ({len(times)} decisions)"
                )
            else:
                parts.append(f"{label} no decisions")
        budget = f" at {side.move_ms} ms" if side.move_ms is not None else ""
        print(f"  {role} {side.name}{budget} time a decision: {'; '.join(parts)}")
    verdict = "clear of 50%" if clear else "NOT clear of 50%"
    return (
        f"{game}: {hero.name} vs {against.name} {wins / n:.1%} [{low * 100:.1f}, {high * 100:.1f}] "
        f"over {n} deals, {mean:+.2f} {per} a deal, {verdict}"
    )


def parse_deals(text: str, games: tuple[str, ...]) -> dict[str, int]:
    counts = [int(part) for part in text.split(",")]
    if len(counts) == 1:
        counts *= len(games)
    if len(counts) != len(games) or any(c < 0 for c in counts):
        raise argparse.ArgumentTypeError(
            f"--deals {text!r}: one count, or one for each of the {len(games)} games"
        )
    return dict(zip(games, counts, strict=True))


def parse_games(text: str) -> tuple[str, ...]:
    games = tuple(part.strip() for part in text.split(",") if part.strip())
    for game in games:
        if game not in engine.preset_names():
            raise argparse.ArgumentTypeError(
                f"no preset {game!r}: choose among {', '.join(engine.preset_names())}"
            )
        rules = engine.ruleset(game)
        if not (rules.family == "moon" or (rules.players == 4 and len(rules.teams) == 2)):
            raise argparse.ArgumentTypeError(f"{game!r}: only 4-player Texas 42 and Moon")
    if not games or len(set(games)) != len(games):
        raise argparse.ArgumentTypeError(f"--games {text!r}: name each preset once")
    return games


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hero", choices=strategy_names(), required=True)
    parser.add_argument("--against", choices=strategy_names(), required=True)
    parser.add_argument("--games", type=parse_games, default=("texas42", "texas42-house", "moon"))
    parser.add_argument(
        "--deals", default="500", help="deals of each game at most: N, or N,N,N one a game"
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="stop starting deals after this (default: never)",
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--hero-ms", type=int, default=None, help="the hero's move_ms")
    parser.add_argument("--against-ms", type=int, default=None, help="the other side's move_ms")
    parser.add_argument(
        "--dump", default=None, help="write one JSON line a deal to this file (see the doc)"
    )
    parser.add_argument(
        "--replay",
        default=None,
        help="play the deals of a --dump file (of the games chosen) instead of --deals",
    )
    args = parser.parse_args()
    try:
        deals = parse_deals(args.deals, args.games)
    except (ValueError, argparse.ArgumentTypeError) as error:
        parser.error(str(error))
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    hero, against = Side(args.hero, args.hero_ms), Side(args.against, args.against_ms)
    for option, side in (("--hero-ms", hero), ("--against-ms", against)):
        try:
            make(side.name, 0, side.move_ms)
        except (TypeError, ValueError) as error:
            parser.error(f"{option} {side.move_ms}: strategy {side.name!r} refuses it ({error})")
    print(
        f"duplicate benchmark: {hero.name} vs {against.name}, "
        + (
            f"{', '.join(f'{n} {g}' for g, n in deals.items())} deals at most, "
            if args.replay is None
            else f"the {', '.join(deals)} deals of {args.replay}, "
        )
        + f"{'no time bound' if args.minutes is None else f'{args.minutes:g} minutes'}, "
        f"{args.workers} worker process(es), seed {args.seed}"
    )
    sys.stdout.flush()
    started = time.perf_counter()
    deadline = math.inf if args.minutes is None else started + args.minutes * 60
    outcomes: dict[str, list[Outcome]] = {game: [] for game in deals}
    todo = (
        jobs(deals, args.seed, hero, against)
        if args.replay is None
        else replayed(args.replay, args.games, hero, against)
    )
    dump = open(args.dump, "w") if args.dump is not None else None  # noqa: SIM115
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
                outcomes[outcome.game].append(outcome)
                if dump is not None:
                    record = {"game": outcome.game, "seed": outcome.seed, "score": outcome.score}
                    print(json.dumps(record | {"plays": outcome.plays}), file=dump, flush=True)
    if dump is not None:
        dump.close()
    elapsed = time.perf_counter() - started
    summaries = [
        report(game, results, hero, against) for game, results in outcomes.items() if results
    ]
    print(f"{sum(len(r) for r in outcomes.values())} deals in {elapsed:.0f} s")
    for game, results in outcomes.items():
        if not results:
            print(f"{game}: {hero.name} vs {against.name}: no deals played (--minutes too short)")
    for line in summaries:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
