"""Competitions: accounts, seats reserved for accounts, clocks, fixed deals, seeks and
tournaments. Only new tables: nothing of 0001 changes.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamp(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
        sa.UniqueConstraint("name", name=op.f("uq_accounts_name")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_accounts_key_hash")),
        sa.CheckConstraint("kind IN ('bot', 'player')", name=op.f("ck_accounts_kind")),
        sa.CheckConstraint("length(key_hash) = 64", name=op.f("ck_accounts_key_hash_size")),
    )

    op.create_table(
        "seat_accounts",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.String(36), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seat", name=op.f("pk_seat_accounts")),
        sa.ForeignKeyConstraint(
            ["game_id", "seat"], ["seats.game_id", "seats.seat"],
            name=op.f("fk_seat_accounts_game_id_seats"),
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_seat_accounts_account_id_accounts")
        ),
        sa.UniqueConstraint("game_id", "account_id", name=op.f("uq_seat_accounts_game_id_account_id")),
    )
    op.create_index(op.f("ix_seat_accounts_account_id"), "seat_accounts", ["account_id"])

    op.create_table(
        "game_clocks",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("per_move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("policy", sa.String(16), nullable=False),
        sa.Column("banks", sa.JSON(), nullable=False),
        sa.Column("turn_seat", sa.Integer(), nullable=True),
        sa.Column("turn_version", sa.Integer(), nullable=False),
        _timestamp("turn_started_at", nullable=True),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_game_clocks")),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_game_clocks_game_id_games")),
        sa.CheckConstraint(
            "policy IN ('auto_play', 'forfeit')", name=op.f("ck_game_clocks_policy")
        ),
        sa.CheckConstraint("per_move_ms > 0 AND bank_ms >= 0", name=op.f("ck_game_clocks_times")),
    )

    op.create_table(
        "game_deals",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_game_deals")),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_game_deals_game_id_games")),
    )

    op.create_table(
        "seeks",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("account_id", sa.String(36), nullable=False),
        sa.Column("table_key", sa.String(2000), nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("time_control", sa.JSON(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("game_id", sa.String(36), nullable=True),
        sa.Column("seat", sa.Integer(), nullable=True),
        _timestamp("created_at"),
        _timestamp("seen_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seeks")),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"], name=op.f("fk_seeks_account_id_accounts")),
        sa.CheckConstraint(
            "status IN ('waiting', 'seated', 'cancelled')", name=op.f("ck_seeks_status")
        ),
    )
    op.create_index(
        op.f("ix_seeks_status_table_key_created_at"), "seeks", ["status", "table_key", "created_at"]
    )

    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("organiser_id", sa.String(36), nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("deals", sa.Integer(), nullable=False),
        sa.Column("duplicate", sa.Boolean(), nullable=False),
        sa.Column("format", sa.String(32), nullable=False),
        sa.Column("time_control", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
        sa.ForeignKeyConstraint(
            ["organiser_id"], ["accounts.id"], name=op.f("fk_tournaments_organiser_id_accounts")
        ),
        sa.CheckConstraint(
            "status IN ('created', 'running', 'finished', 'cancelled')",
            name=op.f("ck_tournaments_status"),
        ),
        sa.CheckConstraint("deals >= 1", name=op.f("ck_tournaments_deals")),
    )

    op.create_table(
        "tournament_entrants",
        sa.Column("tournament_id", sa.String(36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.String(36), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "position", name=op.f("pk_tournament_entrants")),
        sa.ForeignKeyConstraint(
            ["tournament_id"], ["tournaments.id"],
            name=op.f("fk_tournament_entrants_tournament_id_tournaments"),
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_tournament_entrants_account_id_accounts")
        ),
        sa.UniqueConstraint(
            "tournament_id", "account_id", name=op.f("uq_tournament_entrants_tournament_id_account_id")
        ),
    )

    op.create_table(
        "tournament_games",
        sa.Column("tournament_id", sa.String(36), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("deal", sa.Integer(), nullable=False),
        sa.Column("rotation", sa.Integer(), nullable=False),
        sa.Column("seating", sa.JSON(), nullable=False),
        sa.Column("game_id", sa.String(36), nullable=True),
        sa.PrimaryKeyConstraint("tournament_id", "number", name=op.f("pk_tournament_games")),
        sa.ForeignKeyConstraint(
            ["tournament_id"], ["tournaments.id"],
            name=op.f("fk_tournament_games_tournament_id_tournaments"),
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_tournament_games_game_id_games")
        ),
        sa.UniqueConstraint("game_id", name=op.f("uq_tournament_games_game_id")),
    )


def downgrade() -> None:
    op.drop_table("tournament_games")
    op.drop_table("tournament_entrants")
    op.drop_table("tournaments")
    op.drop_index(op.f("ix_seeks_status_table_key_created_at"), table_name="seeks")
    op.drop_table("seeks")
    op.drop_table("game_deals")
    op.drop_table("game_clocks")
    op.drop_index(op.f("ix_seat_accounts_account_id"), table_name="seat_accounts")
    op.drop_table("seat_accounts")
    op.drop_table("accounts")
