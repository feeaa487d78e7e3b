"""Swiss tournaments: their rounds, each round's pairing written once.

- ``tournaments.rounds``: the rounds a Swiss tournament plays (0: a round-robin tournament,
  whose schedule is made whole when it is created). The tournaments made before this revision
  are round robins: they get 0.
- ``tournament_games.round``: the Swiss round a game belongs to, from 1 (0: round robin).
  A round's games are written when the round is paired, not when the tournament is made.
- ``tournament_rounds``: each Swiss round paired, with its bye (the entrant who sits out and
  scores as a win; none with an even number of entrants). Written in the transaction that
  writes the round's games, under the tournament row's lock; its key ``(tournament_id,
  round)`` makes pairing a round twice impossible, whatever the processes or restarts.

Plain ``ADD COLUMN``s with defaults and a new table: no table rebuild on SQLite, no rewrite on
PostgreSQL.

Revision ID: 0012
Revises: 0011
Create Date: 2027-01-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "tournaments",
        sa.Column("rounds", sa.Integer(), nullable=False, server_default="0"),
    )
    op.add_column(
        "tournament_games",
        sa.Column("round", sa.Integer(), nullable=False, server_default="0"),
    )
    op.create_table(
        "tournament_rounds",
        sa.Column("tournament_id", sa.String(36), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("bye_id", sa.String(36), nullable=True),
        sa.Column("paired_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "round", name=op.f("pk_tournament_rounds")),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_rounds_tournament_id_tournaments"),
        ),
        sa.ForeignKeyConstraint(
            ["bye_id"], ["accounts.id"], name=op.f("fk_tournament_rounds_bye_id_accounts")
        ),
        sa.CheckConstraint("round >= 1", name=op.f("ck_tournament_rounds_round")),
    )


def downgrade() -> None:
    op.drop_table("tournament_rounds")
    # batch mode: SQLite drops a column by rebuilding the table.
    with op.batch_alter_table("tournament_games") as batch:
        batch.drop_column("round")
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("rounds")
