"""The live lobby (issue 33): ``GameService.WatchLobby`` pushes the games a lobby shows (open
and in play) and then each change, with no polling: a game created by another client appears,
a seat taken shows, a full table moves to "in play", a finished game leaves. Over gRPC and
Connect, through the one pipeline (its stream quota), and across two server processes on one
PostgreSQL database. Every wait has a generous deadline: nothing here measures speed.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from api_helpers import BACKENDS, Client, RunningServer, fresh_database
from connectrpc.protocol import ProtocolType

from boneyard.api.v1 import (
    actions_pb2,
    game_pb2,
    game_service_connect,
    game_service_pb2,
    game_service_pb2_grpc,
)
from boneyard.server.quotas import Quotas

WAIT = 10.0
"""Seconds a change may take to reach a lobby before the test fails (it takes milliseconds)."""

Games = dict[str, game_pb2.GameSummary]


class Lobby:
    """A WatchLobby stream read in a thread of its own: the games it shows now."""

    def __init__(self, messages: Iterator[game_service_pb2.WatchLobbyResponse], cancel: Callable[[], Any]) -> None:
        self.games: Games = {}
        self.messages: list[game_service_pb2.WatchLobbyResponse] = []
        self.error: BaseException | None = None
        self._cancel = cancel
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(messages,), daemon=True)
        self._thread.start()

    @classmethod
    def over_grpc(cls, address: str, **request: Any) -> Lobby:
        channel = grpc.insecure_channel(address)
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        call = stub.WatchLobby(game_service_pb2.WatchLobbyRequest(**request), timeout=300)

        def cancel() -> None:
            call.cancel()
            channel.close()

        return cls(call, cancel)

    def _read(self, messages: Iterator[game_service_pb2.WatchLobbyResponse]) -> None:
        try:
            for message in messages:
                with self._changed:
                    if message.reset:
                        self.games.clear()
                    for game in message.games:
                        self.games[game.game_id] = game
                    for gone in message.removed_game_ids:
                        self.games.pop(gone, None)
                    self.messages.append(message)
                    self._changed.notify_all()
        except Exception as error:  # noqa: BLE001 - the test looks at it
            with self._changed:
                self.error = error
                self._changed.notify_all()

    def wait_for(self, what: str, holds: Callable[[Games], bool]) -> Games:
        with self._changed:
            self._changed.wait_for(lambda: holds(self.games) or self.error is not None, WAIT)
            assert holds(self.games), f"{what}: not within {WAIT} s (error {self.error!r}); the lobby holds {self.games}"
            return dict(self.games)

    def wait_error(self) -> BaseException:
        with self._changed:
            self._changed.wait_for(lambda: self.error is not None, WAIT)
            assert self.error is not None, "the stream did not end"
            return self.error

    def close(self) -> None:
        self._cancel()
        self._thread.join(WAIT)


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with fresh_database(request.param, request, tmp_path_factory) as url:
        running = RunningServer(url, http=True)
        try:
            yield running
        finally:
            running.close()


@pytest.fixture
def client(server: RunningServer) -> Iterator[Client]:
    made = Client(server.address)
    yield made
    made.close()


@pytest.fixture
def lobby(server: RunningServer) -> Iterator[Lobby]:
    watching = Lobby.over_grpc(server.address)
    watching.wait_for("the first message", lambda games: bool(watching.messages))
    yield watching
    watching.close()


def _status(games: Games, game_id: str) -> int | None:
    game = games.get(game_id)
    return game.status if game is not None else None


def _resign(client: Client, table: Any) -> None:
    view = client.view(table, 0)
    client.submit(table, 0, actions_pb2.Action(resign=actions_pb2.Resign()), view.version)


def test_the_lobby_starts_with_the_open_and_playing_games(server: RunningServer, client: Client) -> None:
    waiting = client.create("texas42", name="waiting")
    playing = client.seated("moon")
    over = client.seated("texas42")
    _resign(client, over)
    watching = Lobby.over_grpc(server.address)
    try:
        games = watching.wait_for("the first message", lambda games: bool(watching.messages))
        first = watching.messages[0]
        assert first.reset and not first.removed_game_ids
        assert _status(games, waiting.game_id) == game_pb2.GAME_STATUS_OPEN
        assert _status(games, playing.game_id) == game_pb2.GAME_STATUS_PLAYING
        assert over.game_id not in games
        assert games[waiting.game_id] == client.game(waiting.game_id)
    finally:
        watching.close()


def test_a_game_created_by_another_client_appears_in_an_open_lobby_within_a_second(
    lobby: Lobby, client: Client
) -> None:
    table = client.create("texas42", name="new table")
    games = lobby.wait_for("the new game", lambda games: table.game_id in games)
    assert games[table.game_id].name == "new table"
    assert games[table.game_id].status == game_pb2.GAME_STATUS_OPEN


def test_a_seat_taken_shows_in_the_lobby(lobby: Lobby, client: Client) -> None:
    table = client.create("texas42")
    lobby.wait_for("the new game", lambda games: table.game_id in games)
    client.take_seat(table.game_id, 2, "Alice")
    lobby.wait_for(
        "seat 2 taken by Alice",
        lambda games: table.game_id in games and games[table.game_id].seats[2].player_name == "Alice",
    )


def test_a_full_table_moves_from_open_to_playing(lobby: Lobby, client: Client) -> None:
    table = client.seated("texas42")
    lobby.wait_for(
        "the game in play",
        lambda games: _status(games, table.game_id) == game_pb2.GAME_STATUS_PLAYING,
    )


def test_a_finished_game_leaves_the_lobby(lobby: Lobby, client: Client) -> None:
    table = client.seated("texas42")
    lobby.wait_for("the game in play", lambda games: table.game_id in games)
    _resign(client, table)
    lobby.wait_for("the game gone", lambda games: table.game_id not in games)
    assert any(table.game_id in m.removed_game_ids for m in lobby.messages)


def test_an_open_lobby_drops_a_game_once_it_is_in_play(server: RunningServer, client: Client) -> None:
    watching = Lobby.over_grpc(server.address, statuses=[game_pb2.GAME_STATUS_OPEN])
    try:
        table = client.create("texas42")
        watching.wait_for("the new game", lambda games: table.game_id in games)
        for seat in range(table.players):
            client.take_seat(table.game_id, seat, f"p{seat}")
        watching.wait_for("the full game gone", lambda games: table.game_id not in games)
        assert all(g.status == game_pb2.GAME_STATUS_OPEN for g in watching.games.values())
    finally:
        watching.close()


def test_a_lobby_holds_at_most_max_games_of_a_status_the_oldest(server: RunningServer, client: Client) -> None:
    watching = Lobby.over_grpc(server.address, statuses=[game_pb2.GAME_STATUS_OPEN], max_games=1)
    try:
        first = watching.wait_for("the first message", lambda games: bool(watching.messages))
        assert len(first) <= 1
        table = client.create("texas42")
        # Older open games fill the one place: the new one is not shown ...
        if first:
            client.create("texas42")
            (oldest,) = first
            for seat in range(4):
                client.take_seat(oldest, seat, f"p{seat}")
            # ... until the oldest leaves: then the next oldest takes its place.
            watching.wait_for("the next oldest shown", lambda games: len(games) == 1 and oldest not in games)
        else:
            watching.wait_for("the new game", lambda games: table.game_id in games)
        assert len(watching.games) == 1
    finally:
        watching.close()


def test_a_lobby_of_finished_games_is_refused(server: RunningServer) -> None:
    watching = Lobby.over_grpc(server.address, statuses=[game_pb2.GAME_STATUS_FINISHED])
    try:
        error = watching.wait_error()
        assert isinstance(error, grpc.RpcError)
        assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    finally:
        watching.close()


def test_the_lobby_over_connect_shows_a_new_game(server: RunningServer, client: Client) -> None:
    """The same stream through the HTTP listener (Connect), as the web app reads it."""
    loop = asyncio.new_event_loop()
    seen: list[game_service_pb2.WatchLobbyResponse] = []

    async def watch(game_made: threading.Event, created: list[str]) -> None:
        async with game_service_connect.GameServiceClient(
            server.http_address, protocol=ProtocolType.CONNECT
        ) as lobby:
            messages = lobby.watch_lobby(game_service_pb2.WatchLobbyRequest())
            try:
                async for message in messages:
                    seen.append(message)
                    if len(seen) == 1:
                        game_made.set()
                    if any(g.name == created[0] for g in message.games):
                        break
            finally:
                await messages.aclose()

    game_made = threading.Event()
    created = [f"over connect {uuid.uuid4().hex[:8]}"]
    thread = threading.Thread(
        target=lambda: loop.run_until_complete(asyncio.wait_for(watch(game_made, created), WAIT * 3)),
        daemon=True,
    )
    thread.start()
    try:
        assert game_made.wait(WAIT * 3), "no first message over Connect"
        assert seen[0].reset
        table = client.create("moon", name=created[0])
        thread.join(WAIT * 3)
        assert not thread.is_alive()
        assert any(g.game_id == table.game_id for m in seen[1:] for g in m.games)
    finally:
        thread.join(WAIT)
        loop.close()


def test_the_lobby_is_one_of_a_clients_open_streams(tmp_path_factory: pytest.TempPathFactory) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('lobby-quota') / 'boneyard.db'}"
    running = RunningServer(url, Quotas(streams_per_peer=1))
    try:
        first = Lobby.over_grpc(running.address)
        first.wait_for("the first message", lambda games: bool(first.messages))
        second = Lobby.over_grpc(running.address)
        error = second.wait_error()
        assert isinstance(error, grpc.RpcError)
        assert error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "streams_per_peer" in str(error.trailing_metadata()) or "open streams" in error.details()
        first.close()
        second.close()
    finally:
        running.close()


def test_the_lobby_ends_unavailable_when_the_server_drains(tmp_path_factory: pytest.TempPathFactory) -> None:
    from boneyard.server.ops.drain import STREAM_ENDED, Grace

    url = f"sqlite:///{tmp_path_factory.mktemp('lobby-drain') / 'boneyard.db'}"
    running = RunningServer(url)
    watching = Lobby.over_grpc(running.address)
    try:
        watching.wait_for("the first message", lambda games: bool(watching.messages))
        running.run(running.app.shut_down(running.server, Grace(5.0)))
        error = watching.wait_error()
        assert isinstance(error, grpc.RpcError)
        assert (error.code(), error.details()) == (grpc.StatusCode.UNAVAILABLE, STREAM_ENDED)
    finally:
        watching.close()
        running.loop.call_soon_threadsafe(running.loop.stop)


@pytest.mark.postgres
def test_a_game_created_and_seated_through_another_server_process_appears_in_the_lobby(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Two servers on one PostgreSQL database: the lobby of one shows what is done on the other
    (the writer's and the seats' notifications)."""
    with fresh_database("postgresql", request, tmp_path_factory) as url:
        here, there = RunningServer(url), RunningServer(url)
        watching = Lobby.over_grpc(here.address)
        elsewhere = Client(there.address)
        try:
            watching.wait_for("the first message", lambda games: bool(watching.messages))
            table = elsewhere.create("texas42", name=f"elsewhere {uuid.uuid4().hex[:6]}")
            watching.wait_for("the game made elsewhere", lambda games: table.game_id in games)
            elsewhere.take_seat(table.game_id, 1, "Bob")
            watching.wait_for(
                "the seat taken elsewhere",
                lambda games: games[table.game_id].seats[1].player_name == "Bob",
            )
            for seat in (0, 2, 3):
                table.tokens[seat] = elsewhere.take_seat(table.game_id, seat, f"p{seat}").seat_token
            watching.wait_for(
                "the game in play",
                lambda games: _status(games, table.game_id) == game_pb2.GAME_STATUS_PLAYING,
            )
            _resign(elsewhere, table)
            watching.wait_for("the game over elsewhere gone", lambda games: table.game_id not in games)
        finally:
            watching.close()
            elsewhere.close()
            there.close()
            here.close()



