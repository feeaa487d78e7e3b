"""An account's turns across all its games, on one stream (``LobbyService.WatchTurns``, and
``PlayTurns``, which takes the answers on the same call: ``answering``).

A bot account in a tournament that lets it play many games at once would otherwise hold a
``WatchGame`` stream per game to learn when each of its seats is to act. ``TurnWatch`` tells it
on one stream instead: first each of its seats that is to act now, then each time one comes to
act, with the seat's view (the engine's, what ``GetView`` with the account's key answers);
and once for each of its seats when one of its games ends. An account may hold two seats of a
game (a match's entrant holds its Texas 42 partnership): each seat's turns are told naming it.

Nothing polls. The account's games not over are read from the database when the stream opens
and again whenever a seat is reserved for the account (``SeatWatch`` wakes the account's
streams, in every process on PostgreSQL); each such game is chosen in the feed
(``Feed.follow_chosen``) for the account's seats in it, which wakes the stream when that game
moves to one of them or ends, here or (any move), through the PostgreSQL notifications, in
another process. A woken stream looks only at the games that moved, in memory (``GameHost``):
a publish of any other game, or of a move leaving another account to act, costs it nothing.

``answering`` makes a PlayTurns stream of the turns told and the answers applied concurrently
(``GameServicer.answer_turn``: what a SubmitAction does), refusals told as messages.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from boneyard import engine
from boneyard.server.competition.seat_watch import SeatWatch
from boneyard.server.errors import InvalidArgument, NotFound, PermissionDenied
from boneyard.server.games.feed import Feed
from boneyard.server.games.host import GameHost
from boneyard.server.games.live import LiveGame, turn_of
from boneyard.server.store.competition import Account, CompetitionStore

__all__ = ["MAX_ANSWERS_IN_FLIGHT", "MAX_GAME_IDS", "SeatTurn", "TurnWatch", "answering"]

MAX_GAME_IDS = 1000
"""Games a reopened stream may name to be told the ends it missed (WatchTurnsRequest.game_ids):
each is read (from memory, or its log) when the stream opens."""

MAX_ANSWERS_IN_FLIGHT = 256
"""Answers of one PlayTurns stream applied at once: the stream reads no more of the client's
messages until one is done, so that a client cannot make the server hold more."""

_T = TypeVar("_T")
_A = TypeVar("_A")


@dataclass(frozen=True, slots=True)
class SeatTurn:
    """A seat of the account is to act at ``version`` of its game, or the game is over."""

    game_id: str
    seat: int
    version: int
    view: engine.SeatView
    """What the seat sees at ``version``: its legal actions, or the game's end."""

    @property
    def over(self) -> bool:
        return self.view.phase is engine.Phase.GAME_OVER


class TurnWatch:
    """The turns of an account's seats, for ``LobbyService.WatchTurns`` and ``PlayTurns``."""

    def __init__(
        self, host: GameHost, feed: Feed, seats: SeatWatch, competition: CompetitionStore
    ) -> None:
        self._host = host
        self._feed = feed
        self._seats = seats
        self._competition = competition

    async def seats_in(
        self, account: Account, game_ids: Sequence[str]
    ) -> dict[str, tuple[int, ...]]:
        """The account's seats in each of ``game_ids`` (games a reopened stream was playing):
        every one it holds, so that a partnership's two seats are followed again together.
        ``InvalidArgument`` for too many, ``NotFound`` for an unknown game,
        ``PermissionDenied`` for a game without a seat of the account's."""
        if len(game_ids) > MAX_GAME_IDS:
            raise InvalidArgument(f"at most {MAX_GAME_IDS} game_ids, not {len(game_ids)}")
        games = await self._host.get_many(list(dict.fromkeys(game_ids)))
        seats: dict[str, tuple[int, ...]] = {}
        for game_id in game_ids:
            game = games.get(game_id)
            if game is None:
                raise NotFound(f"no game {game_id}", game_id=game_id)
            held = game.accounts.get(account.id)
            if not held:
                raise PermissionDenied(
                    f"account {account.name!r} holds no seat of game {game_id}", game_id=game_id
                )
            seats[game_id] = held
        return seats

    async def follow(
        self,
        account: Account,
        playing: Mapping[str, Sequence[int]],
        still_valid: Callable[[], Awaitable[None]],
    ) -> AsyncGenerator[SeatTurn, None]:
        """The account's turns until the caller stops: first of the games in ``playing``
        (game -> seats, from ``seats_in``: those over are told so) and of every game of the
        account not over, then as they come. ``still_valid()`` is awaited whenever the
        account's seats change (a revoked key's streams are woken so): it raises to end the
        stream."""
        wake = self._seats.follow(account.id)
        with self._feed.follow_chosen() as changes:
            seats: dict[str, list[int]] = {}
            """The games followed (not over as last seen), in the order first known, with the
            account's seats in each (two for a match's partnership)."""
            told: dict[tuple[str, int], int] = {}
            """The version each seat was last told at."""
            look: set[str] = set()
            for game_id, named in playing.items():
                seats[game_id] = sorted(named)
                changes.choose(game_id, seats[game_id])  # woken by its seats' turns, its end
                look.add(game_id)
            reserved: asyncio.Task[None] | None = None
            moved: asyncio.Task[tuple[set[str], bool]] | None = None
            try:
                fresh = True
                while True:
                    if fresh:
                        # Taken before reading: a seat reserved meanwhile wakes it again.
                        for game_id, seat in await wake.seats(
                            lambda: self._competition.open_seats_of(account.id)
                        ):
                            known = seats.get(game_id)
                            if known is None:
                                seats[game_id] = [seat]
                                changes.choose(game_id, (seat,))
                                look.add(game_id)
                            elif seat not in known:
                                known.append(seat)
                                known.sort()
                                changes.choose(game_id, known)
                                look.add(game_id)
                    for game_id in [g for g in seats if g in look]:
                        turns = await self._look(game_id, seats[game_id], told)
                        if turns and turns[0].over:
                            for seat in seats.pop(game_id):
                                told.pop((game_id, seat), None)
                            changes.drop(game_id)
                        for turn in turns:
                            yield turn
                    look.clear()
                    if reserved is None:
                        reserved = asyncio.ensure_future(wake.wait())
                    if moved is None:
                        moved = asyncio.ensure_future(changes.take())
                    await asyncio.wait((reserved, moved), return_when=asyncio.FIRST_COMPLETED)
                    fresh = reserved.done()
                    if fresh:
                        reserved = None
                        await still_valid()
                    if moved.done():
                        ids, everything = moved.result()
                        moved = None
                        look = set(seats) if everything else ids & set(seats)
            finally:
                for task in (reserved, moved):
                    if task is not None:
                        task.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await task
                self._seats.unfollow(account.id, wake)

    async def _look(
        self, game_id: str, seats: Sequence[int], told: dict[tuple[str, int], int]
    ) -> list[SeatTurn]:
        """What to tell of a game that may have moved, where the account holds ``seats``: the
        turn of the seat to act at a version not told yet, or the game's end for each seat;
        nothing (``[]``) otherwise."""
        try:
            game: LiveGame = await self._host.get(game_id)
        except NotFound:
            return []
        version = game.version
        if game.over:
            return [
                SeatTurn(game_id, seat, version, engine.view(game.state, seat)) for seat in seats
            ]
        seat = turn_of(game.state)
        if seat is None or seat not in seats or told.get((game_id, seat)) == version:
            return []
        view = engine.view(game.state, seat)
        if not view.legal:
            return []
        told[game_id, seat] = version
        return [SeatTurn(game_id, seat, version, view)]


class _Failed:
    """An error of one side of ``answering``, handed to the stream to end it."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


async def answering(
    told: AsyncGenerator[_T, None],
    answers: AsyncIterator[_A],
    answer: Callable[[_A], Awaitable[_T | None]],
    in_flight: int = MAX_ANSWERS_IN_FLIGHT,
) -> AsyncGenerator[_T, None]:
    """What a stream each way sends (``LobbyService.PlayTurns``): ``told``'s messages, and
    what ``answer`` says of each of the client's ``answers`` (``None``: nothing), as they come.

    Each answer is applied in a task of its own, up to ``in_flight`` at once: a bot's answers
    in many games are written together (one group commit), not one after the other. What
    either side has to send holds a place until it is sent (at most ``in_flight`` each), so a
    client that does not read stops the stream's work instead of piling it up. The stream ends
    when the client's answers end (once those in flight are done) or ``told`` does; an error
    of either side (a cancellation too) ends it with that error. An answer being applied when
    the stream ends is seen through, not cancelled: what it commits is then the game's."""
    out: asyncio.Queue[tuple[asyncio.Semaphore | None, Any]] = asyncio.Queue()
    telling = asyncio.Semaphore(in_flight)
    room = asyncio.Semaphore(in_flight)
    applying: set[asyncio.Task[None]] = set()
    closing = False

    def ended(task: asyncio.Task[None]) -> None:
        applying.discard(task)
        if closing:
            return
        if task.cancelled():
            out.put_nowait((None, _Failed(asyncio.CancelledError())))
        elif (error := task.exception()) is not None:
            out.put_nowait((None, _Failed(error)))

    async def tell() -> None:
        async with contextlib.aclosing(told) as messages:
            async for message in messages:
                await telling.acquire()
                out.put_nowait((telling, message))
        out.put_nowait((None, _END))

    async def apply(request: _A) -> None:
        said = None
        try:
            said = await answer(request)
        finally:
            if said is None:
                room.release()
            else:
                out.put_nowait((room, said))  # its place is freed once it is sent

    async def read() -> None:
        async for request in answers:
            await room.acquire()
            task = asyncio.ensure_future(apply(request))
            applying.add(task)
            task.add_done_callback(ended)
        for _ in range(in_flight):  # every answer in flight done and what it said sent
            await room.acquire()
        out.put_nowait((None, _END))

    sides = [asyncio.ensure_future(tell()), asyncio.ensure_future(read())]
    for side in sides:
        side.add_done_callback(ended)
    try:
        while True:
            place, item = await out.get()
            if item is _END:
                return
            if type(item) is _Failed:
                raise item.error
            yield item
            if place is not None:
                place.release()
    finally:
        closing = True
        for side in sides:
            side.cancel()
        await asyncio.gather(*sides, return_exceptions=True)
        if applying:
            # Not cancelled: an answer cancelled while it commits could leave this copy of
            # its game behind its log. (``asyncio.wait`` cancels nothing if this is cancelled.)
            await asyncio.wait(set(applying))
