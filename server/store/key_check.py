"""One question the server asks the database on its event loop: is this API key (its SHA-256)
still an account's current, unrevoked key? For ``KeyCache`` on a SQLite file, where the
operator's ``boneyard-server admin`` may revoke a key from another process and nothing tells
the server: one indexed read of the key's row with the C driver, a few microseconds, no
thread and no SQLAlchemy on the way.
"""

from __future__ import annotations

import logging
import sqlite3

from sqlalchemy.engine import Engine

from boneyard.server.store.models import AccountRow

__all__ = ["SqliteKeyCheck", "is_local_file"]

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


class SqliteKeyCheck:
    """Reads of a SQLite file's ``accounts`` on a connection of its own, in autocommit mode:
    each read sees the latest commit and holds no snapshot (which would keep the WAL from
    being checkpointed)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._conn: sqlite3.Connection | None = None

    def current(self, digest: str) -> bool | None:
        """Whether ``digest`` is an account's current unrevoked key; ``None`` if the database
        could not say now (ask it on a worker thread instead)."""
        try:
            return self._connection().execute(_CHECK, (digest,)).fetchone() is not None
        except sqlite3.Error:
            log.warning(
                "reading an API key's row on the event loop failed; asking on a thread",
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            self.close()
            return None

    def close(self) -> None:
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
