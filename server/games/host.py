"""Games in memory: the authority in the process that serves them.

A game is loaded once from its log (``EventStore.snapshot``: events, seats, reservations,
applied requests, clock, deal secret) and then kept: ``GetView``, ``SubmitAction`` and
``WatchGame`` read nothing from the database. The actions of one game are applied one at a
time (an ``asyncio.Lock`` per game), decided in memory by the engine, and handed to the
process's one writer (``store.writer``), which commits every waiting action of every game in
one transaction; the answer goes out after the commit, so what a client was told is durable.

The database stays the final word between processes: the writer's conditional update of the
game's version (and the unique ``(game_id, seq)`` key) refuses an append to a game that moved
elsewhere, and then the cached copy is dropped and reloaded from the log. Other processes'
appends also arrive as notifications (``refresh``), which drop a copy that fell behind.

The games themselves are held by ``GameCache`` (``cache``), dealt by ``dealing``, and kept as
``LiveGame`` (``live``); this module seats players and applies actions to them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from boneyard import engine
from boneyard.api import codec
from boneyard.engine import Command, Event, GameState
from boneyard.records.hashing import chain_hash, hash_token
from boneyard.server.competition import account_events
from boneyard.server.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    PreconditionFailed,
    StaleVersion,
    Unauthenticated,
)
from boneyard.server.games.cache import MAX_LIVE_GAMES, GameCache, Hold
from boneyard.server.games.dealing import deal_hands
from boneyard.server.games.feed import Publish
from boneyard.server.games.live import (
    PHASE_DEAL,
    PHASE_GAME_OVER,
    LiveGame,
    Submitted,
    turn_of,
)
from boneyard.server.games.settling import Outcome, Settler
from boneyard.server.ops import logs
from boneyard.server.store import errors as store_errors
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.game_setup import ClockState, GameClock
from boneyard.server.store.repository import EventStore, RequestRecord
from boneyard.server.store.unit_of_work import WriteConnection
from boneyard.server.store.writer import Append, Writer

__all__ = ["ABSENT_AFTER", "SEAT_REQUEST", "CommitListener", "GameHost"]

log = logging.getLogger(__name__)

SEAT_REQUEST = "\x1eseat:"
"""The prefix of a TakeSeat's request id in the requests table (a control character, so no
client's own id can collide with it)."""
ABSENT_AFTER = 3
"""Timeouts in a row of every seat that is not a house bot's after which a game is abandoned
(``boneyard-server --abandon-absent-after``)."""
_T = TypeVar("_T")
CommitListener = Callable[[LiveGame, tuple[Event, ...]], None]

_token_hash = functools.lru_cache(maxsize=8192)(hash_token)
"""``hash_token`` of the seat tokens in use, remembered: every call acting for a seat looks its
token up by its hash (a dict look-up instead of a digest made at every call)."""


class GameHost:
    """The games of this process, in memory."""

    def __init__(
        self,
        store: EventStore,
        writer: Writer,
        *,
        publish: Publish,
        seeds: Callable[[], bytes] | None = None,
        now: Callable[[], datetime] | None = None,
        max_games: int = MAX_LIVE_GAMES,
        absent_after: int = ABSENT_AFTER,
        on_loaded: Callable[[int], None] | None = None,
        seat_notices: bool = False,
    ) -> None:
        """``on_loaded(n)``: ``n`` games were read back from their log (``GameCache``).
        ``seat_notices``: the store tells every process of a seat taken or left (PostgreSQL's
        ``s:`` notification), this one too: see ``own_seat_notice``."""
        self._store = store
        self._own_seat_notices: Counter[str] | None = Counter() if seat_notices else None
        """Per game, the seat notices this process's own writes will bring (counted before
        each write, so that its notice never comes first; taken back if the write fails)."""
        self.absent_after = absent_after
        """Timeouts in a row of every seat not a house bot's that end a game as abandoned."""
        self._competition = CompetitionStore(store)
        self._writer = writer
        self._publish = publish
        self._seeds = seeds or (lambda: secrets.token_bytes(32))
        self._now = now or (lambda: datetime.now(UTC))
        self.started_at = self._now()
        """Clocks do not count the time the server was down: a turn begun before this
        process started is timed from its start."""
        self.cache = GameCache(store, publish, max_games, on_loaded)
        self.held: Callable[[str], LiveGame | None] = self.cache.held
        """The game if this process holds it, without a wait: on the paths of every action,
        ``held(id) or await get(id)`` makes no coroutine for a game held here. (The cache's
        own method: a call of this one's was one more frame, several times an action.)"""
        self._listeners: list[CommitListener] = []
        self._ending_listeners: list[CommitListener] = []
        self._settler_now: Settler | None = None
        """The settler of the loop the last commit ran on (a server has one; a new loop, a
        test's, gets a new one: the appends already made keep telling the old)."""

    # The games held here (``GameCache``), as everyone asks the host for them.

    async def get(self, game_id: str) -> LiveGame:
        """The game, loaded from the log if this process does not hold it. ``NotFound``."""
        return self.cache.held(game_id) or await self.cache.get(game_id)

    async def get_many(self, game_ids: list[str]) -> dict[str, LiveGame]:
        """Games to be read, not played (``GameCache.get_many``: one trip for the cold ones,
        kept only while there is room)."""
        return await self.cache.get_many(game_ids)

    def adopt(self, game: LiveGame) -> None:
        """Keep a game just made in this process (on the event loop)."""
        self.cache.adopt(game)

    def evict(self, game_id: str) -> None:
        """Drop the copy held here (it fell behind the log); the next ``get`` reloads it."""
        self.cache.evict(game_id)

    def evict_all(self) -> None:
        """Drop every copy not in use (after missing other processes' notifications)."""
        self.cache.evict_all()

    def held_version(self, game_id: str) -> int | None:
        """The version of this process's copy of a game, if it holds one."""
        return self.cache.held_version(game_id)

    def refresh(self, game_id: str, version: int) -> None:
        """Another process says ``game_id`` is at ``version`` (``GameCache.refresh``)."""
        self.cache.refresh(game_id, version)

    @property
    def max_games(self) -> int:
        return self.cache.max_games

    def on_commit(self, listener: CommitListener) -> None:
        """Call ``listener(game, events)`` after every committed change of a game (on the
        event loop): the clock keeper and the house bots follow games this way."""
        self._listeners.append(listener)

    def on_game_over(self, listener: CommitListener) -> None:
        """Call ``listener(game, events)`` after each commit whose events end a game (on the
        event loop): the directors and the rater, which nothing else concerns. (Called at
        every commit, they were four calls of an action's to answer "not mine".)"""
        self._ending_listeners.append(listener)

    # ------------------------------------------------------------ seats

    def own_seat_notice(self, game_id: str) -> bool:
        """Whether a seat notice of ``game_id`` is this process's own (its copy has the seat
        already, and need not be read again); each of its own is so once."""
        return self._take_back_seat_notice(game_id)

    def forget_own_seat_notices(self) -> None:
        """The notices were lost (the listener reconnected, every copy is dropped)."""
        if self._own_seat_notices is not None:
            self._own_seat_notices.clear()

    async def _seat_write(
        self,
        game_id: str,
        write: Callable[..., _T],
        *args: Any,
        prepared_only: bool = False,
        **kw: Any,
    ) -> _T:
        """``write(*args, **kw, conn=...)``: a seat taken or left in the store (``write``),
        whose notice is expected as this process's own. A write that fails brings no notice;
        one cancelled may still commit, and its notice then drops the copy here (a reload,
        never a stale copy). ``prepared_only``: as ``Writer.call``'s."""
        counts = self._own_seat_notices
        if counts is not None:
            counts[game_id] += 1
        try:
            return await self.write(
                lambda conn: write(*args, **kw, conn=conn), prepared_only=prepared_only
            )
        except BaseException:
            self._take_back_seat_notice(game_id)
            raise

    async def write(
        self, work: Callable[[WriteConnection | None], _T], *, prepared_only: bool = False
    ) -> _T:
        """Run ``work(conn)``, a blocking write of the store's (a seat taken or left): on
        SQLite in the transaction of the writer's next batch (``Writer.call``: one commit, one
        sync of the disk, for the seat and the batch's actions), on PostgreSQL on a worker
        thread in a transaction of its own (``conn`` None: its writes need not wait for each
        other, and a seat's row lock taken inside a batch could deadlock with another
        process's batch). A game is made on a worker thread (its deal and set-up would hold
        up the batches on the writer's), and its write joins a batch through the store
        (``EventStore.join_batches``). ``prepared_only``: as ``Writer.call``'s."""
        if self._store.lane is None:
            return await asyncio.to_thread(work, None)
        return await asyncio.wrap_future(self._writer.call(work, prepared_only=prepared_only))

    def _take_back_seat_notice(self, game_id: str) -> bool:
        """One notice of ``game_id`` fewer expected as this process's own; whether one was."""
        counts = self._own_seat_notices
        if counts is None or not counts[game_id]:
            return False
        counts[game_id] -= 1
        if not counts[game_id]:
            del counts[game_id]
        return True

    def held_seat(self, game_id: str, token: str) -> int | None:
        """The seat a seat token opens in a game this process holds, without a wait (every
        call acting for a seat asks); ``None`` when that does not tell (the game not held
        here, or the token none of its seats' here): ``seat_for`` finds out."""
        game = self.cache.held(game_id)
        return None if game is None else game.tokens.get(_token_hash(token))

    async def seat_for(
        self, game_id: str, token: str, account_id: str | None, asked: int | None = None
    ) -> int:
        """The seat a seat token (or, given ``account_id``, an account's key) opens. An account
        holding several seats (a match's partnership) opens the one ``asked`` for, and must
        ask."""
        game = self.held(game_id) or await self.get(game_id)
        if account_id is not None:
            held = game.accounts.get(account_id)
            if held is None:
                raise PermissionDenied(
                    f"this account holds no seat of game {game_id}", game_id=game_id
                )
            if len(held) == 1:
                return held[0]
            seats = ", ".join(map(str, held))
            if asked is None:
                raise InvalidArgument(
                    f"this account holds seats {seats} of game {game_id}: say which seat "
                    f"the call is for (its seat field)",
                    reason="SEAT_REQUIRED",
                    game_id=game_id,
                    seats=seats,
                )
            if asked not in held:
                raise PermissionDenied(
                    f"this account holds seats {seats} of game {game_id}, not seat {asked}",
                    game_id=game_id,
                    seat=held[0],
                    asked=asked,
                )
            return asked
        digest = _token_hash(token)
        seat = game.tokens.get(digest)
        if seat is None:
            # Perhaps seated through another process: the database knows.
            seat = await asyncio.to_thread(self._store.seat_for_token, game_id, digest)
            if seat is None:
                raise Unauthenticated(
                    f"this token opens no seat of game {game_id}", game_id=game_id
                )
            self.evict(game_id)
        return seat

    async def take_seat(
        self, game_id: str, seat: int | None, player_name: str, token: str, request_id: str = ""
    ) -> tuple[int, LiveGame]:
        """Seat a player (``seat=None``: the lowest free seat) with ``token``; the table's
        status turns ``playing`` with its last seat, in the same transaction. A retry with
        the same ``request_id`` gets the seat the first attempt took if it brings the same
        token (``SeatTokens`` derives it from the request): nothing is revoked, and a retry
        with any other token is refused, so that nobody takes a seat over by replaying its
        request id."""
        key = SEAT_REQUEST + request_id if request_id else None
        async with Hold(self.cache, game_id) as hold:
            players = hold.game.players
            if hold.game.over and key not in hold.game.requests:
                raise PreconditionFailed(
                    f"game {game_id} is {hold.game.status}: no seat to take",
                    reason="GAME_NOT_OPEN",
                    game_id=game_id,
                    status=hold.game.status,
                )
            if seat is not None and not 0 <= seat < players:
                raise InvalidArgument(f"game {game_id} has seats 0..{players - 1}, not {seat}")
            while True:
                game = hold.game
                earlier = game.requests.get(key) if key is not None else None
                if earlier is not None:
                    if game.tokens.get(hash_token(token)) != earlier.seat:
                        raise PreconditionFailed(
                            f"request_id {request_id!r} took seat {earlier.seat} of game "
                            f"{game_id} with another token: only the first answer's token "
                            f"opens it (send a new request_id to take another seat)",
                            reason="SEAT_TAKEN",
                            game_id=game_id,
                            seat=earlier.seat,
                        )
                    logs.known(game=game_id, seat=earlier.seat)
                    return earlier.seat, game
                if seat is None:
                    free = [s for s in range(players) if s not in game.seats]
                    if not free:
                        raise PreconditionFailed(
                            f"every seat of game {game_id} is taken",
                            reason="GAME_FULL",
                            game_id=game_id,
                        )
                    chosen = free[0]
                else:
                    chosen = seat
                    if chosen in game.seats:
                        raise PreconditionFailed(
                            f"seat {chosen} of game {game_id} is taken",
                            reason="SEAT_TAKEN",
                            game_id=game_id,
                            seat=chosen,
                        )
                try:
                    taken = await self._seat_write(
                        game_id,
                        self._store.take_seat,
                        game_id,
                        chosen,
                        player_name,
                        hash_token(token),
                        playing_when_full=not game.over,
                        now=(now := self._now()),
                        request_id=key,
                        prepared_only=True,  # (EventStore.take_seat: all prepared)
                    )
                except store_errors.DuplicateRequest:
                    await hold.reload()  # the same request took its seat through another process
                    continue
                except store_errors.SeatTaken:
                    # Taken through another process: reload and look again.
                    await hold.reload()
                    if seat is not None:
                        raise PreconditionFailed(
                            f"seat {chosen} of game {game_id} is taken",
                            reason="SEAT_TAKEN",
                            game_id=game_id,
                            seat=chosen,
                        ) from None
                    continue
                break
            game.seats[chosen] = player_name
            game.tokens[hash_token(token)] = chosen
            if key is not None:
                game.requests[key] = RequestRecord(key, chosen, 0)
            game.updated_at = now
            if taken == players and game.status == "open":
                game.status = "playing"
                await self._start_clock(game)
            self._notify(game, ())
            logs.known(game=game_id, seat=chosen)
            return chosen, game

    async def leave_seat(self, game_id: str, token: str) -> tuple[int, LiveGame]:
        """Free the seat ``token`` holds in a game not yet started (its token stops working);
        the seat and the game. A seat of a game in play is resigned instead."""
        async with Hold(self.cache, game_id) as hold:
            game = hold.game
            seat = game.tokens.get(hash_token(token))
            if seat is None:
                await hold.reload()  # perhaps seated through another process
                game = hold.game
                seat = game.tokens.get(hash_token(token))
                if seat is None:
                    raise Unauthenticated(
                        f"this token opens no seat of game {game_id}", game_id=game_id
                    )
            if game.status != "open":
                raise PreconditionFailed(
                    _not_leavable(game), reason="GAME_NOT_OPEN", game_id=game_id, status=game.status
                )
            try:
                await self._seat_write(
                    game_id,
                    self._store.leave_seat,
                    game_id,
                    seat,
                    hash_token(token),
                    request_prefix=SEAT_REQUEST,
                    now=(now := self._now()),
                )
            except store_errors.GameStarted:
                await hold.reload()
                raise PreconditionFailed(
                    _not_leavable(hold.game),
                    reason="GAME_NOT_OPEN",
                    game_id=game_id,
                    status=hold.game.status,
                ) from None
            except store_errors.SeatNotHeld:
                self.evict(game_id)
                raise Unauthenticated(
                    f"this token opens no seat of game {game_id}", game_id=game_id
                ) from None
            del game.seats[seat]
            game.forget_tokens(seat)
            for key in [k for k, r in game.requests.items() if r.seat == seat and k.startswith(SEAT_REQUEST)]:
                del game.requests[key]
            game.updated_at = now
            self._notify(game, ())
            logs.known(game=game_id, seat=seat)
            return seat, game

    async def abandon(self, game_id: str, reason: str, untouched_since: datetime) -> bool:
        """End a game nobody will finish (``engine.Abandon``) if it is still as the sweeper
        found it: not over, and untouched since ``untouched_since``. Whether it was."""
        game = await self.cache.locked(game_id)
        try:
            if game.over or game.updated_at >= untouched_since:
                return False
            if (reason == "unstarted") != (game.status == "open"):
                return False
            events = engine.decide(game.state, engine.Abandon(reason))
            try:
                await self._commit(game, -1, events, "", None)
            except StaleVersion:
                return False  # another process moved it (or abandoned it) first
            log.info("game %s: abandoned (%s) at version %d", game_id, reason, game.version)
            return True
        finally:
            game.lock.release()

    async def repair_clock(self, game_id: str) -> bool:
        """Set right the clock of a full table that is not running, or not at the game's
        version (a crash between a seat taken and its clock): the seat to act gets a fresh
        turn. ``False`` if the clock was fine."""
        game = await self.cache.locked(game_id)
        try:
            clock = game.clock
            if clock is None or game.over or not game.full or game.status != "playing":
                return False
            if clock.state.turn_started_at is not None and clock.turn_version == game.version:
                return False
            log.warning("game %s: the clock was not running at version %d; restarting the turn",
                        game_id, game.version)
            await self._start_clock(game, force=True)
            return True
        finally:
            game.lock.release()

    async def _start_clock(self, game: LiveGame, force: bool = False) -> None:
        """A full table's clock starts with the seat to act."""
        clock = game.clock
        if clock is None or (clock.state.turn_started_at is not None and not force):
            return
        turn = turn_of(game.state)
        restarted = await asyncio.to_thread(
            self._competition.restart_turn, game.id, clock.turn_version, turn, game.version
        )
        if restarted:
            now = self._now()
            game.clock = GameClock(
                game.id,
                clock.control,
                ClockState(clock.state.banks, turn, now if turn is not None else None),
                game.version,
                game.version,
            )
        else:
            self.evict(game.id)

    # ------------------------------------------------------------ acting

    async def submit(
        self,
        game_id: str,
        seat: int,
        expected_version: int,
        request_id: str,
        command: Command,
        response_for: Callable[[int, GameState], bytes],
    ) -> Submitted:
        """Apply ``command`` for ``seat`` if the game is still at ``expected_version``.

        ``response_for(version, state)`` makes the answer from the version the action brought
        the game to and the state there. A retry with the same ``request_id`` gets it made
        again from the log at that version, the same answer: the request keeps its id, seat
        and version, not a copy of the answer (one was written with every action, the view it
        holds larger than the action's events, and kept in memory for every live game)."""
        async with Hold(self.cache, game_id) as hold:
            earlier = _earlier(hold.game, seat, request_id, response_for)
            if earlier is not None:
                return earlier
            if expected_version > hold.game.version:
                # The client saw a version this copy has not: another process moved the game.
                await hold.reload()
                earlier = _earlier(hold.game, seat, request_id, response_for)
                if earlier is not None:
                    return earlier
            game = hold.game
            if isinstance(command, engine.Resign) and game.status == "open":
                raise PreconditionFailed(
                    f"game {game_id} has not started ({len(game.seats)} of {game.players} seats "
                    f"taken): leave the seat (LeaveSeat) instead of resigning",
                    reason="GAME_NOT_STARTED",
                    game_id=game_id,
                )
            if expected_version != game.version:
                raise StaleVersion(
                    f"game {game_id} is at version {game.version}, not {expected_version}: "
                    f"fetch the view and decide again",
                    game_id=game_id,
                    current_version=game.version,
                    expected_version=expected_version,
                )
            try:
                events = engine.decide(game.state, command)
            except engine.IllegalAction as e:
                raise PreconditionFailed(
                    f"game {game_id} version {game.version}: {e}",
                    reason=e.reason,
                    game_id=game_id,
                    version=game.version,
                    **e.details,
                ) from None
            try:
                return await self._commit(game, seat, events, request_id, response_for)
            except _Conflict as conflict:
                # Another process wrote the game first; perhaps with this very request.
                await hold.reload()
                earlier = _earlier(hold.game, seat, request_id, response_for)
                if earlier is not None:
                    return earlier
                raise StaleVersion(
                    str(conflict), game_id=game_id, expected_version=expected_version
                ) from None

    async def time_out(self, game_id: str, turn_version: int) -> Submitted | None:
        """Apply the clock's policy if the seat to act at ``turn_version`` has run out of
        time; ``None`` if it has not, or has acted meanwhile."""
        game = await self.cache.locked(game_id)
        try:
            clock = game.clock
            if clock is None or clock.turn_version != turn_version or game.over:
                return None
            deadline = self.deadline(clock)
            if deadline is None or self._now() < deadline:
                return None
            seat = clock.state.turn_seat
            if seat is None or turn_of(game.state) != seat or seat in game.house:
                return None
            events = engine.decide(game.state, engine.TimeOut(seat, clock.control.policy))
            log.info("game %s: seat %d ran out of time (%s)", game_id, seat, clock.control.policy)
            try:
                applied = await self._commit(game, seat, events, "", None, expired=True)
            except StaleVersion:
                return None  # another process timed it out, or the seat acted there
            await self._abandon_if_absent(game)
            return applied
        finally:
            game.lock.release()

    async def _abandon_if_absent(self, game: LiveGame) -> None:
        """End a game whose every seat but the house bots' has run out of time
        ``absent_after`` times in a row: nobody is playing it, and the server would otherwise
        play it to its end for nobody (the lock is held)."""
        absence = game.absence
        players = [seat for seat in range(game.players) if seat not in game.house]
        if set(players) <= {seat for held in game.accounts.values() for seat in held}:
            # Every seat is an account's (a tournament's, a challenge's, a seek's table): each
            # answers for its own seats, and the clock plays the game to its end as it always did.
            return
        if game.over or absence is None or not absence.all_absent(players, self.absent_after):
            return
        events = engine.decide(game.state, engine.Abandon("absent"))
        try:
            await self._commit(game, -1, events, "", None)
        except StaleVersion:
            return  # moved elsewhere: whoever holds it now looks again at its next timeout
        log.info(
            "game %s: abandoned at version %d, every seat not a house bot's ran out of time "
            "%d times in a row",
            game.id,
            game.version,
            self.absent_after,
        )

    def deadline(self, clock: GameClock) -> datetime | None:
        """When the seat to act runs out of time; ``None`` while the clock is stopped."""
        started, seat = clock.state.turn_started_at, clock.state.turn_seat
        if started is None or seat is None:
            return None
        allowed = clock.control.per_move_ms + clock.state.banks[seat]
        return max(started, self.started_at) + timedelta(milliseconds=allowed)

    async def _commit(
        self,
        game: LiveGame,
        seat: int,
        events: list[Event],
        request_id: str,
        response_for: Callable[[int, GameState], bytes] | None,
        expired: bool = False,
    ) -> Submitted:
        """Append what ``seat``'s command caused (and any deal it leads to), wait for the
        commit, then make it the game's state."""
        states: list[GameState] = []
        state = game.state
        for event in events:
            state = engine.evolve(state, event)
            states.append(state)
        seeds: list[tuple[int, bytes, bytes]] = []
        if state.phase is PHASE_DEAL:
            dealt, seeds = deal_hands(state, self._seeds, game.deal_secret)
            for event in dealt:
                state = engine.evolve(state, event)
                states.append(state)
            events = events + dealt
        new_version = game.version + len(events)
        chained: list[tuple[str, bytes, bytes]] = []
        last_hash = game.last_hash
        for event in events:
            kind, payload = codec.encode_event(event)
            last_hash = chain_hash(last_hash, payload)
            chained.append((kind, payload, last_hash))
        request: tuple[str, int] | None = None
        answer = None
        if request_id and response_for is not None:
            request = (request_id, seat)
            answer = response_for(new_version, state)
        status = game.status
        if state.phase is PHASE_GAME_OVER:
            status = "finished" if state.winner is not None else "abandoned"
        clock = None
        if game.clock is not None:
            running = status == "playing" and game.full
            clock = self._clock_after(game.clock, seat, state, running, expired)
        loop = asyncio.get_running_loop()
        written = Outcome(loop)
        self._writer.submit(
            Append(
                game.id,
                game.version,
                chained,
                # (A partial, not a closure: called on the writer's thread, it makes no frame.)
                functools.partial(self._settler(loop).settle, written),
                request=request,
                status=status if status != game.status else None,
                seeds=seeds,
                clock=clock,
                # A game with fixed deals (a tournament's) is published by its director once
                # every playing of its deal is over.
                reveal_seeds=status == "finished" and game.deal_secret is None,
                at=(at := self._now()),
                account_events=account_events.game_finished(game.id, state, game.accounts)
                if status != game.status and status in ("finished", "abandoned")
                else (),
            )
        )
        try:
            error: BaseException | None = await written
        except asyncio.CancelledError:
            # The caller went away with the append in flight: see it through, so this copy
            # stays the game's truth, then go.
            error = await written
            self._after_write(game, error, events, states, last_hash, request, status, clock, at)
            raise
        told = self._after_write(game, error, events, states, last_hash, request, status, clock, at)
        return Submitted(game.version, told, False, answer)

    def _settler(self, loop: asyncio.AbstractEventLoop) -> Settler:
        """What tells this loop's appends their outcomes, a batch's at one wake-up."""
        settler = self._settler_now
        if settler is None or settler.loop is not loop:
            settler = self._settler_now = Settler(loop)
        return settler

    def _after_write(
        self,
        game: LiveGame,
        error: BaseException | None,
        events: list[Event],
        states: list[GameState],
        last_hash: bytes,
        request: tuple[str, int] | None,
        status: str,
        clock: ClockState | None,
        at: datetime,
    ) -> tuple[Event, ...]:
        """Make the written events the game's (or raise the write's refusal); the events
        told to its watchers."""
        if error is not None:
            self.evict(game.id)
            if isinstance(error, store_errors.DuplicateRequest | store_errors.VersionConflict):
                raise _Conflict(
                    f"game {game.id} moved past version {game.version} while this action was "
                    f"applied: fetch the view and decide again"
                )
            if isinstance(error, store_errors.GameNotFound):
                raise NotFound(f"no game {game.id}", game_id=game.id)
            raise error
        old_version = game.version
        game.version = old_version + len(events)
        game.state = states[-1]
        game.last_hash = last_hash
        game.events.extend(events)
        absence = game.absence
        assert absence is not None
        for event in events:
            absence = absence.after(event)
        game.absence = absence
        game.updated_at = at
        game._remember(states)
        if request is not None:
            game.requests[request[0]] = RequestRecord(request[0], request[1], game.version)
        game.status = status
        if game.clock is not None and clock is not None:
            game.clock = GameClock(game.id, game.clock.control, clock, game.version, game.version)
        told = tuple(events)
        self._notify(game, told)
        return told

    def _notify(self, game: LiveGame, events: tuple[Event, ...]) -> None:
        over = game.over
        if over:
            to_act = None
        else:
            seat = turn_of(game.state)
            to_act = frozenset(() if seat is None else (seat,))
        self._publish(game.id, to_act)
        for listener in self._listeners:
            try:
                listener(game, events)
            except Exception:  # one follower's trouble must not undo a committed action
                log.exception("game %s: a commit listener failed", game.id)
        if over and events:  # (these events ended it: nothing is committed after the end)
            for listener in self._ending_listeners:
                try:
                    listener(game, events)
                except Exception:
                    log.exception("game %s: a game-over listener failed", game.id)

    def _clock_after(
        self, clock: GameClock, seat: int, state: GameState, running: bool, expired: bool
    ) -> ClockState:
        """The clock once ``seat`` has acted: time beyond the per-move allowance comes out of
        its bank (all of it when it ran out), and the next seat's turn begins now."""
        now = self._now()
        banks = list(clock.state.banks)
        started = clock.state.turn_started_at
        if expired:
            banks[seat] = 0
        elif started is not None and clock.state.turn_seat == seat:
            used = (now - max(started, self.started_at)) / timedelta(milliseconds=1)
            over = int(used) - clock.control.per_move_ms
            if over > 0:
                banks[seat] = max(0, banks[seat] - over)
        turn = turn_of(state) if running else None
        return ClockState(tuple(banks), turn, now if turn is not None else None)


class _Conflict(StaleVersion):
    """The writer found the game moved on in the database (another process wrote it)."""


def _earlier(
    game: LiveGame,
    seat: int,
    request_id: str,
    response_for: Callable[[int, GameState], bytes],
) -> Submitted | None:
    """The answer to ``request_id`` if it was applied already, for a retry: made again from
    the log at the version it brought the game to (the state there is one of the latest, or
    the log up to it replayed). The answer holds the acting seat's view (its hand): another
    seat sending the same id is refused."""
    if not request_id:
        return None
    earlier = game.requests.get(request_id)
    if earlier is None:
        return None
    if earlier.seat != seat:
        raise InvalidArgument(
            f"request_id {request_id!r} was already used by another seat's action in game "
            f"{game.id}: send a new, unique id (a UUID) with each action"
        )
    version = earlier.result_version
    state = game.state_at(version)
    if state is None:
        state = engine.replay(game.events[:version])
    return Submitted(version, (), True, response_for(version, state))


def _not_leavable(game: LiveGame) -> str:
    if game.status == "playing":
        return f"game {game.id} has started: resign (SubmitAction with Action.resign) instead"
    return f"game {game.id} is {game.status}: there is no seat to leave"
