"""Wakes the streams watching a game when its version moves.

Nothing polls. Within one process, a committed append wakes that game's watchers at once
(``publish``); appends made by another server process on the same PostgreSQL database arrive
as notifications (``boneyard.server.ops.pg_listener``), which publish the same way. A waiting
watcher costs a wait on its game's one ``asyncio.Event`` and nothing else.

A follower of *every* game (the live lobby, ``boneyard.server.games.lobby``) holds a
``Changes``: the ids of the games published since it last looked, at most ``MAX_CHANGED`` of
them (beyond that it is told to look at everything again), and an event that wakes it. A
follower of *some* games (an account's turns, ``boneyard.server.competition.turns``) holds a
``ChosenChanges``, woken only by the games it chose: a publish costs it nothing otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Protocol

__all__ = ["MAX_CHANGED", "Changes", "ChosenChanges", "Feed", "Publish"]

MAX_CHANGED = 10_000
"""Game ids a follower of every game keeps between two looks; past it, it looks at all."""


class Publish(Protocol):
    """``Feed.publish``, as the games' holders are given it."""

    def __call__(self, game_id: str, to_act: frozenset[int] | None = None) -> None: ...


class Changes:
    """The games published since their follower last took them (``Feed.follow``)."""

    __slots__ = ("_everything", "_ids", "_woken")

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._everything = False
        self._woken = asyncio.Event()

    def add(self, game_id: str) -> None:
        if len(self._ids) >= MAX_CHANGED:
            self._everything = True
        else:
            self._ids.add(game_id)
        self._woken.set()

    def everything(self) -> None:
        """Every game may have changed (notifications were missed, or too many came)."""
        self._everything = True
        self._woken.set()

    async def take(self) -> tuple[set[str], bool]:
        """Wait for a change; the ids changed since the last take, and whether everything
        may have changed (then the ids are not all of them)."""
        await self._woken.wait()
        self._woken.clear()
        ids, everything = self._ids, self._everything
        self._ids, self._everything = set(), False
        return ids, everything


class ChosenChanges(Changes):
    """The changes of the games its follower chose (``choose``), from ``Feed.follow_chosen``."""

    __slots__ = ("_chosen", "_feed")

    def __init__(self, feed: Feed) -> None:
        super().__init__()
        self._feed = feed
        self._chosen: dict[str, frozenset[int] | None] = {}
        """The games chosen, each with the seats whose turns concern the follower (``None``:
        every change)."""

    def choose(self, game_id: str, seats: Iterable[int] | None = None) -> None:
        """Be told of ``game_id``'s changes from now on: with ``seats``, only those that may
        concern them (a publish that says which seats are to act names none of them: no
        wake); again, to change the seats."""
        if game_id not in self._chosen:
            self._feed._chosen.setdefault(game_id, set()).add(self)
        self._chosen[game_id] = None if seats is None else frozenset(seats)

    def add_if_concerned(self, game_id: str, to_act: frozenset[int] | None) -> None:
        seats = self._chosen.get(game_id)
        if to_act is None or seats is None or not to_act.isdisjoint(seats):
            self.add(game_id)

    def drop(self, game_id: str) -> None:
        """Be told of ``game_id`` no more."""
        self._chosen.pop(game_id, None)
        followers = self._feed._chosen.get(game_id)
        if followers is not None:
            followers.discard(self)
            if not followers:
                del self._feed._chosen[game_id]

    def close(self) -> None:
        for game_id in list(self._chosen):
            self.drop(game_id)


class _Moved:
    """The watchers of one game waiting for its next move: one event for all of them."""

    __slots__ = ("event", "waiting")

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.waiting = 0


class Feed:
    def __init__(self) -> None:
        self._moved: dict[str, _Moved] = {}
        """The watchers waiting, by game: a publish sets the game's one event (and forgets
        it: the next wait makes a new one) instead of an event per watcher."""
        self._followers: set[Changes] = set()
        self._chosen: dict[str, set[ChosenChanges]] = {}
        """The followers of some games, by game."""

    def publish(self, game_id: str, to_act: frozenset[int] | None = None) -> None:
        """Wake every watcher of ``game_id`` in this process (call on the event loop), every
        follower of all games, and the followers that chose it; of those that chose it for
        some seats, only the ones holding a seat of ``to_act`` when the publisher says who is
        to act now (a game not over: an account's turn stream has nothing to tell of a move
        that leaves another account to act, and every action would otherwise wake the
        streams of all the table's accounts)."""
        moved = self._moved.pop(game_id, None)
        if moved is not None:
            moved.event.set()
        for follower in self._followers:
            follower.add(game_id)
        for chooser in self._chosen.get(game_id, ()):
            chooser.add_if_concerned(game_id, to_act)

    def publish_all(self) -> None:
        """Wake every watcher (after missing notifications, say): each looks again."""
        moved, self._moved = self._moved, {}
        for waiting in moved.values():
            waiting.event.set()
        for follower in self._followers:
            follower.everything()
        for choosers in self._chosen.values():
            for chooser in choosers:
                chooser.everything()

    @contextmanager
    def follow_chosen(self) -> Iterator[ChosenChanges]:
        """Follow the games the block chooses (``ChosenChanges.choose``) while it runs."""
        changes = ChosenChanges(self)
        try:
            yield changes
        finally:
            changes.close()

    @contextmanager
    def follow(self) -> Iterator[Changes]:
        """Follow every game while the block runs: the ``Changes`` published meanwhile."""
        changes = Changes()
        self._followers.add(changes)
        try:
            yield changes
        finally:
            self._followers.discard(changes)

    async def wait(self, game_id: str, version: int, timeout: float | None = None) -> None:
        """Return once ``game_id`` may have moved past ``version`` (or after ``timeout``)."""
        moved = self._moved.get(game_id)
        if moved is None:
            moved = self._moved[game_id] = _Moved()
        moved.waiting += 1
        try:
            if timeout is None:
                await moved.event.wait()
            else:
                await asyncio.wait_for(moved.event.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            moved.waiting -= 1
            if not moved.waiting and self._moved.get(game_id) is moved:
                del self._moved[game_id]
