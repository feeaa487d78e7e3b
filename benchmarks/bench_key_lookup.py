"""What authenticating an account's API key costs a call on the server's event loop.

    python benchmarks/bench_key_lookup.py [DATABASE_URL ...]

(default: a SQLite file in a temporary directory). Prints, per database, as the anchor
measured in the same run, one ``SELECT 1`` round trip on the same engine; then one
``GameApp.account_for`` (the indexed query on ``accounts``, as a worker thread asks it), the
same awaited from the event loop on a worker thread (what every call with a key cost before
the cache: the thread hop too), and ``KeyCache.account`` for a remembered key (what a call
costs now: on SQLite one raw read of the key's row on the loop, on PostgreSQL a dictionary,
the listener carrying revocations; here the listener is said to be connected).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
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


async def per_await(make: Callable[[], Awaitable[object]]) -> float:
    """Microseconds per ``await make()`` on the running loop, the best of three runs."""
    await make()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(CALLS):
            await make()
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
        app.keys.listening(True)  # (PostgreSQL: as the server's listener says once connected)
        hopped = asyncio.run(per_await(lambda: asyncio.to_thread(app.account_for, key)))
        cached = asyncio.run(per_await(lambda: app.keys.account(key)))
        app.keys.close()
        backend = store.engine.dialect.name
        print(f"{backend:10}  SELECT 1 (anchor)                 {anchor:7.1f} us")
        for what, took in (
            ("account_for(key)", lookup),
            ("to_thread(account_for) (before)", hopped),
            (f"KeyCache.account ({app.keys.mode})", cached),
        ):
            print(f"{backend:10}  {what:33} {took:7.1f} us  ({took / anchor:.2f}x the anchor)")
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
