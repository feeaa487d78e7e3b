"""Quotas: what one peer (a client address) or one account may hold or make at once, so that
nobody can fill the server's memory or database by asking a lot.

- games created: at most ``games_per_minute`` in any minute, per peer and per account;
- open streams (WatchGame, WatchLobby, Seek, WatchSeats, WatchTurns ...): at most
  ``streams_per_peer`` at once per peer;
- open seeks: at most ``seeks_per_account`` at once per account;
- open turn streams (WatchTurns, PlayTurns): at most ``turn_streams_per_account`` at once per
  account (one is all a bot needs, whatever it plays; a few more for a restart's overlap);
- ``open_games=False``: only accounts (an API key) create games;
- games the server plays in (house bots, or a clock whose timeouts it applies), created by one
  peer or account: at most ``served_games`` not over at once, and no new one while the server
  applied more than ``served_actions_per_minute`` actions for it (house-bot decisions and
  timeouts) in the last minute: a client cannot make the server play for it without bound;
- challenges: at most ``challenges_per_minute`` made by one account;
- hand analyses (AnalyzeHand) computed for one peer: at most ``analyses_per_minute`` (an answer
  the server kept is not counted).
- games read back from the log to be listed (ListGames: a game this process does not hold is
  loaded, its log replayed, to be summed up): at most ``loads_per_minute`` for one peer (a
  listed game held in memory is not counted): a page of 200 such games is 200 replays.

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
    turn_streams_per_account: int = 4
    open_games: bool = True
    served_games: int = 16
    served_actions_per_minute: int = 1200
    challenges_per_minute: int = 10
    analyses_per_minute: int = 60
    loads_per_minute: int = 2000
    clock: Callable[[], float] = time.monotonic
    _created: dict[str, collections.deque[float]] = field(default_factory=dict, repr=False)
    _challenged: dict[str, collections.deque[float]] = field(default_factory=dict, repr=False)
    _analysed: dict[str, collections.deque[float]] = field(default_factory=dict, repr=False)
    _loaded: dict[str, collections.deque[float]] = field(default_factory=dict, repr=False)
    _serving: collections.Counter[str] = field(default_factory=collections.Counter, repr=False)
    _served: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _actions: dict[str, _Minute] = field(default_factory=dict, repr=False)
    _streams: collections.Counter[str] = field(default_factory=collections.Counter, repr=False)
    _seeks: collections.Counter[str] = field(default_factory=collections.Counter, repr=False)
    _turn_streams: collections.Counter[str] = field(
        default_factory=collections.Counter, repr=False
    )

    def creating_game(self, peer: str, account: str | None) -> None:
        """Count a game about to be created by ``peer`` (and ``account``, if it has one)."""
        _count_in_minute(
            self._created,
            _holders(peer, account),
            self.games_per_minute,
            self.clock(),
            "games created",
            "games_per_minute",
        )

    def challenging(self, account: str) -> None:
        """Count a challenge about to be made by ``account``."""
        _count_in_minute(
            self._challenged,
            (f"account {account}",),
            self.challenges_per_minute,
            self.clock(),
            "challenges made",
            "challenges_per_minute",
        )

    def analysing(self, peer: str) -> None:
        """Count a hand analysis about to be computed for ``peer``."""
        _count_in_minute(
            self._analysed,
            (f"peer {peer}",),
            self.analyses_per_minute,
            self.clock(),
            "hand analyses",
            "analyses_per_minute",
        )

    def loading(self, peer: str, games: int) -> None:
        """Count ``games`` about to be read back from the log to be listed for ``peer``
        (refused whole, and not counted, if they would pass the limit)."""
        if games > 0:
            _count_in_minute(
                self._loaded,
                (f"peer {peer}",),
                self.loads_per_minute,
                self.clock(),
                "games read back from the log to be listed",
                "loads_per_minute",
                games,
            )

    def begin_served(self, peer: str, account: str | None) -> tuple[str, ...]:
        """Hold one of the served games of ``peer`` (and ``account``) for a game about to be
        created with house bots or a clock; the holders, for ``served`` (once it is made) or
        ``end_served`` (if it was not)."""
        holders = _holders(peer, account)
        now = self.clock()
        for holder in holders:
            if self._serving[holder] >= self.served_games:
                raise QuotaExceeded(
                    f"the limit of {self.served_games} games with house bots or a clock in play "
                    f"at once for one {holder.split()[0]} is reached: finish or resign one first",
                    limit="served_games",
                )
            minute = self._actions.get(holder)
            if minute is not None and minute.total(now) >= self.served_actions_per_minute:
                raise QuotaExceeded(
                    f"the limit of {self.served_actions_per_minute} actions a minute the server "
                    f"plays (house bots, clocks) in the games of one {holder.split()[0]} is "
                    f"reached: try again in a minute",
                    limit="served_actions_per_minute",
                )
        for holder in holders:
            self._serving[holder] += 1
        return holders

    def end_served(self, holders: tuple[str, ...]) -> None:
        """Give back what ``begin_served`` held (the game was not made, or is over)."""
        for holder in holders:
            self._serving[holder] -= 1
            if self._serving[holder] <= 0:
                del self._serving[holder]

    def served(self, game_id: str, holders: tuple[str, ...]) -> None:
        """The game ``begin_served`` held a place for is ``game_id``."""
        if game_id in self._served:  # a retried CreateGame: the game holds its place already
            self.end_served(holders)
            return
        self._served[game_id] = holders

    def served_action(self, game_id: str) -> None:
        """The server applied an action in ``game_id`` for a house bot or a clock."""
        holders = self._served.get(game_id)
        if holders is None:
            return
        now = self.clock()
        for holder in holders:
            minute = self._actions.get(holder)
            if minute is None:
                minute = self._actions[holder] = _Minute()
            minute.add(now)

    def game_over(self, game_id: str) -> None:
        """``game_id`` ended: its creator may have another."""
        holders = self._served.pop(game_id, None)
        if holders is not None:
            self.end_served(holders)
            now = self.clock()
            for holder in holders:
                minute = self._actions.get(holder)
                if minute is not None and holder not in self._serving and not minute.total(now):
                    del self._actions[holder]

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


    @contextmanager
    def turn_stream(self, account: str) -> Iterator[None]:
        """Hold one of ``account``'s open turn streams while the block runs."""
        if self._turn_streams[account] >= self.turn_streams_per_account:
            raise QuotaExceeded(
                f"the limit of {self.turn_streams_per_account} open turn streams (WatchTurns, "
                f"PlayTurns) an account is reached: one tells every turn of the account; close "
                f"one first",
                limit="turn_streams_per_account",
            )
        self._turn_streams[account] += 1
        try:
            yield
        finally:
            self._turn_streams[account] -= 1
            if not self._turn_streams[account]:
                del self._turn_streams[account]


def _holders(peer: str, account: str | None) -> tuple[str, ...]:
    return (f"peer {peer}",) + ((f"account {account}",) if account else ())


def _count_in_minute(
    book: dict[str, collections.deque[float]],
    holders: tuple[str, ...],
    limit: int,
    now: float,
    what: str,
    name: str,
    count: int = 1,
) -> None:
    """Count ``count`` more of ``what`` for each of ``holders``, refused if one of them would
    pass ``limit`` in the last minute."""
    for holder in holders:
        times = book.get(holder)
        if times is None:
            times = collections.deque()
        while times and times[0] <= now - 60:
            times.popleft()
        if len(times) + count > limit:
            raise QuotaExceeded(
                f"the limit of {limit} {what} a minute by one {holder.split()[0]} is reached: "
                f"try again later",
                limit=name,
            )
    for holder in holders:
        book.setdefault(holder, collections.deque()).extend([now] * count)
    if len(book) > 100_000:  # forget the holders who stopped
        for holder in [h for h, t in book.items() if not t or t[-1] <= now - 60]:
            del book[holder]


class _Minute:
    """A count over the last minute, in one-second buckets: what the server does in the
    background is counted however much it is (it cannot be refused), in bounded memory."""

    __slots__ = ("_buckets",)

    def __init__(self) -> None:
        self._buckets: collections.deque[list[int]] = collections.deque()

    def add(self, now: float) -> None:
        second = int(now)
        if self._buckets and self._buckets[-1][0] == second:
            self._buckets[-1][1] += 1
        else:
            self._buckets.append([second, 1])
            self._forget(now)

    def total(self, now: float) -> int:
        self._forget(now)
        return sum(count for _, count in self._buckets)

    def _forget(self, now: float) -> None:
        while self._buckets and self._buckets[0][0] <= now - 60:
            self._buckets.popleft()
