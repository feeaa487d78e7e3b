"""Watching every call from outside: its request id and game in the log's context, its
status code, messages and duration in the metrics (grpc-prometheus's names: the doors'
calls under the same names, told apart by ``transport``; see ``boneyard.server.ops.metrics``),
and one access line at INFO when it ends. The one pipeline
(``boneyard.server.transport.pipeline``) observes every call of both doors, first."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import grpc

from boneyard.server.ops import logs
from boneyard.server.ops.metrics import BIDI_STREAM, UNARY, CallMetrics, Metrics

__all__ = ["CallObserver", "Observed", "Outcome"]

access_log = logging.getLogger("boneyard.access")

_NAMES = {code: code.name for code in grpc.StatusCode}


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
        watched = _Watched(self._metrics.call(method, transport, kind), method, transport, kind)
        return functools.partial(Observed, watched)


class _Watched:
    """What every call of one method on one door is observed with: its series, its names,
    and what kind of call it is (found once, not at every call)."""

    __slots__ = ("bidi", "method", "received", "sent", "series", "streaming", "transport")

    def __init__(self, series: CallMetrics, method: str, transport: str, kind: str) -> None:
        self.series = series
        self.method = method
        self.transport = transport
        self.streaming = kind != UNARY
        self.bidi = kind == BIDI_STREAM
        self.sent = series if self.streaming else None
        """The series that counts the stream's messages one by one (a unary answer is
        counted as the call ends)."""
        self.received = series if self.bidi else None


class Observed(Outcome):
    """One call being observed, and its outcome (what ``with`` gives): a context manager
    written out as a class, not a generator, since every call of both doors goes through it."""

    __slots__ = ("_metadata", "_peer", "_request", "_started", "_token", "_watched")

    def __init__(self, watched: _Watched, metadata: Any, peer: str, request: Any) -> None:
        self.code = grpc.StatusCode.OK
        self._sent = watched.sent
        self._received = watched.received
        self._watched = watched
        self._metadata = metadata
        self._request = request
        self._peer = peer
        self._token: Any = None
        self._started = 0.0

    def __enter__(self) -> Outcome:
        # (The request's game and the client's request id read only if a line asks for them.)
        _, self._token = logs.enter_call(self._metadata, self._request)
        self._started = time.perf_counter()
        # Its one request counted with it (a stream each way counts each as it comes).
        self._watched.series.begin(received=not self._watched.bidi)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            watched = self._watched
            if kind is not None and self.code is grpc.StatusCode.OK:
                cancelled = issubclass(kind, (asyncio.CancelledError, GeneratorExit))
                self.code = grpc.StatusCode.CANCELLED if cancelled else grpc.StatusCode.UNKNOWN
            seconds = time.perf_counter() - self._started
            code = _NAMES[self.code]  # (an enum's name is a descriptor's work at each read)
            answered = not watched.streaming and self.code is grpc.StatusCode.OK
            watched.series.end(code, seconds, answered)
            # Only a line that will be written is made (the fields, its extras).
            if access_log.isEnabledFor(logging.INFO):
                access_log.info(
                    "%s %s %.1f ms from %s",
                    watched.method,
                    code,
                    seconds * 1000,
                    self._peer,
                    extra={
                        "method": watched.method,
                        "code": code,
                        "duration_ms": round(seconds * 1000, 3),
                        "peer": self._peer,
                        "transport": watched.transport,
                    },
                )
        finally:
            logs.leave_call(self._token)
