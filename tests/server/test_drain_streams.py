"""A stream through the drain (``Drain.stream``): its handler's messages as they come, in the
caller's context; ended by the drain with ``UNAVAILABLE`` (``STREAM_ENDED``) whether it waits
for a message or is busy between two; a client that goes away is not mistaken for the
drain."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator

import pytest

from boneyard.server.errors import Unavailable
from boneyard.server.ops.drain import Drain, Grace
from tests.server.loop_helpers import on_a_loop

_who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


class _Handler:
    """A stream's handler: yields what is put in ``queue`` (``None`` ends it)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self.seen: list[str] = []

    async def messages(self) -> AsyncIterator[str]:
        try:
            while True:
                message = await self.queue.get()
                if message is None:
                    return
                self.seen.append(_who.get())
                yield message
        finally:
            self.closed = True


async def _read(drain: Drain, handler: _Handler, into: list[str]) -> None:
    _who.set("the caller")  # as the pipeline sets the caller's credentials
    async for message in drain.stream("/W", handler.messages()):
        into.append(message)


@on_a_loop
async def test_messages_pass_in_order_in_the_callers_context_and_the_stream_ends_with_them() -> None:
    drain, handler, got = Drain(), _Handler(), []
    reading = asyncio.ensure_future(_read(drain, handler, got))
    for message in ("a", "b", "c", None):
        handler.queue.put_nowait(message)
    await asyncio.wait_for(reading, 1)
    assert got == ["a", "b", "c"]
    assert handler.seen == ["the caller"] * 3
    assert handler.closed and not drain.streams()


@on_a_loop
async def test_a_stream_waiting_for_a_message_is_ended_by_the_drain() -> None:
    drain, handler, got = Drain(), _Handler(), []
    reading = asyncio.ensure_future(_read(drain, handler, got))
    handler.queue.put_nowait("a")
    await asyncio.sleep(0.01)
    assert drain.streams() == {"/W": 1}
    assert await drain.end_streams(Grace(5))
    with pytest.raises(Unavailable, match="resume from the last version"):
        await reading
    assert got == ["a"] and handler.closed and not drain.streams()


@on_a_loop
async def test_a_stream_busy_between_two_messages_ends_before_the_next() -> None:
    drain, handler = Drain(), _Handler()
    sending = asyncio.Event()
    resume = asyncio.Event()

    async def slow_reader() -> None:
        async for _ in drain.stream("/W", handler.messages()):
            sending.set()
            await resume.wait()  # the door sending the message

    reading = asyncio.ensure_future(slow_reader())
    handler.queue.put_nowait("a")
    handler.queue.put_nowait("b")
    await asyncio.wait_for(sending.wait(), 1)
    ending = asyncio.ensure_future(drain.end_streams(Grace(5)))
    await asyncio.sleep(0.01)
    resume.set()
    with pytest.raises(Unavailable):
        await reading
    assert await ending
    assert handler.closed


@on_a_loop
async def test_a_client_going_away_cancels_the_stream_and_is_no_drain() -> None:
    drain, handler, got = Drain(), _Handler(), []
    reading = asyncio.ensure_future(_read(drain, handler, got))
    await asyncio.sleep(0.01)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    assert handler.closed and not drain.streams()


@on_a_loop
async def test_a_stream_opened_once_the_streams_are_ending_ends_at_once() -> None:
    drain, handler, got = Drain(), _Handler(), []
    assert await drain.end_streams(Grace(5))
    handler.queue.put_nowait("a")
    with pytest.raises(Unavailable):
        await _read(drain, handler, got)
    assert got == []


@on_a_loop
async def test_what_the_handler_raises_ends_the_stream_with_it() -> None:
    drain = Drain()

    async def failing() -> AsyncIterator[str]:
        yield "a"
        raise ValueError("the handler's own error")

    got = []
    with pytest.raises(ValueError, match="own error"):
        async for message in drain.stream("/W", failing()):
            got.append(message)
    assert got == ["a"] and not drain.streams()
