"""Waking an account's streams (``SeatWatch``): what wakes which stream, and what it is told."""

from __future__ import annotations

import asyncio

from boneyard.server.competition.seat_watch import SeatWatch
from tests.server.loop_helpers import on_a_loop


async def _settle() -> None:
    for _ in range(3):  # the thread-safe calls run on the loop's next turns
        await asyncio.sleep(0)


@on_a_loop
async def test_a_stream_reads_everything_at_first() -> None:
    watch = SeatWatch()
    watch.attach(asyncio.get_running_loop())
    assert watch.follow("a").take() == (True, [])


@on_a_loop
async def test_a_seat_reserved_here_is_told_with_its_game_and_no_reading() -> None:
    watch = SeatWatch()
    watch.attach(asyncio.get_running_loop())
    wake = watch.follow("a")
    wake.take()
    watch.reserved("g1", {"a": (0, 2), "b": (1,)})
    await _settle()
    await asyncio.wait_for(wake.wait(), 1)
    assert wake.take() == (False, [("g1", 0), ("g1", 2)])


@on_a_loop
async def test_a_seat_reserved_elsewhere_makes_its_streams_read_again() -> None:
    watch = SeatWatch()
    wake = watch.follow("a")
    wake.take()
    watch.changed("a")
    await asyncio.wait_for(wake.wait(), 1)
    assert wake.take() == (True, [])


@on_a_loop
async def test_events_without_a_seat_wake_only_the_streams_that_tell_events() -> None:
    watch = SeatWatch()
    watch.attach(asyncio.get_running_loop())
    turns, account = watch.follow("a"), watch.follow("a", events=True)
    turns.take(), account.take()
    watch.written(["a"])
    await _settle()
    await asyncio.wait_for(account.wait(), 1)
    assert account.take() == (False, [])
    assert not turns._event.is_set()


@on_a_loop
async def test_a_seat_reserved_wakes_the_event_streams_too() -> None:
    watch = SeatWatch()
    watch.attach(asyncio.get_running_loop())
    account = watch.follow("a", events=True)
    account.take()
    watch.reserved("g1", {"a": (3,)})
    await _settle()
    await asyncio.wait_for(account.wait(), 1)


@on_a_loop
async def test_what_is_taken_is_told_once() -> None:
    watch = SeatWatch()
    watch.attach(asyncio.get_running_loop())
    wake = watch.follow("a")
    wake.take()
    watch.reserved("g1", {"a": (1,)})
    await _settle()
    assert wake.take() == (False, [("g1", 1)])
    assert wake.take() == (False, [])


@on_a_loop
async def test_another_accounts_seat_wakes_nobody_here() -> None:
    watch = SeatWatch()
    watch.attach(asyncio.get_running_loop())
    wake = watch.follow("a")
    wake.take()
    watch.reserved("g1", {"b": (0,)})
    watch.written(["b"])
    await _settle()
    assert wake.take() == (False, [])


def test_the_other_processes_are_told_which_account() -> None:
    said: list[str] = []
    watch = SeatWatch(lambda a: said.append(f"a:{a}"), lambda a: said.append(f"e:{a}"))
    watch.reserved("g1", {"a": (0,), "b": (1,)})
    watch.written(["c"])
    assert said == ["a:a", "a:b", "e:c"]


@on_a_loop
async def test_a_stream_reads_its_seats_only_when_it_must_look_again() -> None:
    watch = SeatWatch()
    watch.attach(asyncio.get_running_loop())
    wake = watch.follow("a")
    reads: list[str] = []

    def read() -> list[tuple[str, int]]:
        reads.append("read")
        return [("g0", 1)]

    assert await wake.seats(read) == [("g0", 1)]  # at first
    watch.reserved("g1", {"a": (2,)})
    await _settle()
    assert await wake.seats(read) == [("g1", 2)]  # told by the wake
    assert reads == ["read"]
