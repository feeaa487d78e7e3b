"""Defects an outside reliability run found (issue 13), one test each, over a real server:
no request is answered UNKNOWN, and an error never echoes a huge input back."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import pytest

from boneyard.api.v1 import (
    archive_pb2,
    archive_pb2_grpc,
    competition_pb2,
    competition_pb2_grpc,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
)
from boneyard.records.verify import MAX_QUOTE
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.transport.pipeline import DEFAULT_REQUEST_LIMIT, MAX_MESSAGE, shortened
from tests.server.api_helpers import RPC_TIMEOUT, Client, RunningServer

Code = grpc.StatusCode

SERVICES = [
    game_service_pb2.DESCRIPTOR.services_by_name["GameService"],
    competition_pb2.DESCRIPTOR.services_by_name["LobbyService"],
    competition_pb2.DESCRIPTOR.services_by_name["TournamentService"],
    archive_pb2.DESCRIPTOR.services_by_name["ArchiveService"],
]
METHODS = [(s.full_name, m) for s in SERVICES for m in s.methods]


@pytest.fixture
def channel(server: RunningServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.address) as channel:
        yield channel


def _raw_call(channel: grpc.Channel, service: str, method: object, payload: bytes) -> None:
    """Send ``payload`` as the request bytes of ``method``, reading the whole answer."""
    path = f"/{service}/{method.name}"  # type: ignore[attr-defined]
    if method.server_streaming:  # type: ignore[attr-defined]
        for _ in channel.unary_stream(path)(payload, timeout=RPC_TIMEOUT):
            pass
    else:
        channel.unary_unary(path)(payload, timeout=RPC_TIMEOUT)


@pytest.mark.parametrize(("service", "method"), METHODS, ids=[f"{s}.{m.name}" for s, m in METHODS])
def test_undecodable_request_bytes_are_invalid_argument(
    channel: grpc.Channel, service: str, method: object
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _raw_call(channel, service, method, b"\xff")
    assert caught.value.code() == Code.INVALID_ARGUMENT, caught.value.details()
    assert "not an encoded" in (caught.value.details() or "")


def test_a_request_over_the_default_byte_limit_is_refused_unread(channel: grpc.Channel) -> None:
    """The transport reads up to twice VerifyRecord's limit; every other method keeps gRPC's
    default of 4 MiB, now answered with the limit named instead of cut off."""
    call = channel.unary_unary("/boneyard.v1.GameService/CreateGame")
    with pytest.raises(grpc.RpcError) as caught:
        call(b"\xff" * (DEFAULT_REQUEST_LIMIT + 1), timeout=RPC_TIMEOUT)
    assert caught.value.code() == Code.RESOURCE_EXHAUSTED
    assert caught.value.details() == (
        f"the request is {DEFAULT_REQUEST_LIMIT + 1} bytes; a CreateGame request is at most "
        f"{DEFAULT_REQUEST_LIMIT} bytes (refused unread)"
    )


@pytest.mark.parametrize(
    ("field", "seconds", "nanos"),
    [
        ("finished_after", 253_402_300_800, 0),  # the year 10000
        ("finished_after", 0, -1),
        ("finished_before", -62_135_596_801, 0),  # before the year 1
        ("finished_before", 0, 1_000_000_000),
    ],
)
def test_out_of_range_timestamps_are_invalid_argument(
    channel: grpc.Channel, field: str, seconds: int, nanos: int
) -> None:
    request = archive_pb2.ListArchivedGamesRequest()
    stamp = getattr(request, field)
    stamp.seconds, stamp.nanos = seconds, nanos
    call = channel.unary_unary(
        "/boneyard.v1.ArchiveService/ListArchivedGames",
        request_serializer=archive_pb2.ListArchivedGamesRequest.SerializeToString,
        response_deserializer=archive_pb2.ListArchivedGamesResponse.FromString,
    )
    with pytest.raises(grpc.RpcError) as caught:
        call(request, timeout=RPC_TIMEOUT)
    assert caught.value.code() == Code.INVALID_ARGUMENT, caught.value.details()
    assert field in (caught.value.details() or "")


def test_an_error_quotes_at_most_a_short_prefix_of_the_input(channel: grpc.Channel) -> None:
    call = channel.unary_unary(
        "/boneyard.v1.GameService/GetGame",
        request_serializer=game_service_pb2.GetGameRequest.SerializeToString,
        response_deserializer=game_service_pb2.GetGameResponse.FromString,
    )
    with pytest.raises(grpc.RpcError) as caught:
        call(game_service_pb2.GetGameRequest(game_id="A" * 20_000), timeout=RPC_TIMEOUT)
    assert caught.value.code() == Code.INVALID_ARGUMENT, caught.value.details()
    details = caught.value.details() or ""
    assert "not a game id" in details and len(details) < 200


@pytest.mark.parametrize(
    ("method", "request_type", "response_type"),
    [
        (
            "/boneyard.v1.GameService/ListGames",
            game_service_pb2.ListGamesRequest,
            game_service_pb2.ListGamesResponse,
        ),
        (
            "/boneyard.v1.ArchiveService/ListArchivedGames",
            archive_pb2.ListArchivedGamesRequest,
            archive_pb2.ListArchivedGamesResponse,
        ),
    ],
    ids=["ListGames", "ListArchivedGames"],
)
def test_a_page_token_the_server_did_not_give_is_quoted_by_a_short_prefix(
    channel: grpc.Channel, method: str, request_type: type, response_type: type
) -> None:
    """Both listings quoted a bad page token whole (cut only at 1,000 characters)."""
    call = channel.unary_unary(
        method,
        request_serializer=request_type.SerializeToString,
        response_deserializer=response_type.FromString,
    )
    with pytest.raises(grpc.RpcError) as caught:
        call(request_type(page_token="A" * 20_000), timeout=RPC_TIMEOUT)
    assert caught.value.code() == Code.INVALID_ARGUMENT, caught.value.details()
    details = caught.value.details() or ""
    assert "page" in details and len(details) < 200, details


def test_a_discrepancy_quotes_a_huge_value_of_the_record_by_a_prefix(
    channel: grpc.Channel, client: Client
) -> None:
    """VerifyRecord of a record whose result held a million scores answered 12 MB (the
    discrepancy's `found` and its message each quoted the list whole): more than a client may
    receive, so the client saw RESOURCE_EXHAUSTED instead of the verdict."""
    table = client.create("texas42", hand_limit=1)
    for seat in range(table.players):
        table.tokens[seat] = client.take_seat(table.game_id, seat, f"p{seat}").seat_token
    client.play_to_end(table)
    archive = archive_pb2_grpc.ArchiveServiceStub(channel)
    record = archive.GetRecord(
        archive_pb2.GetRecordRequest(game_id=table.game_id), timeout=RPC_TIMEOUT
    ).record
    record.result.scores.extend([1] * 1_000_000)
    verdict = archive.VerifyRecord(
        archive_pb2.VerifyRecordRequest(record=record), timeout=RPC_TIMEOUT
    )
    assert not verdict.valid
    assert verdict.discrepancy.kind == archive_pb2.DISCREPANCY_KIND_HEADER
    assert "scores [" in verdict.discrepancy.found
    assert len(verdict.discrepancy.found) <= MAX_QUOTE
    assert len(verdict.discrepancy.message) < 3 * MAX_QUOTE


@pytest.mark.parametrize("field", ["preset", "player_name"])
def test_an_archive_filter_with_a_nul_is_invalid_argument(
    channel: grpc.Channel, field: str
) -> None:
    """PostgreSQL cannot hold a NUL in text: the filter's query failed, INTERNAL."""
    call = channel.unary_unary(
        "/boneyard.v1.ArchiveService/ListArchivedGames",
        request_serializer=archive_pb2.ListArchivedGamesRequest.SerializeToString,
        response_deserializer=archive_pb2.ListArchivedGamesResponse.FromString,
    )
    with pytest.raises(grpc.RpcError) as caught:
        call(archive_pb2.ListArchivedGamesRequest(**{field: "a\x00b"}), timeout=RPC_TIMEOUT)
    assert caught.value.code() == Code.INVALID_ARGUMENT, caught.value.details()
    assert field in (caught.value.details() or "")


def _organiser(server: RunningServer) -> str:
    """The key of a new player's account (which may reserve seats and make tournaments)."""
    key = new_api_key()
    server.app.competition.create_account(
        str(uuid.uuid4()), f"organiser-{uuid.uuid4().hex[:8]}", "player", key_hash(key)
    )
    return key


@pytest.mark.parametrize(
    "name", ["a\x00b", "A" * 20_000, ""], ids=["with a NUL", "20,000 characters", "empty"]
)
def test_a_name_no_account_can_have_is_invalid_argument_where_an_account_is_named(
    server: RunningServer, channel: grpc.Channel, name: str
) -> None:
    """Reserving a seat for, or entering in a tournament, an account named with a NUL was
    INTERNAL on PostgreSQL (the lookup failed), and a 20,000-character name was quoted back
    up to the 1,000-character cut."""
    organiser = [("authorization", f"Bearer {_organiser(server)}")]
    reserve = game_service_pb2.CreateGameRequest(
        rules=rules_pb2.Ruleset(preset="texas42"),
        reservations=[game_service_pb2.SeatReservation(seat=0, account_name=name)],
    )
    enter = competition_pb2.CreateTournamentRequest(
        name="cup",
        rules=rules_pb2.Ruleset(preset="texas42"),
        entrants=[name, "b", "c", "d"],
        deals=1,
    )
    for call, request in (
        (_stub(channel).CreateGame, reserve),
        (competition_pb2_grpc.TournamentServiceStub(channel).CreateTournament, enter),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            call(request, metadata=organiser, timeout=RPC_TIMEOUT)
        assert caught.value.code() == Code.INVALID_ARGUMENT, caught.value.details()
        details = caught.value.details() or ""
        assert "no account name" in details and len(details) < 200, details


def test_a_shortened_message_keeps_to_the_bound() -> None:
    """The fuzzer found messages of 1,001 characters: the cut left room for a 15-character
    mark and added 16."""
    for length in (MAX_MESSAGE, MAX_MESSAGE + 1, 20_000):
        message = shortened("x" * length)
        assert len(message) <= MAX_MESSAGE
        assert message.endswith("(shortened)") == (length > MAX_MESSAGE)


def test_an_option_no_table_can_play_is_refused_at_the_edge(channel: grpc.Channel) -> None:
    """CreateGame(max_opening_marks=1653443733) was accepted, and the seat to act's view then
    built every mark bid up to it (> 30 s, > 1.7 GB)."""
    call = channel.unary_unary(
        "/boneyard.v1.GameService/CreateGame",
        request_serializer=game_service_pb2.CreateGameRequest.SerializeToString,
        response_deserializer=game_service_pb2.CreateGameResponse.FromString,
    )
    for options in (
        {"max_opening_marks": 1_653_443_733},
        {"marks_to_win": 4_000_000_000},
        {"points_to_win": 4_000_000_000},
        {"hand_limit": 4_000_000_000},
    ):
        rules = rules_pb2.Ruleset(preset="texas42", **options)
        with pytest.raises(grpc.RpcError) as caught:
            call(game_service_pb2.CreateGameRequest(rules=rules), timeout=RPC_TIMEOUT)
        assert caught.value.code() == Code.INVALID_ARGUMENT, caught.value.details()
        assert next(iter(options)) in (caught.value.details() or "")


def _stub(channel: grpc.Channel) -> game_service_pb2_grpc.GameServiceStub:
    return game_service_pb2_grpc.GameServiceStub(channel)


def test_create_game_retried_with_its_request_id_makes_one_game(channel: grpc.Channel) -> None:
    stub = _stub(channel)
    request = game_service_pb2.CreateGameRequest(
        rules=rules_pb2.Ruleset(preset="texas42"), name="retried", request_id=str(uuid.uuid4())
    )
    first = stub.CreateGame(request, timeout=RPC_TIMEOUT)
    again = stub.CreateGame(request, timeout=RPC_TIMEOUT)
    assert again.game_id == first.game_id
    other = stub.CreateGame(
        game_service_pb2.CreateGameRequest(rules=request.rules, request_id=str(uuid.uuid4())),
        timeout=RPC_TIMEOUT,
    )
    assert other.game_id != first.game_id


def test_take_seat_retried_with_its_request_id_takes_one_seat(channel: grpc.Channel) -> None:
    stub = _stub(channel)
    game_id = stub.CreateGame(
        game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset="texas42")),
        timeout=RPC_TIMEOUT,
    ).game_id
    request = game_service_pb2.TakeSeatRequest(
        game_id=game_id, player_name="retrier", request_id=str(uuid.uuid4())
    )
    first = stub.TakeSeat(request, timeout=RPC_TIMEOUT)
    again = stub.TakeSeat(request, timeout=RPC_TIMEOUT)
    assert again.seat == first.seat
    assert [s.occupied for s in again.game.seats] == [True, False, False, False]
    # The retry gets the very token of the first answer (derived from the request, issue 31):
    # nothing is revoked, and it opens the seat.
    assert again.seat_token == first.seat_token
    view = game_service_pb2.GetViewRequest(game_id=game_id)
    seen = stub.GetView(view, metadata=[("authorization", f"Bearer {first.seat_token}")])
    assert seen.view.seat == first.seat
    # Other players still get the other seats.
    second = stub.TakeSeat(
        game_service_pb2.TakeSeatRequest(game_id=game_id, player_name="b", request_id="b"),
        timeout=RPC_TIMEOUT,
    )
    assert second.seat != first.seat


def test_a_request_id_for_create_or_seat_is_bounded(channel: grpc.Channel) -> None:
    stub = _stub(channel)
    with pytest.raises(grpc.RpcError) as caught:
        stub.CreateGame(
            game_service_pb2.CreateGameRequest(
                rules=rules_pb2.Ruleset(preset="texas42"), request_id="x" * 101
            ),
            timeout=RPC_TIMEOUT,
        )
    assert caught.value.code() == Code.INVALID_ARGUMENT


def test_an_unexpected_error_is_internal_with_a_request_id_and_no_internals(
    server: RunningServer, channel: grpc.Channel, caplog: pytest.LogCaptureFixture
) -> None:
    host = server.app.host

    async def broken(game_id: str) -> None:
        raise RuntimeError("SELECT token_hash FROM seats WHERE secret = 'hunter2'")

    host.get = broken  # type: ignore[method-assign]
    try:
        stub = _stub(channel)
        game_id = str(uuid.uuid4())
        with caplog.at_level("ERROR", logger="boneyard.server.transport.pipeline"):
            with pytest.raises(grpc.RpcError) as caught:
                stub.GetGame(
                    game_service_pb2.GetGameRequest(game_id=game_id),
                    metadata=[("x-request-id", "my-call-17")],
                    timeout=RPC_TIMEOUT,
                )
            with pytest.raises(grpc.RpcError) as unnamed:
                stub.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=RPC_TIMEOUT)
    finally:
        del host.get
    assert caught.value.code() == Code.INTERNAL
    details = caught.value.details() or ""
    assert "my-call-17" in details and "SELECT" not in details and "hunter2" not in details
    assert unnamed.value.code() == Code.INTERNAL
    made_up = (unnamed.value.details() or "").split("as request ")[1].split(")")[0]
    logged = [r.getMessage() for r in caplog.records]
    assert any("my-call-17" in line for line in logged)
    assert any(made_up in line for line in logged)
