"""House bots: the seats the server plays itself, and each one's strategy.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-15
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A house seat is a taken seat (its row in seats holds a token nobody is told), so the key
    # refers to the seat itself, like a seat reserved for an account.
    op.create_table(
        "house_bots",
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("strategy", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seat", name=op.f("pk_house_bots")),
        sa.ForeignKeyConstraint(
            ["game_id", "seat"],
            ["seats.game_id", "seats.seat"],
            name=op.f("fk_house_bots_game_id_seats"),
        ),
    )


def downgrade() -> None:
    op.drop_table("house_bots")
