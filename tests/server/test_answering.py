"""``answering``: the turns told and the answers applied on one PlayTurns stream (issue 35), on
an event loop, without a server: how the stream ends, what it waits for, what it bounds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator

import pytest
from loop_helpers import on_a_loop

from boneyard.server.competition.turns import answering


async def _told(*messages: str, then: asyncio.Event | None = None) -> AsyncGenerator[str, None]:
    for message in messages:
        yield message
    await (then or asyncio.Event()).wait()  # a turn stream does not end by itself


async def _answers(queue: asyncio.Queue[str | None]) -> AsyncIterator[str]:
    while (answer := await queue.get()) is not None:
        yield answer


@on_a_loop
async def test_the_turns_told_and_what_the_answers_say_go_out_as_they_come() -> None:
    answers: asyncio.Queue[str | None] = asyncio.Queue()

    async def answer(request: str) -> str | None:
        return None if request == "fine" else f"refused {request}"

    stream = answering(_told("turn 1", "turn 2"), _answers(answers), answer)
    assert [await anext(stream), await anext(stream)] == ["turn 1", "turn 2"]
    for request in ("fine", "bad", None):
        answers.put_nowait(request)
    assert [m async for m in stream] == ["refused bad"]  # and it ends with the answers


@on_a_loop
async def test_an_answer_being_applied_when_the_answers_end_is_seen_through() -> None:
    answers: asyncio.Queue[str | None] = asyncio.Queue()
    release = asyncio.Event()

    async def answer(request: str) -> str | None:
        await release.wait()
        return f"done {request}"

    stream = answering(_told(), _answers(answers), answer)
    answers.put_nowait("slow")
    answers.put_nowait(None)
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    release.set()
    assert await waiting == "done slow"
    with pytest.raises(StopAsyncIteration):
        await anext(stream)


@on_a_loop
async def test_closing_the_stream_waits_for_the_answers_in_flight_without_cancelling_them() -> None:
    answers: asyncio.Queue[str | None] = asyncio.Queue()
    release = asyncio.Event()
    finished: list[str] = []

    async def answer(request: str) -> str | None:
        await release.wait()
        finished.append(request)
        return None

    stream = answering(_told("turn"), _answers(answers), answer)
    assert await anext(stream) == "turn"
    answers.put_nowait("committing")
    await asyncio.sleep(0.01)
    closing = asyncio.ensure_future(stream.aclose())
    await asyncio.sleep(0.01)
    assert not closing.done()  # the answer is not cancelled: the close waits for it
    release.set()
    await closing
    assert finished == ["committing"]


@on_a_loop
async def test_an_error_of_either_side_ends_the_stream_with_it() -> None:
    async def refusing(request: str) -> str | None:
        raise PermissionError(request)

    answers: asyncio.Queue[str | None] = asyncio.Queue()
    answers.put_nowait("revoked")
    with pytest.raises(PermissionError):
        [m async for m in answering(_told(), _answers(answers), refusing)]

    async def broken_turns() -> AsyncGenerator[str, None]:
        yield "turn"
        raise LookupError("the feed")

    async def nothing(request: str) -> str | None:
        return None

    stream = answering(broken_turns(), _answers(asyncio.Queue()), nothing)
    assert await anext(stream) == "turn"
    with pytest.raises(LookupError):
        await anext(stream)


@on_a_loop
async def test_a_side_cancelled_from_outside_ends_the_stream() -> None:
    async def cancelled_answers() -> AsyncIterator[str]:
        raise asyncio.CancelledError  # as a request stream torn down under it
        yield "never"

    async def nothing(request: str) -> str | None:
        return None

    with pytest.raises(asyncio.CancelledError):
        [m async for m in answering(_told(), cancelled_answers(), nothing)]


@on_a_loop
async def test_a_client_that_does_not_read_stops_the_answers_being_read() -> None:
    answers: asyncio.Queue[str | None] = asyncio.Queue()
    applied: list[str] = []

    async def answer(request: str) -> str | None:
        applied.append(request)
        return f"refused {request}"

    stream = answering(_told(), _answers(answers), answer, in_flight=2)
    for i in range(5):
        answers.put_nowait(str(i))
    reading = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    # Two refusals hold the two places (one handed to the reader, one waiting to be sent):
    # the third answer is not applied, the rest not even read.
    assert await reading == "refused 0"
    assert applied == ["0", "1"]
    assert answers.qsize() == 2
    assert await anext(stream) == "refused 1"  # the first one's place freed: one more goes
    await asyncio.sleep(0.05)
    assert applied == ["0", "1", "2"]
    await stream.aclose()
