"""No zombie games (issue 13): a seated player leaves a game not yet started and resigns one in
play (a command in the log, so replay and verify check it); a game without a clock left idle
ends as abandoned, and so does an open game nobody joins."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from api_helpers import (
    BACKENDS,
    RPC_TIMEOUT,
    Client,
    RunningServer,
    bearer,
    fresh_database,
    log_events,
    rpc_error,
)

from boneyard import engine
from boneyard.api.v1 import (
    actions_pb2,
    archive_pb2,
    archive_pb2_grpc,
    events_pb2,
    game_pb2,
    game_service_pb2,
    rules_pb2,
    view_pb2,
)
from boneyard.records.verify import verify_record
from boneyard.server.competition.sweeper import Abandonment, Sweeper

Code = grpc.StatusCode
RESIGN = actions_pb2.Action(resign=actions_pb2.Resign())


def leave(client: Client, game_id: str, token: str | None) -> game_service_pb2.LeaveSeatResponse:
    return client.stub.LeaveSeat(
        game_service_pb2.LeaveSeatRequest(game_id=game_id),
        metadata=bearer(token) if token is not None else None,
        timeout=RPC_TIMEOUT,
    )


def sweep_as_if(server: RunningServer, later: timedelta, rules: Abandonment) -> int:
    """Run one look of the sweeper as if ``later`` had passed."""
    sweeper = Sweeper(
        server.app.host, server.store, rules, now=lambda: datetime.now(UTC) + later
    )
    return int(server.run(sweeper.sweep()))


# ---------------------------------------------------------------- leaving a seat


def test_a_seated_player_leaves_a_game_not_yet_started(client: Client) -> None:
    table = client.create("texas42")
    first = client.take_seat(table.game_id, 0, "stays")
    second = client.take_seat(table.game_id, 1, "goes")
    left = leave(client, table.game_id, second.seat_token)
    assert left.seat == 1
    assert [s.occupied for s in left.game.seats] == [True, False, False, False]
    assert left.game.status == game_pb2.GAME_STATUS_OPEN
    # The seat is free for somebody else, and the old token opens nothing.
    assert client.take_seat(table.game_id, 1, "arrives").seat == 1
    with rpc_error(Code.UNAUTHENTICATED, "opens no seat"):
        client.stub.GetView(
            game_service_pb2.GetViewRequest(game_id=table.game_id),
            metadata=bearer(second.seat_token),
            timeout=RPC_TIMEOUT,
        )
    assert client.stub.GetView(
        game_service_pb2.GetViewRequest(game_id=table.game_id),
        metadata=bearer(first.seat_token),
        timeout=RPC_TIMEOUT,
    ).view.seat == 0


def test_leaving_twice_is_refused(client: Client) -> None:
    table = client.create("texas42")
    taken = client.take_seat(table.game_id, 2, "once")
    leave(client, table.game_id, taken.seat_token)
    with rpc_error(Code.UNAUTHENTICATED, "opens no seat"):
        leave(client, table.game_id, taken.seat_token)


def test_leaving_needs_the_seats_token(client: Client) -> None:
    table = client.create("texas42")
    client.take_seat(table.game_id, 0, "sits")
    with rpc_error(Code.UNAUTHENTICATED, "seat's token"):
        leave(client, table.game_id, None)
    with rpc_error(Code.UNAUTHENTICATED, "opens no seat"):
        leave(client, table.game_id, "not-a-token")


def test_a_player_cannot_leave_a_game_in_play(client: Client) -> None:
    table = client.seated("texas42")
    with rpc_error(Code.FAILED_PRECONDITION, "resign"):
        leave(client, table.game_id, table.tokens[0])


def test_a_take_seat_retried_after_leaving_seats_its_sender_anew(client: Client) -> None:
    table = client.create("texas42")
    request = game_service_pb2.TakeSeatRequest(
        game_id=table.game_id, player_name="retrier", request_id="take-once", seat=3
    )
    first = client.stub.TakeSeat(request, timeout=RPC_TIMEOUT)
    leave(client, table.game_id, first.seat_token)
    again = client.stub.TakeSeat(request, timeout=RPC_TIMEOUT)
    # The request's token again (it is derived from the request id): it opens seat 3 anew.
    assert again.seat == 3 and again.seat_token == first.seat_token
    assert client.stub.GetView(
        game_service_pb2.GetViewRequest(game_id=table.game_id),
        metadata=bearer(again.seat_token),
        timeout=RPC_TIMEOUT,
    ).view.seat == 3
    assert [s.occupied for s in again.game.seats] == [False, False, False, True]


# ---------------------------------------------------------------- resigning


def test_a_seated_player_resigns_a_game_in_play_and_the_record_verifies(
    client: Client, server: RunningServer
) -> None:
    table = client.seated("texas42")
    spectator = client.view(table, None)
    resigner = (spectator.turn + 1) % 4  # out of turn
    answer = client.submit(table, resigner, RESIGN, spectator.version)
    assert answer.view.phase == view_pb2.PHASE_GAME_OVER
    game = client.game(table.game_id)
    assert game.status == game_pb2.GAME_STATUS_FINISHED
    assert game.winner == (resigner + 1) % 2
    events = [event for _, event in log_events(server, table.game_id)]
    assert events[-2:] == [
        engine.Resigned(resigner),
        engine.GameWon((resigner + 1) % 2, ((resigner + 1) % 2, (resigner + 1) % 2 + 2)),
    ]
    archive = archive_pb2_grpc.ArchiveServiceStub(client.channel)
    record = archive.GetRecord(
        archive_pb2.GetRecordRequest(game_id=table.game_id), timeout=RPC_TIMEOUT
    ).record
    verdict = verify_record(record)
    assert verdict.valid, str(verdict)


def test_resigning_needs_the_games_version(client: Client) -> None:
    table = client.seated("texas42")
    version = client.view(table, None).version
    with rpc_error(Code.ABORTED, "version"):
        client.submit(table, 0, RESIGN, version + 5)


def test_resigning_a_game_not_started_is_refused(client: Client) -> None:
    table = client.create("texas42")
    table.tokens[0] = client.take_seat(table.game_id, 0, "early").seat_token
    version = client.view(table, 0).version
    with rpc_error(Code.FAILED_PRECONDITION, "leave the seat"):
        client.submit(table, 0, RESIGN, version)


def test_a_finished_game_cannot_be_resigned(client: Client) -> None:
    table = client.seated("texas42")
    version = client.view(table, None).version
    client.submit(table, 0, RESIGN, version)
    with rpc_error(Code.FAILED_PRECONDITION, "over"):
        client.submit(table, 1, RESIGN, client.view(table, None).version)


# ---------------------------------------------------------------- abandoned games

RULES = Abandonment(idle_after=timedelta(hours=1), open_after=timedelta(hours=2))


def test_a_game_without_a_clock_left_idle_ends_as_abandoned(
    client: Client, server: RunningServer
) -> None:
    table = client.seated("texas42")
    stream = client.watch(table, 0)
    assert sweep_as_if(server, timedelta(minutes=59), RULES) == 0
    assert sweep_as_if(server, timedelta(minutes=61), RULES) >= 1
    game = client.game(table.game_id)
    assert game.status == game_pb2.GAME_STATUS_ABANDONED and not game.HasField("winner")
    assert log_events(server, table.game_id)[-1][1] == engine.GameAbandoned("idle")
    # The seat's stream sees the end, and ends.
    last = list(stream)[-1]
    assert last.event.WhichOneof("kind") == "game_abandoned"
    assert last.view.phase == view_pb2.PHASE_GAME_OVER
    with rpc_error(Code.FAILED_PRECONDITION, "abandoned"):
        client.submit(table, 0, RESIGN, game.version)
    archive = archive_pb2_grpc.ArchiveServiceStub(client.channel)
    with rpc_error(Code.FAILED_PRECONDITION):
        archive.GetRecord(archive_pb2.GetRecordRequest(game_id=table.game_id), timeout=RPC_TIMEOUT)


def test_a_game_with_a_clock_is_never_abandoned_for_idleness(
    client: Client, server: RunningServer
) -> None:
    control = game_pb2.TimeControl(
        per_move_ms=24 * 3_600_000, policy=events_pb2.TIMEOUT_POLICY_AUTO_PLAY
    )
    created = client.stub.CreateGame(
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset="texas42"), time_control=control
        ),
        timeout=RPC_TIMEOUT,
    )
    for seat in range(4):
        client.take_seat(created.game_id, seat, f"clocked {seat}")
    sweep_as_if(server, timedelta(hours=5), RULES)
    assert client.game(created.game_id).status == game_pb2.GAME_STATUS_PLAYING


def test_an_open_game_nobody_joins_expires(client: Client, server: RunningServer) -> None:
    table = client.create("moon")
    client.take_seat(table.game_id, 0, "lonely")
    sweep_as_if(server, timedelta(minutes=90), RULES)
    assert client.game(table.game_id).status == game_pb2.GAME_STATUS_OPEN
    sweep_as_if(server, timedelta(minutes=121), RULES)
    game = client.game(table.game_id)
    assert game.status == game_pb2.GAME_STATUS_ABANDONED
    assert log_events(server, table.game_id)[-1][1] == engine.GameAbandoned("unstarted")
    with rpc_error(Code.FAILED_PRECONDITION):
        client.take_seat(table.game_id, 1, "too late")


def test_a_game_acted_in_after_the_sweep_looked_is_kept(
    client: Client, server: RunningServer
) -> None:
    table = client.seated("texas42")
    before_acting = datetime.now(UTC)
    spectator = client.view(table, None)
    seat = spectator.turn
    view = client.view(table, seat)
    client.submit(table, seat, view.legal_actions[0], view.version)
    kept = server.run(server.app.host.abandon(table.game_id, "idle", before_acting))
    assert kept is False
    assert client.game(table.game_id).status == game_pb2.GAME_STATUS_PLAYING


def test_abandoned_games_are_listed_by_their_status(client: Client, server: RunningServer) -> None:
    table = client.seated("texas42")
    sweep_as_if(server, timedelta(minutes=61), RULES)
    listed = client.stub.ListGames(
        game_service_pb2.ListGamesRequest(status=game_pb2.GAME_STATUS_ABANDONED, page_size=200),
        timeout=RPC_TIMEOUT,
    )
    assert table.game_id in {g.game_id for g in listed.games}
    assert all(g.status == game_pb2.GAME_STATUS_ABANDONED for g in listed.games)


# ---------------------------------------------------------------- the sweeper running


@pytest.fixture(params=BACKENDS)
def backend_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with fresh_database(request.param, request, tmp_path_factory) as url:
        yield url


def _until_abandoned(client: Client, game_id: str) -> None:
    give_up = time.monotonic() + 120  # generous: the sweep itself is due after ~1.2 s
    while time.monotonic() < give_up:
        if client.game(game_id).status == game_pb2.GAME_STATUS_ABANDONED:
            return
        time.sleep(0.2)
    raise AssertionError(f"{game_id} still not abandoned")


# Each rule on a server of its own, the other rule's span an hour: a run on a loaded machine
# once took longer than the unstarted rule's second to seat a whole table, which that rule
# then closed before it could sit idle.


@contextlib.contextmanager
def _swept(url: str, idle_after: timedelta, open_after: timedelta) -> Iterator[Client]:
    """A client of a server whose sweeper runs with these spans."""
    rules = Abandonment(idle_after=idle_after, open_after=open_after)
    server = RunningServer(url, abandonment=rules)
    client = Client(server.address)
    try:
        yield client
    finally:
        client.close()
        server.close()


def test_the_server_closes_a_started_game_nobody_plays_by_itself(backend_url: str) -> None:
    with _swept(backend_url, timedelta(seconds=1), timedelta(hours=1)) as client:
        _until_abandoned(client, client.seated("texas42").game_id)


def test_the_server_closes_a_game_nobody_starts_by_itself(backend_url: str) -> None:
    with _swept(backend_url, timedelta(hours=1), timedelta(seconds=1)) as client:
        _until_abandoned(client, client.create("texas42").game_id)
