"""LobbyService.WatchTurns over real gRPC (issue 35): every turn of every seat of an account,
across all its games, on one stream; the ends of its games; the refusals.

Games here are driven only by the accounts' turn streams (each turn answered with the seat's
first legal action): a turn the stream failed to tell would stall its game, and what was told
is compared, version for version, with the turns the game's log shows.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import grpc
import pytest
from api_helpers import (
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
    competition_pb2,
    game_pb2,
    game_service_pb2,
    matches_pb2,
    matches_pb2_grpc,
    rules_pb2,
    view_pb2,
)
from boneyard.server.competition.accounts import new_api_key
from boneyard.server.quotas import Quotas
from tests.server.test_competition import account, lobby, organiser, reserved_game, wait_for

# ---------------------------------------------------------------- helpers


class Turns:
    """One account's WatchTurns stream in a thread, keeping every message; with ``answer``,
    each turn is answered at once with the seat's first legal action."""

    def __init__(
        self,
        client: Client,
        key: str,
        answer: bool = False,
        game_ids: tuple[str, ...] = (),
        acting: Client | None = None,
    ) -> None:
        self.key = key
        self.client = acting or client
        """Where turns are answered (``acting``: another server than the stream's)."""
        self.answer = answer
        request = competition_pb2.WatchTurnsRequest(game_ids=game_ids)
        self.call = lobby(client).WatchTurns(request, metadata=bearer(key), timeout=120)
        self.messages: list[competition_pb2.WatchTurnsResponse] = []
        self.error: grpc.RpcError | None = None
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for message in self.call:
                self.messages.append(message)
                if self.answer and not message.game_over:
                    self._act(message)
        except grpc.RpcError as error:
            self.error = error

    def _act(self, turn: competition_pb2.WatchTurnsResponse) -> None:
        self.client.stub.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                game_id=turn.game_id,
                expected_version=turn.version,
                request_id=f"{turn.game_id}:{turn.seat}:{turn.version}",
                action=turn.view.legal_actions[0],
                seat=turn.seat,  # a key holding two seats of the game must name the one
            ),
            metadata=bearer(self.key),
            timeout=RPC_TIMEOUT,
        )

    def turns(self, game_id: str) -> list[int]:
        """The versions told to act at in ``game_id``."""
        return [m.version for m in list(self.messages) if m.game_id == game_id and not m.game_over]

    def ends(self, game_id: str) -> list[competition_pb2.WatchTurnsResponse]:
        return [m for m in list(self.messages) if m.game_id == game_id and m.game_over]

    def stop(self) -> None:
        self.call.cancel()
        self._thread.join(timeout=RPC_TIMEOUT)


ACTS = (
    engine.BidPlaced,
    engine.Passed,
    engine.WidowExchanged,
    engine.WidowDeclined,
    engine.ContractDeclared,
    engine.TilePlayed,
)
"""The events a seat's own action begins a commit with (those that follow it in the same
commit, a trick won or a hand scored, are no turn anybody saw)."""


def turns_in_log(server: RunningServer, game_id: str, seat: int) -> list[int]:
    """The versions of the game at which ``seat`` acted, by its log: without a clock, every
    turn a seat had, and only those."""
    return [
        seq - 1
        for seq, event in log_events(server, game_id)
        if isinstance(event, ACTS) and event.seat == seat
    ]


def status(client: Client, game_id: str) -> int:
    return int(client.game(game_id).status)


@pytest.fixture
def four(server: RunningServer) -> list[tuple[str, str]]:
    """Four new bot accounts: ``(name, key)``."""
    return [account(server) for _ in range(4)]


# ---------------------------------------------------------------- what it tells


def test_on_opening_each_seat_of_the_account_to_act_is_told_with_its_view(
    server: RunningServer, client: Client, four: list[tuple[str, str]]
) -> None:
    key = organiser(server)
    # The same four accounts at three tables, seated differently: who is to act differs.
    tables = [
        reserved_game(server, client, four[i:] + four[:i], organiser_key=key, hand_limit=1)
        for i in range(3)
    ]
    watched = tables[0].tokens[client.view(tables[0], None).turn]  # to act at the first
    expected = {}
    for t in tables:
        view = client.stub.GetView(
            game_service_pb2.GetViewRequest(game_id=t.game_id), metadata=bearer(watched)
        ).view
        if view.turn == view.seat:
            expected[t.game_id] = view
    turns = Turns(client, watched)
    try:
        wait_for(lambda: len(turns.messages) >= len(expected), "a message per seat to act")
        told = {m.game_id: m for m in turns.messages}
        assert set(told) == set(expected) and len(turns.messages) == len(expected)
        for game_id, message in told.items():
            assert message.view == expected[game_id] and message.view.legal_actions
            assert message.version == expected[game_id].version and not message.game_over
            assert message.seat == expected[game_id].seat
    finally:
        turns.stop()


def test_every_turn_of_every_seat_across_games_is_told_and_each_end_once(
    server: RunningServer, client: Client, four: list[tuple[str, str]]
) -> None:
    streams = [Turns(client, key, answer=True) for _, key in four]
    try:
        key = organiser(server)
        tables = [
            reserved_game(server, client, four[i:] + four[:i], organiser_key=key, hand_limit=1)
            for i in range(2)
        ]
        for t in tables:
            wait_for(
                lambda t=t: status(client, t.game_id) == game_pb2.GAME_STATUS_FINISHED,
                "the game played to its end by the turn streams alone",
                timeout=120,
            )
        for stream in streams:
            wait_for(lambda s=stream: all(s.ends(t.game_id) for t in tables), "every end told")
        for t in tables:
            for seat, seat_key in t.tokens.items():
                stream = next(s for s in streams if s.key == seat_key)
                assert stream.turns(t.game_id) == turns_in_log(server, t.game_id, seat)
                (end,) = stream.ends(t.game_id)
                assert end.view.phase == view_pb2.PHASE_GAME_OVER and end.seat == seat
        assert all(s.error is None for s in streams)
    finally:
        for s in streams:
            s.stop()


def test_a_game_made_for_the_account_while_the_stream_is_open_is_followed(
    server: RunningServer, client: Client, four: list[tuple[str, str]]
) -> None:
    streams = [Turns(client, key) for _, key in four]
    try:
        table = reserved_game(server, client, four, hand_limit=1)
        view = client.view(table, None)
        wait_for(
            lambda: streams[view.turn].turns(table.game_id) == [view.version],
            "the new game's first turn told to the seat to act",
        )
        assert all(not s.messages for i, s in enumerate(streams) if i != view.turn)
    finally:
        for s in streams:
            s.stop()


def finished_game(server: RunningServer, client: Client, four: list[tuple[str, str]]) -> str:
    """A game reserved for the four accounts (seat ``i``: ``four[i]``), over: seat 0 resigned."""
    table = reserved_game(server, client, four, hand_limit=1)
    _, resigning = four[0]
    view = client.stub.GetView(
        game_service_pb2.GetViewRequest(game_id=table.game_id), metadata=bearer(resigning)
    ).view
    client.stub.SubmitAction(
        game_service_pb2.SubmitActionRequest(
            game_id=table.game_id,
            expected_version=view.version,
            request_id=str(uuid.uuid4()),
            action=actions_pb2.Action(resign=actions_pb2.Resign()),
        ),
        metadata=bearer(resigning),
        timeout=RPC_TIMEOUT,
    )
    assert status(client, table.game_id) == game_pb2.GAME_STATUS_FINISHED
    return table.game_id


def test_a_reopened_stream_is_told_the_end_of_a_game_it_was_playing(
    server: RunningServer, client: Client, four: list[tuple[str, str]]
) -> None:
    game_id = finished_game(server, client, four)
    turns = Turns(client, four[2][1], game_ids=(game_id,))
    try:
        wait_for(lambda: turns.ends(game_id), "the end told at once")
        (end,) = turns.ends(game_id)
        assert end.seat == 2 and end.view.phase == view_pb2.PHASE_GAME_OVER
        assert end.version == client.game(game_id).version
    finally:
        turns.stop()


# ---------------------------------------------------------------- a partnership's two seats


def match_playings(server: RunningServer, client: Client, a: str, b: str) -> tuple[str, str]:
    """A one-deal match of ``a`` against ``b``: its two playings, ``a`` holding seats 0 and 2
    of the first and 1 and 3 of the second."""
    stub = matches_pb2_grpc.MatchServiceStub(client.channel)
    request = matches_pb2.CreateMatchRequest(
        entrant_a=a,
        entrant_b=b,
        rules=rules_pb2.Ruleset(preset="texas42"),
        deals=1,
        max_games_in_flight=2,
    )
    made = stub.CreateMatch(request, metadata=bearer(organiser(server)), timeout=RPC_TIMEOUT)
    deals = matches_pb2.ListMatchDealsRequest(match_id=made.match.match_id)
    deal = wait_for(
        lambda: (
            (d := stub.ListMatchDeals(deals, timeout=RPC_TIMEOUT).deals)
            and len(d[0].game_ids) == 2
            and d[0]
        ),
        "both playings made",
    )
    first, second = deal.game_ids
    return first, second


def test_each_seat_of_a_partnership_is_told_its_turns_and_its_end_naming_it_and_resumed(
    server: RunningServer, client: Client
) -> None:
    (a, a_key), (b, b_key) = account(server), account(server)
    streams = [Turns(client, a_key, answer=True), Turns(client, b_key, answer=True)]
    try:
        first, second = match_playings(server, client, a, b)
        for game_id in (first, second):
            wait_for(
                lambda g=game_id: status(client, g) == game_pb2.GAME_STATUS_FINISHED,
                f"game {game_id} played to its end by the turn streams alone",
                timeout=120,
            )
        held = {a_key: {first: (0, 2), second: (1, 3)}, b_key: {first: (1, 3), second: (0, 2)}}
        for stream in streams:
            for game_id, seats in held[stream.key].items():
                wait_for(lambda s=stream, g=game_id: len(s.ends(g)) == 2, "both ends told")
                told = [m for m in list(stream.messages) if m.game_id == game_id]
                for seat in seats:
                    mine = [m.version for m in told if m.seat == seat and not m.game_over]
                    assert mine == turns_in_log(server, game_id, seat), (game_id, seat)
                    assert all(m.view.seat == seat for m in told if m.seat == seat)
                ends = stream.ends(game_id)
                assert sorted(m.seat for m in ends) == list(seats)
                assert all(m.view.phase == view_pb2.PHASE_GAME_OVER for m in ends)
                assert {m.seat for m in told} == set(seats)
    finally:
        for s in streams:
            s.stop()
    # A stream opened again naming both games (ended since): each seat's end, at once; the
    # account's seats in a game named are all followed, not its first alone.
    reopened = Turns(client, a_key, game_ids=(first, second))
    try:
        wait_for(lambda: len(reopened.messages) == 4, "the four ends told at once")
        assert all(m.game_over for m in reopened.messages)
        assert sorted((m.game_id, m.seat) for m in reopened.messages) == sorted(
            [(first, 0), (first, 2), (second, 1), (second, 3)]
        )
    finally:
        reopened.stop()


# ---------------------------------------------------------------- refusals


def test_watching_turns_without_a_key_is_unauthenticated(client: Client) -> None:
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED, "API key"):
        list(lobby(client).WatchTurns(competition_pb2.WatchTurnsRequest(), timeout=RPC_TIMEOUT))


def test_watching_turns_with_an_unknown_key_is_unauthenticated(client: Client) -> None:
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED):
        list(
            lobby(client).WatchTurns(
                competition_pb2.WatchTurnsRequest(),
                metadata=bearer(new_api_key()),
                timeout=RPC_TIMEOUT,
            )
        )


def test_a_stream_opened_with_a_key_revoked_since_ends_unauthenticated(
    server: RunningServer, client: Client, four: list[tuple[str, str]]
) -> None:
    name, key = four[0]
    turns = Turns(client, key)
    try:
        found = server.app.competition.account_named(name)
        assert found is not None
        assert server.app.competition.revoke_key(found.id) is not None
        # On PostgreSQL the revocation wakes the account's streams; on SQLite (no
        # notifications) they look at their next wake-up: a seat reserved for the account.
        reserved_game(server, client, four, hand_limit=1)
        wait_for(lambda: turns.error is not None, "the stream to end")
        assert turns.error is not None
        assert turns.error.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        turns.stop()


@pytest.mark.parametrize(
    ("game_ids", "code", "words"),
    [
        (["not-a-game"], grpc.StatusCode.INVALID_ARGUMENT, "not a game id"),
        ([str(uuid.uuid4())], grpc.StatusCode.NOT_FOUND, "no game"),
        ([str(uuid.uuid4())] * 1001, grpc.StatusCode.INVALID_ARGUMENT, "at most 1000"),
    ],
    ids=["malformed", "unknown", "too many"],
)
def test_a_reopened_stream_naming_games_it_cannot_be_playing_is_refused(
    server: RunningServer, client: Client, game_ids: list[str], code: grpc.StatusCode, words: str
) -> None:
    _, key = account(server)
    with rpc_error(code, words):
        list(
            lobby(client).WatchTurns(
                competition_pb2.WatchTurnsRequest(game_ids=game_ids),
                metadata=bearer(key),
                timeout=RPC_TIMEOUT,
            )
        )


def test_a_game_without_a_seat_of_the_account_is_not_its_to_follow(
    server: RunningServer, client: Client, four: list[tuple[str, str]]
) -> None:
    table = reserved_game(server, client, four, hand_limit=1)
    _, stranger = account(server)
    with rpc_error(grpc.StatusCode.PERMISSION_DENIED, "holds no seat"):
        list(
            lobby(client).WatchTurns(
                competition_pb2.WatchTurnsRequest(game_ids=[table.game_id]),
                metadata=bearer(stranger),
                timeout=RPC_TIMEOUT,
            )
        )


def test_turn_streams_per_account_are_bounded(tmp_path_factory: pytest.TempPathFactory) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('turn-quota') / 'q.db'}"
    server = RunningServer(url, Quotas(turn_streams_per_account=2))
    client = Client(server.address)
    try:
        four = [account(server) for _ in range(4)]
        game_id = finished_game(server, client, four)
        _, key = four[1]
        # Each stream tells the game's end as soon as it is open: then it is surely counted.
        open_ = [Turns(client, key, game_ids=(game_id,)) for _ in range(2)]
        wait_for(lambda: all(t.ends(game_id) for t in open_), "both streams open")
        with rpc_error(grpc.StatusCode.RESOURCE_EXHAUSTED, "turn streams"):
            list(
                lobby(client).WatchTurns(
                    competition_pb2.WatchTurnsRequest(), metadata=bearer(key), timeout=RPC_TIMEOUT
                )
            )
        another = Turns(client, four[2][1], game_ids=(game_id,))  # another account's: its own
        wait_for(lambda: another.ends(game_id), "another account's stream open")
        open_[0].stop()
        again = Turns(client, key, game_ids=(game_id,))  # a place freed by the one closed
        wait_for(lambda: again.ends(game_id) or again.error, "a stream in the place freed")
        assert again.error is None
        for t in (*open_, another, again):
            t.stop()
    finally:
        client.close()
        server.close()


# ---------------------------------------------------------------- across processes


@pytest.fixture
def two_servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Two servers' worth of parts on one new PostgreSQL database."""
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


@pytest.mark.postgres
def test_turns_of_a_game_played_through_another_process_are_told(
    two_servers: tuple[RunningServer, RunningServer],
) -> None:
    first, second = two_servers
    four = [account(first) for _ in range(4)]
    here, there = Client(first.address), Client(second.address)
    # Each account's stream is on the first server; its answers go through the second, so
    # every turn after the first reaches the stream through PostgreSQL's notifications. The
    # streams were opened before the game: they are told of it as it is made.
    streams = [Turns(here, key, answer=True, acting=there) for _, key in four]
    try:
        table = reserved_game(first, here, four, hand_limit=1)
        wait_for(
            lambda: status(here, table.game_id) == game_pb2.GAME_STATUS_FINISHED,
            "the game played through the other process",
            timeout=120,
        )
        wait_for(lambda: all(s.ends(table.game_id) for s in streams), "every seat told the end")
        for seat, seat_key in table.tokens.items():
            stream = next(s for s in streams if s.key == seat_key)
            assert stream.turns(table.game_id) == turns_in_log(first, table.game_id, seat)
            assert len(stream.ends(table.game_id)) == 1
    finally:
        for s in streams:
            s.stop()
        here.close()
        there.close()
