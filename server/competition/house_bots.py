"""House bots: seats the server plays itself, so that a person can play bots without running
any (``CreateGameRequest.house_bots``).

A house bot acts exactly like any seat: when a committed change of a game (``GameHost.
on_commit``) leaves a house seat to act in a game being played (every seat taken), the game is
queued; a worker task takes it, makes the seat's engine view, has the strategy decide in a
worker process (``boneyard.server.competition.bot_workers``: never on the event loop), and submits the
command through ``GameHost.submit`` with the version it decided at, like a client's
``SubmitAction``: the same validation, the same log, the same clock. The request id is
derived from the seat and that version, so a second attempt at one decision (another process,
a retry) is answered, never applied twice. If someone moved first (a resignation, a clock
running out, another process's house bot) the version check refuses the action and the bot
looks at the game again.

Queue and pool are bounded: a game is queued at most once however often it changes, and each
of the ``workers`` tasks has at most one decision in the pool at a time, so the pool's own
queue never grows; at most one decision per game is in flight.

Nothing is kept but what the database has: which seats are the house's and their strategy
(table ``house_bots``). So after a restart, and after the PostgreSQL listener reconnects (and
may have missed changes), the games in play with house bots are looked at again: a house bot
whose turn it was acts. With several processes on one PostgreSQL database, the process that
committed a change acts on it; a process that has played a game and hears that another
process moved it looks again after ``takeover_after`` seconds if the game has not moved since,
so a house bot goes on when the process that should act died. Two processes may then decide
the same turn: the version check (and the shared request id) lets one action in.

A house bot's seed is derived from the game and the seat (``house_seed``), so its choices are
a function of its view, as a client bot's are.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Coroutine
from typing import Any

from boneyard import engine
from boneyard.engine import Event, GameState
from boneyard.server.competition.bot_workers import DEFAULT_WORKERS, BotWorkers, BrokenProcessPool
from boneyard.server.errors import NotFound, PreconditionFailed, StaleVersion
from boneyard.server.games.host import GameHost
from boneyard.server.games.live import LiveGame, turn_of
from boneyard.server.store.repository import EventStore

__all__ = ["HOUSE_REQUEST", "TAKEOVER_AFTER", "HouseBots", "house_seed"]

log = logging.getLogger(__name__)

HOUSE_REQUEST = "\x1ehouse:"
"""The prefix of a house bot's request ids (a control character, which no client's id may
hold: no client can use up the id of a house bot's action)."""
TAKEOVER_AFTER = 5.0
"""Seconds a process waits for the process that moved a game to have its house bot act."""
_BROKEN_RETRIES = 2
"""Decisions tried again after the worker died making them (a view that kills its worker
each time must not stop the other games)."""


def house_seed(game_id: str, seat: int) -> int:
    """The seed of the house bot of ``seat`` in ``game_id`` (a signed 64-bit number)."""
    digest = hashlib.sha256(f"house bot:{game_id}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def seat_to_act(game: LiveGame) -> int | None:
    """The house seat to act in ``game``, if it is being played and it is a house seat's
    turn."""
    if not game.house or game.status != "playing" or game.over:
        return None
    seat = turn_of(game.state)
    return seat if seat in game.house else None


def _no_response(version: int, state: GameState) -> bytes:
    return b""  # nobody reads a house bot's answer: the request row is there for its id


class HouseBots:
    def __init__(
        self,
        host: GameHost,
        store: EventStore,
        workers: int = DEFAULT_WORKERS,
        *,
        takeover_after: float = TAKEOVER_AFTER,
    ) -> None:
        self._host = host
        self._store = store
        self.workers = BotWorkers(workers)
        self.takeover_after = takeover_after
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()
        self._acting: set[str] = set()
        self._again: set[str] = set()
        """Games that changed while their house bot was deciding: looked at once it is done."""
        self._followed: set[str] = set()
        """Games with house bots this process has played and that are not over."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._timers: set[asyncio.TimerHandle] = set()
        self.decisions = 0
        """Commands the house bots of this process had committed."""
        self.late = 0
        """Decisions that came too late: someone moved first, or another process committed
        this very decision (its request id) first."""
        host.on_commit(self._committed)

    # ------------------------------------------------------------ what to look at

    def _committed(self, game: LiveGame, events: tuple[Event, ...]) -> None:
        """``GameHost.on_commit`` (a seat taken counts: the last one starts the game)."""
        if game.house:  # (``follow``'s first test, here: most games have no house seat)
            self.follow(game)

    def follow(self, game: LiveGame) -> None:
        """Follow a game as it stands now (one just made here, or just changed)."""
        if not game.house:
            return
        if game.over:
            self._followed.discard(game.id)
            return
        self._followed.add(game.id)
        if seat_to_act(game) is not None:
            self.look(game.id)

    def look(self, game_id: str) -> None:
        """Have the house bots look at ``game_id`` (on the event loop)."""
        if game_id in self._acting:
            self._again.add(game_id)
        elif game_id not in self._queued:
            self._queued.add(game_id)
            self._queue.put_nowait(game_id)

    def changed_elsewhere(self, game_id: str, version: int, held: int | None) -> None:
        """Another process moved ``game_id`` to ``version`` (this process held it at ``held``):
        if this process has played the game, look again in ``takeover_after`` seconds unless
        it has moved on by then."""
        if game_id not in self._followed or (held is not None and held >= version):
            return
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle | None = None

        def fire() -> None:
            if handle is not None:
                self._timers.discard(handle)
            self._spawn(self._take_over(game_id, version))

        handle = loop.call_later(self.takeover_after, fire)
        self._timers.add(handle)

    async def _take_over(self, game_id: str, version: int) -> None:
        game = await self._host.get(game_id)
        if game.version == version and seat_to_act(game) is not None:
            log.info("game %s: no house bot acted at %d elsewhere; acting here", game_id, version)
            self.look(game_id)

    def rescan(self) -> None:
        """Look at every game in play with house bots (after missing notifications)."""
        self._spawn(self._scan())

    async def _scan(self) -> None:
        while True:
            try:
                games = await asyncio.to_thread(self._store.house_games_in_play)
                break
            except Exception:
                log.exception("reading the games with house bots failed; trying again")
                await asyncio.sleep(1.0)
        for game_id in games:
            self.look(game_id)

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------ acting

    async def run(self) -> None:
        """Serve the queue with one task per worker process, after looking at the games in
        play (a restart's)."""
        serving = [asyncio.create_task(self._serve()) for _ in range(self.workers.workers)]
        self._tasks.update(serving)  # stop() ends them
        try:
            await self._scan()
            await asyncio.gather(*serving)
        finally:
            for task in serving:
                task.cancel()
            await asyncio.gather(*serving, return_exceptions=True)

    async def _serve(self) -> None:
        while True:
            game_id = await self._queue.get()
            self._queued.discard(game_id)
            self._acting.add(game_id)
            try:
                await self._act(game_id)
            except asyncio.CancelledError:
                raise
            except NotFound:
                self._followed.discard(game_id)
            except Exception:  # one game's trouble must not stop the others
                log.exception("game %s: the house bot could not act", game_id)
            finally:
                self._acting.discard(game_id)
            if game_id in self._again:
                self._again.discard(game_id)
                self.look(game_id)

    async def _act(self, game_id: str) -> None:
        game = await self._host.get(game_id)
        seat = seat_to_act(game)
        if seat is None:
            if game.over:
                self._followed.discard(game_id)
            return
        self._followed.add(game_id)
        version, strategy = game.version, game.house[seat]
        view = engine.view(game.state, seat)
        for attempt in range(_BROKEN_RETRIES + 1):
            try:
                command = await self.workers.choose(strategy, house_seed(game_id, seat), view)
                break
            except BrokenProcessPool:
                log.error(
                    "game %s version %d: the worker deciding for the %s bot of seat %d died%s",
                    game_id, version, strategy, seat,
                    "; trying again" if attempt < _BROKEN_RETRIES else "; giving up this turn",
                )
        else:
            return
        try:
            submitted = await self._host.submit(
                game_id, seat, version, f"{HOUSE_REQUEST}{seat}:{version}", command, _no_response
            )
        except (StaleVersion, PreconditionFailed) as refused:
            now = await self._host.get(game_id)
            if now.version != version:
                self.late += 1
                # Somebody moved first: a resignation, a clock, another process's house bot.
                log.debug("game %s: the house bot's action at %d came late", game_id, version)
                self.look(game_id)
            else:
                log.error(
                    "game %s version %d: the engine refused the %s bot of seat %d: %s",
                    game_id, version, strategy, seat, refused,
                )
            return
        if submitted.replayed:  # another process made the same decision and committed it
            self.late += 1
        else:
            self.decisions += 1

    # ------------------------------------------------------------ stopping

    async def stop(self) -> None:
        """Stop looking, let the decisions in flight end, stop the worker processes."""
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.to_thread(self.workers.shutdown)

    def close(self) -> None:
        """Stop the worker processes (when ``stop`` was not awaited)."""
        self.workers.shutdown()
