"""Lasting ratings: which games are rated, each account's rating per game type, and its history.

- ``rated_games``: the mark of a rated game (``game_id``), written in the transaction that
  makes the game (a seek's table, a tournament's game, a rated challenge); ``game_type`` is
  the ruleset's family (``texas42``, ``moon``), the pool the game's ratings belong to;
  ``rated_at`` is set when its ratings were applied (``NULL``: not yet, or never: abandoned).
- ``ratings``: an account's OpenSkill rating (``mu``, ``sigma``, and ``ordinal`` = ``mu - 3
  sigma``, what the leaderboard is ordered by) in one game type and the number of rated games
  behind it.
- ``rating_changes``: one row per account per rated game, before and after. ``id`` increases
  in the order the games were rated (each game's rows are inserted once its accounts' rating
  rows are locked), which is the order a rebuild replays; unique ``(game_id, account_id)``
  makes applying a game twice impossible, whatever the processes or restarts.

New tables only: nothing existing changes.

Revision ID: 0009
Revises: 0008
Create Date: 2027-01-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rated_games",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("game_type", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_rated_games")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_rated_games_game_id_games")
        ),
    )
    # The games finished but not yet rated are found by this index, not by a scan.
    op.create_index(op.f("ix_rated_games_rated_at"), "rated_games", ["rated_at"])
    op.create_table(
        "ratings",
        sa.Column("account_id", sa.String(36), nullable=False),
        sa.Column("game_type", sa.String(32), nullable=False),
        sa.Column("mu", sa.Double(), nullable=False),
        sa.Column("sigma", sa.Double(), nullable=False),
        sa.Column("ordinal", sa.Double(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("account_id", "game_type", name=op.f("pk_ratings")),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_ratings_account_id_accounts")
        ),
        sa.CheckConstraint("games >= 0", name=op.f("ck_ratings_games")),
    )
    # The leaderboard: one game type, best ordinal first, keyset-paginated.
    op.create_index(
        op.f("ix_ratings_game_type_ordinal_account_id"),
        "ratings",
        ["game_type", "ordinal", "account_id"],
    )
    op.create_table(
        "rating_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("account_id", sa.String(36), nullable=False),
        sa.Column("game_type", sa.String(32), nullable=False),
        sa.Column("mu_before", sa.Double(), nullable=False),
        sa.Column("sigma_before", sa.Double(), nullable=False),
        sa.Column("mu_after", sa.Double(), nullable=False),
        sa.Column("sigma_after", sa.Double(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_changes")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_rating_changes_game_id_games")
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_rating_changes_account_id_accounts")
        ),
        sa.UniqueConstraint(
            "game_id", "account_id", name=op.f("uq_rating_changes_game_id_account_id")
        ),
    )
    # An account's history in one game type, in the order it was rated.
    op.create_index(
        op.f("ix_rating_changes_account_id_game_type_id"),
        "rating_changes",
        ["account_id", "game_type", "id"],
    )


def downgrade() -> None:
    op.drop_table("rating_changes")
    op.drop_table("ratings")
    op.drop_table("rated_games")
