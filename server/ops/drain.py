"""Graceful shutdown: what the server does between SIGTERM and its exit.

``Drain`` is the one object the pipeline of both doors (``transport.pipeline``) asks about each
call:

- once the drain has begun, a new call is refused ``UNAVAILABLE`` (``REFUSED``), so a client
  goes to another server; the health service stays open, to say NOT_SERVING;
- a unary call in flight is let finish (an action commits before it is answered), and is
  counted so that the shutdown knows when none is left (``calls_finished``); one still running
  when the grace runs out is cancelled by the drain (``cut_calls``) and answered ``UNAVAILABLE``
  (``CUT``): never cancelled under grpc's feet, which logs a traceback;
- a stream is ended by the server (``end_streams``) with ``UNAVAILABLE`` (``STREAM_ENDED``): a
  client reconnects elsewhere and resumes from the last version it got.

``Grace`` is the time the whole drain may take (``--shutdown-grace``); a second signal cuts it
short (``hurry``).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from boneyard.server.errors import Unavailable

__all__ = ["CUT", "REFUSED", "STREAM_ENDED", "Drain", "Grace", "OpenStream"]

REFUSED = "the server is shutting down; reconnect to another server"
STREAM_ENDED = (
    "the server is shutting down; reconnect to another server and resume from the last "
    "version received"
)
CUT = (
    "the server is shutting down and could not finish this call within its grace; retry it "
    "on another server (an action retried with the same request_id is applied at most once)"
)
"""All three begin alike, so a client can tell a shutdown from any other UNAVAILABLE."""


class Grace:
    """The time left to drain: ``seconds`` from now, or none once ``hurry`` was called (a
    second signal)."""

    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds
        self._hurried = asyncio.Event()

    def hurry(self) -> None:
        self._hurried.set()

    @property
    def hurried(self) -> bool:
        return self._hurried.is_set()

    def remaining(self) -> float:
        return 0.0 if self.hurried else max(self._end - time.monotonic(), 0.0)

    async def wait(self, event: asyncio.Event) -> bool:
        """Wait for ``event`` while there is time left; whether it came."""
        if event.is_set() or not self.remaining():
            return event.is_set()
        waiters = [asyncio.ensure_future(event.wait()), asyncio.ensure_future(self._hurried.wait())]
        try:
            await asyncio.wait(
                waiters, timeout=self.remaining(), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
        return event.is_set()

    async def within(self, work: Awaitable[Any]) -> bool:
        """Await ``work`` while there is time left (it goes on after that); whether it ended."""
        task = asyncio.ensure_future(work)
        ended = asyncio.Event()
        task.add_done_callback(lambda _: ended.set())
        if not await self.wait(ended):
            return False
        await task  # raises what it raised
        return True


class OpenStream:
    """A stream open through the drain (``Drain.open_stream``). The pipeline marks it
    ``waiting`` while the stream waits for its handler's next message: the only time the drain
    cancels it (a stream busy sending is ended before its next message instead)."""

    __slots__ = ("ended", "method", "task", "waiting")

    def __init__(self, method: str, task: asyncio.Task[Any]) -> None:
        self.method = method
        self.task = task
        self.waiting = False
        self.ended = False
        """The drain cancelled its wait to end it."""


class Drain:
    def __init__(self) -> None:
        self.draining = False
        self._calls: dict[asyncio.Task[Any], str] = {}
        """The unary calls in flight, by the task running each, with its method."""
        self._cut: set[asyncio.Task[Any]] = set()
        self._open: set[OpenStream] = set()
        self._settled = asyncio.Event()
        """Set whenever a call or stream ends while ``_until`` waits."""
        self._awaited = 0
        """How many ``_until`` wait now."""
        self.ending = False
        """The streams are to end (``end_streams``): each asks ``end`` before its next
        message."""

    # ------------------------------------------------------------ the doors

    def refuse(self) -> None:
        """``Unavailable`` once the drain has begun: a new call goes elsewhere."""
        if self.draining:
            raise Unavailable(REFUSED)

    # A unary call in flight: the pipeline awaits the handler itself (a coroutine of the
    # drain's around it cost one more at every call), between ``enter`` and ``leave`` (whatever
    # happened), and asks ``cut_off`` when the call is cancelled.

    def enter(self, method: str) -> asyncio.Task[Any]:
        """The calling task begins a unary call of ``method`` (counted in flight)."""
        task = asyncio.current_task()
        assert task is not None
        self._calls[task] = method
        return task

    def cut_off(self, task: asyncio.Task[Any]) -> None:
        """``task``'s call was cancelled: ``Unavailable`` (``CUT``) if the drain cut it off;
        otherwise the client went away, and the caller lets the cancellation go on."""
        if task in self._cut:
            task.uncancel()
            raise Unavailable(CUT) from None

    def leave(self, task: asyncio.Task[Any]) -> None:
        """``task``'s call has ended."""
        del self._calls[task]
        # Only a shutdown cuts calls off and waits for them (the event set at every call was
        # a call of its own).
        if self._cut:
            self._cut.discard(task)
        if self._awaited:
            self._settled.set()

    # A stream: likewise, the pipeline awaits the handler's messages itself, in the stream's
    # own task and generator (one of the drain's around the handler's cost one more step at
    # every message of every watcher), between ``open_stream`` and ``close_stream``. Before
    # each message it asks ``end`` if the drain is ``ending``; it marks the stream ``waiting``
    # while it awaits the message, and asks ``cancelled`` if that wait is cancelled.

    def open_stream(self, method: str) -> OpenStream:
        """The calling task begins a stream of ``method`` (counted open)."""
        task = asyncio.current_task()
        assert task is not None
        stream = OpenStream(method, task)
        self._open.add(stream)
        return stream

    def end(self, stream: OpenStream) -> None:
        """Raise ``Unavailable`` (``STREAM_ENDED``) if the streams are to end (a cancel the
        drain sent while the stream was not waiting is taken back: the stream ends with its
        own error)."""
        if not self.ending:
            return
        if stream.ended:
            stream.ended = False
            stream.task.uncancel()
        raise Unavailable(STREAM_ENDED)

    def cancelled(self, stream: OpenStream) -> None:
        """``stream``'s wait was cancelled: ``Unavailable`` (``STREAM_ENDED``) if the drain
        ended it; otherwise the client went away, and the caller lets the cancellation go
        on."""
        if stream.ended:
            stream.ended = False
            stream.task.uncancel()
            raise Unavailable(STREAM_ENDED) from None

    def close_stream(self, stream: OpenStream) -> None:
        """``stream`` has ended."""
        self._open.discard(stream)
        if self._awaited:
            self._settled.set()

    # ------------------------------------------------------------ the shutdown

    def begin(self) -> None:
        """Refuse new calls from now on."""
        self.draining = True

    def calls(self) -> Counter[str]:
        """The unary calls in flight, by method."""
        return Counter(self._calls.values())

    def streams(self) -> Counter[str]:
        """The open streams, by method."""
        return Counter(stream.method for stream in self._open)

    async def calls_finished(self, grace: Grace) -> bool:
        """Wait, within ``grace``, until no unary call is in flight; whether none is."""
        return await self._until(lambda: not self._calls, grace)

    def cut_calls(self) -> None:
        """Cancel the unary calls in flight: each is answered ``UNAVAILABLE`` (``CUT``)."""
        for task in self._calls:
            if task not in self._cut:
                self._cut.add(task)
                task.cancel()

    async def end_streams(self, grace: Grace) -> bool:
        """End every stream (``UNAVAILABLE``, ``STREAM_ENDED``) and wait, within ``grace``,
        until they have; whether they all have."""
        self.ending = True
        for stream in self._open:
            if stream.waiting and not stream.ended:
                stream.ended = True
                stream.task.cancel()  # its wait for the handler's next message
        return await self._until(lambda: not self._open, grace)

    async def _until(self, done: Callable[[], bool], grace: Grace) -> bool:
        self._awaited += 1
        try:
            while not done():
                self._settled.clear()
                if not await grace.wait(self._settled):
                    return done()
            return True
        finally:
            self._awaited -= 1
