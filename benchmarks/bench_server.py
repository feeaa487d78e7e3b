"""Server speed: actions per second through gRPC, against a no-op RPC on the same server.

Starts its own ``boneyard-server`` subprocess on 127.0.0.1 (a temporary SQLite file unless
``--database-url`` names another database), then, with ``--concurrency`` games at once over
one grpc.aio channel, plays random games: the seat to act asks for its view (GetView with its
token) and submits a random one of its legal actions (SubmitAction); a finished game is
replaced by a new one. Play stops after ``--duration`` seconds or ``--max-actions`` actions.
Then the same number of concurrent callers send the standard health ``Check`` (the cheapest
RPC the server has: no database, no engine) for ``--noop-duration`` seconds.

    make bench-server      # last line: `server: N actions/s, ratio R to no-op`

R = no-op throughput / action throughput: how many no-op RPCs the server answers in the time
it takes to carry out one action (its GetView and its SubmitAction). R near 2 would mean an
action costs no more than the two RPCs it needs; the rest is the engine and the database.
Client and server share this machine's CPUs, so the figures are for comparing runs here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from boneyard.v1 import game_service_pb2, game_service_pb2_grpc, rules_pb2, view_pb2

LISTENING = re.compile(r"^boneyard-server listening on (\S+):(\d+)$", re.MULTILINE)
RPC_TIMEOUT = 30.0


@dataclass
class Calls:
    """Latencies (seconds) of one kind of call, and its errors."""

    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, code: grpc.StatusCode | None) -> None:
        name = code.name if code is not None else "?"
        self.errors[name] = self.errors.get(name, 0) + 1

    def quantile(self, q: float) -> float:
        values = sorted(self.latencies)
        if not values:
            return float("nan")
        return values[min(len(values) - 1, int(q * len(values)))]


# --- the server process -------------------------------------------------------------


def server_binary() -> str:
    beside = Path(sys.executable).parent / "boneyard-server"
    if beside.exists():
        return str(beside)
    found = shutil.which("boneyard-server")
    if not found:
        sys.exit("bench_server: boneyard-server is not installed (make setup)")
    return found


def start_server(database_url: str, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BONEYARD_")}
    env["PYTHONUNBUFFERED"] = "1"
    env["BONEYARD_LOG_LEVEL"] = "WARNING"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [server_binary(), "--database-url", database_url, "--listen", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + 60
    while True:
        match = LISTENING.search(log_path.read_text(errors="replace"))
        if match:
            return proc, f"{match[1]}:{match[2]}"
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_server(proc)
            sys.exit(
                "bench_server: boneyard-server did not start:\n"
                + log_path.read_text(errors="replace")
            )
        time.sleep(0.05)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- load ---------------------------------------------------------------------------


@dataclass
class Play:
    submit: Calls = field(default_factory=Calls)
    view: Calls = field(default_factory=Calls)
    actions: int = 0
    games_finished: int = 0
    games_started: int = 0
    setup_errors: int = 0


def _bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


async def play_games(
    stub: game_service_pb2_grpc.GameServiceStub,
    preset: str,
    rng: random.Random,
    play: Play,
    stop_at: float,
    max_actions: int,
) -> None:
    """Play random games one after the other until the time or the action budget is spent."""
    while time.perf_counter() < stop_at and play.actions < max_actions:
        try:
            created = await stub.CreateGame(
                game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset=preset)),
                timeout=RPC_TIMEOUT,
            )
            game_id = created.game_id
            tokens = []
            for seat in range(created.game.rules.players):
                seated = await stub.TakeSeat(
                    game_service_pb2.TakeSeatRequest(
                        game_id=game_id, seat=seat, player_name=f"bench{seat}"
                    ),
                    timeout=RPC_TIMEOUT,
                )
                tokens.append(seated.seat_token)
            public = await stub.GetView(
                game_service_pb2.GetViewRequest(game_id=game_id), timeout=RPC_TIMEOUT
            )
        except grpc.RpcError:
            play.setup_errors += 1
            await asyncio.sleep(0.1)
            continue
        play.games_started += 1
        turn = public.view.turn
        while time.perf_counter() < stop_at and play.actions < max_actions:
            started = time.perf_counter()
            try:
                seen = await stub.GetView(
                    game_service_pb2.GetViewRequest(game_id=game_id),
                    metadata=_bearer(tokens[turn]),
                    timeout=RPC_TIMEOUT,
                )
            except grpc.RpcError as e:
                play.view.error(e.code())
                break
            play.view.latencies.append(time.perf_counter() - started)
            view = seen.view
            request = game_service_pb2.SubmitActionRequest(
                game_id=game_id,
                expected_version=view.version,
                request_id=str(uuid.uuid4()),
                action=rng.choice(view.legal_actions),
            )
            started = time.perf_counter()
            try:
                answer = await stub.SubmitAction(
                    request, metadata=_bearer(tokens[turn]), timeout=RPC_TIMEOUT
                )
            except grpc.RpcError as e:
                play.submit.error(e.code())
                break  # one actor per game: any error is worth a look; start another game
            play.submit.latencies.append(time.perf_counter() - started)
            play.actions += 1
            if answer.view.phase == view_pb2.PHASE_GAME_OVER:
                play.games_finished += 1
                break
            turn = answer.view.turn


async def call_noop(health: health_pb2_grpc.HealthStub, calls: Calls, stop_at: float) -> None:
    request = health_pb2.HealthCheckRequest(service="")
    while time.perf_counter() < stop_at:
        started = time.perf_counter()
        try:
            await health.Check(request, timeout=RPC_TIMEOUT)
        except grpc.RpcError as e:
            calls.error(e.code())
            continue
        calls.latencies.append(time.perf_counter() - started)


async def run(args: argparse.Namespace, address: str) -> tuple[Play, float, Calls, float]:
    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), timeout=30)
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)

        # Warm up: connections, the server's thread pool and caches, the client's stubs.
        warm = Play()
        stop = time.perf_counter() + args.warmup
        await asyncio.gather(
            *(
                play_games(stub, args.preset, random.Random(-i), warm, stop, 10**9)
                for i in range(args.concurrency)
            ),
            *(call_noop(health, Calls(), stop) for _ in range(args.concurrency)),
        )

        play = Play()
        started = time.perf_counter()
        stop = started + args.duration
        await asyncio.gather(
            *(
                play_games(
                    stub, args.preset, random.Random(args.seed + i), play, stop, args.max_actions
                )
                for i in range(args.concurrency)
            )
        )
        play_seconds = time.perf_counter() - started

        noop = Calls()
        started = time.perf_counter()
        stop = started + args.noop_duration
        await asyncio.gather(*(call_noop(health, noop, stop) for _ in range(args.concurrency)))
        noop_seconds = time.perf_counter() - started
    return play, play_seconds, noop, noop_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url",
        help="database of the server started here (default: a new SQLite file in a temporary "
        "directory); an empty PostgreSQL database works too",
    )
    parser.add_argument("--preset", default="texas42", help="game preset (default %(default)s)")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=16,
        help="games (and no-op callers) at once (default %(default)s)",
    )
    parser.add_argument(
        "--duration", type=float, default=20.0, help="seconds of play (default %(default)s)"
    )
    parser.add_argument(
        "--max-actions",
        type=int,
        default=200_000,
        help="stop play after this many actions (default %(default)s)",
    )
    parser.add_argument(
        "--noop-duration",
        type=float,
        default=8.0,
        help="seconds of no-op calls (default %(default)s)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=2.0,
        help="seconds of warm-up, not counted (default %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        database_url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        log_path = Path(tmp) / "server.log"
        proc, address = start_server(database_url, log_path)
        try:
            play, play_seconds, noop, noop_seconds = asyncio.run(run(args, address))
        finally:
            stop_server(proc)
            problems = [
                line
                for line in log_path.read_text(errors="replace").splitlines()
                if "ERROR" in line or "Traceback" in line
            ]
        db = "temporary SQLite file" if not args.database_url else args.database_url
        print(
            f"server benchmark: {args.preset}, {args.concurrency} concurrent games and "
            f"callers over one channel, {db}, loopback, {os.cpu_count()} CPUs shared by client "
            "and server"
        )
        if problems:
            print(f"  server log has {len(problems)} error line(s), first: {problems[0]}")

    action_rate = play.actions / play_seconds
    noop_rate = len(noop.latencies) / noop_seconds
    rows = [
        ("SubmitAction", play.submit, play_seconds),
        ("GetView (seat)", play.view, play_seconds),
        ("Health.Check (no-op)", noop, noop_seconds),
    ]
    print(
        f"  {'call':<22}{'calls':>9}{'seconds':>9}{'calls/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'errors':>8}"
    )
    for name, calls, seconds in rows:
        print(
            f"  {name:<22}{len(calls.latencies):>9}{seconds:>9.1f}"
            f"{len(calls.latencies) / seconds:>10.0f}{calls.quantile(0.5) * 1000:>9.2f}"
            f"{calls.quantile(0.99) * 1000:>9.2f}{sum(calls.errors.values()):>8}"
        )
    for name, calls, _ in rows:
        if calls.errors:
            print(f"  {name} errors: {calls.errors}")
    if play.setup_errors:
        print(f"  game setup errors: {play.setup_errors}")
    print(
        f"  games: {play.games_started} started, {play.games_finished} finished; "
        f"an action = GetView + SubmitAction ({play.actions} actions)"
    )
    print(
        f"  SubmitAction latency: p50 {play.submit.quantile(0.5) * 1000:.2f} ms, "
        f"p99 {play.submit.quantile(0.99) * 1000:.2f} ms"
    )
    print(
        f"  no-op (health Check) latency: p50 {noop.quantile(0.5) * 1000:.2f} ms, "
        f"p99 {noop.quantile(0.99) * 1000:.2f} ms"
    )
    ratio = noop_rate / action_rate if action_rate else float("inf")
    print(
        f"  R = no-op throughput / action throughput = {noop_rate:.0f} / {action_rate:.0f}: "
        "no-op RPCs answered in the time of one action"
    )
    print(f"server: {action_rate:.0f} actions/s, ratio {ratio:.1f} to no-op")


if __name__ == "__main__":
    main()
