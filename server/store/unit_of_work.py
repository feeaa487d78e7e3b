"""The store's unit of work: one transaction, handed out by ``EventStore.reading()`` and
``EventStore.writing()``.

Every per-concern store (competition, challenges, ratings, keys, the archive) opens its
transactions through those two, so that all of them share one engine, one clock and one way
to begin (``BEGIN IMMEDIATE`` for SQLite writers, see ``boneyard.server.store.db``). A caller
above the store that must write its own bookkeeping in another's transaction (``also`` of
``EventStore.create_game``: a seek's seats, a tournament's link, a rating mark) is handed the
``Transaction`` and only gives it back to the store's functions: what it is made of
(a SQLAlchemy ``Session``) is the store's business.
"""

from __future__ import annotations

from typing import TypeAlias

from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

__all__ = ["Transaction", "WriteConnection"]

Transaction: TypeAlias = Session
"""One open transaction of the store."""

WriteConnection: TypeAlias = Connection
"""A connection with a write transaction open (the writer's batch, ``Writer.call``): code
above the store hands it on to the store's functions (``take_seat(..., conn=...)``) and does
nothing else with it."""
