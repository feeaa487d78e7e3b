"""Telling other processes that a game's log grew.

The events table is the truth; notifications are only a wake-up hint.  Two ways to learn of
new events written by another process:

- **polling** (every backend): ``VersionPoller.poll(game_ids)`` reads ``games.version`` of the
  watched games in one indexed query and reports the ones that moved.
- **LISTEN/NOTIFY** (PostgreSQL): ``EventStore.append`` and ``create_game`` run
  ``pg_notify('boneyard_events', '<game_id>:<version>')`` inside their transaction, so the
  notification is delivered exactly when the events are committed.  ``PgListener`` (threads)
  and ``AsyncPgListener`` (asyncio) receive them on a dedicated connection.

Notifications sent while a listener is disconnected are lost, so a feed should poll once
after every (re)connect, and may keep a slow poll as a safety net.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from types import TracebackType
from typing import NamedTuple, Self

import psycopg
from psycopg import sql
from sqlalchemy.engine import URL, Engine, make_url

from boneyard.server.store.db import is_postgresql
from boneyard.server.store.repository import NOTIFY_CHANNEL, EventStore

__all__ = [
    "NOTIFY_CHANNEL",
    "AsyncPgListener",
    "Change",
    "PgListener",
    "VersionPoller",
    "listen_supported",
    "notification_payloads",
    "parse_notification",
    "parse_notifications",
    "wait_for_version",
]

log = logging.getLogger(__name__)


class Change(NamedTuple):
    """Game ``game_id`` is now at ``version``."""

    game_id: str
    version: int


def parse_notification(payload: str) -> Change | None:
    """``"<game_id>:<version>"`` -> ``Change``; ``None`` (and a warning) for anything else."""
    game_id, sep, version = payload.rpartition(":")
    if sep and game_id and version.isdigit():
        return Change(game_id, int(version))
    log.warning("ignoring malformed %s notification %r", NOTIFY_CHANNEL, payload)
    return None


def parse_notifications(payload: str) -> list[Change]:
    """A payload of several changes, ``"<id>:<version>,<id>:<version>..."`` (the writer
    announces a whole batch in one notification)."""
    return [c for part in payload.split(",") if (c := parse_notification(part)) is not None]


#: PostgreSQL refuses a NOTIFY payload of 8000 bytes or more.
_MAX_PAYLOAD = 7900


def notification_payloads(changes: Iterable[tuple[str, int]]) -> list[str]:
    """The payloads announcing ``changes`` (``(game_id, version)``): as few as fit."""
    payloads: list[str] = []
    current = ""
    for game_id, version in changes:
        part = f"{game_id}:{version}"
        if current and len(current) + 1 + len(part) > _MAX_PAYLOAD:
            payloads.append(current)
            current = ""
        current = f"{current},{part}" if current else part
    if current:
        payloads.append(current)
    return payloads


def listen_supported(url: str | URL | Engine) -> bool:
    """Whether LISTEN/NOTIFY is available for this database (PostgreSQL only)."""
    return is_postgresql(url.url if isinstance(url, Engine) else url)


class VersionPoller:
    """Reports which watched games moved since the last poll, by reading ``games.version``.

    The first poll of a game reports its current version, so a caller starts from the truth.
    """

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._seen: dict[str, int] = {}

    def poll(self, game_ids: Iterable[str]) -> list[Change]:
        versions = self._store.latest_versions(game_ids)
        changes: list[Change] = []
        for game_id, version in versions.items():
            if self._seen.get(game_id) != version:
                self._seen[game_id] = version
                changes.append(Change(game_id, version))
        return changes

    def forget(self, game_id: str) -> None:
        self._seen.pop(game_id, None)


def wait_for_version(
    store: EventStore,
    game_id: str,
    after_version: int,
    *,
    timeout: float,
    interval: float = 0.1,
) -> int:
    """Poll until the game's version exceeds ``after_version`` or ``timeout`` seconds pass;
    return the latest version either way.  Raises ``GameNotFound``."""
    deadline = time.monotonic() + timeout
    while True:
        version = store.latest_version(game_id)
        remaining = deadline - time.monotonic()
        if version > after_version or remaining <= 0:
            return version
        time.sleep(min(interval, remaining))


def _conninfo(url: str | URL) -> str:
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise ValueError(f"LISTEN/NOTIFY needs PostgreSQL, not {parsed.get_backend_name()}")
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)


def _listen_statement(channel: str) -> sql.Composed:
    return sql.SQL("LISTEN {}").format(sql.Identifier(channel))


class PgListener:
    """``LISTEN`` on a dedicated autocommit connection; for a thread of its own.

    >>> with PgListener(url) as listener:          # doctest: +SKIP
    ...     for change in listener.wait(timeout=1.0):
    ...         ...

    On a lost connection ``wait`` raises ``psycopg.OperationalError``: open a new listener
    and poll once, since notifications sent meanwhile are gone.
    """

    def __init__(self, url: str | URL, channel: str = NOTIFY_CHANNEL) -> None:
        self._conn = psycopg.connect(_conninfo(url), autocommit=True)
        try:
            self._conn.execute(_listen_statement(channel))
        except BaseException:
            self._conn.close()
            raise

    def wait(self, timeout: float) -> list[Change]:
        """Block up to ``timeout`` seconds for notifications; return all that arrived."""
        received = list(self._conn.notifies(timeout=timeout, stop_after=1))
        if received:
            received.extend(self._conn.notifies(timeout=0))
        return [c for n in received for c in parse_notifications(n.payload)]

    def __iter__(self) -> Iterator[Change]:
        """Every change, forever (until the connection is closed or lost)."""
        for notify in self._conn.notifies():
            yield from parse_notifications(notify.payload)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncPgListener:
    """``LISTEN`` on a dedicated asyncio connection: ``async with await AsyncPgListener.open(url)``."""

    def __init__(self, conn: psycopg.AsyncConnection[object]) -> None:
        self._conn = conn

    @classmethod
    async def open(
        cls, url: str | URL, channel: str = NOTIFY_CHANNEL, *more: str
    ) -> AsyncPgListener:
        """Listen on ``channel`` (and on each of ``more``)."""
        conn = await psycopg.AsyncConnection.connect(_conninfo(url), autocommit=True)
        try:
            for name in (channel, *more):
                await conn.execute(_listen_statement(name))
        except BaseException:
            await conn.close()
            raise
        return cls(conn)

    async def notifications(self) -> AsyncIterator[tuple[str, str]]:
        """Every notification of the channels listened on, as ``(channel, payload)``,
        forever (until the connection is closed or lost)."""
        async for notify in self._conn.notifies():
            yield notify.channel, notify.payload

    async def wait(self, timeout: float) -> list[Change]:
        """Wait up to ``timeout`` seconds for notifications; return all that arrived."""
        received = [n async for n in self._conn.notifies(timeout=timeout, stop_after=1)]
        if received:
            received.extend([n async for n in self._conn.notifies(timeout=0)])
        return [c for n in received for c in parse_notifications(n.payload)]

    async def changes(self) -> AsyncIterator[Change]:
        """Every change, forever (until the connection is closed or lost)."""
        async for notify in self._conn.notifies():
            for change in parse_notifications(notify.payload):
                yield change

    async def close(self) -> None:
        await self._conn.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
