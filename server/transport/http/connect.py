"""The services over HTTP, for browsers: the Connect protocol and gRPC-Web on a listener beside
the gRPC port (``--http-listen``), in the same process and event loop.

There is one set of handlers: every Connect or gRPC-Web call is a call of the very servicer
object the gRPC port serves (``GameServicer`` ...). ``bridge`` gives connectrpc's generated ASGI
applications (``boneyard.v1.*_connect``) an object whose snake_case methods do what the gRPC
interceptors do around those servicers — read the bearer token, count the client's streams,
turn errors into the same status codes and messages, refuse new calls and end the streams
while the server shuts down (``boneyard.server.ops.drain``) — and call the CamelCase method with a
context that answers what the servicers ask of grpc's (the peer, the metadata, ``abort``).
Streams that yield pre-encoded bytes (WatchGame) are decoded for connectrpc, which encodes
each message for its protocol (binary or JSON).

Beside the services: ``GET /healthz`` (the gRPC health service's answer, as JSON), and the web
app (``boneyard.server.webapp``, built from ``web/``) at ``/``.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.rpc import status_pb2
from grpc_health.v1 import health, health_pb2
from grpc_status import rpc_status
from protobuf.wkt import Any as ConnectAny
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from boneyard.api.v1 import (
    archive_connect,
    archive_pb2,
    challenges_connect,
    challenges_pb2,
    competition_connect,
    competition_pb2,
    game_service_connect,
    game_service_pb2,
    ratings_connect,
    ratings_pb2,
)
from boneyard.server.ops.drain import Drain
from boneyard.server.ops.observing import CallObserver, Outcome
from boneyard.server.quotas import Quotas, peer_of
from boneyard.server.transport.grpc.interceptors import (
    DEFAULT_REQUEST_LIMIT,
    refusal_for,
    use_credentials,
)
from boneyard.server.transport.http.door import DEFAULT_BODY_TIMEOUT, Door

__all__ = ["MAX_REQUEST_BYTES", "Services", "bridge", "http_app"]

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""The largest request body, as on the gRPC port (grpc's default receive limit)."""

CORS_HEADERS = [
    "Content-Type",
    "Connect-Protocol-Version",
    "Connect-Timeout-Ms",
    "Connect-Accept-Encoding",
    "Connect-Content-Encoding",
    "Accept-Encoding",
    "Content-Encoding",
    "Grpc-Timeout",
    "X-Grpc-Web",
    "X-User-Agent",
    "X-Request-Id",
    "Authorization",
]
"""What a browser's Connect or gRPC-Web client sends (and may read back, below)."""
CORS_EXPOSED = [
    "Content-Encoding",
    "Connect-Content-Encoding",
    "Grpc-Status",
    "Grpc-Message",
    "Grpc-Status-Details-Bin",
]


class _Aborted(Exception):
    """A servicer's ``context.abort`` (or ``abort_with_status``) over HTTP."""

    def __init__(
        self, code: grpc.StatusCode, details: str, status: status_pb2.Status | None = None
    ) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.status = status

    @classmethod
    def with_status(cls, status: grpc.Status) -> _Aborted:
        for key, value in status.trailing_metadata or ():
            if key == rpc_status.GRPC_DETAILS_METADATA_KEY:
                return cls(status.code, status.details, status_pb2.Status.FromString(value))
        return cls(status.code, status.details)


class _Context:
    """What the servicers use of ``grpc.aio.ServicerContext``, answered from a Connect call."""

    def __init__(self, ctx: RequestContext[Any, Any]) -> None:
        self._ctx = ctx
        self._metadata = tuple(
            (key.lower(), value) for key, value in ctx.request_headers.items()
        )

    def peer(self) -> str:
        # In grpc's form ("ipv4:1.2.3.4:5678"), so a client's quotas count both doors alike.
        address = self._ctx.client_address or "unknown:0"
        return f"{'ipv6' if address.count(':') > 1 else 'ipv4'}:{address}"

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def time_remaining(self) -> float | None:
        remaining = self._ctx.timeout_ms
        return None if remaining is None else remaining / 1000

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        raise _Aborted(code, details)

    async def abort_with_status(self, status: grpc.Status) -> None:
        raise _Aborted.with_status(status)


def _connect_error(error: Exception, method: str, context: _Context) -> ConnectError:
    """The Connect error of a refusal, with the ``google.rpc.Status``'s details (the
    ``ErrorInfo``) as the error's details: connectrpc sends them in the Connect error body
    and, over gRPC-Web, in ``grpc-status-details-bin``, as the gRPC port does."""
    if isinstance(error, ConnectError):
        return error
    if isinstance(error, _Aborted):
        code, message = error.code, error.details
        details = list(error.status.details) if error.status is not None else []
    else:
        refusal = refusal_for(error, method, context.invocation_metadata())
        code, message = refusal.code, refusal.message
        details = list(refusal.status_proto().details)
    # connectrpc spells CANCELLED the Connect protocol's way.
    name = "CANCELED" if code is grpc.StatusCode.CANCELLED else code.name
    return ConnectError(
        Code[name],
        message,
        details=[ConnectAny(type_url=d.type_url, value=d.value) for d in details],
    )


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def bridge(
    service: ServiceDescriptor,
    servicer: object,
    quotas: Quotas,
    observer: CallObserver | None = None,
    drain: Drain | None = None,
) -> object:
    """An object with a snake_case method for each of ``service``'s methods (what connectrpc's
    generated ASGI application calls), each calling ``servicer``'s gRPC method; ``observer``
    counts, times and logs each call as ``ObservingInterceptor`` does on the gRPC port, and
    ``drain`` refuses calls and ends streams on shutdown as ``DrainInterceptor`` does."""
    drain = drain or Drain()
    methods: dict[str, Callable[..., Any]] = {}
    for method in service.methods:
        handler = getattr(servicer, method.name)
        if method.server_streaming:
            methods[_snake(method.name)] = _streaming(method, handler, quotas, observer, drain)
        else:
            methods[_snake(method.name)] = _unary(method, handler, observer, drain)
    return _Bridged(methods)


def _observed(
    observer: CallObserver | None, method: str, context: _Context, request: Any, streaming: bool
) -> contextlib.AbstractContextManager[Outcome]:
    if observer is None:
        return contextlib.nullcontext(Outcome())
    return observer.observe(
        method,
        "http",
        metadata=context.invocation_metadata(),
        request=request,
        peer=context.peer(),
        streaming=streaming,
    )


def _status_of(error: ConnectError) -> grpc.StatusCode:
    name = error.code.name
    return grpc.StatusCode.CANCELLED if name == "CANCELED" else grpc.StatusCode[name]


class _Bridged:
    def __init__(self, methods: dict[str, Callable[..., Any]]) -> None:
        self.__dict__.update(methods)


class _Bare:
    """The context of a call the listener makes itself (the health check)."""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        raise _Aborted(code, details)

    async def abort_with_status(self, status: grpc.Status) -> None:
        raise _Aborted.with_status(status)


def _unary(
    method: MethodDescriptor,
    handler: Callable[[Any, Any], Awaitable[Any]],
    observer: CallObserver | None,
    drain: Drain,
) -> Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]:
    path = f"/{method.containing_service.full_name}/{method.name}"

    async def call(request: Any, ctx: RequestContext[Any, Any]) -> Any:
        context = _Context(ctx)
        with _observed(observer, path, context, request, streaming=False) as outcome:
            try:
                drain.refuse()
                use_credentials(context.invocation_metadata())
                return await drain.call(path, handler, request, context)
            except Exception as error:  # noqa: BLE001 - every error gets a status, as on gRPC
                answer = _connect_error(error, path, context)
                outcome.code = _status_of(answer)
                raise answer from None

    return call


def _streaming(
    method: MethodDescriptor,
    handler: Callable[[Any, Any], AsyncIterator[Any]],
    quotas: Quotas,
    observer: CallObserver | None,
    drain: Drain,
) -> Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]:
    path = f"/{method.containing_service.full_name}/{method.name}"
    output = message_factory.GetMessageClass(method.output_type)

    async def call(request: Any, ctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        context = _Context(ctx)
        with _observed(observer, path, context, request, streaming=True) as outcome:
            try:
                drain.refuse()
                use_credentials(context.invocation_metadata())
                with quotas.stream(peer_of(context.peer())):
                    async for message in drain.stream(path, handler(request, context)):
                        # WatchGame's messages are encoded once for every watcher (bytes).
                        yield output.FromString(message) if type(message) is bytes else message
            except Exception as error:  # noqa: BLE001 - every error gets a status, as on gRPC
                answer = _connect_error(error, path, context)
                outcome.code = _status_of(answer)
                raise answer from None

    return call


@dataclass(frozen=True)
class Services:
    """The servicers the gRPC port serves, and its health service."""

    games: object
    lobby: object
    tournaments: object
    archive: object
    health: health.aio.HealthServicer
    challenges: object | None = None
    accounts: object | None = None
    ratings: object | None = None


def _descriptor(name: str) -> ServiceDescriptor:
    for pb2 in (game_service_pb2, competition_pb2, archive_pb2, challenges_pb2, ratings_pb2):
        if name in pb2.DESCRIPTOR.services_by_name:
            return pb2.DESCRIPTOR.services_by_name[name]
    raise LookupError(name)


def web_app_dir() -> Path | None:
    """The built web app (``make web`` writes it into the package), if there is one."""
    try:
        found = resources.files("boneyard.server.transport.http") / "webapp"
    except ModuleNotFoundError:  # pragma: no cover - the package is always there
        return None
    path = Path(str(found))
    return path if (path / "index.html").is_file() else None


def http_app(
    services: Services,
    quotas: Quotas,
    *,
    cors_origins: Sequence[str] = (),
    observer: CallObserver | None = None,
    drain: Drain | None = None,
    request_limits: Mapping[str, int] | None = None,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
) -> ASGIApp:
    """The ASGI application of the HTTP listener (``observer``: counts and logs its calls;
    ``drain``: the server's, whose shutdown refuses its calls and ends its streams as on the
    gRPC port), behind its door (``http_door.Door``: ``request_limits``, the bytes a method's
    request may have where it is not ``DEFAULT_REQUEST_LIMIT``, as on the gRPC port;
    ``body_timeout``, the seconds a body may take to arrive)."""
    routes: list[BaseRoute] = []
    for module, name, servicer in (
        (game_service_connect, "GameService", services.games),
        (competition_connect, "LobbyService", services.lobby),
        (competition_connect, "TournamentService", services.tournaments),
        (archive_connect, "ArchiveService", services.archive),
        (challenges_connect, "ChallengeService", services.challenges),
        (challenges_connect, "AccountService", services.accounts),
        (ratings_connect, "RatingService", services.ratings),
    ):
        if servicer is None:
            continue
        application = getattr(module, f"{name}ASGIApplication")(
            bridge(_descriptor(name), servicer, quotas, observer, drain),
            # VerifyRecord takes a whole record; every other request is small (as on gRPC).
            read_max_bytes=MAX_REQUEST_BYTES if name == "ArchiveService" else DEFAULT_REQUEST_LIMIT,
        )
        routes.append(Mount(application.path, app=application))

    async def healthz(request: Request) -> Response:
        service = request.query_params.get("service", "")
        try:
            answer = await services.health.Check(
                health_pb2.HealthCheckRequest(service=service), _Bare()
            )
        except _Aborted as aborted:
            return JSONResponse({"error": aborted.details}, status_code=404)
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
        return JSONResponse({"status": status}, status_code=200 if status == "SERVING" else 503)

    routes.append(Route("/healthz", healthz))
    built = web_app_dir()
    if built is not None:
        routes.append(Mount("/", app=StaticFiles(directory=built, html=True)))
    app: ASGIApp = Starlette(routes=routes)
    app = Door(
        app,
        request_limits=request_limits or {},
        default_limit=DEFAULT_REQUEST_LIMIT,
        body_timeout=body_timeout,
    )
    if cors_origins:
        app = CORSMiddleware(
            app,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=CORS_HEADERS,
            expose_headers=CORS_EXPOSED,
            max_age=7200,
        )
    return app
