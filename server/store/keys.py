"""The store's side of signed records: the server's key pair, kept in the database (the table
of migration 0005) so that every process on one database signs with the same key, and the key
outlives restarts.

Only bytes are kept here; making and using keys is ``boneyard.server.archive.signing``'s business.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from boneyard.server.store.models import SigningKeyRow
from boneyard.server.store.repository import EventStore

__all__ = ["KeyStore", "StoredKey"]


@dataclass(frozen=True, slots=True)
class StoredKey:
    algorithm: str
    private_key: bytes
    public_key: bytes


class KeyStore:
    def __init__(self, store: EventStore) -> None:
        self._store = store

    def key(self, purpose: str) -> StoredKey | None:
        """The key pair kept for ``purpose``, if there is one."""
        with self._store.reading() as session:
            row = session.get(SigningKeyRow, purpose)
            return None if row is None else _stored(row)

    def key_or_keep(self, purpose: str, candidate: StoredKey) -> StoredKey:
        """The key pair kept for ``purpose``: the one already there, or else ``candidate``,
        kept now. Race-safe: the insert does nothing when another process's key got there
        first (the primary key decides), and what is read back after it is the one key."""
        dialect = self._store.engine.dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        statement = (
            insert(SigningKeyRow)
            .values(
                purpose=purpose,
                algorithm=candidate.algorithm,
                private_key=candidate.private_key,
                public_key=candidate.public_key,
                created_at=self._store.now(),
            )
            .on_conflict_do_nothing(index_elements=["purpose"])
        )
        with self._store.writing() as session:
            session.execute(statement)
            # A new statement (READ COMMITTED on PostgreSQL): it sees the row of whichever
            # transaction won, ours or the one the insert waited for.
            row = session.execute(
                select(SigningKeyRow).where(SigningKeyRow.purpose == purpose)
            ).scalar_one()
            return _stored(row)


def _stored(row: SigningKeyRow) -> StoredKey:
    return StoredKey(row.algorithm, bytes(row.private_key), bytes(row.public_key))
