"""Waking an account's streams: WatchSeats and WatchTurns when a game reserves a seat for the
account, WatchAccount also when anything else is written for it (``account_events``).

A seat reserved here says which (``reserved``: the game and the account's seats in it), so
the streams following the account take it from their wake without reading the database; a
tournament makes a game every few milliseconds, and each stream reading the account's seats
again for each of them was the most frequent read of a running tournament. What happened in
another process (the PostgreSQL notifications), a revoked key, and a lost connection to the
database say only "look again" (``changed``): the streams then read what they follow.

Events written for an account that reserve no seat (a game's end, a rating, a challenge) wake
only the streams that tell events (``follow(..., events=True)``): a bot's turn stream is not
woken three times a game for one seat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

__all__ = ["AccountWake", "SeatWatch"]


class AccountWake:
    """One stream's wake-up: set when something it follows happens to its account, keeping
    what (the seats reserved here since it last looked; whether to read everything again)."""

    __slots__ = ("_event", "events", "look_again", "reserved")

    def __init__(self, events: bool) -> None:
        self._event = asyncio.Event()
        self.events = events
        """Whether account events that reserve no seat wake it too (WatchAccount)."""
        self.look_again = True
        """Read what the stream follows from the database (at first, and after any change
        that did not say what changed)."""
        self.reserved: list[tuple[str, int]] = []
        """``(game id, seat)`` reserved here for the account since the stream last looked."""

    def take(self) -> tuple[bool, list[tuple[str, int]]]:
        """What woke the stream since it last looked (``look_again``, the seats reserved
        here), cleared: what happens after this wakes it again."""
        self._event.clear()
        look_again, reserved = self.look_again, self.reserved
        self.look_again = False
        self.reserved = []
        return look_again, reserved

    async def seats(self, read: Callable[[], list[tuple[str, int]]]) -> list[tuple[str, int]]:
        """``take``, for a stream that follows the account's seats: those reserved here since
        it last looked, or all that ``read`` finds (on a worker thread) when it must look
        again."""
        look_again, reserved = self.take()
        return await asyncio.to_thread(read) if look_again else reserved

    async def wait(self) -> None:
        await self._event.wait()

    def _set(self) -> None:
        self._event.set()


class SeatWatch:
    """The accounts' streams of this process, woken by what is written for their accounts:
    the changes made here say so (``reserved``, ``written``: from any thread), the other
    processes' through the PostgreSQL notifications (``changed``, ``events_written``)."""

    def __init__(
        self,
        announce: Callable[[str], None] | None = None,
        announce_written: Callable[[str], None] | None = None,
    ) -> None:
        """``announce(account_id)`` tells the other processes a seat was reserved for the
        account, ``announce_written(account_id)`` that only events were written for it
        (from worker threads; ``None`` with one process)."""
        self._announce = announce
        self._announce_written = announce_written
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakes: dict[str, set[AccountWake]] = {}

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def follow(self, account_id: str, *, events: bool = False) -> AccountWake:
        """A stream's wake for the account: set by the seats reserved for it and by any
        change that asks to look again; with ``events``, by every event written for it."""
        wake = AccountWake(events)
        self._wakes.setdefault(account_id, set()).add(wake)
        return wake

    def unfollow(self, account_id: str, wake: AccountWake) -> None:
        wakes = self._wakes.get(account_id)
        if wakes is not None:
            wakes.discard(wake)
            if not wakes:
                del self._wakes[account_id]

    # --- on the event loop --------------------------------------------------------

    def changed(self, account_id: str) -> None:
        """Something of the account's changed that is not known here (another process
        reserved a seat for it, its key was revoked): its streams read again."""
        for wake in self._wakes.get(account_id, ()):
            wake.look_again = True
            wake._set()

    def changed_all(self) -> None:
        """Every account's streams read again (the notifications were lost a while)."""
        for account_id in list(self._wakes):
            self.changed(account_id)

    def events_written(self, account_id: str) -> None:
        """Events (and no seat) were written for the account, here or in another process."""
        for wake in self._wakes.get(account_id, ()):
            if wake.events:
                wake._set()

    def _reserved_here(self, game_id: str, seats: Mapping[str, Sequence[int]]) -> None:
        for account_id, held in seats.items():
            for wake in self._wakes.get(account_id, ()):
                wake.reserved.extend((game_id, seat) for seat in held)
                wake._set()

    # --- from any thread ------------------------------------------------------------

    def reserved(self, game_id: str, seats: Mapping[str, Sequence[int]]) -> None:
        """A game made here reserved these seats (account id -> its seats in the game)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._reserved_here, game_id, dict(seats))
        if self._announce is not None:
            for account_id in seats:
                self._announce(account_id)

    def written(self, account_ids: Sequence[str]) -> None:
        """Events that reserve no seat were written here for these accounts (a game's end,
        a rating, a challenge)."""
        if self._loop is not None:
            for account_id in account_ids:
                self._loop.call_soon_threadsafe(self.events_written, account_id)
        if self._announce_written is not None:
            for account_id in account_ids:
                self._announce_written(account_id)
