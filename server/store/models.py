"""The tables, as SQLAlchemy 2 typed declarative classes.

These classes describe the schema for queries (and for checking migrations against); the
schema itself is created only by the Alembic migrations under ``migrations/``.  When a column
changes here, a new migration must change it there: the contract tests compare the two.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

__all__ = [
    "GAME_STATUSES",
    "Base",
    "EventRow",
    "GameRow",
    "HandSeedRow",
    "RequestRow",
    "SeatRow",
    "UTCDateTime",
]

GAME_STATUSES = ("open", "playing", "finished")

# Deterministic constraint names, so migrations can refer to them on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime on every backend.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so the value is stored as
    naive UTC (fixed-width text, which also sorts correctly) and made aware again on the way
    out.  Naive datetimes are refused rather than guessed at.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: the store keeps UTC-aware times")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        bytes: LargeBinary(),
        dict[str, Any]: JSON(),
    }


class GameRow(Base):
    """One game: its settings and a summary of its log (``version`` = number of events)."""

    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    preset: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]]
    name: Mapped[str] = mapped_column(String(200))
    players: Mapped[int] = mapped_column(Integer)
    seats_taken: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("status IN ('open', 'playing', 'finished')", name="status"),
        CheckConstraint("version >= 0", name="version"),
        CheckConstraint("players >= 1", name="players"),
        CheckConstraint("seats_taken >= 0 AND seats_taken <= players", name="seats_taken"),
        # Keyset pagination of list_games, with and without a status filter.
        Index(None, "created_at", "id"),
        Index(None, "status", "created_at", "id"),
    )


class EventRow(Base):
    """One event of a game's append-only log.

    The primary key ``(game_id, seq)`` is the optimistic concurrency check: of two writers
    appending at the same version, only one can insert ``seq``.  ``hash`` is
    ``sha256(hash of event seq-1 || payload)``, starting from 32 zero bytes.
    """

    __tablename__ = "events"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    payload: Mapped[bytes]
    hash: Mapped[bytes]
    created_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("seq >= 1", name="seq"),
        CheckConstraint("length(hash) = 32", name="hash_size"),
    )


class SeatRow(Base):
    """Who sits where.  Only the sha256 of a seat's token is stored, never the token."""

    __tablename__ = "seats"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]

    __table_args__ = (
        # A token identifies exactly one seat of a game (and is how seat_for_token looks it up).
        UniqueConstraint("game_id", "token_hash"),
        CheckConstraint("seat >= 0", name="seat"),
        CheckConstraint("length(token_hash) = 64", name="token_hash_size"),
    )


class RequestRow(Base):
    """The answer to an applied client request, so a retry is answered, not applied again."""

    __tablename__ = "requests"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    request_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer)
    result_version: Mapped[int] = mapped_column(Integer)
    response: Mapped[bytes]
    created_at: Mapped[datetime]


class HandSeedRow(Base):
    """The shuffle seed of a hand: its commitment is public, the seed secret until revealed."""

    __tablename__ = "hand_seeds"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    hand_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    commitment: Mapped[bytes]
    seed: Mapped[bytes]
    revealed: Mapped[bool] = mapped_column(server_default=false())
    created_at: Mapped[datetime]

    __table_args__ = (CheckConstraint("length(commitment) = 32", name="commitment_size"),)
