"""Three ``boneyard-server`` processes on one PostgreSQL database behind HAProxy, run from the
sample configuration the documentation ships (``docs/haproxy.cfg``): HTTP/2 to each process's
gRPC port and HTTP listener, health-checked on ``/healthz``, one game's calls hashed on the
``boneyard-game`` header to one process over a consistent ring.

Fifty one-hand games are played through the balancer by the project's own bot runner
(``clients.bot.Bot``, four seats a game, each on the shipped ``Client``), and the process
holding the most of their streams open is killed with SIGKILL while they play. Its games move
to the next process on the ring, which loads them from the log. Then every game must be finished,
every record (read back through the balancer) verified offline under the server's key, and
every action a bot was told was done must be in the log where the answer said.

Skipped without PostgreSQL (``BONEYARD_TEST_DATABASE_URL``) or haproxy, unless
``BONEYARD_HAPROXY_TESTS=required`` (``.ci/run`` installs haproxy and sets it): then a missing
haproxy fails. Nothing here depends on the machine's speed: the waits are hang guards.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from boneyard.api.v1 import actions_pb2, game_service_pb2, view_pb2
from boneyard.clients.api import Client
from boneyard.clients.archive_cli import ArchiveClient
from boneyard.clients.bot import Bot
from boneyard.clients.strategies import load_strategy
from boneyard.records.verify import verify_record
from tests.server.balancer_helpers import Balancer, Ports, haproxy
from tests.server.process_helpers import (
    ServerProcess,
    event_matches_action,
    free_port,
    fresh_pg_database,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

GAMES = 50
PROCESSES = 3
KILL_AFTER_ACKS = 300
"""Acknowledged actions before the kill: about a fifth of the games' (a one-hand game is some
33 actions), so every game is still being played."""
HANG_GUARD = 900.0
"""The longest the games may take after the kill (seconds): a guard against a hang, far
beyond what the slowest machine needs, never a bound on speed."""


def _health_through(lb: Balancer, tries: int = 5) -> object:
    """``/healthz`` through the balancer: a call about no one game, sent round robin. Once, in
    CI, it was answered 503 after the failover with both survivors UP; a client of the balancer
    tries again (its contract: only a call never sent is retried for it), and so does this, and
    says so with haproxy's own account of the refused call."""
    refused = []
    for _ in range(tries):
        try:
            with urllib.request.urlopen(f"{lb.http_url}/healthz", timeout=60) as answer:
                found = json.loads(answer.read())
        except urllib.error.HTTPError as error:
            if error.code != 503:
                raise
            refused.append(error)
            time.sleep(1.0)
            continue
        if refused:
            told = [
                line
                for line in lb.log_text().splitlines()
                if "/healthz" in line or "Health check" in line
            ]
            warnings.warn(f"/healthz was refused {len(refused)} time(s): {told[-8:]}", stacklevel=2)
        return found
    raise AssertionError(
        f"/healthz refused {tries} times through the balancer:\n{lb.log_text()[-4000:]}"
    )


@dataclass(frozen=True)
class Ack:
    game_id: str
    token: str
    expected_version: int
    request_id: str
    action: actions_pb2.Action
    version: int


class RecordingClient(Client):
    """The shipped client, remembering every action the server acknowledged."""

    def __init__(self, address: str) -> None:
        super().__init__(address)
        self.acks: list[Ack] = []
        self._lock = threading.Lock()
        self.acked = threading.Condition(self._lock)

    def submit(  # type: ignore[override]
        self,
        game_id: str,
        token: str,
        expected_version: int,
        action: actions_pb2.Action,
        request_id: str | None = None,
        timeout: float | None = None,
        seat: int | None = None,
    ) -> game_service_pb2.SubmitActionResponse:
        assert request_id is not None  # the bot names its own
        answer = super().submit(game_id, token, expected_version, action, request_id, timeout, seat)
        with self.acked:
            self.acks.append(
                Ack(game_id, token, expected_version, request_id, action, answer.version)
            )
            self.acked.notify_all()
        return answer


def _samples(server: ServerProcess, family: str) -> list[Sample]:
    """The samples of one metric family, from the process's metrics now."""
    with urllib.request.urlopen(server.metrics_url, timeout=30) as answer:
        text = answer.read().decode()
    return [
        sample
        for found in text_string_to_metric_families(text)
        if found.name == family
        for sample in found.samples
    ]


def _committed(server: ServerProcess) -> float:
    """The process's ``boneyard_actions_committed_total``, from its metrics."""
    totals = [
        s.value
        for s in _samples(server, "boneyard_actions_committed")
        if s.name == "boneyard_actions_committed_total"
    ]
    assert totals, f"no boneyard_actions_committed_total at {server.metrics_url}"
    return totals[0]


def _watching(server: ServerProcess) -> float:
    """The WatchGame streams open in the process now (``boneyard_calls_in_flight``)."""
    return sum(
        s.value
        for s in _samples(server, "boneyard_calls_in_flight")
        if s.labels.get("grpc_method") == "WatchGame"
    )


def _http_port(server: ServerProcess) -> int:
    return int(server.http_url.rsplit(":", 1)[1])


def test_fifty_games_through_haproxy_survive_a_kill_9_of_one_of_three_processes(
    postgres_url: str, tmp_path: Path
) -> None:
    binary = haproxy()
    with fresh_pg_database(postgres_url, prefix="boneyard_lb") as url:
        servers: list[ServerProcess] = []
        try:
            for n in range(PROCESSES):  # one after the other: the first one migrates
                servers.append(
                    ServerProcess.start(
                        tmp_path / f"server{n}.log",
                        url,
                        http_listen="127.0.0.1:0",
                        metrics_listen="127.0.0.1:0",
                    )
                )
            ports = Ports(free_port(), free_port(), free_port())
            processes = [(s.port, _http_port(s)) for s in servers]
            with Balancer.start(
                tmp_path / "haproxy", processes, ports, binary=binary, logged=True
            ) as lb:
                lb.wait_until(up=PROCESSES)
                _play_through(lb, servers)
        finally:
            for server in servers:
                server.kill()


def _play_through(lb: Balancer, servers: list[ServerProcess]) -> None:
    with RecordingClient(lb.grpc_address) as client, ArchiveClient(lb.grpc_address) as archive:
        # The games and their seats, made through the balancer (CreateGame has no game to
        # name: spread round robin; each TakeSeat goes to its game's process).
        tables: dict[str, list[str]] = {}
        for n in range(GAMES):
            game = client.create_game("texas42", {"hand_limit": "1"}, name=f"lb-{n}")
            tables[game.game_id] = [
                client.take_seat(game.game_id, f"bot{seat}", seat)[1] for seat in range(4)
            ]
        seats = {token: seat for tokens in tables.values() for seat, token in enumerate(tokens)}

        finished: dict[tuple[str, int], view_pb2.SeatView] = {}
        failures: list[str] = []
        bots: list[Bot] = []

        def play(game_id: str, seat: int, token: str) -> None:
            bot = Bot(client, game_id, token, load_strategy("random", seed=seat), patience=600)
            bots.append(bot)
            try:
                finished[(game_id, seat)] = bot.run()
            except Exception as error:  # noqa: BLE001 - reported below, with the logs
                failures.append(f"game {game_id} seat {seat}: {error!r}")

        threads = [
            threading.Thread(target=play, args=(game_id, seat, token), daemon=True)
            for game_id, tokens in tables.items()
            for seat, token in enumerate(tokens)
        ]
        for thread in threads:
            thread.start()

        # Mid-game: kill -9 the process with the most seats watching their games (each a bot
        # in a game in play; the process that committed the most so far may have played all
        # its games to their end already: a game here lasts well under a second).
        with client.acked:
            ready = client.acked.wait_for(lambda: len(client.acks) >= KILL_AFTER_ACKS, HANG_GUARD)
        assert ready, f"only {len(client.acks)} actions acknowledged:\n{failures}"
        committed = [_committed(s) for s in servers]
        # The hash spread the games: every process is playing some.
        assert all(committed), committed
        watching = [_watching(s) for s in servers]
        assert max(watching) > 0, f"no game is being watched: {watching}"
        victim = servers[watching.index(max(watching))]
        victim.kill()
        playing = GAMES - len({game for game, _ in finished})
        assert playing > 0, "every game was over before the kill"
        # HAProxy's health check sees it go (the games do not wait for that: a call to it
        # meanwhile is refused, and the bots try again).
        lb.wait_until(up=PROCESSES - 1)

        deadline = time.monotonic() + HANG_GUARD
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 1.0))
        logs = "\n".join(s.log_text()[-3000:] for s in servers)
        assert not failures, "\n".join(failures) + "\n" + logs
        assert len(finished) == 4 * GAMES, f"{4 * GAMES - len(finished)} seats never finished"

        # The kill cut games in play: their seats' streams dropped and were resumed (ended by
        # an error or not: a bot opens one stream a game otherwise).
        resumed = sum(bot.resumes for bot in bots)
        assert resumed > 0, (
            f"no bot lost its stream ({sum(bot.reconnects for bot in bots)} reconnects)\n{logs}"
        )
        # Every game over, as every seat saw it.
        assert all(v.phase == view_pb2.PHASE_GAME_OVER for v in finished.values())

        # Every record, read back through the balancer, verified under the server's key.
        key = archive.signing_key().public_key
        records = {}
        for game_id in tables:
            record = archive.record(game_id)
            verdict = verify_record(record, public_key=key)
            assert verdict.valid, f"game {game_id}: {verdict}"
            records[game_id] = record

        # No acknowledged action lost: each is in its game's log, at the version it was
        # decided on, as the seat's own action, and the log reaches the version answered.
        assert client.acks
        for ack in client.acks:
            events = records[ack.game_id].events
            assert len(events) >= ack.version, (ack, len(events))
            event = events[ack.expected_version].event
            assert event.seq == ack.expected_version + 1
            assert event_matches_action(event, seats[ack.token], ack.action), (ack, event)
        # The HTTP front too (HTTP/1.1 in, HTTP/2 to the listeners): a Connect call with the
        # game header, answered by the game's process.
        game_id = next(iter(tables))
        request = urllib.request.Request(
            f"{lb.http_url}/boneyard.v1.GameService/GetGame",
            data=json.dumps({"gameId": game_id}).encode(),
            headers={"Content-Type": "application/json", "Boneyard-Game": game_id},
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            assert json.loads(answer.read())["game"]["status"] == "GAME_STATUS_FINISHED"
        assert _health_through(lb) == {"status": "SERVING"}
        # The survivors served the victim's games: nothing was lost with it.
        assert victim.proc.returncode is not None
        assert all(s.proc.poll() is None for s in servers if s is not victim)
