"""The server's key pair for signing records: one row per purpose ("records"), made on first
start. Only a new table: nothing before it changes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "signing_keys",
        sa.Column("purpose", sa.String(32), nullable=False),
        sa.Column("algorithm", sa.String(16), nullable=False),
        sa.Column("private_key", sa.LargeBinary(), nullable=False),
        sa.Column("public_key", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("purpose", name=op.f("pk_signing_keys")),
        sa.CheckConstraint("algorithm IN ('ed25519')", name=op.f("ck_signing_keys_algorithm")),
        sa.CheckConstraint(
            "length(private_key) = 32 AND length(public_key) = 32",
            name=op.f("ck_signing_keys_key_sizes"),
        ),
    )


def downgrade() -> None:
    op.drop_table("signing_keys")
