"""A match through a kill -9 of the server (issue 35): a real ``boneyard-server`` process on a
SQLite file, two accounts' bots (the production bot runner, ``Competitor``, in threads of the
test) on a duplicate Texas 42 match. B's bot stops after a few games, so the match is held in
its middle with deals in flight whatever the machine's speed; the server is killed (SIGKILL)
there and started again on the same database; B's bot comes back, A's reconnects by itself. The
match finishes with every deal started counted exactly once, two games a deal and no other,
its totals those of the games' signed records.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import grpc
import pytest
from sqlalchemy import func, select

from boneyard.api.v1 import matches_pb2
from boneyard.clients.api import Client
from boneyard.clients.competitor import Competitor
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.models import GameRow, MatchDealRow, MatchGameRow
from tests.server.api_helpers import Client as CheckingClient
from tests.server.process_helpers import ServerProcess
from tests.server.test_matches import every_deal, matches, record_scores

DEALS = 10
HELD_AFTER_GAMES = 6
"""B's first bot stops once this many of its games are over: 3 deals of 10."""
TIMEOUT = 300.0


def accounts(url: str, *kinds: str) -> list[tuple[str, str]]:
    """New accounts in the database: ``(name, key)`` each."""
    made = []
    store = EventStore.open(url, migrate=False)
    try:
        for kind in kinds:
            name, key = f"{kind}-{uuid.uuid4().hex[:8]}", new_api_key()
            CompetitionStore(store).create_account(str(uuid.uuid4()), name, kind, key_hash(key))  # type: ignore[arg-type]
            made.append((name, key))
    finally:
        store.close()
    return made


def wait_until(condition, what: str, timeout: float = TIMEOUT):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except grpc.RpcError:
            pass  # the server is starting again
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class BotThread:
    """A ``Competitor`` in a thread of its own, with a client of its own."""

    def __init__(
        self,
        address: str,
        key: str,
        strategy: str,
        games: int | None = None,
        concurrency: int | None = None,
    ) -> None:
        self.client = Client(address)
        self.competitor = Competitor(
            self.client, key, strategy, patience=120, games=games, concurrency=concurrency
        )
        self.thread = threading.Thread(target=self.competitor.run, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.competitor.stop()
        self.thread.join(timeout=30)
        self.client.close()


@pytest.mark.parametrize(
    "concurrency", [None, 4], ids=["a stream a game", "every game on one PlayTurns stream"]
)
def test_a_match_through_a_kill_9_finishes_with_every_deal_counted_once(
    tmp_path: Path, concurrency: int | None
) -> None:
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    log = tmp_path / "server.log"
    server = ServerProcess.start(log, url, "127.0.0.1:0")
    bots: list[BotThread] = []
    try:
        (_, organiser), (a, a_key), (b, b_key) = accounts(url, "player", "bot", "bot")
        address = server.address
        # A's bot lives through the kill: it reconnects (its turn stream, or each game's).
        bots.append(BotThread(address, a_key, "heuristic", concurrency=concurrency))
        held = BotThread(address, b_key, "random", games=HELD_AFTER_GAMES, concurrency=concurrency)
        bots.append(held)
        with Client(address) as client:
            made = client.create_match(
                organiser, a, b, "texas42", deals=DEALS, max_games_in_flight=4, timeout=30
            )
        held.thread.join(timeout=TIMEOUT)
        assert not held.thread.is_alive(), "B's bot did not play its first games"

        server.kill()
        server = ServerProcess.start(log, url, f"127.0.0.1:{server.port}")
        with Client(address) as client:
            middle = client.match(made.match_id, timeout=30)
        assert middle.deals_finished < DEALS, "killed too late to tell"
        assert middle.status == matches_pb2.MATCH_STATUS_RUNNING
        bots.append(BotThread(address, b_key, "random", concurrency=concurrency))

        with Client(address) as client:
            done = wait_until(
                lambda: (
                    (m := client.match(made.match_id, timeout=30)).status
                    == matches_pb2.MATCH_STATUS_FINISHED
                    and m
                ),
                "the match to finish",
            )
        assert done.deals_started == done.deals_finished == DEALS
        checker = CheckingClient(address)
        try:
            deals = every_deal(matches(checker), made.match_id)
            assert [d.deal for d in deals] == list(range(DEALS))
            game_ids = [g for d in deals for g in d.game_ids]
            assert len(game_ids) == len(set(game_ids)) == 2 * DEALS
            for deal in deals:
                assert deal.counted
                one, two = (record_scores(checker, g) for g in deal.game_ids)
                assert (deal.score_a, deal.score_b) == (one[0] + two[1], one[1] + two[0])
            assert done.total_a == sum(d.score_a for d in deals)
            assert done.total_b == sum(d.score_b for d in deals)
        finally:
            checker.close()
        # Nothing else was made or counted: one row a deal, one game a playing.
        store = EventStore.open(url, migrate=False)
        try:
            with store.reading() as session:
                counted = session.scalar(
                    select(func.count()).where(MatchDealRow.match_id == made.match_id)
                )
                linked = session.scalar(
                    select(func.count()).where(MatchGameRow.match_id == made.match_id)
                )
                named = session.scalar(
                    select(func.count()).where(GameRow.name.like(f"match {made.match_id[:8]}:%"))
                )
        finally:
            store.close()
        assert (counted, linked, named) == (DEALS, 2 * DEALS, 2 * DEALS)
    finally:
        for bot in bots:
            bot.stop()
        server.kill()
    assert "Traceback" not in log.read_text()
