"""Watching every call from outside: its request id and game in the log's context, its
status code, messages and duration in the metrics (grpc-prometheus's names: the doors'
calls under the same names, told apart by ``transport``; see ``boneyard.server.ops.metrics``),
and one access line at INFO when it ends. The one pipeline
(``boneyard.server.transport.pipeline``) observes every call of both doors, first."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import grpc

from boneyard.server.ops import logs
from boneyard.server.ops.metrics import BIDI_STREAM, UNARY, CallMetrics, Metrics

__all__ = ["CallObserver", "Observed", "Outcome", "game_of"]

access_log = logging.getLogger("boneyard.access")


def game_of(request: Any) -> str | None:
    """The game a request names (its ``game_id`` field), if it has one."""
    game_id = getattr(request, "game_id", None)
    return game_id if isinstance(game_id, str) and game_id else None


class Outcome:
    """The status code a call ended with, as the observed code learns it (``OK`` unless
    told otherwise), and the stream's messages as they go out."""

    __slots__ = ("_received", "_sent", "code")

    def __init__(
        self, sent: CallMetrics | None = None, received: CallMetrics | None = None
    ) -> None:
        """``sent``, ``received``: the series that count the stream's messages each way
        (``None``: not counted one by one)."""
        self.code = grpc.StatusCode.OK
        self._sent = sent
        self._received = received

    def sent(self) -> None:
        """A message of the stream is handed to the door."""
        if self._sent is not None:
            self._sent.sent += 1

    def received(self) -> None:
        """A message of the client's stream (a stream each way) is read."""
        if self._received is not None:
            self._received.received += 1


class CallObserver:
    """Counts, times and logs calls for one server (``metrics``: its metrics)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def of(self, method: str, transport: str, kind: str) -> Callable[[Any, str, Any], Observed]:
        """How a call of ``method`` on the door ``transport``, a call of ``kind``, is observed:
        given its metadata, its peer and its request (``None`` for a stream's), an ``Observed``
        to run the call inside (``with``). The caller sets ``Outcome.code`` when it learns the
        call's status; an exception leaving the block unexplained is CANCELLED (the client
        went away) or UNKNOWN. The method's series are found once, here."""
        series = self._metrics.call(method, transport, kind)

        def observed(metadata: Any, peer: str, request: Any) -> Observed:
            return Observed(series, method, transport, metadata, game_of(request), peer, kind)

        return observed


class Observed:
    """One call being observed: a context manager written out as a class, not a generator,
    since every call of both doors goes through it."""

    __slots__ = (
        "_bidi",
        "_game",
        "_metadata",
        "_method",
        "_outcome",
        "_peer",
        "_series",
        "_started",
        "_streaming",
        "_token",
        "_transport",
    )

    def __init__(
        self,
        series: CallMetrics,
        method: str,
        transport: str,
        metadata: Any,
        game: str | None,
        peer: str,
        kind: str,
    ) -> None:
        self._series = series
        self._method = method
        self._transport = transport
        self._metadata = metadata
        self._game = game
        self._peer = peer
        self._streaming = kind != UNARY
        self._bidi = kind == BIDI_STREAM
        self._outcome = Outcome(
            series if self._streaming else None, series if self._bidi else None
        )
        self._token: Any = None
        self._started = 0.0

    def __enter__(self) -> Outcome:
        _, self._token = logs.enter_call(self._metadata, self._game)
        self._started = time.perf_counter()
        # Its one request counted with it (a stream each way counts each as it comes).
        self._series.begin(received=not self._bidi)
        return self._outcome

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            outcome = self._outcome
            if kind is not None and outcome.code is grpc.StatusCode.OK:
                cancelled = issubclass(kind, (asyncio.CancelledError, GeneratorExit))
                outcome.code = grpc.StatusCode.CANCELLED if cancelled else grpc.StatusCode.UNKNOWN
            seconds = time.perf_counter() - self._started
            code = outcome.code.name
            answered = not self._streaming and outcome.code is grpc.StatusCode.OK
            self._series.end(code, seconds, answered)
            # Only a line that will be written is made (the fields, its extras).
            if access_log.isEnabledFor(logging.INFO):
                access_log.info(
                    "%s %s %.1f ms from %s",
                    self._method,
                    code,
                    seconds * 1000,
                    self._peer,
                    extra={
                        "method": self._method,
                        "code": code,
                        "duration_ms": round(seconds * 1000, 3),
                        "peer": self._peer,
                        "transport": self._transport,
                    },
                )
        finally:
            logs.leave_call(self._token)
