"""A stream through the pipeline and its drain (``Pipeline.stream``, ``Drain.open_stream``): its
handler's messages as they come, in the caller's context; ended by the drain with
``UNAVAILABLE`` (``STREAM_ENDED``) whether it waits for a message or is busy between two; a
client that goes away is not mistaken for the drain."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from boneyard.server.ops.drain import STREAM_ENDED, Drain, Grace
from boneyard.server.quotas import Quotas
from boneyard.server.transport.pipeline import Pipeline, Refused, credentials
from tests.server.loop_helpers import on_a_loop

_TOKEN = "the caller's token"


class _Context:
    """What a door tells the pipeline of a call: its metadata and peer."""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {_TOKEN}"),)

    def peer(self) -> str:
        return "ipv4:127.0.0.1:5555"


class _Handler:
    """A stream's handler: yields what is put in ``queue`` (``None`` ends it)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self.seen: list[str | None] = []

    async def messages(self, request: Any, context: Any) -> AsyncIterator[str]:
        try:
            while True:
                message = await self.queue.get()
                if message is None:
                    return
                self.seen.append(credentials())
                yield message
        finally:
            self.closed = True


def _stream(drain: Drain, handler: Any) -> AsyncIterator[Any]:
    call = Pipeline(drain, Quotas()).stream("/W", "grpc", handler)
    return call(object(), _Context())


async def _read(drain: Drain, handler: _Handler, into: list[str]) -> None:
    async for message in _stream(drain, handler.messages):
        into.append(message)


def _ended_by_the_drain(refused: Refused) -> bool:
    return (
        refused.refusal.code is grpc.StatusCode.UNAVAILABLE
        and refused.refusal.message == STREAM_ENDED
    )


@on_a_loop
async def test_messages_pass_in_order_in_the_callers_context_and_the_stream_ends_with_them() -> (
    None
):
    drain, handler, got = Drain(), _Handler(), []
    reading = asyncio.ensure_future(_read(drain, handler, got))
    for message in ("a", "b", "c", None):
        handler.queue.put_nowait(message)
    await asyncio.wait_for(reading, 1)
    assert got == ["a", "b", "c"]
    assert handler.seen == [_TOKEN] * 3
    assert handler.closed and not drain.streams()


@on_a_loop
async def test_a_stream_waiting_for_a_message_is_ended_by_the_drain() -> None:
    drain, handler, got = Drain(), _Handler(), []
    reading = asyncio.ensure_future(_read(drain, handler, got))
    handler.queue.put_nowait("a")
    await asyncio.sleep(0.01)
    assert drain.streams() == {"/W": 1}
    assert await drain.end_streams(Grace(5))
    with pytest.raises(Refused) as refused:
        await reading
    assert _ended_by_the_drain(refused.value)
    assert got == ["a"] and handler.closed and not drain.streams()


@on_a_loop
async def test_a_stream_busy_between_two_messages_ends_before_the_next() -> None:
    drain, handler = Drain(), _Handler()
    sending = asyncio.Event()
    resume = asyncio.Event()

    async def slow_reader() -> None:
        async for _ in _stream(drain, handler.messages):
            sending.set()
            await resume.wait()  # the door sending the message

    reading = asyncio.ensure_future(slow_reader())
    handler.queue.put_nowait("a")
    handler.queue.put_nowait("b")
    await asyncio.wait_for(sending.wait(), 1)
    ending = asyncio.ensure_future(drain.end_streams(Grace(5)))
    await asyncio.sleep(0.01)
    resume.set()
    with pytest.raises(Refused) as refused:
        await reading
    assert _ended_by_the_drain(refused.value)
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
    with pytest.raises(Refused) as refused:
        await _read(drain, handler, got)
    assert _ended_by_the_drain(refused.value)
    assert got == [] and not drain.streams()


@on_a_loop
async def test_what_the_handler_raises_ends_the_stream_with_its_status() -> None:
    drain = Drain()

    async def failing(request: Any, context: Any) -> AsyncIterator[str]:
        yield "a"
        raise ValueError("the handler's own error")

    got = []
    with pytest.raises(Refused) as refused:
        async for message in _stream(drain, failing):
            got.append(message)
    assert refused.value.refusal.code is grpc.StatusCode.INTERNAL
    assert got == ["a"] and not drain.streams()


@on_a_loop
async def test_a_refusal_is_answered_through_the_doors_own_hook() -> None:
    drain = Drain()
    answered: list[grpc.StatusCode] = []

    async def refuse(refusal: Any, context: Any) -> None:
        answered.append(refusal.code)
        raise RuntimeError("the door's answer")

    assert await drain.end_streams(Grace(5))
    call = Pipeline(drain, Quotas()).stream("/W", "grpc", _Handler().messages, refuse=refuse)
    with pytest.raises(RuntimeError, match="the door's answer"):
        async for _ in call(object(), _Context()):
            pass
    assert answered == [grpc.StatusCode.UNAVAILABLE]
