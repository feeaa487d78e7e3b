"""Alembic environment for Boneyard.

Configured in code by ``boneyard.server.store.migrate`` (no ``alembic.ini``): it passes an open
connection in ``config.attributes["connection"]``, or a URL as ``sqlalchemy.url``.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from boneyard.server.store.db import WRITE, create_engine
from boneyard.server.store.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things in place; batch mode copies the table instead.
        render_as_batch=True,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no connection and no sqlalchemy.url given to the migrations")
    engine = create_engine(url)
    try:
        with engine.connect().execution_options(**{WRITE: True}) as conn:
            _run(conn)
            conn.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
