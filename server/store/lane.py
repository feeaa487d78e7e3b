"""One connection for a process's writes, one transaction at a time.

SQLite lets one connection write at a time. When the writer thread's group commit and another
thread's write (a seat taken, a game created) each had a connection of their own, they met in
SQLite's lock: the one that lost slept in SQLite's busy handler (1 ms, then 2, 5, 10 ... until
the lock was free, never woken when it was), with every action of its batch waiting; and each
write through the other connection emptied the writer's page cache, which it then read back
from the file (under ``bench_server``'s load: ~100 such sleeps in four seconds, and most of the
writer's ~15 ``pread`` calls a commit). Through one ``WriteLane``, a write waits for the one
before it on a lock, woken the moment it is released, and every write finds the pages the last
one left. On PostgreSQL, whose writers only wait for each other on the rows they share, the
store's other writes keep a connection each; the writer has a lane of its own.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from contextlib import AbstractContextManager
from types import TracebackType

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from boneyard.server.store.driver import driver_cursor

__all__ = ["WriteLane"]


class WriteLane:
    """The connection of ``engine`` (made with the store's write options) that writes go
    through, lent to one holder at a time."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._holder: int | None = None
        self._conn: Connection | None = None
        self.cursor: sqlite3.Cursor | None = None
        """The SQLite driver's cursor on the lane's connection (``None`` on any other
        database), found once a connection: the writer runs its batches on it, and finding it
        walks SQLAlchemy's connection objects. For the holder only."""

    def connection(self) -> AbstractContextManager[Connection]:
        """The lane's connection, with no transaction open, until the block ends (the caller
        begins and ends its own). A connection the database failed on is dropped: the next
        holder gets a new one. (An object with ``__enter__`` and ``__exit__``, not a
        generator's: the writer borrows it at every batch.)"""
        return _Lent(self)

    def _lend(self) -> Connection:
        me = threading.get_ident()
        if self._holder == me:
            # Waiting for itself would wait for ever; a second write transaction opened inside
            # another was never possible on SQLite either.
            raise RuntimeError("a write transaction was opened inside another on one thread")
        self._lock.acquire()
        self._holder = me
        try:
            conn = self._conn
            if conn is None or conn.closed or conn.invalidated:
                self.cursor = None  # (never the cursor of a connection the lane no longer lends)
                conn = self._conn = self._engine.connect()
                self.cursor = driver_cursor(conn)
        except BaseException as error:
            self._release(error)  # (nothing was lent: nothing to roll back)
            raise
        return conn

    def _take_back(self, error: BaseException | None) -> None:
        """The lent connection is given back after its block (``error``: what the block
        raised)."""
        try:
            conn = self._conn
            if error is not None and conn is not None and conn.in_transaction():
                with contextlib.suppress(Exception):  # (the block did not end it)
                    conn.rollback()
        finally:
            self._release(error)

    def _release(self, error: BaseException | None) -> None:
        """The lane free for the next holder; the connection dropped if the database failed
        on it."""
        try:
            if isinstance(error, DBAPIError):
                self._drop()
        finally:
            self._holder = None
            self._lock.release()

    def close(self) -> None:
        """Close the connection (a later holder opens a new one)."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        self.cursor = None
        if self._conn is not None:
            with contextlib.suppress(Exception):  # it is being thrown away
                self._conn.close()
            self._conn = None


class _Lent:
    """A ``WriteLane``'s connection lent for a ``with`` block."""

    __slots__ = ("_lane",)

    def __init__(self, lane: WriteLane) -> None:
        self._lane = lane

    def __enter__(self) -> Connection:
        return self._lane._lend()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._lane._take_back(error)
