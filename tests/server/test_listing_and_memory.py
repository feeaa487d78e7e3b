"""ListGames reads games, it does not play them: the games a page needs that this process does
not hold come back from the log in one trip, and are kept only while there is room, so a
listing never pushes out of memory a game being played (make stress found ListGames pages of
200 unanswered after 30 s under load: one trip per game, each waiting for a worker thread)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc

from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc, rules_pb2
from tests.server.api_helpers import RPC_TIMEOUT, RunningServer
from tests.server.process_helpers import play_one, seat_all

TEXAS = rules_pb2.Ruleset(preset="texas42")


def _create(stub: game_service_pb2_grpc.GameServiceStub) -> str:
    return stub.CreateGame(
        game_service_pb2.CreateGameRequest(rules=TEXAS), timeout=RPC_TIMEOUT
    ).game_id


def test_a_listing_never_pushes_out_a_game_being_played(tmp_path: Path) -> None:
    server = RunningServer(f"sqlite:///{tmp_path / 'list.db'}", max_live_games=3)
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            made = [_create(stub) for _ in range(6)]
            for game_id in made[:3]:  # played again: the last three pushed out
                stub.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=RPC_TIMEOUT)
            held = [g for g in made if server.app.host.held_version(g) is not None]
            page = stub.ListGames(
                game_service_pb2.ListGamesRequest(page_size=6), timeout=RPC_TIMEOUT
            )
            still_held = [g for g in made if server.app.host.held_version(g) is not None]
    finally:
        server.close()
    assert held == made[:3]
    assert [g.game_id for g in page.games] == made  # every game summed up, oldest first
    assert still_held == held


def test_a_listing_keeps_the_games_it_read_while_there_is_room(tmp_path: Path) -> None:
    server = RunningServer(f"sqlite:///{tmp_path / 'list.db'}", max_live_games=3)
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            made = [_create(stub) for _ in range(3)]
            server.run(_evict_all(server))
            page = stub.ListGames(
                game_service_pb2.ListGamesRequest(page_size=3), timeout=RPC_TIMEOUT
            )
            held = [g for g in made if server.app.host.held_version(g) is not None]
    finally:
        server.close()
    assert [g.game_id for g in page.games] == made
    assert held == made


async def _evict_all(server: RunningServer) -> None:
    server.app.host.evict_all()


def test_a_caller_cancelled_while_a_game_loads_leaves_the_others_waiting_for_it_answered(
    tmp_path: Path,
) -> None:
    """A watcher whose deadline passed while its game was read back from the log must not
    cancel the load under the calls waiting for the same game (make stress: ListGames calls
    unanswered for 30 s, each waiting on a load a cancelled WatchGame had started)."""
    server = RunningServer(f"sqlite:///{tmp_path / 'list.db'}")
    try:
        with grpc.insecure_channel(server.address) as channel:
            game_id = _create(game_service_pb2_grpc.GameServiceStub(channel))
        server.run(_evict_all(server))
        got, listed = server.run(_wait_beside_a_cancelled_caller(server, game_id))
    finally:
        server.close()
    assert got == game_id
    assert listed == [game_id]


async def _wait_beside_a_cancelled_caller(
    server: RunningServer, game_id: str
) -> tuple[str, list[str]]:
    cache = server.app.host.cache
    first = asyncio.ensure_future(cache.get(game_id))  # starts the load
    await asyncio.sleep(0)
    second = asyncio.ensure_future(cache.get(game_id))
    page = asyncio.ensure_future(cache.get_many([game_id]))
    await asyncio.sleep(0)
    first.cancel()
    game = await asyncio.wait_for(second, 60)
    listed = await asyncio.wait_for(page, 60)
    return game.id, list(listed)


def test_a_game_played_on_keeps_the_states_of_its_latest_versions_only(tmp_path: Path) -> None:
    # The states behind the latest versions answer watchers catching up; older ones go as
    # the game moves on (a game of hundreds of actions holds the same few).
    server = RunningServer(f"sqlite:///{tmp_path / 'recent.db'}")
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            game_id = _create(stub)
            tokens = seat_all(stub, game_id)
            for _ in range(40):
                assert play_one(stub, game_id, tokens) is not None
            game = server.run(server.app.host.get(game_id))
            version, recent = game.version, sorted(game.recent)
    finally:
        server.close()
    assert version > 40
    assert recent == list(range(version - 16, version + 1))
