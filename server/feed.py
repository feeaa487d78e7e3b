"""Wakes the streams watching a game when its version moves.

Within one process, an append wakes that game's watchers at once (``publish``). Appends made
by another server process on the same database are seen by one poller per process: while
anybody watches, it asks the store for the versions of every watched game in one query each
``poll_interval`` and wakes the watchers of a game whose version moved. Idle watchers cost
nothing but their share of that one query.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

__all__ = ["Feed"]

log = logging.getLogger(__name__)

VersionsOf = Callable[[Iterable[str]], dict[str, int]]


class _Waiter:
    __slots__ = ("event", "version")

    def __init__(self, version: int) -> None:
        self.event = asyncio.Event()
        self.version = version


class Feed:
    def __init__(self, versions_of: VersionsOf | None = None, poll_interval: float = 0.2) -> None:
        """``versions_of(game_ids)`` reads the games' versions from the database (a blocking
        call, run in a worker thread); without it only this process's appends wake anyone."""
        self.poll_interval = poll_interval
        self._versions_of = versions_of
        self._waiters: dict[str, set[_Waiter]] = {}
        self._poller: asyncio.Task[None] | None = None

    def publish(self, game_id: str) -> None:
        """Wake every watcher of ``game_id`` in this process (call on the event loop)."""
        for waiter in self._waiters.get(game_id, ()):
            waiter.event.set()

    async def wait(self, game_id: str, version: int, timeout: float | None = None) -> None:
        """Return once ``game_id`` may have moved past ``version`` (or after ``timeout``)."""
        waiter = _Waiter(version)
        self._waiters.setdefault(game_id, set()).add(waiter)
        if self._versions_of is not None and (self._poller is None or self._poller.done()):
            self._poller = asyncio.create_task(self._poll())
        try:
            if timeout is None:
                await waiter.event.wait()
            else:
                await asyncio.wait_for(waiter.event.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            waiters = self._waiters.get(game_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[game_id]

    async def _poll(self) -> None:
        assert self._versions_of is not None
        while self._waiters:
            await asyncio.sleep(self.poll_interval)
            games = list(self._waiters)
            if not games:
                break
            try:
                versions = await asyncio.to_thread(self._versions_of, games)
            except Exception:  # the database may be briefly away; the next round retries
                log.warning("polling game versions failed", exc_info=True)
                continue
            for game_id, current in versions.items():
                for waiter in self._waiters.get(game_id, ()):
                    if current > waiter.version:
                        waiter.event.set()
