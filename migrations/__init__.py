"""The Alembic environment (``env.py``) and versions of Boneyard's schema.

A package only so that it ships inside the distribution as ``boneyard.migrations``; Alembic
reads the files by path (``boneyard.server.store.migrate.migrations_dir``).
"""
