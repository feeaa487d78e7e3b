"""Which account an API key opens, answered on the event loop, with revocation still
immediate.

A bot account's key comes with every call it makes; asking the database each time cost a
thread hop and a query per call (a third of a tournament action's CPU). The accounts of keys
seen are remembered here, by the key's SHA-256 (never the key), and forgotten when a key may
have changed, so a revoked or rotated key is refused at once:

- **SQLite** (one file, perhaps changed by ``boneyard-server admin`` from another process,
  which cannot tell the server): each use of a remembered key is confirmed by one indexed
  read of its row on a connection of the cache's own, on the event loop (a few microseconds:
  no thread, no SQLAlchemy). A revoked or replaced key is refused by that read.
- **PostgreSQL**: the server's listener carries every revocation and rotation, from any
  process (``"r:<account id>"`` on the lobby channel, sent in the revoking transaction):
  ``forget`` empties the cache on each, and on every reconnection of the listener (what was
  said while it was away is lost). Keys are remembered only while the listener is connected
  (``listening``); otherwise every call asks the database, as before.
- Anything else (an in-memory SQLite, a store with no listener): every call asks the
  database, on a worker thread.

A lookup that was in flight when the cache was told to forget is not remembered: it may have
read the key before its revocation.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from typing import Literal

from sqlalchemy.engine import Engine

from boneyard.server.competition.accounts import is_api_key, key_hash
from boneyard.server.errors import PermissionDenied, Unauthenticated
from boneyard.server.store.competition import Account, CompetitionStore
from boneyard.server.store.models import AccountRow

__all__ = ["MAX_REMEMBERED", "KeyCache", "bad_key", "not_an_organiser"]

log = logging.getLogger(__name__)

MAX_REMEMBERED = 10_000
"""Keys remembered at most (only keys that opened an account are; past this the cache starts
again empty rather than grow with the accounts of a large server)."""

_CHECK_TIMEOUT_MS = 100
"""How long the confirming read may wait for SQLite's lock (it never does in WAL mode but
while a crashed writer's log is recovered); past it the call asks on a worker thread."""

Mode = Literal["checked", "listened", "uncached"]


def bad_key() -> Unauthenticated:
    return Unauthenticated(
        "this API key belongs to no account, or was revoked or replaced "
        "(boneyard-server admin rotate NAME gives an account a new key)",
        reason="BAD_API_KEY",
    )


def missing_key() -> Unauthenticated:
    return Unauthenticated(
        "this call needs an account's API key: 'authorization: Bearer <key>'",
        reason="API_KEY_REQUIRED",
    )


def not_an_organiser(account: Account) -> PermissionDenied:
    return PermissionDenied(
        f"{account.name!r} is a bot account: only a player's account organises games "
        f"and tournaments for others (boneyard-server admin create-player NAME)",
        reason="NOT_AN_ORGANISER",
    )


class KeyCache:
    """The accounts of API keys for one server process (the module's doc)."""

    def __init__(self, competition: CompetitionStore, engine: Engine) -> None:
        self._competition = competition
        self._accounts: dict[str, Account] = {}
        self._generation = 0
        """Moved by every ``forget``: a lookup begun before it is not remembered."""
        self._listening = False
        self._engine = engine
        self._check: sqlite3.Connection | None = None
        self.mode: Mode = _mode_of(engine)

    # --- what the server tells it ---------------------------------------------------------

    def forget(self) -> None:
        """A key may have been revoked or rotated (or the listener missed what was said):
        every key is looked up again on its next use. On the event loop."""
        self._accounts.clear()
        self._generation += 1

    def listening(self, connected: bool) -> None:
        """The PostgreSQL listener is connected (or not): only then are keys remembered."""
        self._listening = connected
        self.forget()

    # --- what a call asks -------------------------------------------------------------------

    async def account(self, key: str | None) -> Account:
        """The account ``key`` opens; ``Unauthenticated`` for none, an unknown key, a revoked
        or replaced one."""
        if key is None:
            raise missing_key()
        if not is_api_key(key):
            raise bad_key()
        digest = key_hash(key)
        remembered = self._accounts.get(digest)
        if remembered is not None:
            confirmed = self._confirmed(digest)
            if confirmed is True:
                return remembered
            if confirmed is False:
                self._accounts.pop(digest, None)
                raise bad_key()
        generation = self._generation
        found = await asyncio.to_thread(self._competition.account_for_key, digest)
        if found is None:
            raise bad_key()
        if self._remembers() and generation == self._generation:
            if len(self._accounts) >= MAX_REMEMBERED:
                self._accounts.clear()
            self._accounts[digest] = found
        return found

    async def organiser(self, key: str | None) -> Account:
        """The account ``key`` opens, if it may organise games and tournaments for others (a
        player's account, never a bot's)."""
        account = await self.account(key)
        if account.kind != "player":
            raise not_an_organiser(account)
        return account

    def close(self) -> None:
        if self._check is not None:
            self._check.close()
            self._check = None

    # --- inside -----------------------------------------------------------------------------

    def _remembers(self) -> bool:
        if self.mode == "checked":
            return True
        return self.mode == "listened" and self._listening

    def _confirmed(self, digest: str) -> bool | None:
        """Whether a remembered key still opens its account: ``True``, ``False``, or ``None``
        when only the database on a worker thread can say."""
        if self.mode == "listened":
            return True if self._listening else None
        if self.mode != "checked":
            return None
        try:
            row = self._checker().execute(_CHECK, (digest,)).fetchone()
        except sqlite3.Error:
            log.warning(
                "confirming an API key on the event loop failed; asking on a thread",
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            self.close()
            return None
        return row is not None

    def _checker(self) -> sqlite3.Connection:
        if self._check is None:
            # The dialect's own reading of the URL (a path, a file: URI), on a connection in
            # autocommit mode: each read sees the latest commit and holds no snapshot.
            args, kwargs = self._engine.dialect.create_connect_args(self._engine.url)
            kwargs["check_same_thread"] = False
            conn = sqlite3.connect(*args, **kwargs)
            conn.isolation_level = None
            conn.execute(f"PRAGMA busy_timeout = {_CHECK_TIMEOUT_MS}")
            self._check = conn
        return self._check


_ACCOUNTS = AccountRow.__table__
_CHECK = (
    f"SELECT 1 FROM {_ACCOUNTS.name} WHERE {_ACCOUNTS.c.key_hash.name} = ? "
    f"AND {_ACCOUNTS.c.key_revoked_at.name} IS NULL"
)


def _mode_of(engine: Engine) -> Mode:
    dialect = engine.dialect.name
    if dialect == "postgresql":
        return "listened"
    database = engine.url.database
    if (
        dialect == "sqlite"
        and database
        and database != ":memory:"
        and "mode=memory" not in database
    ):
        return "checked"
    return "uncached"
