"""Engines for the store: SQLite (the default, a file) or PostgreSQL, with the same code.

SQLite connections get WAL, foreign keys and a busy timeout, and SQLAlchemy (not the
``sqlite3`` module's legacy mode) emits ``BEGIN``: a plain ``BEGIN`` for reads, so a read
sees one snapshot, and ``BEGIN IMMEDIATE`` for writes (connections carrying the
``boneyard_write`` execution option), so writers queue on the busy timeout instead of failing
when they upgrade a read lock.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError

__all__ = [
    "SQLITE_BUSY_TIMEOUT_MS",
    "WRITE",
    "create_engine",
    "is_postgresql",
    "is_sqlite",
    "redacted_url",
]

#: How long a SQLite writer waits for the write lock before "database is locked".
SQLITE_BUSY_TIMEOUT_MS = 30_000

#: Execution option marking a connection that will write (``BEGIN IMMEDIATE`` on SQLite).
WRITE = "boneyard_write"


def is_sqlite(url: str | URL) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def is_postgresql(url: str | URL) -> bool:
    return make_url(url).get_backend_name() == "postgresql"


def redacted_url(url: str | URL) -> str:
    """``url`` as it may be logged: without its password (and nothing of one that does not
    parse, which may be a password pasted in the wrong place)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparsable database URL>"


SQLITE_SYNCHRONOUS = ("FULL", "NORMAL")
"""``FULL`` (the default): a commit is on disk when it returns, so an acknowledged action
survives a power cut. ``NORMAL`` (in WAL mode): a commit survives a crash of the server but a
power cut or an operating-system crash may lose the last commits; faster on slow disks."""


def create_engine(url: str | URL, *, sqlite_synchronous: str = "FULL", **kwargs: Any) -> Engine:
    """An engine for ``url`` with the store's connection settings.

    ``sqlite:///path/to/file.db`` or ``postgresql+psycopg://user@host:port/db``.  Extra
    keyword arguments go to :func:`sqlalchemy.create_engine`.
    """
    url = make_url(url)
    if url.get_backend_name() == "sqlite":
        if sqlite_synchronous.upper() not in SQLITE_SYNCHRONOUS:
            raise ValueError(f"sqlite_synchronous is one of {SQLITE_SYNCHRONOUS}")
        engine = sa.create_engine(url, **kwargs)
        _configure_sqlite(engine, sqlite_synchronous.upper())
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return sa.create_engine(url, **kwargs)


def _configure_sqlite(engine: Engine, synchronous: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from sqlite3's legacy mode (see _on_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute(f"PRAGMA synchronous = {synchronous}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # On the driver's connection itself: through SQLAlchemy's statement machinery the
        # BEGIN of every transaction cost more than most of the reads it began.
        driver = conn.connection.driver_connection
        assert driver is not None
        driver.execute("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")
