"""Watching every call from outside: its request id and game in the log's context, its
status code and duration in the metrics, and one access line at INFO when it ends.

``ObservingInterceptor`` does it on the gRPC port, outermost, so that it sees the status code
``ErrorInterceptor`` answered (``context.code()`` after the abort); the HTTP listener's bridge
does the same around each call with ``CallObserver.observe`` (``boneyard.server.transport.http.connect``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc

from boneyard.server.ops import logs
from boneyard.server.ops.metrics import Metrics
from boneyard.server.transport.grpc.interceptors import Handler, _wrap, _Wrapping

__all__ = ["CallObserver", "ObservingInterceptor", "Outcome", "game_of"]

access_log = logging.getLogger("boneyard.access")


def game_of(request: Any) -> str | None:
    """The game a request names (its ``game_id`` field), if it has one."""
    game_id = getattr(request, "game_id", None)
    return game_id if isinstance(game_id, str) and game_id else None


class Outcome:
    """The status code a call ended with, as the observed code learns it (``OK`` unless
    told otherwise)."""

    __slots__ = ("code",)

    def __init__(self) -> None:
        self.code = grpc.StatusCode.OK


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
        outcome = Outcome()
        with logs.call_scope(metadata, game_of(request)):
            started = time.perf_counter()
            streams = self._metrics.open_streams.labels(method, transport) if streaming else None
            if streams is not None:
                streams.inc()
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
                if streams is not None:
                    streams.dec()
                code = outcome.code.name
                self._metrics.rpcs.labels(method, code, transport).inc()
                self._metrics.rpc_seconds.labels(method, transport).observe(seconds)
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


class ObservingInterceptor(_Wrapping):
    """Outermost on the gRPC port (before ``ErrorInterceptor``)."""

    def __init__(self, observer: CallObserver) -> None:
        super().__init__()
        self._observer = observer

    def wrap(
        self, handler: grpc.RpcMethodHandler | None, method: str
    ) -> grpc.RpcMethodHandler | None:
        observer = self._observer

        def unary(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
                with observer.observe(
                    method,
                    "grpc",
                    metadata=context.invocation_metadata(),
                    request=request,
                    peer=context.peer(),
                    streaming=False,
                ) as outcome:
                    try:
                        return await inner(request, context)
                    except grpc.aio.AbortError:
                        outcome.code = _aborted_code(context)
                        raise

            return call

        def stream(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                with observer.observe(
                    method,
                    "grpc",
                    metadata=context.invocation_metadata(),
                    request=request,
                    peer=context.peer(),
                    streaming=True,
                ) as outcome:
                    try:
                        async for message in inner(request, context):
                            yield message
                    except grpc.aio.AbortError:
                        outcome.code = _aborted_code(context)
                        raise

            return call

        return _wrap(handler, unary, stream)


def _aborted_code(context: grpc.aio.ServicerContext) -> grpc.StatusCode:
    code = context.code()
    return code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.UNKNOWN
