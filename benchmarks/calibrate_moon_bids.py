"""How often a Moon bid is made at the table, against the chance the solved deals give it.

The expert (and the sampler) price a Moon bid by solving the hand over deals of the others'
tiles: the share of deals in which the hand takes the bid's tricks. Solved deals see every
hand, so they promise more than a table gives, and by how much depends on the bid: one lost
trick sets the moon. This script measures it, for the expert's own ``EVERY_TRICK_SHIFT``.

For each deal (the first hand of a game dealt from a seed, the opener in seat 0): the opener's
solved tricks over the deals the expert draws for its bid (``_moon_hand_tricks``); then, for
each bid of 5, 6 tricks and the moon whose solved chance is at least ``--floor``, the hand is
played out with the opener forced to that bid and the others passing, the opener played by the
expert and the two others by the sampler (at ``--move-ms`` each): made or not. It prints, for
each bid and band of solved chance, the hands played, the mean solved chance and the share
made.

    python benchmarks/calibrate_moon_bids.py --deals 300 --workers 2
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

from boneyard import engine
from boneyard.bots.base import view_rng
from boneyard.bots.expert import ExpertStrategy
from boneyard.bots.sampler import SamplerStrategy
from boneyard.engine import BidKind, HandScored, Pass, Phase, PlaceBid, SeatCommand

BIDS = (5, 6, 7)
"""Tricks bid (7: the moon)."""


def _deal(preset: str, seed: int) -> engine.GameState:
    state = engine.replay(engine.start(engine.ruleset(preset)))
    command = engine.Deal(hashlib.sha256(f"{seed}/0".encode()).digest()[:16])
    for event in engine.decide(state, command):
        state = engine.evolve(state, event)
    return state


def _forced(legal: tuple[SeatCommand, ...], tricks: int) -> SeatCommand:
    for a in legal:
        if isinstance(a, PlaceBid) and (
            (tricks == 7 and a.bid.kind is BidKind.MOON)
            or (a.bid.kind is BidKind.TRICKS and a.bid.amount == tricks)
        ):
            return a
    raise ValueError(f"no bid of {tricks} tricks among {legal}")


def _play(preset: str, seed: int, opener: int, tricks: int, move_ms: int) -> bool:
    """The hand played out with ``opener`` forced to bid ``tricks``: made or not."""
    state = _deal(preset, seed)
    rng = random.Random(seed)
    seconds = move_ms / 1000
    players = {
        s: ExpertStrategy(rng.randrange(2**31), move_ms=move_ms)
        if s == opener
        else SamplerStrategy(rng.randrange(2**31), time_budget=seconds, auction_budget=seconds)
        for s in range(state.rules.players)
    }
    while True:
        assert state.hand is not None and state.hand.turn is not None
        seat = state.hand.turn
        view = engine.view(state, seat)
        if state.phase is Phase.BIDDING:
            command: SeatCommand = (
                _forced(view.legal, tricks)
                if seat == opener
                else next(a for a in view.legal if isinstance(a, Pass))
            )
        else:
            command = players[seat].choose(view)
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
            if isinstance(event, HandScored):
                return bool(event.made)


def one_deal(
    job: tuple[str, int, int, float, tuple[int, ...]],
) -> list[tuple[int, float, bool]]:
    """``(tricks bid, solved chance, made)`` for each bid worth playing out on this deal."""
    preset, seed, move_ms, floor, bids = job
    state = _deal(preset, seed)
    assert state.hand is not None and state.hand.turn is not None
    opener = state.hand.turn
    view = engine.view(state, opener)
    expert = ExpertStrategy(seed, move_ms=move_ms)
    values = expert._moon_hand_tricks(expert._read(view, opener), view_rng(seed, view))
    if not values:
        return []
    out = []
    for tricks in bids:
        chance = sum(v >= tricks for v in values) / len(values)
        if chance >= floor:
            out.append((tricks, chance, _play(preset, seed, opener, tricks, move_ms)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="moon")
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--move-ms", type=int, default=100)
    parser.add_argument("--floor", type=float, default=0.3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--bids", default="5,6,7", help="the tricks bid to play out (7: the moon)")
    args = parser.parse_args()
    bids = tuple(int(b) for b in args.bids.split(","))
    if not set(bids) <= set(BIDS):
        parser.error(f"--bids: choose among {BIDS}")
    seeds = random.Random(args.seed)
    jobs = [
        (args.preset, seeds.randrange(2**63), args.move_ms, args.floor, bids)
        for _ in range(args.deals)
    ]
    bands: dict[tuple[int, int], list[tuple[float, bool]]] = defaultdict(list)
    with ProcessPoolExecutor(args.workers) as pool:
        for rows in pool.map(one_deal, jobs, chunksize=8):
            for tricks, chance, made in rows:
                bands[(tricks, min(int(chance * 10), 9))].append((chance, made))
    print(f"{args.preset}: {args.deals} deals, bids with a solved chance of {args.floor} or more")
    for (tricks, band), rows in sorted(bands.items()):
        name = "moon" if tricks == 7 else f"{tricks} tricks"
        solved = sum(c for c, _ in rows) / len(rows)
        made = sum(m for _, m in rows) / len(rows)
        print(
            f"  {name:9} solved {band / 10:.1f}-{(band + 1) / 10:.1f}: {len(rows):4} hands, "
            f"mean solved {solved:.2f}, made {made:.2f}"
        )
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
