"""The account bot (``boneyard.clients.competitor``) against a real server in this process."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from boneyard.api.v1 import game_pb2
from boneyard.clients.api import Client
from boneyard.clients.competitor import Competitor, GameResult
from boneyard.server.competition.accounts import key_hash, new_api_key
from tests.server.api_helpers import RunningServer


def _account(server: RunningServer, kind: str = "bot") -> tuple[str, str]:
    name, key = f"{kind}-{uuid.uuid4().hex[:8]}", new_api_key()
    server.app.competition.create_account(str(uuid.uuid4()), name, kind, key_hash(key))  # type: ignore[arg-type]
    return name, key


def test_more_games_at_once_than_a_competitor_plays_still_all_end(tmp_path: Path) -> None:
    # An organiser makes five games at once for the same four bots, who each play at most two
    # at a time: every game still ends (they all take the oldest games first).
    server = RunningServer(f"sqlite:///{tmp_path / 'boneyard.db'}")
    try:
        bots = [_account(server) for _ in range(4)]
        organiser = _account(server, "player")[1]
        client = Client(server.address)
        games = []
        for i in range(5):
            seats = bots[i % 4 :] + bots[: i % 4]
            game = client.create_game(
                "texas42",
                {"hand_limit": "1"},
                reservations={s: name for s, (name, _) in enumerate(seats)},
                key=organiser,
            )
            games.append(game.game_id)
        competitors = [
            Competitor(Client(server.address), key, "heuristic", games=5, max_games_at_once=2)
            for _, key in bots
        ]
        done: list[int] = []
        threads = [
            threading.Thread(target=lambda c=c: done.append(len(c.run())), daemon=True)
            for c in competitors
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert done == [5, 5, 5, 5]
        for game_id in games:
            assert client.game(game_id).status == game_pb2.GAME_STATUS_FINISHED
        for c in competitors:
            assert all(r.over for r in c.results)
            c.client.close()
        client.close()
    finally:
        server.close()


def test_a_competitor_with_concurrency_plays_every_game_through_one_turn_stream(
    tmp_path: Path,
) -> None:
    # Five games at once for the same four bots, as before; now each bot follows all of them
    # on its one turn stream, two decisions at a time, and no game has a stream of its own.
    server = RunningServer(f"sqlite:///{tmp_path / 'boneyard.db'}")
    try:
        bots = [_account(server) for _ in range(4)]
        organiser = _account(server, "player")[1]
        client = Client(server.address)
        games = []
        for i in range(5):
            seats = bots[i % 4 :] + bots[: i % 4]
            game = client.create_game(
                "texas42",
                {"hand_limit": "1"},
                reservations={s: name for s, (name, _) in enumerate(seats)},
                key=organiser,
            )
            games.append(game.game_id)
        started: list[str] = []
        competitors = [
            Competitor(
                Client(server.address),
                key,
                "heuristic",
                games=5,
                concurrency=2,
                on_start=lambda a: started.append(a.game_id),
            )
            for _, key in bots
        ]
        done: list[int] = []
        threads = [
            threading.Thread(target=lambda c=c: done.append(len(c.run())), daemon=True)
            for c in competitors
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert done == [5, 5, 5, 5]
        for game_id in games:
            assert client.game(game_id).status == game_pb2.GAME_STATUS_FINISHED
        for c in competitors:
            assert sorted(r.game_id for r in c.results) == sorted(games)
            assert all(r.over and r.error is None for r in c.results)
            c.client.close()
        assert sorted(started) == sorted(games * 4), "each bot told each start once"
        # Only the turn streams played: no WatchGame was ever opened.
        labels = {"grpc_type": "server_stream", "grpc_service": "boneyard.v1.GameService"}
        registry = server.app.metrics.registry
        assert not registry.get_sample_value(
            "grpc_server_started_total", {**labels, "grpc_method": "WatchGame", "transport": "grpc"}
        )
        assert registry.get_sample_value(
            "grpc_server_started_total",
            {**labels, "grpc_type": "bidi_stream", "grpc_service": "boneyard.v1.LobbyService",
             "grpc_method": "PlayTurns", "transport": "grpc"},
        )
        # Every answer came on the turn streams: no SubmitAction was ever called.
        assert not registry.get_sample_value(
            "grpc_server_started_total",
            {"grpc_type": "unary", "grpc_service": "boneyard.v1.GameService",
             "grpc_method": "SubmitAction", "transport": "grpc"},
        )
        client.close()
    finally:
        server.close()


@pytest.mark.parametrize("concurrency", [None, 2], ids=["a bot per game", "one turn stream"])
def test_a_game_counts_as_over_only_once_its_end_was_told(
    tmp_path: Path, concurrency: int | None
) -> None:
    # run() returns as soon as enough games count as over, and a game's thread is not waited
    # for: a command that prints each end (``boneyard bot --key``) and then exits must find
    # every end told by then, however slow the telling.
    server = RunningServer(f"sqlite:///{tmp_path / 'boneyard.db'}")
    try:
        bots = [_account(server) for _ in range(4)]
        organiser = _account(server, "player")[1]
        client = Client(server.address)
        game = client.create_game(
            "texas42",
            {"hand_limit": "1"},
            reservations={s: name for s, (name, _) in enumerate(bots)},
            key=organiser,
        )
        told: list[list[str]] = [[] for _ in bots]

        def slow_tell(into: list[str]) -> Callable[[GameResult], None]:
            def tell(result: GameResult) -> None:
                time.sleep(0.5)
                into.append(result.game_id)

            return tell

        competitors = [
            Competitor(
                Client(server.address),
                key,
                "heuristic",
                games=1,
                concurrency=concurrency,
                on_end=slow_tell(told[i]),
            )
            for i, (_, key) in enumerate(bots)
        ]
        told_when_run_returned: list[list[str]] = [[] for _ in bots]

        def run(i: int) -> None:
            competitors[i].run()
            told_when_run_returned[i] = list(told[i])

        threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert told_when_run_returned == [[game.game_id]] * 4
        for c in competitors:
            assert [r.game_id for r in c.results if r.over] == [game.game_id]
            c.client.close()
        client.close()
    finally:
        server.close()
