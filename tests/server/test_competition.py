"""Competitions over real gRPC: accounts and their keys, seats reserved for accounts,
seeking, clocks and tournaments (issue 6).

Each test makes accounts of its own on the module's server. Clock tests use short times
(tens of milliseconds) and wait for the server's clock keeper, never for a fixed time."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest
import sqlalchemy as sa

from boneyard import engine
from boneyard.api.v1 import (
    archive_pb2,
    archive_pb2_grpc,
    challenges_pb2,
    competition_pb2,
    competition_pb2_grpc,
    events_pb2,
    game_pb2,
    game_service_pb2,
    rules_pb2,
    view_pb2,
)
from boneyard.bots import strategy
from boneyard.clients.api import Client as ApiClient
from boneyard.clients.bot import Bot
from boneyard.records.verify import verify_record
from boneyard.server.archive.archive import Archive
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.competition.lobby import table_key
from boneyard.server.competition.tournaments import schedule, seating_count, seatings
from boneyard.server.games.app import GameApp, rules_for
from boneyard.server.store.account_events import account_events_after
from boneyard.server.store.db import WRITE
from boneyard.server.store.game_setup import TimeControl
from boneyard.server.store.models import AccountRow, GameClockRow, SeekRow
from boneyard.server.store.repository import EventStore
from tests.server.api_helpers import (
    RPC_TIMEOUT,
    Client,
    RunningServer,
    Table,
    bearer,
    first_timed_out,
    log_events,
    rpc_error,
    timeouts,
)

AUTO_PLAY = events_pb2.TIMEOUT_POLICY_AUTO_PLAY
FORFEIT = events_pb2.TIMEOUT_POLICY_FORFEIT


# ---------------------------------------------------------------- helpers


def account(server: RunningServer, prefix: str = "bot", kind: str = "bot") -> tuple[str, str]:
    """A new account (a bot's, unless ``kind="player"``): ``(name, key)``."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    key = new_api_key()
    server.app.competition.create_account(str(uuid.uuid4()), name, kind, key_hash(key))  # type: ignore[arg-type]
    return name, key


def organiser(server: RunningServer) -> str:
    """The key of a new player's account, to organise games and tournaments."""
    return account(server, "organiser", "player")[1]


def reserved_game(
    server: RunningServer,
    client: Client,
    accounts: list[tuple[str, str]],
    preset: str = "texas42",
    time_control: game_pb2.TimeControl | None = None,
    organiser_key: str | None = None,
    **options: Any,
) -> Table:
    """A game with seat ``i`` reserved for ``accounts[i]`` by ``organiser_key`` (a player's
    account); ``table.tokens`` holds the keys."""
    request = game_service_pb2.CreateGameRequest(
        rules=rules_pb2.Ruleset(preset=preset, **options),
        reservations=[
            game_service_pb2.SeatReservation(seat=i, account_name=name)
            for i, (name, _) in enumerate(accounts)
        ],
    )
    if time_control is not None:
        request.time_control.CopyFrom(time_control)
    response = client.stub.CreateGame(
        request, metadata=bearer(organiser_key or organiser(server)), timeout=RPC_TIMEOUT
    )
    table = Table(response.game_id, response.game.rules)
    for i, (_, key) in enumerate(accounts):
        table.tokens[i] = key
    return table


def lobby(client: Client) -> competition_pb2_grpc.LobbyServiceStub:
    return competition_pb2_grpc.LobbyServiceStub(client.channel)


def tournaments(client: Client) -> competition_pb2_grpc.TournamentServiceStub:
    return competition_pb2_grpc.TournamentServiceStub(client.channel)


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def record_verdict(server: RunningServer, game_id: str) -> Any:
    return verify_record(Archive(server.store).record(game_id))


class Seeker:
    """One Seek stream in a thread, keeping every message it gets."""

    def __init__(self, client: Client, key: str, preset: str = "moon", **rules: Any) -> None:
        request = competition_pb2.SeekRequest(rules=rules_pb2.Ruleset(preset=preset, **rules))
        self.key = key
        self.call = lobby(client).Seek(request, metadata=bearer(key), timeout=RPC_TIMEOUT)
        self.messages: list[competition_pb2.SeekResponse] = []
        self.error: grpc.RpcError | None = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for message in self.call:
                self.messages.append(message)
        except grpc.RpcError as error:
            self.error = error

    @property
    def seated(self) -> competition_pb2.SeatAssignment | None:
        found = [m.seated for m in self.messages if m.HasField("seated")]
        return found[0] if found else None

    def waiting_for(self, seekers: int) -> bool:
        return any(m.HasField("waiting") and m.waiting.seekers >= seekers for m in self.messages)

    def cancel(self) -> None:
        self.call.cancel()
        self._thread.join(timeout=10)


# ---------------------------------------------------------------- accounts and keys


def test_a_reserved_seat_is_played_with_the_accounts_key(
    server: RunningServer, client: Client
) -> None:
    accounts = [account(server) for _ in range(4)]
    table = reserved_game(server, client, accounts)
    game = client.game(table.game_id)
    assert game.status == game_pb2.GAME_STATUS_PLAYING
    assert [(s.occupied, s.account, s.player_name) for s in game.seats] == [
        (True, True, name) for name, _ in accounts
    ]
    for seat in range(4):
        assert client.view(table, seat).seat == seat
    turn = client.view(table, None).turn
    view = client.view(table, turn)
    response = client.submit(table, turn, view.legal_actions[0], view.version)
    assert response.version > view.version


def test_an_unknown_key_is_unauthenticated(server: RunningServer, client: Client) -> None:
    table = reserved_game(server, client, [account(server) for _ in range(4)])
    table.tokens[0] = new_api_key()
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED, "no account"):
        client.view(table, 0)


def test_the_key_of_an_account_without_a_seat_there_is_permission_denied(
    server: RunningServer, client: Client
) -> None:
    table = reserved_game(server, client, [account(server) for _ in range(4)])
    stranger, key = account(server)
    table.tokens[0] = key
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, stranger, "no seat"):
        client.view(table, 0)


def test_a_key_acts_only_for_its_own_seat(server: RunningServer, client: Client) -> None:
    table = reserved_game(server, client, [account(server) for _ in range(4)])
    turn = client.view(table, None).turn
    other = (turn + 1) % 4
    view = client.view(table, turn)
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, f"seat {other}"):
        client.stub.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                game_id=table.game_id,
                expected_version=view.version,
                request_id=client.next_request_id(),
                action=view.legal_actions[0],
                seat=turn,
            ),
            metadata=bearer(table.tokens[other]),
            timeout=RPC_TIMEOUT,
        )


def test_reserving_for_an_unknown_account_is_not_found(
    server: RunningServer, client: Client
) -> None:
    with rpc_error(grpc.StatusCode.NOT_FOUND, "nobody-such"):
        reserved_game(server, client, [("nobody-such", "")])


def test_reservations_are_refused_in_their_order_an_unknown_name_before_a_malformed_one(
    server: RunningServer, client: Client
) -> None:
    known = account(server)
    with rpc_error(grpc.StatusCode.NOT_FOUND, "nobody-such", "seat 1"):
        reserved_game(server, client, [known, ("nobody-such", ""), ("bad\x00name", "")])
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "seat 1", "no account name"):
        reserved_game(server, client, [known, ("bad\x00name", ""), ("nobody-such", "")])


def test_reserving_seats_needs_an_accounts_key(server: RunningServer, client: Client) -> None:
    name, _ = account(server)
    request = game_service_pb2.CreateGameRequest(
        reservations=[game_service_pb2.SeatReservation(seat=0, account_name=name)]
    )
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED, "API key"):
        client.stub.CreateGame(request, timeout=RPC_TIMEOUT)
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED, "no account"):
        client.stub.CreateGame(request, metadata=bearer(new_api_key()), timeout=RPC_TIMEOUT)


def test_a_bot_account_cannot_reserve_seats_for_others(
    server: RunningServer, client: Client
) -> None:
    bots = [account(server) for _ in range(4)]
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "bot account"):
        reserved_game(server, client, bots, organiser_key=bots[0][1])


def test_an_account_holds_only_one_seat_of_a_game(server: RunningServer, client: Client) -> None:
    twice = account(server)
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "only one seat"):
        reserved_game(server, client, [twice, twice])


def test_seat_tokens_still_open_the_seats_nobody_reserved(
    server: RunningServer, client: Client
) -> None:
    accounts = [account(server) for _ in range(2)]
    table = reserved_game(server, client, accounts)
    assert client.game(table.game_id).status == game_pb2.GAME_STATUS_OPEN
    with rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "taken"):
        client.take_seat(table.game_id, 0)
    token = client.take_seat(table.game_id, 2).seat_token
    table.tokens[2] = token
    assert client.view(table, 2).seat == 2


# ---------------------------------------------------------------- seeking


def test_a_table_forms_as_soon_as_enough_accounts_seek(
    server: RunningServer, client: Client
) -> None:
    keys = [account(server)[1] for _ in range(3)]
    seekers = [Seeker(client, key) for key in keys]
    wait_for(lambda: all(s.seated for s in seekers), "every seeker seated")
    seats = [s.seated for s in seekers]
    assert {s.game_id for s in seats} == {seats[0].game_id}
    assert sorted(s.seat for s in seats) == [0, 1, 2]
    game = client.game(seats[0].game_id)
    assert game.status == game_pb2.GAME_STATUS_PLAYING
    assert all(seat.account for seat in game.seats)
    for seeker, key in zip(seekers, keys, strict=True):
        view = client.stub.GetView(
            game_service_pb2.GetViewRequest(game_id=seeker.seated.game_id),
            metadata=bearer(key),
            timeout=RPC_TIMEOUT,
        ).view
        assert view.seat == seeker.seated.seat


def test_no_account_is_seated_twice_at_a_table(server: RunningServer, client: Client) -> None:
    a, b, c = (account(server)[1] for _ in range(3))
    first = [Seeker(client, a, "texas42"), Seeker(client, b, "texas42")]
    again = [Seeker(client, a, "texas42"), Seeker(client, b, "texas42")]
    wait_for(lambda: all(s.waiting_for(4) for s in first + again), "four seeks waiting")
    assert not any(s.seated for s in first + again), "a table of two accounts formed"
    late = [Seeker(client, c, "texas42")]
    time.sleep(0.5)
    assert not any(s.seated for s in first + again + late), "an account was seated twice"
    d = account(server)[1]
    late.append(Seeker(client, d, "texas42"))
    wait_for(lambda: all(s.seated for s in late), "a table of four accounts")
    # one seek of a and one of b (whichever the server registered first) sit with c and d
    wait_for(lambda: sum(1 for s in first + again if s.seated) == 2, "a's and b's seats")
    seated_early = [s for s in first + again if s.seated]
    assert {s.key for s in seated_early} == {a, b}
    table = seated_early + late
    assert len({s.seated.game_id for s in table}) == 1
    assert sorted(s.seated.seat for s in table) == [0, 1, 2, 3]
    for s in first + again + late:
        s.cancel()


def test_seekers_of_different_tables_do_not_meet(server: RunningServer, client: Client) -> None:
    keys = [account(server)[1] for _ in range(3)]
    seekers = [
        Seeker(client, keys[0]),
        Seeker(client, keys[1]),
        Seeker(client, keys[2], widow=rules_pb2.WIDOW_RULE_MAY_EXCHANGE),
    ]
    wait_for(lambda: all(s.messages for s in seekers), "first answers")
    time.sleep(0.5)
    assert not any(s.seated for s in seekers)
    for s in seekers:
        s.cancel()


def test_a_cancelled_seek_is_never_seated(server: RunningServer, client: Client) -> None:
    gone, b, c, d = (account(server)[1] for _ in range(4))
    leaving = Seeker(client, gone, "moon-s1")
    wait_for(lambda: leaving.messages, "the seek registered")
    leaving.cancel()

    def cancelled() -> bool:
        with server.store.engine.begin() as conn:
            statuses = (
                conn.execute(
                    sa.select(SeekRow.status)
                    .join(AccountRow, AccountRow.id == SeekRow.account_id)
                    .where(AccountRow.key_hash == key_hash(gone))
                )
                .scalars()
                .all()
            )
        return statuses == ["cancelled"]

    wait_for(cancelled, "the server to cancel the seek of the stream that ended")
    stay = [Seeker(client, b, "moon-s1"), Seeker(client, c, "moon-s1")]
    wait_for(lambda: all(s.messages for s in stay), "the seeks registered")
    time.sleep(0.3)
    assert not any(s.seated for s in stay)
    stay.append(Seeker(client, d, "moon-s1"))
    wait_for(lambda: all(s.seated for s in stay), "a table without the one who left")
    assert leaving.seated is None


def ghost_seek(server: RunningServer, name: str, preset: str) -> str:
    """A waiting seek whose stream is gone without cancelling it (a server killed -9)."""
    competition = server.app.competition
    holder = competition.account_named(name)
    assert holder is not None
    seek_id = str(uuid.uuid4())
    rules = rules_for(preset, {})  # as the server makes a seek's ruleset
    competition.add_seek(
        seek_id, holder.id, table_key(rules, None), preset, {}, None, rules.players
    )
    with server.store.engine.begin() as conn:
        conn.execute(
            sa.update(SeekRow)
            .where(SeekRow.id == seek_id)
            .values(seen_at=datetime.now(UTC) - timedelta(seconds=60))
        )
    return seek_id


def test_a_seek_whose_stream_is_gone_is_passed_over(server: RunningServer, client: Client) -> None:
    gone, _ = account(server)
    ghost = ghost_seek(server, gone, "moon-pagat")
    live = [Seeker(client, account(server)[1], "moon-pagat") for _ in range(2)]
    wait_for(lambda: all(s.messages for s in live), "the seeks registered")
    time.sleep(0.3)
    assert not any(s.seated for s in live), "a table formed around an absent seeker"
    assert all(m.waiting.seekers <= 2 for s in live for m in s.messages)
    live.append(Seeker(client, account(server)[1], "moon-pagat"))
    wait_for(lambda: all(s.seated for s in live), "a table of the three present")
    assert server.app.competition.seek(ghost).status == "waiting"


def test_a_table_forms_when_a_late_sign_of_life_comes_back(
    server: RunningServer, client: Client
) -> None:
    # The last seeker arrives while another's sign of life is late (a busy server): no table
    # then, but one as soon as the late seeker is seen again.
    keys = [account(server)[1] for _ in range(3)]
    early = [
        Seeker(client, key, "moon-s1", widow=rules_pb2.WIDOW_RULE_MUST_EXCHANGE) for key in keys[:2]
    ]
    wait_for(lambda: all(s.waiting_for(2) for s in early), "two seekers waiting")
    # A write transaction from its start: a read upgraded to a write fails at once on SQLite
    # when the server wrote meanwhile (a busy machine), instead of waiting its turn.
    with server.store.engine.execution_options(**{WRITE: True}).begin() as conn:
        seek_ids = (
            conn.execute(
                sa.select(SeekRow.id)
                .where(SeekRow.status == "waiting")
                .order_by(SeekRow.created_at.desc())
                .limit(2)
            )
            .scalars()
            .all()
        )
        conn.execute(
            sa.update(SeekRow)
            .where(SeekRow.id.in_(seek_ids))
            .values(seen_at=datetime.now(UTC) - timedelta(seconds=60))
        )
    late = Seeker(client, keys[2], "moon-s1", widow=rules_pb2.WIDOW_RULE_MUST_EXCHANGE)
    wait_for(lambda: all(s.seated for s in [*early, late]), "the table", timeout=60)
    assert len({s.seated.game_id for s in [*early, late]}) == 1


def test_seeking_again_cancels_the_accounts_seeks_whose_streams_are_gone(
    server: RunningServer, client: Client
) -> None:
    name, key = account(server)
    ghost = ghost_seek(server, name, "moon")
    again = Seeker(client, key, "moon")
    wait_for(lambda: again.messages, "the new seek registered")
    assert server.app.competition.seek(ghost).status == "cancelled"
    again.cancel()


def test_seeking_with_an_unknown_key_is_unauthenticated(client: Client) -> None:
    seeker = Seeker(client, new_api_key())
    wait_for(lambda: seeker.error is not None, "the error")
    assert seeker.error is not None and seeker.error.code() == grpc.StatusCode.UNAUTHENTICATED


def test_seeking_without_a_key_is_unauthenticated(client: Client) -> None:
    call = lobby(client).Seek(competition_pb2.SeekRequest(), timeout=RPC_TIMEOUT)
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED, "API key"):
        list(call)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (competition_pb2.SeekRequest(rules=rules_pb2.Ruleset(preset="chess")), "chess"),
        (
            competition_pb2.SeekRequest(time_control=game_pb2.TimeControl(per_move_ms=1000)),
            "policy",
        ),
        (
            competition_pb2.SeekRequest(
                time_control=game_pb2.TimeControl(bank_ms=5, policy=AUTO_PLAY)
            ),
            "per_move_ms",
        ),
    ],
)
def test_a_malformed_seek_is_invalid(
    server: RunningServer, client: Client, request_: competition_pb2.SeekRequest, message: str
) -> None:
    key = account(server)[1]
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, message):
        list(lobby(client).Seek(request_, metadata=bearer(key), timeout=RPC_TIMEOUT))


def test_watch_seats_tells_an_account_its_games(server: RunningServer, client: Client) -> None:
    accounts = [account(server) for _ in range(4)]
    before = reserved_game(server, client, accounts)
    call = lobby(client).WatchSeats(
        competition_pb2.WatchSeatsRequest(), metadata=bearer(accounts[1][1]), timeout=RPC_TIMEOUT
    )
    first = next(call)
    assert (first.assignment.game_id, first.assignment.seat) == (before.game_id, 1)
    later = reserved_game(server, client, [accounts[1], accounts[0], accounts[2], accounts[3]])
    second = next(call)
    assert (second.assignment.game_id, second.assignment.seat) == (later.game_id, 0)
    assert second.assignment.game.seats[0].player_name == accounts[1][0]
    call.cancel()


# ---------------------------------------------------------------- clocks


def clock(per_move_ms: int, bank_ms: int = 0, policy: int = AUTO_PLAY) -> game_pb2.TimeControl:
    return game_pb2.TimeControl(per_move_ms=per_move_ms, bank_ms=bank_ms, policy=policy)


def test_a_seat_that_never_answers_has_its_lowest_legal_action_played(
    server: RunningServer, client: Client
) -> None:
    table = reserved_game(
        server, client, [account(server) for _ in range(4)], time_control=clock(100), hand_limit=1
    )
    game = client.game(table.game_id)
    assert game.time_control.per_move_ms == 100 and game.HasField("turn_deadline")
    wait_for(
        lambda: client.game(table.game_id).status == game_pb2.GAME_STATUS_FINISHED,
        "the game played out by the clock",
        timeout=60,
    )
    events = [e for _, e in log_events(server, table.game_id)]
    expired = [e for e in events if isinstance(e, engine.ClockExpired)]
    assert expired and all(e.policy == "auto_play" for e in expired)
    # Every action of the game was a timeout's: replaying each with the engine gives the log.
    state = engine.replay(events[:1])
    position = 1
    while position < len(events):
        event = events[position]
        if isinstance(event, engine.HandDealt):
            produced = engine.decide(state, engine.Deal(event.seed))
        else:
            assert isinstance(event, engine.ClockExpired), f"{event} was not a timeout's"
            produced = engine.decide(state, engine.TimeOut(event.seat, "auto_play"))
        assert events[position : position + len(produced)] == produced
        for e in produced:
            state = engine.evolve(state, e)
        position += len(produced)
    assert record_verdict(server, table.game_id).valid


def test_forfeit_on_timeout_gives_the_game_to_the_other_team(
    server: RunningServer, client: Client
) -> None:
    table = reserved_game(
        server, client, [account(server) for _ in range(4)], time_control=clock(100, policy=FORFEIT)
    )
    wait_for(
        lambda: client.game(table.game_id).status == game_pb2.GAME_STATUS_FINISHED, "the forfeit"
    )
    turn = first_timed_out(server, table.game_id)
    assert timeouts(server, table.game_id) == [engine.ClockExpired(turn, "forfeit")]
    assert client.game(table.game_id).winner == 1 - turn % 2
    assert record_verdict(server, table.game_id).valid


def test_a_slow_seat_within_its_bank_is_not_penalised(
    server: RunningServer, client: Client
) -> None:
    table = reserved_game(
        server, client, [account(server) for _ in range(4)], time_control=clock(100, bank_ms=5000)
    )
    slow = []
    for _ in range(4):
        spectator = client.view(table, None)
        turn = spectator.turn
        view = client.view(table, turn)
        time.sleep(0.35)
        client.submit(table, turn, view.legal_actions[0], view.version)
        slow.append(turn)
    assert timeouts(server, table.game_id) == []
    banks = [s.bank_remaining_ms for s in client.game(table.game_id).seats]
    # each action took 350 ms or more (more on a busy machine), 250 over the allowance at
    # least: spent from the bank, which is not run out
    for seat in slow:
        assert 0 < banks[seat] <= 5000 - 250, banks
    # and it is still the seats' game: no timeout happened while they thought
    assert client.game(table.game_id).status == game_pb2.GAME_STATUS_PLAYING


def test_a_seat_out_of_per_move_time_spends_its_bank_before_the_policy(
    server: RunningServer, client: Client
) -> None:
    table = reserved_game(
        server, client, [account(server) for _ in range(4)], time_control=clock(100, bank_ms=400)
    )
    wait_for(lambda: timeouts(server, table.game_id), "the timeout", timeout=60)
    turn = first_timed_out(server, table.game_id)
    game = client.game(table.game_id)
    assert game.seats[turn].bank_remaining_ms == 0
    assert timeouts(server, table.game_id)[0] == engine.ClockExpired(turn, "auto_play")
    created = game.create_time.ToDatetime()
    expired_at = game.update_time.ToDatetime()
    assert (expired_at - created).total_seconds() >= 0.5


def test_a_full_tables_clock_starts_the_instant_its_game_is_created(tmp_path) -> None:
    # Each reading of the clock a second later than the last: a turn begun before the game's
    # own creation time would show here.
    ticks = iter(range(10**6))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    store = EventStore.open(f"sqlite:///{tmp_path / 'clock.db'}", migrate=True)
    try:
        app = GameApp(store, now=lambda: start + timedelta(seconds=next(ticks)))
        game_id, _ = app.create_game(
            "texas42",
            {},
            time_control=TimeControl(100, 1000, "auto_play"),
            reservations=[(3, app.competition.create_account("a1", "ann", "player", "0" * 64))],
            house_bots=[(seat, "heuristic") for seat in range(3)],
        )
        clock = app.competition.clock(game_id)
        assert clock is not None
        assert clock.state.turn_started_at == store.get_game(game_id).created_at
    finally:
        store.close()


def test_a_game_without_a_clock_never_times_out(server: RunningServer, client: Client) -> None:
    table = reserved_game(server, client, [account(server) for _ in range(4)])
    game = client.game(table.game_id)
    assert not game.HasField("time_control") and not game.HasField("turn_deadline")
    time.sleep(0.3)
    assert timeouts(server, table.game_id) == []


def test_a_time_control_without_a_policy_is_invalid(server: RunningServer, client: Client) -> None:
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "policy"):
        reserved_game(server, client, [account(server)], time_control=clock(100, policy=0))


def test_a_time_control_beyond_a_day_a_move_is_invalid(
    server: RunningServer, client: Client
) -> None:
    bot = account(server)
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "at most"):
        reserved_game(server, client, [bot], time_control=clock(2**32 - 1))
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "at most"):
        reserved_game(server, client, [bot], time_control=clock(1000, bank_ms=2**31))


def test_a_clock_left_behind_its_game_is_set_right(server: RunningServer, client: Client) -> None:
    # A crash between a seat taken and its clock can leave a full table's clock stopped or at
    # an older version in the database: the keeper of the next server to start restarts the
    # turn.
    table = reserved_game(
        server, client, [account(server) for _ in range(4)], time_control=clock(60_000)
    )
    with server.store.engine.begin() as conn:
        conn.execute(
            sa.update(GameClockRow)
            .where(GameClockRow.game_id == table.game_id)
            .values(turn_started_at=None, turn_version=0)
        )
    restarted = RunningServer(server.database_url)
    try:
        wait_for(
            lambda: (
                (c := server.app.competition.clock(table.game_id)) is not None
                and c.state.turn_started_at is not None
                and c.turn_version == c.version
            ),
            "the clock restarted",
        )
        again = Client(restarted.address)
        try:
            assert again.game(table.game_id).HasField("turn_deadline")
        finally:
            again.close()
    finally:
        restarted.close()


def test_a_seat_token_never_looks_like_an_api_key(
    server: RunningServer, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boneyard.server.games.app as app_module

    tokens = iter(["byk_" + "x" * 39, "a" * 43])
    monkeypatch.setattr(app_module.secrets, "token_urlsafe", lambda n: next(tokens))
    table = client.create("texas42")
    token = client.take_seat(table.game_id, 0).seat_token
    assert token == "a" * 43


def test_the_clock_survives_a_restart(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('clock') / 'boneyard.db'}"
    first = RunningServer(url)
    try:
        c = Client(first.address)
        table = reserved_game(
            first, c, [account(first) for _ in range(4)], time_control=clock(100, bank_ms=5000)
        )
        turn = c.view(table, None).turn
        view = c.view(table, turn)
        time.sleep(0.6)
        c.submit(table, turn, view.legal_actions[0], view.version)
        banks = [s.bank_remaining_ms for s in c.game(table.game_id).seats]
        assert banks[turn] < 5000
        nxt = c.view(table, None).turn
        c.close()
    finally:
        first.close()
    time.sleep(1.0)  # the server is down: that time is nobody's
    # (Times from the moment the second server starts: whatever the machine's speed after it,
    # the next seat's turn begins no earlier.)
    restarting = time.time()
    second = RunningServer(url)
    try:
        c = Client(second.address)
        game = c.game(table.game_id)
        assert [s.bank_remaining_ms for s in game.seats] == banks
        allowed = (100 + banks[nxt]) / 1000
        assert game.turn_deadline.ToDatetime().timestamp() >= restarting + allowed - 0.01
        wait_for(lambda: timeouts(second, table.game_id), "the clock running again", timeout=60)
        assert timeouts(second, table.game_id)[0].seat == nxt
        # Run out no earlier than a whole allowance after the restart (the game changed then).
        expired = c.game(table.game_id).update_time.ToDatetime().timestamp()
        assert expired >= restarting + allowed - 0.01
        c.close()
    finally:
        second.close()


# ---------------------------------------------------------------- tournaments: schedule


def test_round_robin_seats_four_entrants_in_the_three_partnerships_of_42() -> None:
    rules = engine.ruleset("texas42")
    ways = list(seatings(rules.teams, ["a", "b", "c", "d"]))
    assert seating_count(rules.teams, 4) == 3
    partnerships = {frozenset((frozenset((s[0], s[2])), frozenset((s[1], s[3])))) for s in ways}
    assert len(ways) == 3 and len(partnerships) == 3


def test_round_robin_over_five_entrants_chooses_every_table() -> None:
    rules = engine.ruleset("moon")
    ways = list(seatings(rules.teams, ["a", "b", "c", "d", "e"]))
    assert len(ways) == 10 and len({frozenset(w) for w in ways}) == 10
    assert seating_count(rules.teams, 5) == 10


def test_a_schedule_makes_only_the_seatings_it_plays() -> None:
    # 64 entrants of Texas 42 can be seated in 1.9 million ways; 3 deals need 3 of them.
    rules = engine.ruleset("texas42")
    entrants = [f"e{i}" for i in range(64)]
    assert seating_count(rules.teams, 64) == 3 * 635_376
    games = schedule(rules, entrants, 3, duplicate=True)
    assert len(games) == 6


def test_duplicate_42_plays_each_deal_with_the_teams_swapping_sides() -> None:
    rules = engine.ruleset("texas42")
    games = schedule(rules, ["a", "b", "c", "d"], 3, duplicate=True)
    assert [(d, r) for d, r, _ in games] == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    for deal in range(3):
        first, second = (s for d, _, s in games if d == deal)
        # the hands of seats 0 and 2 go to the other partnership in the second playing
        assert {first[0], first[2]} == {second[1], second[3]}
        assert {first[1], first[3]} == {second[0], second[2]}


def test_duplicate_moon_plays_each_deal_once_from_every_seat() -> None:
    rules = engine.ruleset("moon")
    games = schedule(rules, ["a", "b", "c"], 2, duplicate=True)
    assert len(games) == 6
    for deal in range(2):
        playings = [s for d, _, s in games if d == deal]
        for seat in range(3):
            assert sorted(p[seat] for p in playings) == ["a", "b", "c"]


def test_without_duplicate_each_deal_is_played_once() -> None:
    games = schedule(engine.ruleset("texas42"), ["a", "b", "c", "d"], 4, duplicate=False)
    assert [(d, r) for d, r, _ in games] == [(0, 0), (1, 0), (2, 0), (3, 0)]


# ---------------------------------------------------------------- tournaments: bad input


def create_request(entrants: list[str], deals: int = 2, **kwargs: Any) -> Any:
    return competition_pb2.CreateTournamentRequest(
        name="cup",
        rules=rules_pb2.Ruleset(preset="texas42"),
        entrants=entrants,
        deals=deals,
        duplicate=True,
        **kwargs,
    )


def test_creating_a_tournament_needs_a_key(server: RunningServer, client: Client) -> None:
    names = [account(server)[0] for _ in range(4)]
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED):
        tournaments(client).CreateTournament(create_request(names), timeout=RPC_TIMEOUT)
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED):
        tournaments(client).CreateTournament(
            create_request(names), metadata=bearer(new_api_key()), timeout=RPC_TIMEOUT
        )


@pytest.mark.parametrize(
    ("change", "code", "message"),
    [
        (
            lambda names: create_request(names + ["nobody-at-all"]),
            grpc.StatusCode.NOT_FOUND,
            "nobody-at-all",
        ),
        (lambda names: create_request(names[:3]), grpc.StatusCode.INVALID_ARGUMENT, "needs 4"),
        (
            lambda names: create_request(names + names[:1]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "twice",
        ),
        (lambda names: create_request(names, deals=0), grpc.StatusCode.INVALID_ARGUMENT, "deals"),
        (
            lambda names: create_request(names, time_control=game_pb2.TimeControl(per_move_ms=500)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "policy",
        ),
    ],
)
def test_a_malformed_tournament_is_refused(
    server: RunningServer, client: Client, change: Any, code: grpc.StatusCode, message: str
) -> None:
    names = [account(server)[0] for _ in range(4)]
    organiser = account(server, "organiser", "player")[1]
    with rpc_error(code, message):
        tournaments(client).CreateTournament(
            change(names), metadata=bearer(organiser), timeout=RPC_TIMEOUT
        )


def test_a_bot_account_cannot_organise_a_tournament(server: RunningServer, client: Client) -> None:
    entrants = [account(server) for _ in range(4)]
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "bot account"):
        tournaments(client).CreateTournament(
            create_request([n for n, _ in entrants]),
            metadata=bearer(entrants[0][1]),
            timeout=RPC_TIMEOUT,
        )


def test_only_its_organiser_starts_a_tournament(server: RunningServer, client: Client) -> None:
    entrants = [account(server) for _ in range(4)]
    made = (
        tournaments(client)
        .CreateTournament(
            create_request([n for n, _ in entrants]),
            metadata=bearer(organiser(server)),
            timeout=RPC_TIMEOUT,
        )
        .tournament
    )
    start = competition_pb2.StartTournamentRequest(tournament_id=made.tournament_id)
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "only its organiser"):
        tournaments(client).StartTournament(
            start, metadata=bearer(organiser(server)), timeout=RPC_TIMEOUT
        )
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "bot account"):
        tournaments(client).StartTournament(
            start, metadata=bearer(entrants[0][1]), timeout=RPC_TIMEOUT
        )
    got = tournaments(client).GetTournament(
        competition_pb2.GetTournamentRequest(tournament_id=made.tournament_id), timeout=RPC_TIMEOUT
    )
    assert got.tournament.status == competition_pb2.TOURNAMENT_STATUS_CREATED


def test_a_tournament_names_its_organiser_and_its_teams(
    server: RunningServer, client: Client
) -> None:
    """Who made a tournament (and alone may start or cancel it) is public, as its entrants are;
    the teams say whose the scores of its games are."""
    name, key = account(server, "organiser", "player")
    stub = tournaments(client)
    made = stub.CreateTournament(
        create_request([account(server)[0] for _ in range(4)]),
        metadata=bearer(key),
        timeout=RPC_TIMEOUT,
    ).tournament
    assert made.organiser == name
    got = stub.GetTournament(
        competition_pb2.GetTournamentRequest(tournament_id=made.tournament_id), timeout=RPC_TIMEOUT
    ).tournament
    listed = stub.ListTournaments(competition_pb2.ListTournamentsRequest(), timeout=RPC_TIMEOUT)
    assert got.organiser == name
    assert [t.organiser for t in listed.tournaments if t.tournament_id == made.tournament_id] == [
        name
    ]
    # and the teams its games' scores and winners count: partners sit opposite
    assert [list(team.seats) for team in got.teams] == [[0, 2], [1, 3]]


def test_an_unknown_tournament_view_is_invalid(server: RunningServer, client: Client) -> None:
    made = (
        tournaments(client)
        .CreateTournament(
            create_request([account(server)[0] for _ in range(4)]),
            metadata=bearer(organiser(server)),
            timeout=RPC_TIMEOUT,
        )
        .tournament
    )
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "view"):
        tournaments(client).GetTournament(
            competition_pb2.GetTournamentRequest(tournament_id=made.tournament_id, view=7),
            timeout=RPC_TIMEOUT,
        )


def test_an_unknown_tournament_is_not_found(client: Client) -> None:
    with rpc_error(grpc.StatusCode.NOT_FOUND):
        tournaments(client).GetTournament(
            competition_pb2.GetTournamentRequest(tournament_id=str(uuid.uuid4())),
            timeout=RPC_TIMEOUT,
        )


# ---------------------------------------------------------------- tournaments: played


def play_seats(address: str, key: str, stop: threading.Event) -> None:
    """A minimal account bot: follow WatchSeats, play each game (one at a time) with the
    heuristic strategy."""
    api = ApiClient(address)
    channel = grpc.insecure_channel(address)
    call = competition_pb2_grpc.LobbyServiceStub(channel).WatchSeats(
        competition_pb2.WatchSeatsRequest(), metadata=bearer(key)
    )
    try:
        for message in call:
            if stop.is_set():
                break
            Bot(api, message.assignment.game_id, key, strategy("heuristic"), stop=stop).run()
    except grpc.RpcError:
        pass
    finally:
        call.cancel()
        channel.close()
        api.close()


def play_game_with_keys(client: Client, game_id: str, keys: list[str]) -> None:
    """First legal actions, each seat with its account's key, to the end of the game."""
    table = Table(game_id, client.game(game_id).rules)
    table.tokens.update(enumerate(keys))
    for _ in range(500):
        views = [client.view(table, seat) for seat in range(len(keys))]
        if views[0].phase == view_pb2.PHASE_GAME_OVER:
            return
        seat = next(v.seat for v in views if v.legal_actions)
        client.submit(table, seat, views[seat].legal_actions[0], views[seat].version)
    raise AssertionError("the game did not end")


def test_the_playings_of_a_deal_start_together_and_stay_closed_until_all_are_over(
    server: RunningServer, client: Client
) -> None:
    entrants = [account(server) for _ in range(4)]
    keys = dict(entrants)
    organiser = account(server, "organiser", "player")[1]
    stub = tournaments(client)
    created = stub.CreateTournament(
        create_request([n for n, _ in entrants], deals=1),
        metadata=bearer(organiser),
        timeout=RPC_TIMEOUT,
    ).tournament
    stub.StartTournament(
        competition_pb2.StartTournamentRequest(tournament_id=created.tournament_id),
        metadata=bearer(organiser),
        timeout=RPC_TIMEOUT,
    )
    request = competition_pb2.GetTournamentRequest(tournament_id=created.tournament_id)
    games = wait_for(
        lambda: (
            all((r := stub.GetTournament(request, timeout=RPC_TIMEOUT)).games)
            and all(g.game_id for g in r.games)
            and r.games
        ),
        "both playings made",
    )
    first, second = games
    # closed to spectators while they are played
    for g in (first, second):
        with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "other tables"):
            client.view(Table(g.game_id, None), None)
        with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "other tables"):
            list(client.watch(Table(g.game_id, None), None))
    play_game_with_keys(client, first.game_id, [keys[n] for n in first.seats])
    archive = archive_pb2_grpc.ArchiveServiceStub(client.channel)
    record_of = archive_pb2.GetRecordRequest(game_id=first.game_id)
    # over, but its deal is still being played at the other table
    with rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "another table"):
        archive.GetRecord(record_of, timeout=RPC_TIMEOUT)
    assert not server.store.get_seed(first.game_id, 1).revealed
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "other tables"):
        client.view(Table(first.game_id, None), None)
    # nor its result: not in GetGame, the archive's list or the tournament's games and standings
    summary = client.game(first.game_id)
    assert summary.status == game_pb2.GAME_STATUS_FINISHED
    assert not summary.scores and not summary.HasField("winner")
    listed = archive.ListArchivedGames(archive_pb2.ListArchivedGamesRequest(), timeout=RPC_TIMEOUT)
    assert first.game_id not in {g.game_id for g in listed.games}
    during = stub.GetTournament(request, timeout=RPC_TIMEOUT)
    assert all(not g.scores and not g.HasField("winner") for g in during.games)
    assert not during.individuals and not during.partnerships
    play_game_with_keys(client, second.game_id, [keys[n] for n in second.seats])
    wait_for(
        lambda: (
            stub.GetTournament(request, timeout=RPC_TIMEOUT).tournament.status
            == competition_pb2.TOURNAMENT_STATUS_FINISHED
        ),
        "the tournament to finish",
    )
    for g in (first, second):
        record = archive.GetRecord(
            archive_pb2.GetRecordRequest(game_id=g.game_id), timeout=RPC_TIMEOUT
        ).record
        assert verify_record(record).valid
        assert client.view(Table(g.game_id, None), None).phase == view_pb2.PHASE_GAME_OVER
        assert client.game(g.game_id).HasField("winner")
    after = stub.GetTournament(request, timeout=RPC_TIMEOUT)
    assert all(g.HasField("winner") for g in after.games) and len(after.individuals) == 4


def started_tournament(
    server: RunningServer, client: Client, duplicate: bool
) -> tuple[Any, list[tuple[str, str]]]:
    """A one-deal Texas 42 tournament of four new bot accounts, started by an organiser: the
    tournament and its entrants' ``(name, key)``."""
    entrants = [account(server) for _ in range(4)]
    key = organiser(server)
    stub = tournaments(client)
    request = create_request([n for n, _ in entrants], deals=1)
    request.duplicate = duplicate
    made = stub.CreateTournament(request, metadata=bearer(key), timeout=RPC_TIMEOUT).tournament
    stub.StartTournament(
        competition_pb2.StartTournamentRequest(tournament_id=made.tournament_id),
        metadata=bearer(key),
        timeout=RPC_TIMEOUT,
    )
    return made, entrants


def test_a_tournament_without_duplicate_can_be_watched_live(
    server: RunningServer, client: Client
) -> None:
    made, _ = started_tournament(server, client, duplicate=False)
    stub = tournaments(client)
    get = competition_pb2.GetTournamentRequest(tournament_id=made.tournament_id)
    (game,) = wait_for(
        lambda: (r := stub.GetTournament(get, timeout=RPC_TIMEOUT)).games[0].game_id and r.games,
        "the game made",
    )
    assert client.view(Table(game.game_id, None), None).phase == view_pb2.PHASE_BIDDING
    assert client.game(game.game_id).version > 0


def test_each_entrant_is_told_its_tournament_game_with_the_tournament_named(
    server: RunningServer, client: Client
) -> None:
    made, entrants = started_tournament(server, client, duplicate=True)
    stub = tournaments(client)
    get = competition_pb2.GetTournamentRequest(tournament_id=made.tournament_id)
    wait_for(
        lambda: all(g.game_id for g in stub.GetTournament(get, timeout=RPC_TIMEOUT).games),
        "the games made",
    )
    made_ids = {g.game_id for g in stub.GetTournament(get, timeout=RPC_TIMEOUT).games}
    for name, _ in entrants:
        entrant = server.app.competition.account_named(name)
        assert entrant is not None
        with server.store.reading() as session:
            told = account_events_after(session, entrant.id, 0, 100)
        started = [
            challenges_pb2.AccountEvent.FromString(e.payload).game_started
            for e in told
            if e.kind == "game_started"
        ]
        assert started, f"{name} was told no game"
        assert {s.game_id for s in started} <= made_ids
        assert {s.tournament_id for s in started} == {made.tournament_id}
        assert {s.challenge_id for s in started} == {""}


def test_a_cancelled_tournament_makes_no_more_games_and_rates_what_was_played(
    server: RunningServer, client: Client
) -> None:
    entrants = [account(server) for _ in range(4)]
    keys = dict(entrants)
    key = organiser(server)
    stub = tournaments(client)
    # One deal at a time: the first deal's playings are all that is made before the cancel.
    made = stub.CreateTournament(
        create_request([n for n, _ in entrants], deals=3, max_games_per_entrant=1),
        metadata=bearer(key),
        timeout=RPC_TIMEOUT,
    ).tournament
    ident = competition_pb2.StartTournamentRequest(tournament_id=made.tournament_id)
    stub.StartTournament(ident, metadata=bearer(key), timeout=RPC_TIMEOUT)
    get = competition_pb2.GetTournamentRequest(tournament_id=made.tournament_id)
    first_deal = wait_for(
        lambda: (
            len(
                made_ := [
                    g for g in stub.GetTournament(get, timeout=RPC_TIMEOUT).games if g.game_id
                ]
            )
            == 2
            and made_
        ),
        "both playings of the first deal",
    )
    cancel = competition_pb2.CancelTournamentRequest(tournament_id=made.tournament_id)
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "only its organiser"):
        stub.CancelTournament(cancel, metadata=bearer(organiser(server)), timeout=RPC_TIMEOUT)
    cancelled = stub.CancelTournament(cancel, metadata=bearer(key), timeout=RPC_TIMEOUT).tournament
    assert cancelled.status == competition_pb2.TOURNAMENT_STATUS_CANCELLED
    with rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "cancelled already"):
        stub.CancelTournament(cancel, metadata=bearer(key), timeout=RPC_TIMEOUT)
    # the games being played are played to their end; no other game is made
    for g in first_deal:
        play_game_with_keys(client, g.game_id, [keys[n] for n in g.seats])
    archive = archive_pb2_grpc.ArchiveServiceStub(client.channel)
    wait_for(
        lambda: all(server.store.get_seed(g.game_id, 1).revealed for g in first_deal),
        "the played deal published",
    )
    time.sleep(0.3)
    final = stub.GetTournament(get, timeout=RPC_TIMEOUT)
    assert final.tournament.status == competition_pb2.TOURNAMENT_STATUS_CANCELLED
    assert [g.game_id for g in final.games if g.game_id] == [g.game_id for g in first_deal]
    assert final.tournament.games_finished == 2 and final.tournament.games_total == 6
    assert {s.name for s in final.individuals} == set(keys) and all(
        s.games == 2 for s in final.individuals
    )
    for g in first_deal:
        record = archive.GetRecord(
            archive_pb2.GetRecordRequest(game_id=g.game_id), timeout=RPC_TIMEOUT
        )
        assert verify_record(record.record).valid


def test_a_duplicate_tournament_is_played_out_and_rated(
    server: RunningServer, client: Client
) -> None:
    entrants = [account(server) for _ in range(4)]
    organiser = account(server, "organiser", "player")[1]
    stub = tournaments(client)
    created = stub.CreateTournament(
        create_request([n for n, _ in entrants], deals=2),
        metadata=bearer(organiser),
        timeout=RPC_TIMEOUT,
    ).tournament
    assert created.status == competition_pb2.TOURNAMENT_STATUS_CREATED
    assert created.games_total == 4 and created.rules.hand_limit == 1
    stop = threading.Event()
    bots = [
        threading.Thread(target=play_seats, args=(server.address, key, stop), daemon=True)
        for _, key in entrants
    ]
    for b in bots:
        b.start()
    try:
        stub.StartTournament(
            competition_pb2.StartTournamentRequest(tournament_id=created.tournament_id),
            metadata=bearer(organiser),
            timeout=RPC_TIMEOUT,
        )
        request = competition_pb2.GetTournamentRequest(tournament_id=created.tournament_id)
        done = wait_for(
            lambda: (
                (r := stub.GetTournament(request, timeout=RPC_TIMEOUT)).tournament.status
                == competition_pb2.TOURNAMENT_STATUS_FINISHED
                and r
            ),
            "the tournament to finish",
            timeout=120,
        )
    finally:
        stop.set()
    assert done.tournament.games_finished == 4
    basic = stub.GetTournament(
        competition_pb2.GetTournamentRequest(
            tournament_id=created.tournament_id, view=competition_pb2.TOURNAMENT_VIEW_BASIC
        ),
        timeout=RPC_TIMEOUT,
    )
    assert basic.tournament == done.tournament
    assert not basic.games and not basic.individuals and not basic.partnerships
    # the two playings of a deal got the same hands, the partnerships on opposite sides
    for deal in range(2):
        twins = [g for g in done.games if g.deal == deal]
        dealt = [
            next(e for _, e in log_events(server, g.game_id) if isinstance(e, engine.HandDealt))
            for g in twins
        ]
        assert dealt[0].hands == dealt[1].hands
        assert twins[0].seats[0] == twins[1].seats[1]
    # the standings are the archive's results
    totals: dict[str, list[int]] = {n: [0, 0, 0] for n, _ in entrants}
    for g in done.games:
        record = Archive(server.store).record(g.game_id)
        verdict = verify_record(record)
        assert verdict.valid
        summary = verdict.summary
        for seat, name in enumerate(g.seats):
            team = summary.rules.team_of[seat]
            totals[name][0] += 1
            totals[name][1] += summary.scores[team]
            totals[name][2] += int(summary.winner == team)
    by_name = {s.name: s for s in done.individuals}
    assert set(by_name) == set(totals)
    for name, (games, score_for, wins) in totals.items():
        assert (by_name[name].games, by_name[name].score_for, by_name[name].wins) == (
            games,
            score_for,
            wins,
        )
    assert done.partnerships and all(" & " in p.name for p in done.partnerships)
    assert [s.ordinal for s in done.individuals] == sorted(
        (s.ordinal for s in done.individuals), reverse=True
    )
