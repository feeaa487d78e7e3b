"""The house bots' worker processes: strategies (``boneyard.bots``) run here, never on the
event loop, so that a sampler thinking for a second holds up no RPC.

A ``concurrent.futures.ProcessPoolExecutor`` of ``workers`` processes, started when the first
decision is asked for (a server whose games have no house bots starts none). Processes are
*spawned* (a fresh interpreter that imports the bots and the engine): forking a process that
runs gRPC's threads is not safe. A decision is a picklable call, ``bots.choose(strategy, seed,
view)`` on the engine's view of the seat, and its answer an engine command.

Each worker holds the reading end of a pipe whose writing end only the server holds, and a
thread blocked on it: when the server goes, by ``kill -9`` too, the pipe closes and the worker
exits at once instead of living on as an orphan. A pool broken by a worker that died is
replaced by a fresh one for the next decision.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection

from boneyard import bots
from boneyard.engine import SeatCommand, SeatView

__all__ = ["DEFAULT_WORKERS", "MAX_WORKERS", "BotWorkers", "BrokenProcessPool"]

log = logging.getLogger(__name__)

DEFAULT_WORKERS = 1
"""One process: the machines Boneyard is run on are small, and a decision of the strongest bot
takes a fraction of a second; ``--house-bot-workers`` gives more."""
MAX_WORKERS = 64


def _exit_with_parent(parent: Connection) -> None:
    try:
        parent.recv()  # nothing is ever sent: this returns only when the server is gone
    except (EOFError, OSError):
        pass
    os._exit(0)


def _start_worker(parent: Connection) -> None:
    # Ctrl-C reaches the whole process group: the server stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()


class BotWorkers:
    """A pool of ``workers`` processes deciding for the house bots."""

    def __init__(self, workers: int = DEFAULT_WORKERS) -> None:
        if not 1 <= workers <= MAX_WORKERS:
            raise ValueError(f"house bot workers: 1..{MAX_WORKERS}, not {workers}")
        self.workers = workers
        self._context = multiprocessing.get_context("spawn")
        self._pool: ProcessPoolExecutor | None = None
        self._lifeline: tuple[Connection, Connection] | None = None
        self._closed = False

    def _executor(self) -> ProcessPoolExecutor:
        if self._closed:
            raise RuntimeError("the house bot workers are shut down")
        if self._pool is None:
            if self._lifeline is None:
                self._lifeline = self._context.Pipe(duplex=False)
            reader, _ = self._lifeline
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=self._context,
                initializer=_start_worker,
                initargs=(reader,),
            )
        return self._pool

    async def choose(self, strategy: str, seed: int, view: SeatView) -> SeatCommand:
        """What ``strategy`` plays in ``view``, decided in a worker process. Raises what the
        strategy raised, or ``BrokenProcessPool`` if the worker died (the next call gets a
        new pool)."""
        pool = self._executor()
        future = pool.submit(bots.choose, strategy, seed, view)
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool:
            if self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise

    def pids(self) -> list[int]:
        """The worker processes' ids, for the operator's tools and the tests
        (``ProcessPoolExecutor`` keeps its processes without a public accessor)."""
        processes = getattr(self._pool, "_processes", None) or {}
        return sorted(processes)

    @property
    def started(self) -> bool:
        """Whether any worker process has been started."""
        return self._pool is not None

    def shutdown(self) -> None:
        """Let the decisions in flight end, then stop the workers (blocking: call it from a
        thread when on the event loop)."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if self._lifeline is not None:
            for end in self._lifeline:
                end.close()
            self._lifeline = None
