"""The store: games as append-only, hash-chained event logs in SQLite or PostgreSQL.

The schema comes from the Alembic migrations (``boneyard.server.store.migrate.upgrade``); the
repository (``EventStore``) is the only way in, and its unit of work (``reading()``,
``writing()``, yielding a ``Transaction``) the only way to the tables for the per-concern
stores beside it (competition, challenges, ratings, keys, archive).  The one path to the
log is the writer's transaction (``boneyard.server.store.writer``).  Cross-process change
notification is in ``boneyard.server.store.notify``; nothing outside this package speaks SQL.
"""

from boneyard.records.hashing import GENESIS_HASH, chain_hash, hash_token, seed_commitment
from boneyard.server.store.db import create_engine
from boneyard.server.store.errors import (
    ChainBroken,
    DuplicateRequest,
    DuplicateToken,
    GameExists,
    GameNotFound,
    InvalidCursor,
    MigrationsNotFound,
    SeatTaken,
    SeedConflict,
    StoreError,
    VersionConflict,
)
from boneyard.server.store.migrate import upgrade
from boneyard.server.store.repository import (
    EventStore,
    GameRecord,
    GameStatus,
    RequestRecord,
    SeatRecord,
    SeedRecord,
    StoredEvent,
)
from boneyard.server.store.unit_of_work import Transaction

__all__ = [
    "GENESIS_HASH",
    "ChainBroken",
    "DuplicateRequest",
    "DuplicateToken",
    "EventStore",
    "GameExists",
    "GameNotFound",
    "GameRecord",
    "GameStatus",
    "InvalidCursor",
    "MigrationsNotFound",
    "RequestRecord",
    "SeatRecord",
    "SeatTaken",
    "SeedConflict",
    "SeedRecord",
    "StoreError",
    "StoredEvent",
    "Transaction",
    "VersionConflict",
    "chain_hash",
    "create_engine",
    "hash_token",
    "seed_commitment",
    "upgrade",
]
