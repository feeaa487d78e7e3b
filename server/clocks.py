"""The clock keeper: a background task of the server that applies a game's timeout policy
when the seat to act has used its per-move time and its bank.

It reads the running clocks from the database (so it sees the games of every server process
sharing it, and picks up where it was after a restart) and hands each expired one to
``GameApp.time_out``, which appends the timeout with the usual version check: of two
processes timing out one seat, or a timeout racing the seat's own action, one wins.
"""

from __future__ import annotations

import asyncio
import logging

from boneyard.server.app import GameApp
from boneyard.server.feed import Feed

__all__ = ["ClockKeeper"]

log = logging.getLogger(__name__)


class ClockKeeper:
    def __init__(
        self,
        app: GameApp,
        feed: Feed,
        interval: float = 0.1,
    ) -> None:
        self._app = app
        self._feed = feed
        self._interval = interval

    def tick(self) -> list[str]:
        """Time out every seat whose time is up; return the games that moved."""
        moved: list[str] = []
        for clock in self._app.competition.running_clocks():
            try:
                if self._app.repair_clock(clock):
                    continue
                if self._app.time_out(clock) is not None:  # nothing unless time is up
                    moved.append(clock.game_id)
            except Exception:  # one game's trouble must not stop the other clocks
                log.exception("game %s: the clock could not be applied", clock.game_id)
        return moved

    async def run(self) -> None:
        while True:
            try:
                for game_id in await asyncio.to_thread(self.tick):
                    self._feed.publish(game_id)
            except Exception:
                log.exception("the clock keeper failed; trying again")
            await asyncio.sleep(self._interval)
