"""The HTTP listener serves the same services as the gRPC port, for browsers (issue 14): every
RPC called with a Connect client (binary and JSON) and with gRPC-Web gets the same answers and
the same status codes, messages and ``ErrorInfo`` reasons as over gRPC, streams included.

Each door is one way in: ``grpc`` (the gRPC port) and ``connect``, ``connect-json``,
``grpc-web`` (the HTTP listener). Reads of one game are compared message for message; each
change made through one door is read back through gRPC; each refusal is made through every
door and compared.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from api_helpers import BACKENDS, RPC_TIMEOUT, RunningServer, bearer, fresh_database
from connectrpc.compat import google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.protobuf.message import Message
from google.rpc.error_details_pb2 import ErrorInfo
from grpc_status import rpc_status

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import (
    actions_pb2,
    archive_connect,
    archive_pb2,
    archive_pb2_grpc,
    challenges_connect,
    challenges_pb2,
    challenges_pb2_grpc,
    competition_connect,
    competition_pb2,
    competition_pb2_grpc,
    game_service_connect,
    game_service_pb2,
    game_service_pb2_grpc,
    matches_connect,
    matches_pb2,
    matches_pb2_grpc,
    ratings_connect,
    ratings_pb2,
    ratings_pb2_grpc,
    rules_pb2,
    view_pb2,
)
from boneyard.server.competition.accounts import key_hash, new_api_key

SERVICES = {
    "GameService": game_service_pb2.DESCRIPTOR.services_by_name["GameService"],
    "LobbyService": competition_pb2.DESCRIPTOR.services_by_name["LobbyService"],
    "TournamentService": competition_pb2.DESCRIPTOR.services_by_name["TournamentService"],
    "ArchiveService": archive_pb2.DESCRIPTOR.services_by_name["ArchiveService"],
    "ChallengeService": challenges_pb2.DESCRIPTOR.services_by_name["ChallengeService"],
    "AccountService": challenges_pb2.DESCRIPTOR.services_by_name["AccountService"],
    "RatingService": ratings_pb2.DESCRIPTOR.services_by_name["RatingService"],
    "MatchService": matches_pb2.DESCRIPTOR.services_by_name["MatchService"],
}
EVERY_RPC = {f"{s}.{m.name}" for s, d in SERVICES.items() for m in d.methods}
CALLED: set[str] = set()
"""Every RPC the tests below called through every door (the last test checks it is all)."""


class Refused(Exception):
    """A call answered with an error: its status code's name, its message, and the reason of
    its ``google.rpc.ErrorInfo`` ("" without one)."""

    def __init__(self, code: str, message: str, reason: str) -> None:
        super().__init__(f"{code}: {message} ({reason})")
        self.code = code
        self.message = message
        self.reason = reason

    @classmethod
    def of_grpc(cls, error: grpc.RpcError) -> Refused:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
        infos = [] if status is None else [d for d in status.details if d.Is(ErrorInfo.DESCRIPTOR)]
        reason = ""
        if infos:
            info = ErrorInfo()
            infos[0].Unpack(info)
            reason = f"{info.domain}/{info.reason}"
        return cls(error.code().name, error.details() or "", reason)  # type: ignore[attr-defined]

    @classmethod
    def of_connect(cls, error: ConnectError) -> Refused:
        reason = ""
        for detail in error.details:
            if detail.type_name == ErrorInfo.DESCRIPTOR.full_name:
                info = ErrorInfo.FromString(detail.message_bytes)
                reason = f"{info.domain}/{info.reason}"
        return cls(error.code.name, error.message, reason)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


class Door:
    """One way into the server."""

    name: str

    def call(self, rpc: str, request: Message, key: str | None = None) -> Any:
        raise NotImplementedError

    def stream(self, rpc: str, request: Message, count: int, key: str | None = None) -> list[Any]:
        """The first ``count`` messages of a server stream (then it is cancelled)."""
        got: list[Any] = []
        return self.stream_until(rpc, request, lambda m: got.append(m) or len(got) == count, key)

    def stream_until(
        self, rpc: str, request: Message, last: Callable[[Any], bool], key: str | None = None
    ) -> list[Any]:
        """A server stream's messages up to the first ``last`` accepts (then it is
        cancelled), or to its end."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class GrpcDoor(Door):
    name = "grpc"

    def __init__(self, address: str) -> None:
        self._channel = grpc.insecure_channel(address)
        self._stubs = {
            "GameService": game_service_pb2_grpc.GameServiceStub(self._channel),
            "LobbyService": competition_pb2_grpc.LobbyServiceStub(self._channel),
            "TournamentService": competition_pb2_grpc.TournamentServiceStub(self._channel),
            "ArchiveService": archive_pb2_grpc.ArchiveServiceStub(self._channel),
            "ChallengeService": challenges_pb2_grpc.ChallengeServiceStub(self._channel),
            "AccountService": challenges_pb2_grpc.AccountServiceStub(self._channel),
            "RatingService": ratings_pb2_grpc.RatingServiceStub(self._channel),
            "MatchService": matches_pb2_grpc.MatchServiceStub(self._channel),
        }

    def _method(self, rpc: str) -> Any:
        service, method = rpc.split(".")
        return getattr(self._stubs[service], method)

    def call(self, rpc: str, request: Message, key: str | None = None) -> Any:
        CALLED.add(f"{rpc}@{self.name}")
        try:
            return self._method(rpc)(request, metadata=bearer(key) if key else None, timeout=RPC_TIMEOUT)
        except grpc.RpcError as e:
            raise Refused.of_grpc(e) from None

    def stream_until(
        self, rpc: str, request: Message, last: Callable[[Any], bool], key: str | None = None
    ) -> list[Any]:
        CALLED.add(f"{rpc}@{self.name}")
        call = self._method(rpc)(request, metadata=bearer(key) if key else None, timeout=RPC_TIMEOUT)
        got: list[Any] = []
        try:
            for message in call:
                got.append(message)
                if last(message):
                    break
            return got
        except grpc.RpcError as e:
            raise Refused.of_grpc(e) from None
        finally:
            call.cancel()

    def close(self) -> None:
        self._channel.close()


class ConnectDoor(Door):
    """connectrpc's Python client on the HTTP listener, on an event loop of its own."""

    def __init__(self, name: str, address: str, protocol: ProtocolType, json_codec: bool) -> None:
        self.name = name
        self._loop = asyncio.new_event_loop()
        options: dict[str, Any] = {"protocol": protocol, "timeout_ms": int(RPC_TIMEOUT * 1000)}
        if json_codec:
            options["codec"] = google_protobuf_json_codec()
        self._clients = {
            "GameService": game_service_connect.GameServiceClient(address, **options),
            "LobbyService": competition_connect.LobbyServiceClient(address, **options),
            "TournamentService": competition_connect.TournamentServiceClient(address, **options),
            "ArchiveService": archive_connect.ArchiveServiceClient(address, **options),
            "ChallengeService": challenges_connect.ChallengeServiceClient(address, **options),
            "AccountService": challenges_connect.AccountServiceClient(address, **options),
            "RatingService": ratings_connect.RatingServiceClient(address, **options),
            "MatchService": matches_connect.MatchServiceClient(address, **options),
        }

    def _method(self, rpc: str) -> Any:
        service, method = rpc.split(".")
        return getattr(self._clients[service], _snake(method))

    def call(self, rpc: str, request: Message, key: str | None = None) -> Any:
        CALLED.add(f"{rpc}@{self.name}")
        headers = {"authorization": f"Bearer {key}"} if key else None
        try:
            return self._loop.run_until_complete(self._method(rpc)(request, headers=headers))
        except ConnectError as e:
            raise Refused.of_connect(e) from None

    def stream_until(
        self, rpc: str, request: Message, last: Callable[[Any], bool], key: str | None = None
    ) -> list[Any]:
        CALLED.add(f"{rpc}@{self.name}")
        headers = {"authorization": f"Bearer {key}"} if key else None

        async def first() -> list[Any]:
            got: list[Any] = []
            messages = self._method(rpc)(request, headers=headers)
            try:
                async for message in messages:
                    got.append(message)
                    if last(message):
                        break
            finally:
                await messages.aclose()
            return got

        try:
            return self._loop.run_until_complete(first())
        except ConnectError as e:
            raise Refused.of_connect(e) from None

    def close(self) -> None:
        for client in self._clients.values():
            self._loop.run_until_complete(client.close())
        self._loop.close()


@dataclass
class World:
    server: RunningServer
    doors: list[Door]

    @property
    def grpc(self) -> Door:
        return self.doors[0]

    def account(self, kind: str = "bot") -> tuple[str, str]:
        name = f"{kind}-{uuid.uuid4().hex[:8]}"
        key = new_api_key()
        self.server.app.competition.create_account(str(uuid.uuid4()), name, kind, key_hash(key))
        return name, key


@pytest.fixture(scope="module", params=BACKENDS)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    with fresh_database(request.param, request, tmp_path_factory) as url:
        server = RunningServer(url, http=True)
        doors: list[Door] = [GrpcDoor(server.address)]
        doors += [
            ConnectDoor("connect", server.http_address, ProtocolType.CONNECT, False),
            ConnectDoor("connect-json", server.http_address, ProtocolType.CONNECT, True),
            ConnectDoor("grpc-web", server.http_address, ProtocolType.GRPC_WEB, False),
        ]
        try:
            yield World(server, doors)
        finally:
            for door in doors:
                door.close()
            server.close()


def outcome(make: Callable[[], Any]) -> Any:
    try:
        return make()
    except Refused as refused:
        return (refused.code, refused.message, refused.reason)


def assert_same_everywhere(
    world: World, make: Callable[[Door], Any], *, settling: bool = False
) -> Any:
    """``make`` through every door gives the same answer (or the same refusal). ``settling``:
    what is read may still be moving (a cancelled tournament's games are closed by its
    director as it gets to them): ask again until two rounds through gRPC agree, then
    compare."""
    for _ in range(100 if settling else 1):
        before = outcome(lambda: make(world.grpc))
        answers = {door.name: outcome(lambda door=door: make(door)) for door in world.doors}
        if not settling or (before == answers["grpc"] == outcome(lambda: make(world.grpc))):
            break
        time.sleep(0.1)
    first = answers["grpc"]
    for name, answer in answers.items():
        assert answer == first, f"{name} answered {answer!r}, gRPC {first!r}"
    return first


# ---------------------------------------------------------------- a game through every door


def _seated_game(world: World, door: Door, preset: str = "texas42") -> tuple[str, dict[int, str]]:
    made = door.call(
        "GameService.CreateGame",
        game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset=preset), name="by http"),
    )
    assert world.grpc.call(
        "GameService.GetGame", game_service_pb2.GetGameRequest(game_id=made.game_id)
    ).game == made.game
    tokens: dict[int, str] = {}
    for seat in range(made.game.rules.players):
        taken = door.call(
            "GameService.TakeSeat",
            game_service_pb2.TakeSeatRequest(
                game_id=made.game_id, seat=seat, player_name=f"p{seat}"
            ),
        )
        tokens[seat] = taken.seat_token
    return made.game_id, tokens


def test_a_game_made_seated_and_played_through_each_door(world: World) -> None:
    for door in world.doors:
        game_id, tokens = _seated_game(world, door)
        for _ in range(12):
            spectator = world.grpc.call(
                "GameService.GetView", game_service_pb2.GetViewRequest(game_id=game_id)
            ).view
            if spectator.phase == view_pb2.PHASE_GAME_OVER:
                break
            seat = spectator.turn
            view = door.call(
                "GameService.GetView", game_service_pb2.GetViewRequest(game_id=game_id), tokens[seat]
            ).view
            answer = door.call(
                "GameService.SubmitAction",
                game_service_pb2.SubmitActionRequest(
                    game_id=game_id,
                    expected_version=view.version,
                    request_id=str(uuid.uuid4()),
                    action=view.legal_actions[-1],
                ),
                tokens[seat],
            )
            assert answer.view == world.grpc.call(
                "GameService.GetView",
                game_service_pb2.GetViewRequest(game_id=game_id),
                tokens[seat],
            ).view


def test_reads_of_one_game_are_the_same_through_every_door(world: World) -> None:
    game_id, tokens = _seated_game(world, world.grpc)
    for seat in (None, 0, 2):
        key = tokens[seat] if seat is not None else None
        assert_same_everywhere(
            world,
            lambda d, key=key: d.call(
                "GameService.GetView", game_service_pb2.GetViewRequest(game_id=game_id), key
            ),
        )
        version = world.grpc.call(
            "GameService.GetGame", game_service_pb2.GetGameRequest(game_id=game_id)
        ).game.version
        assert_same_everywhere(
            world,
            lambda d, key=key, version=version: d.stream(
                "GameService.WatchGame",
                game_service_pb2.WatchGameRequest(game_id=game_id),
                version,
                key,
            ),
        )
    assert_same_everywhere(
        world,
        lambda d: d.call("GameService.GetGame", game_service_pb2.GetGameRequest(game_id=game_id)),
    )
    assert_same_everywhere(
        world,
        lambda d: d.call(
            "GameService.ListGames", game_service_pb2.ListGamesRequest(page_size=200)
        ),
    )


def test_leaving_a_seat_through_each_door(world: World) -> None:
    for door in world.doors:
        made = world.grpc.call(
            "GameService.CreateGame",
            game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset="moon")),
        )
        taken = world.grpc.call(
            "GameService.TakeSeat",
            game_service_pb2.TakeSeatRequest(game_id=made.game_id, player_name="goes"),
        )
        left = door.call(
            "GameService.LeaveSeat",
            game_service_pb2.LeaveSeatRequest(game_id=made.game_id),
            taken.seat_token,
        )
        assert not left.game.seats[taken.seat].occupied


def test_the_presets_are_listed_through_every_door_each_with_its_complete_ruleset(
    world: World,
) -> None:
    listed = assert_same_everywhere(
        world, lambda d: d.call("GameService.ListPresets", game_service_pb2.ListPresetsRequest())
    ).presets
    assert [p.name for p in listed] == list(engine.preset_names())
    for preset in listed:
        assert preset.description == engine.PRESET_DESCRIPTIONS[preset.name]
        # As the server makes a game of it: the preset with the deal limit every game gets.
        rules = engine.ruleset(preset.name, deal_limit=engine.DEAL_LIMIT)
        assert preset.rules == codec.rules_to_proto(rules)
    moon = next(p for p in listed if p.name == "moon-overcall")
    assert (moon.rules.family, moon.rules.players) == (rules_pb2.FAMILY_MOON, 3)
    # What a game made from a preset plays is what the list said.
    made = world.grpc.call(
        "GameService.CreateGame",
        game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset=moon.name)),
    )
    assert made.game.rules == moon.rules


def test_the_presets_may_be_read_with_an_http_get(world: World) -> None:
    """ListPresets changes nothing (idempotency_level NO_SIDE_EFFECTS): Connect's GET form of a
    call, the request in the query, answers as the POST does."""
    query = urllib.parse.urlencode({"connect": "v1", "encoding": "json", "message": "{}"})
    url = f"{world.server.http_address}/boneyard.v1.GameService/ListPresets?{query}"
    with urllib.request.urlopen(url, timeout=30) as answer:
        assert answer.status == 200
        got = json.load(answer)
    assert [p["name"] for p in got["presets"]] == list(engine.preset_names())


REFUSALS: list[tuple[str, Message, str | None]] = [
    (
        "GameService.CreateGame",
        game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset="chess")),
        None,
    ),
    (
        "GameService.CreateGame",
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset="texas42", max_opening_marks=1_653_443_733)
        ),
        None,
    ),
    ("GameService.GetGame", game_service_pb2.GetGameRequest(game_id="A" * 20_000), None),
    ("GameService.GetGame", game_service_pb2.GetGameRequest(game_id=str(uuid.UUID(int=1))), None),
    ("GameService.ListGames", game_service_pb2.ListGamesRequest(page_size=-1), None),
    ("GameService.TakeSeat", game_service_pb2.TakeSeatRequest(game_id=str(uuid.UUID(int=1))), None),
    ("GameService.LeaveSeat", game_service_pb2.LeaveSeatRequest(game_id=str(uuid.UUID(int=1))), None),
    ("GameService.GetView", game_service_pb2.GetViewRequest(game_id="nope"), None),
    (
        "GameService.SubmitAction",
        game_service_pb2.SubmitActionRequest(game_id=str(uuid.UUID(int=1)), request_id="r"),
        None,
    ),
    ("ArchiveService.GetRecord", archive_pb2.GetRecordRequest(game_id="x"), None),
    ("ArchiveService.ExportRecord", archive_pb2.ExportRecordRequest(game_id="x"), None),
    ("ArchiveService.VerifyRecord", archive_pb2.VerifyRecordRequest(), None),
    (
        "ArchiveService.ListArchivedGames",
        archive_pb2.ListArchivedGamesRequest(page_token="not a token"),
        None,
    ),
    ("TournamentService.GetTournament", competition_pb2.GetTournamentRequest(tournament_id="x"), None),
    ("TournamentService.CreateTournament", competition_pb2.CreateTournamentRequest(), None),
    ("TournamentService.StartTournament", competition_pb2.StartTournamentRequest(), "bogus"),
    ("TournamentService.CancelTournament", competition_pb2.CancelTournamentRequest(), None),
    ("RatingService.GetLeaderboard", ratings_pb2.GetLeaderboardRequest(), None),
    (
        "RatingService.GetLeaderboard",
        ratings_pb2.GetLeaderboardRequest(game_type=rules_pb2.FAMILY_MOON, page_token="nope"),
        None,
    ),
    ("RatingService.GetRating", ratings_pb2.GetRatingRequest(account_name="nobody-here"), None),
]


@pytest.mark.parametrize(("rpc", "request_", "key"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_refusal_is_the_same_through_every_door(
    world: World, rpc: str, request_: Message, key: str | None
) -> None:
    answer = assert_same_everywhere(world, lambda d: d.call(rpc, request_, key))
    assert isinstance(answer, tuple), f"{rpc} was not refused: {answer}"
    code, message, reason = answer
    assert code not in ("UNKNOWN", "INTERNAL") and message
    assert reason.startswith("boneyard.v1/") and reason != "boneyard.v1/INTERNAL", answer


def test_a_refused_stream_is_the_same_through_every_door(world: World) -> None:
    for rpc, request_, key in (
        ("GameService.WatchGame", game_service_pb2.WatchGameRequest(game_id="x"), None),
        ("LobbyService.Seek", competition_pb2.SeekRequest(), None),
        ("LobbyService.WatchSeats", competition_pb2.WatchSeatsRequest(), "not-a-key"),
        ("LobbyService.WatchTurns", competition_pb2.WatchTurnsRequest(), None),
    ):
        answer = assert_same_everywhere(world, lambda d, r=rpc, q=request_, k=key: d.stream(r, q, 1, k))
        assert isinstance(answer, tuple) and answer[0] not in ("UNKNOWN", "INTERNAL")
        assert answer[2].startswith("boneyard.v1/"), answer


def test_an_illegal_move_is_refused_with_the_engines_reason_through_every_door(
    world: World,
) -> None:
    game_id, tokens = _seated_game(world, world.grpc)
    view = world.grpc.call(
        "GameService.GetView", game_service_pb2.GetViewRequest(game_id=game_id)
    ).view
    not_on_turn = (view.turn + 1) % 4
    answer = assert_same_everywhere(
        world,
        lambda d: d.call(
            "GameService.SubmitAction",
            game_service_pb2.SubmitActionRequest(
                game_id=game_id,
                expected_version=view.version,
                request_id=str(uuid.uuid4()),
                action=actions_pb2.Action(pass_bid=actions_pb2.Pass()),
            ),
            tokens[not_on_turn],
        ),
    )
    assert answer[0] == "FAILED_PRECONDITION" and "turn" in answer[1]
    assert answer[2] == "boneyard.v1/NOT_YOUR_TURN"


# ---------------------------------------------------------------- lobby, tournaments, archive


def test_seeking_and_watching_seats_through_every_door(world: World) -> None:
    """Four accounts seek a Texas 42 table, each through another door, at once: all are
    seated at one game, and each account's WatchSeats (through its door) tells it its seat."""
    keys = [world.account()[1] for _ in world.doors]
    seek = competition_pb2.SeekRequest(rules=rules_pb2.Ruleset(preset="texas42"))
    seated: dict[str, competition_pb2.SeatAssignment] = {}
    errors: list[BaseException] = []

    def seek_through(door: Door, key: str) -> None:
        try:
            messages = door.stream_until(
                "LobbyService.Seek", seek, lambda m: m.HasField("seated"), key
            )
            seated[door.name] = messages[-1].seated
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [
        threading.Thread(target=seek_through, args=(d, k))
        for d, k in zip(world.doors, keys, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert len({a.game_id for a in seated.values()}) == 1
    assert sorted(a.seat for a in seated.values()) == [0, 1, 2, 3]
    for door, key in zip(world.doors, keys, strict=True):
        told = door.stream("LobbyService.WatchSeats", competition_pb2.WatchSeatsRequest(), 1, key)
        assert told[0].assignment.game_id == seated[door.name].game_id
        assert told[0].assignment.seat == seated[door.name].seat


def _reserved_for_four(world: World) -> tuple[Any, Any, str]:
    """A one-hand game reserved for four new bot accounts: CreateGame's answer, the view of
    its first turn, and the key of the account to act."""
    organiser = world.account("player")[1]
    accounts = [world.account() for _ in range(4)]
    made = world.grpc.call(
        "GameService.CreateGame",
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset="texas42", hand_limit=1),
            reservations=[
                game_service_pb2.SeatReservation(seat=seat, account_name=name)
                for seat, (name, _) in enumerate(accounts)
            ],
        ),
        organiser,
    )
    view = world.grpc.call(
        "GameService.GetView", game_service_pb2.GetViewRequest(game_id=made.game_id)
    ).view
    return made, view, accounts[view.turn][1]


def test_an_accounts_turns_through_every_door(world: World) -> None:
    """The seat to act of a game reserved for four accounts: its account's WatchTurns (through
    each door) tells the same turn with the same view; and a game it ended, named by a
    reopened stream, the same end."""
    made, view, key = _reserved_for_four(world)
    turn = competition_pb2.WatchTurnsRequest()
    (told,) = assert_same_everywhere(
        world, lambda d: d.stream("LobbyService.WatchTurns", turn, 1, key)
    )
    assert (told.game_id, told.seat, told.version) == (made.game_id, view.turn, view.version)
    assert told.view.legal_actions and not told.game_over
    world.grpc.call(
        "GameService.SubmitAction",
        game_service_pb2.SubmitActionRequest(
            game_id=made.game_id,
            expected_version=told.version,
            request_id=str(uuid.uuid4()),
            action=actions_pb2.Action(resign=actions_pb2.Resign()),
        ),
        key,
    )
    reopened = competition_pb2.WatchTurnsRequest(game_ids=[made.game_id])
    (end,) = assert_same_everywhere(
        world, lambda d: d.stream("LobbyService.WatchTurns", reopened, 1, key)
    )
    assert end.game_over and end.game_id == made.game_id


def test_an_accounts_turns_played_on_one_stream_through_the_grpc_port(world: World) -> None:
    """PlayTurns streams each way: the gRPC port's door here (gRPC over HTTP/2 on the HTTP
    listener: tests/server/test_play_turns.py). Connect over HTTP/1.1 and gRPC-Web cannot
    stream a request while its answer streams (a browser's fetch cannot), so a web client
    uses WatchTurns and SubmitAction."""
    made, view, key = _reserved_for_four(world)
    opening = competition_pb2.PlayTurnsRequest(open=competition_pb2.WatchTurnsRequest())
    answered = threading.Event()

    def requests() -> Iterator[competition_pb2.PlayTurnsRequest]:
        yield opening
        answered.wait(RPC_TIMEOUT)  # the sending side open: closing it would end the stream

    try:
        (told,) = world.grpc.stream("LobbyService.PlayTurns", requests(), 1, key)  # type: ignore[arg-type]
    finally:
        answered.set()
    assert (told.turn.game_id, told.turn.seat, told.turn.version) == (
        made.game_id,
        view.turn,
        view.version,
    )


BIDIRECTIONAL = {"LobbyService.PlayTurns"}
"""RPCs only the gRPC door here can call (see the test above)."""


def test_tournaments_through_every_door(world: World) -> None:
    organiser = world.account("player")[1]
    entrants = [world.account()[0] for _ in range(4)]
    for door in world.doors:
        made = door.call(
            "TournamentService.CreateTournament",
            competition_pb2.CreateTournamentRequest(
                name=f"cup by {door.name}",
                rules=rules_pb2.Ruleset(preset="texas42"),
                entrants=entrants,
                deals=1,
            ),
            organiser,
        ).tournament
        ask = competition_pb2.GetTournamentRequest(
            tournament_id=made.tournament_id, view=competition_pb2.TOURNAMENT_VIEW_FULL
        )
        assert world.grpc.call("TournamentService.GetTournament", ask).tournament == made
        started = door.call(
            "TournamentService.StartTournament",
            competition_pb2.StartTournamentRequest(tournament_id=made.tournament_id),
            organiser,
        ).tournament
        assert started.status == competition_pb2.TOURNAMENT_STATUS_RUNNING
        cancelled = door.call(
            "TournamentService.CancelTournament",
            competition_pb2.CancelTournamentRequest(tournament_id=made.tournament_id),
            organiser,
        ).tournament
        assert cancelled.status == competition_pb2.TOURNAMENT_STATUS_CANCELLED
        assert_same_everywhere(
            world,
            lambda d, ask=ask: d.call("TournamentService.GetTournament", ask),
            settling=True,
        )
    assert_same_everywhere(
        world,
        lambda d: d.call("TournamentService.ListTournaments", competition_pb2.ListTournamentsRequest()),
        settling=True,
    )


def test_matches_through_every_door(world: World) -> None:
    organiser = world.account("player")[1]
    a, b = world.account()[0], world.account()[0]
    for door in world.doors:
        made = door.call(
            "MatchService.CreateMatch",
            matches_pb2.CreateMatchRequest(
                entrant_a=a,
                entrant_b=b,
                rules=rules_pb2.Ruleset(preset="texas42"),
                sprt=matches_pb2.MatchSprt(m0=0, m1=0.1, max_deals=3),
            ),
            organiser,
        ).match
        assert made.status == matches_pb2.MATCH_STATUS_RUNNING
        ask = matches_pb2.GetMatchRequest(match_id=made.match_id)
        cancelled = door.call(
            "MatchService.CancelMatch",
            matches_pb2.CancelMatchRequest(match_id=made.match_id),
            organiser,
        ).match
        assert cancelled.status == matches_pb2.MATCH_STATUS_CANCELLED
        assert_same_everywhere(world, lambda d, ask=ask: d.call("MatchService.GetMatch", ask))
        deals = matches_pb2.ListMatchDealsRequest(match_id=made.match_id)
        assert_same_everywhere(
            world, lambda d, deals=deals: d.call("MatchService.ListMatchDeals", deals), settling=True
        )
    assert_same_everywhere(
        world, lambda d: d.call("MatchService.ListMatches", matches_pb2.ListMatchesRequest())
    )


def test_the_archive_through_every_door(world: World) -> None:
    game_id, tokens = _seated_game(world, world.grpc)
    view = world.grpc.call("GameService.GetView", game_service_pb2.GetViewRequest(game_id=game_id)).view
    world.grpc.call(
        "GameService.SubmitAction",
        game_service_pb2.SubmitActionRequest(
            game_id=game_id,
            expected_version=view.version,
            request_id=str(uuid.uuid4()),
            action=actions_pb2.Action(resign=actions_pb2.Resign()),
        ),
        tokens[1],
    )
    listed = assert_same_everywhere(
        world,
        lambda d: d.call(
            "ArchiveService.ListArchivedGames", archive_pb2.ListArchivedGamesRequest(page_size=200)
        ),
    )
    assert game_id in {g.game_id for g in listed.games}
    record = assert_same_everywhere(
        world,
        lambda d: d.call("ArchiveService.GetRecord", archive_pb2.GetRecordRequest(game_id=game_id)),
    ).record
    verdict = assert_same_everywhere(
        world,
        lambda d: d.call("ArchiveService.VerifyRecord", archive_pb2.VerifyRecordRequest(record=record)),
    )
    assert verdict.valid
    key = assert_same_everywhere(
        world,
        lambda d: d.call("ArchiveService.GetSigningKey", archive_pb2.GetSigningKeyRequest()),
    )
    assert record.signature.public_key == key.public_key
    for form in (archive_pb2.RECORD_FILE_FORMAT_JSON, archive_pb2.RECORD_FILE_FORMAT_TEXT):
        exported = assert_same_everywhere(
            world,
            lambda d, form=form: d.call(
                "ArchiveService.ExportRecord",
                archive_pb2.ExportRecordRequest(game_id=game_id, format=form, site="here"),
            ),
        )
        assert exported.content and exported.file_name.startswith(f"boneyard-{game_id}.")
    analysed = assert_same_everywhere(
        world,
        lambda d: d.call(
            "ArchiveService.AnalyzeHand",
            archive_pb2.AnalyzeHandRequest(game_id=game_id, hand_number=1),
        ),
    )
    assert (analysed.game_id, analysed.hand_number, list(analysed.plays)) == (game_id, 1, [])


def test_the_live_lobby_through_every_door(world: World) -> None:
    game_id, _ = _seated_game(world, world.grpc)
    for door in world.doors:
        (first,) = door.stream("GameService.WatchLobby", game_service_pb2.WatchLobbyRequest(), 1)
        assert first.reset and game_id in {g.game_id for g in first.games}, door.name


def test_ratings_through_every_door(world: World) -> None:
    # The numbers themselves are tests/server/test_lasting_ratings.py's; here, the doors.
    name, _ = world.account()
    for family in (rules_pb2.FAMILY_TEXAS42, rules_pb2.FAMILY_MOON):
        board = assert_same_everywhere(
            world,
            lambda d, family=family: d.call(
                "RatingService.GetLeaderboard",
                ratings_pb2.GetLeaderboardRequest(game_type=family, page_size=5),
            ),
        )
        assert all(entry.rating.game_type == family for entry in board.entries)
    rating = assert_same_everywhere(
        world,
        lambda d: d.call("RatingService.GetRating", ratings_pb2.GetRatingRequest(account_name=name)),
    )
    assert rating.account_name == name
    assert list(rating.ratings) == []  # an account that played no rated game


# ---------------------------------------------------------------- beside the services


def test_challenges_and_the_account_stream_through_every_door(world: World) -> None:
    """Through each door: a challenge made, read, listed, declined; another accepted (its game
    made); the challenged account's stream replays both from its first event. Each is read back
    the same through every door."""
    for door in world.doors:
        (_, key), (other, other_key) = world.account(), world.account()
        rules = rules_pb2.Ruleset(preset="texas42", players=2)
        ask = challenges_pb2.CreateChallengeRequest(
            rules=rules,
            challenged=[challenges_pb2.ChallengeInvitation(account=other)],
            challenger_plays=True,
        )
        declined = door.call("ChallengeService.CreateChallenge", ask, key).challenge
        get = challenges_pb2.GetChallengeRequest(challenge_id=declined.challenge_id)
        assert_same_everywhere(
            world, lambda d, get=get, k=other_key: d.call("ChallengeService.GetChallenge", get, k)
        )
        listed = door.call(
            "ChallengeService.ListChallenges",
            challenges_pb2.ListChallengesRequest(role=challenges_pb2.CHALLENGE_ROLE_RECEIVED),
            other_key,
        )
        assert [c.challenge_id for c in listed.challenges] == [declined.challenge_id]
        answer = door.call(
            "ChallengeService.DeclineChallenge",
            challenges_pb2.DeclineChallengeRequest(challenge_id=declined.challenge_id),
            other_key,
        ).challenge
        assert answer.status == challenges_pb2.CHALLENGE_STATUS_DECLINED
        accepted = door.call("ChallengeService.CreateChallenge", ask, key).challenge
        answer = door.call(
            "ChallengeService.AcceptChallenge",
            challenges_pb2.AcceptChallengeRequest(challenge_id=accepted.challenge_id),
            other_key,
        ).challenge
        assert answer.status == challenges_pb2.CHALLENGE_STATUS_ACCEPTED and answer.game_id
        events = door.stream(
            "AccountService.WatchAccount", challenges_pb2.WatchAccountRequest(), 5, other_key
        )
        assert [m.event.WhichOneof("kind") for m in events] == [
            "challenge_received",
            "challenge_answered",
            "challenge_received",
            "challenge_answered",
            "game_started",
        ]
        assert events[4].event.game_started.game_id == answer.game_id
        assert_same_everywhere(
            world,
            lambda d, k=other_key: d.stream(
                "AccountService.WatchAccount", challenges_pb2.WatchAccountRequest(), 5, k
            ),
        )
        whose = assert_same_everywhere(
            world,
            lambda d, k=other_key: d.call(
                "AccountService.GetAccount", challenges_pb2.GetAccountRequest(), k
            ),
        )
        assert (whose.name, whose.last_sequence) == (other, 5)


def test_health_is_served_over_http(world: World) -> None:
    with urllib.request.urlopen(f"{world.server.http_address}/healthz", timeout=30) as answer:
        assert answer.status == 200
        assert json.load(answer) == {"status": "SERVING"}
    service = "boneyard.v1.GameService"
    with urllib.request.urlopen(
        f"{world.server.http_address}/healthz?service={service}", timeout=30
    ) as answer:
        assert json.load(answer) == {"status": "SERVING"}
    with pytest.raises(urllib.error.HTTPError) as unknown:
        urllib.request.urlopen(f"{world.server.http_address}/healthz?service=no.Such", timeout=30)
    assert unknown.value.code == 404


def test_every_rpc_was_called_through_every_door(world: World) -> None:
    """(Runs last in this module: the tests above call every RPC of every service.)"""
    missing = sorted(
        f"{rpc}@{door.name}"
        for rpc in EVERY_RPC
        for door in world.doors
        if f"{rpc}@{door.name}" not in CALLED
        and (rpc not in BIDIRECTIONAL or door.name == "grpc")
    )
    assert missing == []
