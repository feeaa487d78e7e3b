"""Challenges between named accounts, and each account's event stream.

- ``challenges``: one per CreateChallenge: its rules, clock, whether rated, its status
  (``open`` until every challenged account accepts, one declines, or it expires at
  ``expires_at``) and, once accepted, its game. ``status`` changes only by a conditional
  ``UPDATE ... WHERE status = 'open'``: of two processes finishing one challenge, one wins.
- ``challenge_participants``: every account at the table with its seat, the challenger too when
  it plays; ``answer`` is a challenged account's (``NULL`` until it answers).
- ``account_events``: what WatchAccount sends, numbered per account (``seq``: 1, 2, 3 ...), each
  written in the transaction of what it reports. ``accounts.event_seq`` is the account's last
  number: taking the next is an ``UPDATE ... RETURNING`` of the account's row, whose lock makes
  the numbers follow the commits (a reader never sees 6 before 5 is committed).

Revision ID: 0008
Revises: 0007
Create Date: 2027-01-05
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _timestamp(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.add_column(
        "accounts",
        sa.Column("event_seq", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    op.create_table(
        "challenges",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("challenger_id", sa.String(36), nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("time_control", sa.JSON(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("game_id", sa.String(36), nullable=True),
        sa.Column("declined_by", sa.String(36), nullable=True),
        _timestamp("created_at"),
        _timestamp("expires_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_challenges")),
        sa.ForeignKeyConstraint(
            ["challenger_id"], ["accounts.id"], name=op.f("fk_challenges_challenger_id_accounts")
        ),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_challenges_game_id_games")),
        sa.UniqueConstraint("game_id", name=op.f("uq_challenges_game_id")),
        sa.CheckConstraint(
            "status IN ('open', 'accepted', 'declined', 'expired')", name=op.f("ck_challenges_status")
        ),
    )
    op.create_index(op.f("ix_challenges_status_expires_at"), "challenges", ["status", "expires_at"])
    op.create_index(
        op.f("ix_challenges_challenger_id_created_at"), "challenges", ["challenger_id", "created_at"]
    )
    op.create_table(
        "challenge_participants",
        sa.Column("challenge_id", sa.String(36), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.String(36), nullable=False),
        sa.Column("challenger", sa.Boolean(), nullable=False),
        sa.Column("answer", sa.String(16), nullable=True),
        sa.PrimaryKeyConstraint("challenge_id", "seat", name=op.f("pk_challenge_participants")),
        sa.ForeignKeyConstraint(
            ["challenge_id"],
            ["challenges.id"],
            name=op.f("fk_challenge_participants_challenge_id_challenges"),
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_challenge_participants_account_id_accounts")
        ),
        sa.UniqueConstraint(
            "challenge_id", "account_id", name=op.f("uq_challenge_participants_challenge_id_account_id")
        ),
        sa.CheckConstraint(
            "answer IS NULL OR answer IN ('accepted', 'declined')",
            name=op.f("ck_challenge_participants_answer"),
        ),
    )
    op.create_index(
        op.f("ix_challenge_participants_account_id"), "challenge_participants", ["account_id"]
    )
    op.create_table(
        "account_events",
        sa.Column("account_id", sa.String(36), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        _timestamp("created_at"),
        sa.PrimaryKeyConstraint("account_id", "seq", name=op.f("pk_account_events")),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_account_events_account_id_accounts")
        ),
        sa.CheckConstraint("seq >= 1", name=op.f("ck_account_events_seq")),
    )


def downgrade() -> None:
    op.drop_table("account_events")
    op.drop_index(op.f("ix_challenge_participants_account_id"), "challenge_participants")
    op.drop_table("challenge_participants")
    op.drop_index(op.f("ix_challenges_challenger_id_created_at"), "challenges")
    op.drop_index(op.f("ix_challenges_status_expires_at"), "challenges")
    op.drop_table("challenges")
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("event_seq")
