"""The event loop the server runs on: uvloop's (libuv's loop, in Cython) where it is installed,
else asyncio's own.

Every call and every stream message of both doors goes through the loop several times (grpc's
completion callbacks, the handler's task, the writer's wake-up), and asyncio's loop runs each of
those steps in Python. Under ``bench_server``'s load (32 games) uvloop's loop took the server's
CPU an action from 1.14, 1.14 and 1.07 ms to 1.06, 1.01 and 1.02 (alternating pairs): the loop's
own work, not Boneyard's, so the benchmark's anchor runs on the same loop as the server.

``asyncio`` (``--event-loop``, ``BONEYARD_EVENT_LOOP``) keeps asyncio's loop: for a platform
uvloop does not build on, or to tell a loop's fault from the server's.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["EVENT_LOOPS", "LoopChoiceError", "chosen", "run"]

EVENT_LOOPS = ("auto", "uvloop", "asyncio")
"""``auto``: uvloop if it is installed, else asyncio."""

_T = TypeVar("_T")


class LoopChoiceError(RuntimeError):
    """The loop asked for cannot be had (uvloop asked for and not installed)."""


def chosen(choice: str) -> str:
    """The loop ``choice`` (one of ``EVENT_LOOPS``) runs on here: ``uvloop`` or ``asyncio``."""
    if choice not in EVENT_LOOPS:
        raise ValueError(f"the event loop is one of {', '.join(EVENT_LOOPS)}, not {choice!r}")
    installed = importlib.util.find_spec("uvloop") is not None
    if choice == "uvloop" and not installed:
        raise LoopChoiceError(
            "the event loop uvloop was asked for (--event-loop or BONEYARD_EVENT_LOOP) and "
            "uvloop is not installed: install it, or ask for auto or asyncio"
        )
    if choice == "asyncio" or not installed:
        return "asyncio"
    return "uvloop"


def _factory(loop: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if loop == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return None  # (asyncio.Runner's default: asyncio's own loop)


def run(main: Coroutine[Any, Any, _T], loop: str) -> _T:
    """Run ``main`` to its end on a new loop of ``loop`` (what ``chosen`` said), as
    ``asyncio.run`` does."""
    with asyncio.Runner(loop_factory=_factory(loop)) as runner:
        return runner.run(main)
