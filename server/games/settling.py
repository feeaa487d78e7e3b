"""Outcomes handed from another thread to futures of the event loop, many at one wake-up.

The writer's thread tells each append of a batch its outcome, one after another. Told through
``call_soon_threadsafe`` one by one, the event loop was woken once an append: a byte written to
its self-pipe and read back, and the loop taking the GIL from the writer in the middle of its
batch, about eight times a batch. A ``Settler`` keeps the outcomes that arrive and wakes the
loop once for all of them that arrive before it runs.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

__all__ = ["Settler"]


class Settler:
    """Sets results of futures of ``loop`` from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._waiting: list[tuple[asyncio.Future[Any], Any]] = []
        self._woken = False
        """Whether the loop has been asked to run ``_settle`` for what is waiting."""

    def settle(self, future: asyncio.Future[Any], result: Any) -> None:
        """Give ``future`` the result ``result`` on the loop (unless it is done by then)."""
        with self._lock:
            self._waiting.append((future, result))
            if self._woken:
                return
            self._woken = True
        self._loop.call_soon_threadsafe(self._settle)

    def _settle(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
            self._woken = False
        for future, result in waiting:
            if not future.done():
                future.set_result(result)
