"""What every RPC shares, as server interceptors: the caller's credentials, and the mapping
of the application's errors to status codes. Handlers raise ``AppError`` subclasses and read
``credentials()``; none catches or parses anything itself.

- ``CredentialsInterceptor`` reads ``authorization: Bearer <seat token or API key>`` once per
  call into a context variable (a malformed header is UNAUTHENTICATED before any handler runs).
- ``DrainInterceptor`` refuses new calls while the server shuts down, lets those in flight
  finish and ends the streams when told (``boneyard.server.ops.drain``).
- ``ErrorInterceptor`` answers an error a handler raised (unary or streaming) with its status
  code, message and ``ErrorInfo`` (``boneyard.server.transport.refusals``); anything unexpected is logged with a request id and answered INTERNAL
  with that id, without its text (which may hold SQL and its parameters). It also bounds each
  method's request bytes: a request over its method's limit is RESOURCE_EXHAUSTED before it
  is parsed.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import grpc

from boneyard import engine
from boneyard.api import codec
from boneyard.records.record import MalformedRecord
from boneyard.server.errors import (
    DeadlineExceeded,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    PreconditionFailed,
    StaleVersion,
    Unauthenticated,
    Unavailable,
)
from boneyard.server.ops import logs
from boneyard.server.ops.drain import Drain
from boneyard.server.ops.logs import REQUEST_ID_HEADER
from boneyard.server.quotas import QuotaExceeded, Quotas, peer_of
from boneyard.server.store import errors as store_errors
from boneyard.server.transport.refusals import Refusal, reason_of

__all__ = [
    "DEFAULT_REQUEST_LIMIT",
    "INTERNAL_ERROR",
    "MAX_MESSAGE",
    "REQUEST_ID_HEADER",
    "CredentialsInterceptor",
    "DrainInterceptor",
    "ErrorInterceptor",
    "Oversized",
    "StreamQuotaInterceptor",
    "Undecodable",
    "credentials",
    "refusal_for",
    "shortened",
    "status_for",
    "use_credentials",
]

log = logging.getLogger(__name__)

INTERNAL_ERROR = "internal error (logged on the server as request {request_id}); the request may be retried"

DEFAULT_REQUEST_LIMIT = 64 * 1024
"""The bytes of a request of a method with no limit of its own (every method but
VerifyRecord). The largest real one (a tournament of 64 entrants, a game with every option) is
a few kB; at gRPC's 4 MiB a request of a million tiny repeated fields (house bots) took about
130 MiB to parse before any handler could refuse it."""

_STATUS_CODES: dict[type[BaseException], grpc.StatusCode] = {
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    PreconditionFailed: grpc.StatusCode.FAILED_PRECONDITION,
    StaleVersion: grpc.StatusCode.ABORTED,
    DeadlineExceeded: grpc.StatusCode.DEADLINE_EXCEEDED,
    OutOfRange: grpc.StatusCode.OUT_OF_RANGE,
    codec.MalformedMessage: grpc.StatusCode.INVALID_ARGUMENT,
    engine.RulesetError: grpc.StatusCode.INVALID_ARGUMENT,
    store_errors.GameNotFound: grpc.StatusCode.NOT_FOUND,
    store_errors.InvalidCursor: grpc.StatusCode.INVALID_ARGUMENT,
    MalformedRecord: grpc.StatusCode.DATA_LOSS,
    QuotaExceeded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
}

_credentials: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "boneyard_credentials", default=None
)


def credentials() -> str | None:
    """The bearer token (seat token or API key) of the call being handled, if it sent one."""
    return _credentials.get()


def status_for(error: BaseException) -> grpc.StatusCode | None:
    """The status code of an expected error; ``None`` for a bug."""
    for kind in type(error).__mro__:
        code = _STATUS_CODES.get(kind)
        if code is not None:
            return code
    return None


def use_credentials(metadata: Any) -> None:
    """Read the call's bearer token (``Unauthenticated`` if malformed) for ``credentials()``:
    for the gRPC port and the HTTP listener alike."""
    _credentials.set(_bearer(metadata))


def _bearer(metadata: Any) -> str | None:
    for key, value in metadata or ():
        if key == "authorization":
            text = value if isinstance(value, str) else value.decode()
            scheme, _, token = text.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthenticated(
                    "the authorization metadata must be 'Bearer <seat token or API key>'",
                    reason="MALFORMED_AUTHORIZATION",
                )
            return token.strip()
    return None


Handler = Callable[[Any, grpc.aio.ServicerContext], Any]


class Undecodable:
    """What a request that is not its message's bytes deserializes to (grpc would answer
    UNKNOWN with the parser's exception text); ``ErrorInterceptor`` refuses it."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Oversized:
    """What a request over its method's byte limit deserializes to, unparsed (parsing it is
    the work the limit saves); ``ErrorInterceptor`` refuses it."""

    __slots__ = ("limit", "size")

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit


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
    """The same handler with its behaviour wrapped (unary-unary and unary-stream: the kinds
    our services have; ``bidi``, if given, wraps a stream-stream one, as reflection's);
    ``tolerant``: an undecodable request reaches the handler as ``Undecodable``, and one over
    ``limit`` bytes as ``Oversized``."""
    if handler is None:
        return None
    deserialize = handler.request_deserializer
    if tolerant:
        deserialize = _tolerant(deserialize, limit)
    if handler.stream_stream is not None and bidi is not None:
        return grpc.stream_stream_rpc_method_handler(
            bidi(handler.stream_stream),
            request_deserializer=deserialize,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            unary(handler.unary_unary),
            request_deserializer=deserialize,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            stream(_yielding(handler.unary_stream)),
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
    """A stream may yield messages it encoded once for many streams (WatchGame): send those
    bytes unchanged, and serialize anything else."""
    if serialize is None:
        return None

    def serializer(message: Any) -> bytes:
        return message if type(message) is bytes else serialize(message)

    return serializer


class _Wrapping(grpc.aio.ServerInterceptor):
    """An interceptor that wraps each method's handler once (the services' handlers never
    change, so the wrapped one is kept per method instead of being made for every call)."""

    def __init__(self) -> None:
        self._wrapped: dict[str, grpc.RpcMethodHandler | None] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        method = details.method
        if method in self._wrapped:
            return self._wrapped[method]
        handler = await continuation(details)
        wrapped = self.wrap(handler, method)
        if handler is not None:
            self._wrapped[method] = wrapped
        return wrapped

    def wrap(
        self, handler: grpc.RpcMethodHandler | None, method: str
    ) -> grpc.RpcMethodHandler | None:
        raise NotImplementedError


class CredentialsInterceptor(_Wrapping):
    def wrap(
        self, handler: grpc.RpcMethodHandler | None, method: str
    ) -> grpc.RpcMethodHandler | None:

        def unary(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
                use_credentials(context.invocation_metadata())
                return await inner(request, context)

            return call

        def stream(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                use_credentials(context.invocation_metadata())
                async for message in inner(request, context):
                    yield message

            return call

        return _wrap(handler, unary, stream)


class StreamQuotaInterceptor(_Wrapping):
    """Each peer holds at most ``Quotas.streams_per_peer`` open streams."""

    def __init__(self, quotas: Quotas) -> None:
        super().__init__()
        self._quotas = quotas

    def wrap(
        self, handler: grpc.RpcMethodHandler | None, method: str
    ) -> grpc.RpcMethodHandler | None:
        quotas = self._quotas

        def unary(inner: Handler) -> Handler:
            return inner

        def stream(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                with quotas.stream(peer_of(context.peer())):
                    async for message in inner(request, context):
                        yield message

            return call

        return _wrap(handler, unary, stream)


class DrainInterceptor(_Wrapping):
    """Calls while the server shuts down (``Drain``): new ones are refused UNAVAILABLE (the
    health service's excepted: it says NOT_SERVING meanwhile), those in flight are counted
    until they finish, and the streams end when the drain ends them."""

    def __init__(self, drain: Drain) -> None:
        super().__init__()
        self._drain = drain

    def wrap(
        self, handler: grpc.RpcMethodHandler | None, method: str
    ) -> grpc.RpcMethodHandler | None:
        drain = self._drain
        refuse = (lambda: None) if method.startswith(_HEALTH) else drain.refuse

        def unary(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
                refuse()
                return await drain.call(method, inner, request, context)

            return call

        def stream(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                refuse()
                async for message in drain.stream(method, inner(request, context)):
                    yield message

            return call

        return _wrap(handler, unary, stream)


_HEALTH = "/grpc.health.v1.Health/"


class ErrorInterceptor(_Wrapping):
    """Outermost: it also answers what ``CredentialsInterceptor`` raises. ``request_limits``:
    the most bytes a request of a method (``/package.Service/Method``) may have, for methods
    that take more or less than ``DEFAULT_REQUEST_LIMIT``."""

    def __init__(self, request_limits: Mapping[str, int] | None = None) -> None:
        super().__init__()
        self._limits = dict(request_limits or {})

    def wrap(
        self, handler: grpc.RpcMethodHandler | None, method: str
    ) -> grpc.RpcMethodHandler | None:

        def unary(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
                if type(request) is Oversized:
                    await _refuse_size(context, request, method)
                if type(request) is Undecodable:
                    await _refuse_bytes(context, request, method)
                try:
                    return await inner(request, context)
                except Exception as error:  # noqa: BLE001 - every error gets a status
                    await _abort(context, error, method)

            return call

        def stream(inner: Handler) -> Handler:
            async def call(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                if type(request) is Oversized:
                    await _refuse_size(context, request, method)
                if type(request) is Undecodable:
                    await _refuse_bytes(context, request, method)
                try:
                    async for message in inner(request, context):
                        yield message
                except Exception as error:  # noqa: BLE001 - every error gets a status
                    await _abort(context, error, method)

            return call

        def bidi(inner: Handler) -> Handler:
            async def call(requests: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                async def checked() -> AsyncIterator[Any]:
                    async for request in requests:
                        if type(request) is Oversized:
                            await _refuse_size(context, request, method)
                        if type(request) is Undecodable:
                            await _refuse_bytes(context, request, method)
                        yield request

                try:
                    async for message in inner(checked(), context):
                        yield message
                except Exception as error:  # noqa: BLE001 - every error gets a status
                    await _abort(context, error, method)

            return call

        limit = self._limits.get(method, DEFAULT_REQUEST_LIMIT)
        return _wrap(handler, unary, stream, tolerant=True, limit=limit, bidi=bidi)


def size_refusal(request: Oversized, method: str) -> Refusal:
    # RESOURCE_EXHAUSTED, as gRPC itself answers a message over its receive limit, and as the
    # HTTP listener answers a body over the method's limit (http_door).
    return Refusal(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"the request is {request.size} bytes; a {method.rsplit('/', 1)[-1]} request is at "
        f"most {request.limit} bytes (refused unread)",
        "REQUEST_TOO_LARGE",
        {"size": str(request.size), "limit": str(request.limit)},
    )


async def _refuse_size(context: grpc.aio.ServicerContext, request: Oversized, method: str) -> None:
    await context.abort_with_status(size_refusal(request, method).status())


async def _refuse_bytes(context: grpc.aio.ServicerContext, request: Undecodable, method: str) -> None:
    refusal = Refusal(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"the request is not an encoded {method.rsplit('/', 1)[-1]} request message "
        f"({request.reason})",
        "MALFORMED_REQUEST",
    )
    await context.abort_with_status(refusal.status())


async def _abort(context: grpc.aio.ServicerContext, error: Exception, method: str) -> None:
    if isinstance(error, grpc.aio.AbortError):
        raise error  # a handler's own abort: already answered
    refusal = refusal_for(error, method, context.invocation_metadata())
    await context.abort_with_status(refusal.status())


def refusal_for(error: Exception, method: str, metadata: Any) -> Refusal:
    """What answers ``error`` (for every transport): an expected error's status code, its
    own message (shortened) and reason; anything else is logged with a request id and is
    INTERNAL, with that id in the message and the metadata."""
    code = status_for(error)
    if code is None:
        request_id = _request_id(metadata)
        log.error("%s failed (request %s)", method, request_id, exc_info=error)
        return Refusal(
            grpc.StatusCode.INTERNAL,
            INTERNAL_ERROR.format(request_id=request_id),
            "INTERNAL",
            {"request_id": request_id},
        )
    reason, details = reason_of(error)
    return Refusal(code, shortened(str(error)), reason, details)


def _request_id(metadata: Any) -> str:
    """The call's request id: the one its log lines carry (``boneyard.server.ops.logs``)."""
    fields = logs.current()
    return fields.request_id if fields is not None else logs.request_id_of(metadata)


MAX_MESSAGE = 1000
"""Characters of an error message at most: a message that quoted a huge input whole would
not fit in the trailers (the client would see RESOURCE_EXHAUSTED instead of the error)."""
_CUT = " ... (shortened)"


def shortened(message: str) -> str:
    """``message``, cut to at most ``MAX_MESSAGE`` characters with a mark that it was."""
    if len(message) <= MAX_MESSAGE:
        return message
    return message[: MAX_MESSAGE - len(_CUT)] + _CUT
