"""What authenticating an account's API key costs, now that it is looked up on every call.

    python benchmarks/bench_key_lookup.py [DATABASE_URL ...]

(default: a SQLite file in a temporary directory). Prints, per database, the time of one
``GameApp.account_for`` (an indexed query on ``accounts``; nothing cached, so a key revoked
by ``boneyard-server admin revoke`` fails at once in every process) and, as the anchor
measured in the same run, one ``SELECT 1`` round trip on the same engine: the ratio says how
much of the cost is the query itself rather than reaching the database at all.
"""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import text

from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.games.app import GameApp
from boneyard.server.store import EventStore

CALLS = 2000


def per_call(fn: Callable[[], object]) -> float:
    """Microseconds per call of ``fn``, the best of three runs of ``CALLS`` calls."""
    fn()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(CALLS):
            fn()
        best = min(best, (time.perf_counter() - start) / CALLS * 1e6)
    return best


def measure(url: str) -> None:
    store = EventStore.open(url, migrate=True)
    try:
        app = GameApp(store)
        key = new_api_key()
        app.competition.create_account(
            str(uuid.uuid4()), f"bench-{uuid.uuid4().hex[:8]}", "bot", key_hash(key)
        )

        def ping() -> None:
            with store.engine.connect() as conn:
                conn.execute(text("SELECT 1"))

        anchor = per_call(ping)
        lookup = per_call(lambda: app.account_for(key))
        backend = store.engine.dialect.name
        print(f"{backend:10}  SELECT 1 (anchor)  {anchor:7.1f} us")
        print(
            f"{backend:10}  account_for(key)   {lookup:7.1f} us  ({lookup / anchor:.1f}x the anchor)"
        )
    finally:
        store.close()


def main(urls: list[str]) -> None:
    if urls:
        for url in urls:
            measure(url)
        return
    with tempfile.TemporaryDirectory() as tmp:
        measure(f"sqlite:///{Path(tmp) / 'bench.db'}")


if __name__ == "__main__":
    main(sys.argv[1:])
