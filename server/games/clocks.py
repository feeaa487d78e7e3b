"""The clock keeper: a background task of the server that applies a game's timeout policy
when the seat to act has used its per-move time and its bank.

It sleeps until the next deadline: a heap of ``(deadline, game, turn version)``, fed by every
committed change of a clocked game in this process (``GameHost.on_commit``), by the running
clocks in the database when the server starts (so it picks up where it was after a restart),
and by other processes' changes to the games it follows (``changed_elsewhere``). A due entry
goes to ``GameHost.time_out``, which re-checks the clock and appends the timeout with the
usual version check: of two processes timing out one seat, or a timeout racing the seat's own
action, one wins. A stale entry (the seat acted) is simply passed over.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from boneyard.engine import Event
from boneyard.server.games.host import GameHost
from boneyard.server.games.live import LiveGame
from boneyard.server.store.competition import CompetitionStore

__all__ = ["ClockKeeper"]

log = logging.getLogger(__name__)


class ClockKeeper:
    def __init__(
        self,
        host: GameHost,
        competition: CompetitionStore,
        on_timeout: Callable[[], None] | None = None,
    ) -> None:
        """``on_timeout()``: told of each timeout this keeper applied."""
        self._host = host
        self._on_timeout = on_timeout
        self._competition = competition
        self._heap: list[tuple[float, str, int]] = []
        self._wake = asyncio.Event()
        self._followed: set[str] = set()
        """Games with a running clock this keeper has heard of."""
        self._loading: set[asyncio.Task[None]] = set()
        host.on_commit(self._committed)

    def _committed(self, game: LiveGame, events: tuple[Event, ...]) -> None:
        if game.clock is not None or game.id in self._followed:  # (most games have no clock)
            self.schedule(game)

    def schedule(self, game: LiveGame) -> None:
        """Follow the clock of ``game`` as it stands now."""
        clock = game.clock
        if clock is None or game.over:
            self._followed.discard(game.id)
            return
        self._followed.add(game.id)
        if clock.state.turn_seat in game.house:
            # The server plays a house seat itself (it starts its worker processes at the
            # first such turn, which may take longer than a short clock): it never times out.
            return
        deadline = self._host.deadline(clock)
        if deadline is None:
            return
        entry = (deadline.timestamp(), game.id, clock.turn_version)
        heapq.heappush(self._heap, entry)
        if self._heap[0] is entry:
            self._wake.set()

    def changed_elsewhere(self, game_id: str) -> None:
        """Another process moved ``game_id``: follow its clock as that process left it."""
        if game_id in self._followed:
            self.follow(game_id)

    def follow(self, game_id: str) -> None:
        """Follow the clock of a game this keeper has not seen change (a new one, say)."""
        task = asyncio.get_running_loop().create_task(self._reload(game_id))
        self._loading.add(task)
        task.add_done_callback(self._loading.discard)

    async def _reload(self, game_id: str) -> None:
        try:
            self.schedule(await self._host.get(game_id))
        except Exception:
            log.debug("game %s: could not follow its clock", game_id, exc_info=True)

    async def run(self) -> None:
        await self._start()
        while True:
            self._wake.clear()
            timeout = None
            if self._heap:
                timeout = max(0.0, self._heap[0][0] - datetime.now(UTC).timestamp())
            if timeout is None or timeout > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout)
                except TimeoutError:
                    pass
            now = datetime.now(UTC).timestamp()
            while self._heap and self._heap[0][0] <= now:
                _, game_id, turn_version = heapq.heappop(self._heap)
                try:
                    applied = await self._host.time_out(game_id, turn_version)
                except Exception:  # one game's trouble must not stop the other clocks
                    log.exception("game %s: the clock could not be applied", game_id)
                    continue
                if applied is not None and self._on_timeout is not None:
                    self._on_timeout()

    async def _start(self) -> None:
        """The clocks of the games being played, as the database has them."""
        while True:
            try:
                clocks = await asyncio.to_thread(self._competition.running_clocks)
                break
            except Exception:
                log.exception("reading the running clocks failed; trying again")
                await asyncio.sleep(1.0)
        for clock in clocks:
            try:
                game = await self._host.get(clock.game_id)
                await self._host.repair_clock(game.id)
                self.schedule(await self._host.get(clock.game_id))
            except Exception:
                log.exception("game %s: its clock could not be followed", clock.game_id)
