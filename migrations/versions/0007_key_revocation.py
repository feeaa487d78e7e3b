"""Revoking and rotating accounts' API keys.

Two nullable timestamps on ``accounts``:

- ``key_revoked_at``: when ``boneyard-server admin revoke`` revoked the account's key; while it
  is set the key authenticates nothing (the row keeps the key's hash, so revoking it again
  can say it was revoked already). ``NULL``: the key works.
- ``key_rotated_at``: when ``boneyard-server admin rotate`` last gave the account a new key
  (``key_hash`` then holds the new key's hash; the old key's hash is gone, so the old key is
  simply unknown). ``NULL``: the account still has the key it was created with.

The account itself, its seats, ratings and history are untouched by either. Plain
``ADD COLUMN`` of nullable columns: no table rebuild on SQLite, no rewrite on PostgreSQL, and
existing accounts keep working keys.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-20
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "accounts", sa.Column("key_revoked_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column(
        "accounts", sa.Column("key_rotated_at", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    # batch mode: SQLite drops a column by rebuilding the table.
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("key_rotated_at")
        batch.drop_column("key_revoked_at")
