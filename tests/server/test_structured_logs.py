"""Structured logs (``--log-format json``): a real server process, called over gRPC and
Connect; every line it logs is a JSON object, each call has its access line with the request
id (the client's when it sent one), the game, seat and account where the call resolved them,
and no seat token or API key appears anywhere in the log. Every line of a JSON server's stderr
is JSON, what gRPC's C core writes there (a failed TLS handshake) and a failed start included.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from process_helpers import (
    ServerProcess,
    bearer,
    clean_env,
    create_game,
    play_one,
    seat_all,
)

from boneyard.api.v1 import (
    competition_pb2,
    competition_pb2_grpc,
    game_service_connect,
    game_service_pb2,
    game_service_pb2_grpc,
)
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.ops import logs
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.transport.pipeline import refusal_for
from tests.clients.test_tls import self_signed

GAME = "/boneyard.v1.GameService/"
ACCESS_FIELDS = {"time", "level", "logger", "message", "method", "code", "duration_ms", "peer",
                 "request_id", "transport"}


class Played:
    """What the calls below did, and the secrets they used."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.game_id = ""
        self.tokens: list[str] = []
        self.key = ""
        self.account = ""
        self.missing = str(uuid.uuid4())
        """A game id no game has."""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    base = tmp_path_factory.mktemp("json-logs")
    url = f"sqlite:///{base / 'logs.db'}"
    store = EventStore.open(url, migrate=True)
    account, key = f"logged-{uuid.uuid4().hex[:6]}", new_api_key()
    try:
        CompetitionStore(store).create_account(str(uuid.uuid4()), account, "bot", key_hash(key))
    finally:
        store.close()
    with ServerProcess.start(
        base / "server.log",
        url,
        http_listen="127.0.0.1:0",
        extra_args=["--log-format", "json"],
        env=clean_env(),
    ) as server:
        run = Played(server)
        run.key, run.account = key, account
        stub = server.stub()
        run.game_id = create_game(stub)
        run.tokens = seat_all(stub, run.game_id)
        for _ in range(3):
            play_one(stub, run.game_id, run.tokens)
        # A refusal, named by the client.
        with pytest.raises(grpc.RpcError):
            stub.GetGame(
                game_service_pb2.GetGameRequest(game_id=run.missing),
                metadata=(("x-request-id", "client-named-42"),),
                timeout=30,
            )
        # A call for an account (the lobby resolves its key).
        seek = competition_pb2_grpc.LobbyServiceStub(server.channel()).Seek(
            competition_pb2.SeekRequest(), metadata=bearer(key), timeout=60
        )
        next(seek)
        seek.cancel()
        # A call over the HTTP listener, with a seat token.
        asyncio.run(_over_http(server.http_url, run.game_id, run.tokens[0]))
        # A refusal's status goes out as the handler aborts, a moment before its access line.
        _wait_for_access(server, "request_id", "client-named-42")
        _wait_for_access(server, "method", "/boneyard.v1.LobbyService/Seek")
        yield run


async def _over_http(url: str, game_id: str, token: str) -> None:
    client = game_service_connect.GameServiceClient(url)
    try:
        await client.get_view(
            game_service_pb2.GetViewRequest(game_id=game_id),
            headers={"authorization": f"Bearer {token}", "x-request-id": "over-http-7"},
        )
    finally:
        await client.close()


def _records(server: ServerProcess) -> list[dict[str, Any]]:
    """The JSON lines of this run's log (the stdout lines saying where it listens are not
    log records)."""
    text = server.log_text()
    lines = text[text.rfind("--- ") :].splitlines()[1:]
    return [json.loads(line) for line in lines if line and not line.startswith("boneyard-server ")]


def _wait_for_access(server: ServerProcess, field: str, value: str) -> None:
    deadline = time.monotonic() + 30
    while not any(r.get(field) == value and "code" in r for r in _records(server)):
        assert time.monotonic() < deadline, f"no access line with {field} {value}"
        time.sleep(0.05)


def _access(played: Played) -> list[dict[str, Any]]:
    return [r for r in _records(played.server) if r["logger"] == "boneyard.access"]


def test_every_line_of_the_log_is_a_json_object_with_time_level_logger_and_message(
    played: Played,
) -> None:
    text = played.server.log_text()
    lines = [
        line
        for line in text[text.rfind("--- ") :].splitlines()[1:]
        if line and not line.startswith("boneyard-server ")
    ]
    assert len(lines) > 10
    for line in lines:
        record = json.loads(line)  # fails the test on a line that is not JSON
        assert isinstance(record, dict)
        assert {"time", "level", "logger", "message"} <= record.keys(), record


def test_each_call_has_an_access_line_with_its_method_code_duration_and_peer(
    played: Played,
) -> None:
    access = _access(played)
    submits = [r for r in access if r["method"] == GAME + "SubmitAction"]
    assert len(submits) == 3
    for record in access:
        assert ACCESS_FIELDS <= record.keys(), record
        assert record["level"] == "INFO"
        assert record["duration_ms"] >= 0
        assert record["peer"].startswith(("ipv4:", "ipv6:"))
    assert {r["code"] for r in submits} == {"OK"}


def test_the_clients_request_id_and_the_refusals_code_are_in_its_access_line(
    played: Played,
) -> None:
    (refused,) = [r for r in _access(played) if r["request_id"] == "client-named-42"]
    assert refused["method"] == GAME + "GetGame"
    assert refused["code"] == "NOT_FOUND"
    assert refused["game"] == played.missing
    assert refused["transport"] == "grpc"
    ids = [r["request_id"] for r in _access(played)]
    assert len(set(ids)) == len(ids)  # a made-up id per call


def test_a_call_for_a_seat_logs_its_game_and_seat(played: Played) -> None:
    submits = [r for r in _access(played) if r["method"] == GAME + "SubmitAction"]
    for record in submits:
        assert record["game"] == played.game_id
        assert record["seat"] in range(4)
    seated = [r for r in _access(played) if r["method"] == GAME + "TakeSeat"]
    assert sorted(r["seat"] for r in seated) == [0, 1, 2, 3]
    (over_http,) = [r for r in _access(played) if r["request_id"] == "over-http-7"]
    assert over_http["transport"] == "http"
    assert over_http["method"] == GAME + "GetView"
    assert (over_http["code"], over_http["game"], over_http["seat"]) == ("OK", played.game_id, 0)


def test_a_call_for_an_account_logs_its_name(played: Played) -> None:
    (seek,) = [r for r in _access(played) if r["method"] == "/boneyard.v1.LobbyService/Seek"]
    assert seek["account"] == played.account
    assert seek["code"] == "CANCELLED"


def test_no_seat_token_or_api_key_is_in_the_log(played: Played) -> None:
    text = played.server.log_text()
    for secret in (*played.tokens, played.key):
        assert secret not in text


def test_an_internal_answer_quotes_the_request_id_its_log_line_carries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """In-process: the id an INTERNAL answer names is the call's, the one on its lines."""
    caplog.set_level(logging.ERROR, logger="boneyard.server.transport.pipeline")
    for metadata in ((("x-request-id", "named-by-client"),), ()):
        with logs.call_scope(metadata) as fields:
            refusal = refusal_for(RuntimeError("a bug"), GAME + "GetGame", metadata)
            code, message = refusal.code, refusal.message
            record = caplog.records[-1]
            line = json.loads(logs.JsonFormatter().format(record))
        assert code == grpc.StatusCode.INTERNAL
        assert fields.request_id in message
        assert line["request_id"] == fields.request_id
        assert fields.request_id in line["message"]
    assert "named-by-client" in caplog.text


def test_an_unknown_log_format_is_refused_at_start(tmp_path: Path) -> None:
    server = ServerProcess.start(
        tmp_path / "bad.log",
        f"sqlite:///{tmp_path / 'bad.db'}",
        extra_args=["--log-format", "yaml"],
        wait=False,
    )
    try:
        assert server.proc.wait(timeout=60) == 2
        assert "invalid choice: 'yaml'" in server.log_text()
    finally:
        server.kill()


# --- stderr as a whole: what gRPC's C core writes there is JSON too ----------------------

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _stderr_records(path: Path) -> list[dict[str, Any]]:
    """Every line of a server's stderr, each parsed as JSON (fails on one that is not)."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert isinstance(record, dict), line
        assert {"time", "level", "logger", "message"} <= record.keys(), line
        records.append(record)
    return records


def _handshake_failures(path: Path) -> list[dict[str, Any]]:
    return [
        r
        for r in _stderr_records(path)
        if r["logger"] == "grpc.core" and "Handshake failed" in r["message"]
    ]


@needs_openssl
def test_every_stderr_line_is_json_a_failed_tls_handshake_included(tmp_path: Path) -> None:
    """A TLS server in JSON, reached in the clear (by a gRPC client and by a bare HTTP
    request): gRPC's C core writes its handshake failures to stderr itself; they come out as
    records of the log, with the rest, and the stderr of the whole run is JSON line by line."""
    cert, key = self_signed(tmp_path)
    errors = tmp_path / "stderr.log"
    with ServerProcess.start(
        tmp_path / "server.log",
        f"sqlite:///{tmp_path / 'tls.db'}",
        extra_args=["--tls-cert", str(cert), "--tls-key", str(key), "--log-format", "json"],
        env=clean_env(),
        wait=False,
        stderr_path=errors,
    ) as server:
        server.wait_for_line()
        with grpc.insecure_channel(server.address) as plain:
            with pytest.raises(grpc.RpcError) as refused:
                game_service_pb2_grpc.GameServiceStub(plain).ListGames(
                    game_service_pb2.ListGamesRequest(), timeout=30
                )
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        with socket.create_connection((server.host, server.port), timeout=30) as bare:
            bare.sendall(b"GET / HTTP/1.1\r\nHost: boneyard\r\n\r\n")
            bare.recv(1024)  # the server hangs up
        deadline = time.monotonic() + 60
        while not _handshake_failures(errors):
            assert time.monotonic() < deadline, errors.read_text()
            time.sleep(0.1)
        assert server.terminate(timeout=60) == 0
    records = _stderr_records(errors)
    (failure, *_) = _handshake_failures(errors)
    assert failure["level"] in {"DEBUG", "INFO", "WARNING", "ERROR"}
    assert re.fullmatch(r"\S+\.cc:\d+", failure["origin"]), failure
    assert any(r["message"] == "stopped" for r in records)  # the run's last lines are there


def test_a_server_that_cannot_start_says_why_in_json(tmp_path: Path) -> None:
    errors = tmp_path / "stderr.log"
    server = ServerProcess.start(
        tmp_path / "server.log",
        f"sqlite:///{tmp_path / 'never.db'}",
        extra_args=["--tls-cert", str(tmp_path / "cert.pem"), "--log-format", "json"],
        env=clean_env(),
        wait=False,
        stderr_path=errors,
    )
    try:
        assert server.proc.wait(timeout=60) == 1
    finally:
        server.kill()
    (why,) = [r for r in _stderr_records(errors) if r["level"] == "CRITICAL"]
    assert "--tls-cert and --tls-key go together" in why["message"]
