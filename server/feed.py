"""Wakes the streams watching a game when its version moves.

Within one process an append wakes the watchers at once. Appends made by another server
process on the same database are seen by polling the game's version, so every watcher sees
every move whichever process took it.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

__all__ = ["Feed"]


class Feed:
    def __init__(self, poll_interval: float = 0.2) -> None:
        self.poll_interval = poll_interval
        self._waiters: dict[str, set[asyncio.Event]] = defaultdict(set)

    def publish(self, game_id: str) -> None:
        """Wake every watcher of ``game_id`` in this process (call on the event loop)."""
        for waiter in list(self._waiters.get(game_id, ())):
            waiter.set()

    async def wait(self, game_id: str) -> None:
        """Return when this process publishes for ``game_id``, or after the poll interval
        (so that the caller re-reads the database for appends from other processes)."""
        waiter = asyncio.Event()
        self._waiters[game_id].add(waiter)
        try:
            await asyncio.wait_for(waiter.wait(), timeout=self.poll_interval)
        except TimeoutError:
            pass
        finally:
            waiters = self._waiters.get(game_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[game_id]
