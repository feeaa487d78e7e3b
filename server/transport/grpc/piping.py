"""The gRPC port's side of the one pipeline (``boneyard.server.transport.pipeline``): every
method's handler is wrapped in it once, as the service is added to the server (``PipedServer``),
and says what only gRPC has. (Not a grpc interceptor: grpc.aio runs an interceptor's coroutine
at every call to find the handler it wraps, the same handler every time.)

- A request is read by a tolerant deserializer: bytes that are not the method's message reach
  the pipeline as ``Undecodable`` (grpc would answer UNKNOWN with the parser's text), a request
  over the method's byte limit as ``Oversized``, unparsed (parsing it is the work the limit
  saves); the pipeline refuses both (each an ``Unread``).
- A handler's own ``context.abort`` has answered already: it passes through as it is.
- A refusal is written with ``context.abort_with_status``: the code, the message and the
  ``google.rpc.Status`` with its ``ErrorInfo`` in the ``grpc-status-details-bin`` trailer.
- A stream each way (PlayTurns, server reflection's) has each of its requests read so, and the
  pipeline's ``bidi`` around it.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

import grpc

from boneyard.server.transport.pipeline import Pipeline, Unread
from boneyard.server.transport.refusals import Refusal, too_large

__all__ = ["Oversized", "PipedServer", "Piping", "Undecodable"]

Handler = Callable[[Any, grpc.aio.ServicerContext], Any]


class Undecodable(Unread):
    """What a request that is not its message's bytes deserializes to (grpc would answer
    UNKNOWN with the parser's exception text); the pipeline refuses it."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def refusal(self, method: str) -> Refusal:
        return Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"the request is not an encoded {method.rsplit('/', 1)[-1]} request message "
            f"({self.reason})",
            "MALFORMED_REQUEST",
        )


class Oversized(Unread):
    """What a request over its method's byte limit deserializes to, unparsed (parsing it is
    the work the limit saves); the pipeline refuses it."""

    __slots__ = ("limit", "size")

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit

    def refusal(self, method: str) -> Refusal:
        return too_large(method, str(self.size), self.limit)


def _tolerant(
    deserialize: Callable[[bytes], Any] | None, limit: int | None = None
) -> Callable[[bytes], Any] | None:
    if deserialize is None:
        return None

    def deserializer(data: bytes) -> Any:
        if limit is not None and len(data) > limit:
            return Oversized(len(data), limit)
        try:
            return deserialize(data)
        except Exception as error:  # noqa: BLE001 - any parser failure is the caller's bytes
            return Undecodable(type(error).__name__)

    return deserializer


def _wrap(
    handler: grpc.RpcMethodHandler | None,
    unary: Callable[[Handler], Handler],
    stream: Callable[[Handler], Handler],
    tolerant: bool = False,
    limit: int | None = None,
    bidi: Callable[[Handler], Handler] | None = None,
) -> grpc.RpcMethodHandler | None:
    """The same handler with its behaviour wrapped (unary-unary, unary-stream and, if ``bidi``
    is given, stream-stream);
    ``tolerant``: an undecodable request reaches the handler as ``Undecodable``, and one over
    ``limit`` bytes as ``Oversized``."""
    if handler is None:
        return None
    # grpc has one RpcMethodHandler for both of its servers, and its stubs type the behaviours
    # for the threaded one (a grpc.ServicerContext, an Iterator of answers); on the grpc.aio
    # server, ours, they are called with a grpc.aio.ServicerContext and may be coroutines and
    # async generators: hence the arg-type ignores below.
    deserialize = handler.request_deserializer
    if tolerant:
        deserialize = _tolerant(deserialize, limit)
    if handler.stream_stream is not None and bidi is not None:
        return grpc.stream_stream_rpc_method_handler(
            bidi(handler.stream_stream),  # type: ignore[arg-type]  # aio: see above
            request_deserializer=deserialize,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            unary(handler.unary_unary),  # type: ignore[arg-type]  # aio: see above
            request_deserializer=deserialize,
            response_serializer=_bytes_as_they_are(handler.response_serializer),
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            stream(_yielding(handler.unary_stream)),  # type: ignore[arg-type]  # aio: see above
            request_deserializer=deserialize,
            response_serializer=_bytes_as_they_are(handler.response_serializer),
        )
    return handler


def _yielding(handler: Handler) -> Handler:
    """A streaming handler as an async generator: one that writes its messages itself
    (``context.write``, as grpc's health service's Watch does) becomes a generator that yields
    none, so that the wrappers, which iterate what they wrap, can wrap it too."""
    if not inspect.iscoroutinefunction(handler):
        return handler

    async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        await handler(request, context)
        return
        yield  # (makes this a generator)

    return call


def _bytes_as_they_are(
    serialize: Callable[[Any], bytes] | None,
) -> Callable[[Any], bytes] | None:
    """A handler may answer with a message it encoded itself (a stream's, once for many
    watchers; GetView's and SubmitAction's, the view's bytes after the other fields): send
    those bytes unchanged, and serialize anything else."""
    if serialize is None:
        return None

    def serializer(message: Any) -> bytes:
        return message if type(message) is bytes else serialize(message)

    return serializer


async def _abort(refusal: Refusal, context: grpc.aio.ServicerContext) -> None:
    """A refusal written as gRPC's status: raises ``grpc.aio.AbortError``."""
    await context.abort_with_status(refusal.status())


def _answered(error: BaseException, context: Any) -> grpc.StatusCode | None:
    """A handler's own ``context.abort``: answered already, with the code it set."""
    if not isinstance(error, grpc.aio.AbortError):
        return None
    code = context.code()
    return code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.UNKNOWN


class Piping:
    """Every call of the gRPC port through ``pipeline``: ``wrap`` makes a method's handler
    the pipeline around it."""

    def __init__(self, pipeline: Pipeline) -> None:
        self._pipeline = pipeline

    def wrap(
        self, handler: grpc.RpcMethodHandler | None, method: str
    ) -> grpc.RpcMethodHandler | None:
        pipeline = self._pipeline

        def unary(inner: Handler) -> Handler:
            return pipeline.unary(
                method, "grpc", inner, answered=_answered, refuse=_abort
            )

        # A stream's generator is the pipeline's own, handed to grpc as it is (a generator of
        # the door's around it was one more step at every message of every watcher).
        def stream(inner: Handler) -> Handler:
            return pipeline.stream(
                method, "grpc", inner, answered=_answered, refuse=_abort
            )

        def bidi(inner: Handler) -> Handler:
            return pipeline.bidi(
                method, "grpc", inner, answered=_answered, refuse=_abort
            )

        limit = pipeline.limit(method)
        return _wrap(handler, unary, stream, tolerant=True, limit=limit, bidi=bidi)


class _PipedHandler(grpc.GenericRpcHandler):
    """A generic handler's methods, each wrapped by ``piping`` the first time it is called
    (then kept: a method's handler never changes; a name it does not serve is not kept)."""

    def __init__(self, inner: grpc.GenericRpcHandler, piping: Piping) -> None:
        self._inner = inner
        self._piping = piping
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        method = details.method
        wrapped = self._wrapped.get(method)
        if wrapped is None:
            wrapped = self._piping.wrap(self._inner.service(details), method)
            if wrapped is None:
                return None
            self._wrapped[method] = wrapped
        return wrapped


class PipedServer:
    """``server`` as a generated ``add_...Servicer_to_server`` (and reflection, and health)
    sees it: every handler added goes through ``piping``."""

    def __init__(self, server: grpc.aio.Server, piping: Piping) -> None:
        self._server = server
        self._piping = piping

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(
            tuple(_PipedHandler(handler, self._piping) for handler in handlers)
        )

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        wrapped: dict[str, grpc.RpcMethodHandler] = {}
        for name, handler in handlers.items():
            piped = self._piping.wrap(handler, f"/{service}/{name}")
            assert piped is not None  # (a handler wraps to a handler)
            wrapped[name] = piped
        self._server.add_registered_method_handlers(service, wrapped)
