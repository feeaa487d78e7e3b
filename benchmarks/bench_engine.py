"""Engine speed: complete random hands per second through the public decide/evolve path,
beside a bare bitmask playout of hands (``bare_playout.py``) measured in the same run.

Each hand is dealt from a seed, bid, declared and played out trick by trick by choosing a
random legal action for the seat to act; every command goes through ``engine.decide`` (full
validation) and every event through ``engine.evolve``. The headline plays every trick
(``end_hand_when_decided`` off in Texas 42; Moon always plays seven). The bare loop deals the
same way, names a random trump and plays random legal tiles with bitmasks and tables, nothing
else: the engine's hands per second over the loop's is its ratio. The two alternate, round by
round, and the medians are kept, so that the machine's load weighs on both alike. One process.

    make bench-engine   # last lines `texas42: N hands/s, ratio R to the bare loop`, and moon's
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from bare_playout import bare_hands

from boneyard import engine
from boneyard.engine import Deal, HandScored, Phase


def play_hands(
    preset: str, hands: int, seed: int, options: dict[str, object] | None = None
) -> tuple[int, int, int]:
    """Play ``hands`` complete hands; returns (hands, commands, events).

    Written as a bot author's simulation loop would be (and as the bare loop is): the engine's
    functions and the phases read once into local names."""
    rng = random.Random(seed)
    choice, randbytes = rng.choice, rng.randbytes
    legal_actions, decide, evolve = engine.legal_actions, engine.decide, engine.evolve
    game_over, to_deal = Phase.GAME_OVER, Phase.DEAL
    rules = engine.ruleset(preset, options or {})
    state = engine.replay(engine.start(rules))
    scored = commands = events = 0
    while scored < hands:
        phase = state.phase
        if phase is game_over:
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


def measure(preset: str, hands: int, seed: int, options: dict[str, object] | None = None) -> float:
    play_hands(preset, max(hands // 10, 10), seed, options)  # warm the tables and caches
    start = time.perf_counter()
    done, commands, events = play_hands(preset, hands, seed + 1, options)
    elapsed = time.perf_counter() - start
    label = preset + (" " + " ".join(f"{k}={v}" for k, v in options.items()) if options else "")
    print(
        f"  {label}: {done} hands, {commands} commands, {events} events in {elapsed:.2f} s "
        f"({commands / elapsed:,.0f} commands/s)"
    )
    return done / elapsed


def _rounds(preset: str, hands: int, rounds: int, seed: int) -> tuple[float, float]:
    """Median hands/s of the engine and of the bare loop, alternating ``rounds`` times."""
    moon = engine.ruleset(preset).is_moon
    options: dict[str, object] = {} if moon else {"end_hand_when_decided": False}
    play_hands(preset, max(hands // 10, 10), seed, options)  # warm the tables and caches
    bare_hands(max(hands // 10, 10), seed, moon)
    ours, bare = [], []
    for r in range(rounds):
        start = time.perf_counter()
        play_hands(preset, hands, seed + r, options)
        ours.append(hands / (time.perf_counter() - start))
        start = time.perf_counter()
        bare_hands(hands, seed + r, moon)
        bare.append(hands / (time.perf_counter() - start))
    return statistics.median(ours), statistics.median(bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20000, help="hands per game type")
    parser.add_argument("--rounds", type=int, default=5, help="alternations of the headline")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    print(f"engine benchmark: {args.hands} random hands per game type, one process")
    for preset in ("texas42-house", "moon-s1"):
        measure(preset, args.hands // 2, args.seed)
    measure("texas42", args.hands // 2, args.seed)  # random bids: most hands end early
    per_round = max(args.hands // args.rounds, 10)
    lines = []
    for preset in ("texas42", "moon"):
        ours, bare = _rounds(preset, per_round, args.rounds, args.seed)
        print(f"  {preset} every trick played: engine {ours:,.0f} hands/s, bare loop {bare:,.0f}")
        lines.append(f"{preset}: {ours:.0f} hands/s, ratio {ours / bare:.2f} to the bare loop")
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
