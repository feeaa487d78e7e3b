"""What a game's end wakes besides its watchers: the rater (a rated game won) and the match
director (a match's game over). Each runs a step on a worker thread, which takes the GIL from
the event loop, so a game this process made unrated and for no match wakes neither; a game
read from the store (made before a restart, or by another process) is not known that well and
wakes both, as every game seating accounts did before.
"""

from __future__ import annotations

import uuid

from api_helpers import Client, RunningServer

from boneyard.server.games.live import LiveGame
from tests.server.test_competition import account, play_game_with_keys, reserved_game


def _ended(
    server: RunningServer, client: Client, keys: list[tuple[str, str]], game_id: str
) -> LiveGame:
    play_game_with_keys(client, game_id, [key for _, key in keys])
    game: LiveGame = server.run(server.app.host.get(game_id))
    assert game.over
    return game


def _read_from_the_store(server: RunningServer, game_id: str) -> LiveGame:
    async def reloaded() -> LiveGame:
        server.app.host.evict(game_id)
        return await server.app.host.get(game_id)

    game: LiveGame = server.run(reloaded())
    return game


def _concerns(server: RunningServer, game: LiveGame) -> tuple[bool, bool]:
    """Whether the commit that ended ``game`` concerns the rater and the match director."""
    ending = tuple(game.events[-3:])
    return server.app.rater.concerns(game, ending), server.app.matches.concerns(game, ending)


def test_a_game_made_here_unrated_for_no_match_wakes_neither_at_its_end(
    server: RunningServer, client: Client
) -> None:
    seated = [account(server) for _ in range(4)]
    table = reserved_game(server, client, seated)
    game = _ended(server, client, seated, table.game_id)
    assert (game.rated, game.for_match) == (False, False)
    assert _concerns(server, game) == (False, False)


def test_a_game_read_from_the_store_wakes_both_at_its_end(
    server: RunningServer, client: Client
) -> None:
    seated = [account(server) for _ in range(4)]
    table = reserved_game(server, client, seated)
    _ended(server, client, seated, table.game_id)
    game = _read_from_the_store(server, table.game_id)
    assert (game.rated, game.for_match) == (None, None)
    assert _concerns(server, game) == (True, True)


def test_a_rated_game_made_here_wakes_the_rater_at_its_end(
    server: RunningServer, client: Client
) -> None:
    seated = [account(server) for _ in range(4)]
    accounts = server.app.competition.accounts_named([name for name, _ in seated])
    game_id, _ = server.app.app.create_game(
        "texas42",
        {},
        f"rated {uuid.uuid4().hex[:8]}",
        reservations=[(seat, accounts[name]) for seat, (name, _) in enumerate(seated)],
        rated=True,
    )
    game = _ended(server, client, seated, game_id)
    assert (game.rated, game.for_match) == (True, False)
    assert _concerns(server, game) == (True, False)
