"""Competition speed: a duplicate tournament played by account bots, one deal at a time and
many games at once; how fast tables form from seeks; how late the clock keeper applies a
timeout.

Starts its own ``boneyard-server`` subprocess on a temporary SQLite file, makes accounts in
its database (as ``boneyard-server admin create-bot`` does), and runs the bots in this process (one
``Competitor`` per account, as ``boneyard bot --key`` runs):

1. tournament, three times on the same server: ``--deals`` deals of Texas 42, duplicate, four
   heuristic entrants (two one-hand games a deal); first with ``max_games_per_entrant`` 1 (one
   deal at a time, as before issue 35) and bots that hold a stream per game, then with
   ``--max-games`` (8) and bots reading every turn on one stream and deciding
   ``--concurrency`` (8) turns at once (``boneyard bot --concurrency 8``), then with every
   game of the tournament at once (``max_games_per_entrant`` and the bots' concurrency both
   the tournament's games: what an organiser who wants the answer soonest sets). Each: wall
   time from StartTournament to FINISHED, games and events per second, and the CPU the server
   process and this process (the bots) used over that time, in cores (from /proc: Linux);
2. seek: ``--tables`` times, three accounts seek a Moon table at once; time from the last Seek
   call to the last seat told;
3. clock: ``--timeouts`` timeouts of a 100 ms per-move clock (the shortest a server allows) nobody answers; how long after the
   deadline each ClockExpired was appended (the keeper sleeps until the next deadline).

    make bench-competition   # last line: `competition: N games/s, ...`
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import grpc
from sqlalchemy import select

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import (
    competition_pb2,
    competition_pb2_grpc,
    events_pb2,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
)
from boneyard.clients.api import Client
from boneyard.clients.competitor import Competitor
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.models import EventRow

LISTENING = re.compile(r"^boneyard-server listening on (\S+):(\d+)$", re.MULTILINE)
TIMEOUT = 30.0


def start_server(database_url: str, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "boneyard.server.main", "--database-url", database_url, "--listen", "127.0.0.1:0",
         "--http-listen", "", "--log-level", "WARNING"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = LISTENING.search(log_path.read_text(errors="replace"))
        if found:
            return proc, f"127.0.0.1:{found.group(2)}"
        if proc.poll() is not None:
            raise SystemExit(f"the server exited: {log_path.read_text()}")
        time.sleep(0.05)
    raise SystemExit("the server did not start")


def make_accounts(
    database_url: str, count: int, prefix: str, kind: str = "bot"
) -> list[tuple[str, str]]:
    store = EventStore.open(database_url, migrate=True)
    try:
        competition = CompetitionStore(store)
        made = []
        for i in range(count):
            key = new_api_key()
            name = f"{prefix}-{i}"
            competition.create_account(str(uuid.uuid4()), name, kind, key_hash(key))  # type: ignore[arg-type]
            made.append((name, key))
        return made
    finally:
        store.close()


def bearer(key: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {key}"),)


def cpu_seconds(pid: int) -> float:
    """User and system CPU a process has used (``/proc/PID/stat``: Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tournament(
    address: str,
    accounts: list[tuple[str, str]],
    organiser: str,
    deals: int,
    server_pid: int,
    max_games: int,
    concurrency: int | None,
) -> tuple[float, float]:
    """One tournament played to its end: its one-hand games a second and the server's CPU in
    cores over the run."""
    channel = grpc.insecure_channel(address)
    stub = competition_pb2_grpc.TournamentServiceStub(channel)
    created = stub.CreateTournament(
        competition_pb2.CreateTournamentRequest(
            name="bench",
            rules=rules_pb2.Ruleset(preset="texas42"),
            entrants=[n for n, _ in accounts],
            deals=deals,
            duplicate=True,
            max_games_per_entrant=max_games,
        ),
        metadata=bearer(organiser),
        timeout=TIMEOUT,
    ).tournament
    clients = [Client(address) for _ in accounts]
    competitors = [
        Competitor(c, key, "heuristic", seed=i, concurrency=concurrency)
        for i, (c, (_, key)) in enumerate(zip(clients, accounts, strict=True))
    ]
    threads = [threading.Thread(target=c.run, daemon=True) for c in competitors]
    for t in threads:
        t.start()
    # Progress is polled in the BASIC view (the tournament only): the FULL view folds every game
    # of the schedule, work the benchmark would otherwise add to what it measures.
    progress = competition_pb2.GetTournamentRequest(
        tournament_id=created.tournament_id, view=competition_pb2.TOURNAMENT_VIEW_BASIC
    )
    server_cpu, bots_cpu = cpu_seconds(server_pid), time.process_time()
    began = time.perf_counter()
    stub.StartTournament(
        competition_pb2.StartTournamentRequest(tournament_id=created.tournament_id),
        metadata=bearer(organiser),
        timeout=TIMEOUT,
    )
    while True:
        summary = stub.GetTournament(progress, timeout=TIMEOUT)
        if summary.tournament.status == competition_pb2.TOURNAMENT_STATUS_FINISHED:
            break
        time.sleep(0.05)
    elapsed = time.perf_counter() - began
    server_cores = (cpu_seconds(server_pid) - server_cpu) / elapsed
    bots_cores = (time.process_time() - bots_cpu) / elapsed
    summary = stub.GetTournament(
        competition_pb2.GetTournamentRequest(tournament_id=created.tournament_id), timeout=TIMEOUT
    )
    for c in competitors:
        c.stop()
    for t in threads:
        t.join(timeout=TIMEOUT)
    games = summary.tournament.games_finished
    game_stub = game_service_pb2_grpc.GameServiceStub(channel)
    events = sum(
        game_stub.GetGame(game_service_pb2.GetGameRequest(game_id=g.game_id), timeout=TIMEOUT).game.version
        for g in summary.games
    )
    for c in clients:
        c.close()
    channel.close()
    how = (
        f"--concurrency {concurrency} (one turn stream a bot)"
        if concurrency
        else "a stream per game"
    )
    print(
        f"tournament, up to {max_games} game{'s' if max_games > 1 else ''} an entrant at once, "
        f"bots with {how}: {games} games ({deals} deals, duplicate, 4 heuristic entrants) in "
        f"{elapsed:.1f} s: {games / elapsed:.2f} games/s, {events / elapsed:.0f} events/s; "
        f"CPU: server {server_cores:.2f} cores, bots {bots_cores:.2f}"
    )
    return games / elapsed, server_cores


def seeks(address: str, accounts: list[tuple[str, str]], tables: int) -> str:
    channel = grpc.insecure_channel(address)
    stub = competition_pb2_grpc.LobbyServiceStub(channel)
    latencies = []
    for _ in range(tables):
        calls = [
            stub.Seek(
                competition_pb2.SeekRequest(rules=rules_pb2.Ruleset(preset="moon")),
                metadata=bearer(key),
                timeout=TIMEOUT,
            )
            for _, key in accounts[:2]
        ]
        for call in calls:
            next(call)  # registered: waiting
        began = time.perf_counter()
        calls.append(
            stub.Seek(
                competition_pb2.SeekRequest(rules=rules_pb2.Ruleset(preset="moon")),
                metadata=bearer(accounts[2][1]),
                timeout=TIMEOUT,
            )
        )
        for call in calls:
            for message in call:
                if message.HasField("seated"):
                    break
        latencies.append(time.perf_counter() - began)
    channel.close()
    p50 = statistics.median(latencies) * 1000
    print(f"seek: {tables} Moon tables, the last seat told {p50:.0f} ms (median) after the last seek")
    return f"table formed in {p50:.0f} ms"


def clocks(
    address: str, accounts: list[tuple[str, str]], organiser: str, timeouts: int, database_url: str
) -> str:
    channel = grpc.insecure_channel(address)
    gstub = game_service_pb2_grpc.GameServiceStub(channel)
    request = game_service_pb2.CreateGameRequest(
        rules=rules_pb2.Ruleset(preset="texas42", hand_limit=1),
        time_control=game_pb2.TimeControl(per_move_ms=100, policy=events_pb2.TIMEOUT_POLICY_AUTO_PLAY),
        reservations=[
            game_service_pb2.SeatReservation(seat=i, account_name=n) for i, (n, _) in enumerate(accounts[:4])
        ],
    )
    game_ids = []
    while True:
        game_ids.append(gstub.CreateGame(request, metadata=bearer(organiser), timeout=TIMEOUT).game_id)
        if len(game_ids) * 30 >= timeouts:
            break
    # let them play out by the clock
    for game_id in game_ids:
        while gstub.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=TIMEOUT).game.status != game_pb2.GAME_STATUS_FINISHED:
            time.sleep(0.2)
    channel.close()
    store = EventStore.open(database_url)
    late = []
    try:
        for game_id in game_ids:
            with store.engine.connect() as conn:
                rows = conn.execute(
                    select(EventRow.seq, EventRow.payload, EventRow.created_at)
                    .where(EventRow.game_id == game_id)
                    .order_by(EventRow.seq)
                ).all()
            previous = None
            for _seq, payload, created in rows:
                event = codec.decode_event(bytes(payload))
                stamp = created.timestamp()
                if isinstance(event, engine.ClockExpired) and previous is not None:
                    late.append(stamp - previous - 0.100)
                previous = stamp
    finally:
        store.close()
    late = late[:timeouts] if len(late) > timeouts else late
    late.sort()
    p50 = late[len(late) // 2] * 1000
    p99 = late[min(len(late) - 1, int(0.99 * len(late)))] * 1000
    print(f"clock: {len(late)} timeouts of a 100 ms clock applied {p50:.0f} ms (p50), {p99:.0f} ms (p99) after the deadline")
    return f"timeouts {p50:.0f} ms late (p50)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=16)
    parser.add_argument("--max-games", type=int, default=8, help="max_games_per_entrant")
    parser.add_argument("--concurrency", type=int, default=8, help="each bot's --concurrency")
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--timeouts", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        accounts = make_accounts(url, 4, "bench")
        organiser = make_accounts(url, 1, "organiser", "player")[0][1]
        proc, address = start_server(url, Path(tmp) / "server.log")
        try:
            before, _ = tournament(address, accounts, organiser, args.deals, proc.pid, 1, None)
            after, cores = tournament(
                address, accounts, organiser, args.deals, proc.pid, args.max_games, args.concurrency
            )
            every = 2 * args.deals  # four entrants, duplicate: two playings a deal, all of them
            at_once, at_once_cores = tournament(
                address, accounts, organiser, args.deals, proc.pid, every, every
            )
            parts = [
                f"{before:.2f} games/s one deal at a time",
                (
                    f"{after:.2f} games/s {args.max_games} games an entrant at once "
                    f"({after / before:.1f} x, server {cores:.2f} cores)"
                ),
                (
                    f"{at_once:.2f} games/s every game at once ({every} an entrant; "
                    f"{at_once / before:.1f} x, server {at_once_cores:.2f} cores)"
                ),
                seeks(address, accounts, args.tables),
                clocks(address, accounts, organiser, args.timeouts, url),
            ]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print("competition: " + ", ".join(parts))


if __name__ == "__main__":
    main()
