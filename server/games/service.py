"""The gRPC servicer of GameService: decode, call the application layer, encode.

No rule lives here, and no error handling or credential parsing either: the one pipeline
(``boneyard.server.transport.pipeline``) maps errors to status codes and reads the bearer token. The
games are in memory (``boneyard.server.games.host``): seeing, acting and watching read nothing
from the database.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import (
    actions_pb2,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
)
from boneyard.engine import GameState
from boneyard.server.competition.accounts import is_api_key
from boneyard.server.errors import (
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    Unauthenticated,
)
from boneyard.server.games.answers import action_answer, view_answer
from boneyard.server.games.app import GameApp, new_seat_token, rules_for
from boneyard.server.games.feed import Feed
from boneyard.server.games.host import GameHost
from boneyard.server.games.live import LiveGame, face_down_through, stream_message
from boneyard.server.games.lobby_watch import LobbyBoard
from boneyard.server.games.time_controls import time_control_from_proto, time_control_to_proto
from boneyard.server.ops import logs
from boneyard.server.ops.admin import check_account_name
from boneyard.server.paging import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, page_size
from boneyard.server.quotas import Quotas, peer_of
from boneyard.server.store import errors as store_errors
from boneyard.server.store.competition import Account
from boneyard.server.transport.pipeline import credentials

__all__ = [
    "GAME_STATUS_TO_PROTO",
    "GameServicer",
    "check_account_name_given",
    "check_game_id",
    "check_text",
    "summary",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

MAX_NAME = 200
MAX_PLAYER_NAME = 100
MAX_REQUEST_ID = 128

GAME_STATUS_TO_PROTO = {
    "open": game_pb2.GAME_STATUS_OPEN,
    "playing": game_pb2.GAME_STATUS_PLAYING,
    "finished": game_pb2.GAME_STATUS_FINISHED,
    "abandoned": game_pb2.GAME_STATUS_ABANDONED,
}
_STATUS_FROM_PROTO = {v: k for k, v in GAME_STATUS_TO_PROTO.items()}
_LOBBY_STATUSES = (game_pb2.GAME_STATUS_OPEN, game_pb2.GAME_STATUS_PLAYING)
"""What a lobby shows: games waiting for players, and games in play."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""Unicode's control characters (category Cc), all of them: one search, not a lookup a
character (every action's request id is checked)."""


def check_text(value: str, what: str) -> None:
    """Refuse control characters (NUL above all, which PostgreSQL cannot store) in a text the
    server keeps."""
    bad = _CONTROL.search(value)
    if bad is not None:
        raise InvalidArgument(f"{what} may not contain control characters (it has {bad[0]!r})")


def check_account_name_given(name: str, what: str) -> None:
    """Refuse a name no account can have (the operator's rules for account names) before it
    is looked up: a NUL would fail the query on PostgreSQL, and a huge name would be quoted
    back whole."""
    try:
        check_account_name(name)
    except ValueError as error:
        raise InvalidArgument(f"{what} is no account name: {error}") from None


_CANONICAL_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@functools.lru_cache(maxsize=4096)
def check_game_id(game_id: str) -> str:
    """The game id in its canonical form (the one the server hands out); ``InvalidArgument``
    for anything that is not a UUID. (Kept for the ids asked lately, the games in play: a
    regular expression's match cost more than the rest of reading a request.)"""
    if _CANONICAL_ID.fullmatch(game_id):
        return game_id  # as every client sends it: one match instead of a parse and a format
    try:
        return str(uuid.UUID(game_id))
    except ValueError:
        raise InvalidArgument(f"not a game id: {game_id[:40]!r}", reason="BAD_GAME_ID") from None


MAX_SETUP_REQUEST_ID = 100


def _check_request_id(request_id: str) -> None:
    """The optional request id of CreateGame and TakeSeat."""
    if len(request_id) > MAX_SETUP_REQUEST_ID:
        raise InvalidArgument(f"request_id is at most {MAX_SETUP_REQUEST_ID} characters")
    check_text(request_id, "request_id")


@functools.lru_cache(maxsize=1024)
def _rules_message(rules: engine.Ruleset) -> rules_pb2.Ruleset:
    """A ruleset's message, made once (copied into each summary, never changed: a game's
    rules are fixed, and a set-up answers with its summary five times)."""
    return codec.rules_to_proto(rules)


def summary(game: LiveGame, embargoed: bool, deadline: datetime | None) -> game_pb2.GameSummary:
    """What anybody may know of a game (an embargoed one's score and length are another
    table's secrets: its players see them in their views)."""
    state = game.state
    accounts = {seat for held in game.accounts.values() for seat in held}
    message = game_pb2.GameSummary(
        game_id=game.id,
        name=game.name,
        status=GAME_STATUS_TO_PROTO[game.status],
        seats=[
            game_pb2.SeatSummary(
                seat=s,
                occupied=s in game.seats,
                player_name=game.seats.get(s, ""),
                account=s in accounts,
                house_bot=game.house.get(s, ""),
            )
            for s in range(state.rules.players)
        ],
    )
    message.rules.CopyFrom(_rules_message(state.rules))
    _set_time(message.create_time, game.created_at)
    if not embargoed:
        message.version = game.version
        _set_time(message.update_time, game.updated_at)
        message.scores.extend(state.scores)
        if state.winner is not None:
            message.winner = state.winner
    if game.clock is not None:
        message.time_control.CopyFrom(time_control_to_proto(game.clock.control))
        for seat, bank in enumerate(game.clock.state.banks):
            message.seats[seat].bank_remaining_ms = bank
        if deadline is not None and game.status == "playing":
            _set_time(message.turn_deadline, deadline)
    return message


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _set_time(stamp: Timestamp, at: datetime) -> None:
    """``stamp.FromDatetime(at)`` for the store's times (aware), as one subtraction:
    protobuf's goes through ``calendar.timegm`` and a range check in Python, and a game's
    set-up answers with a summary five times."""
    if at.tzinfo is None:
        stamp.FromDatetime(at)
        return
    since = at - _EPOCH
    stamp.seconds = since.days * 86_400 + since.seconds
    stamp.nanos = since.microseconds * 1000


class GameServicer(game_service_pb2_grpc.GameServiceServicer):
    def __init__(self, app: GameApp, host: GameHost, feed: Feed, quotas: Quotas) -> None:
        self._app = app
        self._host = host
        self._feed = feed
        self._quotas = quotas

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.to_thread(fn, *args)

    # ------------------------------------------------------------ seats and auth

    async def seat(
        self, game_id: str, asked: int | None, required: bool, known: bool = True
    ) -> int | None:
        """The seat the caller's credentials open (``None``: a spectator); ``known``: the
        game, seat and account go into the call's log context."""
        token = credentials()
        if token is None:
            if required:
                raise Unauthenticated(
                    "this call acts for a seat: send 'authorization: Bearer <seat token>' "
                    "(TakeSeat gives one)",
                    reason="TOKEN_REQUIRED",
                    game_id=game_id,
                )
            if asked is not None:
                raise PermissionDenied(
                    f"seat {asked}'s view shows its hidden hand: only its token may ask for it",
                    game_id=game_id,
                    asked=asked,
                )
            game = await self._host.get(game_id)  # NOT_FOUND for an unknown game
            if game.deal_secret is not None:
                await self._call(self._app.check_spectators, game_id)
            return None
        account = None
        if is_api_key(token):
            account = await self._app.keys.account(token)
            try:
                seat = await self._host.seat_for(game_id, token, account.id, asked)
            except PermissionDenied as denied:
                if "asked" in denied.metadata:  # holds other seats of the game
                    raise
                raise PermissionDenied(
                    f"account {account.name!r} holds no seat of game {game_id}", game_id=game_id
                ) from None
        else:
            found = self._host.held_seat(game_id, token)
            seat = found if found is not None else await self._host.seat_for(game_id, token, None)
        if asked is not None and asked != seat:
            raise PermissionDenied(
                f"this token is for seat {seat} of game {game_id}, not seat {asked}",
                game_id=game_id,
                seat=seat,
                asked=asked,
            )
        if known:
            logs.known(game=game_id, seat=seat, account=account.name if account else None)
        return seat

    # ------------------------------------------------------------ games

    async def game(self, game_id: str) -> LiveGame:
        """The game's copy in memory (read from the store if this process holds none)."""
        return await self._host.get(game_id)

    async def summary(self, game_id: str) -> game_pb2.GameSummary:
        return await self.summary_of(await self._host.get(game_id))

    async def summary_of(self, game: LiveGame) -> game_pb2.GameSummary:
        # A playing of a shared deal is embargoed at least as long as it is played itself:
        # only a game over asks the database whether the deal's other playings are.
        embargoed = game.deal_secret is not None and (
            not game.over or await self._call(self._app.embargoed, game.id)
        )
        return self._summary(game, embargoed)

    def _summary(self, game: LiveGame, embargoed: bool) -> game_pb2.GameSummary:
        deadline = self._host.deadline(game.clock) if game.clock is not None else None
        return summary(game, embargoed, deadline)

    async def ListPresets(
        self, request: game_service_pb2.ListPresetsRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.ListPresetsResponse:
        return game_service_pb2.ListPresetsResponse(
            presets=[
                # As this server makes a game of it (rules_for: a deal limit included).
                rules_pb2.Preset(
                    name=name,
                    description=engine.PRESET_DESCRIPTIONS[name],
                    rules=codec.rules_to_proto(rules_for(name, {})),
                )
                for name in engine.preset_names()
            ]
        )

    async def CreateGame(
        self, request: game_service_pb2.CreateGameRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.CreateGameResponse:
        if len(request.name) > MAX_NAME:
            raise InvalidArgument(f"a game name is at most {MAX_NAME} characters")
        check_text(request.name, "a game name")
        preset, options = codec.rules_overrides_from_proto(request.rules)
        control = time_control_from_proto(request.time_control, request.HasField("time_control"))
        key = credentials()
        creator = None
        if not self._quotas.open_games or (key is not None and is_api_key(key)):
            # --open-games=false: only accounts create games; an account's key counts
            # against its own quota too.
            creator = await self._app.keys.account(key)
        self._quotas.creating_game(peer_of(context.peer()), creator.id if creator else None)
        reservations = []
        if request.reservations:
            # Reserving seats hands accounts games they must play (their bots follow
            # WatchSeats): only an organiser (a player's account) may do that.
            await self._app.keys.organiser(credentials())
            reservations = await self._call(self._reservations, request.reservations)
        _check_request_id(request.request_id)
        served = None
        if request.house_bots or control is not None:
            # The server will play in this game (house bots, timeouts): a bounded share.
            served = self._quotas.begin_served(
                peer_of(context.peer()), creator.id if creator else None
            )
        try:
            game_id, _ = await self._call(
                functools.partial(
                    self._app.create_game,
                    preset,
                    options,
                    request.name,
                    time_control=control,
                    reservations=reservations,
                    house_bots=[(h.seat, h.strategy) for h in request.house_bots],
                    request_id=request.request_id,
                )
            )
        except BaseException:
            if served is not None:
                self._quotas.end_served(served)
            raise
        if served is not None:
            self._quotas.served(game_id, served)
        logs.known(game=game_id)
        return game_service_pb2.CreateGameResponse(game_id=game_id, game=await self.summary(game_id))

    def _reservations(
        self, requested: Iterable[game_service_pb2.SeatReservation]
    ) -> list[tuple[int, Account]]:
        reservations = list(requested)
        # The names read at once, up to the first that is no account name: each reservation
        # is then refused in order, as if it were looked up alone.
        names: list[str] = []
        for r in reservations:
            try:
                check_account_name(r.account_name)
            except ValueError:
                break
            names.append(r.account_name)
        accounts = self._app.competition.accounts_named(names)
        found = []
        for r in reservations:
            check_account_name_given(r.account_name, f"the account_name reserving seat {r.seat}")
            account = accounts.get(r.account_name)
            if account is None:
                raise NotFound(
                    f"no account named {r.account_name!r} to reserve seat {r.seat} for",
                    reason="ACCOUNT_NOT_FOUND",
                    account=r.account_name,
                )
            found.append((r.seat, account))
        return found

    async def GetGame(
        self, request: game_service_pb2.GetGameRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.GetGameResponse:
        game_id = check_game_id(request.game_id)
        return game_service_pb2.GetGameResponse(game=await self.summary(game_id))

    async def ListGames(
        self, request: game_service_pb2.ListGamesRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.ListGamesResponse:
        size = page_size(request.page_size)
        status = None
        if request.status:
            if request.status not in _STATUS_FROM_PROTO:
                raise InvalidArgument(f"unknown game status {request.status}")
            status = _STATUS_FROM_PROTO[request.status]
        records, cursor = await self._call(
            self._app.store.list_games, status, size, request.page_token or None
        )
        cold = sum(1 for r in records if self._host.held_version(r.id) is None)
        self._quotas.loading(peer_of(context.peer()), cold)
        # One trip to the database for the cold games and one for the embargoes, not one
        # per game: under load each trip waits its turn for a worker thread.
        held = await self._host.get_many([r.id for r in records])
        secret = [game_id for game_id, game in held.items() if game.deal_secret is not None]
        embargoed = await self._call(self._app.embargoed_among, secret) if secret else set()
        games = [self._summary(held[r.id], r.id in embargoed) for r in records if r.id in held]
        return game_service_pb2.ListGamesResponse(games=games, next_page_token=cursor or "")

    async def TakeSeat(
        self, request: game_service_pb2.TakeSeatRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.TakeSeatResponse:
        game_id = check_game_id(request.game_id)
        name = request.player_name.strip()
        if not name or len(name) > MAX_PLAYER_NAME:
            raise InvalidArgument(f"player_name is required, at most {MAX_PLAYER_NAME} characters")
        check_text(name, "player_name")
        asked = request.seat if request.HasField("seat") else None
        _check_request_id(request.request_id)
        if request.request_id:
            # A retry gets the same token back (derived from the request): see SeatTokens.
            token = await self._call(self._app.seat_tokens.token, game_id, request.request_id)
        else:
            token = new_seat_token()
        seat, _ = await self._host.take_seat(game_id, asked, name, token, request.request_id)
        return game_service_pb2.TakeSeatResponse(
            seat=seat, seat_token=token, game=await self.summary(game_id)
        )

    async def LeaveSeat(
        self, request: game_service_pb2.LeaveSeatRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.LeaveSeatResponse:
        game_id = check_game_id(request.game_id)
        token = credentials()
        if token is None or is_api_key(token):
            raise Unauthenticated(
                "LeaveSeat needs the seat's token ('authorization: Bearer <seat token>'): "
                "a seat reserved for an account cannot be left",
                reason="TOKEN_REQUIRED",
                game_id=game_id,
            )
        seat, _ = await self._host.leave_seat(game_id, token)
        return game_service_pb2.LeaveSeatResponse(seat=seat, game=await self.summary(game_id))

    # ------------------------------------------------------------ seeing and acting

    # The base class says a message; this answers it encoded (``answers``), which the doors
    # send as it is.
    async def GetView(  # type: ignore[override]
        self, request: game_service_pb2.GetViewRequest, context: grpc.aio.ServicerContext
    ) -> bytes:
        game_id = check_game_id(request.game_id)
        asked = request.seat if request.HasField("seat") else None
        seat = await self.seat(game_id, asked, required=False)
        game = self._host.held(game_id) or await self._host.get(game_id)
        return view_answer(game.state, seat, game.version)

    async def SubmitAction(
        self, request: game_service_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> game_service_pb2.SubmitActionResponse:
        game_id = check_game_id(request.game_id)
        if not request.request_id or len(request.request_id) > MAX_REQUEST_ID:
            raise InvalidArgument(
                f"request_id is required (a UUID), at most {MAX_REQUEST_ID} characters"
            )
        check_text(request.request_id, "request_id")
        if request.expected_version == 0:
            raise InvalidArgument("expected_version is required: send the version of your view")
        asked = request.seat if request.HasField("seat") else None
        seat, command = await self._command(game_id, asked, request.action)

        def response_for(version: int, state: GameState) -> bytes:
            return action_answer(state, seat, version)

        result = await self._host.submit(
            game_id, seat, request.expected_version, request.request_id, command, response_for
        )
        assert result.response is not None
        # The answer as encoded (``answers``): sent as these very bytes (the doors pass bytes
        # through), not parsed back to be serialized again.
        return result.response  # type: ignore[return-value]

    async def answer_turn(
        self, game_id: str, asked: int, version: int, action: actions_pb2.Action
    ) -> None:
        """A turn told on LobbyService.PlayTurns, answered: what SubmitAction does (the
        caller's key checked, its seat, the version, the rules), with no view to answer. Its
        request id is the turn's own (``turn:<seat>:<version>``), so an answer sent again
        after a lost connection is applied once."""
        game_id = check_game_id(game_id)
        if version == 0:
            raise InvalidArgument("version is required: the turn's (WatchTurnsResponse.version)")
        # Not ``known`` to the log's context: the stream's many answers share the call's one.
        seat, command = await self._command(game_id, asked, action, known=False)
        await self._host.submit(
            game_id, seat, version, f"turn:{seat}:{version}", command, _version_only
        )

    async def _command(
        self, game_id: str, asked: int | None, action: actions_pb2.Action, known: bool = True
    ) -> tuple[int, engine.Command]:
        """The seat the caller acts for, and its action as the engine's command."""
        seat = await self.seat(game_id, asked, required=True, known=known)
        assert seat is not None
        return seat, codec.action_from_proto(action, seat)

    # The base class says messages; this yields them encoded, which the doors send as they are.
    async def WatchGame(  # type: ignore[override]
        self, request: game_service_pb2.WatchGameRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[bytes]:
        """Each message is an encoded ``WatchGameResponse``, made once for every watcher in
        the same seat (``piping`` sends bytes as they are)."""
        game_id = check_game_id(request.game_id)
        asked = request.seat if request.HasField("seat") else None
        seat = await self.seat(game_id, asked, required=False)
        game = await self._host.get(game_id)
        if request.from_version > game.version:
            raise OutOfRange(
                f"game {game_id} is at version {game.version}; cannot watch from "
                f"{request.from_version}",
                game_id=game_id,
                current_version=game.version,
            )
        position = request.from_version
        # Tricks already face down in this watcher's view stay face down when re-sent.
        hidden = face_down_through(game) if position < game.version else 0
        folded: GameState | None = None
        """This stream's own state, only while it is behind what the game keeps."""
        while True:
            while position < game.version:
                seq = position + 1
                message = game.message(seq, seat) if seq > hidden else None
                if message is None:
                    # Further back than the game keeps (or face down): fold the log for
                    # this stream.
                    if folded is None and position:
                        folded = engine.replay(game.events[:position])
                    event = game.events[position]
                    after = engine.evolve(folded, event)
                    message = stream_message(event, folded, after, seat, seq, hidden)
                    folded = after
                else:
                    folded = None
                position = seq
                yield message
            if game.over:
                return
            if not game.evicted:
                await self._feed.wait(game_id, position)
            if game.evicted:  # (behind the log, or never kept: the host has it anew)
                game = await self._host.get(game_id)

    # ------------------------------------------------------------ the lobby

    async def WatchLobby(  # type: ignore[override]
        self, request: game_service_pb2.WatchLobbyRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[bytes]:
        """Each message is an encoded ``WatchLobbyResponse`` (``lobby_watch``): the lobby, then
        its changes as the feed publishes them."""
        statuses = frozenset(request.statuses) or frozenset(_LOBBY_STATUSES)
        wrong = sorted(s for s in statuses if s not in _LOBBY_STATUSES)
        if wrong:
            raise InvalidArgument(
                f"a lobby shows open and playing games (statuses {_LOBBY_STATUSES}), not "
                f"status {wrong[0]}: finished games are the archive's (ListArchivedGames)"
            )
        if request.max_games < 0:
            raise InvalidArgument(f"max_games must not be negative, not {request.max_games}")
        limit = min(request.max_games or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        board = LobbyBoard(statuses, limit)
        # Following before listing: a change made while the list is read is looked at again.
        with self._feed.follow() as changes:
            board.relist(await self._lobby(statuses, limit))
            yield board.reset()
            while True:
                changed, everything = await changes.take()
                if not everything:
                    for game_id in changed:
                        board.update(game_id, await self._lobby_summary(game_id, board, statuses))
                if everything or board.needs_relist:
                    board.relist(await self._lobby(statuses, limit))
                message = board.changes()
                if message is not None:
                    yield message

    async def _lobby(
        self, statuses: frozenset[game_pb2.GameStatus.ValueType], limit: int
    ) -> dict[int, tuple[list[game_pb2.GameSummary], bool]]:
        """The first ``limit`` games of each status, oldest first (as ListGames pages them),
        and whether there were more."""
        listed: dict[int, tuple[list[game_pb2.GameSummary], bool]] = {}
        for status in sorted(statuses):
            records, cursor = await self._call(
                self._app.store.list_games, _STATUS_FROM_PROTO[status], limit, None
            )
            games = []
            for record in records:
                try:
                    games.append(await self.summary(record.id))
                except NotFound:  # (cannot happen: games are never deleted)
                    continue
            listed[status] = (games, cursor is not None)
        return listed

    async def _lobby_summary(
        self, game_id: str, board: LobbyBoard, statuses: frozenset[game_pb2.GameStatus.ValueType]
    ) -> game_pb2.GameSummary | None:
        """What the lobby shows of a changed game; ``None`` when it shows nothing of it. A
        game of another status that the lobby does not hold is not made a summary of (nor
        loaded, when this process does not hold it: another process's game in play moves at
        every action)."""
        try:
            if not board.holds(game_id) and self._host.held_version(game_id) is None:
                record = await self._call(self._app.store.get_game, game_id)
                if GAME_STATUS_TO_PROTO[record.status] not in statuses:
                    return None
            game = await self._host.get(game_id)
            if GAME_STATUS_TO_PROTO[game.status] not in statuses and not board.holds(game_id):
                return None
            return await self.summary(game_id)
        except (NotFound, store_errors.GameNotFound):
            return None


def _version_only(version: int, state: GameState) -> bytes:
    """What a turn answered on a stream is answered with, again on a retry of its request
    id: the version it made (the stream tells the view with the next turn; a SubmitAction
    sending such an id again gets its own answer, with the view)."""
    return game_service_pb2.SubmitActionResponse(version=version).SerializeToString()
