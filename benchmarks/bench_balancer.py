"""Several server processes behind HAProxy: actions/s with 1, 2 and 3 processes on one
PostgreSQL database, and what a game's calls cost when they land on a process whose copy of the
game is behind, with the game header's consistent hash (affinity) and without it (round robin).

    make bench-balancer BENCH_BALANCER_ARGS='--database-url postgresql+psycopg://USER@HOST/DB'
    # last line: `balancer: 1/2/3 processes N1/N2/N3 actions/s (...x one process); per 10,000
    # actions, stale answers / games read back with affinity 1: A/L, ...; round robin 2: ...`

HAProxy (Debian's ``haproxy``) runs from ``docs/haproxy.cfg`` (``tests/server/
balancer_helpers.py`` puts the processes' ports in), the same file the CI test runs; "round
robin" is that file with ``balance roundrobin`` in place of the hash. Each trial: a fresh
database of the PostgreSQL server, N ``boneyard-server`` processes (gRPC port and HTTP
listener, which HAProxy health-checks), HAProxy, and the load of ``bench_server.py`` through
HAProxy's gRPC front from one asyncio process and one channel: G concurrent games (default 32),
the seat to act reads its view (GetView) and submits a random legal action (SubmitAction),
every call naming its game in the ``boneyard-game`` header as the shipped clients do; a
finished game is replaced (CreateGame and four TakeSeat). A warm-up not counted, then
``--duration`` seconds measured.

A call that lands on a process whose copy of the game is behind the log is answered correctly
but costs a retry, and is counted: a *stale view* (GetView answers an older version than the
client's last acknowledgement: a copy the other process's NOTIFY has not yet dropped) and an
*ABORTED* SubmitAction (``STALE_VERSION``: decided on such a view, refused by the log's version
check). Either way the player reads the view again and goes on. Figures are medians over
``--rounds`` rounds, the trials of a round in alternating order. The client, HAProxy and every
process share this machine's CPUs: the figures compare runs here, and nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import statistics
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from bench_server import (
    RPC_TIMEOUT,
    Server,
    StartError,
    cpu_seconds,
    fresh_pg_database,
    quantile,
    server_binary,
    start_process,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from boneyard.api.v1 import (
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
    view_pb2,
)
from tests.server.balancer_helpers import Balancer, Ports, find_haproxy
from tests.server.process_helpers import free_port

GAME_HEADER = "boneyard-game"
SETUP_TIMEOUT = 60.0
LOADED = re.compile(r"^boneyard_games_loaded_total (\S+)$", re.MULTILINE)


def games_loaded(metrics_urls: list[str]) -> float:
    """``boneyard_games_loaded_total`` summed over the processes."""
    total = 0.0
    for url in metrics_urls:
        with urllib.request.urlopen(url, timeout=30) as answer:
            found = LOADED.search(answer.read().decode())
        total += float(found[1]) if found else float("nan")
    return total


@dataclass
class Load:
    stop_at: float
    done: list[float] = field(default_factory=list)
    """When each action was acknowledged."""
    latencies: list[tuple[float, float]] = field(default_factory=list)
    """(acknowledged at, GetView + SubmitAction seconds, retries included)."""
    stale_views: list[float] = field(default_factory=list)
    aborted: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    playing: int = 0
    all_playing: asyncio.Event = field(default_factory=asyncio.Event)


def _code(error: grpc.RpcError) -> str:
    code = error.code() if isinstance(error, grpc.aio.AioRpcError) else None
    return code.name if code is not None else "?"


async def play_games(
    stub: game_service_pb2_grpc.GameServiceStub,
    preset: str,
    rng: random.Random,
    load: Load,
    games: int,
) -> None:
    """Random games one after the other until the time is up (``bench_server.play_games``,
    reading the view again after a stale answer instead of giving the game up)."""
    clock = time.perf_counter
    first = True
    while clock() < load.stop_at:
        try:
            created = await stub.CreateGame(
                game_service_pb2.CreateGameRequest(
                    rules=rules_pb2.Ruleset(preset=preset), request_id=str(uuid.uuid4())
                ),
                timeout=RPC_TIMEOUT,
            )
            game_id = created.game_id
            header = ((GAME_HEADER, game_id),)
            seats = []
            for seat in range(created.game.rules.players):
                seated = await stub.TakeSeat(
                    game_service_pb2.TakeSeatRequest(
                        game_id=game_id,
                        seat=seat,
                        player_name=f"b{seat}",
                        request_id=str(uuid.uuid4()),
                    ),
                    metadata=header,
                    timeout=RPC_TIMEOUT,
                )
                seats.append((("authorization", f"Bearer {seated.seat_token}"), *header))
            public = await stub.GetView(
                game_service_pb2.GetViewRequest(game_id=game_id),
                metadata=header,
                timeout=RPC_TIMEOUT,
            )
        except grpc.RpcError as e:
            load.errors[f"set-up {_code(e)}"] += 1
            await asyncio.sleep(0.1)
            continue
        if first:
            first = False
            load.playing += 1
            if load.playing == games:
                load.all_playing.set()
        turn, known = public.view.turn, public.view.version
        view_request = game_service_pb2.GetViewRequest(game_id=game_id)
        started = clock()
        while clock() < load.stop_at:
            try:
                view = (
                    await stub.GetView(view_request, metadata=seats[turn], timeout=RPC_TIMEOUT)
                ).view
                if view.version < known or not view.legal_actions:
                    load.stale_views.append(clock())
                    continue
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
            except grpc.RpcError as e:
                if _code(e) == "ABORTED":
                    load.aborted.append(clock())
                    continue
                load.errors[_code(e)] += 1
                break
            finished = clock()
            load.done.append(finished)
            load.latencies.append((finished, finished - started))
            started = finished
            known = answer.version
            if answer.view.phase == view_pb2.PHASE_GAME_OVER:
                break
            turn = answer.view.turn


@dataclass
class Result:
    label: str
    processes: int
    affinity: bool
    actions: int
    seconds: float
    p99: float
    stale_views: int
    aborted: int
    server_cpu: float
    balancer_cpu: float
    client_cpu: float
    loaded: float
    """Games the processes read back from their logs in the window."""
    errors: Counter[str]

    @property
    def rate(self) -> float:
        return self.actions / self.seconds if self.seconds else 0.0

    def per_action_ms(self, seconds: float) -> float:
        return seconds * 1000 / self.actions if self.actions else float("nan")

    @property
    def stale(self) -> int:
        return self.stale_views + self.aborted


Sample = tuple[float, float, float, float, float]
"""(time, the servers' CPU s, HAProxy's, the client's, games loaded)."""


async def measure(
    lb: Balancer, servers: list[Server], metrics: list[str], args: argparse.Namespace, label: str
) -> tuple[Load, Sample, Sample]:
    async with grpc.aio.insecure_channel(lb.grpc_address) as channel:
        await asyncio.wait_for(channel.channel_ready(), timeout=30)
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        latest = args.warmup + SETUP_TIMEOUT + args.duration
        load = Load(time.perf_counter() + latest)

        def sample() -> Sample:
            return (
                time.perf_counter(),
                sum(s.cpu_seconds() for s in servers),
                cpu_seconds(lb.proc.pid),
                time.process_time(),
                games_loaded(metrics),
            )

        async def window() -> tuple[Sample, Sample]:
            await asyncio.sleep(args.warmup)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(load.all_playing.wait(), SETUP_TIMEOUT)
            start = sample()
            load.stop_at = start[0] + args.duration
            await asyncio.sleep(args.duration)
            return start, sample()

        players = [
            play_games(stub, args.preset, random.Random(args.seed + i), load, args.games)
            for i in range(args.games)
        ]
        bound = latest + RPC_TIMEOUT + 30
        (start, end), *_ = await asyncio.wait_for(asyncio.gather(window(), *players), bound)
        if load.playing < args.games:
            load.errors[f"{label}: games not set up in the warm-up"] += args.games - load.playing
        return load, start, end


def trial(processes: int, affinity: bool, args: argparse.Namespace) -> Result:
    label = f"{processes} process{'es' if processes > 1 else ''}, " + (
        "affinity" if affinity else "round robin"
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-balancer-") as tmp,
        fresh_pg_database(args.database_url) as url,
        contextlib.ExitStack() as stack,
    ):
        servers: list[Server] = []
        stack.callback(lambda: [s.stop() for s in servers])
        ports_of: list[tuple[int, int]] = []
        metrics: list[str] = []
        for n in range(processes):  # one after the other: the first one migrates
            grpc_port, http_port, metrics_port = free_port(), free_port(), free_port()
            argv = [
                args.boneyard_server or server_binary(),
                "--database-url", url,
                "--listen", f"127.0.0.1:{grpc_port}",
                "--http-listen", f"127.0.0.1:{http_port}",
                "--metrics-listen", f"127.0.0.1:{metrics_port}",
                "--log-level", "WARNING",
            ]  # fmt: skip
            metrics.append(f"http://127.0.0.1:{metrics_port}/metrics")
            servers.append(start_process(argv, Path(tmp) / f"boneyard{n}.log"))
            ports_of.append((grpc_port, http_port))
        ports = Ports(free_port(), free_port(), free_port())
        lb = stack.enter_context(
            Balancer.start(
                Path(tmp) / "haproxy", ports_of, ports, affinity=affinity, binary=args.haproxy
            )
        )
        lb.wait_until(up=processes)
        load, start, end = asyncio.run(measure(lb, servers, metrics, args, label))
        problems = [line for s in servers for line in s.problems()]
        if problems:
            load.errors["server log ERROR lines"] += len(problems)

    def inside(times: list[float]) -> int:
        return sum(start[0] <= t <= end[0] for t in times)

    return Result(
        label=label,
        processes=processes,
        affinity=affinity,
        actions=inside(load.done),
        seconds=end[0] - start[0],
        p99=quantile([d for t, d in load.latencies if start[0] <= t <= end[0]], 0.99) * 1000,
        stale_views=inside(load.stale_views),
        aborted=inside(load.aborted),
        server_cpu=end[1] - start[1],
        balancer_cpu=end[2] - start[2],
        client_cpu=end[3] - start[3],
        loaded=end[4] - start[4],
        errors=load.errors,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BONEYARD_BENCH_PG_URL"),
        help="a PostgreSQL server (postgresql+psycopg://USER@HOST:PORT/DB; env "
        "BONEYARD_BENCH_PG_URL): each trial gets a fresh database of it",
    )
    parser.add_argument("--preset", default="texas42")
    parser.add_argument("--games", type=int, default=32, help="concurrent games (%(default)s)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds (default %(default)s)")
    parser.add_argument("--duration", type=float, default=10.0, help="measured s (%(default)s)")
    parser.add_argument("--warmup", type=float, default=3.0, help="uncounted s (%(default)s)")
    parser.add_argument(
        "--processes", default="1,2,3", help="process counts with affinity (%(default)s)"
    )
    parser.add_argument(
        "--round-robin", default="2,3", help="process counts without affinity (%(default)s)"
    )
    parser.add_argument("--haproxy", help="the haproxy binary (default: haproxy on PATH)")
    parser.add_argument("--boneyard-server", metavar="PATH")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    if not args.database_url or not args.database_url.startswith("postgresql"):
        parser.error("--database-url postgresql+psycopg://... (or BONEYARD_BENCH_PG_URL)")
    args.haproxy = args.haproxy or find_haproxy()
    if args.haproxy is None:
        sys.exit("bench_balancer: haproxy is not installed (apt-get install haproxy)")
    plan = [(int(n), True) for n in args.processes.split(",") if n] + [
        (int(n), False) for n in args.round_robin.split(",") if n
    ]
    print(
        f"balancer benchmark: {args.preset}, {args.games} concurrent games through HAProxy "
        f"(docs/haproxy.cfg) to N boneyard-server processes on one PostgreSQL; {args.rounds} "
        f"round(s) of {args.warmup:g} s warm-up + {args.duration:g} s measured per trial, "
        f"alternating; one asyncio client, one channel; {os.cpu_count()} CPUs shared by "
        f"client, HAProxy, servers and PostgreSQL",
        flush=True,
    )
    results: dict[tuple[int, bool], list[Result]] = {p: [] for p in plan}
    try:
        for n in range(args.rounds):
            for processes, affinity in plan if n % 2 == 0 else list(reversed(plan)):
                r = trial(processes, affinity, args)
                results[(processes, affinity)].append(r)
                errors = f", errors {dict(r.errors)}" if r.errors else ""
                print(
                    f"  round {n + 1}/{args.rounds} {r.label:<26}{r.rate:>7.0f} actions/s, "
                    f"p99 {r.p99:6.1f} ms, stale views {r.stale_views}, ABORTED {r.aborted}, "
                    f"games loaded {r.loaded:.0f}, "
                    f"server CPU {r.per_action_ms(r.server_cpu):.2f} ms/action{errors}",
                    flush=True,
                )
    except StartError as e:
        sys.exit(f"bench_balancer: {e}")

    med = statistics.median
    print(
        "medians over the rounds; stale/10k: stale views and ABORTED per 10,000 actions; "
        "loads/100: games read back from the log per 100 actions"
    )
    print(
        f"  {'trial':<26}{'actions/s':>10}{'p99 ms':>8}{'stale views':>12}{'ABORTED':>9}"
        f"{'stale/10k':>10}{'loads/100':>10}{'server':>9}{'haproxy':>9}{'client':>8}"
        "   CPU ms/action"
    )
    summary: dict[tuple[int, bool], tuple[float, float, float]] = {}
    for key, rs in results.items():
        rate = med(r.rate for r in rs)
        per10k = med(r.stale * 10_000 / r.actions if r.actions else float("nan") for r in rs)
        loads = med(r.loaded * 10_000 / r.actions if r.actions else float("nan") for r in rs)
        summary[key] = (rate, per10k, loads)
        print(
            f"  {rs[0].label:<26}{rate:>10.0f}{med(r.p99 for r in rs):>8.1f}"
            f"{sum(r.stale_views for r in rs):>12}{sum(r.aborted for r in rs):>9}{per10k:>10.1f}"
            f"{med(r.loaded * 100 / r.actions if r.actions else 0.0 for r in rs):>10.1f}"
            f"{med(r.per_action_ms(r.server_cpu) for r in rs):>9.2f}"
            f"{med(r.per_action_ms(r.balancer_cpu) for r in rs):>9.2f}"
            f"{med(r.per_action_ms(r.client_cpu) for r in rs):>8.2f}"
        )
    hashed = sorted(k for k in summary if k[1])
    unhashed = sorted(k for k in summary if not k[1])
    if hashed:
        one = summary.get((1, True), (0.0, 0.0, 0.0))[0]
        rates = "/".join(f"{summary[k][0]:.0f}" for k in hashed)
        names = "/".join(str(k[0]) for k in hashed)
        ratios = ", ".join(
            f"{k[0]}: {summary[k][0] / one:.2f}x" for k in hashed if one and k[0] > 1
        )
        print(
            f"balancer: {names} processes {rates} actions/s"
            + (f" ({ratios} one process)" if ratios else "")
            + "; per 10,000 actions, stale answers / games read back with affinity "
            + ", ".join(f"{k[0]}: {summary[k][1]:.0f}/{summary[k][2]:.0f}" for k in hashed)
            + (
                "; round robin "
                + ", ".join(f"{k[0]}: {summary[k][1]:.0f}/{summary[k][2]:.0f}" for k in unhashed)
                if unhashed
                else ""
            )
        )


if __name__ == "__main__":
    main()
