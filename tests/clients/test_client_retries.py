"""The client's unary retries come from its channel's service config (``RETRY_SERVICE_CONFIG``):
a call answered UNAVAILABLE is tried again, up to 5 attempts, and no other code is retried.

The server here is a real process that refuses the first N calls of GetGame with a status of
our choosing and answers the next, printing each attempt: the count is what the client's
channel did, not a timing.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from boneyard.clients.api import Client, refusal

FLAKY_SERVER = textwrap.dedent(
    """
    import sys
    from concurrent import futures

    import grpc

    from boneyard.api.v1 import game_service_pb2

    failures, code = int(sys.argv[1]), grpc.StatusCode[sys.argv[2]]
    attempts = 0

    def get_game(request, context):
        global attempts
        attempts += 1
        print(f"attempt {attempts}", flush=True)
        if attempts <= failures:
            context.abort(code, f"refused attempt {attempts}")
        return game_service_pb2.GetGameResponse()

    def watch_game(request, context):
        global attempts
        attempts += 1
        print(f"attempt {attempts}", flush=True)
        context.abort(code, f"refused attempt {attempts}")
        yield  # (a stream)

    handler = grpc.method_handlers_generic_handler(
        "boneyard.v1.GameService",
        {
            "GetGame": grpc.unary_unary_rpc_method_handler(
                get_game,
                request_deserializer=game_service_pb2.GetGameRequest.FromString,
                response_serializer=game_service_pb2.GetGameResponse.SerializeToString,
            ),
            "WatchGame": grpc.unary_stream_rpc_method_handler(
                watch_game,
                request_deserializer=game_service_pb2.WatchGameRequest.FromString,
                response_serializer=game_service_pb2.WatchGameResponse.SerializeToString,
            ),
        },
    )
    server = grpc.server(futures.ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"port {port}", flush=True)
    server.wait_for_termination()
    """
)


class Flaky:
    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc = proc
        self.address = f"127.0.0.1:{port}"

    def attempts(self) -> int:
        self.proc.kill()
        out, _ = self.proc.communicate(timeout=30)
        return sum(1 for line in out.splitlines() if line.startswith("attempt "))


@pytest.fixture
def flaky(tmp_path: Path) -> Iterator[Callable[[int, str], Flaky]]:
    started: list[subprocess.Popen[str]] = []

    def start(failures: int, code: str) -> Flaky:
        script = tmp_path / "flaky.py"
        script.write_text(FLAKY_SERVER)
        proc = subprocess.Popen(
            [sys.executable, str(script), str(failures), code],
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("port "), line
        return Flaky(proc, int(line.split()[1]))

    yield start
    for proc in started:
        proc.kill()
        proc.wait(timeout=30)


def test_a_call_answered_unavailable_is_retried_by_the_channel(flaky: Callable[[int, str], Flaky]) -> None:
    server = flaky(2, "UNAVAILABLE")
    with Client(server.address) as client:
        client.game(str(uuid.uuid4()))
    assert server.attempts() == 3


def test_the_channel_gives_up_after_five_attempts(flaky: Callable[[int, str], Flaky]) -> None:
    server = flaky(10, "UNAVAILABLE")
    with Client(server.address) as client, pytest.raises(grpc.RpcError) as caught:
        client.game(str(uuid.uuid4()))
    assert refusal(caught.value).code == grpc.StatusCode.UNAVAILABLE
    assert server.attempts() == 5


def test_a_refusal_of_another_code_is_not_retried(flaky: Callable[[int, str], Flaky]) -> None:
    server = flaky(1, "ABORTED")
    with Client(server.address) as client, pytest.raises(grpc.RpcError) as caught:
        client.game(str(uuid.uuid4()))
    assert refusal(caught.value).code == grpc.StatusCode.ABORTED
    assert refusal(caught.value).reason == ""  # not the server's ErrorInfo: none was sent
    assert server.attempts() == 1


def test_a_stream_is_not_retried_by_the_channel(flaky: Callable[[int, str], Flaky]) -> None:
    # A stream's caller reconnects itself (reading the view again first): a retry behind its
    # back could leave a bot waiting on a stream for a turn it already has.
    server = flaky(10, "UNAVAILABLE")
    with Client(server.address) as client, pytest.raises(grpc.RpcError) as caught:
        list(client.watch(str(uuid.uuid4()), None, 0))
    assert refusal(caught.value).code == grpc.StatusCode.UNAVAILABLE
    assert server.attempts() == 1
