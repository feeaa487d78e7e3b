"""Engine speed: complete random hands per second through the public decide/evolve path,
beside a bare bitmask playout of hands (``bare_playout.py``) measured in the same run.

Each hand is dealt from a seed, bid, declared and played out trick by trick by choosing a
random legal action for the seat to act; every command goes through ``engine.decide`` (full
validation) and every event through ``engine.evolve``. The headline plays every trick
(``end_hand_when_decided`` off in Texas 42; Moon always plays seven). The bare loop deals the
same way, names a random trump and plays random legal tiles with bitmasks and tables, nothing
else: the engine's hands per second over the loop's is its ratio. The two alternate, round by
round, and the medians are kept, so that the machine's load weighs on both alike. One process.

The headline is the pure-Python core (``decider.pure_decide`` ...). Where the install built the
compiled core (``boneyard.engine._decider_c``, what ``engine.decide`` is then), each round runs it
too, in turn with the Python core and the bare loop, and lines before the headline give its
figures: `texas42 compiled core: N hands/s, ratio R to the bare loop`, and moon's.

    make bench-engine   # last lines `texas42: N hands/s, ratio R to the bare loop`, and moon's
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from bare_playout import bare_hands

from boneyard import engine
from boneyard.engine import Deal, HandScored, Phase, decider

CORES = {
    "python": (decider.pure_legal_actions, decider.pure_decide, decider.pure_evolve),
    "c": (decider.c_legal_actions, decider.c_decide, decider.c_evolve),
}
"""The functions of each core of the decider: (legal_actions, decide, evolve)."""
if "c" not in decider.CORES:
    del CORES["c"]


MOST_HANDS_A_GAME = 100
"""Hands after which a game is started afresh. Random play in Moon can go on for ever (the
bidders are set, every score falls without end), and a state keeps the result of every hand
before it: in a game thousands of hands long the engine's time goes to copying that tuple,
which no real game is long enough to notice (Moon's end in about 20 hands, Texas 42's in 10)."""


def play_hands(
    preset: str,
    hands: int,
    seed: int,
    options: dict[str, object] | None = None,
    core: str = "python",
) -> tuple[int, int, int]:
    """Play ``hands`` complete hands; returns (hands, commands, events).

    Written as a bot author's simulation loop would be (and as the bare loop is): the engine's
    functions and the phases read once into local names."""
    rng = random.Random(seed)
    choice, randbytes = rng.choice, rng.randbytes
    legal_actions, decide, evolve = CORES[core]
    game_over, to_deal = Phase.GAME_OVER, Phase.DEAL
    rules = engine.ruleset(preset, options or {})
    state = engine.replay(engine.start(rules))
    scored = commands = events = 0
    while scored < hands:
        phase = state.phase
        if phase is game_over or (phase is to_deal and len(state.results) >= MOST_HANDS_A_GAME):
            state = engine.replay(engine.start(rules))
            phase = state.phase
        if phase is to_deal:
            command: engine.Command = Deal(randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            command = choice(legal_actions(state, state.hand.turn))
        commands += 1
        for event in decide(state, command):
            state = evolve(state, event)
            events += 1
            if type(event) is HandScored:
                scored += 1
    return scored, commands, events


def measure(
    preset: str,
    hands: int,
    seed: int,
    options: dict[str, object] | None = None,
    core: str = "python",
) -> float:
    play_hands(preset, max(hands // 10, 10), seed, options, core)  # warm the tables and caches
    start = time.perf_counter()
    done, commands, events = play_hands(preset, hands, seed + 1, options, core)
    elapsed = time.perf_counter() - start
    label = preset + (" " + " ".join(f"{k}={v}" for k, v in options.items()) if options else "")
    label += " (compiled core)" if core == "c" else ""
    print(
        f"  {label}: {done} hands, {commands} commands, {events} events in {elapsed:.2f} s "
        f"({commands / elapsed:,.0f} commands/s)"
    )
    return done / elapsed


def _rounds(preset: str, hands: int, rounds: int, seed: int) -> tuple[dict[str, float], float]:
    """Median hands/s of the engine (each core) and of the bare loop, alternating ``rounds``
    times."""
    moon = engine.ruleset(preset).is_moon
    options: dict[str, object] = {} if moon else {"end_hand_when_decided": False}
    for core in CORES:
        play_hands(preset, max(hands // 10, 10), seed, options, core)  # warm tables and caches
    bare_hands(max(hands // 10, 10), seed, moon)
    ours: dict[str, list[float]] = {core: [] for core in CORES}
    bare = []
    for r in range(rounds):
        for core in CORES:
            start = time.perf_counter()
            play_hands(preset, hands, seed + r, options, core)
            ours[core].append(hands / (time.perf_counter() - start))
        start = time.perf_counter()
        bare_hands(hands, seed + r, moon)
        bare.append(hands / (time.perf_counter() - start))
    return {core: statistics.median(v) for core, v in ours.items()}, statistics.median(bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20000, help="hands per game type")
    parser.add_argument("--rounds", type=int, default=5, help="alternations of the headline")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    print(f"engine benchmark: {args.hands} random hands per game type, one process")
    for core in CORES:
        for preset in ("texas42-house", "moon-s1"):
            measure(preset, args.hands // 2, args.seed, core=core)
        measure("texas42", args.hands // 2, args.seed, core=core)  # random bids: most end early
    per_round = max(args.hands // args.rounds, 10)
    lines, compiled = [], []
    for preset in ("texas42", "moon"):
        medians, bare = _rounds(preset, per_round, args.rounds, args.seed)
        ours = medians["python"]
        print(f"  {preset} every trick played: engine {ours:,.0f} hands/s, bare loop {bare:,.0f}")
        lines.append(f"{preset}: {ours:.0f} hands/s, ratio {ours / bare:.2f} to the bare loop")
        if "c" in medians:
            fast = medians["c"]
            print(f"  {preset} every trick played: compiled core {fast:,.0f} hands/s")
            compiled.append(
                f"{preset} compiled core: {fast:.0f} hands/s, ratio {fast / bare:.2f} to the bare loop"
            )
    if not compiled:
        print("compiled core: not built (the install found no compiler)")
    for line in compiled + lines:
        print(line)


if __name__ == "__main__":
    main()
