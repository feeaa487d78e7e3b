"""Telling other processes of what changed: PostgreSQL's LISTEN/NOTIFY.

The tables are the truth; notifications are only a wake-up hint.  Every notification goes
through ``notify``, inside the transaction of what it reports, so it is delivered exactly
when that is committed (and never for a rollback): the writer announces each batch's new
versions on ``NOTIFY_CHANNEL`` (``"<game_id>:<version>,..."``), the stores announce what moves
no version (seats left, keys revoked) on ``LOBBY_CHANNEL``.  ``AsyncPgListener`` (asyncio, the
server's ``boneyard.server.ops.pg_listener``) and ``PgListener`` (threads) receive them on a
dedicated connection.

SQLite is one process's database: there is nobody to tell, and ``notify`` sends nothing.
Notifications sent while a listener is disconnected are lost, so a listener looks at
everything again after every (re)connect.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from types import TracebackType
from typing import NamedTuple, Self, TypeAlias

import psycopg
from psycopg import sql
from sqlalchemy import text
from sqlalchemy.engine import URL, Connection, Engine, make_url

from boneyard.server.store.db import is_postgresql
from boneyard.server.store.unit_of_work import Transaction

__all__ = [
    "LOBBY_CHANNEL",
    "NOTIFY_CHANNEL",
    "AsyncPgListener",
    "Change",
    "DatabaseUrl",
    "PgListener",
    "announce",
    "listen_supported",
    "notification_payloads",
    "notify",
    "parse_notification",
    "parse_notifications",
]

log = logging.getLogger(__name__)

#: The channel of games' new versions: ``"<game_id>:<version>,..."``, sent by every commit
#: that grows a log (the writer's batches, a game's creation).
NOTIFY_CHANNEL = "boneyard_events"

#: The channel of changes that move no game's version (seeks, reserved seats, seats left,
#: keys): ``"<kind>:<value>"``, see ``boneyard.server.ops.pg_listener``.
LOBBY_CHANNEL = "boneyard_lobby"

DatabaseUrl: TypeAlias = str | URL
"""Where a listener connects: a database URL, as a string or parsed."""

# Built once: a statement object reused keeps its compiled form and cache key.
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


def notify(transaction: Connection | Transaction, channel: str, *payloads: str) -> None:
    """Send each of ``payloads`` on ``channel`` when ``transaction`` commits (PostgreSQL's
    NOTIFY is transactional: a rollback sends nothing). On SQLite, nothing: one process has
    the file, and it tells itself without the database."""
    conn = transaction.connection() if isinstance(transaction, Transaction) else transaction
    if conn.dialect.name != "postgresql":
        return
    for payload in payloads:
        conn.execute(_NOTIFY, {"channel": channel, "payload": payload})


def announce(engine: Engine, channel: str, payload: str) -> None:
    """Send one notification now, in a transaction of its own (a blocking call, for worker
    threads)."""
    with engine.begin() as conn:
        notify(conn, channel, payload)


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


def listen_supported(url: DatabaseUrl | Engine) -> bool:
    """Whether LISTEN/NOTIFY is available for this database (PostgreSQL only)."""
    return is_postgresql(url.url if isinstance(url, Engine) else url)


def _conninfo(url: DatabaseUrl) -> str:
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

    def __init__(self, url: DatabaseUrl, channel: str = NOTIFY_CHANNEL) -> None:
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
        cls, url: DatabaseUrl, channel: str = NOTIFY_CHANNEL, *more: str
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
