"""Swiss tournaments over real gRPC (issue 35): entrants paired round by round by score, each
pairing a duplicate mini-match of partnerships (an account holding both seats of its team),
played by the production bot runner; refusals; two directors racing to pair a round; a
restart between rounds. The pairing rules themselves are tested one by one, on the pure
functions, in test_swiss_pairing.py.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import grpc
import pytest

from boneyard import engine
from boneyard.api.v1 import competition_pb2, game_pb2, rules_pb2
from boneyard.clients.api import refusal
from boneyard.server.competition.tournaments import (
    TournamentDirector,
    swiss_games,
    swiss_schedule,
)
from boneyard.server.store.competition import CompetitionStore, Tournament, TournamentGame
from tests.server.api_helpers import RPC_TIMEOUT, Client, RunningServer, bearer, log_events
from tests.server.test_competition import account, organiser, tournaments, wait_for
from tests.server.test_matches import bots, play_out, record_scores

TOURNAMENT_TIMEOUT = 300.0
"""Seconds a small Swiss tournament of bots may take (generous: the machine may be loaded)."""


def test_a_round_plays_its_deals_at_every_table_each_twice_with_the_seats_swapped() -> None:
    rules = engine.ruleset("texas42", {"hand_limit": 1})
    games = swiss_schedule(rules, 2, 2, [("a", "b"), ("c", "d")])
    assert games == [
        (2, 0, ("a", "b", "a", "b")),
        (2, 1, ("b", "a", "b", "a")),
        (2, 0, ("c", "d", "c", "d")),
        (2, 1, ("d", "c", "d", "c")),
        (3, 0, ("a", "b", "a", "b")),
        (3, 1, ("b", "a", "b", "a")),
        (3, 0, ("c", "d", "c", "d")),
        (3, 1, ("d", "c", "d", "c")),
    ]
    assert swiss_games(entrants=5, rounds=3, deals=2) == 3 * 2 * 2 * 2


def swiss_request(entrants: list[str], rounds: int, deals: int = 1, **fields: Any) -> Any:
    return competition_pb2.CreateTournamentRequest(
        name="swiss cup",
        rules=rules_pb2.Ruleset(preset=fields.pop("preset", "texas42")),
        entrants=entrants,
        deals=deals,
        format=competition_pb2.TOURNAMENT_FORMAT_SWISS,
        rounds=rounds,
        **fields,
    )


def full(client: Client, tournament_id: str) -> competition_pb2.GetTournamentResponse:
    return tournaments(client).GetTournament(
        competition_pb2.GetTournamentRequest(tournament_id=tournament_id), timeout=RPC_TIMEOUT
    )


def finished(client: Client, tournament_id: str) -> competition_pb2.GetTournamentResponse:
    wait_for(
        lambda: (
            full(client, tournament_id).tournament.status
            == competition_pb2.TOURNAMENT_STATUS_FINISHED
        ),
        "the Swiss tournament to finish",
        timeout=TOURNAMENT_TIMEOUT,
    )
    return full(client, tournament_id)


def test_a_swiss_tournament_of_bots_plays_its_rounds_to_the_end(
    server: RunningServer, client: Client
) -> None:
    strategies = ["heuristic", "heuristic", "random", "random", "heuristic"]
    entrants = [account(server) for _ in strategies]
    names = [n for n, _ in entrants]
    key = organiser(server)
    stub = tournaments(client)
    made = stub.CreateTournament(
        swiss_request(names, rounds=3), metadata=bearer(key), timeout=RPC_TIMEOUT
    ).tournament
    assert made.format == competition_pb2.TOURNAMENT_FORMAT_SWISS
    assert (made.rounds, made.rounds_paired, made.deals, made.duplicate) == (3, 0, 1, True)
    # 3 rounds of 2 pairings (5 entrants: one bye a round), one deal played twice each.
    assert made.games_total == 12
    with bots(server, {k: s for (_, k), s in zip(entrants, strategies, strict=True)}):
        stub.StartTournament(
            competition_pb2.StartTournamentRequest(tournament_id=made.tournament_id),
            metadata=bearer(key),
            timeout=RPC_TIMEOUT,
        )
        done = finished(client, made.tournament_id)
    t = done.tournament
    assert (t.rounds_paired, t.games_total, t.games_finished) == (3, 12, 12)
    assert [r.round for r in done.rounds] == [1, 2, 3]
    met: list[frozenset[str]] = []
    for r in done.rounds:
        assert len(r.pairings) == 2 and r.bye in names
        seated = [r.bye] + [e for p in r.pairings for e in (p.first, p.second)]
        assert sorted(seated) == sorted(names)  # everyone plays or sits out, once
        met += [frozenset((p.first, p.second)) for p in r.pairings]
        assert all(p.over for p in r.pairings)
    assert len(set(met)) == len(met), "no rematch: 5 entrants, 3 rounds avoid them"
    byes = [r.bye for r in done.rounds]
    assert len(set(byes)) == 3, "no second bye"
    # Every game: the pairing's partnerships, seats swapped at the second playing, the same
    # hands at both, and a signed record whose scores make the pairing's marks.
    by_round = {r.round: r for r in done.rounds}
    assert len(done.games) == 12
    marks: Counter[tuple[int, str]] = Counter()
    for g in done.games:
        assert g.status == game_pb2.GAME_STATUS_FINISHED and g.round in by_round
        a, b = g.seats[0], g.seats[1]
        assert list(g.seats) == [a, b, a, b]
        scores = record_scores(client, g.game_id)
        marks[(g.round, a)] += scores[0]
        marks[(g.round, b)] += scores[1]
    for r in done.rounds:
        for p in r.pairings:
            assert (p.first_marks, p.second_marks) == (
                marks[(r.round, p.first)],
                marks[(r.round, p.second)],
            )
            playings = [g for g in done.games if g.round == r.round and p.first in g.seats]
            assert [list(g.seats) for g in playings] == [
                [p.first, p.second] * 2,
                [p.second, p.first] * 2,
            ]
            dealt = [
                next(e for _, e in log_events(server, g.game_id) if isinstance(e, engine.HandDealt))
                for g in playings
            ]
            assert dealt[0].hands == dealt[1].hands
    # Standings: every entrant, ordered by the documented tie-breaks, the points adding up.
    table = done.swiss_standings
    assert sorted(s.name for s in table) == sorted(names)
    assert [
        (-s.score, -s.buchholz, -(s.marks_for - s.marks_against), s.name) for s in table
    ] == sorted((-s.score, -s.buchholz, -(s.marks_for - s.marks_against), s.name) for s in table)
    assert sum(s.score for s in table) == 3 * 2 + 3  # a point a pairing, one a bye
    assert all(s.wins + s.draws + s.losses + s.byes == 3 for s in table)
    assert not done.individuals and not done.partnerships


def test_a_pairings_result_is_secret_while_its_deal_is_played_at_another_table(
    server: RunningServer, client: Client
) -> None:
    """Every pairing of a round plays the same deal: a pairing whose games are over shows no
    marks, and the standings count nothing, until the other table's playings are over too."""
    entrants = dict(account(server) for _ in range(4))
    key = organiser(server)
    stub = tournaments(client)
    tid = stub.CreateTournament(
        swiss_request(list(entrants), rounds=1), metadata=bearer(key), timeout=RPC_TIMEOUT
    ).tournament.tournament_id
    stub.StartTournament(
        competition_pb2.StartTournamentRequest(tournament_id=tid),
        metadata=bearer(key),
        timeout=RPC_TIMEOUT,
    )
    made = wait_for(
        lambda: (
            len([g for g in full(client, tid).games if g.game_id]) == 4 and full(client, tid).games
        ),
        "the round's four games made",
    )
    first = [g for g in made if set(g.seats) == set(made[0].seats)]
    other = [g for g in made if g not in first]
    assert len(first) == len(other) == 2 and {g.deal for g in made} == {0}

    def play(games: list[competition_pb2.TournamentGame]) -> None:
        for g in games:
            play_out(server.address, g.game_id, {s: entrants[n] for s, n in enumerate(g.seats)})

    play(first)
    wait_for(
        lambda: all(
            g.status == game_pb2.GAME_STATUS_FINISHED
            for g in full(client, tid).games
            if g.game_id in {f.game_id for f in first}
        ),
        "the first table's playings over",
    )
    shown = full(client, tid)
    assert [(p.over, p.first_marks, p.second_marks) for p in shown.rounds[0].pairings] == [
        (False, 0, 0),
        (False, 0, 0),
    ]
    assert all(s.score == 0 and s.marks_for == 0 for s in shown.swiss_standings)
    assert all(not g.scores for g in shown.games)
    play(other)
    done = finished(client, tid)
    assert all(p.over for p in done.rounds[0].pairings)
    assert sum(s.score for s in done.swiss_standings) == 2


def test_swiss_is_refused_for_moon_and_nothing_is_stored(
    server: RunningServer, client: Client
) -> None:
    names = [account(server)[0] for _ in range(4)]
    stub = tournaments(client)
    before = len(stub.ListTournaments(competition_pb2.ListTournamentsRequest()).tournaments)
    with pytest.raises(grpc.RpcError) as caught:
        stub.CreateTournament(
            swiss_request(names, rounds=2, preset="moon"),
            metadata=bearer(organiser(server)),
            timeout=RPC_TIMEOUT,
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "partnership" in (caught.value.details() or "")
    found = refusal(caught.value)
    assert found is not None and found.reason == "SWISS_RULES"
    assert found.metadata["preset"] == "moon"
    after = len(stub.ListTournaments(competition_pb2.ListTournamentsRequest()).tournaments)
    assert after == before


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"rounds": 0}, "rounds must be 1..32"),
        ({"rounds": 33}, "rounds must be 1..32"),
        ({"rounds": 2**32 - 1}, "rounds must be 1..32"),
        ({"rounds": 2, "deals": 0}, "deals must be"),
        ({"rounds": 2, "entrants": 1}, "at least 2 entrants"),
        ({"rounds": 2, "format": competition_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN}, "rounds are for"),
        ({"rounds": 2, "format": 7}, "unknown tournament format"),
    ],
)
def test_a_malformed_swiss_tournament_is_invalid_and_nothing_is_stored(
    server: RunningServer, client: Client, fields: dict[str, Any], message: str
) -> None:
    fields = dict(fields)  # the parameters are shared by both backends' runs
    names = [account(server)[0] for _ in range(4)]
    names = names[: fields.pop("entrants", len(names))]
    request = swiss_request(names, rounds=fields.pop("rounds"), deals=fields.pop("deals", 1))
    for name, value in fields.items():
        setattr(request, name, value)
    stub = tournaments(client)
    before = len(stub.ListTournaments(competition_pb2.ListTournamentsRequest()).tournaments)
    with pytest.raises(grpc.RpcError) as caught:
        stub.CreateTournament(request, metadata=bearer(organiser(server)), timeout=RPC_TIMEOUT)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (caught.value.details() or "")
    after = len(stub.ListTournaments(competition_pb2.ListTournamentsRequest()).tournaments)
    assert after == before


def _running_swiss(server: RunningServer, client: Client) -> tuple[str, Tournament]:
    """A Swiss tournament of six, two rounds of two deals, set running by the test behind
    the server's director (which nothing wakes): its id and row."""
    names = [account(server)[0] for _ in range(6)]
    tid = (
        tournaments(client)
        .CreateTournament(
            swiss_request(names, rounds=2, deals=2),
            metadata=bearer(organiser(server)),
            timeout=RPC_TIMEOUT,
        )
        .tournament.tournament_id
    )
    competition: CompetitionStore = server.app.competition
    competition.set_tournament_status(tid, "running")
    tournament = competition.tournament(tid)
    assert tournament is not None
    return tid, tournament


def test_a_director_whose_games_predate_a_round_paired_elsewhere_does_not_pair_the_next(
    server: RunningServer, client: Client
) -> None:
    """What two directors racing came to on a loaded machine: one read the tournament's games,
    the other paired round 1, then the first found round 1 paired and none of its games in
    its list, as if the round were over, and paired round 2 at once."""
    tid, tournament = _running_swiss(server, client)
    competition: CompetitionStore = server.app.competition
    first, late = TournamentDirector(server.app), TournamentDirector(server.app)
    stale: list[TournamentGame] = []  # read before round 1 was paired
    first._swiss_round(tournament, stale)
    games, over = late._swiss_round(tournament, stale)
    assert [r.round for r in competition.swiss_rounds(tid)] == [1]
    assert not over and {g.round for g in games} == {1}
    competition.set_tournament_status(tid, "cancelled")


def test_two_directors_racing_pair_a_round_once(server: RunningServer, client: Client) -> None:
    """Two directors (as two processes would) pair round 1 at the same instant: the
    tournament row's lock and tournament_rounds' key let one through. (The tournament is
    set running by the test, behind the server's director, which nothing wakes.)"""
    tid, tournament = _running_swiss(server, client)
    competition: CompetitionStore = server.app.competition
    directors = [TournamentDirector(server.app) for _ in range(3)]
    barrier = threading.Barrier(len(directors))
    errors: list[BaseException] = []

    def pair(director: TournamentDirector) -> None:
        try:
            barrier.wait(timeout=RPC_TIMEOUT)
            director._swiss_round(tournament, [])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=pair, args=(d,)) for d in directors]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=RPC_TIMEOUT)
    assert not errors, errors
    assert [r.round for r in competition.swiss_rounds(tid)] == [1]
    games = competition.tournament_games(tid)
    # 3 pairings, 2 deals, each twice; numbered once each.
    assert [g.number for g in games] == list(range(12))
    assert {g.round for g in games} == {1}
    competition.set_tournament_status(tid, "cancelled")


def test_a_server_restarted_between_rounds_pairs_the_next_round_once(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('swiss-restart') / 'boneyard.db'}"
    server = RunningServer(url)
    client = Client(server.address)
    try:
        entrants = [account(server) for _ in range(4)]
        key = organiser(server)
        tid = (
            tournaments(client)
            .CreateTournament(
                swiss_request([n for n, _ in entrants], rounds=2),
                metadata=bearer(key),
                timeout=RPC_TIMEOUT,
            )
            .tournament.tournament_id
        )
        with bots(server, {k: "heuristic" for _, k in entrants}):
            tournaments(client).StartTournament(
                competition_pb2.StartTournamentRequest(tournament_id=tid),
                metadata=bearer(key),
                timeout=RPC_TIMEOUT,
            )
            # Round 1 over: round 2 is paired (and may be under way) when the server stops.
            wait_for(
                lambda: full(client, tid).tournament.rounds_paired == 2,
                "round 2 paired",
                timeout=TOURNAMENT_TIMEOUT,
            )
        first_round = list(full(client, tid).rounds[0].pairings)
    finally:
        client.close()
        server.close()
    server = RunningServer(url)
    client = Client(server.address)
    try:
        with bots(server, {k: "heuristic" for _, k in entrants}):
            done = finished(client, tid)
        assert done.tournament.rounds_paired == 2
        assert list(done.rounds[0].pairings) == first_round
        assert len(done.games) == done.tournament.games_total == 8
        assert all(g.status == game_pb2.GAME_STATUS_FINISHED for g in done.games)
        met = [frozenset((p.first, p.second)) for r in done.rounds for p in r.pairings]
        assert len(set(met)) == 4  # round 2 meets new opponents
    finally:
        client.close()
        server.close()
