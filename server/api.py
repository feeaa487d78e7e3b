"""The gRPC servicer: decode, authenticate, call the application layer, map errors.

No rule lives here. Blocking store work runs in worker threads so the event loop keeps
serving streams.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import unicodedata
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TypeVar

import grpc

from boneyard import codec, engine
from boneyard.engine import GameState, Phase
from boneyard.server.app import GameApp
from boneyard.server.errors import (
    AppError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    PreconditionFailed,
    StaleVersion,
    Unauthenticated,
)
from boneyard.server.feed import Feed
from boneyard.server.store import errors as store_errors
from boneyard.server.store.competition import Account
from boneyard.server.time_controls import time_control_from_proto, time_control_to_proto
from boneyard.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc, view_pb2

__all__ = ["GameServicer"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

MAX_NAME = 200
MAX_PLAYER_NAME = 100
MAX_REQUEST_ID = 128
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200

_STATUS_CODES: dict[type[Exception], grpc.StatusCode] = {
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    PreconditionFailed: grpc.StatusCode.FAILED_PRECONDITION,
    StaleVersion: grpc.StatusCode.ABORTED,
    codec.MalformedMessage: grpc.StatusCode.INVALID_ARGUMENT,
    engine.RulesetError: grpc.StatusCode.INVALID_ARGUMENT,
    store_errors.GameNotFound: grpc.StatusCode.NOT_FOUND,
    store_errors.InvalidCursor: grpc.StatusCode.INVALID_ARGUMENT,
}

_STATUS_TO_PROTO = {
    "open": game_pb2.GAME_STATUS_OPEN,
    "playing": game_pb2.GAME_STATUS_PLAYING,
    "finished": game_pb2.GAME_STATUS_FINISHED,
}
_STATUS_FROM_PROTO = {v: k for k, v in _STATUS_TO_PROTO.items()}


class OutOfRange(AppError):
    pass


_STATUS_CODES[OutOfRange] = grpc.StatusCode.OUT_OF_RANGE


def _status_for(error: Exception) -> grpc.StatusCode | None:
    for kind in type(error).__mro__:
        code = _STATUS_CODES.get(kind)
        if code is not None:
            return code
    return None


def _rpc(method: Callable[..., Awaitable[_T]]) -> Callable[..., Awaitable[_T]]:
    """Map the errors of one unary RPC to status codes."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> _T:
        try:
            return await method(self, request, context)
        except Exception as error:
            code = _status_for(error)
            if code is None:
                # A bug, or a store failure: log it, and tell the client no more than that
                # (the exception's text may hold SQL and its parameters).
                log.exception("%s failed", method.__name__)
                await context.abort(grpc.StatusCode.INTERNAL, _INTERNAL_ERROR)
            await context.abort(code, str(error))
            raise  # abort raises; this line is never reached

    return wrapper


_INTERNAL_ERROR = "internal error (logged on the server); the request may be retried"


def _check_text(value: str, what: str) -> None:
    """Refuse control characters (NUL above all, which PostgreSQL cannot store) in a text the
    server keeps."""
    bad = next((ch for ch in value if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        raise InvalidArgument(f"{what} may not contain control characters (it has {bad!r})")


def _bearer_token(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            text = value if isinstance(value, str) else value.decode()
            scheme, _, token = text.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthenticated(
                    "the authorization metadata must be 'Bearer <seat token or API key>'"
                )
            return token.strip()
    return None


def _check_game_id(game_id: str) -> str:
    try:
        return str(uuid.UUID(game_id))
    except ValueError:
        raise InvalidArgument(f"not a game id: {game_id!r}") from None


class GameServicer(game_service_pb2_grpc.GameServiceServicer):
    def __init__(self, app: GameApp, feed: Feed) -> None:
        self._app = app
        self._feed = feed

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.to_thread(fn, *args)

    # ------------------------------------------------------------ seats and auth

    async def _seat(
        self, game_id: str, context: grpc.aio.ServicerContext, asked: int | None, required: bool
    ) -> int | None:
        token = _bearer_token(context)
        if token is None:
            if required:
                raise Unauthenticated(
                    "this call acts for a seat: send 'authorization: Bearer <seat token>' "
                    "(TakeSeat gives one)"
                )
            if asked is not None:
                raise PermissionDenied(
                    f"seat {asked}'s view shows its hidden hand: only its token may ask for it"
                )
            await self._call(self._app.load, game_id)  # NOT_FOUND for an unknown game
            await self._call(self._app.check_spectators, game_id)
            return None
        seat = await self._call(self._app.seat_for, game_id, token)
        if asked is not None and asked != seat:
            raise PermissionDenied(f"this token is for seat {seat} of game {game_id}, not seat {asked}")
        return seat

    # ------------------------------------------------------------ games

    async def _summary(self, game_id: str) -> game_pb2.GameSummary:
        return await self._call(self._summary_sync, game_id)

    def _summary_sync(self, game_id: str) -> game_pb2.GameSummary:
        store = self._app.store
        record = store.get_game(game_id)
        state, version = self._app.load(game_id)
        seats = {s.seat: s.player_name for s in store.list_seats(game_id)}
        summary = game_pb2.GameSummary(
            game_id=record.id,
            name=record.name,
            rules=codec.rules_to_proto(state.rules),
            status=_STATUS_TO_PROTO[record.status],
            seats=[
                game_pb2.SeatSummary(seat=s, occupied=s in seats, player_name=seats.get(s, ""))
                for s in range(state.rules.players)
            ],
        )
        summary.create_time.FromDatetime(record.created_at)
        # An embargoed game's score, and how long its log is, are another table's secrets
        # (its players see them in their views).
        if not self._app.embargoed(game_id):
            summary.version = version
            summary.update_time.FromDatetime(record.updated_at)
            summary.scores.extend(state.scores)
            if state.winner is not None:
                summary.winner = state.winner
        for seat in self._app.competition.account_seats(game_id):
            summary.seats[seat].account = True
        clock = self._app.clock(game_id)
        if clock is not None:
            game_clock, deadline = clock
            summary.time_control.CopyFrom(time_control_to_proto(game_clock.control))
            for seat, bank in enumerate(game_clock.state.banks):
                summary.seats[seat].bank_remaining_ms = bank
            if deadline is not None and record.status == "playing":
                summary.turn_deadline.FromDatetime(deadline)
        return summary

    @_rpc
    async def CreateGame(
        self, request: game_service_pb2.CreateGameRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.CreateGameResponse:
        if len(request.name) > MAX_NAME:
            raise InvalidArgument(f"a game name is at most {MAX_NAME} characters")
        _check_text(request.name, "a game name")
        preset, options = codec.rules_overrides_from_proto(request.rules)
        control = time_control_from_proto(request.time_control, request.HasField("time_control"))
        reservations = []
        if request.reservations:
            # Reserving seats hands accounts games they must play (their bots follow
            # WatchSeats): only an organiser (a player's account) may do that.
            await self._call(self._app.organiser_for, _bearer_token(context))
            reservations = await self._call(self._reservations, request.reservations)
        game_id, _ = await self._call(
            functools.partial(
                self._app.create_game,
                preset,
                options,
                request.name,
                time_control=control,
                reservations=reservations,
            )
        )
        return game_service_pb2.CreateGameResponse(game_id=game_id, game=await self._summary(game_id))

    def _reservations(
        self, requested: Iterable[game_service_pb2.SeatReservation]
    ) -> list[tuple[int, Account]]:
        found = []
        for r in requested:
            account = self._app.competition.account_named(r.account_name)
            if account is None:
                raise NotFound(f"no account named {r.account_name!r} to reserve seat {r.seat} for")
            found.append((r.seat, account))
        return found

    @_rpc
    async def GetGame(
        self, request: game_service_pb2.GetGameRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.GetGameResponse:
        game_id = _check_game_id(request.game_id)
        return game_service_pb2.GetGameResponse(game=await self._summary(game_id))

    @_rpc
    async def ListGames(
        self, request: game_service_pb2.ListGamesRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.ListGamesResponse:
        if request.page_size < 0:
            raise InvalidArgument(f"page_size must not be negative, not {request.page_size}")
        size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        status = None
        if request.status:
            if request.status not in _STATUS_FROM_PROTO:
                raise InvalidArgument(f"unknown game status {request.status}")
            status = _STATUS_FROM_PROTO[request.status]
        records, cursor = await self._call(
            self._app.store.list_games, status, size, request.page_token or None
        )
        games = [await self._summary(r.id) for r in records]
        return game_service_pb2.ListGamesResponse(games=games, next_page_token=cursor or "")

    @_rpc
    async def TakeSeat(
        self, request: game_service_pb2.TakeSeatRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.TakeSeatResponse:
        game_id = _check_game_id(request.game_id)
        name = request.player_name.strip()
        if not name or len(name) > MAX_PLAYER_NAME:
            raise InvalidArgument(f"player_name is required, at most {MAX_PLAYER_NAME} characters")
        _check_text(name, "player_name")
        asked = request.seat if request.HasField("seat") else None
        seat, token = await self._call(self._app.take_seat, game_id, asked, name)
        return game_service_pb2.TakeSeatResponse(
            seat=seat, seat_token=token, game=await self._summary(game_id)
        )

    # ------------------------------------------------------------ seeing and acting

    @_rpc
    async def GetView(
        self, request: game_service_pb2.GetViewRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.GetViewResponse:
        game_id = _check_game_id(request.game_id)
        asked = request.seat if request.HasField("seat") else None
        seat = await self._seat(game_id, context, asked, required=False)
        state, version = await self._call(self._app.load, game_id)
        return game_service_pb2.GetViewResponse(view=_view(state, seat, version))

    @_rpc
    async def SubmitAction(
        self, request: game_service_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.SubmitActionResponse:
        game_id = _check_game_id(request.game_id)
        if not request.request_id or len(request.request_id) > MAX_REQUEST_ID:
            raise InvalidArgument(
                f"request_id is required (a UUID), at most {MAX_REQUEST_ID} characters"
            )
        _check_text(request.request_id, "request_id")
        if request.expected_version == 0:
            raise InvalidArgument("expected_version is required: send the version of your view")
        asked = request.seat if request.HasField("seat") else None
        seat = await self._seat(game_id, context, asked, required=True)
        assert seat is not None
        command = codec.action_from_proto(request.action, seat)

        def response_for(version: int, state: GameState) -> bytes:
            response = game_service_pb2.SubmitActionResponse(
                version=version, view=_view(state, seat, version)
            )
            return response.SerializeToString(deterministic=True)

        result = await self._call(
            self._app.submit,
            game_id,
            seat,
            request.expected_version,
            request.request_id,
            command,
            response_for,
        )
        if not result.replayed:
            self._feed.publish(game_id)
        assert result.response is not None
        return game_service_pb2.SubmitActionResponse.FromString(result.response)

    async def WatchGame(
        self, request: game_service_pb2.WatchGameRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[game_service_pb2.WatchGameResponse]:
        try:
            game_id = _check_game_id(request.game_id)
            asked = request.seat if request.HasField("seat") else None
            seat = await self._seat(game_id, context, asked, required=False)
            _, version = await self._call(self._app.load, game_id)
            if request.from_version > version:
                raise OutOfRange(
                    f"game {game_id} is at version {version}; cannot watch from {request.from_version}"
                )
        except Exception as error:
            code = _status_for(error)
            if code is None:
                log.exception("WatchGame failed")
                await context.abort(grpc.StatusCode.INTERNAL, _INTERNAL_ERROR)
            await context.abort(code, str(error))
            return
        # Fold the log up to where the client is, then stream each event in the seat's form.
        events = await self._call(self._app.events_since, game_id, 0)
        current: GameState | None = None
        position = 0
        for seq, event in events:
            if seq > request.from_version:
                break
            current = engine.evolve(current, event)
            position = seq
        while True:
            for seq, event in events:
                if seq <= position:
                    continue
                seen = codec.redact_event(event, current, seat, seq)
                current = engine.evolve(current, event)
                position = seq
                yield game_service_pb2.WatchGameResponse(
                    event=seen, version=seq, view=_view(current, seat, seq)
                )
            if current is not None and current.phase is Phase.GAME_OVER:
                return
            await self._feed.wait(game_id, position)
            events = await self._call(self._app.events_since, game_id, position)


def _view(state: GameState, seat: int | None, version: int) -> view_pb2.SeatView:
    return codec.view_to_proto(engine.view(state, seat), version)
