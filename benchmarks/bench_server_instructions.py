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
(``--dump``): every thread of the server over those actions, each apart. Then, the load
stopped, the server's count while idle is read for ``--idle`` seconds and each thread's rate
subtracted over the window (Boneyard's background tasks run by the clock, which valgrind
stretches over each action). Each count is also given by part of the server: its event loop
(the main thread), its writer (the busiest other thread that runs SQLite) and the rest (gRPC's
threads, the workers').
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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Thread:
    """One thread's part of a dump: its instructions, and whether it ran SQLite's."""

    instructions: int
    runs_sqlite: bool


def _read_dump(path: Path) -> tuple[int, Thread] | None:
    """A thread's file of a dump (``--separate-threads``): (valgrind's number of the thread,
    its part); ``None`` while it is not written whole."""
    number = instructions = None
    runs_sqlite = False
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("thread:"):
            number = int(line.split()[1])
        elif line.startswith(("totals:", "summary:")):
            instructions = int(line.split()[1])
        elif line.startswith(("ob=", "cob=")) and "libsqlite3" in line:
            runs_sqlite = True
    if number is None or instructions is None:
        return None
    return number, Thread(instructions, runs_sqlite)


def _counted(folder: Path, before: set[Path]) -> dict[int, Thread]:
    """Each thread's part of the dump ``callgrind_control --dump`` just wrote (``before``: the
    files there were), by valgrind's number of the thread (1: the main thread, which runs
    both servers' event loop)."""
    deadline = time.monotonic() + SLOW
    seen: dict[Path, tuple[int, Thread]] = {}
    while time.monotonic() < deadline:
        new = set(folder.glob("callgrind.out*")) - before
        for path in new - set(seen):
            read = _read_dump(path)
            if read is not None:
                seen[path] = read
        if seen and len(seen) == len(new):
            time.sleep(1.0)  # (every thread's file is written at once: none is still to come)
            if set(folder.glob("callgrind.out*")) - before == new:
                return dict(seen.values())
        time.sleep(0.2)
    raise RuntimeError("callgrind wrote no count")


_PARTS = ("event loop", "writer", "other threads")


def _roles(threads: dict[int, Thread]) -> dict[int, str]:
    """Each thread's part of the server: the event loop (the main thread), the writer (the
    busiest other thread that runs SQLite), or the other threads (gRPC's, the workers')."""
    writers = [n for n, t in threads.items() if n != 1 and t.runs_sqlite]
    writer = max(writers, key=lambda n: threads[n].instructions, default=None)
    return {
        n: "event loop" if n == 1 else "writer" if n == writer else "other threads" for n in threads
    }


@dataclass(frozen=True)
class Count:
    """One round of one system: instructions an action, idle subtracted."""

    per_action: float
    parts: dict[str, float]
    """Of which each part of the server (``_roles``)."""
    idle: float
    games: int


async def count_instructions(system: str, args: argparse.Namespace) -> Count:
    """One round of ``system`` under callgrind: instructions an action with the idle rate
    subtracted (by part of the server), of which idle; games set up in the window."""
    with tempfile.TemporaryDirectory(prefix="bench-instr-") as tmp:
        folder = Path(tmp)
        wrapper = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={folder / 'callgrind.out'}",
            "--dump-instr=no",
            "--collect-jumps=no",
            "--separate-threads=yes",
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
            quiet = _counted(folder, before)
        finally:
            server.stop()
    # Each thread's idle rate over the window is subtracted from its own part (a thread
    # that ran only while idle, from the other threads').
    roles = _roles(busy)
    parts = dict.fromkeys(_PARTS, 0.0)
    for n, t in busy.items():
        parts[roles[n]] += t.instructions / actions
    idle = 0.0
    for n, t in quiet.items():
        rate = t.instructions / args.idle * seconds / actions
        parts[roles.get(n, "other threads")] -= rate
        idle += rate
    return Count(sum(parts.values()), parts, idle, games)


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
    results: dict[str, list[Count]] = {s: [] for s in SYSTEMS}
    for round_number in range(args.rounds):
        order = SYSTEMS if round_number % 2 == 0 else SYSTEMS[::-1]
        for system in order:
            count = asyncio.run(count_instructions(system, args))
            results[system].append(count)
            parts = ", ".join(f"{part} {count.parts[part] / 1e6:.3f}" for part in _PARTS)
            print(
                f"  round {round_number + 1}/{args.rounds}, {system:9} "
                f"{count.per_action / 1e6:.3f} M instructions an action ({parts}; "
                f"{count.idle / 1e6:.3f} M idle subtracted, {count.games} games set up)",
                flush=True,
            )
    median = statistics.median
    print("medians by part of the server (M instructions an action: Boneyard, anchor, ratio):")
    for part in _PARTS:
        mine, theirs = (median(c.parts[part] for c in results[s]) for s in SYSTEMS)
        ratio = f"{mine / theirs:.3f}" if theirs else "-"
        print(f"  {part:14} {mine / 1e6:.3f} {theirs / 1e6:.3f}  {ratio}")
    mine, theirs = (median(c.per_action for c in results[s]) for s in SYSTEMS)
    print(
        f"server instructions: Boneyard {mine / 1e6:.3f} M an action, anchor "
        f"{theirs / 1e6:.3f} M, ratio {mine / theirs:.3f}"
    )


if __name__ == "__main__":
    main()
