"""Bring a database's schema up to date with the Alembic migrations under ``migrations/``.

The Alembic configuration is built in code (no ``alembic.ini``).  The migrations ship inside
the distribution as the package ``boneyard.migrations`` (``migrations/`` of the repository,
mapped by pyproject.toml), so an installed wheel and an editable install both find them with
no setting.  ``$BONEYARD_MIGRATIONS_DIR``, when set, overrides that: a directory holding
``env.py`` and ``versions/`` (an operator's patched copy, say).

From a shell: ``python -m boneyard.server.store sqlite:///boneyard.db``.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import URL, Engine, make_url

from boneyard.server.store.db import WRITE, create_engine, is_postgresql
from boneyard.server.store.errors import MigrationsNotFound

__all__ = ["alembic_config", "current_revision", "migrations_dir", "upgrade"]

log = logging.getLogger(__name__)

#: Key of ``pg_advisory_xact_lock`` held while migrating, so that several server processes
#: starting at once on one PostgreSQL database migrate one after the other.
_PG_MIGRATION_LOCK = 0x626F6E6579617264  # b"boneyard"


def migrations_dir() -> Path:
    """The directory holding ``env.py`` and ``versions/``."""
    override = os.environ.get("BONEYARD_MIGRATIONS_DIR")
    if override:
        candidates = [Path(override)]
    else:
        candidates = _package_dirs()
    for candidate in candidates:
        if (candidate / "env.py").is_file() and (candidate / "versions").is_dir():
            return candidate
    raise MigrationsNotFound([str(c) for c in candidates])


def _package_dirs() -> list[Path]:
    """Where ``boneyard.migrations`` is: its folder in site-packages, or ``migrations/`` of the
    checkout under an editable install. Found without importing it (importing ``env.py``'s
    package would be harmless, but Alembic loads the files by path anyway)."""
    spec = importlib.util.find_spec("boneyard.migrations")
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(location) for location in spec.submodule_search_locations]


def alembic_config(url: str | URL | None = None) -> Config:
    """An Alembic ``Config`` for our migrations (``url`` is used when no connection is given)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    if url is not None:
        # ConfigParser interpolation: a literal % must be doubled.
        rendered = make_url(url).render_as_string(hide_password=False)
        cfg.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
    return cfg


def upgrade(url: str | URL, revision: str = "head", *, engine: Engine | None = None) -> None:
    """Run ``alembic upgrade <revision>`` against ``url`` (or an engine already made for it).

    Safe to call from several processes at once: on PostgreSQL an advisory lock serialises
    them, on SQLite the write lock does.  A no-op when the schema is already at ``revision``.
    """
    own_engine = engine is None
    eng = create_engine(url) if engine is None else engine
    try:
        with (
            _sqlite_file_lock(eng.url),
            eng.connect().execution_options(**{WRITE: True}) as conn,
            conn.begin(),
        ):
            if is_postgresql(eng.url):
                conn.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK}
                )
            cfg = alembic_config(url)
            cfg.attributes["connection"] = conn
            log.info("migrating %s to %s", eng.url.render_as_string(), revision)
            command.upgrade(cfg, revision)
    finally:
        if own_engine:
            eng.dispose()


@contextlib.contextmanager
def _sqlite_file_lock(url: URL) -> Iterator[None]:
    """Serialise migrations of one SQLite file across processes. SQLite's own locks are not
    enough: the first connection to a new file turns on WAL, which can fail at once with
    "database is locked" (without waiting out the busy timeout) while another process migrates."""
    database = url.database if url.get_backend_name() == "sqlite" else None
    if not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    with open(f"{database}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or ``None`` before the first migration."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()
