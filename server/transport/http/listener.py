"""The HTTP listener's server: Hypercorn, on the running event loop, beside the gRPC port.

Hypercorn speaks HTTP/1.1 and HTTP/2 (cleartext by prior knowledge or upgrade, and over TLS by
ALPN), with the ASGI trailers that gRPC needs. Around it, what a listener open to the network
needs and Hypercorn's own loop does not give:

- ``max_connections_per_client`` open connections from one address at once; the next are
  closed as they come (a client that opens hundreds holds nothing);
- a connection with no request under way (its headers not all sent yet, or idle between
  requests) is closed after ``header_timeout`` seconds (Hypercorn's keep-alive timeout, which
  starts when the connection opens, and again when a cleartext one turns to HTTP/2); the TLS
  handshake has as long. An HTTP/2 connection is told so first (GOAWAY, NO_ERROR), and closed
  once the client has closed it (as a client does when it has read a GOAWAY and has nothing
  under way), or ``header_timeout`` seconds later, and never before the requests taken are
  answered; a request that crossed the GOAWAY (after the last stream it names) is refused,
  REFUSED_STREAM, which a client sends again on another connection. Closed without a word, or
  a fixed second after the GOAWAY, a connection lost the request a client sent as it closed
  (a gRPC call failed UNAVAILABLE, "Socket closed": twice in 100,000 requests of the HTTP
  fuzzer on a loaded machine). (A PING after the GOAWAY would tell sooner that the client
  has read it, but Python's h2, under httpx among others, takes a PING after a GOAWAY for a
  protocol error.)
- a request's body has ``body_timeout`` seconds once its headers are in (``http_door.Door``);
- an HTTP/2 connection that has taken ``HTTP2_REQUESTS_PER_CONNECTION`` requests is told
  GOAWAY the same way, and the requests that crossed it refused. Hypercorn's own limit ended
  the connection through h2, which then took every frame the client had sent meanwhile for a
  protocol error and ended the connection again, GOAWAY PROTOCOL_ERROR, failing the calls under
  way (UNAVAILABLE, "GOAWAY received; Error code: 1": the HTTP fuzzer's gRPC channel met it
  once or twice in 100,000 requests, every thousandth request being the moment);
- over HTTP/2, a malformed request is that request's error (RST_STREAM, PROTOCOL_ERROR, as RFC
  9113 section 8.1.1 says), not its connection's: h2 checks a request's header list as it
  parses the frame and ends the whole connection (GOAWAY) when a check fails, and Hypercorn
  drops the connection without a word on a method or path that is not ASCII, so one bad
  request (an empty ``authorization: Bearer `` of a gRPC client: its value ends in a space) cut
  every other call under way on the connection. Here a header value's surrounding
  whitespace is dropped, as HTTP/1.1 parsers drop it (RFC 9110 section 5.5), and a request
  that still breaks a rule of RFC 9113 section 8.2 (h2's own checks) or has a method or path
  that is not ASCII is refused alone. (A ``content-length`` that the body belies still ends
  the connection: h2 counts the body as it parses it.)
- a connection ends, and stops counting against its client, as soon as its peer has gone and
  its requests have ended: what an application left unread of a request's body is read and
  dropped once its answer is whole (``_read_to_the_end``), and the answers an HTTP/2 peer went
  away before are dropped (Hypercorn held such connections for ever: at 20,000 requests of
  the HTTP fuzzer, every new connection was closed at once).

Hypercorn's ``serve`` would also install signal handlers and run the ASGI lifespan; the server
process owns its signals, and the applications need no lifespan, so the connections are
accepted here and each is handed to Hypercorn's connection handler (``TCPServer``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import functools
import logging
import re
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import h2.errors
import h2.events
import h2.exceptions
import h2.utilities
import hyperframe.frame
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.asyncio.worker_context import WorkerContext
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol import ProtocolWrapper
from hypercorn.protocol.h2 import H2Protocol
from hypercorn.protocol.h11 import H2CProtocolRequiredError, H2ProtocolAssumedError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from boneyard.server.ops.drain import Grace
from boneyard.server.transport.http.door import DEFAULT_BODY_TIMEOUT
from boneyard.server.transport.pipeline import shortened

__all__ = ["DEFAULT_HEADER_TIMEOUT", "DEFAULT_MAX_CONNECTIONS_PER_CLIENT", "HttpLimits", "HttpListener"]

log = logging.getLogger(__name__)

DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 64
ANSWERED_POLL = 0.1
"""Seconds between looks at whether a closing connection's requests are answered."""
MAX_HEADER_BYTES = 16 * 1024
"""An HTTP/1.1 request line and headers, at most (HTTP/2: the header list, at most 64 KiB)."""
HTTP2_REQUESTS_PER_CONNECTION = 1000
"""Requests one HTTP/2 connection takes before it is told GOAWAY (as Hypercorn's
``keep_alive_max_requests``), so that no connection's state grows for ever."""


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """How long a client may take and how much it may hold (documented options of
    ``boneyard-server``)."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections_per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT


_REQUEST_HEADERS = h2.utilities.HeaderValidationFlags(
    is_client=False, is_trailer=False, is_response_header=False, is_push_promise=False
)
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BLANKS = b" \t"


def _request_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """An HTTP/2 request's header list with the whitespace around its values dropped;
    ``h2.exceptions.ProtocolError`` if it is malformed (RFC 9113 section 8.2, checked as h2
    checks it) or its method is no token or its path not ASCII (Hypercorn decodes both as
    ASCII)."""
    stripped = [(name, value.strip(_BLANKS)) for name, value in headers]
    checked = list(h2.utilities.validate_headers(stripped, _REQUEST_HEADERS))
    for name, value in checked:
        if name == b":method" and not _TOKEN.fullmatch(value):
            raise h2.exceptions.ProtocolError(f"the method {value[:40]!r} is not a token")
        if name == b":path" and not value.isascii():
            raise h2.exceptions.ProtocolError(f"the path {value[:80]!r} is not ASCII")
    return checked


class _GoneStream:
    """What stands for a stream Hypercorn has let go: whatever still comes for it is dropped."""

    async def handle(self, event: Event) -> None:
        pass


class _Streams(dict[int, Any]):
    """A connection's streams, where one that Hypercorn has let go (answered, or refused here)
    takes what comes for it and drops it. Hypercorn looks the stream of a DATA frame up with
    ``[]`` and acknowledges the frame after: the data of a request answered before its body
    ended (the door's refusals) raised KeyError, which stopped the connection's reading without
    a word, its flow control window unacknowledged, so the rest of the body and every other
    request on the connection waited for ever (the HTTP fuzzer's request 63815 of seed 13)."""

    def __missing__(self, stream_id: int) -> _GoneStream:
        return _GONE


_GONE = _GoneStream()


class _Http2(H2Protocol):
    """Hypercorn's HTTP/2 connection, which refuses a malformed request alone (see the
    module's doc)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        # Hypercorn's limit of requests would end the connection through h2; this one's is
        # HTTP2_REQUESTS_PER_CONNECTION, told by GOAWAY (see the module's doc).
        self.config = copy.copy(self.config)
        self.config.keep_alive_max_requests = sys.maxsize
        # Checked here, request by request (_request_headers), instead of by h2 as it parses.
        self.connection.config.validate_inbound_headers = False
        self.streams = _Streams()
        self.connection.receive_data = self._receiving(self.connection.receive_data)  # type: ignore[method-assign,assignment]

    def _receiving(
        self, receive_data: Callable[[bytes], list[h2.events.Event]]
    ) -> Callable[[bytes], list[h2.events.Event]]:
        """h2's ``receive_data``, saying why when it ends the connection: Hypercorn answers
        h2's ProtocolError with a GOAWAY and closes without a word, which left a GOAWAY
        PROTOCOL_ERROR that the HTTP fuzzer's gRPC client met unexplained."""

        def receiving(data: bytes) -> list[h2.events.Event]:
            try:
                return receive_data(data)
            except h2.exceptions.ProtocolError as error:
                log.info(
                    "HTTP/2 connection from %s ended (PROTOCOL_ERROR): %s",
                    self._peer(),
                    shortened(f"{type(error).__name__}: {error}"),
                )
                raise

        return receiving

    async def _handle_events(self, events: list[h2.events.Event]) -> None:
        refused: set[int] = set()
        kept: list[h2.events.Event] = []
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                code = self._refusal(event)
                if code is None:
                    kept.append(event)
                    continue
                # (Unless the client has reset it already, or it has ended.)
                with contextlib.suppress(h2.exceptions.StreamClosedError):
                    self.connection.reset_stream(event.stream_id, code)
                refused.add(event.stream_id)
            elif getattr(event, "stream_id", None) in refused:
                if isinstance(event, h2.events.DataReceived):
                    # The connection's flow control window counts it all the same.
                    self.connection.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
            else:
                kept.append(event)
        await super()._handle_events(kept)
        if self.keep_alive_requests >= HTTP2_REQUESTS_PER_CONNECTION:
            await self.go_away()

    def _refusal(self, request: h2.events.RequestReceived) -> h2.errors.ErrorCodes | None:
        """``None`` if the request is taken (its header list made clean), else the code that
        refuses it."""
        if self.last_stream is not None and request.stream_id > self.last_stream:
            return h2.errors.ErrorCodes.REFUSED_STREAM  # after the GOAWAY: sent again elsewhere
        try:
            request.headers = _request_headers(list(request.headers or ()))
        except h2.exceptions.ProtocolError as error:
            log.info("HTTP/2 request from %s refused: %s", self._peer(), error)
            return h2.errors.ErrorCodes.PROTOCOL_ERROR
        return None

    async def handle(self, event: Event) -> None:
        if isinstance(event, Closed):
            # Hypercorn stops sending when the connection closes, and leaves the answers
            # still to be sent waiting for it (an application waits in its send until they
            # are): the connection's task, and the client's count, were held for ever. They
            # are dropped instead.
            for buffer in list(self.stream_buffers.values()):
                await buffer.close()
        await super().handle(event)

    def _peer(self) -> str:
        return str(self.client[0]) if self.client else "unknown"

    last_stream: int | None = None
    """The last stream taken, once a GOAWAY has named it: a later one is refused."""

    async def go_away(self) -> None:
        """GOAWAY, NO_ERROR, naming the last stream taken: the client sends no more requests
        here, and sends again elsewhere those it sent meanwhile, which are refused
        (REFUSED_STREAM, "not processed"). The frame is written here rather than by h2, which
        would take the connection for closed and end it, and the requests still to be
        answered, at the client's next request."""
        if self.last_stream is not None:
            return
        self.last_stream = self.connection.highest_inbound_stream_id
        frame = hyperframe.frame.GoAwayFrame(stream_id=0, last_stream_id=self.last_stream)
        await self._flush()
        await self.send(RawData(data=frame.serialize()))

    @property
    def answering(self) -> bool:
        """Whether requests are under way."""
        return bool(self.streams) and not self.closed


class _Protocols(ProtocolWrapper):
    """Hypercorn's choice of HTTP/1.1 or HTTP/2 for a connection (by ALPN, or the HTTP/2
    preface or an h2c upgrade on a cleartext one), making ``_Http2`` connections."""

    def __init__(self, made: ProtocolWrapper) -> None:
        # Built from the parts of the one Hypercorn's TCPServer.run made.
        alpn = "h2" if isinstance(made.protocol, H2Protocol) else None
        parts = (made.app, made.config, made.context, made.task_group, made.state)
        super().__init__(*parts, made.ssl, made.client, made.server, made.send, alpn)
        if alpn == "h2":
            self.protocol = self._http2()

    def _http2(self) -> _Http2:
        parts = (self.app, self.config, self.context, self.task_group, self.state)
        return _Http2(*parts, self.ssl, self.client, self.server, self.send)

    async def handle(self, event: Event) -> None:
        try:
            return await self.protocol.handle(event)
        except H2ProtocolAssumedError as error:  # the HTTP/2 preface on a cleartext connection
            self.protocol = self._http2()
            await self.protocol.initiate()
            data = error.data
        except H2CProtocolRequiredError as error:  # an h2c upgrade
            self.protocol = self._http2()
            await self.protocol.initiate(error.headers, error.settings)
            data = error.data
        if data:
            await self.protocol.handle(RawData(data=data))
        # HTTP/1.1 stopped the idle timer when the preface came (as a request), and HTTP/2
        # restarts it only when a stream closes: without this, a connection that sends the
        # preface and never a request would be held for ever.
        await self.send(Updated(idle=self.protocol.idle))
        return None


class _Connection(TCPServer):
    """Hypercorn's connection, with ``_Protocols`` for Hypercorn's own choice of protocol,
    which once its peer has gone does not wait out the keep-alive timeout before it ends
    (its idle timer would hold the connection, and the client's count, for that long)."""

    @property
    def protocol(self) -> ProtocolWrapper:
        return self._protocols

    @protocol.setter
    def protocol(self, made: ProtocolWrapper) -> None:
        # TCPServer.run makes Hypercorn's ProtocolWrapper and sets it here.
        self._protocols = made if isinstance(made, _Protocols) else _Protocols(made)

    _gone = False
    """The peer has gone (the connection was read to its end)."""

    @functools.cached_property
    def _peer_gone(self) -> asyncio.Event:
        """Set when the peer has gone."""
        return asyncio.Event()

    async def _read_data(self) -> None:
        await super()._read_data()
        self._gone = True
        self._peer_gone.set()
        await self.idle_task.stop()

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, Updated) and self._gone:
            # A stream that ends after the peer went would start the timer again (HTTP/2 says
            # it is idle then), and the connection would wait it out.
            return
        await super().protocol_send(event)

    async def _initiate_server_close(self) -> None:
        # Hypercorn's, when the keep-alive timeout passes (or the server stops): over HTTP/2,
        # a GOAWAY first (see the module's doc).
        http2 = self.protocol.protocol
        if isinstance(http2, _Http2) and not http2.closed:
            await http2.go_away()
            if not self.context.terminated.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._peer_gone.wait(), self.config.keep_alive_timeout)
                # Requests taken before the GOAWAY (the last it names) are answered.
                while http2.answering:
                    await asyncio.sleep(ANSWERED_POLL)
        await super()._initiate_server_close()


_discarding: set[asyncio.Task[None]] = set()


def _read_to_the_end(app: ASGIApp) -> ASGIApp:
    """``app``, with what it did not read of a request read and dropped from the end of its
    answer until the request's connection or stream ends. Hypercorn hands a body to the
    application through a queue of ``max_app_queue_size`` messages and waits while it is full,
    and tells the application that the stream ended through the same queue, within the send of
    the answer's last part: a body the application stopped reading (the door's refusal of a
    body past its drain limit, or of a request it refused before reading its body) filled the
    queue, that send waited for ever, and so did the connection, its socket and the client's
    count of connections held."""

    async def reading(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        ended = discarding = False

        async def receiving() -> Message:
            nonlocal ended
            message = await receive()
            if message["type"] == "http.disconnect" or not message.get("more_body", False):
                ended = True
            return message

        def discard() -> None:
            nonlocal discarding
            if not ended and not discarding:
                discarding = True
                task = asyncio.get_running_loop().create_task(_discard(receive))
                _discarding.add(task)
                task.add_done_callback(_discarding.discard)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                discard()  # the answer is whole: nothing the application reads is left
            await send(message)

        try:
            await app(scope, receiving, sending)
        finally:
            discard()

    return reading


async def _discard(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _summary(error: BaseException) -> str:
    """``error``'s type and message, the first of a group's, shortened."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 300 else text[:297] + "..."


class HttpListener:
    """The HTTP listener, served on the running event loop."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        tls: tuple[str, str] | None = None,
        limits: HttpLimits | None = None,
    ) -> None:
        self._limits = limits or HttpLimits()
        config = Config()
        config.keep_alive_timeout = self._limits.header_timeout
        config.ssl_handshake_timeout = self._limits.header_timeout
        config.h11_max_incomplete_size = MAX_HEADER_BYTES
        config.include_server_header = False
        config.accesslog = None
        config.errorlog = logging.getLogger("hypercorn.error")
        config.graceful_timeout = 0
        if tls is not None:
            config.certfile, config.keyfile = tls
        self._config = config
        self._ssl = config.create_ssl_context() if tls is not None else None
        # One ASGI protocol typed twice: Starlette's scope is any MutableMapping, Hypercorn's
        # a TypedDict per kind (which mypy will not take for a MutableMapping).
        self._app = ASGIWrapper(_read_to_the_end(app))  # type: ignore[arg-type]
        self._context = WorkerContext(None)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._per_client: collections.Counter[str] = collections.Counter()
        self.refused_connections = 0
        """Connections closed at once because their address held too many."""

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port``; the port (a free one for 0). ``OSError`` if the address
        is in use or not this host's."""
        host = host.strip("[]")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.create_server((host, port), family=family, backlog=1024)
        self._server = await asyncio.start_server(
            self._connected,
            sock=sock,
            ssl=self._ssl,
            ssl_handshake_timeout=self._limits.header_timeout if self._ssl else None,
        )
        return int(sock.getsockname()[1])

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        client = str(peer[0]) if isinstance(peer, tuple) else "unknown"
        if self._per_client[client] >= self._limits.max_connections_per_client:
            self.refused_connections += 1
            if self.refused_connections % 1000 == 1:
                log.warning(
                    "HTTP: %s holds %d connections, the most one client may: closing its next "
                    "(%d closed so far)",
                    client,
                    self._per_client[client],
                    self.refused_connections,
                )
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            return
        # Without TCP_NODELAY (asyncio sets it only on sockets it makes itself) Nagle's
        # algorithm held the second piece of every answer Hypercorn writes in pieces until the
        # client's delayed ACK: 40 ms more on each request but a connection's first.
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._per_client[client] += 1
        try:
            await _Connection(
                self._app, asyncio.get_running_loop(), self._config, self._context, {},
                reader, writer,
            )
        except Exception as error:  # one connection's trouble is its own, but a bug
            # (a client's own trouble, a reset, a broken TLS handshake, ends the connection
            # without an exception): one line, the traceback at DEBUG.
            log.error("HTTP connection from %s failed: %s", client, _summary(error))
            log.debug("HTTP connection from %s failed", client, exc_info=True)
        finally:
            self._connections.discard(task)
            self._per_client[client] -= 1
            if not self._per_client[client]:
                del self._per_client[client]

    async def stop(self, grace: Grace | None = None) -> bool:
        """Stop listening, and let the connections finish what they send (within ``grace``,
        if given; then they are closed as they are); whether they all finished."""
        if self._server is None:
            return True
        self._server.close()
        await self._context.terminated.set()  # idle connections close; busy ones after
        finished = True
        if self._connections:
            waiting = asyncio.gather(*self._connections, return_exceptions=True)
            if grace is None or not await grace.within(asyncio.shield(waiting)):
                finished = grace is None
                for task in list(self._connections):
                    task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await waiting
        with contextlib.suppress(Exception):
            await self._server.wait_closed()
        self._server = None
        return finished
