"""``boneyard challenge`` and ``boneyard bot --key K --accept PRESETS``, as processes against a
real server process: a challenge accepted by account bots and played to the end; one declined
by a bot that plays only other presets; one that expires unanswered. Only the accepted one
makes a game."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from boneyard.api.v1 import game_pb2, ratings_pb2, ratings_pb2_grpc
from boneyard.clients.api import Client
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from tests.clients.cli_helpers import Background, run_cli
from tests.server.process_helpers import ServerProcess


@dataclass
class Site:
    server: ServerProcess
    database_url: str

    def account(self, kind: str = "bot") -> tuple[str, str]:
        """A new account: its name and API key."""
        name, key = f"{kind}-{uuid.uuid4().hex[:8]}", new_api_key()
        store = EventStore.open(self.database_url)
        try:
            CompetitionStore(store).create_account(str(uuid.uuid4()), name, kind, key_hash(key))  # type: ignore[arg-type]
        finally:
            store.close()
        return name, key

    def games(self) -> list[game_pb2.GameSummary]:
        with Client(self.server.address) as client:
            return list(client.games())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    path = tmp_path_factory.mktemp("challenges")
    url = f"sqlite:///{path / 'boneyard.db'}"
    with ServerProcess.start(path / "server.log", url) as server:
        yield Site(server, url)


def test_a_challenge_accepted_by_account_bots_is_played_to_the_end(
    site: Site, background: Callable[..., Background]
) -> None:
    challenger, challenger_key = site.account()
    bots = [site.account() for _ in range(3)]
    for _, key in bots:
        background("bot", "--server", site.server.address, "--key", key, "--accept", "texas42,moon")
    done = run_cli(
        "challenge",
        *(f"{name}@{seat}" for seat, (name, _) in enumerate(bots, start=1)),
        "--server",
        site.server.address,
        "--key",
        challenger_key,
        "--option",
        "hand_limit=1",
        "--seat",
        "0",
        "--play",
        "--rated",
    )
    assert done.returncode == 0, done.explain()
    lines = done.lines
    assert re.fullmatch(r"challenge [0-9a-f-]{36}", lines[0]), done.explain()
    assert sorted(line for line in lines if line.startswith("accepted by ")) == sorted(
        f"accepted by {name}" for name, _ in bots
    )
    started = next(line for line in lines if line.startswith("game ") and "seat" in line)
    assert f"{challenger} seat 0" in started and f"{bots[2][0]} seat 3" in started, started
    game_id = started.split()[1].rstrip(":")
    assert lines[-1].startswith(f"game {game_id} over: team 0 (seats 0 2): "), done.explain()
    game = next(g for g in site.games() if g.game_id == game_id)
    assert game.status == game_pb2.GAME_STATUS_FINISHED
    # A rated challenge: its game moves the ratings of everyone at the table.
    stub = ratings_pb2_grpc.RatingServiceStub(site.server.channel())
    deadline = time.monotonic() + 60
    for name in [challenger, *(n for n, _ in bots)]:
        while True:
            answer = stub.GetRating(ratings_pb2.GetRatingRequest(account_name=name), timeout=30)
            history = [h.game_id for t in answer.ratings for h in t.history]
            if history or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert history == [game_id], (name, answer)


def test_a_challenge_of_a_preset_the_bot_does_not_play_is_declined(
    site: Site, background: Callable[..., Background]
) -> None:
    _, challenger_key = site.account()
    moon_bot, moon_key = site.account()
    bot = background("bot", "--server", site.server.address, "--key", moon_key, "--accept", "moon")
    before = len(site.games())
    done = run_cli(
        "challenge", moon_bot, "--server", site.server.address, "--key", challenger_key,
        "--preset", "texas42", "--seat", "0",
    )
    assert done.returncode == 1, done.explain()
    assert done.lines[-1] == f"declined by {moon_bot}", done.explain()
    assert "(texas42): declined" in bot.next_line(), bot.explain()
    assert len(site.games()) == before


def test_a_challenge_nobody_answers_expires(site: Site) -> None:
    _, challenger_key = site.account()
    absent, _ = site.account()
    before = len(site.games())
    done = run_cli(
        "challenge", absent, "--server", site.server.address, "--key", challenger_key,
        "--expires", "1", "--seat", "0",
    )
    assert done.returncode == 1, done.explain()
    assert done.lines[-1] == "expired: not every account accepted in time", done.explain()
    assert len(site.games()) == before
