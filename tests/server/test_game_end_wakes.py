"""What a game's end wakes besides its watchers: the rater (a rated game won), the match
director (a match's game over) and the tournament director (a tournament's game over). Each
runs a step on a worker thread, which takes the GIL from the event loop, so a game's end wakes
only what the game was made for (``LiveGame.made_for``): known from its creation in the process
that made it, and read with the game in any other (after a restart, or on PostgreSQL's other
processes).
"""

from __future__ import annotations

import dataclasses
import uuid

from api_helpers import RPC_TIMEOUT, Client, RunningServer, bearer

from boneyard.api.v1 import competition_pb2
from boneyard.server.games.live import LiveGame
from boneyard.server.store.game_setup import MadeFor
from tests.server.test_competition import (
    account,
    organiser,
    play_game_with_keys,
    reserved_game,
    started_tournament,
    tournaments,
    wait_for,
)
from tests.server.test_matches import create_request, every_deal, matches


def _ended(
    server: RunningServer, client: Client, keys: list[tuple[str, str]], game_id: str
) -> LiveGame:
    play_game_with_keys(client, game_id, [key for _, key in keys])
    return _in_memory(server, game_id)


def _a_game_played_to_its_end(server: RunningServer, client: Client) -> LiveGame:
    """A game of four new accounts' reserved seats, made for nothing, played to its end."""
    seated = [account(server) for _ in range(4)]
    table = reserved_game(server, client, seated)
    return _ended(server, client, seated, table.game_id)


def _in_memory(server: RunningServer, game_id: str) -> LiveGame:
    game: LiveGame = server.run(server.app.host.get(game_id))
    return game


def _read_from_the_store(server: RunningServer, game_id: str) -> LiveGame:
    async def reloaded() -> LiveGame:
        server.app.host.evict(game_id)
        return await server.app.host.get(game_id)

    game: LiveGame = server.run(reloaded())
    return game


def _concerns(server: RunningServer, game: LiveGame) -> tuple[bool, bool, bool]:
    """Whether the commit that ended ``game`` concerns the rater, the match director and the
    tournament director."""
    ending = tuple(game.events[-3:])
    return (
        server.app.rater.concerns(game, ending),
        server.app.matches.concerns(game, ending),
        server.app.director.concerns(game, ending),
    )


def test_a_game_made_for_nothing_wakes_nothing_at_its_end_here_or_read_from_the_store(
    server: RunningServer, client: Client
) -> None:
    game = _a_game_played_to_its_end(server, client)
    assert game.made_for == MadeFor()
    assert _concerns(server, game) == (False, False, False)
    assert _read_from_the_store(server, game.id).made_for == MadeFor()


def test_a_rated_games_end_wakes_the_rater_here_or_read_from_the_store(
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
    assert game.made_for == MadeFor(rated=True)
    assert _concerns(server, game) == (True, False, False)
    read = _read_from_the_store(server, game_id)
    assert read.made_for == MadeFor(rated=True)
    assert _concerns(server, read) == (True, False, False)


def test_a_matchs_game_is_known_as_the_matchs_here_and_read_from_the_store(
    server: RunningServer, client: Client
) -> None:
    (a, _), (b, _) = account(server), account(server)
    stub = matches(client)
    made = stub.CreateMatch(
        create_request(a, b, deals=1), metadata=bearer(organiser(server)), timeout=RPC_TIMEOUT
    ).match
    (deal,) = wait_for(
        lambda: (d := every_deal(stub, made.match_id)) and d[0].game_ids and d, "a playing made"
    )
    game_id = deal.game_ids[0]
    here = _in_memory(server, game_id).made_for
    assert here.match_id == made.match_id
    assert _read_from_the_store(server, game_id).made_for == here


def test_a_tournaments_game_is_known_as_the_tournaments_here_and_read_from_the_store(
    server: RunningServer, client: Client
) -> None:
    made, _ = started_tournament(server, client, duplicate=False)
    get = competition_pb2.GetTournamentRequest(tournament_id=made.tournament_id)
    (game,) = wait_for(
        lambda: (
            (r := tournaments(client).GetTournament(get, timeout=RPC_TIMEOUT)).games[0].game_id
            and r.games
        ),
        "the game made",
    )
    here = _in_memory(server, game.game_id).made_for
    assert here.tournament_id == made.tournament_id
    assert _read_from_the_store(server, game.game_id).made_for == here


def test_a_games_end_wakes_each_director_its_made_for_names(
    server: RunningServer, client: Client
) -> None:
    ended = _a_game_played_to_its_end(server, client)

    def made_for(**what: str) -> tuple[bool, bool, bool]:
        return _concerns(server, dataclasses.replace(ended, made_for=MadeFor(**what)))

    assert made_for(match_id="a match") == (False, True, False)
    assert made_for(tournament_id="a tournament") == (False, False, True)
