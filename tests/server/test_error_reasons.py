"""Every refusal carries a ``google.rpc.ErrorInfo`` (issue 15): one test per reason the server
sends, against a real ``boneyard-server`` process, reading the ErrorInfo from the trailers
(``rpc_status.from_call``, through ``boneyard.clients.api.refusal``) and checking its reason,
domain and key metadata. The last test checks that every ``ErrorReason`` of errors.proto is
either sent by a test here or listed as not reachable from outside, so the enum and the server
cannot drift apart.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from process_helpers import ServerProcess, bearer, create_game, seat_all

from boneyard import engine
from boneyard.api.v1 import (
    actions_pb2,
    archive_pb2,
    archive_pb2_grpc,
    competition_pb2,
    competition_pb2_grpc,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
    view_pb2,
)
from boneyard.clients.api import Client, Refusal, refusal
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.transport.pipeline import DEFAULT_REQUEST_LIMIT
from boneyard.server.transport.refusals import reason_of, reasons

TIMEOUT = 30
SENT: set[str] = set()
"""Every reason a test below was refused with."""

NOT_REACHABLE_FROM_OUTSIDE = {
    "ILLEGAL_ACTION": "the engine's base class: every refusal of the rules is a subclass",
    "INVALID_COMMAND": "the codec refuses a tile, bid or contract out of range first "
    "(MALFORMED_REQUEST); the engine's own check is for in-process callers",
    "TIMED_OUT": "VerifyRecord's own time limit: no record small enough to send takes it",
    "MALFORMED_RECORD": "a game in the server's own store it cannot make a record of (a store "
    "it did not write); an uploaded record's faults are VerifyRecord's findings, not refusals",
    "NOT_SIGNING": "a server signs records by default (its key is made in its database); only a "
    "server of another build without a key says so",
    "SEEK_CANCELLED": "a seek is cancelled when its own stream ends; its stream is told so only "
    "when the seek was cancelled elsewhere (by the server's sweeper, or another process)",
    "INTERNAL": "a bug of the server's; the reason and its request_id are tested in process "
    "(test_an_unexpected_error_is_internal_with_its_request_id)",
}
"""Reasons no request from a client can draw, and why."""

TESTED_ELSEWHERE = {
    "SHUTTING_DOWN": "tests/server/test_graceful_shutdown.py: a server sent SIGTERM refuses "
    "new calls, cuts calls past its grace and ends its streams with it",
    "CHALLENGE_NOT_FOUND": "tests/server/test_challenges.py: "
    "test_answers_the_challenge_cannot_take_are_refused_with_their_reasons",
    "CHALLENGE_NOT_OPEN": "tests/server/test_challenges.py: "
    "test_answers_the_challenge_cannot_take_are_refused_with_their_reasons",
    "NOT_CHALLENGED": "tests/server/test_challenges.py: "
    "test_answers_the_challenge_cannot_take_are_refused_with_their_reasons",
    "SEQUENCE_OUT_OF_RANGE": "tests/server/test_challenges.py: "
    "test_watching_an_account_past_its_last_event_is_out_of_range",
    "HAND_NOT_FOUND": "tests/server/test_hand_analysis.py: "
    "test_analysis_of_an_unknown_hand_is_not_found (it needs a finished game)",
    "MATCH_NOT_FOUND": "tests/server/test_matches.py: "
    "test_an_unknown_match_is_not_found_and_a_malformed_id_is_invalid",
    "NOT_YOUR_MATCH": "tests/server/test_matches.py: "
    "test_a_cancelled_match_starts_no_more_deals_and_counts_those_in_flight",
    "MATCH_STATUS": "tests/server/test_matches.py: "
    "test_a_cancelled_match_starts_no_more_deals_and_counts_those_in_flight",
    "MATCH_RULES": "tests/server/test_matches.py: "
    "test_a_match_that_cannot_be_played_is_refused_and_nothing_is_stored[moon]",
    "SWISS_RULES": "tests/server/test_swiss.py: test_swiss_is_refused_for_moon_and_nothing_is_stored",
    "SEAT_REQUIRED": "tests/server/test_matches.py: "
    "test_a_deal_is_closed_until_both_playings_are_over_and_a_key_with_two_seats_names_one "
    "(it needs a match's game, whose entrant holds two seats)",
}
"""Reasons a request draws only from a server in a state this module's server is never put in."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    path = tmp_path_factory.mktemp("reasons")
    url = f"sqlite:///{path / 'boneyard.db'}"
    with ServerProcess.start(
        path / "server.log", url, extra_args=["--max-streams-per-client", "3"]
    ) as process:
        process.database_url = url  # type: ignore[attr-defined]
        yield process


@pytest.fixture(scope="module")
def stub(server: ServerProcess) -> game_service_pb2_grpc.GameServiceStub:
    return server.stub()


def refused(call: Callable[[], Any], reason: str, code: grpc.StatusCode) -> Refusal:
    """``call()``'s refusal, after checking its status code, reason and domain."""
    with pytest.raises(grpc.RpcError) as caught:
        result = call()
        if hasattr(result, "__next__"):  # a stream: the refusal comes with the first read
            next(result)
    answer = refusal(caught.value)
    assert (answer.code, answer.reason) == (code, reason), answer
    assert answer.message
    SENT.add(reason)
    return answer


def account(server: ServerProcess, kind: str = "bot") -> tuple[str, str]:
    """A new account in the server's database: its name and key."""
    name = f"{kind}-{uuid.uuid4().hex[:8]}"
    key = new_api_key()
    store = EventStore.open(server.database_url, migrate=False)  # type: ignore[attr-defined]
    try:
        CompetitionStore(store).create_account(str(uuid.uuid4()), name, kind, key_hash(key))
    finally:
        store.close()
    return name, key


def view_of(stub: Any, game_id: str, token: str | None = None) -> view_pb2.SeatView:
    metadata = bearer(token) if token else None
    return stub.GetView(
        game_service_pb2.GetViewRequest(game_id=game_id), metadata=metadata, timeout=TIMEOUT
    ).view


def send(
    stub: Any, game_id: str, token: str, version: int, action: actions_pb2.Action
) -> game_service_pb2.SubmitActionResponse:
    return stub.SubmitAction(
        game_service_pb2.SubmitActionRequest(
            game_id=game_id,
            expected_version=version,
            request_id=str(uuid.uuid4()),
            action=action,
        ),
        metadata=bearer(token),
        timeout=TIMEOUT,
    )


Chooser = Callable[[view_pb2.SeatView], actions_pb2.Action | None]


def until(
    stub: Any,
    preset: str,
    illegal: Chooser,
    prefer: Chooser = lambda view: None,
    **options: Any,
) -> tuple[str, str, view_pb2.SeatView, actions_pb2.Action]:
    """Play a new game (the first legal action but a pass, or what ``prefer`` picks among the legal
    ones) until ``illegal`` finds an action to try for the seat to act; the game, that seat's
    token, its view and the action. New games are dealt until one gets there."""
    for _ in range(10):
        game_id = create_game(stub, preset, **options)
        tokens = seat_all(stub, game_id)
        for _ in range(300):
            public = view_of(stub, game_id)
            if public.phase == view_pb2.PHASE_GAME_OVER:
                break
            token = tokens[public.turn]
            view = view_of(stub, game_id, token)
            action = illegal(view)
            if action is not None:
                return game_id, token, view, action
            send(stub, game_id, token, view.version, prefer(view) or _bidding_on(view))
    raise AssertionError("no game got to the position")


def _bidding_on(view: view_pb2.SeatView) -> actions_pb2.Action:
    """The first legal action but a pass (a Moon table where all pass deals again)."""
    return next((a for a in view.legal_actions if not a.HasField("pass_bid")), view.legal_actions[0])


def tile_action(tile: int) -> actions_pb2.Action:
    return actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=tile))


def legal_tiles(view: view_pb2.SeatView) -> set[int]:
    return {a.play_tile.tile for a in view.legal_actions if a.HasField("play_tile")}


def held_but_illegal(view: view_pb2.SeatView) -> actions_pb2.Action | None:
    """A tile the seat holds and may not play now, in the play phase."""
    if view.phase != view_pb2.PHASE_PLAY:
        return None
    barred = sorted(set(view.hand) - legal_tiles(view))
    return tile_action(barred[0]) if barred else None


def refused_move(
    stub: Any, game: tuple[str, str, view_pb2.SeatView, actions_pb2.Action], reason: str
) -> Refusal:
    game_id, token, view, action = game
    answer = refused(
        lambda: send(stub, game_id, token, view.version, action),
        reason,
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert answer.metadata["game_id"] == game_id
    assert answer.metadata["version"] == str(view.version)
    return answer


# ---------------------------------------------------------------- the engine's errors


def test_a_seat_out_of_turn_is_not_your_turn(stub: Any) -> None:
    game_id = create_game(stub)
    tokens = seat_all(stub, game_id)
    view = view_of(stub, game_id)
    other = (view.turn + 1) % 4
    answer = refused(
        lambda: send(stub, game_id, tokens[other], view.version, actions_pb2.Action(pass_bid={})),
        "NOT_YOUR_TURN",
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert answer.metadata["seat"] == str(other)
    assert answer.metadata["turn"] == str(view.turn)
    assert answer.metadata["game_id"] == game_id


def test_a_tile_played_in_the_auction_is_the_wrong_phase(stub: Any) -> None:
    game = until(stub, "texas42", lambda v: tile_action(v.hand[0]))
    answer = refused_move(stub, game, "WRONG_PHASE")
    assert answer.metadata["phase"] == "bidding"


def test_a_bid_under_the_minimum_is_too_low(stub: Any) -> None:
    bid = actions_pb2.Action(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_POINTS, amount=29))
    refused_move(stub, until(stub, "texas42", lambda v: bid), "BID_TOO_LOW")


def test_a_moon_bid_in_texas_42_is_not_allowed(stub: Any) -> None:
    bid = actions_pb2.Action(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_TRICKS, amount=5))
    refused_move(stub, until(stub, "texas42", lambda v: bid), "BID_NOT_ALLOWED")


def test_the_forced_dealer_passing_must_bid(stub: Any) -> None:
    passing = actions_pb2.Action(pass_bid=actions_pb2.Pass())

    def forced(view: view_pb2.SeatView) -> actions_pb2.Action | None:
        can_pass = any(a.HasField("pass_bid") for a in view.legal_actions)
        return passing if view.phase == view_pb2.PHASE_BIDDING and not can_pass else None

    game = until(stub, "texas42", forced, prefer=lambda v: passing)
    refused_move(stub, game, "MUST_BID")


def test_nello_where_it_is_off_is_an_illegal_contract(stub: Any) -> None:
    nello = actions_pb2.Action(
        declare_contract=rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_NELLO)
    )
    game = until(stub, "texas42", lambda v: nello if v.phase == view_pb2.PHASE_TRUMP else None)
    refused_move(stub, game, "ILLEGAL_CONTRACT")


def test_laying_out_a_tile_not_held_is_an_illegal_discard(stub: Any) -> None:
    def discard(view: view_pb2.SeatView) -> actions_pb2.Action | None:
        if view.phase != view_pb2.PHASE_WIDOW:
            return None
        tile = next(t for t in range(28) if t not in view.hand)
        return actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=tile))

    refused_move(stub, until(stub, "moon", discard), "ILLEGAL_DISCARD")


def test_a_tile_not_held_is_not_in_hand(stub: Any) -> None:
    def not_held(view: view_pb2.SeatView) -> actions_pb2.Action | None:
        if view.phase != view_pb2.PHASE_PLAY:
            return None
        return tile_action(next(t for t in range(28) if t not in view.hand))

    game = until(stub, "texas42", not_held)
    answer = refused_move(stub, game, "TILE_NOT_IN_HAND")
    assert answer.metadata["seat"] == str(game[2].seat)
    assert "-" in answer.metadata["tile"]


def test_not_following_suit_is_must_follow_suit(stub: Any) -> None:
    def off_suit(view: view_pb2.SeatView) -> actions_pb2.Action | None:
        return held_but_illegal(view) if view.current_trick else None

    game = until(stub, "texas42", off_suit)
    answer = refused_move(stub, game, "MUST_FOLLOW_SUIT")
    view = game[2]
    assert answer.metadata["seat"] == str(view.seat)
    assert answer.metadata["suit"]
    assert answer.metadata["led"] and answer.metadata["tile"]


def test_a_first_lead_off_trump_is_must_lead_trump(stub: Any) -> None:
    def first_lead(view: view_pb2.SeatView) -> actions_pb2.Action | None:
        if view.completed_tricks or view.current_trick:
            return None
        return held_but_illegal(view)

    game = until(stub, "moon", first_lead, bidder_leads_trump=True)
    refused_move(stub, game, "MUST_LEAD_TRUMP")


def test_a_far_tile_in_sevens_is_must_play_nearest_seven(stub: Any) -> None:
    def far_tile(view: view_pb2.SeatView) -> actions_pb2.Action | None:
        if view.contract.kind != rules_pb2.CONTRACT_KIND_SEVENS:
            return None
        return held_but_illegal(view)

    def sevens(view: view_pb2.SeatView) -> actions_pb2.Action | None:
        """Bid marks (sevens is a contract of a mark bid), then declare sevens."""
        for action in view.legal_actions:
            if action.declare_contract.kind == rules_pb2.CONTRACT_KIND_SEVENS:
                return action
            if action.bid.kind == rules_pb2.BID_KIND_MARKS and not view.bids:
                return action
        return None

    game = until(stub, "texas42", far_tile, prefer=sevens, sevens=True)
    refused_move(stub, game, "MUST_PLAY_NEAREST_SEVEN")


def test_an_action_after_the_end_is_game_over(stub: Any) -> None:
    game_id = create_game(stub)
    tokens = seat_all(stub, game_id)
    version = view_of(stub, game_id).version
    resign = actions_pb2.Action(resign=actions_pb2.Resign())
    over = send(stub, game_id, tokens[0], version, resign)
    answer = refused(
        lambda: send(stub, game_id, tokens[1], over.version, resign),
        "GAME_OVER",
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert answer.metadata["game_id"] == game_id


def test_each_engine_error_class_names_its_own_reason() -> None:
    classes = [engine.RulesetError, engine.IllegalAction, *_subclasses(engine.IllegalAction)]
    named = {cls: cls.__dict__.get("reason") for cls in classes}
    assert all(named.values()), f"without a reason of their own: {named}"
    assert len(set(named.values())) == len(named), named
    assert set(named.values()) <= reasons()


def _subclasses(cls: type) -> list[type]:
    return [s for sub in cls.__subclasses__() for s in (sub, *_subclasses(sub))]


# ---------------------------------------------------------------- the server's own


def test_an_old_version_is_stale_with_the_current_one(stub: Any) -> None:
    game_id = create_game(stub)
    tokens = seat_all(stub, game_id)
    view = view_of(stub, game_id)
    moved = send(stub, game_id, tokens[view.turn], view.version, view_of(stub, game_id, tokens[view.turn]).legal_actions[0])
    after = view_of(stub, game_id)
    answer = refused(
        lambda: send(stub, game_id, tokens[after.turn], view.version, actions_pb2.Action(pass_bid={})),
        "STALE_VERSION",
        grpc.StatusCode.ABORTED,
    )
    assert answer.metadata["current_version"] == str(moved.version)
    assert answer.metadata["expected_version"] == str(view.version)
    assert answer.metadata["game_id"] == game_id


def test_seating_refusals(stub: Any) -> None:
    game_id = create_game(stub)
    take = game_service_pb2.TakeSeatRequest
    stub.TakeSeat(take(game_id=game_id, seat=0, player_name="a"), timeout=TIMEOUT)
    answer = refused(
        lambda: stub.TakeSeat(take(game_id=game_id, seat=0, player_name="b"), timeout=TIMEOUT),
        "SEAT_TAKEN",
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert (answer.metadata["game_id"], answer.metadata["seat"]) == (game_id, "0")
    version = view_of(stub, game_id).version
    answer = refused(
        lambda: send(stub, game_id, "no-such-token", version, actions_pb2.Action(resign={})),
        "BAD_TOKEN",
        grpc.StatusCode.UNAUTHENTICATED,
    )
    assert answer.metadata["game_id"] == game_id
    tokens = [stub.TakeSeat(take(game_id=game_id, player_name=f"p{s}"), timeout=TIMEOUT) for s in (1, 2)]
    refused(
        lambda: send(stub, game_id, tokens[0].seat_token, version, actions_pb2.Action(resign={})),
        "GAME_NOT_STARTED",
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    stub.TakeSeat(take(game_id=game_id, player_name="p3"), timeout=TIMEOUT)
    refused(
        lambda: stub.TakeSeat(take(game_id=game_id, player_name="late"), timeout=TIMEOUT),
        "GAME_FULL",
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    answer = refused(
        lambda: stub.LeaveSeat(
            game_service_pb2.LeaveSeatRequest(game_id=game_id),
            metadata=bearer(tokens[0].seat_token),
            timeout=TIMEOUT,
        ),
        "GAME_NOT_OPEN",
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert answer.metadata["status"] == "playing"
    refused(
        lambda: stub.GetView(
            game_service_pb2.GetViewRequest(game_id=game_id, seat=2),
            metadata=bearer(tokens[0].seat_token),
            timeout=TIMEOUT,
        ),
        "NOT_YOUR_SEAT",
        grpc.StatusCode.PERMISSION_DENIED,
    )
    refused(
        lambda: stub.SubmitAction(
            game_service_pb2.SubmitActionRequest(game_id=game_id, expected_version=1, request_id="r"),
            timeout=TIMEOUT,
        ),
        "TOKEN_REQUIRED",
        grpc.StatusCode.UNAUTHENTICATED,
    )
    refused(
        lambda: stub.GetView(
            game_service_pb2.GetViewRequest(game_id=game_id),
            metadata=(("authorization", "Basic abc"),),
            timeout=TIMEOUT,
        ),
        "MALFORMED_AUTHORIZATION",
        grpc.StatusCode.UNAUTHENTICATED,
    )
    answer = refused(
        lambda: stub.WatchGame(
            game_service_pb2.WatchGameRequest(game_id=game_id, from_version=10_000), timeout=TIMEOUT
        ),
        "VERSION_OUT_OF_RANGE",
        grpc.StatusCode.OUT_OF_RANGE,
    )
    assert answer.metadata["current_version"] == str(view_of(stub, game_id).version)


def test_names_and_requests_the_server_refuses(server: ServerProcess, stub: Any) -> None:
    unknown = str(uuid.uuid4())
    answer = refused(
        lambda: stub.GetGame(game_service_pb2.GetGameRequest(game_id=unknown), timeout=TIMEOUT),
        "GAME_NOT_FOUND",
        grpc.StatusCode.NOT_FOUND,
    )
    assert answer.metadata["game_id"] == unknown
    refused(
        lambda: stub.GetGame(game_service_pb2.GetGameRequest(game_id="nope"), timeout=TIMEOUT),
        "BAD_GAME_ID",
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    refused(
        lambda: stub.ListGames(game_service_pb2.ListGamesRequest(page_size=-1), timeout=TIMEOUT),
        "BAD_ARGUMENT",
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    refused(
        lambda: create_game(stub, "chess"), "BAD_RULESET", grpc.StatusCode.INVALID_ARGUMENT
    )
    game_id = create_game(stub)
    tokens = seat_all(stub, game_id)
    version = view_of(stub, game_id).version
    refused(
        lambda: send(stub, game_id, tokens[0], version, actions_pb2.Action()),
        "MALFORMED_REQUEST",
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    raw = server.channel().unary_unary("/boneyard.v1.GameService/GetGame")
    refused(
        lambda: raw(b"\xff\xff\xff", timeout=TIMEOUT),
        "MALFORMED_REQUEST",
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    answer = refused(
        lambda: stub.GetGame(
            game_service_pb2.GetGameRequest(game_id="x" * (5 * 1024 * 1024)), timeout=TIMEOUT
        ),
        "REQUEST_TOO_LARGE",
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    )
    assert answer.metadata["limit"] == str(DEFAULT_REQUEST_LIMIT)
    archive = archive_pb2_grpc.ArchiveServiceStub(server.channel())
    refused(
        lambda: archive.ListArchivedGames(
            archive_pb2.ListArchivedGamesRequest(page_token="not a token"), timeout=TIMEOUT
        ),
        "BAD_PAGE_TOKEN",
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    answer = refused(
        lambda: archive.GetRecord(archive_pb2.GetRecordRequest(game_id=game_id), timeout=TIMEOUT),
        "GAME_NOT_OVER",
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert answer.metadata["game_id"] == game_id


def test_accounts_and_tournaments(server: ServerProcess) -> None:
    lobby = competition_pb2_grpc.LobbyServiceStub(server.channel())
    refused(
        lambda: lobby.WatchSeats(competition_pb2.WatchSeatsRequest(), timeout=TIMEOUT),
        "API_KEY_REQUIRED",
        grpc.StatusCode.UNAUTHENTICATED,
    )
    refused(
        lambda: lobby.WatchSeats(
            competition_pb2.WatchSeatsRequest(), metadata=bearer(new_api_key()), timeout=TIMEOUT
        ),
        "BAD_API_KEY",
        grpc.StatusCode.UNAUTHENTICATED,
    )
    bots = [account(server, "bot") for _ in range(4)]
    organiser = account(server, "player")
    other = account(server, "player")
    with Client(server.address) as client:
        refused(
            lambda: client.create_tournament(bots[0][1], "t", "texas42", [b[0] for b in bots], 1),
            "NOT_AN_ORGANISER",
            grpc.StatusCode.PERMISSION_DENIED,
        )
        answer = refused(
            lambda: client.create_tournament(organiser[1], "t", "texas42", [f"nobody-{n}" for n in range(4)], 1),
            "ACCOUNT_NOT_FOUND",
            grpc.StatusCode.NOT_FOUND,
        )
        assert answer.metadata["account"].startswith("nobody-")
        made = client.create_tournament(organiser[1], "t", "texas42", [b[0] for b in bots], 1)
        answer = refused(
            lambda: client.start_tournament(other[1], made.tournament_id),
            "NOT_YOUR_TOURNAMENT",
            grpc.StatusCode.PERMISSION_DENIED,
        )
        assert answer.metadata["tournament_id"] == made.tournament_id
        client.cancel_tournament(organiser[1], made.tournament_id)
        answer = refused(
            lambda: client.cancel_tournament(organiser[1], made.tournament_id),
            "TOURNAMENT_STATUS",
            grpc.StatusCode.FAILED_PRECONDITION,
        )
        assert answer.metadata["status"] == "cancelled"
        unknown = str(uuid.uuid4())
        answer = refused(
            lambda: client.tournament(unknown, timeout=TIMEOUT),
            "TOURNAMENT_NOT_FOUND",
            grpc.StatusCode.NOT_FOUND,
        )
        assert answer.metadata["tournament_id"] == unknown
        duplicate = client.create_tournament(organiser[1], "d", "texas42", [b[0] for b in bots], 1)
        client.start_tournament(organiser[1], duplicate.tournament_id)
        game_id = _first_game(client, duplicate.tournament_id)
        games = game_service_pb2_grpc.GameServiceStub(server.channel())
        answer = refused(
            lambda: view_of(games, game_id),
            "EMBARGOED",
            grpc.StatusCode.PERMISSION_DENIED,
        )
        assert answer.metadata["game_id"] == game_id


def _first_game(client: Client, tournament_id: str) -> str:
    """The id of the tournament's first game, once its director has made it."""
    for _ in range(300):
        games = client.tournament(tournament_id, timeout=TIMEOUT).games
        if games and games[0].game_id:
            return str(games[0].game_id)
        time.sleep(0.1)
    raise AssertionError(f"tournament {tournament_id} made no game")


def test_too_many_streams_is_quota_exceeded(server: ServerProcess, stub: Any) -> None:
    game_id = create_game(stub)
    channel = server.channel()
    watcher = game_service_pb2_grpc.GameServiceStub(channel)
    streams = [
        watcher.WatchGame(game_service_pb2.WatchGameRequest(game_id=game_id), timeout=TIMEOUT)
        for _ in range(3)
    ]
    try:
        for stream in streams:
            next(stream)
        answer = refused(
            lambda: watcher.WatchGame(game_service_pb2.WatchGameRequest(game_id=game_id), timeout=TIMEOUT),
            "QUOTA_EXCEEDED",
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        )
        assert answer.metadata["limit"] == "streams_per_peer"
    finally:
        for stream in streams:
            stream.cancel()


def test_an_unexpected_error_is_internal_with_its_request_id() -> None:
    from boneyard.server.transport.pipeline import refusal_for

    answer = refusal_for(KeyError("bug"), "/boneyard.v1.GameService/GetGame", [("x-request-id", "abc-1")])
    assert (answer.code, answer.reason) == (grpc.StatusCode.INTERNAL, "INTERNAL")
    assert answer.metadata == {"request_id": "abc-1"}
    assert "abc-1" in answer.message
    assert reason_of(KeyError("bug")) == ("INTERNAL", {})


def test_every_reason_of_the_proto_is_sent_or_said_to_be_unreachable() -> None:
    """Last in the module: the tests above filled ``SENT``."""
    documented = reasons()
    assert not set(NOT_REACHABLE_FROM_OUTSIDE) - documented
    assert not SENT - documented, f"sent but not in errors.proto: {SENT - documented}"
    missing = documented - SENT - set(NOT_REACHABLE_FROM_OUTSIDE) - set(TESTED_ELSEWHERE)
    assert not missing, f"documented, never sent by a test, not said to be unreachable: {missing}"


def test_the_unreachable_list_is_not_sent() -> None:
    assert not SENT & set(NOT_REACHABLE_FROM_OUTSIDE)
