"""The accounts of API keys, remembered for calls on the event loop (``KeyCache``), with a
revoked or rotated key still refused at the next call: on a SQLite file by a read of the key's
row on the loop, on PostgreSQL by the listener's word (``forget``, ``listening``).

The real processes (``boneyard-server admin`` revoking while servers run, on SQLite and across
two processes on PostgreSQL) are in test_key_revocation.py."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from process_helpers import fresh_pg_database
from sqlalchemy import update

from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.competition.key_cache import KeyCache
from boneyard.server.errors import PermissionDenied, Unauthenticated
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.key_check import SqliteKeyCheck
from boneyard.server.store.models import AccountRow


class Counted(CompetitionStore):
    """The store, counting how often the database is asked for a key on a thread."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.asked = 0

    def account_for_key(self, key_hash: str):  # type: ignore[no-untyped-def]
        self.asked += 1
        return super().account_for_key(key_hash)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[EventStore]:
    store = EventStore.open(f"sqlite:///{tmp_path / 'keys.db'}", migrate=True)
    yield store
    store.close()


@pytest.fixture
def pg_store(postgres_url: str) -> Iterator[EventStore]:
    with fresh_pg_database(postgres_url, "boneyard_keys") as url:
        store = EventStore.open(url, migrate=True)
        yield store
        store.close()


def _bot(competition: CompetitionStore, kind: str = "bot") -> tuple[str, str]:
    """A new account: its id and its key."""
    key = new_api_key()
    account = competition.create_account(
        str(uuid.uuid4()), f"a-{uuid.uuid4().hex[:8]}", kind, key_hash(key)
    )  # type: ignore[arg-type]
    return account.id, key


def _refused(cache: KeyCache, key: str | None) -> str:
    with pytest.raises(Unauthenticated) as refused:
        asyncio.run(cache.account(key))
    return refused.value.reason  # type: ignore[no-any-return]


def test_on_a_sqlite_file_a_key_seen_once_is_not_looked_up_on_a_thread_again(
    sqlite_store: EventStore,
) -> None:
    competition = Counted(sqlite_store)
    cache = KeyCache(competition, sqlite_store)
    account_id, key = _bot(competition)
    assert cache.mode == "checked"
    for _ in range(5):
        assert asyncio.run(cache.account(key)).id == account_id
    assert competition.asked == 1
    cache.close()


def test_on_a_sqlite_file_a_remembered_key_revoked_by_another_process_is_refused_at_the_next_call(
    sqlite_store: EventStore, tmp_path: Path
) -> None:
    competition = Counted(sqlite_store)
    cache = KeyCache(competition, sqlite_store)
    account_id, key = _bot(competition)
    asyncio.run(cache.account(key))
    # Another process on the same file (boneyard-server admin), which cannot tell the server.
    elsewhere = EventStore.open(str(sqlite_store.engine.url), migrate=False)
    try:
        CompetitionStore(elsewhere).revoke_key(account_id)
    finally:
        elsewhere.close()
    assert _refused(cache, key) == "BAD_API_KEY"
    assert _refused(cache, key) == "BAD_API_KEY"
    cache.close()


def test_on_a_sqlite_file_a_rotated_key_is_refused_and_the_new_one_opens_the_account(
    sqlite_store: EventStore,
) -> None:
    competition = Counted(sqlite_store)
    cache = KeyCache(competition, sqlite_store)
    account_id, old = _bot(competition)
    asyncio.run(cache.account(old))
    new = new_api_key()
    CompetitionStore(sqlite_store).rotate_key(account_id, key_hash(new))
    assert _refused(cache, old) == "BAD_API_KEY"
    assert asyncio.run(cache.account(new)).id == account_id
    cache.close()


def test_on_a_sqlite_file_a_confirmed_key_is_not_read_again_until_a_key_changes(
    sqlite_store: EventStore,
) -> None:
    """Each read of a key's row costs more the more the server commits: a key read as current
    stands while no key has changed (the marker beside the file keeps its size); any change
    made through the store, in any process, grows the marker and every key is read again."""
    competition = CompetitionStore(sqlite_store)
    account_id, key = _bot(competition)
    other_id, other_key = _bot(competition)
    check = SqliteKeyCheck(sqlite_store.engine)
    reads: list[str] = []
    connect = check._connection

    def counted() -> Any:
        reads.append("read")
        return connect()

    check._connection = counted  # type: ignore[method-assign]
    digest = key_hash(key)
    assert [check.current(digest) for _ in range(5)] == [True] * 5
    assert len(reads) == 1
    # Revoked behind the store's back (SQL typed into the file): not seen while no key
    # changes through the store...
    with sqlite_store.engine.begin() as conn:
        conn.execute(
            update(AccountRow)
            .where(AccountRow.id == account_id)
            .values(key_revoked_at=sqlite_store.now())
        )
    assert check.current(digest) is True
    assert len(reads) == 1
    # ... and seen with the next change of any key through the store, in any process.
    elsewhere = EventStore.open(str(sqlite_store.engine.url), migrate=False)
    try:
        CompetitionStore(elsewhere).revoke_key(other_id)
    finally:
        elsewhere.close()
    assert check.current(digest) is False
    assert check.current(key_hash(other_key)) is False
    assert len(reads) == 3
    check.close()


def test_no_key_an_unknown_key_and_a_seat_token_are_refused_and_nothing_is_remembered(
    sqlite_store: EventStore,
) -> None:
    competition = Counted(sqlite_store)
    cache = KeyCache(competition, sqlite_store)
    assert _refused(cache, None) == "API_KEY_REQUIRED"
    assert _refused(cache, new_api_key()) == "BAD_API_KEY"
    assert _refused(cache, new_api_key()) == "BAD_API_KEY"
    assert _refused(cache, "a-seat-token") == "BAD_API_KEY"
    assert competition.asked == 2  # the unknown keys, each asked, neither remembered
    cache.close()


def test_only_a_players_account_organises(sqlite_store: EventStore) -> None:
    competition = Counted(sqlite_store)
    cache = KeyCache(competition, sqlite_store)
    _, bot = _bot(competition)
    player_id, player = _bot(competition, "player")
    assert asyncio.run(cache.organiser(player)).id == player_id
    with pytest.raises(PermissionDenied, match="is a bot account"):
        asyncio.run(cache.organiser(bot))
    cache.close()


@pytest.mark.postgres
def test_on_postgresql_keys_are_remembered_only_while_the_listener_is_connected(
    pg_store: EventStore,
) -> None:
    competition = Counted(pg_store)
    cache = KeyCache(competition, pg_store)
    _, key = _bot(competition)
    assert cache.mode == "listened"
    asyncio.run(cache.account(key))
    asyncio.run(cache.account(key))
    assert competition.asked == 2  # no listener: every call asks the database
    cache.listening(True)
    asyncio.run(cache.account(key))
    asyncio.run(cache.account(key))
    assert competition.asked == 3
    cache.listening(False)  # what is said while it is away would be lost
    asyncio.run(cache.account(key))
    assert competition.asked == 4


@pytest.mark.postgres
def test_on_postgresql_a_revocation_the_listener_tells_is_refused_at_the_next_call(
    pg_store: EventStore,
) -> None:
    competition = Counted(pg_store)
    cache = KeyCache(competition, pg_store)
    cache.listening(True)
    account_id, key = _bot(competition)
    asyncio.run(cache.account(key))
    CompetitionStore(pg_store).revoke_key(account_id)
    cache.forget()  # the "r:<account id>" notification, as the server's listener hands it on
    assert _refused(cache, key) == "BAD_API_KEY"


@pytest.mark.postgres
def test_on_postgresql_a_lookup_in_flight_when_a_revocation_is_told_is_not_remembered(
    pg_store: EventStore,
) -> None:
    competition = Counted(pg_store)
    cache = KeyCache(competition, pg_store)
    cache.listening(True)
    account_id, key = _bot(competition)

    async def race() -> None:
        looking = asyncio.create_task(cache.account(key))
        await asyncio.sleep(0)  # the lookup has begun on its thread
        cache.forget()
        await looking

    asyncio.run(race())
    asked = competition.asked
    CompetitionStore(pg_store).revoke_key(account_id)
    assert _refused(cache, key) == "BAD_API_KEY"
    assert competition.asked == asked + 1
