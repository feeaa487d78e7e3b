"""How often the last seat to a trick plays by each rule of ``boneyard.bots.play_reading``.

The expert weighs the deals it draws by how the other seats played (``PlayReading``): a seat
that broke a rule of ``CHANCES`` in a deal makes that deal less likely, by the share of the
time players keep that rule. This script measures those shares on whole hands (the first hand
of games dealt from ``--seed``) played by ``--bots`` (one a seat, round the table), seeing every
hand: each time the last seat to a trick plays, every rule that applied to the hand it held
and whether it kept it. It prints, per rule, the times it applied and the share kept: the
numbers ``CHANCES`` holds.

    python benchmarks/calibrate_play_reading.py --hands 300 --workers 2
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from boneyard import engine
from boneyard.bots import strategy
from boneyard.bots.play_reading import CHANCES, moment, rules_met
from boneyard.engine import ContractKind, Phase, PlayTile


def _hand(preset: str, seed: int, bots: tuple[str, ...], move_ms: int) -> Counter[tuple[str, bool]]:
    """The first hand played out (after any redeals): each rule applied at a last play, and
    whether it was kept."""
    rules = engine.ruleset(preset)
    rng = random.Random(seed)
    players = [
        strategy(bots[s % len(bots)], rng.randrange(2**31), move_ms=move_ms)
        for s in range(rules.players)
    ]
    team_of = {s: t for t in rules.teams for s in t}
    state = engine.replay(engine.start(rules))
    deals = 0
    seen: Counter[tuple[str, bool]] = Counter()
    while state.phase is not Phase.GAME_OVER:
        if state.phase is Phase.DEAL:
            if deals > 5:  # all passed, redealt, again and again
                break
            command: engine.Command = engine.Deal(hashlib.sha256(f"{seed}/{deals}".encode()).digest()[:16])
            deals += 1
        else:
            hand = state.hand
            assert hand is not None and hand.turn is not None
            seat = hand.turn
            command = players[seat].choose(engine.view(state, seat))
            contract = hand.contract
            if (
                isinstance(command, PlayTile)
                and len(hand.trick) == rules.players - 1
                and contract is not None
                and contract.kind is ContractKind.TRUMP
                and hand.table is not None
            ):
                m = moment(
                    hand.table, rules.may_trump_when_able_to_follow, team_of[seat], hand.trick,
                    seat, command.tile, 0,
                )
                seen.update(rules_met(m, hand.hands[seat]))
        events = engine.decide(state, command)
        for event in events:
            state = engine.evolve(state, event)
        if any(isinstance(e, engine.HandScored) for e in events):
            break
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="texas42")
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--seed", type=int, default=60)
    parser.add_argument("--bots", default="sampler,expert", help="round the table, comma separated")
    parser.add_argument("--move-ms", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not 1 <= args.hands <= 100_000:
        parser.error("--hands must be 1..100000")
    bots = tuple(args.bots.split(","))
    total: Counter[tuple[str, bool]] = Counter()
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [
            pool.submit(_hand, args.preset, args.seed * 1_000_003 + i, bots, args.move_ms)
            for i in range(args.hands)
        ]
        for f in futures:
            total.update(f.result())
    print(f"{args.preset}, {args.hands} hands, bots {','.join(bots)} at {args.move_ms} ms, seed {args.seed}")
    for rule in CHANCES:
        kept, broken = total[(rule, True)], total[(rule, False)]
        n = kept + broken
        share = kept / n if n else float("nan")
        print(f"{rule:>20}: applied {n:5d}, kept {share:.3f} (CHANCES {CHANCES[rule]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
