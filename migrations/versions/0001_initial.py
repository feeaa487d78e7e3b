"""Initial schema: games, events, seats, requests, hand_seeds.

Revision ID: 0001
Revises:
Create Date: 2024-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamp(name: str) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("seats_taken", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        _timestamp("created_at"),
        _timestamp("updated_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
        sa.CheckConstraint(
            "status IN ('open', 'playing', 'finished')", name=op.f("ck_games_status")
        ),
        sa.CheckConstraint("version >= 0", name=op.f("ck_games_version")),
        sa.CheckConstraint("players >= 1", name=op.f("ck_games_players")),
        sa.CheckConstraint(
            "seats_taken >= 0 AND seats_taken <= players", name=op.f("ck_games_seats_taken")
        ),
    )
    op.create_index(op.f("ix_games_created_at_id"), "games", ["created_at", "id"])
    op.create_index(op.f("ix_games_status_created_at_id"), "games", ["status", "created_at", "id"])

    op.create_table(
        "events",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("hash", sa.LargeBinary(), nullable=False),
        _timestamp("created_at"),
        # The optimistic concurrency check: one row per (game, seq).
        sa.PrimaryKeyConstraint("game_id", "seq", name=op.f("pk_events")),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_events_game_id_games")),
        sa.CheckConstraint("seq >= 1", name=op.f("ck_events_seq")),
        sa.CheckConstraint("length(hash) = 32", name=op.f("ck_events_hash_size")),
    )

    op.create_table(
        "seats",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_name", sa.String(100), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("game_id", "seat", name=op.f("pk_seats")),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_seats_game_id_games")),
        sa.UniqueConstraint("game_id", "token_hash", name=op.f("uq_seats_game_id_token_hash")),
        sa.CheckConstraint("seat >= 0", name=op.f("ck_seats_seat")),
        sa.CheckConstraint("length(token_hash) = 64", name=op.f("ck_seats_token_hash_size")),
    )

    op.create_table(
        "requests",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("request_id", sa.String(128), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("result_version", sa.Integer(), nullable=False),
        sa.Column("response", sa.LargeBinary(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("game_id", "request_id", name=op.f("pk_requests")),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_requests_game_id_games")),
    )

    op.create_table(
        "hand_seeds",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("hand_number", sa.Integer(), nullable=False),
        sa.Column("commitment", sa.LargeBinary(), nullable=False),
        sa.Column("seed", sa.LargeBinary(), nullable=False),
        sa.Column("revealed", sa.Boolean(), server_default=sa.false(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("game_id", "hand_number", name=op.f("pk_hand_seeds")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_hand_seeds_game_id_games")
        ),
        sa.CheckConstraint("length(commitment) = 32", name=op.f("ck_hand_seeds_commitment_size")),
    )


def downgrade() -> None:
    op.drop_table("hand_seeds")
    op.drop_table("requests")
    op.drop_table("seats")
    op.drop_table("events")
    op.drop_index(op.f("ix_games_status_created_at_id"), table_name="games")
    op.drop_index(op.f("ix_games_created_at_id"), table_name="games")
    op.drop_table("games")
