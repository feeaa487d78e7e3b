"""Outcomes handed from the writer's thread to futures of the event loop (``Settler``): every
one reaches its future, those that arrive together at one wake-up of the loop, and a future
its caller gave up on is left as it is."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from boneyard.server.games.settling import Settler
from tests.server.loop_helpers import on_a_loop


@on_a_loop
async def test_outcomes_from_another_thread_reach_their_futures_at_one_wake_up() -> None:
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
    futures = [loop.create_future() for _ in range(5)]
    told = threading.Event()

    def writer() -> None:
        for number, future in enumerate(futures):
            settler.settle(future, number)
        told.set()

    # The loop is held (as it is while busy) until the thread has told them all.
    threading.Thread(target=writer).start()
    assert told.wait(5)
    assert await asyncio.wait_for(asyncio.gather(*futures), 1) == [0, 1, 2, 3, 4]
    assert wake_ups == 1
    late = loop.create_future()
    await asyncio.to_thread(settler.settle, late, "again")
    assert await asyncio.wait_for(late, 1) == "again"
    assert wake_ups == 2


@on_a_loop
async def test_a_future_given_up_on_is_left_as_it_is() -> None:
    loop = asyncio.get_running_loop()
    settler = Settler(loop)
    gone, waiting = loop.create_future(), loop.create_future()
    gone.cancel()
    await asyncio.to_thread(settler.settle, gone, None)
    await asyncio.to_thread(settler.settle, waiting, "ok")
    assert await asyncio.wait_for(waiting, 1) == "ok"
    assert gone.cancelled()
