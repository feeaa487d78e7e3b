"""One pipeline of what every call shares, built once and used by both doors: the gRPC port's
handlers, each wrapped in it once (``transport.grpc.piping``), and the HTTP listener's bridge
(``transport.http.connect``) hand each call to it, and only say how their own protocol writes a
refusal. In order, around the servicer's handler:

1. observe: the call's request id and game in the log's context, its status code, messages and
   duration in the metrics, one access line (``ops.observing``);
2. a request the door could not read refused (the gRPC port's reader gives an ``Unread`` for
   bytes it could not parse, or over the method's limit; the HTTP listener refuses those in
   its door before the call starts);
3. drain: refused UNAVAILABLE once the server shuts down (the health service's excepted),
   counted while in flight, streams ended when told (``ops.drain``);
4. credentials: ``authorization: Bearer <seat token or API key>`` read once into
   ``credentials()`` (malformed: UNAUTHENTICATED before any handler runs);
5. quotas: a client's open streams (``Quotas.stream``);
6. errors: whatever the handler raised answered with its status code, message and
   ``ErrorInfo`` (``Refused``, which the door writes); anything unexpected logged with a
   request id and answered INTERNAL with that id, without its text.

The byte limit of each method's requests is here too (``limit``): the gRPC port refuses a
message over it before parsing it, the HTTP listener a body over it before reading it whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
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
from boneyard.server.ops.metrics import BIDI_STREAM, SERVER_STREAM, UNARY
from boneyard.server.ops.observing import CallObserver, Outcome, Told
from boneyard.server.quotas import QuotaExceeded, Quotas, peer_of
from boneyard.server.store import errors as store_errors
from boneyard.server.transport.refusals import Refusal, reason_of

__all__ = [
    "DEFAULT_REQUEST_LIMIT",
    "INTERNAL_ERROR",
    "MAX_MESSAGE",
    "Caller",
    "Pipeline",
    "Refused",
    "Unread",
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

MAX_MESSAGE = 1000
"""Characters of an error message at most: a message that quoted a huge input whole would
not fit in the trailers (the client would see RESOURCE_EXHAUSTED instead of the error)."""
_CUT = " ... (shortened)"

_HEALTH = "/grpc.health.v1.Health/"

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

Handler = Callable[[Any, Any], Any]
"""A servicer's method: ``(request, context)`` to an answer, or to a stream of them."""
Refuse = Callable[[Refusal, Any], Awaitable[Any]]
"""A door's way to answer a refusal in its own protocol, given the call's context (gRPC's
``context.abort_with_status``): it raises."""
Answered = Callable[[BaseException, Any], grpc.StatusCode | None]
"""A door's way to tell an error that has already answered the call (gRPC's ``context.abort``)
and with which code, given the call's context; ``None`` for any other error."""


class Unread:
    """What a door's reader gives for a request it could not read (not its method's message,
    over the method's byte limit): refused inside the call, so that it is observed and
    counted like any other, with the refusal it says."""

    __slots__ = ()

    def refusal(self, method: str) -> Refusal:
        raise NotImplementedError


class Refused(Exception):
    """A call refused: the door writes ``refusal`` in its own protocol."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


class Caller:
    """Who makes a call, as both doors say it: the metadata (lowercase keys) and the peer in
    grpc's form (``ipv4:1.2.3.4:5678``), so that one client's quotas count on both doors.
    (A plain class: a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``, at every call of both doors.)"""

    __slots__ = ("metadata", "peer")

    def __init__(self, metadata: Any, peer: str) -> None:
        self.metadata = metadata
        self.peer = peer


def credentials() -> str | None:
    """The bearer token (seat token or API key) of the call being handled, if it sent one."""
    return _credentials.get()


def use_credentials(metadata: Any) -> None:
    """Read the call's bearer token (``Unauthenticated`` if malformed) for ``credentials()``."""
    _credentials.set(_bearer(metadata))


_BEARERS: dict[str | bytes, str] = {}
"""The token of each authorization value seen lately: a client sends the same one at every
call (its reading, a few string operations, is then a look-up). Only well-formed ones."""
_MAX_BEARERS = 4096


def _bearer(metadata: Any) -> str | None:
    for key, value in metadata or ():
        if key == "authorization":
            token = _BEARERS.get(value)
            if token is None:
                token = _token_of(value)
                if len(_BEARERS) >= _MAX_BEARERS:
                    _BEARERS.clear()
                _BEARERS[value] = token
            return token
    return None


def _token_of(value: str | bytes) -> str:
    """The token of an authorization value (``Unauthenticated`` if malformed)."""
    text = value if isinstance(value, str) else value.decode()
    scheme, _, token = text.partition(" ")
    token = token.strip()
    if not token or scheme.lower() != "bearer":
        raise Unauthenticated(
            "the authorization metadata must be 'Bearer <seat token or API key>'",
            reason="MALFORMED_AUTHORIZATION",
        )
    return token


def status_for(error: BaseException) -> grpc.StatusCode | None:
    """The status code of an expected error; ``None`` for a bug."""
    for kind in type(error).__mro__:
        code = _STATUS_CODES.get(kind)
        if code is not None:
            return code
    return None


def refusal_for(error: Exception, method: str, metadata: Any) -> Refusal:
    """What answers ``error`` (for every door): an expected error's status code, its own
    message (shortened) and reason; anything else is logged with a request id and is
    INTERNAL, with that id in the message and the metadata."""
    if isinstance(error, Refused):
        return error.refusal
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


def shortened(message: str) -> str:
    """``message``, cut to at most ``MAX_MESSAGE`` characters with a mark that it was."""
    if len(message) <= MAX_MESSAGE:
        return message
    return message[: MAX_MESSAGE - len(_CUT)] + _CUT


def _never_answered(error: BaseException, context: Any) -> grpc.StatusCode | None:
    return None


class Pipeline:
    """The concerns every call shares (the module's doc), for one server: its drain, its
    quotas, the observer of its calls (``None``: not observed) and the byte limits of the
    methods whose requests may be larger or smaller than ``DEFAULT_REQUEST_LIMIT``."""

    def __init__(
        self,
        drain: Drain,
        quotas: Quotas,
        observer: CallObserver | None = None,
        limits: Mapping[str, int] | None = None,
    ) -> None:
        self._drain = drain
        self._quotas = quotas
        self._observer = observer
        self._limits = dict(limits or {})

    def limit(self, method: str) -> int:
        """The most bytes a request of ``method`` (``/package.Service/Method``) may have."""
        return self._limits.get(method, DEFAULT_REQUEST_LIMIT)

    def unary(
        self,
        method: str,
        transport: str,
        handler: Handler,
        *,
        answered: Answered = _never_answered,
        refuse: Refuse | None = None,
    ) -> Callable[[Any, Any], Awaitable[Any]]:
        """``handler`` of ``method`` with the pipeline around it, for the door ``transport``
        (``grpc`` or ``http``), called with the request and the door's context (its
        ``invocation_metadata()`` and ``peer()`` say who calls): a request the door could not
        read (``Unread``) is refused with its refusal; an error ``answered`` recognises passes
        through as it is; a refusal is answered by ``refuse(refusal, context)`` (which raises),
        or raised as ``Refused`` for the door to answer. (One coroutine for the whole call:
        every layer a coroutine deep is passed through again at each wait of the handler.)"""
        refuse_if_draining = self._refuser(method)
        drain = self._drain
        observe = self._observer_of(method, transport, UNARY)

        async def call(request: Any, context: Any) -> Any:
            # (The peer read now: a grpc call's context may be gone by the time a line would
            # quote it.)
            metadata = context.invocation_metadata()
            with observe(metadata, context.peer(), request) as outcome:
                try:
                    if isinstance(request, Unread):
                        raise Refused(request.refusal(method))
                    refuse_if_draining()
                    _credentials.set(_bearer(metadata))  # (``use_credentials``, a call less)
                    # Counted in flight by the drain, the handler awaited here (not in a
                    # coroutine of the drain's: one less at every call).
                    task = drain.enter(method)
                    try:
                        return await handler(request, context)
                    except asyncio.CancelledError:
                        drain.cut_off(task)
                        raise  # the client went away
                    finally:
                        drain.leave(task)
                except Exception as error:  # noqa: BLE001 - every error gets a status
                    raise await _refused(
                        error, method, context, metadata, outcome, answered, refuse
                    ) from None

        return call

    def stream(
        self,
        method: str,
        transport: str,
        handler: Callable[[Any, Any], AsyncIterator[Any]],
        *,
        answered: Answered = _never_answered,
        refuse: Refuse | None = None,
    ) -> Callable[[Any, Any], AsyncGenerator[Any, None]]:
        """As ``unary``, for a server stream: its messages as the handler yields them."""

        def opened(request: Any, context: Any, outcome: Outcome) -> AsyncIterator[Any]:
            if isinstance(request, Unread):
                raise Refused(request.refusal(method))
            return handler(request, context)

        return self._streamed(method, transport, SERVER_STREAM, opened, answered, refuse)

    def bidi(
        self,
        method: str,
        transport: str,
        handler: Callable[[AsyncIterator[Any], Any], AsyncIterator[Any]],
        *,
        answered: Answered = _never_answered,
        refuse: Refuse | None = None,
    ) -> Callable[[AsyncIterator[Any], Any], AsyncGenerator[Any, None]]:
        """As ``stream``, for a stream each way: the handler reads the client's messages as
        they come, each counted first (one the door could not read ends the call with its
        refusal), and its own messages go out as it yields them."""

        def opened(
            requests: AsyncIterator[Any], context: Any, outcome: Outcome
        ) -> AsyncIterator[Any]:
            async def checked() -> AsyncIterator[Any]:
                async for request in requests:
                    outcome.received()
                    if isinstance(request, Unread):
                        raise Refused(request.refusal(method))
                    yield request

            return handler(checked(), context)

        return self._streamed(method, transport, BIDI_STREAM, opened, answered, refuse)

    def _streamed(
        self,
        method: str,
        transport: str,
        kind: str,
        opened: Callable[[Any, Any, Outcome], AsyncIterator[Any]],
        answered: Answered,
        refuse: Refuse | None,
    ) -> Callable[[Any, Any], AsyncGenerator[Any, None]]:
        """A stream's call, given the request (or the requests) and the door's context:
        ``opened(request or requests, context, outcome)`` checks what it can and makes the
        handler's stream of messages; a refusal is answered as ``unary`` says. (One generator
        between the door and the handler's: every layer is stepped through again at every
        message of every watcher.)"""
        refuse_if_draining = self._refuser(method)
        drain, quotas = self._drain, self._quotas
        observe = self._observer_of(method, transport, kind)

        async def call(request: Any, context: Any) -> AsyncGenerator[Any, None]:
            caller = Caller(context.invocation_metadata(), context.peer())
            observed = request if kind == SERVER_STREAM else None  # (a stream: none yet)
            with observe(caller.metadata, caller.peer, observed) as outcome:
                try:
                    messages = opened(request, context, outcome)
                    refuse_if_draining()
                    use_credentials(caller.metadata)
                    with quotas.stream(peer_of(caller.peer)):
                        # The handler's messages awaited here, in the stream's own task (in
                        # its context: the caller's credentials stay set), as the drain asks
                        # (``Drain.open_stream``).
                        stream = drain.open_stream(method)
                        following = messages.__anext__
                        try:
                            while True:
                                if drain.ending:
                                    drain.end(stream)
                                stream.waiting = True
                                try:
                                    message = await following()
                                except StopAsyncIteration:
                                    break
                                except asyncio.CancelledError:
                                    drain.cancelled(stream)
                                    raise  # the client went away
                                finally:
                                    stream.waiting = False
                                outcome.sent()
                                yield message
                        finally:
                            try:
                                aclose = getattr(messages, "aclose", None)
                                if aclose is not None:  # (a no-op if the handler has ended)
                                    await aclose()
                            finally:
                                drain.close_stream(stream)
                except Exception as error:  # noqa: BLE001 - every error gets a status
                    raise await _refused(
                        error, method, context, caller.metadata, outcome, answered, refuse
                    ) from None

        return call

    def _refuser(self, method: str) -> Callable[[], None]:
        # The health service says NOT_SERVING while the server drains: it is never refused.
        return (lambda: None) if method.startswith(_HEALTH) else self._drain.refuse

    def _observer_of(
        self, method: str, transport: str, kind: str
    ) -> Callable[[Any, str, Any], contextlib.AbstractContextManager[Outcome]]:
        """How a call of ``method`` on ``transport`` is observed, given its metadata, peer
        and request (its metrics' series found once, here, not at every call)."""
        if self._observer is None:
            return lambda metadata, peer, request: contextlib.nullcontext(Told())
        return self._observer.of(method, transport, kind)


async def _refused(
    error: Exception,
    method: str,
    context: Any,
    metadata: Any,
    outcome: Outcome,
    answered: Answered,
    refuse: Refuse | None,
) -> BaseException:
    """What a call that failed with ``error`` raises: the error itself if the door answered
    it already; else its refusal, answered through the door's ``refuse`` if it gave one (which
    raises), or as ``Refused`` for the door to answer."""
    code = answered(error, context)
    if code is not None:
        outcome.code = code
        return error
    refusal = refusal_for(error, method, metadata)
    outcome.code = refusal.code
    if refuse is not None:
        await refuse(refusal, context)
    return Refused(refusal)
