"""Quotas: what one peer (a client address) or one account may hold or make at once, so that
nobody can fill the server's memory or database by asking a lot.

- games created: at most ``games_per_minute`` in any minute, per peer and per account;
- open streams (WatchGame, Seek, WatchSeats): at most ``streams_per_peer`` at once per peer;
- open seeks: at most ``seeks_per_account`` at once per account;
- ``open_games=False``: only accounts (an API key) create games.

Exceeding one is RESOURCE_EXHAUSTED with a message naming the limit. The counts are this
process's: with several processes each enforces its own.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from boneyard.server.errors import AppError

__all__ = ["QuotaExceeded", "Quotas", "peer_of"]


class QuotaExceeded(AppError):
    """A limit of the server's quotas; the message says which."""

    default_reason = "QUOTA_EXCEEDED"


def peer_of(peer: str) -> str:
    """A client's address without its port (``ipv4:1.2.3.4:5678`` -> ``ipv4:1.2.3.4``): the
    ports of one client's connections differ."""
    host, sep, port = peer.rpartition(":")
    return host if sep and port.isdigit() else peer


@dataclass
class Quotas:
    games_per_minute: int = 600
    streams_per_peer: int = 5000
    seeks_per_account: int = 8
    open_games: bool = True
    clock: Callable[[], float] = time.monotonic
    _created: dict[str, collections.deque[float]] = field(default_factory=dict, repr=False)
    _streams: collections.Counter[str] = field(default_factory=collections.Counter, repr=False)
    _seeks: collections.Counter[str] = field(default_factory=collections.Counter, repr=False)

    def creating_game(self, peer: str, account: str | None) -> None:
        """Count a game about to be created by ``peer`` (and ``account``, if it has one)."""
        now = self.clock()
        holders = [f"peer {peer}"] + ([f"account {account}"] if account else [])
        for holder in holders:
            times = self._created.get(holder)
            if times is None:
                continue
            while times and times[0] <= now - 60:
                times.popleft()
            if len(times) >= self.games_per_minute:
                raise QuotaExceeded(
                    f"the limit of {self.games_per_minute} games created a minute by one "
                    f"{holder.split()[0]} is reached: try again later",
                    limit="games_per_minute",
                )
        for holder in holders:
            self._created.setdefault(holder, collections.deque()).append(now)
        if len(self._created) > 100_000:  # forget the holders who stopped creating
            for holder in [h for h, t in self._created.items() if not t or t[-1] <= now - 60]:
                del self._created[holder]

    @contextmanager
    def stream(self, peer: str) -> Iterator[None]:
        """Hold one of ``peer``'s open streams while the block runs."""
        if self._streams[peer] >= self.streams_per_peer:
            raise QuotaExceeded(
                f"the limit of {self.streams_per_peer} open streams a client is reached: close "
                f"one first",
                limit="streams_per_peer",
            )
        self._streams[peer] += 1
        try:
            yield
        finally:
            self._streams[peer] -= 1
            if not self._streams[peer]:
                del self._streams[peer]

    @contextmanager
    def seek(self, account: str) -> Iterator[None]:
        """Hold one of ``account``'s open seeks while the block runs."""
        if self._seeks[account] >= self.seeks_per_account:
            raise QuotaExceeded(
                f"the limit of {self.seeks_per_account} open seeks an account is reached: "
                f"cancel one first",
                limit="seeks_per_account",
            )
        self._seeks[account] += 1
        try:
            yield
        finally:
            self._seeks[account] -= 1
            if not self._seeks[account]:
                del self._seeks[account]
