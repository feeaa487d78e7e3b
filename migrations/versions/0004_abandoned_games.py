"""Games nobody finishes end as 'abandoned': the status check of games allows it.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = "status IN ('open', 'playing', 'finished')"
_AFTER = "status IN ('open', 'playing', 'finished', 'abandoned')"


def _status_check(condition: str) -> None:
    # SQLite cannot alter a constraint: batch mode copies the table (the naming convention
    # of the models gives the constraint its name, ck_games_status).
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint(op.f("ck_games_status"), type_="check")
        batch.create_check_constraint("status", condition)


def upgrade() -> None:
    _status_check(_AFTER)


def downgrade() -> None:
    op.execute("UPDATE games SET status = 'finished' WHERE status = 'abandoned'")
    _status_check(_BEFORE)
