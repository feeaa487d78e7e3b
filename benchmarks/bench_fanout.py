"""Fan-out: from an acknowledged action to its arrival on the WatchGame streams of its game.

    make bench-fanout    # last line: `fanout: 1000 streams, p99 X ms after the ack`

Starts ``boneyard-server`` on a temporary SQLite file, creates a game, takes its seats, and
opens ``--streams`` spectator WatchGame streams (no token, ``from_version`` = the game's version)
over ``--channels`` channels (each its own connection) from this one asyncio process. Then it
plays ``--actions`` random legal actions one at a time: the time of an action is when its
SubmitAction returns (t_ack); each stream's arrival is when it receives the message of the
version that answer gave (the last event the action made). latency = arrival - t_ack, over
every (action, stream) pair, as measured: a stream may see the event before its actor sees the
answer, so a latency may be negative. The first ``--warmup-actions`` actions (which also show
that every stream is live) are not counted; a game that ends is replaced by a new one with new
streams. It does so ``--rounds`` times (5 by default) with the systems' order swapped every
round (the one that runs first on a machine has a few percent of an edge) and a fresh server
and database each time, and compares the medians: one round's p99 is a handful of actions'
slowest arrivals, and moves by a third from one run to the next.

With ``--database-url postgresql+psycopg://...`` (or env ``BONEYARD_BENCH_PG_URL``) it then
runs two server processes on one fresh database of that PostgreSQL server: the actions go to
process A, ``--cross-streams`` watchers to process B, and it prints
``fanout across processes: p99 X ms``. Without a URL that part is skipped (and says so).
Client and server share this machine's CPUs; a Python client reading 1,000 streams adds its
own delay to the later arrivals (its CPU per action is printed). Speed is never a pass/fail.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from bench_server import (
    Server,
    StartError,
    add_event_loop_option,
    fresh_pg_database,
    is_postgres,
    quantile,
    resolve_event_loop,
    start_anchor,
    start_boneyard,
)

from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc, rules_pb2, view_pb2

RPC_TIMEOUT = 30.0
ARRIVAL_TIMEOUT = 10.0
"""How long an action waits for every stream to receive it before it is counted as missing."""
LIVE_TIMEOUT = 60.0
MAX_GAMES = 50
MAX_ROUNDS = 20
WATCH_METHOD = "/boneyard.v1.GameService/WatchGame"


class Failed(Exception):
    """The benchmark could not measure (the streams never came alive, ...)."""


def version_of(message: bytes) -> int:
    """Field 2 (``version``) of a serialized ``WatchGameResponse``, without parsing the rest."""
    i, n = 0, len(message)
    while i < n:
        key, i = _varint(message, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(message, i)
            if number == 2:
                return value
        elif wire == 2:
            length, i = _varint(message, i)
            i += length
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"unexpected wire type {wire}")
    return 0


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


@dataclass
class Watchers:
    """Arrival times by version, over every stream of one game."""

    count: int
    arrivals: defaultdict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    target: int = 0
    complete: asyncio.Event = field(default_factory=asyncio.Event)
    errors: dict[str, int] = field(default_factory=dict)

    def arrived(self, version: int, at: float) -> None:
        times = self.arrivals[version]
        times.append(at)
        if version == self.target and len(times) >= self.count:
            self.complete.set()

    async def until(self, version: int, timeout: float) -> bool:
        """Whether every stream has received ``version`` within ``timeout``."""
        self.target = version
        self.complete.clear()
        if len(self.arrivals[version]) >= self.count:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.complete.wait(), timeout)
        return len(self.arrivals[version]) >= self.count


async def follow(call: grpc.aio.UnaryStreamCall, watchers: Watchers) -> None:
    clock = time.perf_counter
    try:
        async for raw in call:
            watchers.arrived(version_of(raw), clock())
    except grpc.RpcError as e:
        code = e.code() if isinstance(e, grpc.aio.AioRpcError) else None
        if code is not grpc.StatusCode.CANCELLED:
            name = code.name if code is not None else "?"
            watchers.errors[name] = watchers.errors.get(name, 0) + 1


@dataclass
class Figures:
    latencies: list[float] = field(default_factory=list)
    """Seconds from an ack to an arrival, every (action, stream) pair."""
    last: list[float] = field(default_factory=list)
    """Seconds from an ack to its arrival on the last stream, every action."""
    first_event: list[float] = field(default_factory=list)
    """Seconds from an ack to the arrival of the action's first event (the move itself, before
    the trick, the hand's score or the next deal it may cause), every (action, stream) pair."""
    actions: int = 0
    missing: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    client_cpu: float = 0.0
    server_cpu: float = 0.0
    """CPU seconds of the server process(es) over the run (set-up and warm-up included)."""


async def _seat_all(
    stub: game_service_pb2_grpc.GameServiceStub, preset: str
) -> tuple[str, list[tuple[tuple[str, str]]], view_pb2.SeatView]:
    """A new game with every seat taken: its id, the seats' metadata, its public view."""
    created = await stub.CreateGame(
        game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset=preset)),
        timeout=RPC_TIMEOUT,
    )
    seats = []
    for seat in range(created.game.rules.players):
        seated = await stub.TakeSeat(
            game_service_pb2.TakeSeatRequest(
                game_id=created.game_id, seat=seat, player_name=f"fanout{seat}"
            ),
            timeout=RPC_TIMEOUT,
        )
        seats.append((("authorization", f"Bearer {seated.seat_token}"),))
    public = await stub.GetView(
        game_service_pb2.GetViewRequest(game_id=created.game_id), timeout=RPC_TIMEOUT
    )
    return created.game_id, seats, public.view


async def fanout(
    actor: str,
    watched: str,
    streams: int,
    args: argparse.Namespace,
    servers: Sequence[Server] = (),
) -> Figures:
    """Play ``args.actions`` counted actions on the server at ``actor`` with ``streams``
    watchers on the server at ``watched`` (the same address, or another process); the CPU of
    ``servers`` is measured over it."""
    options = [("grpc.use_local_subchannel_pool", 1)]  # each channel its own connection
    act_channel = grpc.aio.insecure_channel(actor)
    channels = [grpc.aio.insecure_channel(watched, options=options) for _ in range(args.channels)]
    figures = Figures()
    rng = random.Random(args.seed)
    try:
        for channel in (act_channel, *channels):
            await asyncio.wait_for(channel.channel_ready(), timeout=30)
        stub = game_service_pb2_grpc.GameServiceStub(act_channel)
        watch = [
            c.unary_stream(
                WATCH_METHOD,
                request_serializer=game_service_pb2.WatchGameRequest.SerializeToString,
                response_deserializer=None,  # raw bytes: version_of reads the one field needed
            )
            for c in channels
        ]
        cpu_start = time.process_time()
        server_start = sum(s.cpu_seconds() for s in servers)
        games = 0
        while figures.actions < args.actions and games < MAX_GAMES:
            games += 1
            await _one_game(stub, watch, streams, args, rng, figures)
        figures.client_cpu = time.process_time() - cpu_start
        figures.server_cpu = sum(s.cpu_seconds() for s in servers) - server_start
    finally:
        for channel in (act_channel, *channels):
            await channel.close()
    return figures


async def _one_game(
    stub: game_service_pb2_grpc.GameServiceStub,
    watch: list[grpc.aio.UnaryStreamMultiCallable],
    streams: int,
    args: argparse.Namespace,
    rng: random.Random,
    figures: Figures,
) -> None:
    game_id, seats, public = await _seat_all(stub, args.preset)
    if not public.HasField("turn"):
        raise Failed(f"a new game with nobody to act (phase {public.phase})")
    turn = public.turn
    watchers = Watchers(streams)
    request = game_service_pb2.WatchGameRequest(game_id=game_id, from_version=public.version)
    calls = [watch[i % len(watch)](request) for i in range(streams)]
    readers = [asyncio.create_task(follow(call, watchers)) for call in calls]
    try:
        played = 0
        while figures.actions < args.actions:
            seen = await stub.GetView(
                game_service_pb2.GetViewRequest(game_id=game_id),
                metadata=seats[turn],
                timeout=RPC_TIMEOUT,
            )
            view = seen.view
            answer = await stub.SubmitAction(
                game_service_pb2.SubmitActionRequest(
                    game_id=game_id,
                    expected_version=view.version,
                    request_id=str(uuid.uuid4()),
                    action=rng.choice(view.legal_actions),
                ),
                metadata=seats[turn],
                timeout=RPC_TIMEOUT,
            )
            acked = time.perf_counter()
            warmup = played < args.warmup_actions
            wait = LIVE_TIMEOUT if warmup else ARRIVAL_TIMEOUT
            complete = await watchers.until(answer.version, wait)
            played += 1
            if warmup:
                if not complete:
                    got = len(watchers.arrivals[answer.version])
                    raise Failed(
                        f"only {got} of {streams} streams received a warm-up action in "
                        f"{LIVE_TIMEOUT:g} s; stream errors: {watchers.errors}"
                    )
            else:
                times = watchers.arrivals[answer.version]
                figures.actions += 1
                figures.latencies.extend(t - acked for t in times)
                first = watchers.arrivals[view.version + 1]
                figures.first_event.extend(t - acked for t in first)
                figures.missing += streams - len(times)
                if complete:
                    figures.last.append(max(times) - acked)
            if answer.view.phase == view_pb2.PHASE_GAME_OVER:
                break
            turn = answer.view.turn
    finally:
        for call in calls:
            call.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        for name, n in watchers.errors.items():
            figures.errors[name] = figures.errors.get(name, 0) + n


def report(title: str, figures: Figures, streams: int) -> float:
    """Print the figures; return the p99 in ms."""
    ms = [x * 1000 for x in figures.latencies]
    p99 = quantile(ms, 0.99)
    print(f"{title}: {figures.actions} actions x {streams} streams = {len(ms)} arrivals")
    print(
        f"  ack -> arrival: p50 {quantile(ms, 0.5):.2f} ms, p99 {p99:.2f} ms, "
        f"max {max(ms, default=float('nan')):.2f} ms, min {min(ms, default=float('nan')):.2f} ms"
    )
    last = [x * 1000 for x in figures.last]
    print(
        f"  ack -> the last stream: p50 {quantile(last, 0.5):.2f} ms, "
        f"p99 {quantile(last, 0.99):.2f} ms"
    )
    first = [x * 1000 for x in figures.first_event]
    print(
        f"  ack -> the action's first event (of {len(first)}): p50 {quantile(first, 0.5):.2f} "
        f"ms, p99 {quantile(first, 0.99):.2f} ms"
    )
    if figures.actions:
        print(f"  client CPU {figures.client_cpu * 1000 / figures.actions:.1f} ms per action")
    if figures.actions and figures.server_cpu:
        arrivals = len(figures.latencies)
        print(
            f"  server CPU {figures.server_cpu * 1000 / figures.actions:.2f} ms per action "
            f"(set-up and warm-up included), "
            f"{figures.server_cpu * 1e6 / max(arrivals, 1):.1f} us per arrival"
        )
    if figures.missing or figures.errors:
        print(
            f"  missing arrivals (not within {ARRIVAL_TIMEOUT:g} s): {figures.missing}; "
            f"stream errors: {figures.errors}"
        )
    return p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000, help="watchers (default %(default)s)")
    parser.add_argument(
        "--channels", type=int, default=10, help="channels they share (default %(default)s)"
    )
    parser.add_argument(
        "--actions", type=int, default=100, help="counted actions (default %(default)s)"
    )
    parser.add_argument(
        "--warmup-actions", type=int, default=2, help="uncounted first (default %(default)s)"
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BONEYARD_BENCH_PG_URL"),
        help="PostgreSQL server for the two-process part: postgresql+psycopg://USER@HOST:PORT/DB "
        "(a fresh database is made on it, then dropped; env BONEYARD_BENCH_PG_URL)",
    )
    parser.add_argument(
        "--cross-streams",
        type=int,
        default=100,
        help="watchers on the other process (default %(default)s)",
    )
    parser.add_argument("--preset", default="texas42", help="game preset (default %(default)s)")
    parser.add_argument(
        "--boneyard-server",
        metavar="PATH",
        help="the boneyard-server to run (default: this venv's)",
    )
    parser.add_argument(
        "--systems",
        default="boneyard,anchor",
        help="servers to measure in one process, comma-separated (default %(default)s): the "
        "anchor, benchmarks/anchor_server.py, makes each spectator message once for all streams",
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="rounds of the one-process part, the systems' order swapped each (default "
        "%(default)s; the figures compared are the medians)",
    )
    add_event_loop_option(parser)
    args = parser.parse_args()
    resolve_event_loop(parser, args)
    if min(args.streams, args.channels, args.actions, args.cross_streams, args.rounds) < 1:
        parser.error(
            "--streams, --channels, --actions, --cross-streams and --rounds must be at least 1"
        )
    if args.rounds > MAX_ROUNDS:
        parser.error(f"--rounds is at most {MAX_ROUNDS}")
    if args.warmup_actions < 1:
        parser.error("--warmup-actions must be at least 1 (it shows that the streams are live)")
    systems = [s for s in args.systems.split(",") if s]
    if not systems or set(systems) - {"boneyard", "anchor"}:
        parser.error("--systems is a comma-separated list of boneyard and anchor")
    if args.database_url and not is_postgres(args.database_url):
        parser.error("--database-url is a PostgreSQL URL (the one-process part uses SQLite)")

    print(
        f"fan-out benchmark: {args.preset}, spectator WatchGame streams over {args.channels} "
        f"channels from one asyncio process, loopback, {os.cpu_count()} CPUs shared by client "
        f"and server, both servers on {args.event_loop}'s event loop; latency = arrival of the "
        "acked version on a stream - SubmitAction's return",
        flush=True,
    )
    rounds: dict[str, list[Measured | None]] = {system: [] for system in systems}
    cross_p99 = None
    try:
        with tempfile.TemporaryDirectory(prefix="bench-fanout-") as tmp:
            for number in range(args.rounds):
                # The order swapped every round: neither system always runs first.
                for system in systems if number % 2 == 0 else systems[::-1]:
                    where = Path(tmp) / f"round-{number + 1}-{system}"
                    where.mkdir()
                    label = f"round {number + 1}/{args.rounds}: " if args.rounds > 1 else ""
                    rounds[system].append(_one_process(system, args, where, label))
            if args.database_url and "boneyard" in systems:
                cross_p99 = _across(args, Path(tmp))
    except StartError as e:
        sys.exit(f"bench_fanout: {e}")
    p99 = {system: _median_p99(measured) for system, measured in rounds.items()}
    if args.rounds > 1:
        _say_medians(rounds)
    bone, anchor = p99.get("boneyard"), p99.get("anchor")
    if bone is not None and anchor:
        medians = " (medians)" if args.rounds > 1 else ""
        print(
            f"Boneyard's p99 / the anchor's{medians}: {bone:.1f} / {anchor:.1f} ms = "
            f"{bone / anchor:.2f} (the anchor shows how soon this client can see "
            f"{args.streams} streams at all)"
        )
    if args.database_url is None:
        print(
            "fanout across processes: skipped (give --database-url postgresql+psycopg://... or "
            "BONEYARD_BENCH_PG_URL)"
        )
    elif "boneyard" in systems:
        figure = f"p99 {cross_p99:.1f} ms" if cross_p99 is not None else "failed (see above)"
        print(f"fanout across processes: {figure}")
    if "boneyard" in p99:
        figure = f"p99 {bone:.1f} ms after the ack" if bone is not None else "failed (see above)"
        print(f"fanout: {args.streams} streams, {figure}")


@dataclass(frozen=True)
class Measured:
    """What one round of one system gave."""

    p99_ms: float
    server_cpu_us: float
    """Server CPU per arrival (set-up and warm-up included)."""


def _median_p99(rounds: list[Measured | None]) -> float | None:
    """The median of the rounds' p99s; ``None`` if any round failed (said above)."""
    if not rounds or any(measured is None for measured in rounds):
        return None
    return statistics.median(measured.p99_ms for measured in rounds if measured is not None)


def _say_medians(rounds: dict[str, list[Measured | None]]) -> None:
    for system, measured in rounds.items():
        done = [m for m in measured if m is not None]
        if not done:
            continue
        p99s = ", ".join(f"{m.p99_ms:.1f}" for m in done)
        median = statistics.median(m.p99_ms for m in done)
        cpu = statistics.median(m.server_cpu_us for m in done)
        print(
            f"{system}: p99 by round {p99s} ms, median {median:.1f} ms; server CPU {cpu:.1f} us "
            "an arrival (median)"
        )
    bone, anchor = rounds.get("boneyard"), rounds.get("anchor")
    if bone and anchor:
        ratios = ", ".join(
            f"{b.p99_ms / a.p99_ms:.2f}" if a and b else "-"
            for b, a in zip(bone, anchor, strict=True)
        )
        print(f"Boneyard's p99 / the anchor's, round by round: {ratios}")


def _one_process(
    system: str, args: argparse.Namespace, tmp: Path, label: str = ""
) -> Measured | None:
    """One server process on a fresh SQLite file, ``--streams`` watchers."""
    if system == "anchor":
        server = start_anchor(tmp / "anchor.db", tmp / "anchor.log", args.event_loop)
        title = f"{label}the anchor (benchmarks/anchor_server.py, SQLite), {args.streams} streams"
    else:
        url = f"sqlite:///{tmp / 'fanout.db'}"
        server = start_boneyard(url, tmp / "server.log", args.boneyard_server, args.event_loop)
        title = f"{label}Boneyard, one process (SQLite), {args.streams} streams"
    try:
        figures = asyncio.run(
            fanout(server.address, server.address, args.streams, args, [server])
        )
    except (Failed, grpc.RpcError) as e:
        print(f"{title}: failed: {_reason(e)}")
        return None
    finally:
        server.stop()
        _say_problems([server])
    p99 = report(title, figures, args.streams)
    arrivals = max(len(figures.latencies), 1)
    return Measured(p99, figures.server_cpu * 1e6 / arrivals)


def _reason(error: Exception) -> str:
    if isinstance(error, grpc.aio.AioRpcError):
        return f"{error.code().name}: {error.details()}"
    return str(error)


def _across(args: argparse.Namespace, tmp: Path) -> float | None:
    """Two processes on one fresh PostgreSQL database: act on A, watch on B."""
    title = f"two processes (PostgreSQL), act on A, {args.cross_streams} streams on B"
    with fresh_pg_database(args.database_url, "boneyard_fanout") as url:
        servers: list[Server] = []
        try:
            for name in ("a", "b"):  # one after the other: the first one migrates
                log_path = tmp / f"server-{name}.log"
                servers.append(
                    start_boneyard(url, log_path, args.boneyard_server, args.event_loop)
                )
            a, b = servers
            figures = asyncio.run(fanout(a.address, b.address, args.cross_streams, args, [a, b]))
        except (Failed, grpc.RpcError) as e:
            print(f"{title}: failed: {_reason(e)}")
            return None
        finally:
            for s in servers:
                s.stop()
            _say_problems(servers)
    return report(title, figures, args.cross_streams)


def _say_problems(servers: list[Server]) -> None:
    for s in servers:
        problems = s.problems()
        if problems:
            print(f"  server log ({s.log_path.name}) has {len(problems)} ERROR line(s):")
            print("  " + (s.first_traceback() or problems[0]).replace("\n", "\n  "))


if __name__ == "__main__":
    main()
