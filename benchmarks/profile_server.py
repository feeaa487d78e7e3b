"""Where a Boneyard server's CPU goes under ``bench_server``'s load: a sampling profile.

    make profile-server    # the tables of top functions, and the anchor's beside them

A fresh server (and the anchor, one after the other) on a fresh SQLite file takes
``bench_server``'s load (G games, GetView + SubmitAction of the seat to act; seat tokens, or
``--caller key`` for bot accounts' API keys) while ``py-spy`` samples it for ``--seconds``:
only the threads holding the GIL (``--gil``), i.e. the Python work that bounds one process.
Printed for each: actions/s and server CPU an action while sampled, then the functions with the
most samples of their own ("self") and the project's functions with the most samples under
them ("inclusive"), as shares of the samples; and the server's CPU an action by thread over
the sampled seconds (from /proc: the event loop's, the writer's, gRPC's own threads', the
worker threads'), which shows work the GIL samples do not: the writer's SQLite and the
kernel's time, gRPC's C core. ``--boneyard-server PATH`` profiles another install (another
commit's) the same way: the figures "before" and "after" a change.

py-spy (the ``bench`` extra) attaches to the running server (``--pid``) once the warm-up is
over, so the server's start and imports are not in the profile: it needs the right to read
another process's memory (root, or ``kernel.yama.ptrace_scope=0``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import bench_server as bench

PROJECT = re.compile(r"\((server|api|engine|records|bots|clients)/")
"""A frame of the project's own code (py-spy names files by their path under site-packages
or the source tree: the package directories)."""
LINE = re.compile(r":\d+\)$")


@dataclass
class Profile:
    system: str
    samples: int
    own: Counter[str]
    under: Counter[str]
    rate: float
    cpu_ms: float
    by_thread: dict[str, float]
    """CPU seconds of each kind of thread (``THREAD_KINDS``) over the sampled seconds."""
    actions: int
    """Actions over the sampled seconds, at the measured rate (they lie inside its window)."""


THREAD_KINDS = ("event loop", "writer", "gRPC core", "worker threads", "other")


def thread_kind(name: str) -> str:
    """What a thread of the server is, by its Python name (its kernel name for a native one)."""
    if name == "MainThread":
        return "event loop"
    if name.endswith("writer"):  # boneyard-writer; the anchor's "writer"
        return "writer"
    if name == "event_engine" or "_poll_wrapper" in name or name.startswith("grpc"):
        return "gRPC core"
    if name.startswith(("uvloop_", "asyncio_", "ThreadPoolExecutor")):
        return "worker threads"
    return "other"


def thread_times(pid: int) -> dict[str, tuple[str, float]]:
    """Each thread of ``pid``: its kernel name and CPU seconds so far (/proc/PID/task)."""
    found: dict[str, tuple[str, float]] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            text = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except FileNotFoundError:
            continue  # ended meanwhile
        name = text[text.index("(") + 1 : text.rindex(")")]
        found[tid] = (name, bench.stat_cpu_seconds(text))
    return found


PY_SPY_THREAD = re.compile(r'^Thread (\d+) \(\w+\): "([^"]*)"', re.MULTILINE)


def python_thread_names(pid: int) -> dict[str, str]:
    """The Python threads' names by thread id (``py-spy dump``); native threads are not in it."""
    told = subprocess.run(
        [py_spy(), "dump", "--pid", str(pid)], capture_output=True, text=True, check=False
    )
    return dict(PY_SPY_THREAD.findall(told.stdout))


def by_kind(
    before: dict[str, tuple[str, float]],
    after: dict[str, tuple[str, float]],
    names: dict[str, str],
) -> dict[str, float]:
    """CPU seconds between two ``thread_times`` of one process, summed by ``thread_kind``."""
    spent = dict.fromkeys(THREAD_KINDS, 0.0)
    for tid, (name, seconds) in after.items():
        earlier = before.get(tid, (name, 0.0))[1]
        spent[thread_kind(names.get(tid, name))] += seconds - earlier
    return spent


def read_raw(path: Path) -> tuple[int, Counter[str], Counter[str]]:
    """py-spy's raw (collapsed stacks) output: samples, self counts, inclusive counts."""
    own: Counter[str] = Counter()
    under: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [LINE.sub(")", f) for f in stack.split(";")]
        own[frames[-1]] += n
        for frame in set(frames):
            under[frame] += n
    return total, own, under


def py_spy() -> str:
    found = Path(sys.executable).parent / "py-spy"
    if found.exists():
        return str(found)
    which = shutil.which("py-spy")
    if not which:
        sys.exit("profile_server: py-spy is not installed (pip install -e '.[dev,bench]')")
    return which


def profile(system: str, args: argparse.Namespace) -> Profile:
    with tempfile.TemporaryDirectory(prefix="profile-server-") as tmp:
        tmpdir = Path(tmp)
        raw = tmpdir / "profile.txt"
        if system == "anchor":
            server = bench.start_anchor(tmpdir / "a.db", tmpdir / "server.log")
        else:
            url = f"sqlite:///{tmpdir / 'b.db'}"
            server = bench.start_boneyard(url, tmpdir / "server.log", args.boneyard_server)
        try:
            accounts = None
            if system == "boneyard-key":
                accounts = bench.make_bot_accounts(url, bench.PLAYERS_AT_MOST)
            load_args = argparse.Namespace(
                warmup=args.warmup,
                duration=args.seconds,
                max_actions=10**9,
                rate=0,  # unpaced: as fast as the server answers
                preset=args.preset,
                seed=args.seed,
            )

            async def sampled() -> tuple[bench.Result, dict[str, float], float]:
                measuring = asyncio.create_task(
                    bench.measure(system, [server], args.games, load_args, accounts)
                )
                # Past the warm-up (the server's start, its imports and the games' set-up are
                # not what is asked about), for the measured seconds.
                await asyncio.sleep(args.warmup + 1)
                pid = server.proc.pid
                before, began = thread_times(pid), time.perf_counter()
                spy = await asyncio.create_subprocess_exec(
                    py_spy(),
                    "record",
                    "--gil",
                    "--nonblocking",
                    "-r",
                    str(args.rate),
                    "-f",
                    "raw",
                    "-d",
                    str(max(1, int(args.seconds) - 2)),
                    "-o",
                    str(raw),
                    "--pid",
                    str(server.proc.pid),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                _, told = await spy.communicate()
                if spy.returncode != 0:
                    measuring.cancel()
                    sys.exit(
                        f"profile_server: py-spy failed (it needs the right to read "
                        f"another process: root, or kernel.yama.ptrace_scope=0):\n"
                        f"{told.decode(errors='replace')[-2000:]}"
                    )
                seconds = time.perf_counter() - began
                spent = by_kind(before, thread_times(pid), python_thread_names(pid))
                return await measuring, spent, seconds

            result, spent, seconds = asyncio.run(sampled())
        finally:
            server.stop()
        samples, own, under = read_raw(raw)
        return Profile(
            system,
            samples,
            own,
            under,
            result.rate,
            result.cpu_ms(result.server_cpu),
            spent,
            max(1, round(result.rate * seconds)),
        )


def print_profile(p: Profile, top: int) -> None:
    print(
        f"{p.system}: {p.rate:.0f} actions/s, server CPU {p.cpu_ms:.2f} ms an action, "
        f"{p.samples} samples holding the GIL"
    )
    print("  self (the function's own samples):")
    for frame, n in p.own.most_common(top):
        print(f"    {100 * n / p.samples:5.1f}%  {frame}")
    print("  inclusive, the project's functions (samples under them):")
    ours = Counter({f: n for f, n in p.under.items() if PROJECT.search(f)})
    for frame, n in ours.most_common(top):
        print(f"    {100 * n / p.samples:5.1f}%  {frame}")
    spent = ", ".join(
        f"{kind} {seconds / p.actions * 1e6:.0f}"
        for kind, seconds in p.by_thread.items()
        if seconds or kind != "other"
    )
    print(f"  CPU by thread while sampled (µs an action): {spent}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--systems",
        default="boneyard,anchor",
        help="comma-separated: boneyard, boneyard-key, anchor (default %(default)s)",
    )
    parser.add_argument("--games", type=int, default=bench.HEADLINE)
    parser.add_argument("--seconds", type=float, default=15.0, help="sampled seconds")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--rate", type=int, default=250, help="samples a second")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--preset", default="texas42")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--boneyard-server", metavar="PATH", help="another install's boneyard-server to profile"
    )
    args = parser.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    if not systems or set(systems) - set(bench.SYSTEMS):
        parser.error(f"--systems is a comma-separated list of {', '.join(bench.SYSTEMS)}")
    print(
        f"profile: {args.games} games of {args.preset}, {args.seconds:g} s sampled at "
        f"{args.rate}/s (py-spy --gil), one system after the other"
    )
    for system in systems:
        print_profile(profile(system, args), args.top)


if __name__ == "__main__":
    try:
        main()
    except (bench.StartError, subprocess.SubprocessError) as e:
        sys.exit(f"profile_server: {e}")
