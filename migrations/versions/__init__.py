"""The schema's revisions, one module each (Alembic skips this file)."""
