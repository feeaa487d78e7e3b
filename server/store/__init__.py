"""The store: games as append-only, hash-chained event logs in SQLite or PostgreSQL.

The schema comes from the Alembic migrations (``boneyard.server.store.migrate.upgrade``); the
repository (``EventStore``) is the only way in.  Cross-process change notification is in
``boneyard.server.store.notify``.
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
    "VersionConflict",
    "chain_hash",
    "create_engine",
    "hash_token",
    "seed_commitment",
    "upgrade",
]
