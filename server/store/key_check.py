"""One question the server asks the database on its event loop: is this API key (its SHA-256)
still an account's current, unrevoked key? For ``KeyCache`` on a SQLite file, where the
operator's ``boneyard-server admin`` may revoke a key from another process: one indexed read
of the key's row with the C driver, no thread and no SQLAlchemy on the way.

That read was asked at every call with a key, and it costs more the more the server writes:
each commit (every few milliseconds under load) makes the next read start its snapshot
afresh, ~50 µs a call under ``bench_server``'s load, twice an action. So every change of a
key (``CompetitionStore.revoke_key`` and ``rotate_key``, whichever process makes it) also
writes a new random token over a marker file beside the database once committed
(``mark_key_change``), and a key confirmed by a read is taken as confirmed while the
marker holds the token it held before that read (a memory map of the file: no system call).
A key changed without the store's methods (SQL typed into the file) is seen at the next
change of the marker, or when the server restarts.
"""

from __future__ import annotations

import logging
import mmap
import os
import secrets
import sqlite3

from sqlalchemy.engine import Engine

from boneyard.server.store.models import AccountRow

__all__ = ["SqliteKeyCheck", "is_local_file", "key_marker", "mark_key_change"]

log = logging.getLogger(__name__)

CHECK_TIMEOUT_MS = 100
"""How long a read may wait for SQLite's lock (it never does in WAL mode but while a crashed
writer's log is recovered); past it the read says it cannot tell."""

_CHECK = (
    f"SELECT 1 FROM {AccountRow.__tablename__} WHERE {AccountRow.key_hash.key} = ? "
    f"AND {AccountRow.key_revoked_at.key} IS NULL"
)


def is_local_file(engine: Engine) -> bool:
    """Whether ``engine`` is a SQLite database in a file (not in memory)."""
    database = engine.url.database
    return (
        engine.dialect.name == "sqlite"
        and bool(database)
        and database != ":memory:"
        and "mode=memory" not in str(database)
    )


MAX_CONFIRMED = 10_000
"""Keys remembered as confirmed at most (past this the set starts again empty)."""

MARKER_BYTES = 16
"""The marker's size: a random token, written over in place at every change of a key."""


def key_marker(engine: Engine) -> str | None:
    """The marker file of a SQLite file's key changes (beside it); ``None`` for any other
    database."""
    if not is_local_file(engine):
        return None
    database = str(engine.url.database)
    if database.startswith("file:"):
        database = database.removeprefix("file:").split("?", 1)[0]
    return f"{database}.keys-changed"


def mark_key_change(engine: Engine) -> None:
    """Write a new token over the marker of ``engine``'s key changes (after the change's
    commit): every server on the file reads each remembered key again at its next use. In
    place, never a new file: a server sees the marker through a memory map of the file it
    opened."""
    marker = key_marker(engine)
    if marker is None:
        return
    fd = os.open(marker, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, secrets.token_bytes(MARKER_BYTES), 0)
    finally:
        os.close(fd)


class _Marker:
    """The marker as a server reads it: a memory map of the file, so that looking costs no
    system call (a ``stat`` was ~15 µs here under load)."""

    def __init__(self, path: str) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size < MARKER_BYTES:
                os.pwrite(fd, secrets.token_bytes(MARKER_BYTES), 0)
            self._map = mmap.mmap(fd, MARKER_BYTES, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)

    def token(self) -> bytes:
        return self._map[:MARKER_BYTES]

    def close(self) -> None:
        self._map.close()


class SqliteKeyCheck:
    """Reads of a SQLite file's ``accounts`` on a connection of its own, in autocommit mode:
    each read sees the latest commit and holds no snapshot (which would keep the WAL from
    being checkpointed)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._conn: sqlite3.Connection | None = None
        self._marker_path = key_marker(engine)
        self._marker: _Marker | None = None
        self._confirmed: dict[str, bytes] = {}
        """Keys read as current, with the marker's token as it was before the read."""

    def current(self, digest: str) -> bool | None:
        """Whether ``digest`` is an account's current unrevoked key; ``None`` if the database
        could not say now (ask it on a worker thread instead)."""
        marker: bytes | None
        try:
            marker = self._marker_now()
        except OSError:  # cannot tell: read the row, remember nothing
            marker = None
        else:
            if self._confirmed.get(digest) == marker:
                return True
        try:
            current = self._connection().execute(_CHECK, (digest,)).fetchone() is not None
        except sqlite3.Error:
            log.warning(
                "reading an API key's row on the event loop failed; asking on a thread",
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            self.close()
            return None
        if not current:
            self._confirmed.pop(digest, None)
        elif marker is not None:
            if len(self._confirmed) >= MAX_CONFIRMED:
                self._confirmed.clear()
            self._confirmed[digest] = marker
        return current

    def _marker_now(self) -> bytes:
        if self._marker is None:
            if self._marker_path is None:
                raise OSError("no marker beside an in-memory database")
            self._marker = _Marker(self._marker_path)
        return self._marker.token()

    def close(self) -> None:
        self._confirmed.clear()
        if self._marker is not None:
            self._marker.close()
            self._marker = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            # The dialect's own reading of the URL (a path, a file: URI).
            args, kwargs = self._engine.dialect.create_connect_args(self._engine.url)
            kwargs["check_same_thread"] = False
            conn = sqlite3.connect(*args, **kwargs)  # type: ignore[call-overload]
            conn.isolation_level = None
            conn.execute(f"PRAGMA busy_timeout = {CHECK_TIMEOUT_MS}")
            self._conn = conn
        return self._conn
