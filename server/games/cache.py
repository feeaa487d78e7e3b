"""The games this process holds in memory: loaded once from their log, kept as the authority
here, at most ``max_games`` of them (the least recently used beyond it are dropped, unless an
action of theirs is in flight, and loaded again when asked for).

The database stays the final word between processes: a copy that another process moved past
(its notification, ``refresh``) or that the writer found behind is dropped (``evict``), and
whoever holds it sees it ``evicted`` and gets the game again. ``Hold`` is a game with its lock
held for a block (one action at a time per game).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Self

from boneyard.server.errors import NotFound
from boneyard.server.games.feed import Publish
from boneyard.server.games.live import LiveGame, live_game
from boneyard.server.store.repository import EventStore

__all__ = ["MAX_LIVE_GAMES", "GameCache", "Hold"]

MAX_LIVE_GAMES = 2000
"""Games kept in memory by default (each holds its decoded log)."""


class GameCache:
    """The games of this process, by id (``publish(game_id)``: wake a game's watchers)."""

    def __init__(
        self,
        store: EventStore,
        publish: Publish,
        max_games: int = MAX_LIVE_GAMES,
        on_loaded: Callable[[int], None] | None = None,
    ) -> None:
        """``on_loaded(n)``: ``n`` games were read back from their log (a metric)."""
        self._store = store
        self._publish = publish
        self._on_loaded = on_loaded
        self.max_games = max_games
        self._games: OrderedDict[str, LiveGame] = OrderedDict()
        self._loading: dict[str, asyncio.Future[LiveGame]] = {}
        self._filling: set[asyncio.Task[None]] = set()
        self._behind: set[str] = set()
        """Games another process moved while they were being loaded here."""

    def held(self, game_id: str) -> LiveGame | None:
        """The game if this process holds it (counted as used), without a wait."""
        game = self._games.get(game_id)
        if game is not None:
            self._games.move_to_end(game_id)
        return game

    async def get(self, game_id: str) -> LiveGame:
        """The game, loaded from the log if this process does not hold it. ``NotFound``."""
        game = self.held(game_id)
        if game is not None:
            return game
        loading = self._loading.get(game_id) or self._load([game_id], room_only=False)[game_id]
        return await asyncio.shield(loading)

    async def get_many(self, game_ids: list[str]) -> dict[str, LiveGame]:
        """Games to be read, not played (a listing): those held here, and the others loaded
        from their logs in one trip to the database. A game loaded this way is kept only
        while there is room: a listing never pushes out a game being played. A missing game
        is left out."""
        found: dict[str, LiveGame] = {}
        loading: dict[str, asyncio.Future[LiveGame]] = {}
        cold: list[str] = []
        for game_id in dict.fromkeys(game_ids):
            game = self._games.get(game_id)
            if game is not None:
                found[game_id] = game
            elif game_id in self._loading:
                loading[game_id] = self._loading[game_id]
            else:
                cold.append(game_id)
        if cold:
            loading.update(self._load(cold, room_only=True))
        for game_id, future in loading.items():
            with contextlib.suppress(NotFound):
                found[game_id] = await asyncio.shield(future)
        return found

    def _load(self, game_ids: list[str], room_only: bool) -> dict[str, asyncio.Future[LiveGame]]:
        """Start loading games (one trip to the database); their futures, in ``_loading``
        until they are done. The load is a task of its own: a caller cancelled (a stream's
        deadline) must not cancel it under the others waiting for the same game, who would
        get CancelledError and leave their call unanswered."""
        loop = asyncio.get_running_loop()
        futures = {game_id: loop.create_future() for game_id in game_ids}
        self._loading.update(futures)
        task = loop.create_task(self._fill(futures, room_only))
        self._filling.add(task)
        task.add_done_callback(self._filling.discard)
        return futures

    async def _fill(self, futures: dict[str, asyncio.Future[LiveGame]], room_only: bool) -> None:
        try:
            # Folded in the worker thread too: a page of long logs would hold up the loop.
            loaded = await asyncio.to_thread(self._read, list(futures))
        except asyncio.CancelledError:
            for future in futures.values():
                future.cancel()  # the server is stopping
            raise
        except Exception as error:  # noqa: BLE001 - handed to every caller waiting
            for future in futures.values():
                future.set_exception(error)
                future.exception()  # retrieved, even if nobody waits any more
            return
        finally:
            for game_id in futures:
                del self._loading[game_id]
        if self._on_loaded is not None and loaded:
            self._on_loaded(len(loaded))
        for game_id, future in futures.items():
            game = loaded.get(game_id)
            if game is None:
                future.set_exception(NotFound(f"no game {game_id}", game_id=game_id))
                future.exception()
                continue
            if game_id in self._behind or (room_only and len(self._games) >= self.max_games):
                # Another process moved the game while it loaded (this copy may miss that),
                # or a listing found no room: the copy is not kept, and whoever locks it sees
                # it evicted and gets the game again.
                self._behind.discard(game_id)
                game.evicted = True
            else:
                self._games[game_id] = game
                self._trim()
            future.set_result(game)

    def _read(self, game_ids: list[str]) -> dict[str, LiveGame]:
        return {game_id: live_game(s) for game_id, s in self._store.snapshots(game_ids).items()}

    def adopt(self, game: LiveGame) -> None:
        """Keep a game just made in this process (on the event loop); a copy already
        loaded stays."""
        if game.id not in self._games and game.id not in self._loading:
            self._games[game.id] = game
            self._trim()

    def evict(self, game_id: str) -> None:
        """Drop the cached copy (it fell behind the log); the next ``get`` reloads it. A copy
        being loaded meanwhile may have been read before the change: it is not kept."""
        if game_id in self._loading:
            self._behind.add(game_id)
        game = self._games.pop(game_id, None)
        if game is not None:
            game.evicted = True
            self._publish(game_id)  # its watchers hold the old copy: they get the game again

    def evict_all(self) -> None:
        """Drop every copy not in use (after missing other processes' notifications)."""
        for game_id, game in list(self._games.items()):
            if not game.lock.locked():
                self.evict(game_id)

    def _trim(self) -> None:
        while len(self._games) > self.max_games:
            for game_id, game in self._games.items():
                if not game.lock.locked():
                    self.evict(game_id)
                    break
            else:
                return

    def held_version(self, game_id: str) -> int | None:
        """The version of this process's copy of a game, if it holds one."""
        game = self._games.get(game_id)
        return game.version if game is not None else None

    def refresh(self, game_id: str, version: int) -> None:
        """Another process says ``game_id`` is at ``version``: drop a copy that is behind,
        and wake the game's watchers (they reload it)."""
        if game_id in self._loading:
            self._behind.add(game_id)
        game = self._games.get(game_id)
        if game is not None and game.version >= version:
            return  # our own append, or an older notification
        if game is not None and not game.lock.locked():
            self.evict(game_id)
        self._publish(game_id)

    async def locked(self, game_id: str) -> LiveGame:
        """The game with its lock held (the caller releases it)."""
        while True:
            game = self.held(game_id) or await self.get(game_id)
            await game.lock.acquire()
            if not game.evicted:
                return game
            game.lock.release()


class Hold:
    """A game with its lock held for a block; ``reload`` drops the copy and takes the lock
    of a fresh one (the lock is released once, whatever happens). ``game``: the copy held
    (a plain attribute, not a property: an action reads it several times)."""

    __slots__ = ("_cache", "_game_id", "_locked", "game")
    game: LiveGame

    def __init__(self, cache: GameCache, game_id: str) -> None:
        self._cache = cache
        self._game_id = game_id
        self._locked = False
        """Whether ``game``'s lock is held by this block (not while ``reload`` waits)."""

    async def __aenter__(self) -> Self:
        self.game = await self._cache.locked(self._game_id)
        self._locked = True
        return self

    async def reload(self) -> None:
        self._cache.evict(self._game_id)
        self._locked = False
        self.game.lock.release()
        self.game = await self._cache.locked(self._game_id)
        self._locked = True

    async def __aexit__(self, *exc: object) -> None:
        if self._locked:
            self._locked = False
            self.game.lock.release()
