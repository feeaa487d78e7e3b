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
from typing import Any, Self

import grpc

from boneyard.server.ops import logs
from boneyard.server.ops.metrics import BIDI_STREAM, UNARY, CallMetrics, Metrics

__all__ = ["CallObserver", "Observed", "Outcome", "Told"]

access_log = logging.getLogger("boneyard.access")

_NAMES = {code: code.name for code in grpc.StatusCode}
_OK = grpc.StatusCode.OK


class Told:
    """A call's outcome, kept and told to nobody (a server that observes nothing): its
    status code (``OK`` unless told otherwise)."""

    __slots__ = ("code",)

    def __init__(self) -> None:
        self.code = grpc.StatusCode.OK

    def sent(self) -> None:
        """A message of the stream is handed to the door."""

    def received(self) -> None:
        """A message of the client's stream (a stream each way) is read."""


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

    __slots__ = ("method", "received", "sent", "series", "transport")

    def __init__(self, series: CallMetrics, method: str, transport: str, kind: str) -> None:
        self.series = series
        self.method = method
        self.transport = transport
        self.sent = series if kind != UNARY else None
        """The series that counts a stream's messages one by one (a unary call's one answer
        is its call ended ``OK``)."""
        self.received = series if kind == BIDI_STREAM else None
        """The series that counts a stream each way's requests one by one (any other call's
        one request is its call started)."""


class Observed(logs.CallFields):
    """One call being observed, and its outcome (what ``with`` gives). It is the call's
    fields in the log's context too: one object a call, made at every call of both doors. A
    context manager written out as a class, not a generator, for the same reason."""

    __slots__ = ("_peer", "_started", "_token", "_watched", "code")

    def __init__(self, watched: _Watched, metadata: Any, peer: str, request: Any) -> None:
        # (The request's game and the client's request id are read only if a line asks.)
        # The fields set here, not through ``CallFields.__init__``: a call with keywords, at
        # every call of both doors.
        self._request_id = self._game = self.seat = self.account = None
        self._metadata = metadata
        self._request = request
        self.code = _OK
        self._watched = watched
        self._peer = peer
        # (``_token`` and ``_started`` are set as the call starts: ``__enter__``.)

    def sent(self) -> None:
        """A message of the stream is handed to the door."""
        series = self._watched.sent
        if series is not None:
            series.sent += 1

    def received(self) -> None:
        """A message of the client's stream (a stream each way) is read."""
        series = self._watched.received
        if series is not None:
            series.received += 1

    def __enter__(self) -> Self:
        self._token = logs.enter(self)
        self._watched.series.begin()
        self._started = time.perf_counter()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        seconds = time.perf_counter() - self._started
        try:
            watched, code = self._watched, self.code
            if kind is not None and code is _OK:
                cancelled = issubclass(kind, (asyncio.CancelledError, GeneratorExit))
                code = self.code = (
                    grpc.StatusCode.CANCELLED if cancelled else grpc.StatusCode.UNKNOWN
                )
            # (OK's name not looked up: an enum's hash, for the look-up, is a Python call.)
            name = "OK" if code is _OK else _NAMES[code]
            watched.series.end(name, seconds)
            # Only a line that will be written is made (the fields, its extras).
            if access_log.isEnabledFor(logging.INFO):
                access_log.info(
                    "%s %s %.1f ms from %s",
                    watched.method,
                    name,
                    seconds * 1000,
                    self._peer,
                    extra={
                        "method": watched.method,
                        "code": name,
                        "duration_ms": round(seconds * 1000, 3),
                        "peer": self._peer,
                        "transport": watched.transport,
                    },
                )
        finally:
            logs.leave_call(self._token)


Outcome = Observed | Told
"""What a call runs with: the status code it ended with, as the observed code learns it,
and the stream's messages as they go out."""
