"""Quotas (issue 13, defect 6): limits per client address and per account on games created,
open streams and open seeks, and ``--open-games=false``; exceeding one is RESOURCE_EXHAUSTED
with a message that says which limit. A server of its own for each test, with small limits."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import grpc
import pytest

from boneyard.api.v1 import (
    competition_pb2,
    competition_pb2_grpc,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
)
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.quotas import Quotas
from tests.server.api_helpers import RPC_TIMEOUT, RunningServer

Code = grpc.StatusCode
TEXAS = rules_pb2.Ruleset(preset="texas42")


@pytest.fixture
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('quotas') / 'q.db'}"
    server = RunningServer(url, Quotas(games_per_minute=3, streams_per_peer=2, seeks_per_account=1))
    try:
        yield server
    finally:
        server.close()


def _account(server: RunningServer) -> str:
    key = new_api_key()
    server.app.competition.create_account(
        str(uuid.uuid4()), f"a-{uuid.uuid4().hex[:8]}", "bot", key_hash(key)
    )
    return key


def _create(stub: game_service_pb2_grpc.GameServiceStub, key: str | None = None) -> str:
    metadata = [("authorization", f"Bearer {key}")] if key else []
    return stub.CreateGame(
        game_service_pb2.CreateGameRequest(rules=TEXAS), metadata=metadata, timeout=RPC_TIMEOUT
    ).game_id


def test_games_created_by_one_client_a_minute_are_limited(limited: RunningServer) -> None:
    with grpc.insecure_channel(limited.address) as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        for _ in range(3):
            _create(stub)
        with pytest.raises(grpc.RpcError) as caught:
            _create(stub)
    assert caught.value.code() == Code.RESOURCE_EXHAUSTED
    assert "3 games created a minute" in (caught.value.details() or "")


def test_open_streams_of_one_client_are_limited(limited: RunningServer) -> None:
    with grpc.insecure_channel(limited.address) as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        game_id = _create(stub)
        watch = game_service_pb2.WatchGameRequest(game_id=game_id)
        first, second = (stub.WatchGame(watch, timeout=RPC_TIMEOUT) for _ in range(2))
        next(first), next(second)  # both open
        with pytest.raises(grpc.RpcError) as caught:
            next(stub.WatchGame(watch, timeout=RPC_TIMEOUT))
        assert caught.value.code() == Code.RESOURCE_EXHAUSTED
        assert "2 open streams" in (caught.value.details() or "")
        first.cancel()
        deadline = time.monotonic() + 60
        while True:  # the closed stream's place comes free
            try:
                next(stub.WatchGame(watch, timeout=RPC_TIMEOUT))
                break
            except grpc.RpcError as error:
                assert error.code() == Code.RESOURCE_EXHAUSTED and time.monotonic() < deadline
                time.sleep(0.05)
        second.cancel()


def test_open_seeks_of_one_account_are_limited(limited: RunningServer) -> None:
    key = _account(limited)
    metadata = [("authorization", f"Bearer {key}")]
    with grpc.insecure_channel(limited.address) as channel:
        lobby = competition_pb2_grpc.LobbyServiceStub(channel)
        seek = competition_pb2.SeekRequest(rules=rules_pb2.Ruleset(preset="moon"))
        first = lobby.Seek(seek, metadata=metadata, timeout=RPC_TIMEOUT)
        assert next(first).HasField("waiting")
        with pytest.raises(grpc.RpcError) as caught:
            next(lobby.Seek(seek, metadata=metadata, timeout=RPC_TIMEOUT))
        assert caught.value.code() == Code.RESOURCE_EXHAUSTED
        assert "1 open seeks an account" in (caught.value.details() or "")
        first.cancel()


def test_with_open_games_false_only_accounts_create_games(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('closed') / 'c.db'}"
    server = RunningServer(url, Quotas(open_games=False))
    try:
        key = _account(server)
        with grpc.insecure_channel(server.address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            with pytest.raises(grpc.RpcError) as caught:
                _create(stub)
            assert caught.value.code() == Code.UNAUTHENTICATED
            assert _create(stub, key)
    finally:
        server.close()


def test_games_read_back_from_the_log_to_be_listed_a_minute_are_limited(
    tmp_path: pytest.TempPathFactory,
) -> None:
    """ListGames sums up a game this process does not hold by loading it from the log: a page
    of 200 such games cost seconds (make stress found ListGames unanswered after 30 s). Only
    the games not held count, and a page that would pass the limit is refused whole."""
    url = f"sqlite:///{tmp_path / 'loads.db'}"  # type: ignore[operator]
    server = RunningServer(url, Quotas(loads_per_minute=5), max_live_games=1)
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            for _ in range(8):
                _create(stub)  # each evicts the one before: one game held
            listing = game_service_pb2.ListGamesRequest
            held_only = stub.ListGames(listing(page_size=1, status=0), timeout=RPC_TIMEOUT)
            assert len(held_only.games) == 1  # the oldest: not held, one load of five
            with pytest.raises(grpc.RpcError) as caught:
                stub.ListGames(listing(page_size=8), timeout=RPC_TIMEOUT)
            four = stub.ListGames(listing(page_size=4), timeout=RPC_TIMEOUT)
    finally:
        server.close()
    assert caught.value.code() == Code.RESOURCE_EXHAUSTED
    assert "5 games read back from the log to be listed a minute" in (caught.value.details() or "")
    assert len(four.games) == 4  # the refused page counted nothing: 1 + 4 loads of five
