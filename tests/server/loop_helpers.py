"""Tests of what lives on an event loop (wakes, feeds), each run on a loop of its own."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any


def on_a_loop(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    """A test run on an event loop of its own (what the streams wait on)."""

    @functools.wraps(test)
    def run() -> None:
        asyncio.run(test())

    return run
