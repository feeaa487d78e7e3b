"""Engine speed: complete random hands per second through the public decide/evolve path.

Each hand is dealt from a seed, bid, declared and played out trick by trick by choosing a
random legal action for the seat to act; every command goes through ``engine.decide`` (full
validation) and every event through ``engine.evolve``. One process, one core.

    make bench-engine            # prints `texas42: N hands/s` and `moon: N hands/s` last
"""

from __future__ import annotations

import argparse
import random
import time

from boneyard import engine
from boneyard.engine import Deal, HandScored, Phase


def play_hands(
    preset: str, hands: int, seed: int, options: dict[str, object] | None = None
) -> tuple[int, int, int]:
    """Play ``hands`` complete hands; returns (hands, commands, events)."""
    rng = random.Random(seed)
    rules = engine.ruleset(preset, options or {})
    state = engine.replay(engine.start(rules))
    scored = commands = events = 0
    while scored < hands:
        if state.phase is Phase.GAME_OVER:
            state = engine.replay(engine.start(rules))
        if state.phase is Phase.DEAL:
            command: engine.Command = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            command = rng.choice(engine.legal_actions(state, state.hand.turn))
        commands += 1
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20000, help="hands per game type")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    print(f"engine benchmark: {args.hands} random hands per game type, one process")
    for preset in ("texas42-house", "moon-s1"):
        measure(preset, args.hands // 2, args.seed)
    # Random bids are often set early; this is the cost of a hand with every trick played.
    measure("texas42", args.hands // 2, args.seed, {"end_hand_when_decided": False})
    rates = {p: measure(p, args.hands, args.seed) for p in ("texas42", "moon")}
    print(f"texas42: {rates['texas42']:,.0f} hands/s".replace(",", ""))
    print(f"moon: {rates['moon']:,.0f} hands/s".replace(",", ""))


if __name__ == "__main__":
    main()
