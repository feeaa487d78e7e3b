"""Wakes the streams watching a game when its version moves.

Nothing polls. Within one process, a committed append wakes that game's watchers at once
(``publish``); appends made by another server process on the same PostgreSQL database arrive
as notifications (``boneyard.server.ops.pg_listener``), which publish the same way. A waiting
watcher costs an ``asyncio.Event`` and nothing else.
"""

from __future__ import annotations

import asyncio

__all__ = ["Feed"]


class Feed:
    def __init__(self) -> None:
        self._waiters: dict[str, set[asyncio.Event]] = {}

    def publish(self, game_id: str) -> None:
        """Wake every watcher of ``game_id`` in this process (call on the event loop)."""
        for waiter in self._waiters.get(game_id, ()):
            waiter.set()

    def publish_all(self) -> None:
        """Wake every watcher (after missing notifications, say): each looks again."""
        for waiters in self._waiters.values():
            for waiter in waiters:
                waiter.set()

    async def wait(self, game_id: str, version: int, timeout: float | None = None) -> None:
        """Return once ``game_id`` may have moved past ``version`` (or after ``timeout``)."""
        waiter = asyncio.Event()
        self._waiters.setdefault(game_id, set()).add(waiter)
        try:
            if timeout is None:
                await waiter.wait()
            else:
                await asyncio.wait_for(waiter.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            waiters = self._waiters.get(game_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[game_id]
