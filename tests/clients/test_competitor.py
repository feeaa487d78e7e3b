"""The account bot (``boneyard.clients.competitor``) against a real server in this process."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
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


@dataclass
class Site:
    """A server in this process, its four bot accounts (name, key), an organiser's key and a
    client."""

    server: RunningServer
    bots: list[tuple[str, str]]
    organiser: str
    client: Client

    def games(self, count: int) -> list[str]:
        """``count`` one-hand games the organiser makes at once for the four bots, each game's
        seats turned one further round the table."""
        made = []
        for i in range(count):
            seats = self.bots[i % 4 :] + self.bots[: i % 4]
            game = self.client.create_game(
                "texas42",
                {"hand_limit": "1"},
                reservations={s: name for s, (name, _) in enumerate(seats)},
                key=self.organiser,
            )
            made.append(game.game_id)
        return made

    def competitor(self, key: str, **options: object) -> Competitor:
        """A competitor for the account of ``key``, with a client of its own."""
        return Competitor(Client(self.server.address), key, "heuristic", **options)  # type: ignore[arg-type]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    server = RunningServer(f"sqlite:///{tmp_path / 'boneyard.db'}")
    try:
        bots = [_account(server) for _ in range(4)]
        organiser = _account(server, "player")[1]
        with Client(server.address) as client:
            yield Site(server, bots, organiser, client)
    finally:
        server.close()


def _run_all(competitors: list[Competitor], run: Callable[[int], None]) -> None:
    """``run(i)`` for each competitor at once, each on a thread of its own; wait for them."""
    threads = [
        threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(competitors))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for c in competitors:
        c.client.close()


def _play_every_game(site: Site, competitors: list[Competitor], games: list[str]) -> None:
    """Run the competitors at once until each has played every one of ``games`` to its end."""
    done: list[int] = []
    _run_all(competitors, lambda i: done.append(len(competitors[i].run())))
    assert done == [len(games)] * len(competitors)
    for game_id in games:
        assert site.client.game(game_id).status == game_pb2.GAME_STATUS_FINISHED


def test_more_games_at_once_than_a_competitor_plays_still_all_end(site: Site) -> None:
    # An organiser makes five games at once for the same four bots, who each play at most two
    # at a time: every game still ends (they all take the oldest games first).
    games = site.games(5)
    competitors = [site.competitor(key, games=5, max_games_at_once=2) for _, key in site.bots]
    _play_every_game(site, competitors, games)
    for c in competitors:
        assert all(r.over for r in c.results)


def test_a_competitor_with_concurrency_plays_every_game_through_one_turn_stream(
    site: Site,
) -> None:
    # Five games at once for the same four bots, as before; now each bot follows all of them
    # on its one turn stream, two decisions at a time, and no game has a stream of its own.
    games = site.games(5)
    started: list[str] = []
    competitors = [
        site.competitor(key, games=5, concurrency=2, on_start=lambda a: started.append(a.game_id))
        for _, key in site.bots
    ]
    _play_every_game(site, competitors, games)
    for c in competitors:
        assert sorted(r.game_id for r in c.results) == sorted(games)
        assert all(r.over and r.error is None for r in c.results)
    assert sorted(started) == sorted(games * 4), "each bot told each start once"
    # Only the turn streams played: no WatchGame was ever opened.
    labels = {"grpc_type": "server_stream", "grpc_service": "boneyard.v1.GameService"}
    registry = site.server.app.metrics.registry
    assert not registry.get_sample_value(
        "grpc_server_started_total", {**labels, "grpc_method": "WatchGame", "transport": "grpc"}
    )
    assert registry.get_sample_value(
        "grpc_server_started_total",
        {
            **labels,
            "grpc_type": "bidi_stream",
            "grpc_service": "boneyard.v1.LobbyService",
            "grpc_method": "PlayTurns",
            "transport": "grpc",
        },
    )
    # Every answer came on the turn streams: no SubmitAction was ever called.
    assert not registry.get_sample_value(
        "grpc_server_started_total",
        {
            "grpc_type": "unary",
            "grpc_service": "boneyard.v1.GameService",
            "grpc_method": "SubmitAction",
            "transport": "grpc",
        },
    )


@pytest.mark.parametrize("concurrency", [None, 2], ids=["a bot per game", "one turn stream"])
def test_a_game_counts_as_over_only_once_its_end_was_told(
    site: Site, concurrency: int | None
) -> None:
    # run() returns as soon as enough games count as over, and a game's thread is not waited
    # for: a command that prints each end (``boneyard bot --key``) and then exits must find
    # every end told by then, however slow the telling.
    (game_id,) = site.games(1)
    told: list[list[str]] = [[] for _ in site.bots]

    def slow_tell(into: list[str]) -> Callable[[GameResult], None]:
        def tell(result: GameResult) -> None:
            time.sleep(0.5)
            into.append(result.game_id)

        return tell

    competitors = [
        site.competitor(key, games=1, concurrency=concurrency, on_end=slow_tell(told[i]))
        for i, (_, key) in enumerate(site.bots)
    ]
    told_when_run_returned: list[list[str]] = [[] for _ in site.bots]

    def run(i: int) -> None:
        competitors[i].run()
        told_when_run_returned[i] = list(told[i])

    _run_all(competitors, run)
    assert told_when_run_returned == [[game_id]] * 4
    for c in competitors:
        assert [r.game_id for r in c.results if r.over] == [game_id]
