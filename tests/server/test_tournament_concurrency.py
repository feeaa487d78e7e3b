"""How many games of a tournament an entrant plays at once (issue 35): the organiser's
``max_games_per_entrant`` over real gRPC, one director and two racing on one PostgreSQL.

The director starts every deal it may, in schedule order, as long as no entrant would be in
more unfinished games of the tournament than the bound; the playings of a deal start together
(so they count together). Each test waits for what the director makes (never for a time), and
then runs one more step of the director itself, which must find nothing more to make: that is
how "never more" is asked of it.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Iterator

import grpc
import pytest
from api_helpers import RPC_TIMEOUT, Client, RunningServer, bearer, fresh_database, rpc_error

from boneyard.api.v1 import actions_pb2, competition_pb2, game_service_pb2
from boneyard.server.competition.tournaments import TournamentDirector
from boneyard.server.store.competition import (
    Account,
    CompetitionStore,
    Tournament,
    TournamentGame,
)
from tests.server.test_competition import (
    account,
    create_request,
    organiser,
    play_game_with_keys,
    tournaments,
    wait_for,
)

# ---------------------------------------------------------------- helpers


def started(
    server: RunningServer,
    client: Client,
    deals: int,
    max_games_per_entrant: int,
    duplicate: bool = True,
) -> tuple[str, dict[str, str]]:
    """A Texas 42 tournament of four new entrants (every game seats all four), started: its
    id and the entrants' keys by name."""
    entrants = dict(account(server) for _ in range(4))
    key = organiser(server)
    stub = tournaments(client)
    request = create_request(
        list(entrants), deals=deals, max_games_per_entrant=max_games_per_entrant
    )
    request.duplicate = duplicate
    made = stub.CreateTournament(request, metadata=bearer(key), timeout=RPC_TIMEOUT).tournament
    assert made.max_games_per_entrant == max_games_per_entrant
    stub.StartTournament(
        competition_pb2.StartTournamentRequest(tournament_id=made.tournament_id),
        metadata=bearer(key),
        timeout=RPC_TIMEOUT,
    )
    return made.tournament_id, entrants


def schedule_of(server: RunningServer, tournament_id: str) -> list[TournamentGame]:
    return server.app.competition.tournament_games(tournament_id)


def in_play(games: list[TournamentGame]) -> Counter[str]:
    """Each entrant's games made and not over."""
    return Counter(
        a for g in games if g.game_id is not None and g.status in ("open", "playing") for a in g.seating
    )


def made(games: list[TournamentGame]) -> list[TournamentGame]:
    return [g for g in games if g.game_id is not None]


def settled(server: RunningServer, tournament_id: str, count: int) -> list[TournamentGame]:
    """Once ``count`` games are made: one more step of the director makes none (it has made
    all it may), and the schedule as it is then."""
    wait_for(lambda: len(made(schedule_of(server, tournament_id))) >= count, f"{count} games made")
    assert server.app.director.step() == []
    return schedule_of(server, tournament_id)


def play(client: Client, game: TournamentGame, keys: dict[str, str], names: dict[str, str]) -> None:
    """Play a made game to its end, each seat with its entrant's key (``names``: id -> name)."""
    assert game.game_id is not None
    play_game_with_keys(client, game.game_id, [keys[names[a]] for a in game.seating])


def names_of(server: RunningServer, games: list[TournamentGame]) -> dict[str, str]:
    ids = {a for g in games for a in g.seating}
    return {a.id: a.name for a in server.app.competition.accounts(list(ids)).values()}


# ---------------------------------------------------------------- the bound, at the edge


@pytest.mark.parametrize("bound", [65, 1000, 2**32 - 1])
def test_a_bound_beyond_64_games_per_entrant_is_invalid(
    server: RunningServer, client: Client, bound: int
) -> None:
    names = [account(server)[0] for _ in range(4)]
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "max_games_per_entrant must be 1..64"):
        tournaments(client).CreateTournament(
            create_request(names, max_games_per_entrant=bound),
            metadata=bearer(organiser(server)),
            timeout=RPC_TIMEOUT,
        )
    assert not [t for t in server.app.competition.tournaments() if set(t.entrants) & set(names)]


def test_an_unset_bound_is_eight_games_per_entrant(server: RunningServer, client: Client) -> None:
    names = [account(server)[0] for _ in range(4)]
    stub = tournaments(client)
    made_ = stub.CreateTournament(
        create_request(names), metadata=bearer(organiser(server)), timeout=RPC_TIMEOUT
    ).tournament
    assert made_.max_games_per_entrant == 8
    got = stub.GetTournament(
        competition_pb2.GetTournamentRequest(tournament_id=made_.tournament_id),
        timeout=RPC_TIMEOUT,
    )
    assert got.tournament.max_games_per_entrant == 8


# ---------------------------------------------------------------- one director


def test_an_entrant_is_in_as_many_games_as_the_bound_and_never_more(
    server: RunningServer, client: Client
) -> None:
    # Duplicate Texas 42 with four entrants: every entrant plays both playings of every deal,
    # so a bound of 4 is two deals at once.
    tid, keys = started(server, client, deals=5, max_games_per_entrant=4)
    games = settled(server, tid, 4)
    names = names_of(server, games)
    assert sorted({g.deal for g in made(games)}) == [0, 1]
    assert set(in_play(games).values()) == {4}
    # One playing of deal 0 over: each entrant is in 3, and deal 2 (two more) does not fit.
    first, second = [g for g in games if g.deal == 0]
    play(client, first, keys, names)
    wait_for(lambda: schedule_of(server, tid)[first.number].status == "finished", "the game over")
    assert server.app.director.step() == []
    assert len(made(schedule_of(server, tid))) == 4
    # Both over: deal 2 starts, and deal 3 waits for deal 1.
    play(client, second, keys, names)
    games = settled(server, tid, 6)
    assert sorted({g.deal for g in made(games)}) == [0, 1, 2]
    assert max(in_play(games).values()) == 4
    # Played to the end, one game at a time, never more than four in play for anyone.
    while True:
        games = schedule_of(server, tid)
        assert max(in_play(games).values(), default=0) <= 4
        playing = [g for g in made(games) if g.status != "finished"]
        if not playing:
            if all(g.game_id for g in games):
                break
            count = len(made(games))
            wait_for(lambda count=count: len(made(schedule_of(server, tid))) > count, "more games")
            continue
        play(client, playing[0], keys, names)
        wait_for(
            lambda g=playing[0]: schedule_of(server, tid)[g.number].status == "finished",
            "the game over",
        )
    wait_for(
        lambda: server.app.competition.tournament(tid).status == "finished",  # type: ignore[union-attr]
        "the tournament to finish",
    )


def test_a_bound_of_one_plays_one_deal_at_a_time(server: RunningServer, client: Client) -> None:
    tid, keys = started(server, client, deals=3, max_games_per_entrant=1)
    games = settled(server, tid, 2)
    names = names_of(server, games)
    assert [g.deal for g in made(games)] == [0, 0]
    for g in made(games):
        play(client, g, keys, names)
    games = settled(server, tid, 4)
    assert [g.deal for g in made(games)] == [0, 0, 1, 1]
    assert set(in_play(games).values()) == {2}, "the two playings of deal 1, nothing else"


def test_the_playings_of_a_deal_start_together_or_not_at_all(
    server: RunningServer, client: Client
) -> None:
    # A bound of 3 with two playings a deal: deal 0 starts whole, and deal 1 (two more) would
    # put everyone in 4: it waits whole, not one playing of it.
    tid, _ = started(server, client, deals=3, max_games_per_entrant=3)
    games = settled(server, tid, 2)
    assert [g.deal for g in made(games)] == [0, 0]
    # Without duplicate, one playing a deal: three deals at once.
    tid, _ = started(server, client, deals=5, max_games_per_entrant=3, duplicate=False)
    games = settled(server, tid, 3)
    assert [g.deal for g in made(games)] == [0, 1, 2]


def test_a_server_restarted_mid_tournament_carries_on_within_the_bound(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('restart') / 'boneyard.db'}"
    server = RunningServer(url)
    client = Client(server.address)
    try:
        tid, keys = started(server, client, deals=4, max_games_per_entrant=4)
        games = settled(server, tid, 4)
        names = names_of(server, games)
        play(client, games[0], keys, names)  # one game over, three in play
    finally:
        client.close()
        server.close()
    server = RunningServer(url)
    client = Client(server.address)
    try:
        assert len(made(schedule_of(server, tid))) == 4
        while server.app.competition.tournament(tid).status != "finished":  # type: ignore[union-attr]
            games = schedule_of(server, tid)
            assert max(in_play(games).values(), default=0) <= 4
            playing = [g for g in made(games) if g.status != "finished"]
            if playing:
                play(client, playing[0], keys, names)
            wait_for(
                lambda games=games: schedule_of(server, tid) != games
                or server.app.competition.tournament(tid).status == "finished",  # type: ignore[union-attr]
                "the tournament to move",
            )
        assert all(g.status == "finished" for g in schedule_of(server, tid))
    finally:
        client.close()
        server.close()


# ---------------------------------------------------------------- two directors racing


@pytest.fixture
def two_servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Two server processes' worth of parts (each its own store, writer and director) on one
    new PostgreSQL database."""
    with fresh_database("postgresql", request, tmp_path_factory) as url:
        first = RunningServer(url)
        try:
            second = RunningServer(url)
            try:
                yield first, second
            finally:
                second.close()
        finally:
            first.close()


def _resign(client: Client, game_id: str, key: str) -> None:
    """End a game at once: the seat of ``key`` resigns."""
    view = client.stub.GetView(
        game_service_pb2.GetViewRequest(game_id=game_id), metadata=bearer(key), timeout=RPC_TIMEOUT
    ).view
    client.stub.SubmitAction(
        game_service_pb2.SubmitActionRequest(
            game_id=game_id,
            expected_version=view.version,
            request_id=str(uuid.uuid4()),
            action=actions_pb2.Action(resign=actions_pb2.Resign()),
        ),
        metadata=bearer(key),
        timeout=RPC_TIMEOUT,
    )


def _race(
    directors: list[TournamentDirector],
    tournament: Tournament,
    games: list[TournamentGame],
    accounts: dict[str, Account],
) -> list[str | None]:
    """Each director makes its game of ``games`` at the same instant (threads at a barrier):
    what each ``make_game`` answered."""
    barrier = threading.Barrier(len(directors))
    results: list[str | None] = []
    errors: list[BaseException] = []

    def make(director: TournamentDirector, game: TournamentGame) -> None:
        try:
            barrier.wait(timeout=RPC_TIMEOUT)
            results.append(director.make_game(tournament, game, accounts))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [
        threading.Thread(target=make, args=(d, g)) for d, g in zip(directors, games, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=RPC_TIMEOUT)
    assert not errors, errors
    return results


@pytest.mark.postgres
def test_two_directors_racing_on_postgresql_never_put_an_entrant_over_the_bound(
    two_servers: tuple[RunningServer, RunningServer],
) -> None:
    """Two processes' directors each make another game of the schedule at the same instant,
    when only one more fits: the check in each game's creating transaction, under the
    tournament row's lock, lets exactly one of them through. (Not started, the tournament is
    left alone by the servers' own directors: the race is the test's.)"""
    first, second = two_servers
    bound = 2
    competition: CompetitionStore = first.app.competition
    entrants = dict(account(first) for _ in range(4))
    # Without duplicate every deal is one game seating all four: each entrant is in every
    # game, so the bound is the number of games in play.
    request = create_request(list(entrants), deals=24, max_games_per_entrant=bound)
    request.duplicate = False
    client = Client(first.address)
    try:
        tid = (
            tournaments(client)
            .CreateTournament(request, metadata=bearer(organiser(first)), timeout=RPC_TIMEOUT)
            .tournament.tournament_id
        )
        tournament = competition.tournament(tid)
        assert tournament is not None
        accounts = competition.accounts(tournament.entrants)
        key_of = {a.id: entrants[a.name] for a in accounts.values()}
        directors: list[TournamentDirector] = [first.app.director, second.app.director]
        for _ in range(8):
            games = competition.tournament_games(tid)
            free = bound - max(in_play(games).values(), default=0)
            unmade = [g for g in games if g.game_id is None][: len(directors)]
            results = _race(directors, tournament, unmade, accounts)
            assert sum(1 for r in results if r is not None) == min(free, len(directors))
            games = competition.tournament_games(tid)
            assert set(in_play(games).values()) == {bound}
            # End the oldest game in play: one place frees for each entrant.
            oldest = next(g for g in games if g.game_id is not None and g.status == "playing")
            assert oldest.game_id is not None
            _resign(client, oldest.game_id, key_of[oldest.seating[0]])
            wait_for(
                lambda g=oldest: competition.tournament_games(tid)[g.number].status == "finished",
                "the resigned game over",
            )
    finally:
        client.close()
