"""How many games of a tournament an entrant may be in at once.

One column on ``tournaments``:

- ``max_games_per_entrant``: the most unfinished games of the tournament one entrant may be
  in at once; the director starts every deal it may, in order, within it (checked again in
  the transaction that makes each game, under the tournament row's lock). 1 is one deal at a
  time, as every tournament was played before this revision: the tournaments already made
  get 1 (the server default), so they go on as they began. New ones get what their organiser
  asked for (8 unless said), bounded 1..64 by the API.

A plain ``ADD COLUMN`` with a default: no table rebuild on SQLite, no rewrite on PostgreSQL.

Revision ID: 0010
Revises: 0009
Create Date: 2027-01-20
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "tournaments",
        sa.Column("max_games_per_entrant", sa.Integer(), nullable=False, server_default="1"),
    )


def downgrade() -> None:
    # batch mode: SQLite drops a column by rebuilding the table.
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("max_games_per_entrant")
