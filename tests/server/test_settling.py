"""Outcomes handed from the writer's thread to the event loop (``Settler``, ``Outcome``):
every one reaches its waiter, those that arrive together at one wake-up of the loop, and a
wait cancelled loses nothing: the outcome is there for the next wait."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from boneyard.server.games.settling import Outcome, Settler
from tests.server.loop_helpers import on_a_loop


@on_a_loop
async def test_outcomes_from_another_thread_reach_their_waiters_at_one_wake_up() -> None:
    loop = asyncio.get_running_loop()
    wake_ups = 0
    real = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal wake_ups
        if getattr(callback, "__self__", None) is settler:
            wake_ups += 1
        return real(callback, *args, **kwargs)

    loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
    settler = Settler(loop)
    outcomes = [Outcome(loop) for _ in range(5)]
    told = threading.Event()

    def writer() -> None:
        for number, outcome in enumerate(outcomes):
            settler.settle(outcome, number)
        told.set()

    async def wait(outcome: Outcome) -> Any:
        return await outcome

    # The loop is held (as it is while busy) until the thread has told them all.
    threading.Thread(target=writer).start()
    assert told.wait(5)
    assert await asyncio.wait_for(asyncio.gather(*map(wait, outcomes)), 1) == [0, 1, 2, 3, 4]
    assert wake_ups == 1
    late = Outcome(loop)
    await asyncio.to_thread(settler.settle, late, "again")
    assert await asyncio.wait_for(wait(late), 1) == "again"
    assert wake_ups == 2


@on_a_loop
async def test_an_outcome_told_before_its_wait_is_there_at_once() -> None:
    loop = asyncio.get_running_loop()
    outcome = Outcome(loop)
    outcome.tell("done")
    assert await outcome == "done"
    assert await outcome == "done"


@on_a_loop
async def test_a_wait_cancelled_before_the_outcome_gets_it_on_the_next_wait() -> None:
    loop = asyncio.get_running_loop()
    settler = Settler(loop)
    outcome = Outcome(loop)
    started = asyncio.Event()

    async def caller() -> Any:
        try:
            started.set()
            return await outcome
        except asyncio.CancelledError:
            # (as GameHost._commit does: see the write through, then go)
            return ("cancelled", await outcome)

    task = asyncio.ensure_future(caller())
    await started.wait()
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.sleep(0)
    await asyncio.to_thread(settler.settle, outcome, "written")
    assert await asyncio.wait_for(task, 1) == ("cancelled", "written")


@on_a_loop
async def test_an_outcome_told_between_the_cancel_and_the_next_wait_is_kept() -> None:
    loop = asyncio.get_running_loop()
    outcome = Outcome(loop)
    waiting = asyncio.ensure_future(asyncio.wait_for(outcome, None))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    waiting.cancel()
    outcome.tell("written")  # before the cancelled waiter runs again
    try:
        await waiting
    except asyncio.CancelledError:
        pass
    assert await outcome == "written"
