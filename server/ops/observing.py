"""Watching every call from outside: its request id and game in the log's context, its
status code, messages and duration in the metrics (grpc-prometheus's names: the doors'
calls under the same names, told apart by ``transport``; see ``boneyard.server.ops.metrics``),
and one access line at INFO when it ends. The one pipeline
(``boneyard.server.transport.pipeline``) observes every call of both doors, first."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

import grpc
from prometheus_client import Counter

from boneyard.server.ops import logs
from boneyard.server.ops.metrics import Metrics

__all__ = ["CallObserver", "Outcome", "game_of"]

access_log = logging.getLogger("boneyard.access")


def game_of(request: Any) -> str | None:
    """The game a request names (its ``game_id`` field), if it has one."""
    game_id = getattr(request, "game_id", None)
    return game_id if isinstance(game_id, str) and game_id else None


class Outcome:
    """The status code a call ended with, as the observed code learns it (``OK`` unless
    told otherwise), and the stream's messages as they go out."""

    __slots__ = ("_sent", "code")

    def __init__(self, sent: Counter | None = None) -> None:
        self.code = grpc.StatusCode.OK
        self._sent = sent

    def sent(self) -> None:
        """A message of the stream is handed to the door."""
        if self._sent is not None:
            self._sent.inc()


class CallObserver:
    """Counts, times and logs calls for one server (``metrics``: its metrics)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    @contextlib.contextmanager
    def observe(
        self,
        method: str,
        transport: str,
        *,
        metadata: Any,
        request: Any,
        peer: str,
        streaming: bool,
    ) -> Iterator[Outcome]:
        """Run one call inside: the caller sets ``Outcome.code`` when it learns the call's
        status; an exception leaving the block unexplained is CANCELLED (the client went
        away) or UNKNOWN."""
        series = self._metrics.call(method, transport, streaming)
        outcome = Outcome(series.sent if streaming else None)
        with logs.call_scope(metadata, game_of(request)):
            started = time.perf_counter()
            series.started.inc()
            series.received.inc()
            series.in_flight.inc()
            try:
                yield outcome
            except (asyncio.CancelledError, GeneratorExit):
                if outcome.code is grpc.StatusCode.OK:
                    outcome.code = grpc.StatusCode.CANCELLED
                raise
            except BaseException:
                if outcome.code is grpc.StatusCode.OK:
                    outcome.code = grpc.StatusCode.UNKNOWN
                raise
            finally:
                seconds = time.perf_counter() - started
                series.in_flight.dec()
                code = outcome.code.name
                if not streaming and outcome.code is grpc.StatusCode.OK:
                    series.sent.inc()  # the answer
                series.handled(code).inc()
                series.seconds.observe(seconds)
                access_log.info(
                    "%s %s %.1f ms from %s",
                    method,
                    code,
                    seconds * 1000,
                    peer,
                    extra={
                        "method": method,
                        "code": code,
                        "duration_ms": round(seconds * 1000, 3),
                        "peer": peer,
                        "transport": transport,
                    },
                )
