"""Helpers of the server's integration tests (test_api.py, test_hidden_information.py): a
real gRPC server on loopback (port 0) over a fresh database of each backend, and a thin
synchronous client for it. The fixtures that use them are in conftest.py.

The server is ``boneyard.server.bootstrap.create_server`` (grpc.aio) running on an event loop of its own in
a background thread, so that the tests talk to it with ordinary blocking gRPC channels, exactly
as a client in another process would.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from sqlalchemy.engine import Engine, make_url

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import (
    actions_pb2,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
    view_pb2,
)
from boneyard.server.bootstrap import Boneyard, create_server
from boneyard.server.competition.sweeper import Abandonment
from boneyard.server.quotas import Quotas

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
"""Parameters of the backend fixtures: SQLite always, PostgreSQL when
BONEYARD_TEST_DATABASE_URL is set (``.ci/run`` sets it)."""

RPC_TIMEOUT = 30.0
"""Deadline of every unary call and stream the helpers make: a hung server fails the test
instead of hanging it."""


# ---------------------------------------------------------------- databases


@contextmanager
def fresh_database(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The URL of an empty database of its own: a new SQLite file, or a new PostgreSQL
    database on the test server (dropped afterwards)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('api') / 'boneyard.db'}"
        return
    admin: Engine = request.getfixturevalue("pg_admin")  # conftest.py
    base_url = request.getfixturevalue("postgres_url")
    name = f"boneyard_api_{uuid.uuid4().hex[:16]}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(base_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# ---------------------------------------------------------------- the server


class RunningServer:
    """``create_server`` on its own event loop in a background thread (``options``: more of
    its keyword arguments)."""

    def __init__(
        self,
        database_url: str,
        quotas: Quotas | None = None,
        abandonment: Abandonment | None = None,
        *,
        http: bool = False,
        **options: Any,
    ) -> None:
        self.database_url = database_url
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="grpc-server", daemon=True
        )
        self._thread.start()
        try:
            self.server, self.port, self.app = self.run(
                create_server(
                    database_url,
                    "127.0.0.1:0",
                    quotas=quotas,
                    abandonment=abandonment,
                    http_listen="127.0.0.1:0" if http else None,
                    **options,
                )
            )
        except BaseException:
            self._stop_loop()
            raise
        self.address = f"127.0.0.1:{self.port}"
        self.http_address = f"http://127.0.0.1:{self.app.http_port}" if http else ""

    def run(self, coro: Any, timeout: float = 60.0) -> Any:
        """Run a coroutine on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    @property
    def store(self) -> Any:
        return self.app.store

    def close(self) -> None:
        try:
            self.run(self.app.stop())
            self.run(self.server.stop(grace=None))
            self.run(self.loop.shutdown_default_executor())
        finally:
            self.app.close()
            self._stop_loop()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()


@contextmanager
def running_server(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    with fresh_database(backend, request, tmp_path_factory) as url:
        server = RunningServer(url)
        try:
            yield server
        finally:
            server.close()


# ---------------------------------------------------------------- the client


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Table:
    """A game and the tokens of its seats."""

    game_id: str
    rules: rules_pb2.Ruleset
    tokens: dict[int, str] = field(default_factory=dict)

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def receivers(self) -> list[int | None]:
        """Every seat, and a spectator (``None``)."""
        return [*range(self.players), None]


class _DefaultDeadline(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Give every call without a deadline ``RPC_TIMEOUT``: a hung server fails a test."""

    def _details(self, details: Any) -> Any:
        if details.timeout is not None:
            return details
        return _CallDetails(
            details.method,
            RPC_TIMEOUT,
            details.metadata,
            details.credentials,
            details.wait_for_ready,
            details.compression,
        )

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)


@dataclass(frozen=True)
class _CallDetails(grpc.ClientCallDetails):
    method: str
    timeout: float | None
    metadata: Any
    credentials: Any
    wait_for_ready: Any
    compression: Any


class Client:
    """A blocking client on a channel of its own (closed by ``close``)."""

    def __init__(self, address: str) -> None:
        self._raw_channel = grpc.insecure_channel(address)
        self.channel = grpc.intercept_channel(self._raw_channel, _DefaultDeadline())
        self.stub = game_service_pb2_grpc.GameServiceStub(self.channel)

    def close(self) -> None:
        self._raw_channel.close()

    # --- plain calls ---

    def create(self, preset: str = "texas42", name: str = "", **options: Any) -> Table:
        rules = rules_pb2.Ruleset(preset=preset, **options)
        response = self.stub.CreateGame(
            game_service_pb2.CreateGameRequest(rules=rules, name=name), timeout=RPC_TIMEOUT
        )
        return Table(response.game_id, response.game.rules)

    def game(self, game_id: str) -> game_pb2.GameSummary:
        return self.stub.GetGame(
            game_service_pb2.GetGameRequest(game_id=game_id), timeout=RPC_TIMEOUT
        ).game

    def take_seat(
        self, game_id: str, seat: int | None = None, name: str = "player"
    ) -> game_service_pb2.TakeSeatResponse:
        request = game_service_pb2.TakeSeatRequest(game_id=game_id, player_name=name)
        if seat is not None:
            request.seat = seat
        return self.stub.TakeSeat(request, timeout=RPC_TIMEOUT)

    def seated(self, preset: str = "texas42", **options: Any) -> Table:
        """A new game with every seat taken."""
        table = self.create(preset, **options)
        for seat in range(table.players):
            table.tokens[seat] = self.take_seat(table.game_id, seat, f"player {seat}").seat_token
        return table

    def view(
        self, table: Table, receiver: int | None, *, seat: int | None = None
    ) -> view_pb2.SeatView:
        """``receiver``'s view (``None``: a spectator, without a token)."""
        request = game_service_pb2.GetViewRequest(game_id=table.game_id)
        if seat is not None:
            request.seat = seat
        metadata = bearer(table.tokens[receiver]) if receiver is not None else None
        return self.stub.GetView(request, metadata=metadata, timeout=RPC_TIMEOUT).view

    def view_future(self, table: Table, receiver: int | None) -> Any:
        """GetView sent without waiting: ``.result()`` is the GetViewResponse."""
        request = game_service_pb2.GetViewRequest(game_id=table.game_id)
        metadata = bearer(table.tokens[receiver]) if receiver is not None else None
        return self.stub.GetView.future(request, metadata=metadata, timeout=RPC_TIMEOUT)

    def next_request_id(self) -> str:
        return f"req-{uuid.uuid4()}"

    def submit(
        self,
        table: Table,
        seat: int,
        action: actions_pb2.Action,
        expected_version: int,
        request_id: str | None = None,
    ) -> game_service_pb2.SubmitActionResponse:
        return self.stub.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                game_id=table.game_id,
                expected_version=expected_version,
                request_id=request_id or self.next_request_id(),
                action=action,
            ),
            metadata=bearer(table.tokens[seat]),
            timeout=RPC_TIMEOUT,
        )

    def watch(
        self,
        table: Table,
        receiver: int | None,
        from_version: int = 0,
        *,
        timeout: float = RPC_TIMEOUT,
    ) -> Any:
        """The WatchGame stream (an iterator; ``.cancel()`` it to stop early)."""
        metadata = bearer(table.tokens[receiver]) if receiver is not None else None
        return self.stub.WatchGame(
            game_service_pb2.WatchGameRequest(game_id=table.game_id, from_version=from_version),
            metadata=metadata,
            timeout=timeout,
        )

    # --- playing ---

    def play_to_end(self, table: Table, max_actions: int = 5000) -> list[int]:
        """Submit the first legal action of the seat on turn until the game is over; return
        the versions the submissions produced."""
        versions = []
        for _ in range(max_actions):
            spectator = self.view(table, None)
            if spectator.phase == view_pb2.PHASE_GAME_OVER:
                return versions
            seat = spectator.turn
            view = self.view(table, seat)
            assert view.legal_actions, f"seat {seat} is on turn with no legal action"
            response = self.submit(table, seat, view.legal_actions[0], view.version)
            assert response.version > view.version
            assert response.view.version == response.version
            versions.append(response.version)
        raise AssertionError(f"game {table.game_id} not over after {max_actions} actions")


# ---------------------------------------------------------------- reading the truth


def log_events(server: RunningServer, game_id: str) -> list[tuple[int, engine.Event]]:
    """The game's log as stored (log form: the whole deal), decoded: ``[(seq, event)]``."""
    return [(row.seq, codec.decode_event(row.payload)) for row in server.store.load_events(game_id)]


def timeouts(server: RunningServer, game_id: str) -> list[engine.ClockExpired]:
    """Each time the game's clock ran out, in the log's order."""
    return [e for _, e in log_events(server, game_id) if isinstance(e, engine.ClockExpired)]


def first_timed_out(server: RunningServer, game_id: str) -> int:
    """The seat to act when the game's clock first ran out, from the log (on a busy machine
    its time may be over before a test could ask for a view)."""
    events = [e for _, e in log_events(server, game_id)]
    expired = next(i for i, e in enumerate(events) if isinstance(e, engine.ClockExpired))
    hand = engine.replay(events[:expired]).hand
    assert hand is not None  # (a clock runs out on a turn of a hand)
    return hand.turn


def state_at(app: Boneyard, game_id: str) -> engine.GameState:
    """The game's state now, as the server folds it from its log."""
    state, _ = app.app.load(game_id)
    return state


@contextmanager
def rpc_error(code: grpc.StatusCode, *contains: str) -> Iterator[list[grpc.RpcError]]:
    """Expect a call to fail with ``code`` and a message containing each of ``contains``."""
    caught: list[grpc.RpcError] = []
    try:
        yield caught
    except grpc.RpcError as error:
        caught.append(error)
        assert error.code() == code, f"expected {code}, got {error.code()}: {error.details()}"
        details = error.details() or ""
        for text in contains:
            assert text.lower() in details.lower(), f"{text!r} not in the message {details!r}"
        return
    raise AssertionError(f"expected the call to fail with {code}")
