"""Connect GET (issue 34): the reads (``idempotency_level = NO_SIDE_EFFECTS`` in the protos)
may be sent as an HTTP GET, the request in the query
(``?connect=v1&encoding=proto|json&message=...&base64=1``), so that browsers and shared caches
can keep their answers: each answer says for how long (``Cache-Control``), by what it is. Sent
with a plain HTTP client (urllib) to a real ``boneyard-server`` process's HTTP listener.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message as Headers

import grpc
import pytest
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from process_helpers import ServerProcess, bearer, create_game, seat_all

from boneyard.api.v1 import (
    actions_pb2,
    archive_pb2,
    challenges_pb2,
    competition_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    matches_pb2,
    ratings_pb2,
)
from boneyard.server.transport.http import caching

TIMEOUT = 60


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Headers
    body: bytes

    def json(self) -> dict[str, object]:
        found = json.loads(self.body)
        assert isinstance(found, dict)
        return found

    def reason(self) -> str:
        """The ``ErrorInfo.reason`` of a Connect error."""
        (detail,) = self.json()["details"]  # type: ignore[misc]
        value = detail["value"]
        info = error_details_pb2.ErrorInfo.FromString(
            base64.b64decode(value + "=" * (-len(value) % 4))
        )
        return str(info.reason)


@dataclass(frozen=True)
class Finished:
    game_id: str
    seat_token: str


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    path = tmp_path_factory.mktemp("connect-get")
    with ServerProcess.start(
        path / "server.log", f"sqlite:///{path / 'boneyard.db'}", http_listen="127.0.0.1:0"
    ) as running:
        yield running


@pytest.fixture(scope="module")
def stub(server: ServerProcess) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    with grpc.insecure_channel(server.address) as channel:
        yield game_service_pb2_grpc.GameServiceStub(channel)


@pytest.fixture(scope="module")
def finished(stub: game_service_pb2_grpc.GameServiceStub) -> Finished:
    """A Texas 42 game that ended when its first seat resigned."""
    game_id = create_game(stub, "texas42", name="over")
    tokens = seat_all(stub, game_id)
    view = stub.GetView(
        game_service_pb2.GetViewRequest(game_id=game_id), metadata=bearer(tokens[0]), timeout=30
    ).view
    stub.SubmitAction(
        game_service_pb2.SubmitActionRequest(
            game_id=game_id,
            expected_version=view.version,
            request_id=str(uuid.uuid4()),
            action=actions_pb2.Action(resign=actions_pb2.Resign()),
        ),
        metadata=bearer(tokens[0]),
        timeout=30,
    )
    return Finished(game_id, tokens[0])


def get(
    server: ServerProcess,
    method: str,
    query: dict[str, str],
    headers: dict[str, str] | None = None,
) -> Answer:
    url = f"{server.http_url}/boneyard.v1.{method}?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers=headers or {}, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return Answer(answer.status, answer.headers, answer.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers, error.read())


def proto_query(message: Message) -> dict[str, str]:
    encoded = base64.urlsafe_b64encode(message.SerializeToString()).decode().rstrip("=")
    return {"connect": "v1", "encoding": "proto", "base64": "1", "message": encoded}


def json_query(message: dict[str, object]) -> dict[str, str]:
    return {"connect": "v1", "encoding": "json", "message": json.dumps(message)}


def test_a_finished_games_record_is_read_with_a_get_and_kept_a_day(
    server: ServerProcess, finished: Finished
) -> None:
    answer = get(
        server,
        "ArchiveService/GetRecord",
        proto_query(archive_pb2.GetRecordRequest(game_id=finished.game_id)),
    )
    assert answer.status == 200, answer.body
    assert answer.headers["content-type"] == "application/proto"
    record = archive_pb2.GetRecordResponse.FromString(answer.body).record
    assert record.game_id == finished.game_id
    assert answer.headers["cache-control"] == "public, max-age=86400, immutable"
    assert "Authorization" in answer.headers.get_all("vary", [])


def test_the_same_get_answers_the_same_bytes(server: ServerProcess, finished: Finished) -> None:
    """What a cache keeps is what the server would answer again."""
    query = proto_query(archive_pb2.GetRecordRequest(game_id=finished.game_id))
    first = get(server, "ArchiveService/GetRecord", query)
    assert first.status == 200
    assert get(server, "ArchiveService/GetRecord", query).body == first.body


def test_a_finished_games_file_is_read_with_a_json_get(
    server: ServerProcess, finished: Finished
) -> None:
    answer = get(server, "ArchiveService/ExportRecord", json_query({"gameId": finished.game_id}))
    assert answer.status == 200, answer.body
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["mediaType"] == "application/json"
    assert answer.headers["cache-control"] == caching.FINISHED


def test_a_live_game_is_read_with_a_get_that_caches_must_check_again(
    server: ServerProcess, stub: game_service_pb2_grpc.GameServiceStub
) -> None:
    game_id = create_game(stub, "moon", name="live")
    answer = get(server, "GameService/GetGame", json_query({"gameId": game_id}))
    assert answer.status == 200, answer.body
    assert answer.json()["game"]["name"] == "live"  # type: ignore[index]
    assert answer.headers["cache-control"] == "no-cache"


def test_a_spectators_view_is_shared_and_a_seats_view_is_private(
    server: ServerProcess, stub: game_service_pb2_grpc.GameServiceStub
) -> None:
    game_id = create_game(stub, "texas42")
    tokens = seat_all(stub, game_id)
    query = proto_query(game_service_pb2.GetViewRequest(game_id=game_id))
    spectator = get(server, "GameService/GetView", query)
    seat = get(server, "GameService/GetView", query, {"Authorization": f"Bearer {tokens[2]}"})
    assert (spectator.status, seat.status) == (200, 200)
    assert spectator.headers["cache-control"] == "no-cache"
    assert seat.headers["cache-control"] == "private, no-store"
    # One URL, two answers: a cache must tell them apart by the header.
    for answer in (spectator, seat):
        assert "Authorization" in answer.headers.get_all("vary", [])
    hand = game_service_pb2.GetViewResponse.FromString(seat.body).view.hand
    assert len(hand) == 7
    assert not game_service_pb2.GetViewResponse.FromString(spectator.body).view.hand


def test_the_presets_are_kept_for_minutes(server: ServerProcess) -> None:
    answer = get(server, "GameService/ListPresets", json_query({}))
    assert answer.status == 200, answer.body
    assert answer.headers["cache-control"] == "public, max-age=300"


def test_an_accounts_own_reads_are_never_kept(server: ServerProcess) -> None:
    """GetAccount needs the account's key: whatever it answers is the caller's alone."""
    answer = get(
        server,
        "AccountService/GetAccount",
        proto_query(challenges_pb2.GetAccountRequest()),
        {"Authorization": "Bearer byk_no-such-key"},
    )
    assert answer.status == 401, answer.body
    assert answer.reason() == "BAD_API_KEY"
    assert answer.headers["cache-control"] == "no-store"


def test_a_refused_get_is_never_kept(server: ServerProcess) -> None:
    answer = get(server, "ArchiveService/GetRecord", json_query({"gameId": str(uuid.UUID(int=7))}))
    assert answer.status == 404, answer.body
    assert answer.json()["code"] == "not_found"
    assert answer.reason() == "GAME_NOT_FOUND"
    assert answer.headers["cache-control"] == "no-store"


def test_a_game_not_over_has_no_record_to_get(
    server: ServerProcess, stub: game_service_pb2_grpc.GameServiceStub
) -> None:
    game_id = create_game(stub, "texas42")
    answer = get(server, "ArchiveService/GetRecord", json_query({"gameId": game_id}))
    assert answer.status == 400, answer.body  # Connect's HTTP status of failed_precondition
    assert answer.reason() == "GAME_NOT_OVER"
    assert answer.headers["cache-control"] == "no-store"


def test_a_post_of_a_read_still_answers_and_says_nothing_of_caching(
    server: ServerProcess, finished: Finished
) -> None:
    request = urllib.request.Request(
        f"{server.http_url}/boneyard.v1.ArchiveService/GetRecord",
        data=json.dumps({"gameId": finished.game_id}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
        assert answer.status == 200
        assert json.load(answer)["record"]["gameId"] == finished.game_id
        assert answer.headers["cache-control"] is None


def test_a_method_with_side_effects_refuses_a_get(server: ServerProcess) -> None:
    answer = get(server, "GameService/CreateGame", json_query({"rules": {"preset": "moon"}}))
    assert answer.status == 405, answer.body
    assert answer.headers["allow"] == "POST"


def test_a_get_that_changes_nothing_created_nothing(
    server: ServerProcess, stub: game_service_pb2_grpc.GameServiceStub
) -> None:
    before = stub.ListGames(game_service_pb2.ListGamesRequest(page_size=200), timeout=30)
    get(server, "GameService/CreateGame", json_query({"rules": {"preset": "moon"}}))
    after = stub.ListGames(game_service_pb2.ListGamesRequest(page_size=200), timeout=30)
    assert [g.game_id for g in after.games] == [g.game_id for g in before.games]


@pytest.mark.parametrize("encoding", ["xml", "", None], ids=["xml", "empty", "missing"])
def test_an_unknown_encoding_is_invalid_argument(
    server: ServerProcess, encoding: str | None
) -> None:
    query = {"connect": "v1", "message": "{}"}
    if encoding is not None:
        query["encoding"] = encoding
    answer = get(server, "GameService/ListPresets", query)
    assert answer.status == 400, answer.body
    assert answer.json()["code"] == "invalid_argument"
    assert answer.reason() == "MALFORMED_REQUEST"
    assert "encoding=json or encoding=proto" in str(answer.json()["message"])


@pytest.mark.parametrize(
    "query",
    [
        {"encoding": "proto", "base64": "1", "message": "AAAA"},
        {"encoding": "proto", "base64": "1", "message": "not base64 !"},
        {"encoding": "json", "message": "{not json"},
        {"encoding": "json", "message": '{"gameId": 7}'},
        {"encoding": "json"},
    ],
    ids=["bad bytes", "bad base64", "bad json", "wrong json type", "no message"],
)
def test_an_undecodable_message_is_invalid_argument(
    server: ServerProcess, query: dict[str, str]
) -> None:
    answer = get(server, "GameService/GetGame", {"connect": "v1", **query})
    assert answer.status == 400, answer.body
    assert answer.json()["code"] == "invalid_argument"


def test_every_read_of_the_api_says_how_its_answer_ages() -> None:
    """A method newly marked NO_SIDE_EFFECTS must be given a policy (the listener refuses to
    start without one); no policy names a method that is not a read."""
    every = [m for s in _services() for m in s.methods]
    assert caching.check_every_read_has_a_policy(every) == set(caching.POLICIES)


def test_a_read_without_a_policy_stops_the_listener() -> None:
    reads = [m for s in _services() for m in s.methods if caching.is_read(m)]
    assert reads
    with pytest.raises(LookupError, match="no Cache-Control policy"):
        caching.check_every_read_has_a_policy([*reads, _NotInPolicies(reads[0])])


class _NotInPolicies:
    """A read of a service the policies do not know."""

    def __init__(self, read: MethodDescriptor) -> None:
        self._read = read
        self.name = "Peek"
        self.containing_service = read.containing_service

    def GetOptions(self) -> object:
        return self._read.GetOptions()


def _services() -> list[ServiceDescriptor]:
    return [
        service
        for module in (
            game_service_pb2,
            archive_pb2,
            challenges_pb2,
            competition_pb2,
            ratings_pb2,
            matches_pb2,
        )
        for service in module.DESCRIPTOR.services_by_name.values()
    ]
