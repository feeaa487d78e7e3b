"""SIGTERM drains a real server process: health says NOT_SERVING first, new calls are refused
UNAVAILABLE on both doors, the actions in flight commit, the streams are ended by the server
with UNAVAILABLE and a message saying to reconnect, and the process exits 0 within its grace,
with no traceback and no ERROR in its log.

To have calls in flight at the moment of the signal, whatever the machine's speed, the test
holds the database's write lock (as a slow disk or a busy PostgreSQL would): the server's
writes wait for it, so the actions being submitted are still in flight when SIGTERM comes, and
the drain can be looked at for as long as the test holds the lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sqlite3
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
import sqlalchemy as sa
from api_helpers import BACKENDS, fresh_database
from connectrpc.errors import ConnectError
from grpc_health.v1 import health_pb2, health_pb2_grpc
from process_helpers import (
    Ack,
    ServerProcess,
    create_game,
    event_matches_action,
    next_move,
    seat_all,
    submit,
    watch,
)
from prometheus_client.parser import text_string_to_metric_families

from boneyard.api.v1 import (
    competition_pb2,
    competition_pb2_grpc,
    events_pb2,
    game_service_connect,
    game_service_pb2,
    rules_pb2,
)
from boneyard.clients.api import refusal
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.games.app import GameApp
from boneyard.server.ops.drain import CUT, REFUSED, STREAM_ENDED
from boneyard.server.store import EventStore

GRACE = 30.0
"""The grace of the main test: far more than a drain takes, so only a bug exceeds it."""
WAIT = 30.0
"""The most any step waits for the server (a hung server fails the test, never hangs it)."""


@pytest.fixture(params=BACKENDS)
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with fresh_database(request.param, request, tmp_path_factory) as url:
        yield url


@contextlib.contextmanager
def writes_held(database_url: str) -> Iterator[None]:
    """Hold the database's write lock: the server's writes wait until the block ends."""
    if database_url.startswith("sqlite"):
        conn = sqlite3.connect(database_url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            conn.execute("BEGIN EXCLUSIVE")  # (in WAL mode: other writers wait, readers read)
            yield
            conn.execute("ROLLBACK")
        finally:
            conn.close()
        return
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as conn, conn.begin():
            conn.exec_driver_sql("LOCK TABLE games IN EXCLUSIVE MODE")  # writes wait, reads read
            yield
    finally:
        engine.dispose()


def submits_in_flight(metrics_url: str) -> float:
    """SubmitAction calls under way at the server, by its metrics."""
    return calls_in_flight(metrics_url, "SubmitAction")


def calls_in_flight(metrics_url: str, method: str) -> float:
    """The game service's ``method`` calls under way at the server (gRPC's door), by its
    metrics."""
    with urllib.request.urlopen(metrics_url, timeout=WAIT) as answer:
        text = answer.read().decode()
    calls = {
        "grpc_type": "unary",
        "grpc_service": "boneyard.v1.GameService",
        "grpc_method": method,
        "transport": "grpc",
    }
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "boneyard_calls_in_flight" and sample.labels == calls
    )


@dataclass
class Ending:
    """How a stream ended: its status code and message, and when (monotonic)."""

    code: str
    message: str
    at: float
    reason: str = ""
    """The ErrorInfo's reason (gRPC streams)."""


@dataclass
class Player:
    """Plays one game from a thread, every seat in turn, until the server refuses a call."""

    stub: object
    game_id: str
    tokens: list[str]
    acks: list[Ack] = field(default_factory=list)
    submitting: threading.Event = field(default_factory=threading.Event)
    """Set while a SubmitAction is on its way."""
    refused: grpc.RpcError | None = None

    def play(self) -> None:
        try:
            while True:
                move = next_move(self.stub, self.game_id, self.tokens)  # type: ignore[arg-type]
                assert move is not None, "a game ended before the signal: play longer games"
                self.submitting.set()
                self.acks.append(submit(self.stub, self.game_id, self.tokens, move))  # type: ignore[arg-type]
                self.submitting.clear()
        except grpc.RpcError as e:
            self.refused = e


def watch_grpc(call: object, endings: dict[str, Ending], name: str, seen: list[int]) -> None:
    try:
        for message in call:  # type: ignore[attr-defined]
            if hasattr(message, "version"):
                seen.append(message.version)
        endings[name] = Ending("OK", "", time.monotonic())
    except grpc.RpcError as e:
        endings[name] = Ending(e.code().name, e.details() or "", time.monotonic(), refusal(e).reason)


def health_watch(
    call: object, statuses: list[tuple[str, float]], endings: dict[str, Ending]
) -> None:
    try:
        for message in call:  # type: ignore[attr-defined]
            name = health_pb2.HealthCheckResponse.ServingStatus.Name(message.status)
            statuses.append((name, time.monotonic()))
        endings["health"] = Ending("OK", "", time.monotonic())
    except grpc.RpcError as e:
        endings["health"] = Ending(
            e.code().name, e.details() or "", time.monotonic(), refusal(e).reason
        )


def watch_connect(
    url: str, game_id: str, endings: dict[str, Ending], opened: threading.Event
) -> None:
    """WatchGame over the HTTP listener (Connect), on an event loop of its own."""

    async def run() -> None:
        client = game_service_connect.GameServiceClient(url, timeout_ms=int(WAIT * 4000))
        try:
            request = game_service_pb2.WatchGameRequest(game_id=game_id, from_version=0)
            async for _ in client.watch_game(request):
                opened.set()
            endings["connect"] = Ending("OK", "", time.monotonic())
        except ConnectError as e:
            endings["connect"] = Ending(e.code.name, e.message, time.monotonic())
        finally:
            await client.close()

    asyncio.run(run())


def connect_get_game(url: str, game_id: str) -> ConnectError | None:
    async def run() -> ConnectError | None:
        client = game_service_connect.GameServiceClient(url, timeout_ms=int(WAIT * 1000))
        try:
            await client.get_game(game_service_pb2.GetGameRequest(game_id=game_id))
            return None
        except ConnectError as e:
            return e
        finally:
            await client.close()

    return asyncio.run(run())


def healthz(url: str) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=WAIT) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def wait_until(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def assert_clean_log(text: str) -> None:
    assert "Traceback" not in text, text
    assert " ERROR " not in text and " CRITICAL " not in text, text


def _events(server: ServerProcess, game_id: str) -> list[events_pb2.Event]:
    version = (
        server.stub()
        .GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=WAIT)
        .game.version
    )
    messages = watch(server.stub(), game_id, 0, count=version, timeout=WAIT)
    assert [m.version for m in messages] == list(range(1, version + 1))
    return [m.event for m in messages]


def an_account(database_url: str) -> str:
    """A bot account made in the database before the server starts; its API key."""
    store = EventStore.open(database_url, migrate=True)
    try:
        key = new_api_key()
        GameApp(store).competition.create_account(
            str(uuid.uuid4()), f"bot-{uuid.uuid4().hex[:8]}", "bot", key_hash(key)
        )
        return key
    finally:
        store.close()


def test_sigterm_drains_then_exits_cleanly(tmp_path: Path, database_url: str) -> None:
    log = tmp_path / "server.log"
    key = an_account(database_url)
    with ServerProcess.start(
        log,
        database_url,
        http_listen="127.0.0.1:0",
        extra_args=["--shutdown-grace", str(GRACE)],
        metrics_listen="127.0.0.1:0",
    ) as server:
        stub = server.stub()
        players = []
        for _ in range(3):
            game_id = create_game(stub, name="drained")
            players.append(Player(server.stub(), game_id, seat_all(stub, game_id)))
        endings: dict[str, Ending] = {}
        statuses: list[tuple[str, float]] = []
        seen: dict[str, list[int]] = {p.game_id: [] for p in players}
        readers = [
            threading.Thread(
                target=watch_grpc,
                args=(
                    server.stub().WatchGame(
                        game_service_pb2.WatchGameRequest(game_id=p.game_id), timeout=WAIT * 4
                    ),
                    endings,
                    p.game_id,
                    seen[p.game_id],
                ),
            )
            for p in players
        ]
        health_call = health_pb2_grpc.HealthStub(server.channel()).Watch(
            health_pb2.HealthCheckRequest(service=""), timeout=WAIT * 4
        )
        readers.append(threading.Thread(target=health_watch, args=(health_call, statuses, endings)))
        lobby = competition_pb2_grpc.LobbyServiceStub(server.channel())
        auth = (("authorization", f"Bearer {key}"),)
        for name, call in (
            (
                "seek",  # (a table of four: it waits)
                lobby.Seek(
                    competition_pb2.SeekRequest(rules=rules_pb2.Ruleset(preset="texas42")),
                    metadata=auth,
                    timeout=WAIT * 4,
                ),
            ),
            (
                "seats",
                lobby.WatchSeats(
                    competition_pb2.WatchSeatsRequest(), metadata=auth, timeout=WAIT * 4
                ),
            ),
        ):
            readers.append(threading.Thread(target=watch_grpc, args=(call, endings, name, [])))
        connect_open = threading.Event()
        readers.append(
            threading.Thread(
                target=watch_connect,
                args=(server.http_url, players[0].game_id, endings, connect_open),
            )
        )
        playing = [threading.Thread(target=p.play) for p in players]
        for thread in readers + playing:
            thread.start()
        wait_until(lambda: all(len(p.acks) >= 3 for p in players), "some actions acknowledged")
        wait_until(connect_open.is_set, "the Connect stream")
        wait_until(
            lambda: statuses[:1] == [("SERVING", statuses[0][1])] if statuses else False,
            "health SERVING",
        )

        with writes_held(database_url):
            wait_until(lambda: all(p.submitting.is_set() for p in players), "actions in flight")
            # At the server, which holds them at the write (a fixed pause was too short on a
            # busy machine: the signal came first, and the server had nothing to wait for).
            wait_until(
                lambda: submits_in_flight(server.metrics_url) == len(players),
                "the actions at the server",
            )
            in_flight = {p.game_id: len(p.acks) for p in players}
            signalled = time.monotonic()
            server.signal(signal.SIGTERM)

            # Draining: health says NOT_SERVING at once, on every door and every service ...
            wait_until(lambda: any(s == "NOT_SERVING" for s, _ in statuses), "NOT_SERVING")
            assert [s for s, _ in statuses] == ["SERVING", "NOT_SERVING"]
            for service in (
                "",
                "boneyard.v1.GameService",
                "boneyard.v1.LobbyService",
                "boneyard.v1.TournamentService",
                "boneyard.v1.ArchiveService",
            ):
                assert server.health(service) == health_pb2.HealthCheckResponse.NOT_SERVING
            assert healthz(server.http_url) == (503, {"status": "NOT_SERVING"})
            # ... new calls are refused, saying why ...
            with pytest.raises(grpc.RpcError) as refused:
                server.stub().GetGame(
                    game_service_pb2.GetGameRequest(game_id=players[0].game_id), timeout=WAIT
                )
            assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
            assert refused.value.details() == REFUSED
            assert refusal(refused.value).reason == "SHUTTING_DOWN"
            with pytest.raises(grpc.RpcError) as refused:
                list(
                    server.stub().WatchGame(
                        game_service_pb2.WatchGameRequest(game_id=players[0].game_id), timeout=WAIT
                    )
                )
            assert (refused.value.code(), refused.value.details()) == (
                grpc.StatusCode.UNAVAILABLE,
                REFUSED,
            )
            over_http = connect_get_game(server.http_url, players[0].game_id)
            assert over_http is not None
            assert (over_http.code.name, over_http.message) == ("UNAVAILABLE", REFUSED)
            # ... while the actions in flight wait for their commit, and the streams stay open.
            time.sleep(0.5)
            assert server.proc.poll() is None
            assert {p.game_id: len(p.acks) for p in players} == in_flight
            assert not endings, endings

        code = server.wait_exit(timeout=GRACE + WAIT)
        exited = time.monotonic()
        for thread in readers + playing:
            thread.join(timeout=WAIT)
            assert not thread.is_alive()
        assert code == 0
        assert exited - signalled < GRACE
        text = server.log_text()
        assert_clean_log(text)
        # (3 calls and every stream were open at the signal: 3 + 1 WatchGame, Seek,
        # WatchSeats, health's Watch)
        assert (
            "waiting up to" in text and "for 3 calls (SubmitAction 3) and ending 7 streams" in text
        )
        assert "INFO boneyard.server: stopped" in text

    # Every action in flight was answered (after its commit), then the next call was refused:
    # by the draining server, saying why, or, when it came after the server had gone (on a
    # busy machine the player's next call may lose that race), by its closed port or its
    # final stop.
    for p in players:
        assert len(p.acks) == in_flight[p.game_id] + 1, p.game_id
        assert p.refused is not None
        code, details = p.refused.code(), p.refused.details() or ""
        if code is grpc.StatusCode.UNAVAILABLE and "failed to connect" not in details:
            assert details == REFUSED
        else:
            assert code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED), p.refused
    # Health said NOT_SERVING before any stream ended; each stream was ended by the server.
    not_serving = next(at for s, at in statuses if s == "NOT_SERVING")
    assert set(endings) == {p.game_id for p in players} | {"health", "connect", "seek", "seats"}
    for name, ending in endings.items():
        assert ending.at > not_serving, name
        assert (ending.code, ending.message) == ("UNAVAILABLE", STREAM_ENDED), name
    # (The Connect stream's reason is read by the HTTP parity test, not here.)
    assert {e.reason for n, e in endings.items() if n != "connect"} == {"SHUTTING_DOWN"}

    # Every acknowledged action is in the database; a watcher resumes from where it was.
    with ServerProcess.start(tmp_path / "again.log", database_url) as again:
        for p in players:
            events = _events(again, p.game_id)
            assert len(events) >= p.acks[-1].version
            for ack in p.acks:
                assert event_matches_action(events[ack.expected_version], ack.seat, ack.action)
            resumed = watch(again.stub(), p.game_id, seen[p.game_id][-1], count=0)
            assert resumed == []
        assert again.terminate() == 0
        assert_clean_log(again.log_text())


def test_when_the_grace_runs_out_the_call_left_is_cut_and_the_exit_is_still_clean(
    tmp_path: Path, database_url: str
) -> None:
    grace = 0.5
    with ServerProcess.start(
        tmp_path / "server.log",
        database_url,
        extra_args=["--shutdown-grace", str(grace)],
        metrics_listen="127.0.0.1:0",
    ) as server:
        stub = server.stub()
        create_game(stub)  # (migrated, warmed up)
        answers: list[grpc.RpcError | object] = []
        request_id = str(uuid.uuid4())

        def create() -> None:
            try:
                answers.append(create_game_with(stub, request_id))
            except grpc.RpcError as e:
                answers.append(e)

        creating = threading.Thread(target=create)
        with writes_held(database_url):
            creating.start()
            # At the server, held at the write by the lock (not a pause: see the drain's test).
            wait_until(
                lambda: calls_in_flight(server.metrics_url, "CreateGame") == 1, "the creation"
            )
            signalled = time.monotonic()
            server.signal(signal.SIGTERM)
            creating.join(timeout=WAIT)
            cut_after = time.monotonic() - signalled
            assert not creating.is_alive()
        code = server.wait_exit(timeout=WAIT)
        text = server.log_text()
    [answer] = answers
    assert isinstance(answer, grpc.RpcError), answer
    assert (answer.code(), answer.details()) == (grpc.StatusCode.UNAVAILABLE, CUT)
    assert refusal(answer).reason == "SHUTTING_DOWN"
    # Cut by the grace's end, not by the test giving up on the held write (WAIT): a bound
    # that tells the two apart, not one on the machine's speed.
    assert cut_after < WAIT / 2
    assert code == 0
    assert_clean_log(text)
    assert "WARNING boneyard.server: the shutdown grace ran out with 1 call (CreateGame 1)" in text


def test_a_second_signal_cuts_the_grace_short(tmp_path: Path, database_url: str) -> None:
    with ServerProcess.start(
        tmp_path / "server.log",
        database_url,
        extra_args=["--shutdown-grace", "600"],
        metrics_listen="127.0.0.1:0",
    ) as server:
        stub = server.stub()
        create_game(stub)
        answers: list[grpc.RpcError | object] = []

        def create() -> None:
            try:
                answers.append(create_game_with(stub, str(uuid.uuid4())))
            except grpc.RpcError as e:
                answers.append(e)

        creating = threading.Thread(target=create)
        with writes_held(database_url):
            creating.start()
            wait_until(
                lambda: calls_in_flight(server.metrics_url, "CreateGame") == 1, "the creation"
            )
            server.signal(signal.SIGTERM)
            time.sleep(0.5)
            assert server.proc.poll() is None  # (draining: 600 s of grace)
            server.signal(signal.SIGINT)
            creating.join(timeout=WAIT)
            assert not creating.is_alive()
        code = server.wait_exit(timeout=WAIT)
        text = server.log_text()
    [answer] = answers
    assert isinstance(answer, grpc.RpcError), answer
    assert (answer.code(), answer.details()) == (grpc.StatusCode.UNAVAILABLE, CUT)
    assert code == 0
    assert_clean_log(text)
    assert "SIGINT again: cutting the shutdown grace short" in text


def create_game_with(stub: object, request_id: str) -> str:
    response = stub.CreateGame(  # type: ignore[attr-defined]
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset="texas42"), name="held", request_id=request_id
        ),
        timeout=WAIT,
    )
    return str(response.game_id)
