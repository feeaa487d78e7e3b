"""Every call of the shipped Python clients that names a game carries the game's id in the
``boneyard-game`` metadata (``GAME_HEADER``), where a load balancer hashes on it
(docs/scaling.md); calls that name no game carry none.

The server here records the metadata of every call it receives (a server interceptor, before
any handler) and answers UNIMPLEMENTED: what is checked is what went over the wire.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from boneyard.api.v1 import actions_pb2
from boneyard.clients.api import GAME_HEADER, Client
from boneyard.clients.archive_cli import ArchiveClient

GAME = "0a1b2c3d-game-header-test"


class _Recorder(grpc.ServerInterceptor):
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []
        self._lock = threading.Lock()

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = handler_call_details.method  # type: ignore[attr-defined]
        metadata = dict(handler_call_details.invocation_metadata)  # type: ignore[attr-defined]
        with self._lock:
            self.calls.append((method.rsplit("/", 1)[-1], metadata))
        return None  # no handler: UNIMPLEMENTED


@pytest.fixture
def recorded() -> Iterator[tuple[str, _Recorder]]:
    recorder = _Recorder()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), interceptors=[recorder])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", recorder
    finally:
        server.stop(None)


def _refused(call: Callable[[], Any]) -> None:
    """Make the call (reading a stream to its first message); UNIMPLEMENTED is expected."""
    with pytest.raises(grpc.RpcError) as caught:
        answer = call()
        if isinstance(answer, Iterator):
            next(answer)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED  # type: ignore[attr-defined]


def test_every_call_about_a_game_names_it_in_the_game_header(
    recorded: tuple[str, _Recorder],
) -> None:
    address, recorder = recorded
    play = actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=27))
    with Client(address) as client, ArchiveClient(address) as archive:
        _refused(lambda: client.game(GAME))
        _refused(lambda: client.take_seat(GAME, "ann"))
        _refused(lambda: client.view(GAME, "token"))
        _refused(lambda: client.view(GAME))
        _refused(lambda: client.submit(GAME, "token", 7, play))
        _refused(lambda: client.resign(GAME, "token", 7))
        _refused(lambda: client.leave_seat(GAME, "token"))
        _refused(lambda: client.watch(GAME, "token", 3))
        _refused(lambda: archive.record(GAME))
    methods = [method for method, _ in recorder.calls]
    assert methods == [
        "GetGame", "TakeSeat", "GetView", "GetView", "SubmitAction", "SubmitAction",
        "LeaveSeat", "WatchGame", "GetRecord",
    ]  # fmt: skip
    for method, metadata in recorder.calls:
        assert metadata.get(GAME_HEADER) == GAME, (method, metadata)
    # The header rides beside the seat's credentials, never instead of them.
    tokens = [metadata.get("authorization") for method, metadata in recorder.calls]
    assert tokens == [None, None, "Bearer token", None, *["Bearer token"] * 4, None]


def test_calls_about_no_one_game_carry_no_game_header(recorded: tuple[str, _Recorder]) -> None:
    address, recorder = recorded
    with Client(address) as client:
        _refused(lambda: client.create_game("texas42"))
        _refused(lambda: client.presets())
        _refused(lambda: list(client.games()))
        _refused(lambda: client.watch_turns("key", ["g1", "g2"]))
    assert [method for method, _ in recorder.calls] == [
        "CreateGame",
        "ListPresets",
        "ListGames",
        "WatchTurns",
    ]
    assert all(GAME_HEADER not in metadata for _, metadata in recorder.calls)
