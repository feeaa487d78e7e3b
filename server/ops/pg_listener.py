"""Other processes' changes, for a server sharing its PostgreSQL database: ``LISTEN`` on a
connection of its own, and hand each notification to whoever follows it.

- ``boneyard_events``: ``"<game_id>:<version>,..."``, sent by every writer's commit
  (``store.writer``): the games in memory drop a copy that fell behind, and the game's
  watchers, clock and so on are woken (``on_game``).
- ``boneyard_lobby``: ``"k:<table key digest>"`` when the seeks of a kind change, and
  ``"a:<account id>"`` when a game reserves a seat for an account, ``"s:<game id>"`` when a
  player takes or leaves a seat, ``"r:<account id>"`` when an account's key is revoked or rotated
  (``store.competition``; its streams then end) (``on_lobby``).

Every notification is sent by ``boneyard.server.store.notify`` (``notify``, in the transaction
of what it reports; ``announce``, on its own). They are only wake-ups; the database stays the
truth. Those sent while the
connection is down are lost, so after a reconnection ``on_reconnect`` makes everything look
again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from boneyard.server.store.notify import (
    LOBBY_CHANNEL,
    NOTIFY_CHANNEL,
    AsyncPgListener,
    DatabaseUrl,
    parse_notifications,
)

__all__ = ["Listener"]

log = logging.getLogger(__name__)


class Listener:
    def __init__(
        self,
        url: DatabaseUrl,
        *,
        on_game: Callable[[str, int], None],
        on_lobby: Callable[[str], None],
        on_reconnect: Callable[[], None],
        on_listening: Callable[[bool], None] | None = None,
    ) -> None:
        """``on_listening(connected)``: told each time the connection is made (``True``,
        before any notification it brings) and each time it is lost (``False``)."""
        self._url = url
        self._on_listening = on_listening
        self._on_game = on_game
        self._on_lobby = on_lobby
        self._on_reconnect = on_reconnect
        self.ready = asyncio.Event()
        """Set once listening (tests and benchmarks wait for it)."""

    async def run(self) -> None:
        connected_before = False
        pause = 0.1
        while True:
            try:
                async with await AsyncPgListener.open(
                    self._url, NOTIFY_CHANNEL, LOBBY_CHANNEL
                ) as listener:
                    if self._on_listening is not None:
                        self._on_listening(True)
                    if connected_before:
                        self._on_reconnect()
                    connected_before = True
                    pause = 0.1
                    self.ready.set()
                    async for channel, payload in listener.notifications():
                        self._dispatch(channel, payload)
                self._lost()  # (the connection ended without an error)
            except asyncio.CancelledError:
                self._lost()
                raise
            except Exception:
                self._lost()
                log.warning(
                    "listening for other processes' changes failed; reconnecting",
                    exc_info=log.isEnabledFor(logging.DEBUG),
                )
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)

    def _lost(self) -> None:
        if self._on_listening is not None:
            self._on_listening(False)

    def _dispatch(self, channel: str, payload: str) -> None:
        try:
            if channel == NOTIFY_CHANNEL:
                for change in parse_notifications(payload):
                    self._on_game(change.game_id, change.version)
            elif channel == LOBBY_CHANNEL:
                self._on_lobby(payload)
        except Exception:  # one bad notification must not stop the others
            log.exception("a %s notification could not be handled", channel)
