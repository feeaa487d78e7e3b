"""The account bot (``boneyard.clients.competitor``) against a real server in this process."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

from boneyard.api.v1 import game_pb2
from boneyard.clients.api import Client
from boneyard.clients.competitor import Competitor
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
