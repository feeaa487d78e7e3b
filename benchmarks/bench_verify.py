"""Offline verification speed: whole Texas 42 games (to 7 marks) verified per second.

The records are built in-process with the record builder the server uses
(``boneyard.records.record.build_record``, from the log as the store keeps it: ``stored_log``), from
games played with the engine: every hand dealt from a seed drawn with ``random``, every action
a random legal one (in the auction a seat passes at random, or bids the lowest bid it may, so
that games last as real ones do; uniformly random bids would make most hands 84s and more).
Then ``boneyard.records.verify.verify_record`` checks each one completely (hash chain, seeds, every
move through ``engine.decide``, every score and the winner). One process, one core.

The headline is the engine as installed: its compiled play path (``boneyard.engine._decider_c``)
when the install built it. Then the same records are verified again in a child process with
``BONEYARD_ENGINE_CORE=python``, the pure-Python engine, whose figure comes on the line before.

    make bench-verify          # the last line is `verify: N records/s`
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

from boneyard import engine
from boneyard.api.v1 import archive_pb2
from boneyard.engine import Deal, Event, Pass, Phase, PlaceBid, decider
from boneyard.records.record import build_record, dump_record, stored_log
from boneyard.records.verify import verify_bytes, verify_record


def _choose(state: engine.GameState, rng: random.Random) -> engine.SeatCommand:
    assert state.hand is not None and state.hand.turn is not None
    legal = engine.legal_actions(state, state.hand.turn)
    if state.phase is Phase.BIDDING:
        bids = [a for a in legal if isinstance(a, PlaceBid)]
        passes = [a for a in legal if isinstance(a, Pass)]
        if passes and (not bids or rng.random() < 0.6):
            return passes[0]
        return min(bids, key=lambda a: a.bid.rank)
    return rng.choice(legal)


def random_game(preset: str, rng: random.Random) -> list[Event]:
    """A whole game's log, played at random."""
    events: list[Event] = list(engine.start(engine.ruleset(preset)))
    state = engine.replay(events)
    while state.phase is not Phase.GAME_OVER:
        command = Deal(rng.randbytes(32)) if state.phase is Phase.DEAL else _choose(state, rng)
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
            events.append(event)
    return events


def build(count: int, seed: int) -> list[archive_pb2.GameRecord]:
    rng = random.Random(seed)
    records = []
    for i in range(count):
        log = stored_log(random_game("texas42", rng))
        players = {s: f"player {s}" for s in range(4)}
        records.append(build_record(f"bench-{seed}-{i}", log, name="bench", players=players))
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300, help="records to verify")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    print(
        f"verify benchmark: {args.records} random Texas 42 games to 7 marks, one process, "
        f"engine core {decider.CORE}"
    )
    start = time.perf_counter()
    records = build(args.records, args.seed)
    built = time.perf_counter() - start
    events = sum(len(r.events) for r in records)
    print(
        f"  built {len(records)} records in {built:.2f} s: {events / len(records):.0f} events "
        f"and {sum(len(r.hands) for r in records) / len(records):.1f} hands a game on average"
    )
    for record in records[: max(len(records) // 10, 1)]:  # warm the engine's tables
        verify_record(record)
    files = [dump_record(r, binary=True) for r in records]
    start = time.perf_counter()
    for data in files:
        assert verify_bytes(data).valid
    from_bytes = time.perf_counter() - start
    print(f"  from protobuf bytes (parse + verify): {len(files) / from_bytes:.0f} records/s")
    start = time.perf_counter()
    for record in records:
        verdict = verify_record(record)
        assert verdict.valid, verdict
    elapsed = time.perf_counter() - start
    print(
        f"  verified {len(records)} records ({events} events) in {elapsed:.2f} s: "
        f"{events / elapsed:,.0f} events/s"
    )
    rate = len(records) / elapsed
    if decider.CORE == "c" and not args.child:
        pure = subprocess.run(
            [sys.executable, __file__, "--records", str(args.records), "--seed", str(args.seed)]
            + ["--child"],
            env={**os.environ, "BONEYARD_ENGINE_CORE": "python"},
            capture_output=True,
            text=True,
            check=True,
        )
        print(f"  pure-Python engine ({pure.stdout.splitlines()[-1]})")
        print(f"  compiled play path: {rate:.0f} records/s")
    print(f"verify: {rate:.0f} records/s")


if __name__ == "__main__":
    main()
