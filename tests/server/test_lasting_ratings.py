"""Lasting ratings (issue 16), with real processes: a ``boneyard-server`` and ``boneyard bot
--key --seek`` processes that play rated games to the end; the ratings read over the API, the
``boneyard leaderboard`` and ``boneyard rating`` commands, and ``boneyard-server admin ratings
rebuild``, on SQLite and PostgreSQL.

The games of one module's server are played once (the ``played`` fixture: two Texas 42 games
among four accounts and one Moon game among three, and a game of bots without accounts); the
tests read what they did.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from api_helpers import BACKENDS, RPC_TIMEOUT, fresh_database
from process_helpers import ServerProcess, clean_env
from sqlalchemy import func, select

from boneyard.api.v1 import ratings_pb2, ratings_pb2_grpc, rules_pb2
from boneyard.clients.api import Client, refusal
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.competition.ratings import PROVISIONAL_GAMES
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.models import GameRow, RatedGameRow, RatingChangeRow
from boneyard.server.store.ratings import RatingStore

BIN = Path(sys.executable).parent
TEXAS42 = rules_pb2.FAMILY_TEXAS42
MOON = rules_pb2.FAMILY_MOON
GAME_TIMEOUT = 600


@dataclass
class Played:
    server: ServerProcess
    url: str
    store: EventStore
    texas: list[str]
    """The four accounts that played two Texas 42 games."""
    moon: list[str]
    """The three that played one Moon game."""
    unrated_game: str
    keys: dict[str, str]
    """Each account's API key, by name."""

    def stub(self) -> ratings_pb2_grpc.RatingServiceStub:
        return ratings_pb2_grpc.RatingServiceStub(self.server.channel())

    def rating(self, name: str) -> ratings_pb2.GetRatingResponse:
        return self.stub().GetRating(
            ratings_pb2.GetRatingRequest(account_name=name), timeout=RPC_TIMEOUT
        )


def _accounts(store: EventStore, prefix: str, count: int) -> list[tuple[str, str]]:
    made = []
    for n in range(count):
        name, key = f"{prefix}-{n}-{uuid.uuid4().hex[:6]}", new_api_key()
        CompetitionStore(store).create_account(str(uuid.uuid4()), name, "bot", key_hash(key))
        made.append((name, key))
    return made


def _bots(server: ServerProcess, accounts: list[tuple[str, str]], preset: str, games: int) -> None:
    """``boneyard bot --key K --seek PRESET --games N`` for every account, until all are done."""
    # The heuristic strategy: random bots can bid a Moon game around zero for a very long time.
    procs = [
        subprocess.Popen(
            [str(BIN / "boneyard"), "bot", "--server", server.address, "--key", key,
             "--seek", preset, "--games", str(games), "--strategy", "heuristic", "--seed", str(n)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=clean_env(),
        )
        for n, (_, key) in enumerate(accounts)
    ]
    try:
        for proc in procs:
            out, _ = proc.communicate(timeout=GAME_TIMEOUT)
            assert proc.returncode == 0, out.decode(errors="replace")
            assert f"done: {games} games over" in out.decode(), out.decode(errors="replace")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _wait_rated(store: EventStore, games: int) -> None:
    """Until ``games`` rated games are rated (right after their finish, by the server)."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with store.reading() as session:
            done = session.scalar(
                select(func.count()).select_from(RatedGameRow).where(RatedGameRow.rated_at.is_not(None))
            )
        if done == games:
            return
        time.sleep(0.1)
    raise AssertionError(f"{done} of {games} rated games rated after 60 s")


@pytest.fixture(scope="module", params=BACKENDS)
def played(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Played]:
    with fresh_database(request.param, request, tmp_path_factory) as url:
        log = tmp_path_factory.mktemp("ratings") / "server.log"
        store = EventStore.open(url, migrate=True)
        server = ServerProcess.start(log, url)
        try:
            texas = _accounts(store, "t42", 4)
            moon = _accounts(store, "moon", 3)
            _bots(server, texas, "texas42", games=2)
            _bots(server, moon, "moon", games=1)
            # A game of bots without accounts (seats taken by name): not rated.
            out = subprocess.run(
                [str(BIN / "boneyard"), "bot", "--server", server.address, "--new", "texas42",
                 "--strategy", "heuristic"],
                capture_output=True, text=True, env=clean_env(), timeout=GAME_TIMEOUT, check=True,
            ).stdout
            unrated = out.split()[1]
            _wait_rated(store, 3)
            world = Played(
                server,
                url,
                store,
                [n for n, _ in texas],
                [n for n, _ in moon],
                unrated,
                dict(texas + moon),
            )
            yield world
            server = world.server  # a test restarts it
        finally:
            server.kill()
            store.close()


def _typed(answer: ratings_pb2.GetRatingResponse, family: int) -> ratings_pb2.GameTypeRating:
    (typed,) = [t for t in answer.ratings if t.rating.game_type == family]
    return typed


def test_rated_games_move_winners_up_and_losers_down_and_partners_together(played: Played) -> None:
    store = played.store
    with store.reading() as session:
        first_game = session.scalars(
            select(RatingChangeRow.game_id)
            .where(RatingChangeRow.game_type == "texas42")
            .order_by(RatingChangeRow.id)
        ).first()
    changes = {}
    for name in played.texas:
        typed = _typed(played.rating(name), TEXAS42)
        assert typed.rating.games == 2
        assert [h.game_id for h in typed.history][-1] == first_game  # newest first
        first = typed.history[-1]
        assert (first.mu_before, first.sigma_before) == (25.0, 25 / 3)  # OpenSkill's prior
        assert typed.history[0].mu_before == first.mu_after  # the second starts from the first
        changes[name] = first.mu_after - first.mu_before
        assert typed.rating.mu == typed.history[0].mu_after
    ups = sorted(n for n, d in changes.items() if d > 0)
    downs = sorted(n for n, d in changes.items() if d < 0)
    assert len(ups) == 2 and len(downs) == 2, changes
    # Partners started alike, so the first game moved both of each team by exactly as much.
    assert changes[ups[0]] == changes[ups[1]] and changes[downs[0]] == changes[downs[1]]


def test_the_account_stream_tells_each_rated_game_s_rating_change(played: Played) -> None:
    name = played.texas[0]
    history = {h.game_id: h for h in _typed(played.rating(name), TEXAS42).history}
    with Client(played.server.address) as client:
        call = client.watch_account(played.keys[name])
        events = []
        try:
            for message in call:
                events.append(message.event)
                if sum(e.HasField("game_rated") for e in events) == len(history):
                    break
        finally:
            call.cancel()
    kinds = [e.WhichOneof("kind") for e in events]
    for event in (e for e in events if e.HasField("game_rated")):
        rated = event.game_rated
        change = history[rated.game_id]
        assert rated.rating.game_type == "texas42"
        assert (rated.rating.before.mu, rated.rating.before.sigma) == (
            change.mu_before,
            change.sigma_before,
        )
        assert (rated.rating.after.mu, rated.rating.after.sigma) == (
            change.mu_after,
            change.sigma_after,
        )
        # After the game's own game_finished event.
        finished = next(
            i for i, e in enumerate(events)
            if e.HasField("game_finished") and e.game_finished.game_id == rated.game_id
        )
        assert finished < events.index(event)
    assert kinds.count("game_rated") == len(history) == 2


def test_moon_rates_each_player_alone(played: Played) -> None:
    moved = []
    for name in played.moon:
        typed = _typed(played.rating(name), MOON)
        assert typed.rating.games == 1 and len(typed.history) == 1
        moved.append(typed.history[0].mu_after - typed.history[0].mu_before)
        assert [t.rating.game_type for t in played.rating(name).ratings] == [MOON]
    assert max(moved) > 0 > min(moved)
    assert len(set(moved)) >= 2


def test_a_game_without_accounts_is_not_rated(played: Played) -> None:
    with played.store.reading() as session:
        status = session.scalar(select(GameRow.status).where(GameRow.id == played.unrated_game))
        marked = session.get(RatedGameRow, played.unrated_game)
        changed = session.scalar(
            select(func.count())
            .select_from(RatingChangeRow)
            .where(RatingChangeRow.game_id == played.unrated_game)
        )
    assert status == "finished"
    assert marked is None and changed == 0
    with played.store.reading() as session:
        assert session.scalar(select(func.count()).select_from(RatingChangeRow)) == 4 * 2 + 3


def test_a_rating_is_provisional_until_enough_games(played: Played) -> None:
    rating = _typed(played.rating(played.texas[0]), TEXAS42).rating
    assert rating.games < PROVISIONAL_GAMES and rating.provisional
    assert rating.ordinal == pytest.approx(rating.mu - 3 * rating.sigma)


def test_the_leaderboard_is_ordered_by_ordinal_a_page_at_a_time(played: Played) -> None:
    stub = played.stub()
    pages, token = [], ""
    while True:
        page = stub.GetLeaderboard(
            ratings_pb2.GetLeaderboardRequest(game_type=TEXAS42, page_size=3, page_token=token),
            timeout=RPC_TIMEOUT,
        )
        pages.append(page)
        token = page.next_page_token
        if not token:
            break
    entries = [e for p in pages for e in p.entries]
    assert len(pages) == 2 and [len(p.entries) for p in pages] == [3, 1]
    assert [e.rank for e in entries] == [1, 2, 3, 4]
    assert sorted(e.rating.account_name for e in entries) == sorted(played.texas)
    ordinals = [e.rating.ordinal for e in entries]
    assert ordinals == sorted(ordinals, reverse=True)
    assert all(e.rating.provisional for e in entries)
    moon = stub.GetLeaderboard(
        ratings_pb2.GetLeaderboardRequest(game_type=MOON), timeout=RPC_TIMEOUT
    )
    assert sorted(e.rating.account_name for e in moon.entries) == sorted(played.moon)
    assert moon.next_page_token == ""


def test_bad_rating_requests_are_refused(played: Played) -> None:
    stub = played.stub()
    for ask, code, reason in (
        (
            lambda: stub.GetLeaderboard(ratings_pb2.GetLeaderboardRequest(), timeout=RPC_TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_ARGUMENT",
        ),
        (
            lambda: stub.GetLeaderboard(
                ratings_pb2.GetLeaderboardRequest(game_type=MOON, page_token="x!"),
                timeout=RPC_TIMEOUT,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_PAGE_TOKEN",
        ),
        (
            lambda: stub.GetRating(
                ratings_pb2.GetRatingRequest(account_name="no-such-account"), timeout=RPC_TIMEOUT
            ),
            grpc.StatusCode.NOT_FOUND,
            "ACCOUNT_NOT_FOUND",
        ),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            ask()
        assert refused.value.code() == code
        assert refusal(refused.value).reason == reason


def test_the_cli_shows_the_leaderboard_and_a_rating(played: Played) -> None:
    board = subprocess.run(
        [str(BIN / "boneyard"), "leaderboard", "--game", "texas42", "--server", played.server.address],
        capture_output=True, text=True, env=clean_env(), timeout=60, check=True,
    ).stdout
    assert "texas42 leaderboard" in board
    assert all(name in board for name in played.texas)
    assert "2 (provisional)" in board
    shown = subprocess.run(
        [str(BIN / "boneyard"), "rating", played.moon[0], "--server", played.server.address],
        capture_output=True, text=True, env=clean_env(), timeout=60, check=True,
    ).stdout
    assert "moon: ordinal" in shown and "1 (provisional) games" in shown


def test_a_rebuild_from_the_archive_gives_the_same_numbers_to_the_last_bit(played: Played) -> None:
    ratings = RatingStore(played.store)
    before = (ratings.all_ratings(), ratings.all_changes())
    done = subprocess.run(
        [str(BIN / "boneyard-server"), "admin", "ratings", "rebuild", "--database-url", played.url],
        capture_output=True, text=True, env=clean_env(), timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rebuilt 7 ratings from 3 rated games" in done.stdout
    assert "every rating is as it was, to the last bit" in done.stdout
    after = (ratings.all_ratings(), ratings.all_changes())
    assert after == before  # floats compared with ==: equal bit for bit


def test_a_restart_never_rates_a_game_twice(played: Played, tmp_path: Path) -> None:
    ratings = RatingStore(played.store)
    before = (ratings.all_ratings(), ratings.all_changes())
    played.server.kill()
    played.server = ServerProcess.start(played.server.log_path, played.url)
    # The restarted server's rater looks for finished games to rate as it starts.
    with played.store.reading() as session:
        game_id = session.scalars(select(RatedGameRow.game_id)).first()
    assert game_id is not None
    assert not ratings.apply(game_id, "texas42", lambda current: {})  # rated already: untouched
    assert played.rating(played.texas[0]).ratings  # the new process answers
    assert (ratings.all_ratings(), ratings.all_changes()) == before


def test_tournament_games_are_rated_when_their_deal_is_public(played: Played) -> None:
    """(Runs after the others: it adds games.) A duplicate tournament's games are rated (the
    rater leaves a playing of a deal until the director publishes the deal, and is woken
    then), and the rebuild still gives the same numbers."""
    from boneyard.clients.api import Client

    ((_, organiser),) = _accounts_of_kind(played.store, "player", 1)
    entrants = _accounts(played.store, "cup", 4)
    with Client(played.server.address) as client:
        cup = client.create_tournament(
            organiser, "cup", "texas42", [n for n, _ in entrants], 1, options={"hand_limit": "1"}
        )
        games = len(client.tournament(cup.tournament_id).games)
        client.start_tournament(organiser, cup.tournament_id)
        _bots_for_accounts(played.server, entrants, games)
    with played.store.reading() as session:
        rated = session.scalar(select(func.count()).select_from(RatedGameRow))
    _wait_rated(played.store, rated)
    for name, _ in entrants:
        typed = _typed(played.rating(name), TEXAS42)
        assert typed.rating.games == games and len(typed.history) == games
    ratings = RatingStore(played.store)
    before = (ratings.all_ratings(), ratings.all_changes())
    done = subprocess.run(
        [str(BIN / "boneyard-server"), "admin", "ratings", "rebuild", "--database-url", played.url],
        capture_output=True, text=True, env=clean_env(), timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (ratings.all_ratings(), ratings.all_changes()) == before


def _accounts_of_kind(store: EventStore, kind: str, count: int) -> list[tuple[str, str]]:
    made = []
    for n in range(count):
        name, key = f"{kind}-{n}-{uuid.uuid4().hex[:6]}", new_api_key()
        CompetitionStore(store).create_account(str(uuid.uuid4()), name, kind, key_hash(key))  # type: ignore[arg-type]
        made.append((name, key))
    return made


def _bots_for_accounts(server: ServerProcess, accounts: list[tuple[str, str]], games: int) -> None:
    """``boneyard bot --key K --games N``: play the account's reserved seats, N games."""
    procs = [
        subprocess.Popen(
            [str(BIN / "boneyard"), "bot", "--server", server.address, "--key", key,
             "--games", str(games), "--strategy", "heuristic"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=clean_env(),
        )
        for _, key in accounts
    ]
    try:
        for proc in procs:
            out, _ = proc.communicate(timeout=GAME_TIMEOUT)
            assert proc.returncode == 0, out.decode(errors="replace")
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
