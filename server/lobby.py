"""Seeking: accounts ask for a kind of table (rules and clock); as soon as enough different
accounts wait for the same kind, a game is made with a seat reserved for each.

A seek counts only while its stream is there: the stream says so every ``HEARTBEAT``
seconds (``seen``), and a seek not seen for ``ABSENT_AFTER`` seconds is passed over (the
seeker's connection died, or the server was killed before it could cancel it); a new seek of
the same account and kind cancels its unseen ones.

Forming a table is optimistic, so several server processes may share one database: the
game is created in the same transaction that marks its seeks seated, and that transaction
fails (and is retried with whoever still waits) if any of them was seated or cancelled
meanwhile. No account is ever seated twice at one table.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from boneyard import engine
from boneyard.server.app import GameApp, check_time_control, rules_for
from boneyard.server.store.competition import (
    Account,
    CompetitionStore,
    Seek,
    SeekGone,
    TimeControl,
)

__all__ = ["Lobby", "table_key"]

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


class Lobby:
    def __init__(self, app: GameApp) -> None:
        self._app = app
        self._competition: CompetitionStore = app.competition
        self._lock = threading.Lock()

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
            seek_id, account.id, key, preset, dict(options), time_control, rules.players
        )
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
            )
        except SeekGone:
            log.info("a seek was taken or cancelled while its table formed; trying again")
            return None
        log.info("seek: game %s for %s", game_id, ", ".join(accounts[s.account_id].name for s in table))
        return game_id

    def waiting(self, key: str) -> int:
        return self._competition.count_waiting(key, self._absent_before())

    def seen(self, seek_id: str) -> None:
        self._competition.seen(seek_id)

    def _absent_before(self) -> datetime:
        return datetime.now(UTC) - timedelta(seconds=ABSENT_AFTER)

    def cancel(self, seek_id: str) -> bool:
        return self._competition.cancel_seek(seek_id)
