"""Outcomes handed from another thread to the event loop, many at one wake-up.

The writer's thread tells each append of a batch its outcome, one after another. Told through
``call_soon_threadsafe`` one by one, the event loop was woken once an append: a byte written to
its self-pipe and read back, and the loop taking the GIL from the writer in the middle of its
batch, about eight times a batch. A ``Settler`` keeps the outcomes that arrive and wakes the
loop once for all of them that arrive before it runs.

``Outcome`` is what an append's caller awaits: the outcome is kept even when the caller's wait
is cancelled, so that the caller can see its append through without a second future
(``asyncio.shield``'s, an action's).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Generator
from typing import Any

__all__ = ["Outcome", "Settler"]


class Outcome:
    """The outcome of work done on another thread, told on the loop (``Settler.settle``),
    awaited there (``await outcome``). A wait cancelled does not lose it: await it again."""

    __slots__ = ("_future", "_result", "_told")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._future: asyncio.Future[Any] = loop.create_future()
        self._told = False
        self._result: Any = None

    def tell(self, result: Any) -> None:
        """(On the loop.) The outcome is ``result``."""
        self._told = True
        self._result = result
        if not self._future.done():
            self._future.set_result(result)

    def __await__(self) -> Generator[Any, None, Any]:
        if self._told:
            return self._result
        if self._future.done():  # a wait before this one was cancelled: wait anew
            self._future = self._future.get_loop().create_future()
        return (yield from self._future.__await__())


class Settler:
    """Tells outcomes (``Outcome.tell``) on ``loop`` from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        """The loop the outcomes are told on."""
        self._lock = threading.Lock()
        self._waiting: list[tuple[Outcome, Any]] = []
        self._woken = False
        """Whether the loop has been asked to run ``_settle`` for what is waiting."""

    def settle(self, outcome: Outcome, result: Any) -> None:
        """Tell ``outcome`` the result ``result`` on the loop."""
        with self._lock:
            self._waiting.append((outcome, result))
            if self._woken:
                return
            self._woken = True
        self.loop.call_soon_threadsafe(self._settle)

    def _settle(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
            self._woken = False
        for outcome, result in waiting:
            outcome.tell(result)
