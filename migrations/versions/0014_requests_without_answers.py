"""A request's row no longer holds a copy of its answer.

``requests.response`` held the answer to an action (its version and the acting seat's view,
about 250 bytes, five times the action's events with their hashes) so that a retry with the
same request id got the same bytes, and every other request wrote it empty. The server now
makes a retried action's answer again from the log at the version the request produced (the
answer is a function of the log), so the column goes: the rows keep the seat and the version.

PostgreSQL drops the column without rewriting the table. SQLite (3.35 and later: Python 3.11
ships later) drops it with ``ALTER TABLE ... DROP COLUMN``, which rewrites the table's rows
once, keeping its indexes (the partial index of CreateGame's request ids among them).

Revision ID: 0014
Revises: 0013
Create Date: 2027-02-10
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_column("requests", "response")


def downgrade() -> None:
    # Back as it was, empty for every row (the answers are gone); a default is needed to add
    # a NOT NULL column to rows already there, and is left in place.
    empty = "X''" if op.get_bind().dialect.name == "sqlite" else "''::bytea"
    op.add_column(
        "requests",
        sa.Column("response", sa.LargeBinary(), nullable=False, server_default=sa.text(empty)),
    )
