"""The HTTP listener answers every request with a status and holds no slow client for ever
(issue 31, defects 4 and 5), against a real ``boneyard-server`` process, over raw sockets (so
that the bytes are exactly the ones an outside run sent).

An outside run found: a header value that is not UTF-8 answered 500 / ``unknown`` with
Python's exception text and a 40-line traceback in the log; ``application/grpc+proto`` answered
HTTP 200 with ``grpc-status: 2`` (UNKNOWN); a Connect envelope flagged compressed with no
encoding named answered ``internal``; 400 connections that never finished their request still
open after 40 s; bodies over the limit often answered with a reset connection.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from process_helpers import ServerProcess

from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc

HEADER_TIMEOUT = 2.0
BODY_TIMEOUT = 2.0
SLACK = 20.0
"""Seconds beyond a timeout that a closed connection may take to show, on a busy machine."""
LISTGAMES = "/boneyard.v1.GameService/ListGames"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    path = tmp_path_factory.mktemp("door")
    with ServerProcess.start(
        path / "server.log",
        f"sqlite:///{path / 'boneyard.db'}",
        http_listen="127.0.0.1:0",
        extra_args=[
            "--http-header-timeout",
            str(HEADER_TIMEOUT),
            "--http-body-timeout",
            str(BODY_TIMEOUT),
            "--http-max-connections-per-client",
            "300",
        ],
    ) as process:
        yield process


def port_of(server: ServerProcess) -> int:
    return int(server.http_url.rsplit(":", 1)[1])


def exchange(server: ServerProcess, data: bytes, wait: float = 30.0) -> bytes:
    """Send ``data`` on a new connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", port_of(server)), timeout=wait) as sock:
        sock.sendall(data)
        answer = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                raise AssertionError(f"reset after {answer[:200]!r}") from None
            if not chunk:
                return answer
            answer += chunk


def post(path: str, content_type: str, body: bytes, *headers: bytes) -> bytes:
    head = [
        f"POST {path} HTTP/1.1".encode(),
        b"Host: boneyard",
        f"Content-Type: {content_type}".encode(),
        f"Content-Length: {len(body)}".encode(),
        b"Connection: close",
        *headers,
    ]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


def status_line(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def header(answer: bytes, name: bytes) -> bytes | None:
    head = answer.split(b"\r\n\r\n", 1)[0]
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip()
    return None


def connect_error(answer: bytes) -> dict[str, object]:
    body = answer.split(b"\r\n\r\n", 1)[1]
    if header(answer, b"transfer-encoding") == b"chunked":
        size, _, rest = body.partition(b"\r\n")
        body = rest[: int(size, 16)]
    return json.loads(body)


def log_of(server: ServerProcess) -> str:
    return server.log_text()


# ---------------------------------------------------------------- defect 4


def test_a_header_value_that_is_not_utf8_is_invalid_argument_not_500(
    server: ServerProcess,
) -> None:
    before = log_of(server)
    answer = exchange(server, post(LISTGAMES, "application/json", b"{}", b"x-request-id: \xe9"))
    assert status_line(answer) == 400
    error = connect_error(answer)
    assert error["code"] == "invalid_argument"
    assert "x-request-id" in str(error["message"]) and "UTF-8" in str(error["message"])
    assert "codec can't decode" not in answer.decode("latin-1")
    # One line in the log, no traceback.
    added = log_of(server)[len(before) :]
    assert "not text (UTF-8)" in added and "Traceback" not in added


def test_grpc_over_http1_is_refused_unimplemented_in_its_own_headers_not_unknown(
    server: ServerProcess,
) -> None:
    answer = exchange(server, post(LISTGAMES, "application/grpc+proto", b"\x00\x00\x00\x00\x00"))
    assert status_line(answer) == 200
    assert header(answer, b"grpc-status") == b"12"  # UNIMPLEMENTED
    assert b"HTTP/2" in (header(answer, b"grpc-message") or b"")


def test_grpc_over_http2_on_the_http_listener_is_served(server: ServerProcess) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port_of(server)}") as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        stub.ListGames(game_service_pb2.ListGamesRequest(), timeout=30)
        with pytest.raises(grpc.RpcError) as caught:
            stub.GetGame(game_service_pb2.GetGameRequest(game_id="nope"), timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_connect_envelope_flagged_compressed_without_an_encoding_is_invalid_argument(
    server: ServerProcess,
) -> None:
    answer = exchange(
        server,
        post("/boneyard.v1.GameService/WatchGame", "application/connect+proto", b"\x01\x00\x00\x00\x00"),
    )
    assert status_line(answer) == 200
    body = answer.split(b"\r\n\r\n", 1)[1].split(b"\r\n", 1)[1]
    assert body[0] == 2  # the end of the stream, with its error
    error = json.loads(body[5 : 5 + int.from_bytes(body[1:5], "big")])["error"]
    assert error["code"] == "invalid_argument" and "compressed" in error["message"]


def test_an_envelope_whose_length_lies_is_invalid_argument(server: ServerProcess) -> None:
    answer = exchange(
        server,
        post(
            "/boneyard.v1.GameService/WatchGame",
            "application/grpc-web+proto",
            b"\x00\x00\x00\x00\x09abc",
        ),
    )
    assert header(answer, b"grpc-status") == b"3"  # INVALID_ARGUMENT


def test_a_body_over_its_methods_limit_is_answered_resource_exhausted_not_reset(
    server: ServerProcess,
) -> None:
    body = b"{" + b" " * (300 * 1024) + b"}"
    answer = exchange(server, post(LISTGAMES, "application/json", body))
    assert status_line(answer) == 429
    error = connect_error(answer)
    assert error["code"] == "resource_exhausted" and "at most 65536 bytes" in str(error["message"])


def test_a_content_type_the_door_does_not_serve_gets_a_status(server: ServerProcess) -> None:
    answer = exchange(server, post(LISTGAMES, "text/plain", b"hello"))
    assert status_line(answer) == 415


# ---------------------------------------------------------------- defect 5


def _hold(server: ServerProcess, data: bytes, closed: dict[int, float], index: int) -> None:
    """Send ``data`` and never finish; note when the server closed the connection."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port_of(server)), timeout=60) as sock:
            sock.sendall(data)
            while sock.recv(65536):
                pass
    except OSError:
        pass
    closed[index] = time.monotonic() - started


def test_slow_clients_that_never_finish_their_request_are_cut_off_while_health_answers(
    server: ServerProcess,
) -> None:
    unfinished_headers = b"POST " + LISTGAMES.encode() + b" HTTP/1.1\r\nHost: slow\r\nX-Wait"
    # Headers whole, a body of 100 bytes promised and 1 sent.
    unfinished_body = post(LISTGAMES, "application/json", b"{").replace(
        b"Content-Length: 1", b"Content-Length: 100"
    )
    closed: dict[int, float] = {}
    threads = [
        threading.Thread(
            target=_hold,
            args=(server, unfinished_headers if i % 2 else unfinished_body, closed, i),
            daemon=True,
        )
        for i in range(200)
    ]
    for thread in threads:
        thread.start()
    # Meanwhile the server answers its health checks, on both doors.
    time.sleep(0.5)
    with urllib.request.urlopen(f"{server.http_url}/healthz", timeout=30) as answer:
        assert json.loads(answer.read())["status"] == "SERVING"
    assert server.health() == 1  # SERVING
    for thread in threads:
        thread.join(timeout=HEADER_TIMEOUT + BODY_TIMEOUT + SLACK)
    assert len(closed) == 200, f"{200 - len(closed)} slow connections still open"
    assert max(closed.values()) < max(HEADER_TIMEOUT, BODY_TIMEOUT) + SLACK
    assert min(closed.values()) >= min(HEADER_TIMEOUT, BODY_TIMEOUT) * 0.9


def test_a_client_holding_too_many_connections_has_its_next_closed(tmp_path: Path) -> None:
    with ServerProcess.start(
        tmp_path / "server.log",
        f"sqlite:///{tmp_path / 'boneyard.db'}",
        http_listen="127.0.0.1:0",
        extra_args=["--http-max-connections-per-client", "4"],
    ) as process:
        held = [socket.create_connection(("127.0.0.1", port_of(process)), timeout=30) for _ in range(4)]
        try:
            time.sleep(0.3)  # accepted
            with socket.create_connection(("127.0.0.1", port_of(process)), timeout=30) as extra:
                extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                try:
                    assert extra.recv(100) == b""
                except ConnectionResetError:
                    pass
        finally:
            for sock in held:
                sock.close()
        # With them gone, the client is served again.
        time.sleep(0.3)
        with urllib.request.urlopen(f"{process.http_url}/healthz", timeout=30) as answer:
            assert answer.status == 200
