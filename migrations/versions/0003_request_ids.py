"""Request ids of CreateGame are looked up by themselves: an index on requests.request_id.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_requests_request_id", "requests", ["request_id"])


def downgrade() -> None:
    op.drop_index("ix_requests_request_id", table_name="requests")
