"""LobbyService.PlayTurns over real gRPC (issue 35): an account's turns told, and answered, on
one stream each way; an answer refused is told on the stream, which goes on.

Games here are driven only by the accounts' PlayTurns streams (each turn answered with the
seat's first legal action): a turn told wrong or an answer lost would stall its game, and what
was told is compared, version for version, with the turns the game's log shows.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest
from api_helpers import RPC_TIMEOUT, Client, RunningServer, Table, bearer, rpc_error

from boneyard.api.v1 import (
    actions_pb2,
    competition_pb2,
    competition_pb2_grpc,
    game_pb2,
    rules_pb2,
)
from tests.server.test_competition import account, lobby, organiser, reserved_game, wait_for
from tests.server.test_watch_turns import status, turns_in_log

Turn = competition_pb2.WatchTurnsResponse


class Player:
    """One account's PlayTurns stream, read in a thread that keeps every message; with
    ``answer``, each turn is answered at once on the stream with the seat's first legal
    action. ``send`` sends any message."""

    def __init__(
        self,
        channel: grpc.Channel,
        key: str,
        answer: bool = False,
        game_ids: tuple[str, ...] = (),
        first: competition_pb2.PlayTurnsRequest | None = None,
    ) -> None:
        self.key = key
        self.answer = answer
        self._out: queue.SimpleQueue[competition_pb2.PlayTurnsRequest | None] = (
            queue.SimpleQueue()
        )
        self._out.put(
            first
            or competition_pb2.PlayTurnsRequest(
                open=competition_pb2.WatchTurnsRequest(game_ids=game_ids)
            )
        )
        stub = competition_pb2_grpc.LobbyServiceStub(channel)
        self.call = stub.PlayTurns(self._requests(), metadata=bearer(key), timeout=120)
        self.messages: list[competition_pb2.PlayTurnsResponse] = []
        self.error: grpc.RpcError | None = None
        self.ended = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _requests(self) -> Iterator[competition_pb2.PlayTurnsRequest]:
        while (request := self._out.get()) is not None:
            yield request

    def _read(self) -> None:
        try:
            for message in self.call:
                self.messages.append(message)
                turn = message.turn
                if self.answer and message.HasField("turn") and not turn.game_over:
                    self.send_answer(turn, turn.view.legal_actions[0])
            self.ended = True
        except grpc.RpcError as error:
            self.error = error

    def send(self, request: competition_pb2.PlayTurnsRequest) -> None:
        self._out.put(request)

    def send_answer(self, turn: Turn, action: actions_pb2.Action, version: int = 0) -> None:
        self.send(
            competition_pb2.PlayTurnsRequest(
                answer=competition_pb2.TurnAnswer(
                    game_id=turn.game_id,
                    seat=turn.seat,
                    version=version or turn.version,
                    action=action,
                )
            )
        )

    def close_sending(self) -> None:
        self._out.put(None)

    def turns(self, game_id: str) -> list[Turn]:
        return [
            m.turn
            for m in list(self.messages)
            if m.HasField("turn") and m.turn.game_id == game_id and not m.turn.game_over
        ]

    def ends(self, game_id: str) -> list[Turn]:
        return [
            m.turn
            for m in list(self.messages)
            if m.HasField("turn") and m.turn.game_id == game_id and m.turn.game_over
        ]

    def refusals(self) -> list[competition_pb2.TurnRefused]:
        return [m.refused for m in list(self.messages) if m.HasField("refused")]

    def stop(self) -> None:
        self.call.cancel()
        self._out.put(None)
        self._thread.join(timeout=RPC_TIMEOUT)


@pytest.fixture
def four(server: RunningServer) -> list[tuple[str, str]]:
    """Four new bot accounts: ``(name, key)``."""
    return [account(server) for _ in range(4)]


def first_turn(players: list[Player], game_id: str) -> tuple[Player, Turn]:
    """The player told the game's first turn, and that turn."""

    def told() -> tuple[Player, Turn] | None:
        for player in players:
            turns = player.turns(game_id)
            if turns:
                return player, turns[0]
        return None

    found: tuple[Player, Turn] = wait_for(told, "the first turn told")
    return found


def version_of(client: Client, game_id: str) -> int:
    return int(client.game(game_id).version)


# ---------------------------------------------------------------- playing


def test_games_answered_only_on_the_turn_streams_are_played_to_their_end(
    server: RunningServer, client: Client, four: list[tuple[str, str]]
) -> None:
    players = [Player(client.channel, key, answer=True) for _, key in four]
    try:
        key = organiser(server)
        tables = [
            reserved_game(server, client, four[i:] + four[:i], organiser_key=key, hand_limit=1)
            for i in range(2)
        ]
        for t in tables:
            wait_for(
                lambda t=t: status(client, t.game_id) == game_pb2.GAME_STATUS_FINISHED,
                "the game played to its end by the PlayTurns streams alone",
                timeout=120,
            )
        for player in players:
            wait_for(lambda p=player: all(p.ends(t.game_id) for t in tables), "every end told")
        for t in tables:
            for seat, seat_key in t.tokens.items():
                player = next(p for p in players if p.key == seat_key)
                told = [turn.version for turn in player.turns(t.game_id)]
                assert told == turns_in_log(server, t.game_id, seat)
                (end,) = player.ends(t.game_id)
                assert end.seat == seat
        assert all(p.error is None and not p.refusals() for p in players)
    finally:
        for p in players:
            p.stop()


@dataclass
class FirstTurn:
    """A game reserved for four accounts, each with its PlayTurns stream open (answering
    nothing by itself), and its first turn told: to ``player``."""

    players: list[Player]
    table: Table
    player: Player
    turn: Turn

    @property
    def game_id(self) -> str:
        return self.table.game_id

    def next_seat_told(self) -> list[Turn]:
        """The next seat's turns told (after the first was answered)."""
        key = self.table.tokens[(self.turn.seat + 1) % 4]
        return next(p for p in self.players if p.key == key).turns(self.game_id)


@pytest.fixture
def first(
    server: RunningServer, client: Client, four: list[tuple[str, str]]
) -> Iterator[FirstTurn]:
    players = [Player(client.channel, key) for _, key in four]
    try:
        table = reserved_game(server, client, four, hand_limit=1)
        player, turn = first_turn(players, table.game_id)
        yield FirstTurn(players, table, player, turn)
    finally:
        for p in players:
            p.stop()


def test_an_answer_sent_again_is_applied_once(client: Client, first: FirstTurn) -> None:
    turn = first.turn
    first.player.send_answer(turn, turn.view.legal_actions[0])
    first.player.send_answer(turn, turn.view.legal_actions[0])  # as after a lost connection
    wait_for(lambda: version_of(client, first.game_id) > turn.version, "the answer applied")
    wait_for(first.next_seat_told, "the next seat's turn")  # both answers handled by then
    assert version_of(client, first.game_id) == turn.version + 1
    assert first.player.refusals() == [] and first.player.error is None


# ---------------------------------------------------------------- answers refused, stream goes on


def test_an_answer_at_a_version_passed_is_refused_on_the_stream_and_the_stream_goes_on(
    client: Client, first: FirstTurn
) -> None:
    player, turn = first.player, first.turn
    player.send_answer(turn, turn.view.legal_actions[0], version=turn.version + 5)
    (refused,) = wait_for(player.refusals, "the refusal told")
    assert refused.reason == "STALE_VERSION"
    assert refused.code == grpc.StatusCode.ABORTED.value[0]
    assert (refused.game_id, refused.seat, refused.version) == (
        first.game_id,
        turn.seat,
        turn.version + 5,
    )
    assert refused.metadata["current_version"] == str(turn.version)
    assert version_of(client, first.game_id) == turn.version  # nothing changed
    player.send_answer(turn, turn.view.legal_actions[0])
    wait_for(lambda: version_of(client, first.game_id) > turn.version, "the answer applied")
    assert player.error is None


def test_an_answer_the_rules_refuse_is_told_with_the_engines_reason(
    client: Client, first: FirstTurn
) -> None:
    # The auction opens the hand: a bid of one point is under the minimum (30).
    too_low = actions_pb2.Action(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_POINTS, amount=1))
    first.player.send_answer(first.turn, too_low)
    (refused,) = wait_for(first.player.refusals, "the refusal told")
    assert refused.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert refused.reason == "BID_TOO_LOW"
    assert "bid" in refused.message
    assert version_of(client, first.game_id) == first.turn.version
    assert first.player.error is None


def test_an_answer_for_a_seat_the_account_does_not_hold_is_refused(
    server: RunningServer, client: Client, first: FirstTurn
) -> None:
    turn = first.turn
    other = competition_pb2.WatchTurnsResponse()
    other.CopyFrom(turn)
    other.seat = (turn.seat + 1) % 4
    first.player.send_answer(other, turn.view.legal_actions[0])
    (refused,) = wait_for(first.player.refusals, "the refusal told")
    assert refused.code == grpc.StatusCode.PERMISSION_DENIED.value[0]
    stranger = Player(client.channel, account(server)[1])
    try:
        stranger.send_answer(turn, turn.view.legal_actions[0])
        (refused,) = wait_for(stranger.refusals, "the stranger's refusal told")
        assert refused.code == grpc.StatusCode.PERMISSION_DENIED.value[0]
        assert "holds no seat" in refused.message
    finally:
        stranger.stop()
    assert version_of(client, first.game_id) == turn.version


@pytest.mark.parametrize(
    ("game_id", "version", "reason"),
    [("not-a-game", 3, "BAD_GAME_ID"), (None, 0, "BAD_ARGUMENT")],
    ids=["malformed game", "no version"],
)
def test_a_malformed_answer_is_refused_on_the_stream(
    client: Client, first: FirstTurn, game_id: str | None, version: int, reason: str
) -> None:
    first.player.send(
        competition_pb2.PlayTurnsRequest(
            answer=competition_pb2.TurnAnswer(
                game_id=game_id or first.game_id,
                seat=first.turn.seat,
                version=version,
                action=first.turn.view.legal_actions[0],
            )
        )
    )
    (refused,) = wait_for(first.player.refusals, "the refusal told")
    assert refused.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert refused.reason == reason
    assert version_of(client, first.game_id) == first.turn.version
    assert first.player.error is None


def test_a_fault_in_one_answer_is_told_internal_and_the_stream_plays_on(
    server: RunningServer, client: Client, first: FirstTurn, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = server.app.games.answer_turn
    faults = [RuntimeError("a bug")]

    async def answer_turn(*args: object) -> None:
        if faults:
            raise faults.pop()
        await real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(server.app.games, "answer_turn", answer_turn)
    player, turn = first.player, first.turn
    player.send_answer(turn, turn.view.legal_actions[0])  # meets the bug
    (refused,) = wait_for(player.refusals, "the fault told")
    assert refused.code == grpc.StatusCode.INTERNAL.value[0]
    assert "logged on the server as request" in refused.message
    assert version_of(client, first.game_id) == turn.version
    # The same turn answered again, on the same stream, is applied; the stream goes on.
    player.send_answer(turn, turn.view.legal_actions[0])
    wait_for(first.next_seat_told, "the next seat's turn told")
    assert all(p.error is None for p in first.players)
    answers = server.app.metrics.registry.get_sample_value
    assert answers("boneyard_turn_answers_total", {"grpc_code": "INTERNAL"}) == 1
    assert answers("boneyard_turn_answers_total", {"grpc_code": "OK"}) >= 1


# ---------------------------------------------------------------- the stream itself


def test_closing_the_sending_side_ends_the_stream(
    server: RunningServer, client: Client
) -> None:
    player = Player(client.channel, account(server)[1])
    try:
        player.close_sending()
        wait_for(lambda: player.ended or player.error, "the stream to end")
        assert player.error is None and player.ended
    finally:
        player.stop()


def test_the_first_message_must_open_the_stream(server: RunningServer, client: Client) -> None:
    answer = competition_pb2.PlayTurnsRequest(answer=competition_pb2.TurnAnswer(version=1))
    player = Player(client.channel, account(server)[1], first=answer)
    try:
        wait_for(lambda: player.error, "the stream refused")
        assert player.error is not None
        assert player.error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "opens the stream" in (player.error.details() or "")
    finally:
        player.stop()


def test_opening_twice_ends_the_stream(server: RunningServer, client: Client) -> None:
    player = Player(client.channel, account(server)[1])
    try:
        player.send(competition_pb2.PlayTurnsRequest(open=competition_pb2.WatchTurnsRequest()))
        wait_for(lambda: player.error, "the stream refused")
        assert player.error is not None
        assert player.error.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        player.stop()


def test_playing_turns_without_a_key_is_unauthenticated(client: Client) -> None:
    opening = competition_pb2.PlayTurnsRequest(open=competition_pb2.WatchTurnsRequest())
    with rpc_error(grpc.StatusCode.UNAUTHENTICATED, "API key"):
        list(lobby(client).PlayTurns(iter([opening]), timeout=RPC_TIMEOUT))


def test_an_answer_after_the_key_is_revoked_is_not_applied_and_ends_the_stream(
    server: RunningServer, client: Client, four: list[tuple[str, str]], first: FirstTurn
) -> None:
    name = next(n for n, k in four if k == first.player.key)
    found = server.app.competition.account_named(name)
    assert found is not None
    assert server.app.competition.revoke_key(found.id) is not None
    first.player.send_answer(first.turn, first.turn.view.legal_actions[0])
    wait_for(lambda: first.player.error, "the stream to end")
    assert first.player.error is not None
    assert first.player.error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert version_of(client, first.game_id) == first.turn.version


def test_turns_are_played_through_the_http_listener_over_http2(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('play-http') / 'p.db'}"
    server = RunningServer(url, http=True)
    client = Client(server.address)
    # gRPC over HTTP/2 to the HTTP listener (cleartext, prior knowledge: what both doors speak).
    http = grpc.insecure_channel(server.http_address.removeprefix("http://"))
    try:
        four = [account(server) for _ in range(4)]
        players = [Player(http, key, answer=True) for _, key in four]
        try:
            table = reserved_game(server, client, four, hand_limit=1)
            wait_for(
                lambda: status(client, table.game_id) == game_pb2.GAME_STATUS_FINISHED,
                "the game played through the HTTP listener",
                timeout=120,
            )
            for seat, seat_key in table.tokens.items():
                player = next(p for p in players if p.key == seat_key)
                told = [turn.version for turn in player.turns(table.game_id)]
                assert told == turns_in_log(server, table.game_id, seat)
            assert all(p.error is None and not p.refusals() for p in players)
        finally:
            for p in players:
                p.stop()
    finally:
        http.close()
        client.close()
        server.close()


def test_a_message_over_the_limit_ends_the_stream_through_either_door(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('play-limit') / 'p.db'}"
    server = RunningServer(url, http=True)
    http = grpc.insecure_channel(server.http_address.removeprefix("http://"))
    port = grpc.insecure_channel(server.address)
    try:
        key = account(server)[1]
        huge = competition_pb2.PlayTurnsRequest(
            answer=competition_pb2.TurnAnswer(game_id="x" * 70_000, version=1)
        )
        for channel in (port, http):
            player = Player(channel, key)
            try:
                player.send(huge)  # after the opening: refused as it arrives, unread
                wait_for(lambda p=player: p.error, "the stream refused")
                assert player.error is not None
                assert player.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "at most 65536 bytes" in (player.error.details() or "")
            finally:
                player.stop()
    finally:
        http.close()
        port.close()
        server.close()
