"""Matches between two accounts on duplicate deals, and an account holding a partnership's seats.

- ``matches``: one per CreateMatch: its entrants (A, B), rules, clock, what a deal's figure
  counts (``scoring``), the deals at most (``max_deals``: those asked for, or an SPRT's cap),
  the SPRT's hypotheses and error rates (``sprt_*``, all set or none), the games it keeps in
  flight, its status, the secret its deals are dealt from, and once reached the SPRT's verdict
  with the deals and the LLR it was reached at (written once: ``WHERE verdict IS NULL``).
- ``match_games``: each playing's game, written in the transaction that makes the game; its
  key ``(match_id, deal, playing)`` makes each playing's game unique across processes.
- ``match_deals``: each deal counted, once both its playings are over, with what each entrant
  scored over them; its key ``(match_id, deal)`` makes counting a deal twice impossible.

And ``seat_accounts`` loses its unique ``(game_id, account_id)``: a match's entrant in Texas 42
is a partnership, its account holding both partners' seats (the server checks they are one
team's; no other game reserves an account two seats). SQLite rebuilds the table to drop a
constraint (batch mode); its rows are kept.

Revision ID: 0011
Revises: 0010
Create Date: 2027-01-20
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamp(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "matches",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("organiser_id", sa.String(36), nullable=False),
        sa.Column("entrant_a", sa.String(36), nullable=False),
        sa.Column("entrant_b", sa.String(36), nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("time_control", sa.JSON(), nullable=False),
        sa.Column("scoring", sa.String(8), nullable=False),
        sa.Column("max_deals", sa.Integer(), nullable=False),
        sa.Column("sprt_m0", sa.Double(), nullable=True),
        sa.Column("sprt_m1", sa.Double(), nullable=True),
        sa.Column("sprt_alpha", sa.Double(), nullable=True),
        sa.Column("sprt_beta", sa.Double(), nullable=True),
        sa.Column("max_in_flight", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(16), nullable=True),
        sa.Column("deals_at_verdict", sa.Integer(), nullable=True),
        sa.Column("llr_at_verdict", sa.Double(), nullable=True),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_matches")),
        sa.ForeignKeyConstraint(
            ["organiser_id"], ["accounts.id"], name=op.f("fk_matches_organiser_id_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["entrant_a"], ["accounts.id"], name=op.f("fk_matches_entrant_a_accounts")
        ),
        sa.ForeignKeyConstraint(
            ["entrant_b"], ["accounts.id"], name=op.f("fk_matches_entrant_b_accounts")
        ),
        sa.CheckConstraint(
            "status IN ('running', 'finished', 'cancelled')", name=op.f("ck_matches_status")
        ),
        sa.CheckConstraint("scoring IN ('marks', 'points')", name=op.f("ck_matches_scoring")),
        sa.CheckConstraint(
            "verdict IN ('stronger', 'not_stronger')", name=op.f("ck_matches_verdict")
        ),
        sa.CheckConstraint("max_deals >= 1", name=op.f("ck_matches_max_deals")),
        sa.CheckConstraint("max_in_flight >= 2", name=op.f("ck_matches_max_in_flight")),
        sa.CheckConstraint("entrant_a <> entrant_b", name=op.f("ck_matches_entrants")),
    )
    # The director looks for the running matches; ListMatches pages by (created_at, id).
    op.create_index(op.f("ix_matches_status"), "matches", ["status"])
    op.create_index(op.f("ix_matches_created_at_id"), "matches", ["created_at", "id"])
    op.create_table(
        "match_games",
        sa.Column("match_id", sa.String(36), nullable=False),
        sa.Column("deal", sa.Integer(), nullable=False),
        sa.Column("playing", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.String(36), nullable=False),
        sa.PrimaryKeyConstraint("match_id", "deal", "playing", name=op.f("pk_match_games")),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_match_games_match_id_matches")
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_match_games_game_id_games")
        ),
        sa.UniqueConstraint("game_id", name=op.f("uq_match_games_game_id")),
        sa.CheckConstraint("playing IN (0, 1)", name=op.f("ck_match_games_playing")),
    )
    op.create_table(
        "match_deals",
        sa.Column("match_id", sa.String(36), nullable=False),
        sa.Column("deal", sa.Integer(), nullable=False),
        sa.Column("score_a", sa.Integer(), nullable=False),
        sa.Column("score_b", sa.Integer(), nullable=False),
        _timestamp("counted_at"),
        sa.PrimaryKeyConstraint("match_id", "deal", name=op.f("pk_match_deals")),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_match_deals_match_id_matches")
        ),
    )
    # SQLite cannot drop a constraint: batch mode copies the table.
    with op.batch_alter_table("seat_accounts") as batch:
        batch.drop_constraint(op.f("uq_seat_accounts_game_id_account_id"), type_="unique")


def downgrade() -> None:
    # An account holding two seats of a game (a match's) cannot go back under the old key.
    op.execute(
        "DELETE FROM seat_accounts WHERE EXISTS (SELECT 1 FROM seat_accounts other "
        "WHERE other.game_id = seat_accounts.game_id "
        "AND other.account_id = seat_accounts.account_id AND other.seat < seat_accounts.seat)"
    )
    with op.batch_alter_table("seat_accounts") as batch:
        batch.create_unique_constraint(
            op.f("uq_seat_accounts_game_id_account_id"), ["game_id", "account_id"]
        )
    op.drop_table("match_deals")
    op.drop_table("match_games")
    op.drop_index(op.f("ix_matches_created_at_id"), table_name="matches")
    op.drop_index(op.f("ix_matches_status"), table_name="matches")
    op.drop_table("matches")
