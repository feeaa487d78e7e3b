"""The services over HTTP, for browsers: Connect, gRPC-Web and gRPC (over HTTP/2) on a listener
beside the gRPC port (``--http-listen``), in the same process and event loop.

There is one set of handlers: every call here is a call of the very servicer object the gRPC
port serves (``GameServicer`` ...), through the very pipeline of cross-cutting concerns
(``boneyard.server.transport.pipeline``: observing, drain, credentials, quotas, errors).
``bridge`` gives connectrpc's generated ASGI applications (``boneyard.api.v1.*_connect``) an
object whose snake_case methods call the CamelCase ones with a context that answers what the
servicers ask of grpc's (the peer, the metadata, ``abort``), and write a refusal as a
``ConnectError`` with the refusal's ``ErrorInfo``. Streams that yield pre-encoded bytes
(WatchGame) are decoded for connectrpc, which encodes each message for its protocol.

A read (``idempotency_level = NO_SIDE_EFFECTS`` in the protos) may also come as a Connect GET,
the request in the query (connectrpc reads it); its answer then says how long it may be kept
(``caching``), and the door refuses a GET whose encoding is neither ``json`` nor ``proto``.

Beside the services: server reflection, v1 and v1alpha, with the API's comments
(``transport.reflection``: the same services the gRPC port serves, listing the services served
here), ``GET /healthz`` (the gRPC health service's answer, as JSON), and the web app
(``webapp/``, built from ``web/``) at ``/``.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from connectrpc_grpcreflect import (
    ServerReflectionAlphaASGIApplication,
    ServerReflectionASGIApplication,
)
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health, health_pb2
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
    matches_connect,
    matches_pb2,
    ratings_connect,
    ratings_pb2,
)
from boneyard.server.transport.http import caching, codecs
from boneyard.server.transport.http.codecs import Encoded
from boneyard.server.transport.http.door import (
    CLIENT_GONE,
    DEFAULT_BODY_TIMEOUT,
    Door,
    StreamRefused,
)
from boneyard.server.transport.pipeline import Pipeline, Refused, shortened
from boneyard.server.transport.reflection import reflection_services
from boneyard.server.transport.refusals import STATUS_TRAILER, Refusal

__all__ = ["Services", "bridge", "http_app"]

log = logging.getLogger(__name__)


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
    "Boneyard-Game",
]
"""What a browser's Connect or gRPC-Web client sends (and may read back, below);
``Boneyard-Game`` is the game a call is about, for a load balancer's hash (the server does not
read it: docs/scaling.md)."""
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

    def refusal(self) -> Refusal:
        """The refusal the abort made: its code and message, and its ``ErrorInfo`` if its
        status carried one."""
        for detail in self.status.details if self.status is not None else ():
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                return Refusal(self.code, self.details, info.reason, dict(info.metadata))
        return Refusal(self.code, self.details, "INTERNAL" if self.code is grpc.StatusCode.INTERNAL else "")

    @classmethod
    def with_status(cls, status: grpc.Status) -> _Aborted:
        for key, value in status.trailing_metadata or ():
            if key == STATUS_TRAILER:
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


def _connect_error(refusal: Refusal) -> ConnectError:
    """The Connect error of a refusal, with the ``google.rpc.Status``'s details (the
    ``ErrorInfo``) as the error's details: connectrpc sends them in the Connect error body
    and, over gRPC-Web and gRPC, in ``grpc-status-details-bin``, as the gRPC port does."""
    code = refusal.code
    # connectrpc spells CANCELLED the Connect protocol's way.
    name = "CANCELED" if code is grpc.StatusCode.CANCELLED else code.name
    return ConnectError(
        Code[name],
        refusal.message,
        details=[
            ConnectAny(type_url=d.type_url, value=d.value)
            for d in refusal.status_proto().details
        ],
    )


def _aborts_refused(handler: Callable[..., Any]) -> Callable[..., Any]:
    """``handler`` whose ``context.abort`` (the library health service's) is a refusal like
    any other."""

    async def call(request: Any, context: _Context) -> Any:
        try:
            return await handler(request, context)
        except _Aborted as aborted:
            raise Refused(aborted.refusal()) from None

    return call


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def bridge(service: ServiceDescriptor, servicer: object, pipeline: Pipeline) -> object:
    """An object with a snake_case method for each of ``service``'s methods (what connectrpc's
    generated ASGI application calls), each calling ``servicer``'s gRPC method through the
    one pipeline (``boneyard.server.transport.pipeline``), as the gRPC port does."""
    methods: dict[str, Callable[..., Any]] = {}
    for method in service.methods:
        handler = getattr(servicer, method.name)
        if method.client_streaming and not method.server_streaming:
            raise TypeError(f"{method.full_name}: a client stream alone is not served")
        if method.server_streaming:
            methods[_snake(method.name)] = _streaming(method, handler, pipeline)
        else:
            methods[_snake(method.name)] = _unary(method, handler, pipeline)
    return _Bridged(methods)


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
    pipeline: Pipeline,
) -> Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]:
    path = f"/{method.containing_service.full_name}/{method.name}"
    output = message_factory.GetMessageClass(method.output_type)
    piped = pipeline.unary(path, "http", _aborts_refused(handler))

    async def call(request: Any, ctx: RequestContext[Any, Any]) -> Any:
        context = _Context(ctx)
        # connectrpc lets a GET reach only the reads (NO_SIDE_EFFECTS): 405 for the others.
        get = ctx.http_method == "GET"
        try:
            answer = await piped(request, context)
        except Refused as refused:
            if get:
                ctx.response_headers["cache-control"] = caching.REFUSED
            raise _connect_error(refused.refusal) from None
        if get:
            sent = any(key == "authorization" for key, _ in context.invocation_metadata())
            ctx.response_headers["cache-control"] = caching.cache_control(
                path, credentials=sent
            )
            ctx.response_headers["vary"] = "Authorization"
        # An answer encoded once (SubmitAction's): sent as these bytes by the binary codec.
        return Encoded(answer, output) if type(answer) is bytes else answer

    return call


def _streaming(
    method: MethodDescriptor,
    handler: Callable[[Any, Any], AsyncIterator[Any]],
    pipeline: Pipeline,
) -> Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]:
    path = f"/{method.containing_service.full_name}/{method.name}"
    if method.client_streaming:  # a stream each way: its requests read as they come
        return _stream_call(method, pipeline.bidi(path, "http", handler), _read)
    return _stream_call(method, pipeline.stream(path, "http", handler), lambda request: request)


def _stream_call(
    method: MethodDescriptor,
    piped: Callable[[Any, Any], AsyncGenerator[Any, None]],
    read: Callable[[Any], Any],
) -> Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]:
    output = message_factory.GetMessageClass(method.output_type)

    async def call(request: Any, ctx: RequestContext[Any, Any]) -> AsyncIterator[Any]:
        try:
            async with contextlib.aclosing(piped(read(request), _Context(ctx))) as messages:
                async for message in messages:
                    # WatchGame's messages are encoded once for every watcher (bytes), and
                    # sent as they are by the binary codec.
                    yield Encoded(message, output) if type(message) is bytes else message
        except Refused as refused:
            raise _connect_error(refused.refusal) from None

    return call


async def _read(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """A stream's requests as connectrpc reads them: the door hands such a body on unread
    (bounding each message), and connectrpc finds what else is wrong with it (a cut envelope)
    as it reads, which is the client's doing, or that the client went away."""
    try:
        async for request in requests:
            yield request
    except StreamRefused as refused:
        raise Refused(refused.refusal) from None
    except ConnectError as error:
        raise Refused(_request_refusal(error)) from None


def _request_refusal(error: ConnectError) -> Refusal:
    """A request connectrpc could not read, as the door refuses one it reads itself."""
    if error.code is Code.CANCELED:  # the client went away before its request ended
        return CLIENT_GONE
    return Refusal(grpc.StatusCode.INVALID_ARGUMENT, shortened(error.message), "MALFORMED_REQUEST")


def _bidirectional(service: ServiceDescriptor) -> list[str]:
    """The paths of ``service``'s methods that stream each way (their bodies come as the
    client sends them: the door hands them on unread)."""
    return [
        f"/{service.full_name}/{m.name}"
        for m in service.methods
        if m.client_streaming and m.server_streaming
    ]


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
    matches: object | None = None


def _descriptor(name: str) -> ServiceDescriptor:
    for pb2 in (
        game_service_pb2,
        competition_pb2,
        archive_pb2,
        challenges_pb2,
        ratings_pb2,
        matches_pb2,
    ):
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
    pipeline: Pipeline,
    *,
    cors_origins: Sequence[str] = (),
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
) -> ASGIApp:
    """The ASGI application of the HTTP listener: every call through ``pipeline``, the server's
    one pipeline of what every call shares (the gRPC port's too), behind the listener's door
    (``door.Door``: the bytes a method's request may have are the pipeline's ``limit``;
    ``body_timeout``, the seconds a body may take to arrive)."""
    routes: list[BaseRoute] = []
    served: list[str] = []
    streams: set[str] = set()
    reads: set[str] = set()
    for module, name, servicer in (
        (game_service_connect, "GameService", services.games),
        (competition_connect, "LobbyService", services.lobby),
        (competition_connect, "TournamentService", services.tournaments),
        (archive_connect, "ArchiveService", services.archive),
        (challenges_connect, "ChallengeService", services.challenges),
        (challenges_connect, "AccountService", services.accounts),
        (ratings_connect, "RatingService", services.ratings),
        (matches_connect, "MatchService", services.matches),
    ):
        if servicer is None:
            continue
        application = getattr(module, f"{name}ASGIApplication")(
            bridge(_descriptor(name), servicer, pipeline),
            codecs=codecs.api_codecs(),
            # The door reads no body over its method's limit; this only keeps connectrpc's own
            # bound no tighter than the largest method of the service.
            read_max_bytes=max(
                pipeline.limit(f"/{_descriptor(name).full_name}/{m.name}")
                for m in _descriptor(name).methods
            ),
        )
        routes.append(Mount(application.path, app=application))
        served.append(_descriptor(name).full_name)
        reads |= caching.check_every_read_has_a_policy(_descriptor(name).methods)
        streams.update(_bidirectional(_descriptor(name)))
    v1, v1alpha = reflection_services(served)
    for reflection in (
        ServerReflectionASGIApplication(
            v1, read_max_bytes=pipeline.limit(""), codecs=codecs.reflection_codecs()
        ),
        ServerReflectionAlphaASGIApplication(
            v1alpha, read_max_bytes=pipeline.limit(""), codecs=codecs.reflection_codecs()
        ),
    ):
        routes.append(Mount(reflection.path, app=reflection))
        streams.add(f"{reflection.path}/ServerReflectionInfo")

    async def healthz(request: Request) -> Response:
        service = request.query_params.get("service", "")
        try:
            answer = await services.health.Check(
                health_pb2.HealthCheckRequest(service=service),
                # Check only aborts (an unknown service): _Bare has that of a ServicerContext.
                _Bare(),  # type: ignore[arg-type]
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
        limit=pipeline.limit,
        body_timeout=body_timeout,
        streams=frozenset(streams),
        reads=frozenset(reads),
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
