"""A seat taken in a process sharing PostgreSQL is announced to every process (``s:<game>``),
its own too. The other processes drop their copy of the game; the one that seated the player
holds the seat already, and dropping its copy made it read the game's log again at every
table's start (issue 37's balancer run: 2 to 6 games read back per 100 actions).
"""

from __future__ import annotations

import asyncio
import re
import urllib.request
from pathlib import Path

import pytest
from process_helpers import ServerProcess, bearer, create_game, fresh_pg_database, seat_all

from boneyard.api.v1 import game_service_pb2, view_pb2
from boneyard.records.hashing import hash_token
from boneyard.server.errors import PreconditionFailed
from boneyard.server.games.app import GameApp, new_seat_token
from boneyard.server.games.host import GameHost
from boneyard.server.store.repository import EventStore
from boneyard.server.store.writer import Writer

LOADED = re.compile(r"^boneyard_games_loaded_total (\S+)$", re.MULTILINE)


def _host(tmp_path: Path) -> tuple[GameApp, GameHost, Writer]:
    store = EventStore.open(f"sqlite:///{tmp_path / 'seats.db'}", migrate=True)
    app = GameApp(store)
    writer = Writer(store.engine)
    return app, GameHost(store, writer, publish=lambda game_id, to_act=None: None, seat_notices=True), writer


def test_a_seat_taken_here_is_heard_as_this_processs_own_once(tmp_path: Path) -> None:
    app, host, writer = _host(tmp_path)
    try:
        game_id, _ = app.create_game("texas42", {}, "table")

        async def seat() -> None:
            await host.take_seat(game_id, 0, "ann", new_seat_token())
            await host.take_seat(game_id, 1, "bob", new_seat_token())

        asyncio.run(seat())
        assert host.own_seat_notice(game_id)
        assert host.own_seat_notice(game_id)
        assert not host.own_seat_notice(game_id)  # a third notice is another process's
    finally:
        writer.close()


def test_a_seat_write_that_fails_expects_no_notice(tmp_path: Path) -> None:
    app, host, writer = _host(tmp_path)
    try:
        game_id, _ = app.create_game("texas42", {}, "table")

        async def race() -> None:
            await host.get(game_id)  # the copy here, before seat 0 is taken elsewhere
            app.store.take_seat(game_id, 0, "elsewhere", hash_token(new_seat_token()))
            with pytest.raises(PreconditionFailed):
                await host.take_seat(game_id, 0, "ann", new_seat_token())

        asyncio.run(race())
        assert not host.own_seat_notice(game_id)
    finally:
        writer.close()


def test_without_notices_nothing_is_counted(tmp_path: Path) -> None:
    store = EventStore.open(f"sqlite:///{tmp_path / 'seats.db'}", migrate=True)
    app = GameApp(store)
    writer = Writer(store.engine)
    host = GameHost(store, writer, publish=lambda game_id, to_act=None: None)
    try:
        game_id, _ = app.create_game("texas42", {}, "table")
        asyncio.run(host.take_seat(game_id, 0, "ann", new_seat_token()))
        assert not host.own_seat_notice(game_id)
    finally:
        writer.close()


@pytest.mark.postgres
def test_a_table_seated_and_played_in_one_process_on_postgresql_is_never_read_back(
    postgres_url: str, tmp_path: Path
) -> None:
    with fresh_pg_database(postgres_url, "boneyard_seat_notice") as url:
        server = ServerProcess.start(tmp_path / "server.log", url, metrics_listen="127.0.0.1:0")
        with server:
            stub = server.stub()
            game_id = create_game(stub, marks_to_win=1)
            tokens = seat_all(stub, game_id)
            # Play the hand out: long after the four seats' notices came back to this process.
            while True:
                view = stub.GetView(
                    game_service_pb2.GetViewRequest(game_id=game_id), timeout=30
                ).view
                if view.phase == view_pb2.PHASE_GAME_OVER:
                    break
                seat = view.turn
                mine = stub.GetView(
                    game_service_pb2.GetViewRequest(game_id=game_id),
                    metadata=bearer(tokens[seat]),
                    timeout=30,
                ).view
                stub.SubmitAction(
                    game_service_pb2.SubmitActionRequest(
                        game_id=game_id,
                        expected_version=mine.version,
                        request_id=f"{game_id}-{mine.version}",
                        action=mine.legal_actions[0],
                    ),
                    metadata=bearer(tokens[seat]),
                    timeout=30,
                )
            with urllib.request.urlopen(server.metrics_url, timeout=30) as answer:
                found = LOADED.search(answer.read().decode())
            assert found is not None
            assert float(found[1]) == 0
