"""Every game ends, and the server never plays a game for nobody (issue 31, defects 1 and 2).

An outside run found a Moon game with a 1 ms ``auto_play`` clock and three seats taken and
left redealt for ever by its clock (2,031 hands in 30 s), and three house bots plus a seat
taken and left played to the end by the server alone, 30 such games accepted in 9 s. Now: a
clock has a floor; a game with a clock whose every seat but the house bots' has run out of
time ``absent_after`` times in a row ends as abandoned (``absent``); every preset has a deal
limit; and the games one client makes the server play in are bounded (``Quotas``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from api_helpers import (
    BACKENDS,
    RPC_TIMEOUT,
    Client,
    RunningServer,
    fresh_database,
    log_events,
    rpc_error,
    timeouts,
)

from boneyard import engine
from boneyard.api.v1 import events_pb2, game_pb2, game_service_pb2, rules_pb2
from boneyard.server.quotas import Quotas

Code = grpc.StatusCode
AUTO_PLAY = events_pb2.TIMEOUT_POLICY_AUTO_PLAY


def clock(per_move_ms: int = 100, bank_ms: int = 0) -> game_pb2.TimeControl:
    return game_pb2.TimeControl(per_move_ms=per_move_ms, bank_ms=bank_ms, policy=AUTO_PLAY)


def create(client: Client, preset: str, **fields: Any) -> str:
    request = game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset=preset), **fields)
    return client.stub.CreateGame(request, timeout=RPC_TIMEOUT).game_id


def take_every_free_seat(client: Client, game_id: str) -> None:
    for seat in client.game(game_id).seats:
        if not seat.occupied:
            client.take_seat(game_id, seat.seat, "walks away")


def wait_until(what: str, test: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = test()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def abandoned(client: Client, game_id: str) -> bool:
    return client.game(game_id).status == game_pb2.GAME_STATUS_ABANDONED


@pytest.fixture(params=BACKENDS)
def lenient_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """A server of its own whose quotas let these tests make many games from one address."""
    with fresh_database(request.param, request, tmp_path_factory) as url:
        server = RunningServer(url, Quotas(served_games=1000))
        try:
            yield server
        finally:
            server.close()


# ---------------------------------------------------------------- defect 1


def test_a_moon_game_nobody_plays_with_a_clock_ends_instead_of_being_redealt_for_ever(
    lenient_server: RunningServer,
) -> None:
    client = Client(lenient_server.address)
    try:
        game_id = create(client, "moon", time_control=clock())
        take_every_free_seat(client, game_id)
        wait_until("the game abandoned", lambda: abandoned(client, game_id))
        events = [e for _, e in log_events(lenient_server, game_id)]
        timeouts = [e for e in events if isinstance(e, engine.ClockExpired)]
        # Each of the three seats ran out of time three times in a row: then the game ended.
        assert len(timeouts) == 3 * 3
        assert events[-1] == engine.GameAbandoned("absent")
        # Three hands passed out by the clock (and the fourth dealt with the last timeout).
        assert sum(isinstance(e, engine.HandDealt) for e in events) <= 4
        # Nothing more is written once it is over.
        length = len(events)
        time.sleep(0.5)
        assert len(log_events(lenient_server, game_id)) == length
    finally:
        client.close()


def test_a_clock_of_1_ms_is_refused(server: RunningServer, client: Client) -> None:
    with rpc_error(Code.INVALID_ARGUMENT, "per_move_ms of at least 100"):
        create(client, "moon", time_control=clock(per_move_ms=1))
    with rpc_error(Code.INVALID_ARGUMENT, "per_move_ms of at least 100"):
        create(client, "moon", time_control=clock(per_move_ms=99))


def test_a_game_without_a_deal_limit_is_refused(server: RunningServer, client: Client) -> None:
    request = game_service_pb2.CreateGameRequest(
        rules=rules_pb2.Ruleset(preset="moon", deal_limit=0)
    )
    with rpc_error(Code.INVALID_ARGUMENT, "deal_limit=0"):
        client.stub.CreateGame(request, timeout=RPC_TIMEOUT)


def test_every_preset_a_client_creates_has_a_deal_limit(
    server: RunningServer, client: Client
) -> None:
    for preset in engine.preset_names():
        game_id = create(client, preset)
        assert client.game(game_id).rules.deal_limit == engine.DEAL_LIMIT


def test_a_seat_that_acts_keeps_its_game_going_while_the_others_time_out(
    lenient_server: RunningServer,
) -> None:
    # Seat 0 answers every turn of its own; seats 1 and 2 are away: they are played for, and
    # the game is not abandoned, since somebody is playing it.
    client = Client(lenient_server.address)
    try:
        # Half a second a move: seat 0 answers in time on a busy machine too (a late answer
        # only lets the clock play it once; three in a row would end the game).
        game_id = create(client, "moon", time_control=clock(per_move_ms=500))
        mine = client.take_seat(game_id, 0, "stays").seat_token
        for seat in (1, 2):
            client.take_seat(game_id, seat, "away")

        deadline = time.monotonic() + 120  # a hang guard
        answered = 0
        counted = 0.0
        while time.monotonic() < deadline:
            if answered >= 3 and time.monotonic() > counted + 0.25:
                counted = time.monotonic()
                if len(timeouts(lenient_server, game_id)) > 6:
                    break
            view = client.stub.GetView(
                game_service_pb2.GetViewRequest(game_id=game_id),
                metadata=(("authorization", f"Bearer {mine}"),),
                timeout=RPC_TIMEOUT,
            ).view
            if view.turn == 0 and view.legal_actions and view.phase != 0:
                try:
                    client.stub.SubmitAction(
                        game_service_pb2.SubmitActionRequest(
                            game_id=game_id,
                            expected_version=view.version,
                            request_id=client.next_request_id(),
                            action=view.legal_actions[0],
                        ),
                        metadata=(("authorization", f"Bearer {mine}"),),
                        timeout=RPC_TIMEOUT,
                    )
                    answered += 1
                except grpc.RpcError as error:
                    assert error.code() in (Code.ABORTED, Code.FAILED_PRECONDITION), error
            time.sleep(0.02)
        expired = timeouts(lenient_server, game_id)
        assert answered >= 3 and len(expired) > 6, (answered, len(expired))
        assert client.game(game_id).status == game_pb2.GAME_STATUS_PLAYING
    finally:
        client.close()


# ---------------------------------------------------------------- defect 2


def test_house_bots_and_a_seat_left_by_its_player_are_not_played_to_the_end_by_the_server(
    lenient_server: RunningServer,
) -> None:
    client = Client(lenient_server.address)
    try:
        game_id = create(
            client,
            "texas42",
            time_control=clock(),
            house_bots=[game_service_pb2.HouseBot(seat=s, strategy="random") for s in (1, 2, 3)],
        )
        take_every_free_seat(client, game_id)
        wait_until("the game abandoned", lambda: abandoned(client, game_id))
        events = [e for _, e in log_events(lenient_server, game_id)]
        timeouts = [e for e in events if isinstance(e, engine.ClockExpired)]
        assert len(timeouts) == 3 and {e.seat for e in timeouts} == {0}
        assert events[-1] == engine.GameAbandoned("absent")
        # A whole game is 800 events or so; the server played only until it saw nobody there.
        assert len(events) < 60
    finally:
        client.close()


def test_the_games_the_server_plays_for_one_address_are_bounded(
    fresh_server: RunningServer,
) -> None:
    client = Client(fresh_server.address)
    try:
        bots = [game_service_pb2.HouseBot(seat=s, strategy="random") for s in (1, 2, 3)]
        limit = Quotas().served_games
        for _ in range(limit):
            create(client, "texas42", house_bots=bots)
        with rpc_error(Code.RESOURCE_EXHAUSTED, f"limit of {limit} games with house bots"):
            create(client, "texas42", house_bots=bots)
        with rpc_error(Code.RESOURCE_EXHAUSTED, "a clock in play at once"):
            create(client, "moon", time_control=clock())
        # A game without house bots or a clock costs the server nothing by itself.
        create(client, "texas42")
    finally:
        client.close()


def test_a_game_the_server_played_in_gives_its_place_back_when_it_ends() -> None:
    quotas = Quotas(served_games=1)
    held = quotas.begin_served("ipv4:10.0.0.1", None)
    quotas.served("game-1", held)
    with pytest.raises(Exception, match="served_games|limit of 1 games"):
        quotas.begin_served("ipv4:10.0.0.1", None)
    quotas.game_over("game-1")
    quotas.served("game-2", quotas.begin_served("ipv4:10.0.0.1", None))


def test_the_actions_the_server_plays_for_one_address_are_bounded_per_minute() -> None:
    now = [1000.0]
    quotas = Quotas(served_actions_per_minute=5, clock=lambda: now[0])
    quotas.served("game-1", quotas.begin_served("ipv4:10.0.0.1", "acct"))
    for _ in range(5):
        quotas.served_action("game-1")
    with pytest.raises(Exception, match="served_actions_per_minute|5 actions a minute"):
        quotas.begin_served("ipv4:10.0.0.1", None)
    with pytest.raises(Exception, match="5 actions a minute the server plays .* one account"):
        quotas.begin_served("ipv4:10.0.0.2", "acct")
    quotas.begin_served("ipv4:10.0.0.3", None)  # somebody else is not held back
    now[0] += 61
    quotas.begin_served("ipv4:10.0.0.1", None)
