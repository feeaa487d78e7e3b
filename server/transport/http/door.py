"""The HTTP listener's door: every request is looked at before any application sees it, so
that each one gets an answer with a status, in its own protocol, and none can make the server
wait or work for nothing.

- Header names and values that are not text (UTF-8) are INVALID_ARGUMENT. Where a header is
  given twice, its first value is the one read (as the applications read it); two different
  values of a header that says how to read the body (its content type or compression) are
  INVALID_ARGUMENT: the door and an application would not read the body alike.
- gRPC needs trailers, which HTTP/1.1 has not here: gRPC over HTTP/1.1 is UNIMPLEMENTED, with
  a word on where to go (the gRPC port, or HTTP/2); over HTTP/2 it is served.
- The body is read whole before the call starts: within ``body_timeout`` seconds (else the
  call is refused DEADLINE_EXCEEDED and the connection closed) and within the method's byte
  limit (``limit(path)``: the one pipeline's, as on the gRPC port; else RESOURCE_EXHAUSTED, REQUEST_TOO_LARGE, as on the gRPC port). A
  body over the limit is still read, up to ``DRAIN_LIMIT``, so that the client gets the answer
  instead of a reset connection.
- An enveloped body (Connect streaming, gRPC, gRPC-Web) must be one whole message: a length
  that matches, and a compressed flag only with a compression named.
- A Connect GET of a read (``reads``: the methods the protos mark free of side effects) names
  its encoding, ``json`` or ``proto``; any other, or none, is INVALID_ARGUMENT (connectrpc would
  answer 415, which says nothing of the query). A GET of a method with side effects is
  connectrpc's 405, ``Allow: POST``.
- A stream each way (``streams``: PlayTurns, server reflection's) is the exception: its
  requests come one by one while the answers go, so its body is handed on as it arrives, and
  each message is bounded by the method's limit as its envelope begins (``StreamRefused``,
  REQUEST_TOO_LARGE as any request over its limit, raised into the application reading it).
- Whatever escapes the applications (a bug) is INTERNAL with a request id, logged on one line.
- An error's message is at most ``MAX_MESSAGE`` characters, as on the gRPC port, whoever
  wrote it: connectrpc quotes a header or a value of the body whole in some of its messages
  (an unknown compression, a timeout, a JSON value it cannot parse), and a long message
  would not fit in a gRPC client's trailers (it would see an error of its own instead).
- gRPC over HTTP/2: an answer with its status in its headers and no body (a "Trailers-Only"
  answer, which the door and connectrpc write for a refusal) goes as headers, then the status
  in trailers. Hypercorn ends a stream with a DATA frame, never with its HEADERS frame, and a
  gRPC client (grpc-core) takes headers then a DATA frame ending the stream for a broken
  answer: UNKNOWN, "Data frame with END_STREAM flag received", instead of the refusal.

A refusal is logged on one line (no traceback) and written as the request's protocol (told
by its first ``content-type``, whatever else is wrong with its headers) writes errors: a
Connect error (JSON, or an end-of-stream envelope), or ``grpc-status`` headers for gRPC and
gRPC-Web, each with the ``google.rpc.Status`` and its ``ErrorInfo``.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import logging
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from boneyard.server.transport.pipeline import MAX_MESSAGE, shortened
from boneyard.server.transport.refusals import Refusal, too_large

__all__ = [
    "CLIENT_GONE",
    "DEFAULT_BODY_TIMEOUT",
    "DRAIN_LIMIT",
    "Door",
    "StreamRefused",
]

log = logging.getLogger(__name__)

DEFAULT_BODY_TIMEOUT = 10.0
"""Seconds a request's body may take to arrive once its headers have."""
_ENVELOPE = 5
"""The bytes before an enveloped message: its flags and its length."""
CLIENT_GONE = Refusal(grpc.StatusCode.CANCELLED, "the client went away", "MALFORMED_REQUEST")
"""A request whose client went away before it had all arrived (nobody reads the answer: the
call is counted and logged CANCELLED)."""
DRAIN_LIMIT = 8 * 1024 * 1024
"""Bytes of a body over its limit read (and dropped) before the refusal is sent, as the gRPC
port reads a message up to 8 MiB to refuse it with the limit named."""

_CONNECT_HTTP = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.DEADLINE_EXCEEDED: 408,
    grpc.StatusCode.INTERNAL: 500,
}
"""HTTP statuses of the Connect errors the door writes (Connect's own mapping, but a body that
did not arrive in time: 408, Request Timeout, which is what it is)."""


@dataclass(frozen=True, slots=True)
class _Protocol:
    name: str
    """``connect`` (unary), ``connect-stream``, ``grpc``, ``grpc-web`` or ``other``."""
    content_type: str

    @property
    def enveloped(self) -> bool:
        return self.name in ("connect-stream", "grpc", "grpc-web")

    @property
    def compression_header(self) -> bytes:
        return b"connect-content-encoding" if self.name == "connect-stream" else b"grpc-encoding"


def _protocol(content_type: str) -> _Protocol:
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind.startswith("application/grpc-web"):
        return _Protocol("grpc-web", kind)
    if kind == "application/grpc" or kind.startswith("application/grpc+"):
        return _Protocol("grpc", kind)
    if kind.startswith("application/connect+"):
        return _Protocol("connect-stream", kind)
    if kind in ("application/json", "application/proto"):
        return _Protocol("connect", kind)
    return _Protocol("other", kind)


class _Refused(Exception):
    def __init__(self, refusal: Refusal, close: bool = False) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal
        self.close = close


class Door:
    """ASGI middleware: the door of the HTTP listener (see the module's doc)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        limit: Callable[[str], int],
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        streams: frozenset[str] = frozenset(),
        reads: frozenset[str] = frozenset(),
    ) -> None:
        self._app = app
        self._limit = limit
        self._body_timeout = body_timeout
        self._streams = streams
        self._reads = reads

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # no WebSocket here: returning closes it
        protocol = _protocol(_content_type(scope))
        if protocol.name == "grpc" and _sends_trailers(scope):
            send = _trailers_for_trailers_only(send)
        if protocol.name != "other":
            send = _shortening(send)
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            headers = _check_headers(scope)
            if protocol.name == "grpc" and scope.get("http_version") != "2":
                raise _Refused(
                    Refusal(
                        grpc.StatusCode.UNIMPLEMENTED,
                        "gRPC needs HTTP/2 (its status comes in trailers): use this listener "
                        "with HTTP/2, or the server's gRPC port; browsers use Connect or gRPC-Web",
                        "MALFORMED_REQUEST",
                    )
                )
            if scope["method"] == "GET" and scope.get("path") in self._reads:
                _check_get(scope)
            if scope.get("path") in self._streams:
                # A stream each way: its requests as they come, each bounded as it begins.
                receiving = (
                    _bounded(receive, self._limit(scope["path"]), scope["path"])
                    if protocol.enveloped
                    else receive
                )
            else:
                body = await self._read_body(scope, receive, headers, protocol)
                if protocol.enveloped and scope["method"] == "POST":
                    _check_envelope(body, protocol, headers)
                receiving = _replay(body, receive)
        except _Refused as refused:
            await self._refuse(scope, send, protocol, refused)
            return
        try:
            await self._app(scope, receiving, sending)
        except Exception as error:
            if started and isinstance(error, ConnectError):
                # The answer was under way when the application gave it up: the request's own
                # deadline passed while the client did not read the answer (connectrpc's
                # "Request timed out"): the client's doing, not a fault of the server's.
                log.info(
                    "HTTP %s %s cut short: %s",
                    scope.get("method"),
                    _shown(scope.get("path", "")),
                    shortened(str(error)),
                )
                return
            request_id = uuid.uuid4().hex[:16]
            log.error(
                "HTTP %s %s failed (request %s): %s",
                scope.get("method"),
                _shown(scope.get("path", "")),
                request_id,
                type(error).__name__,
            )
            log.debug("HTTP request %s failed", request_id, exc_info=error)
            if not started:
                refusal = Refusal(
                    grpc.StatusCode.INTERNAL,
                    f"internal error (logged on the server as request {request_id}); the "
                    f"request may be retried",
                    "INTERNAL",
                    {"request_id": request_id},
                )
                await _write_refusal(send, protocol, refusal, close=True)

    async def _read_body(
        self, scope: Scope, receive: Receive, headers: Mapping[bytes, str], protocol: _Protocol
    ) -> bytes:
        path = scope.get("path", "")
        # The limit is the message's, as on the gRPC port: an enveloped one has 5 more bytes.
        envelope = _ENVELOPE if protocol.enveloped else 0
        message_limit = self._limit(path)
        limit = message_limit + envelope
        declared = headers.get(b"content-length")
        over = declared is not None and declared.isdigit() and int(declared) > limit
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + self._body_timeout
        finished = scope["method"] in ("GET", "HEAD") and declared in (None, "0")
        while not finished:
            remaining = deadline - time.monotonic()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, remaining))
            except TimeoutError:
                raise _Refused(
                    Refusal(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"the request's body did not arrive within {self._body_timeout:g} s",
                        "TIMED_OUT",
                    ),
                    close=True,
                ) from None
            if message["type"] == "http.disconnect":
                raise _Refused(CLIENT_GONE, close=True)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                over = True
            if not over:
                chunks.append(chunk)
            if not message.get("more_body", False):
                finished = True
            elif size > DRAIN_LIMIT:
                break  # read enough to be sure: answer, and close what is left
        if over:
            whole = int(declared) if declared is not None and declared.isdigit() else None
            shown = str(whole - envelope) if whole is not None else f"over {size - envelope}"
            raise _Refused(too_large(path, shown, message_limit), close=not finished)
        return b"".join(chunks)

    async def _refuse(
        self, scope: Scope, send: Send, protocol: _Protocol, refused: _Refused
    ) -> None:
        refusal = refused.refusal
        client = scope.get("client") or ("?", 0)
        log.info(
            "HTTP %s %s from %s refused %s: %s",
            scope.get("method"),
            _shown(scope.get("path", "")),
            client[0],
            refusal.code.name,
            refusal.message,
        )
        if refusal.code is grpc.StatusCode.CANCELLED:
            return  # nobody to answer
        await _write_refusal(send, protocol, refusal, close=refused.close)


class StreamRefused(ConnectError):
    """A message of a stream each way the door refuses as it begins to arrive (over its
    method's limit): raised from ``receive`` into the application reading the stream, which
    answers it as the ConnectError it is, or (the services' bridge) as ``refusal``."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(Code.RESOURCE_EXHAUSTED, refusal.message)
        self.refusal = refusal


def _bounded(receive: Receive, limit: int, path: str) -> Receive:
    """``receive`` of an enveloped stream whose every message is at most ``limit`` bytes: the
    length each envelope declares is read as it arrives, and one over the limit raises
    ``StreamRefused`` before its bytes are read."""
    header = bytearray()
    left = 0
    """Bytes of the message under way still to come."""

    async def bounded() -> Message:
        nonlocal left
        message = await receive()
        body = message.get("body", b"") if message["type"] == "http.request" else b""
        at = 0
        while at < len(body):
            if left:
                step = min(left, len(body) - at)
                left -= step
                at += step
                continue
            taken = body[at : at + _ENVELOPE - len(header)]
            header.extend(taken)
            at += len(taken)
            if len(header) == _ENVELOPE:
                length = int.from_bytes(header[1:], "big")
                header.clear()
                if length > limit:
                    raise StreamRefused(too_large(path, str(length), limit))
                left = length
        return message

    return bounded


_BODY_HEADERS = frozenset(
    {b"content-type", b"content-encoding", b"connect-content-encoding", b"grpc-encoding"}
)
"""Headers that say how a request's body is read: given twice, the same value twice."""


def _content_type(scope: Scope) -> str:
    """The request's first ``content-type`` (the one connectrpc reads), whatever its bytes."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return str(value.decode("latin-1"))
    return ""


def _check_headers(scope: Scope) -> dict[bytes, str]:
    """The request's headers, by name, the first value of each."""
    headers: dict[bytes, str] = {}
    for name, value in scope.get("headers", ()):
        try:
            name.decode("ascii")
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            shown = name.decode("ascii", "replace")[:40]
            raise _Refused(
                Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"the value of the header {shown!r} is not text (UTF-8)",
                    "MALFORMED_REQUEST",
                )
            ) from None
        first = headers.setdefault(name, text)
        if first != text and name in _BODY_HEADERS:
            shown = name.decode("ascii")
            raise _Refused(
                Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"the header {shown!r} is given twice, with different values "
                    f"({_quoted(first)} and {_quoted(text)})",
                    "MALFORMED_REQUEST",
                )
            )
    return headers


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


_GET_ENCODINGS = ("json", "proto")


def _check_get(scope: Scope) -> None:
    """A Connect GET names the encoding of the message in its query, which is text."""
    try:
        text = bytes(scope.get("query_string", b"")).decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused(
            Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                "the query of a Connect GET is not text (UTF-8)",
                "MALFORMED_REQUEST",
            )
        ) from None
    query = urllib.parse.parse_qs(text, keep_blank_values=True)
    encoding = query.get("encoding", [None])[0]
    if encoding not in _GET_ENCODINGS:
        shown = "none" if encoding is None else _quoted(encoding)
        raise _Refused(
            Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"a Connect GET names the encoding of its message: encoding=json or "
                f"encoding=proto (with base64=1), not {shown}",
                "MALFORMED_REQUEST",
            )
        )


def _check_envelope(body: bytes, protocol: _Protocol, headers: Mapping[bytes, str]) -> None:
    """A request of an enveloped protocol is one message: 5 bytes (flags, length), then the
    message."""

    def bad(why: str) -> _Refused:
        return _Refused(
            Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the request is not one enveloped message: {why}",
                "MALFORMED_REQUEST",
            )
        )

    if len(body) < 5:
        raise bad(f"{len(body)} bytes, fewer than an envelope's 5")
    flags, length = body[0], int.from_bytes(body[1:5], "big")
    if flags & ~1:
        raise bad(f"its flags are {flags:#04x}: a request's message may only be compressed (1)")
    if length != len(body) - 5:
        raise bad(f"its envelope says {length} bytes, and {len(body) - 5} follow")
    encoding = headers.get(protocol.compression_header, "identity").strip().lower()
    if flags & 1 and encoding in ("", "identity"):
        raise bad(
            f"the message is marked compressed, and no compression is named "
            f"({protocol.compression_header.decode()})"
        )


def _sends_trailers(scope: Scope) -> bool:
    """Whether the server sends trailers to this request: over HTTP/2 (the ASGI extension),
    to a client that said it takes them (``te: trailers``, which gRPC requires; Hypercorn
    sends none to another)."""
    if "http.response.trailers" not in scope.get("extensions", {}):
        return False
    return any(
        name == b"te" and value.strip().lower() == b"trailers"
        for name, value in scope.get("headers", ())
    )


def _trailers_for_trailers_only(send: Send) -> Send:
    """A ``send`` that turns a gRPC Trailers-Only answer (``grpc-status`` among the
    headers, and no body) into headers, no message, and trailers (see the module's doc)."""
    status: list[tuple[bytes, bytes]] | None = None

    async def sending(message: Message) -> None:
        nonlocal status
        kind = message["type"]
        if kind == "http.response.start" and not message.get("trailers", False):
            headers = list(message.get("headers", ()))
            if any(name == b"grpc-status" for name, _ in headers):
                status = [(n, v) for n, v in headers if n.startswith(b"grpc-")]
                headers = [(n, v) for n, v in headers if not n.startswith(b"grpc-")]
                message = {**message, "headers": headers, "trailers": True}
        elif kind == "http.response.body" and status is not None:
            await send(message)
            if not message.get("more_body", False):
                trailers, status = status, None
                await send(
                    {"type": "http.response.trailers", "headers": trailers, "more_trailers": False}
                )
            return
        await send(message)

    return sending


def _shortening(send: Send) -> Send:
    """A ``send`` that cuts the message of an error to ``MAX_MESSAGE`` characters, in each
    form an error takes: ``grpc-message`` in headers or trailers, a Connect error (a JSON
    body), the end of a Connect stream or gRPC-Web's trailers (the last envelope)."""
    held: Message | None = None
    """The start of a JSON answer that is not 200 (a Connect error), until its body."""
    chunks: list[bytes] = []

    async def sending(message: Message) -> None:
        nonlocal held
        kind = message["type"]
        if kind in ("http.response.start", "http.response.trailers"):
            headers = list(message.get("headers", ()))
            message = {**message, "headers": _short_grpc_message(headers)}
            json_error = kind == "http.response.start" and message.get("status") != 200
            if json_error and (b"content-type", b"application/json") in headers:
                held = message
                return
        elif kind == "http.response.body" and held is not None:
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body, start, held = _short_json_error(b"".join(chunks)), held, None
            chunks.clear()
            headers = [(n, v) for n, v in start["headers"] if n != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            message = {**message, "body": body}
        elif kind == "http.response.body" and not message.get("more_body", False):
            message = {**message, "body": _short_end_of_stream(message.get("body", b""))}
        await send(message)

    return sending


def _short_grpc_message(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    out = []
    for name, value in headers:
        if name == b"grpc-message" and len(value) > MAX_MESSAGE:
            text = urllib.parse.unquote_to_bytes(value).decode("utf-8", "replace")
            value = _percent(shortened(text))
        out.append((name, value))
    return out


def _short_error(error: object) -> object:
    """A Connect error (a JSON object) with its message shortened."""
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return {**error, "message": shortened(error["message"])}
    return error


def _short_json_error(body: bytes) -> bytes:
    if len(body) <= MAX_MESSAGE:
        return body
    try:
        error = json.loads(body)
    except ValueError:
        return body
    shorter = _short_error(error)
    return body if shorter == error else json.dumps(shorter).encode()


def _short_end_of_stream(body: bytes) -> bytes:
    """``body`` with a shorter message if it is one envelope ending a Connect stream (flag
    2: JSON) or holding gRPC-Web's trailers (flag 0x80: header lines)."""
    if len(body) <= MAX_MESSAGE or int.from_bytes(body[1:5], "big") != len(body) - 5:
        return body
    flags, data = body[0], body[5:]
    if not flags & 0x82:
        return body
    try:
        plain = gzip.decompress(data) if flags & 1 else data
    except (OSError, EOFError):
        return body
    if flags & 0x80:
        lines = plain.split(b"\r\n")
        for i, line in enumerate(lines):
            if line[:13].lower() == b"grpc-message:":
                value = _short_grpc_message([(b"grpc-message", line[13:].strip())])[0][1]
                lines[i] = b"grpc-message: " + value
        shorter = b"\r\n".join(lines)
    else:
        try:
            end = json.loads(plain)
        except ValueError:
            return body
        if not isinstance(end, dict) or "error" not in end:
            return body
        shorter = json.dumps({**end, "error": _short_error(end["error"])}).encode()
    if shorter == plain:
        return body
    data = gzip.compress(shorter) if flags & 1 else shorter
    return bytes([flags]) + len(data).to_bytes(4, "big") + data


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body read already, then waits for the client to go."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _write_refusal(send: Send, protocol: _Protocol, refusal: Refusal, close: bool) -> None:
    status = refusal.status_proto()
    headers: list[tuple[bytes, bytes]] = []
    if close:
        headers.append((b"connection", b"close"))
    if protocol.name in ("grpc", "grpc-web"):
        # A trailers-only answer: the status in the headers, no body.
        headers += [
            (b"content-type", protocol.content_type.encode() or b"application/grpc"),
            (b"grpc-status", str(refusal.code.value[0]).encode()),
            (b"grpc-message", _percent(refusal.message)),
            (
                b"grpc-status-details-bin",
                base64.b64encode(status.SerializeToString()).rstrip(b"="),
            ),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    error: dict[str, Any] = {
        "code": _connect_code(refusal.code),
        "message": refusal.message,
        "details": [
            {
                "type": detail.type_url.rsplit("/", 1)[-1],
                "value": base64.b64encode(detail.value).rstrip(b"=").decode(),
            }
            for detail in status.details
        ],
    }
    if protocol.name == "connect-stream":
        payload = json.dumps({"error": error}).encode()
        body = b"\x02" + len(payload).to_bytes(4, "big") + payload
        headers.append((b"content-type", protocol.content_type.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    body = json.dumps(error).encode()
    headers.append((b"content-type", b"application/json"))
    http_status = _CONNECT_HTTP.get(refusal.code, 400)
    await send({"type": "http.response.start", "status": http_status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _connect_code(code: grpc.StatusCode) -> str:
    return "canceled" if code is grpc.StatusCode.CANCELLED else code.name.lower()


def _percent(text: str) -> bytes:
    """``grpc-message``'s percent-encoding: printable ASCII but ``%`` as it is."""
    out = []
    for byte in text.encode("utf-8"):
        if 0x20 <= byte <= 0x7E and byte != 0x25:
            out.append(chr(byte))
        else:
            out.append(f"%{byte:02X}")
    return "".join(out).encode("ascii")


def _shown(path: str) -> str:
    return path if len(path) <= 120 else path[:117] + "..."


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
