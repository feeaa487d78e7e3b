"""PostgreSQL's commits/s for Boneyard's appends, measured with pgbench: what one database
machine gives the capacity model of docs/scaling.md.

    .venv/bin/python benchmarks/bench_pg_commits.py --url postgresql://USER@HOST:PORT/DB

An append is what the writer (``server/store/writer.py``) does for one action: the game's
conditional version bump (``UPDATE games ... WHERE version = expected``) and the action's rows
(two events of about the wire size of a play, with their 32-byte hashes, and the request's
answer of about a view's size). On a fresh database of the server at ``--url`` (dropped
afterwards) with ``--games`` games, pgbench runs, for each batch size B (appends committed
in one transaction, as the writer groups every action waiting) and each number of clients C
(writers committing at once: one per server process), ``--seconds`` seconds; it prints
transactions (commits) per second and appends per second. The server's durability settings
are its own (``SHOW fsync, synchronous_commit`` is printed): the figures mean something for
production only with both on. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from glob import glob
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

SCHEMA = """
CREATE TABLE games (id text PRIMARY KEY, version integer NOT NULL, updated_at timestamptz);
CREATE TABLE events (
    game_id text REFERENCES games (id), seq integer, kind varchar(64), payload bytea,
    hash bytea, created_at timestamptz, PRIMARY KEY (game_id, seq));
CREATE TABLE requests (
    game_id text REFERENCES games (id), request_id varchar(128), seat integer,
    result_version integer, response bytea, created_at timestamptz,
    PRIMARY KEY (game_id, request_id));
CREATE INDEX ON requests (request_id);
"""

APPEND = """
UPDATE games SET version = version + 2, updated_at = now() WHERE id = 'g' || :g;
INSERT INTO events SELECT id, version - 1, 'tile_played', decode(repeat('a1', 24), 'hex'),
    sha256(random()::text::bytea), now() FROM games WHERE id = 'g' || :g;
INSERT INTO events SELECT id, version, 'trick_won', decode(repeat('b2', 16), 'hex'),
    sha256(random()::text::bytea), now() FROM games WHERE id = 'g' || :g;
INSERT INTO requests SELECT id, md5(random()::text), 0, version,
    decode(repeat('c3', 300), 'hex'), now() FROM games WHERE id = 'g' || :g;
"""


def pgbench() -> str:
    found = shutil.which("pgbench") or next(
        iter(sorted(glob("/usr/lib/postgresql/*/bin/pgbench"), reverse=True)), None
    )
    if found is None:
        sys.exit("bench_pg_commits: pgbench is not installed (Debian: postgresql-client)")
    return found


def script(batch: int, games: int) -> str:
    """One transaction of ``batch`` appends, each to a random game of ``games``."""
    lines = ["BEGIN;"]
    for n in range(batch):
        lines.append(f"\\set g{n} random(1, {games})")
        lines.append(APPEND.replace(":g", f":g{n}").strip())
    lines.append("COMMIT;")
    # pgbench's \set lines must come before the SQL that uses them in the same script.
    sets = [line for line in lines if line.startswith("\\set")]
    sql = [line for line in lines if not line.startswith("\\set")]
    return "\n".join(sets + sql) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="postgresql://USER@HOST:PORT/DB (libpq)")
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--clients", default="1,3,8,32", help="writers at once (%(default)s)")
    parser.add_argument("--batches", default="1,8", help="appends a commit (%(default)s)")
    args = parser.parse_args()
    base = make_url(args.url.replace("postgresql+psycopg://", "postgresql://"))
    name = f"bench_commits_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(
        base.set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        settings = {
            s: conn.exec_driver_sql(f"SHOW {s}").scalar()
            for s in ("fsync", "synchronous_commit", "wal_sync_method", "commit_delay")
        }
    db = base.set(database=name)
    try:
        engine = sa.create_engine(db.set(drivername="postgresql+psycopg"))
        with engine.begin() as conn:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.exec_driver_sql(statement)
            conn.exec_driver_sql(
                "INSERT INTO games SELECT 'g' || n, 0, now() "
                f"FROM generate_series(1, {args.games}) AS n"
            )
        engine.dispose()
        print(
            f"pgbench of Boneyard's append on {base.host}:{base.port} ({settings}); "
            f"{args.games} games, {args.seconds} s a run"
        )
        print(f"  {'appends/commit':>14}{'writers':>9}{'commits/s':>11}{'appends/s':>11}")
        conninfo = db.render_as_string(hide_password=False)
        with tempfile.TemporaryDirectory() as tmp:
            for batch in (int(b) for b in args.batches.split(",")):
                path = Path(tmp) / f"append{batch}.sql"
                path.write_text(script(batch, args.games))
                for clients in (int(c) for c in args.clients.split(",")):
                    run = subprocess.run(
                        [pgbench(), "-n", "-M", "prepared", "-f", str(path), "-c", str(clients),
                         "-j", str(min(clients, 4)), "-T", str(args.seconds), conninfo],
                        capture_output=True, text=True, check=False,
                    )  # fmt: skip
                    found = re.search(r"tps = ([\d.]+)", run.stdout)
                    if run.returncode or not found:
                        sys.exit(f"pgbench failed:\n{run.stdout}\n{run.stderr}")
                    tps = float(found[1])
                    print(f"  {batch:>14}{clients:>9}{tps:>11.0f}{tps * batch:>11.0f}", flush=True)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


if __name__ == "__main__":
    main()
