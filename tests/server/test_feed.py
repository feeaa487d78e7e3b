"""Who a game's publish wakes (``Feed``): its watchers, every follower of all games, and the
followers that chose it, of those that chose it for some seats only the ones a move
concerns."""

from __future__ import annotations

import asyncio

from boneyard.server.games.feed import Feed
from tests.server.loop_helpers import on_a_loop


def _woken(changes: object) -> bool:
    return changes._woken.is_set()  # type: ignore[attr-defined]


@on_a_loop
async def test_a_move_leaving_another_seat_to_act_wakes_no_follower_of_other_seats() -> None:
    feed = Feed()
    with feed.follow_chosen() as changes:
        changes.choose("g", (1, 3))
        feed.publish("g", frozenset({2}))
        assert not _woken(changes)


@on_a_loop
async def test_a_move_leaving_one_of_its_seats_to_act_wakes_the_follower() -> None:
    feed = Feed()
    with feed.follow_chosen() as changes:
        changes.choose("g", (1, 3))
        feed.publish("g", frozenset({3}))
        assert await asyncio.wait_for(changes.take(), 1) == ({"g"}, False)


@on_a_loop
async def test_a_publish_that_does_not_say_who_acts_wakes_every_follower() -> None:
    """A game's end, another process's move, an evicted copy: everyone looks."""
    feed = Feed()
    with feed.follow_chosen() as changes:
        changes.choose("g", (1,))
        feed.publish("g")
        assert _woken(changes)


@on_a_loop
async def test_a_game_chosen_without_seats_wakes_at_every_move() -> None:
    feed = Feed()
    with feed.follow_chosen() as changes:
        changes.choose("g")
        feed.publish("g", frozenset())
        assert _woken(changes)


@on_a_loop
async def test_choosing_again_changes_the_seats() -> None:
    feed = Feed()
    with feed.follow_chosen() as changes:
        changes.choose("g", (0,))
        changes.choose("g", (0, 2))
        feed.publish("g", frozenset({2}))
        assert _woken(changes)


@on_a_loop
async def test_the_seat_filter_does_not_hold_back_a_games_watchers_or_the_lobby() -> None:
    feed = Feed()
    with feed.follow() as everything:
        waiting = asyncio.ensure_future(feed.wait("g", 5))
        await asyncio.sleep(0)
        feed.publish("g", frozenset({2}))
        await asyncio.wait_for(waiting, 1)
        assert await asyncio.wait_for(everything.take(), 1) == ({"g"}, False)


@on_a_loop
async def test_a_dropped_game_wakes_nobody() -> None:
    feed = Feed()
    with feed.follow_chosen() as changes:
        changes.choose("g", (1,))
        changes.drop("g")
        feed.publish("g")
        assert not _woken(changes)


@on_a_loop
async def test_a_publish_wakes_every_watcher_of_its_game_and_none_of_another() -> None:
    feed = Feed()
    watchers = [asyncio.ensure_future(feed.wait("g", 5)) for _ in range(3)]
    elsewhere = asyncio.ensure_future(feed.wait("h", 5))
    await asyncio.sleep(0)
    feed.publish("g")
    await asyncio.wait_for(asyncio.gather(*watchers), 1)
    await asyncio.sleep(0)
    assert not elsewhere.done()
    elsewhere.cancel()


@on_a_loop
async def test_a_wait_begun_after_a_publish_waits_for_the_next() -> None:
    feed = Feed()
    first = asyncio.ensure_future(feed.wait("g", 5))
    await asyncio.sleep(0)
    feed.publish("g")
    await asyncio.wait_for(first, 1)
    second = asyncio.ensure_future(feed.wait("g", 6))
    await asyncio.sleep(0.01)
    assert not second.done()
    feed.publish("g")
    await asyncio.wait_for(second, 1)


@on_a_loop
async def test_a_watcher_that_goes_away_leaves_the_others_waiting_and_nothing_behind() -> None:
    feed = Feed()
    leaving = asyncio.ensure_future(feed.wait("g", 5))
    staying = asyncio.ensure_future(feed.wait("g", 5))
    await asyncio.sleep(0)
    leaving.cancel()
    await asyncio.sleep(0)
    assert not staying.done()
    feed.publish("g")
    await asyncio.wait_for(staying, 1)
    assert not feed._moved  # type: ignore[attr-defined]
    timed_out = asyncio.ensure_future(feed.wait("g", 5, timeout=0.01))
    await asyncio.wait_for(timed_out, 1)
    assert not feed._moved  # type: ignore[attr-defined]


@on_a_loop
async def test_publish_all_wakes_the_watchers_of_every_game() -> None:
    feed = Feed()
    watchers = [asyncio.ensure_future(feed.wait(g, 1)) for g in ("g", "h")]
    await asyncio.sleep(0)
    feed.publish_all()
    await asyncio.wait_for(asyncio.gather(*watchers), 1)
