"""Games nobody will finish are closed: no zombie tables.

- a game in play **without a clock** in which nobody acted for ``idle_after`` ends as
  abandoned (``engine.Abandon("idle")``); a game with a clock ends once every seat that is not
  a house bot's has run out of time ``absent_after`` times in a row (``engine.Abandon("absent")``,
  applied by ``GameHost.time_out`` with the timeout that makes it so), so a game nobody plays
  ends within a bounded number of clock turns;
- an **open** game (seats still free) untouched for ``open_after`` (nobody took or left a
  seat) ends as abandoned too (``engine.Abandon("unstarted")``).

The end is an event in the game's log, appended through the same version check as any
action (``GameHost.abandon``): an action that races the sweep, or the sweep of another
process, leaves one winner. A tournament's games are its director's and never swept.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from boneyard.server.games.host import ABSENT_AFTER, GameHost
from boneyard.server.store.repository import EventStore

__all__ = ["DEFAULT_IDLE_AFTER", "DEFAULT_OPEN_AFTER", "Abandonment", "Sweeper"]

log = logging.getLogger(__name__)

DEFAULT_IDLE_AFTER = timedelta(hours=24)
DEFAULT_OPEN_AFTER = timedelta(hours=24)
_BATCH = 100
"""Games closed per look (the next look takes the rest)."""


@dataclass(frozen=True, slots=True)
class Abandonment:
    """How long a game may sit untouched; ``None``: never closed for that reason."""

    idle_after: timedelta | None = DEFAULT_IDLE_AFTER
    open_after: timedelta | None = DEFAULT_OPEN_AFTER
    absent_after: int = ABSENT_AFTER
    """Timeouts in a row of every seat not a house bot's that end a game with a clock."""

    @property
    def every(self) -> float:
        """Seconds between looks: often enough that a game ends within a tenth (at most a
        minute) past its time, seldom enough to cost nothing."""
        spans = [s.total_seconds() for s in (self.idle_after, self.open_after) if s is not None]
        return min(60.0, max(0.2, min(spans, default=60.0) / 10))


class Sweeper:
    def __init__(
        self,
        host: GameHost,
        store: EventStore,
        abandonment: Abandonment,
        *,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._host = host
        self._store = store
        self._abandonment = abandonment
        self._now = now or (lambda: datetime.now(UTC))

    async def run(self) -> None:
        rules = self._abandonment
        if rules.idle_after is None and rules.open_after is None:
            return
        while True:
            await asyncio.sleep(rules.every)
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:  # the next look tries again; a database hiccup is no reason to stop
                log.exception("looking for abandoned games failed")

    async def sweep(self) -> int:
        """Close what is due now; how many games were closed."""
        rules = self._abandonment
        now = self._now()
        idle_before = now - rules.idle_after if rules.idle_after is not None else None
        open_before = now - rules.open_after if rules.open_after is not None else None
        due = await asyncio.to_thread(self._store.stale_games, idle_before, open_before, _BATCH)
        closed = 0
        for game_id, status in due:
            reason, since = (
                ("unstarted", open_before) if status == "open" else ("idle", idle_before)
            )
            assert since is not None
            if await self._host.abandon(game_id, reason, since):
                closed += 1
        return closed
