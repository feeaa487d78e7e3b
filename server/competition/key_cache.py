"""Which account an API key opens, answered on the event loop, with revocation still
immediate.

A bot account's key comes with every call it makes; asking the database each time cost a
thread hop and a query per call (a third of a tournament action's CPU). The accounts of keys
seen are remembered here, by the key's SHA-256 (never the key), and forgotten when a key may
have changed, so a revoked or rotated key is refused at once:

- **SQLite** (one file, perhaps changed by ``boneyard-server admin`` from another process):
  each use of a remembered key is confirmed by one indexed read of its row on a connection
  of the cache's own, on the event loop (no thread, no SQLAlchemy), unless no key has changed
  since the last such read, which the marker file every key change writes beside the
  database says at the cost of a memory read (``store.key_check``). A revoked or replaced
  key is refused by that read.
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
from typing import Literal

from boneyard.server.competition.accounts import is_api_key, key_hash
from boneyard.server.errors import PermissionDenied, Unauthenticated
from boneyard.server.store.competition import Account, CompetitionStore
from boneyard.server.store.key_check import SqliteKeyCheck, is_local_file
from boneyard.server.store.repository import EventStore

__all__ = ["MAX_REMEMBERED", "KeyCache", "bad_key", "not_an_organiser"]

MAX_REMEMBERED = 10_000
"""Keys remembered at most (only keys that opened an account are; past this the cache starts
again empty rather than grow with the accounts of a large server)."""

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

    def __init__(self, competition: CompetitionStore, store: EventStore) -> None:
        self._competition = competition
        self._accounts: dict[str, Account] = {}
        self._generation = 0
        """Moved by every ``forget``: a lookup begun before it is not remembered."""
        self._listening = False
        self.mode: Mode = _mode_of(store)
        self._check = SqliteKeyCheck(store.engine) if self.mode == "checked" else None

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
        if self._check is None:
            return None
        return self._check.current(digest)


def _mode_of(store: EventStore) -> Mode:
    if store.engine.dialect.name == "postgresql":
        return "listened"
    return "checked" if is_local_file(store.engine) else "uncached"
