"""Seeking: accounts ask for a kind of table (rules and clock); as soon as enough different
accounts wait for the same kind, a game is made with a seat reserved for each.

A seek counts only while its stream is there: every ``HEARTBEAT`` seconds the process says so
for all its waiting seeks in one statement (``heartbeat``), and a seek not seen for
``ABSENT_AFTER`` seconds is passed over (the server holding its stream was killed before it
could cancel it); a stream that ends cancels its seek, and a new seek of the same account and
kind cancels its unseen ones.

Nothing polls: a waiting stream sleeps until the seeks of its kind change (``changed``),
which the lobby itself says when it adds, cancels or seats seeks in this process, and the
PostgreSQL notifications say for the other processes (``announce``).

Forming a table is optimistic, so several server processes may share one database: the
game is created in the same transaction that marks its seeks seated, and that transaction
fails (and is retried with whoever still waits) if any of them was seated or cancelled
meanwhile. No account is ever seated twice at one table.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from boneyard import engine
from boneyard.server.games.app import GameApp, check_time_control, rules_for
from boneyard.server.store.competition import (
    Account,
    CompetitionStore,
    Seek,
    SeekGone,
    TimeControl,
)

__all__ = ["Lobby", "key_digest", "table_key"]

log = logging.getLogger(__name__)

_shuffle = secrets.SystemRandom().shuffle

HEARTBEAT = 0.5
"""Seconds between a waiting seek's signs of life."""
ABSENT_AFTER = 2.0
"""Seconds without a sign of life after which a seek is passed over."""


def table_key(rules: engine.Ruleset, time_control: TimeControl | None) -> str:
    """What seekers must agree on to meet: the complete ruleset and the clock."""
    return json.dumps(
        {
            "preset": rules.name,
            "rules": rules.options(),
            "clock": time_control.as_json() if time_control else None,
        },
        sort_keys=True,
    )


def key_digest(key: str) -> str:
    """A table key short enough for a notification."""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class Lobby:
    def __init__(self, app: GameApp, announce: Callable[[str], None] | None = None) -> None:
        """``announce(digest)`` tells the other processes that the seeks of a kind changed
        (called from worker threads; ``None`` with one process)."""
        self._app = app
        self._competition: CompetitionStore = app.competition
        self._lock = threading.Lock()
        self._announce = announce
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: dict[str, set[str]] = {}
        """Table key digest -> the seeks of this process waiting for that kind."""
        self._wakes: dict[str, asyncio.Event] = {}
        """Seek id -> its stream's wake-up."""

    # ------------------------------------------------------------ the streams

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def follow(self, seek: Seek) -> asyncio.Event:
        """A wake-up for the stream of ``seek``, set whenever seeks of its kind change."""
        wake = asyncio.Event()
        self._wakes[seek.id] = wake
        self._waiting.setdefault(key_digest(seek.table_key), set()).add(seek.id)
        return wake

    def waiting_here(self) -> int:
        """The seeks whose streams wait in this process."""
        return len(self._wakes)

    def unfollow(self, seek: Seek) -> None:
        self._wakes.pop(seek.id, None)
        digest = key_digest(seek.table_key)
        ids = self._waiting.get(digest)
        if ids is not None:
            ids.discard(seek.id)
            if not ids:
                del self._waiting[digest]

    def changed(self, digest: str) -> None:
        """The seeks of one kind changed (on the event loop): wake their streams here."""
        for seek_id in self._waiting.get(digest, ()):
            wake = self._wakes.get(seek_id)
            if wake is not None:
                wake.set()

    def changed_all(self) -> None:
        for wake in self._wakes.values():
            wake.set()

    def _changed(self, key: str) -> None:
        """From a worker thread: wake this process's streams and tell the others."""
        digest = key_digest(key)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.changed, digest)
        if self._announce is not None:
            self._announce(digest)

    def heartbeat(self) -> None:
        """Every waiting seek of this process is still there; a seek that had been passed
        over (its sign of life came late) may complete a table now."""
        for key in self._competition.seen(list(self._wakes), self._absent_before()):
            self.form_tables(key)

    async def keep_alive(self) -> None:
        """The process's heartbeat, forever (a background task)."""
        while True:
            await asyncio.sleep(HEARTBEAT)
            if self._wakes:
                try:
                    await asyncio.to_thread(self.heartbeat)
                except Exception:  # the database may be briefly away; the next beat retries
                    log.warning("the seeks' heartbeat failed", exc_info=True)

    # ------------------------------------------------------------ seeking

    def seek(
        self,
        seek_id: str,
        account: Account,
        preset: str,
        options: Mapping[str, Any],
        time_control: TimeControl | None,
    ) -> Seek:
        """Register a seek (``seek_id``, chosen by the caller so it can cancel it whatever
        happens) and form whatever tables can be formed now."""
        rules = rules_for(preset, options)
        if time_control is not None:
            check_time_control(time_control)
        key = table_key(rules, time_control)
        self._competition.cancel_unseen_seeks(account.id, key, self._absent_before())
        self._competition.add_seek(
            seek_id,
            account.id,
            key,
            preset,
            {**options, "deal_limit": rules.deal_limit},  # as the game will be made
            time_control,
            rules.players,
        )
        self._changed(key)
        self.form_tables(key)
        seek = self._competition.seek(seek_id)
        assert seek is not None
        return seek

    def form_tables(self, key: str) -> list[str]:
        """Make a game for every full table of waiting seekers of this kind, oldest seeks
        first; return the games made."""
        made: list[str] = []
        with self._lock:
            while True:
                waiting = self._competition.waiting_seeks(key, self._absent_before())
                if not waiting:
                    return made
                players = waiting[0].players
                table: list[Seek] = []
                for seek in waiting:
                    if all(seek.account_id != s.account_id for s in table):
                        table.append(seek)
                    if len(table) == players:
                        break
                if len(table) < players:
                    return made
                game_id = self._make_table(table)
                if game_id is not None:
                    made.append(game_id)
                    self._changed(key)

    def _make_table(self, table: list[Seek]) -> str | None:
        accounts = self._competition.accounts([s.account_id for s in table])
        seats = list(range(len(table)))
        _shuffle(seats)
        by_seek = {seek.id: seat for seek, seat in zip(table, seats, strict=True)}
        first = table[0]
        try:
            game_id, _ = self._app.create_game(
                first.preset,
                first.options,
                "seek: " + ", ".join(accounts[s.account_id].name for s in table),
                time_control=first.time_control,
                reservations=[(by_seek[s.id], accounts[s.account_id]) for s in table],
                also=lambda session, game_id: CompetitionStore.seat_seeks(session, game_id, by_seek),
                rated=True,  # a table of seekers is a rated game
            )
        except SeekGone:
            log.info("a seek was taken or cancelled while its table formed; trying again")
            return None
        log.info("seek: game %s for %s", game_id, ", ".join(accounts[s.account_id].name for s in table))
        return game_id

    def waiting(self, key: str) -> int:
        return self._competition.count_waiting(key, self._absent_before())

    def _absent_before(self) -> datetime:
        return datetime.now(UTC) - timedelta(seconds=ABSENT_AFTER)

    def cancel(self, seek: Seek | str) -> bool:
        if isinstance(seek, str):
            return self._competition.cancel_seek(seek)
        cancelled = self._competition.cancel_seek(seek.id)
        if cancelled:
            self._changed(seek.table_key)
        return cancelled
