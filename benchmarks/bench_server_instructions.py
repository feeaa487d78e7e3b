"""The servers' work an action, counted instead of timed: ``bench_server``'s load on Boneyard and
on the anchor, each server's instructions counted by valgrind.

    make bench-server-instructions  # last line: `server instructions: Boneyard X M an action, ...`

Timed, a server's CPU an action moves ±10% from round to round on this machine, with whatever
else runs on its two cores (``docs/benchmarks.md``); a count of instructions does not, so that
two versions of the server, or the server and the anchor, can be told apart by a few percent.
What it leaves out: the kernel's work (the writer's syncs, the sockets: about the same for
both), and what an instruction costs (the caches, the GIL's hand-overs), which only time shows.

For each system in turn (alternating over ``--rounds``), a fresh server on a fresh SQLite file
runs under ``valgrind --tool=callgrind``, with ``bench_server``'s load: ``--games`` games at
once, the seat to act asks for its view and submits a random legal action, a finished game is
replaced by a new one (its set-up counted with the actions). valgrind makes the server some
fifty times slower, so the client never limits it. After ``--warmup`` actions the count is
zeroed (``callgrind_control --zero``), ``--actions`` actions are played and the count is read
(``--dump``): every thread of the server over those actions. Then, the load stopped, the
server's count while idle is read for ``--idle`` seconds and its rate subtracted over the
window (Boneyard's background tasks run by the clock, which valgrind stretches over each action).
The writer's batches still depend on timing: Boneyard's count moves by a percent or two.

``--opcodes``: instead of valgrind, each server runs under ``count_opcodes.py`` (a tracer
counting the Python opcodes of each function), and the functions with the most opcodes an
action are printed, Boneyard's beside the anchor's, then those where Boneyard runs the most
more: where its extra work is, function by function.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import bench_server as bench
import grpc

from boneyard.api.v1 import game_service_pb2_grpc

HERE = Path(__file__).resolve().parent
SYSTEMS = ("boneyard", "anchor")
SLOW = 600.0
"""Seconds a server under valgrind or the tracer may take to start or to answer a call."""


def server_argv(system: str, folder: Path, binary: str | None) -> list[str]:
    """The command that starts ``system`` on a fresh database in ``folder``."""
    if system == "anchor":
        return [
            str(bench.ANCHOR),
            "--database",
            str(folder / "anchor.db"),
            "--listen",
            "127.0.0.1:0",
        ]
    return bench.boneyard_argv(f"sqlite:///{folder / 'boneyard.db'}", binary)


def start(
    system: str, folder: Path, wrapper: list[str], binary: str | None, loop: str
) -> bench.Server:
    """``system`` started under ``wrapper``: valgrind runs a program (the anchor's script by
    this Python), the opcode tracer a script (``boneyard-server``'s entry point is one)."""
    argv = server_argv(system, folder, binary)
    if system == "anchor":
        argv.extend(("--event-loop", loop))
        if wrapper[0] == "valgrind":
            argv.insert(0, sys.executable)
    bench.START_TIMEOUT = SLOW
    return bench.start_process(
        [*wrapper, *argv], folder / f"{system}.log", {"BONEYARD_EVENT_LOOP": loop}
    )


class Players:
    """``bench_server``'s players on one server, until told to stop."""

    def __init__(self, address: str, games: int, seed: int) -> None:
        bench.RPC_TIMEOUT = SLOW
        self.load = bench.Load(games=games, stop_at=float("inf"), max_actions=10**9)
        self._channel = grpc.aio.insecure_channel(address)
        stub = game_service_pb2_grpc.GameServiceStub(self._channel)
        self._tasks = [
            asyncio.create_task(
                bench.play_games(stub, "texas42", random.Random(seed + n), self.load)
            )
            for n in range(games)
        ]

    @property
    def actions(self) -> int:
        return len(self.load.done)

    async def until(self, actions: int) -> None:
        while self.actions < actions:
            if all(task.done() for task in self._tasks):
                raise RuntimeError(f"the players stopped: {dict(self.load.errors)}")
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        self.load.stop_at = 0.0
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._channel.close()


def _callgrind(flag: str, pid: int) -> None:
    subprocess.run(["callgrind_control", flag, str(pid)], check=True, capture_output=True)


def _counted(folder: Path, before: set[Path]) -> int:
    """The instructions of the dump ``callgrind_control --dump`` just wrote (``before``: the
    files there were)."""
    deadline = time.monotonic() + SLOW
    while time.monotonic() < deadline:
        for path in set(folder.glob("callgrind.out*")) - before:
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith(("totals:", "summary:")):
                    return int(line.split()[1])
        time.sleep(0.2)
    raise RuntimeError("callgrind wrote no count")


async def count_instructions(system: str, args: argparse.Namespace) -> tuple[float, float, int]:
    """One round of ``system`` under callgrind: (instructions an action with the idle rate
    subtracted, of which idle, games set up in the window)."""
    with tempfile.TemporaryDirectory(prefix="bench-instr-") as tmp:
        folder = Path(tmp)
        wrapper = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={folder / 'callgrind.out'}",
            "--dump-instr=no",
            "--collect-jumps=no",
        ]
        server = start(system, folder, wrapper, args.boneyard_server, args.event_loop)
        pid = server.proc.pid
        try:
            players = Players(server.address, args.games, args.seed)
            await players.until(args.warmup)
            _callgrind("--zero", pid)
            first, games, began = players.actions, players.load.games_started, time.monotonic()
            await players.until(first + args.actions)
            before = set(folder.glob("callgrind.out*"))
            _callgrind("--dump", pid)
            actions, seconds = players.actions - first, time.monotonic() - began
            games = players.load.games_started - games
            busy = _counted(folder, before)
            await players.stop()
            await asyncio.sleep(1.0)  # (the last answers' work done)
            _callgrind("--zero", pid)
            await asyncio.sleep(args.idle)
            before = set(folder.glob("callgrind.out*"))
            _callgrind("--dump", pid)
            idle = _counted(folder, before) / args.idle * seconds / actions
        finally:
            server.stop()
    return busy / actions - idle, idle, games


async def count_opcodes(system: str, args: argparse.Namespace) -> tuple[Counter[str], int]:
    """Python opcodes by function over ``--actions`` actions of ``system``; the actions."""
    with tempfile.TemporaryDirectory(prefix="bench-opcodes-") as tmp:
        folder = Path(tmp)
        out = folder / "opcodes.json"
        wrapper = [sys.executable, str(HERE / "count_opcodes.py"), str(out)]
        server = start(system, folder, wrapper, args.boneyard_server, args.event_loop)
        try:
            players = Players(server.address, args.games, args.seed)
            await players.until(args.warmup)
            os.kill(server.proc.pid, signal.SIGUSR1)
            first = players.actions
            await players.until(first + args.actions)
            os.kill(server.proc.pid, signal.SIGUSR2)
            actions = players.actions - first
            deadline = time.monotonic() + SLOW
            while not out.exists() and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            await asyncio.sleep(0.5)  # (written whole)
            counts = Counter(json.loads(out.read_text()))
            await players.stop()
        finally:
            server.stop()
    return counts, actions


def _where(key: str) -> str:
    """A function's key, its file shortened to the project's or the library's path."""
    path, _, rest = key.partition(":")
    for mark in ("site-packages/", "/boneyard/", "python3.11/", "python3.12/", "python3.13/"):
        if mark in path:
            path = path.split(mark, 1)[1]
            break
    else:
        root = str(HERE.parent) + "/"
        path = path.removeprefix(root)
    return f"{path}:{rest}"


def print_opcodes(
    boneyard: tuple[Counter[str], int], anchor: tuple[Counter[str], int], top: int
) -> None:
    (mine, n_mine), (theirs, n_theirs) = boneyard, anchor

    def per(counts: Counter[str], n: int, key: str) -> float:
        return counts.get(key, 0) / n

    total_mine, total_theirs = sum(mine.values()) / n_mine, sum(theirs.values()) / n_theirs
    print(f"Python opcodes an action: Boneyard {total_mine:,.0f}, anchor {total_theirs:,.0f}")
    table: list[tuple[str, Callable[[str], float]]] = [
        ("most opcodes an action (Boneyard, anchor):", lambda k: -per(mine, n_mine, k)),
        (
            "most more in Boneyard (difference, Boneyard, anchor):",
            lambda k: per(theirs, n_theirs, k) - per(mine, n_mine, k),
        ),
    ]
    keys = set(mine) | set(theirs)
    for title, order in table:
        print(title)
        for key in sorted(keys, key=order)[:top]:
            a, b = per(mine, n_mine, key), per(theirs, n_theirs, key)
            lead = f"{a - b:+7.0f} " if "difference" in title else ""
            print(f"  {lead}{a:7.0f} {b:7.0f}  {_where(key)[:100]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8, help="games at once (default %(default)s)")
    parser.add_argument(
        "--actions", type=int, default=1500, help="actions counted a round (default %(default)s)"
    )
    parser.add_argument(
        "--warmup", type=int, default=300, help="actions first, not counted (default %(default)s)"
    )
    parser.add_argument(
        "--idle",
        type=float,
        default=10.0,
        help="seconds the idle server is counted (default %(default)s)",
    )
    parser.add_argument(
        "--rounds", type=int, default=2, help="rounds of each system (default %(default)s)"
    )
    parser.add_argument(
        "--opcodes", action="store_true", help="count Python opcodes by function instead"
    )
    parser.add_argument(
        "--top", type=int, default=30, help="functions listed with --opcodes (default %(default)s)"
    )
    parser.add_argument(
        "--boneyard-server", metavar="PATH", help="another install's boneyard-server"
    )
    parser.add_argument("--seed", type=int, default=1)
    bench.add_event_loop_option(parser)
    args = parser.parse_args()
    bench.resolve_event_loop(parser, args)
    if not 1 <= args.games <= 128 or not 100 <= args.actions <= 100_000 or args.warmup < 0:
        parser.error("--games is 1 to 128, --actions 100 to 100000, --warmup not negative")
    if not 1 <= args.rounds <= 10 or not 1 <= args.idle <= 120 or not 1 <= args.top <= 500:
        parser.error("--rounds is 1 to 10, --idle 1 to 120 seconds, --top 1 to 500")
    if args.opcodes:
        counted = {s: asyncio.run(count_opcodes(s, args)) for s in SYSTEMS}
        print_opcodes(counted["boneyard"], counted["anchor"], args.top)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("bench_server_instructions: needs valgrind (Debian's package valgrind)")
    print(
        f"server instructions: texas42, {args.games} games at once, {args.actions} actions a "
        f"round after {args.warmup}, {args.rounds} round(s) of each system alternating, "
        f"callgrind (every thread of the server, the kernel's work not counted), idle "
        f"subtracted; both on {args.event_loop}'s event loop",
        flush=True,
    )
    results: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    for round_number in range(args.rounds):
        order = SYSTEMS if round_number % 2 == 0 else SYSTEMS[::-1]
        for system in order:
            per_action, idle, games = asyncio.run(count_instructions(system, args))
            results[system].append(per_action)
            print(
                f"  round {round_number + 1}/{args.rounds}, {system:9} {per_action / 1e6:.3f} M "
                f"instructions an action ({idle / 1e6:.3f} M idle subtracted, {games} games "
                f"set up)",
                flush=True,
            )
    mine, theirs = (statistics.median(results[s]) for s in SYSTEMS)
    print(
        f"server instructions: Boneyard {mine / 1e6:.3f} M an action, anchor "
        f"{theirs / 1e6:.3f} M, ratio {mine / theirs:.3f}"
    )


if __name__ == "__main__":
    main()
