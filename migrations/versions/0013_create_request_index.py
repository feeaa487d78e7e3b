"""Only CreateGame's request ids are indexed by themselves.

``ix_requests_request_id`` indexed every request's id, so every action's commit wrote a page
of it at a random place (request ids are random) besides the game's own pages, in an index
that grows with every action ever played. Only a CreateGame's request is ever looked up by its id alone (before
there is a game to look in); an action's is found by its game and its id, the primary key. The
index is now partial: the requests whose id begins with CreateGame's prefix ("\\x1ecreate:").

Revision ID: 0013
Revises: 0012
Create Date: 2027-02-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out, not imported: a revision stays what it was when it was written.
_CREATE_REQUESTS = "request_id >= '\x1ecreate:' AND request_id < '\x1ecreate;'"


def upgrade() -> None:
    op.drop_index("ix_requests_request_id", table_name="requests")
    op.create_index(
        "ix_requests_create_request_id",
        "requests",
        ["request_id"],
        sqlite_where=sa.text(_CREATE_REQUESTS),
        postgresql_where=sa.text(_CREATE_REQUESTS),
    )


def downgrade() -> None:
    op.drop_index("ix_requests_create_request_id", table_name="requests")
    op.create_index("ix_requests_request_id", "requests", ["request_id"])
