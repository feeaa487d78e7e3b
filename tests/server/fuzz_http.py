"""The HTTP fuzzer of issue 31, the twin of ``fuzz_rpc.py`` for the HTTP listener: a real
``boneyard-server`` process with ``--http-listen`` gets a seeded random mix of requests on raw
sockets, after a world of real games was made on it (``fuzz_world.py``).

Request ``i`` of seed ``s`` is made from ``fuzz_inputs.make_request(s, i, ...)`` (an RPC, a
request message, plausible or hostile, and credentials: none, a real seat token or account
key, or a bogus one) and ``random.Random("http:s:i")``, which wraps it for HTTP: Connect unary
(JSON and binary, valid and mutated bodies, gzip or not), Connect streaming and gRPC-Web
envelopes (good, bad flags, lying lengths, compressed with and without an encoding, cut), gRPC
over HTTP/1.1 and over HTTP/2 (raw frames with the ``h2`` package, and grpc channels on the
HTTP port), content types valid, garbage and missing, header values that are not UTF-8, very
long, repeated or hold control characters, ``Connect-Timeout-Ms`` and ``grpc-timeout``
garbage, other HTTP methods, chunked bodies, bodies over the method's limit, streams read
briefly and cut, static file paths that try to climb out of the web app, ``/healthz`` with odd
query strings, and malformed request lines. What must hold:

- no answer is an HTTP 5xx, but the statuses the Connect protocol gives two codes a client may
  cause (501 ``unimplemented``, 504 ``deadline_exceeded`` of a request that set a timeout),
  and HTTP/1.1's 501 to a transfer coding other than chunked (RFC 9112 section 6.1);
- no Connect error is ``unknown``, ``internal``, ``data_loss`` or ``unavailable``, no
  ``grpc-status`` is 2, 13, 15 or 14 (the same codes; on the grpc channels, fuzz_rpc's bars),
  no HTTP/2 stream or connection is reset with INTERNAL_ERROR, no error message is longer
  than ``MAX_DETAILS``, and an error comes in the request's protocol (no Connect error to a
  gRPC or gRPC-Web request, no gRPC status to a Connect one);
- every request is answered within ``ANSWER_DEADLINE`` seconds (a stream: or is still open
  when cut), but those the listener documents closing unanswered: headers that never end
  (the header timeout, which a stalled server may also reach), a body that never ends (the
  body timeout, which answers when it can), a body beyond the drain limit, an HTTP/2
  ``content-length`` the body belies, a header list over HTTP/2's limit, a malformed HTTP/2
  request (refused alone, RST_STREAM; no other stream on its connection may suffer), bytes
  that are no HTTP; and even those connections are closed by then;
- an answer to a path outside the API is, when it succeeds, a file of the web app
  (``server/webapp``) or a range of one, and no answer holds a line of a file outside it
  (``/etc/passwd``, the repository's ``pyproject.toml``, the server's source);
- every real game that got only rejections (no possibly accepted call of a method that may
  change something named it) looks exactly as before, through the gRPC port;
- afterwards the server answers its health checks on both doors, has logged no error and no
  traceback, and its resident memory is flat (``fuzz_rpc.Report.memory_flat``).

The suite runs a few thousand requests (tests/server/test_fuzz_http.py); ``make stress`` runs
100,000 (``python -m tests.server.fuzz_http --requests N --seed S``; ``--only I`` sends request
``I`` of the seed alone to a fresh server, to reproduce a finding). Speed is reported, never
asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import contextlib
import dataclasses
import functools
import gzip
import json
import random
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.utilities
import h11
from google.protobuf import json_format, message_factory

from boneyard.api.v1 import game_service_pb2
from boneyard.server.transport.http.connect import web_app_dir
from tests.server.fuzz_inputs import Method, Pools, Request, make_request, methods
from tests.server.fuzz_rpc import (
    MAX_DETAILS,
    MAX_LIVE_GAMES,
    Report,
    call,
    healthy,
    log_errors,
    rss_kb,
)
from tests.server.fuzz_rpc import findings_of as rpc_findings_of
from tests.server.fuzz_world import Snapshot, World, build_world, snapshot
from tests.server.process_helpers import REPO, ServerProcess, clean_env

__all__ = [
    "ANSWER_DEADLINE",
    "HttpOutcome",
    "HttpReport",
    "HttpRequest",
    "findings_of",
    "fuzz_http_server",
    "main",
    "make_http_request",
    "start_http_server",
]

ANSWER_DEADLINE = 30.0
"""Seconds an answer may take: a rejection takes milliseconds, so missing this is a hang."""
STREAM_SECONDS = 0.5
"""Seconds a stream is read before it is cut (a watch that is accepted waits for news)."""
HEADER_TIMEOUT = 3.0
BODY_TIMEOUT = 3.0
"""The fuzzed server's --http-header-timeout and --http-body-timeout: short, so that the
requests the door must time out cost seconds, not tens of seconds."""
CORS_ORIGIN = "https://fuzz.example"
"""The fuzzed server's --http-cors-origin: its preflights and headers are fuzzed too."""
DRAIN_LIMIT = 8 * 1024 * 1024
"""``http_door.DRAIN_LIMIT``: a body over its limit is read this far, then the connection
closed."""
HOST = "127.0.0.1"
MAX_SHOWN = 20
"""Findings shown in the report (the first of each kind)."""

FORBIDDEN_CONNECT = frozenset({"unknown", "internal", "data_loss", "unavailable"})
FORBIDDEN_GRPC = {2: "UNKNOWN", 13: "INTERNAL", 15: "DATA_LOSS", 14: "UNAVAILABLE"}
"""Never an answer to a request, as on the gRPC port (``fuzz_rpc.FORBIDDEN``)."""
ALLOWED_5XX = {501: "unimplemented", 504: "deadline_exceeded"}
"""The 5xx statuses the Connect protocol gives codes a client may cause: a compression or a
protocol the server does not implement, and a request's own deadline."""

Headers = list[tuple[bytes, bytes]]


# ------------------------------------------------------------------------------ requests


@dataclass(frozen=True)
class H2Stream:
    """One request on an HTTP/2 connection: its header list (pseudo-headers first, or not),
    its body (``None``: the headers end the stream), and whether the client resets it at once."""

    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes | None
    reset: bool = False

    @property
    def malformed(self) -> str:
        """Why the request breaks HTTP/2's rules for a request (RFC 9113 section 8.2, as h2
        checks them, after the whitespace around values is dropped, as RFC 9110 section
        5.5 lets a recipient do), or has a method or path that is not ASCII ("": it is well
        formed), or a method that is no token. The server may refuse such a stream
        (RST_STREAM), and no other."""
        stripped = [(k, v.strip(b" \t")) for k, v in self.headers]
        try:
            list(h2.utilities.validate_headers(stripped, _REQUEST_HEADERS))
        except h2.exceptions.ProtocolError as error:
            return str(error)
        for name, value in stripped:
            if name == b":method" and not re.fullmatch(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", value):
                return "the method is no token"
            if name == b":path" and not value.isascii():
                return "the path is not ASCII"
        return ""


_REQUEST_HEADERS = h2.utilities.HeaderValidationFlags(
    is_client=False, is_trailer=False, is_response_header=False, is_push_promise=False
)


@dataclass(frozen=True)
class HttpRequest:
    index: int
    family: str
    detail: str
    """What was done to it, for the report and the finding."""
    base: Request
    """The request ``fuzz_inputs.make_request`` made for this index (its RPC, message and
    credentials), which the HTTP request carries or not."""
    method: Method | None
    """The RPC the path names (``None``: not an RPC's path)."""
    transport: str
    """``h1`` (raw bytes on a socket), ``h2`` (raw frames) or ``grpc`` (a grpc channel on the
    HTTP port: ``base`` as fuzz_rpc sends it)."""
    content_type: str
    pieces: tuple[tuple[float, bytes], ...] = ()
    """HTTP/1.1: the bytes sent, each piece after a pause of so many seconds."""
    answers: tuple[str, ...] = ("GET",)
    """HTTP/1.1: the methods of the requests whose answers are read (pipelined: several)."""
    upgrade: bool = False
    """HTTP/1.1: the request asks to switch to h2c (a 101 is an answer)."""
    h1_answer: bool = True
    """HTTP/1.1: the answer is HTTP/1.1 (not so after an HTTP/2 preface)."""
    h2_streams: tuple[H2Stream, ...] = ()
    stream: bool = False
    """A stream: read for ``STREAM_SECONDS``, then cut."""
    may_close: str = ""
    """Why the door may close the connection without an answer ("" : it may not)."""
    timeout_set: bool = False
    """The request set a deadline of its own (Connect-Timeout-Ms, grpc-timeout)."""
    odd_coding: bool = False
    """HTTP/1.1: a Transfer-Encoding other than chunked (a 501 is its answer: RFC 9112
    section 6.1, a transfer coding the server does not implement)."""
    haystack: bytes = b""
    """What the request said, unencoded: searched for the ids of the world's games."""
    paths: tuple[str, ...] = ()
    """The targets of its requests, in order (percent-decoded, without the query)."""


def _targets(data: bytes) -> tuple[str, ...]:
    """The targets of the HTTP/1.1 request lines in ``data``."""
    found = []
    for line in data.split(b"\r\n"):
        parts = line.split(b" ")
        if len(parts) == 3 and parts[2].startswith(b"HTTP/"):
            found.append(_path_of(parts[1]))
    return tuple(found)


def _path_of(target: bytes) -> str:
    text = target.decode("latin-1")
    if "://" in text:
        text = "/" + text.split("://", 1)[1].partition("/")[2]
    return urllib.parse.unquote(text.partition("?")[0].partition("#")[0])


def _timed_out_on_a_stalled_server(outcome: HttpOutcome) -> bool:
    """Whether a connection closed (or reset) unanswered was closed by the header or the body
    timeout, which a server stalled on a busy machine reaches before it has read a request
    whole: its clock runs while it waits for a core, and it cannot tell its own stall from a
    slow client's. Over HTTP/1.1 the close may reach the client as a reset (the request's
    bytes unread); over HTTP/2 the idle connection's GOAWAY may cross a request. (The suite
    ran the fuzzer with two busy loops per core beside it: 2 of 2,500 requests so.)"""
    return (
        outcome.request.transport in ("h1", "h2")
        and outcome.closed in ("closed", "reset")
        and outcome.seconds >= min(HEADER_TIMEOUT, BODY_TIMEOUT) * 0.9
    )


def _body_timeout_answer(code: str, message: str) -> bool:
    """Whether a grpc channel's DEADLINE_EXCEEDED is the door's answer to a body that did not
    arrive within the body timeout (``server/transport/http/door.py``), not the client's own
    deadline: a request of megabytes from a client starved on a busy machine can take longer
    than the timeout to send (the fuzzer beside the suite with two busy loops per core: 1 of
    100,000 requests so, a body of 4 MiB)."""
    return code == "DEADLINE_EXCEEDED" and message.startswith(
        f"the request's body did not arrive within {BODY_TIMEOUT:g} s"
    )


def _asked(content_type: bytes | None) -> str:
    """The protocol a content type asks for, as the door tells it."""
    kind = (content_type or b"").split(b";", 1)[0].strip().lower()
    if kind.startswith(b"application/grpc-web"):
        return "grpc-web"
    if kind == b"application/grpc" or kind.startswith(b"application/grpc+"):
        return "grpc"
    if kind.startswith(b"application/connect+"):
        return "connect-stream"
    if kind in (b"application/json", b"application/proto"):
        return "connect"
    return ""


def _first_content_type(head: bytes) -> bytes | None:
    """The first ``content-type`` of an HTTP/1.1 request's head."""
    found = re.search(rb"\r\ncontent-type:[ \t]*([^\r]*)", head, re.IGNORECASE)
    return found[1].strip() if found else None


def _outside_the_api(path: str | None) -> bool:
    """Whether ``path`` is one where only files of the web app may be served."""
    return path is not None and not path.startswith("/boneyard.v1.") and path != "/healthz"


_FAMILIES: tuple[tuple[str, float], ...] = (
    ("connect", 0.22),
    ("connect_stream", 0.1),
    ("grpc_web", 0.1),
    ("grpc_http1", 0.015),
    ("grpc_channel", 0.07),
    ("h2", 0.09),
    ("headers", 0.08),
    ("methods", 0.05),
    ("chunked", 0.04),
    ("too_large", 0.02),
    ("slow", 0.006),
    ("streams", 0.06),
    ("static", 0.08),
    ("healthz", 0.03),
    ("raw", 0.03),
)


def make_http_request(
    seed: int, index: int, all_methods: Sequence[Method], pools: Pools
) -> HttpRequest:
    """Request ``index`` of the run with ``seed``: the same pools make the same request."""
    base = make_request(seed, index, all_methods, pools)
    rng = random.Random(f"http:{seed}:{index}")
    family = rng.choices([f for f, _ in _FAMILIES], [w for _, w in _FAMILIES])[0]
    builder = _Builder(rng, base, pools, all_methods)
    build: Callable[[], HttpRequest] = getattr(builder, family)
    return build()


# --- values ------------------------------------------------------------------------------

_CONNECT_TIMEOUTS = (
    "0", "1", "5", "30000", "4294967295", "9999999999", "99999999999", "-1", "+5", " 5", "5 ",
    "1e3", "0x10", "abc", "", "١٢٣", "5_0", "3.5", "00000000005",
)  # fmt: skip
_GRPC_TIMEOUTS = (
    "1S", "30S", "100m", "5000u", "1n", "0n", "1H", "99999999H", "999999999S", "S", "", "1",
    "1x", "-1S", "+1S", " 1S", "1s", "1.5S", "١S", "00000001M", "abcS",
)  # fmt: skip
_ENCODINGS = ("gzip", "identity", "", "br", "zstd", "deflate", "GZIP", "gzip, identity", "x" * 300)
_HOSTILE_VALUES = (
    b"\xe9", b"\xff\xfe", b"caf\xc3\xa9", b"\xc3\x28", b"\xed\xa0\x80", b"\x01", b"a\x7fb",
    b"\x1b[2J", b"a\tb", b" lead", b"trail ", b"%00", b"\xf0\x9f\x98\x80", b"\xc0\xaf",
)  # fmt: skip
_HEADER_NAMES = (
    b"x-request-id", b"authorization", b"content-type", b"user-agent", b"connect-timeout-ms",
    b"grpc-timeout", b"accept-encoding", b"connect-protocol-version", b"x-grpc-web",
    b"content-encoding", b"connect-content-encoding", b"grpc-encoding", b"origin", b"cookie",
    b"x-forwarded-for", b"te", b"x-user-agent", b"grpc-accept-encoding", b"host",
)  # fmt: skip
_UNARY_TYPES = {
    "json": ("application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
             "application/json;charset=latin-1"),
    "proto": ("application/proto", "application/proto; x=y", "Application/Proto"),
}  # fmt: skip
_GARBAGE_TYPES = (
    "", "text/plain", "application/xml", "application/octet-stream", "application/protobuf",
    "application/x-protobuf", "multipart/form-data; boundary=x", "*/*", "application/",
    "application/grpc-web-text", "application/grpc-web-text+proto", "application/connect+",
    "application/connect+xml", "application/grpc+json", "application/grpc-webx",
    "application/json" + "; p=v" * 200, "x" * 2000, "application/connect+proto; charset=x",
)  # fmt: skip
_HOSTILE_JSON = (
    b"", b"null", b"[]", b'"x"', b"1", b"{", b"}", b"{}{}", b"\xef\xbb\xbf{}", b"{\"a\":1}xyz",
    b"\x00", b"{\"\x00\":1}", b"{\"gameId\":\"\xff\xfe\"}", b"{\"gameId\":\"\\ud800\"}",
    b"{\"a\":" * 20000 + b"1" + b"}" * 20000, b"[" * 100000, b"{\"a\":1,\"a\":2}",
    b"{\"x\":" + b"9" * 5000 + b"}", b"{\"" + b"k" * 70000 + b"\":1}", b"NaN", b"{\"a\":NaN}",
    b"\"\\u0000\"", b"{'a': 1}", b"{\"a\":1,}", b"\xfe\xff\x00{\x00}",
)  # fmt: skip
_HOSTILE_JSON_VALUES: tuple[object, ...] = (
    None, True, False, "", "A" * 20000, 1e308, -1e308, "NaN", "Infinity", "-Infinity", 2**64,
    -(2**63) - 1, 1.5, "1.5", "0x10", "١٢", [], {}, [[[[[[[[]]]]]]]], {"@type": "x.Y"},
    "\ud800", "\u0000", "9999-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "10000-01-01T00:00:00Z",
    "1970-01-01T00:00:00.0000000001Z", "315576000001s", "-1s", "1.0000000001s", "TEXAS42",
    "BOGUS_ENUM", -1, 2**31, 2**63, "18446744073709551616", "-0", 0.1,
)  # fmt: skip


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=1, mtime=0)


@functools.cache
def _bomb(size: int) -> bytes:
    """``size`` zero bytes, gzipped (a few kilobytes)."""
    return _gzip(b"\x00" * size)


def _envelope(flags: int, message: bytes, length: int | None = None) -> bytes:
    size = len(message) if length is None else length
    return bytes([flags]) + (size % 2**32).to_bytes(4, "big") + message


def _h1(
    method: bytes,
    target: bytes,
    headers: Headers,
    body: bytes = b"",
    *,
    version: bytes = b"HTTP/1.1",
    length: bool = True,
) -> bytes:
    """Raw bytes of a request (no check of any part); ``Content-Length`` added when
    ``length`` and no header says how long the body is."""
    named = {k.lower() for k, _ in headers}
    lines = [method + b" " + target + b" " + version]
    lines.extend(k + b": " + v for k, v in headers)
    told = b"content-length" in named or b"transfer-encoding" in named
    if length and not told and (body or method not in (b"GET", b"HEAD", b"OPTIONS", b"DELETE")):
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class _Builder:
    """Makes one request of each family from a seeded ``random.Random``."""

    def __init__(
        self, rng: random.Random, base: Request, pools: Pools, all_methods: Sequence[Method]
    ) -> None:
        self.rng = rng
        self.base = base
        self.pools = pools
        self.all_methods = all_methods

    # --- parts --------------------------------------------------------------------------

    def request(
        self,
        family: str,
        detail: str,
        content_type: str,
        pieces: Sequence[bytes | tuple[float, bytes]],
        *,
        method: Method | None = None,
        haystack: bytes = b"",
        **kw: object,
    ) -> HttpRequest:
        sent = tuple(p if isinstance(p, tuple) else (0.0, p) for p in pieces)
        data = b"".join(p for _, p in sent)
        head = data[:70_000].split(b"\r\n\r\n", 1)[0].lower()
        kw.setdefault(
            "timeout_set", b"\r\nconnect-timeout-ms:" in head or b"\r\ngrpc-timeout:" in head
        )
        streaming = _asked(_first_content_type(head)) in ("connect-stream", "grpc-web", "grpc")
        if method is not None and method.server_streaming and streaming:
            kw["stream"] = True  # read briefly, then cut: an accepted watch waits for news
        verb = data.split(b" ", 1)[0]
        kw.setdefault("answers", (verb.decode() if verb.isalpha() and verb.isupper() else "GET",))
        codings = re.findall(rb"\r\ntransfer-encoding:[ \t]*([^\r]*)", head)
        kw.setdefault("odd_coding", any(c.strip() != b"chunked" for c in codings))
        return HttpRequest(
            index=self.base.index,
            family=family,
            detail=detail,
            base=self.base,
            method=method,
            transport="h1",
            content_type=content_type,
            pieces=sent,
            haystack=haystack + self.base.payload + data[:65536],
            paths=_targets(data if len(data) < 1_000_000 else data[:70_000]),
            **kw,  # type: ignore[arg-type]
        )

    def credentials(self) -> Headers:
        out = [(k.encode(), v.encode()) for k, v in self.base.credential.metadata]
        if self.rng.random() < 0.2:
            out.append((b"x-request-id", self.rng.choice((b"fuzz-1", b"", b"x" * 300))))
        if self.rng.random() < 0.1:
            out.append(
                (
                    b"origin",
                    self.rng.choice((CORS_ORIGIN.encode(), b"https://evil.example", b"null")),
                )
            )
        return out

    def host(self) -> Headers:
        return [(b"Host", b"boneyard")]

    def path(self, method: Method | None = None) -> bytes:
        m = method or self.base.method
        roll = self.rng.random()
        if roll < 0.93:
            return m.path.encode()
        return self.rng.choice(
            (
                m.path.lower().encode(),
                m.path.encode() + b"/",
                m.path.encode() + b"?x=1",
                b"/boneyard.v1.GameService/Nope",
                b"/boneyard.v1.NoService/GetGame",
                b"/boneyard.v1.GameService/",
                b"/boneyard.v1.GameService",
                m.path.replace("/", "//").encode(),
                m.path.encode().replace(b"Get", b"%47et"),
                b"/boneyard.v1.GameService/../boneyard.v1.GameService/ListGames",
            )
        )

    def connect_timeout(self) -> tuple[Headers, bool]:
        if self.rng.random() < 0.8:
            return [], False
        value = self.rng.choice(_CONNECT_TIMEOUTS)
        return [(b"Connect-Timeout-Ms", value.encode())], True

    def grpc_timeout(self) -> tuple[Headers, bool]:
        if self.rng.random() < 0.8:
            return [], False
        value = self.rng.choice(_GRPC_TIMEOUTS)
        return [(b"grpc-timeout", value.encode())], True

    def json_message(self) -> bytes:
        """The request message in JSON: as it is, with a hostile value, cut or garbage."""
        rng, base = self.rng, self.base
        obj: object = None
        if len(base.payload) < 200_000:
            try:
                message = message_factory.GetMessageClass(base.method.request).FromString(
                    base.payload
                )
                obj = json_format.MessageToDict(
                    message, preserving_proto_field_name=rng.random() < 0.3
                )
            except Exception:  # noqa: BLE001 - undecodable or unencodable: garbage instead
                obj = None
        roll = rng.random()
        if obj is None or roll < 0.12:
            if rng.random() < 0.5:
                return rng.choice(_HOSTILE_JSON)
            return base.payload[:70_000]
        if roll < 0.6:
            return json.dumps(obj).encode()
        if roll < 0.85:
            _poke(obj, rng)
            try:
                return json.dumps(obj).encode("utf-8", "surrogatepass")
            except (ValueError, OverflowError):
                return b"{}"
        text = bytearray(json.dumps(obj).encode())
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            edit = rng.randrange(3)
            if edit == 0:
                del text[at : at + rng.randint(1, 8)]
            elif edit == 1:
                text[at:at] = rng.choice((b"{", b"}", b'"', b",", b":", b"\\", b"\xff", b"[", b"0"))
            else:
                text = text[:at]
        return bytes(text)

    def message(self, codec: str) -> bytes:
        return self.json_message() if codec == "json" else self.base.payload

    def envelope_body(self, message: bytes, encoding_header: bytes) -> tuple[bytes, Headers, str]:
        """An enveloped request body: good or broken in one of the ways a client breaks it;
        the compression headers it needs; what was done."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.45:
            return _envelope(0, message), [], "one envelope"
        if roll < 0.55:
            headers = [(encoding_header, b"gzip")] if rng.random() < 0.8 else []
            return _envelope(1, _gzip(message)), headers, "gzipped envelope"
        if roll < 0.6:
            return _envelope(1, message), [], "compressed flag, no encoding"
        if roll < 0.64:
            value = rng.choice((b"identity", b"", b"br", b"gzip", b"GZIP", b"x" * 100))
            return (
                _envelope(1, message),
                [(encoding_header, value)],
                "compressed flag, odd encoding",
            )
        if roll < 0.68:
            bomb = _bomb(rng.choice((70_000, 5_000_000, 20_000_000)))
            return _envelope(1, bomb), [(encoding_header, b"gzip")], "gzip bomb"
        if roll < 0.74:
            flags = rng.choice((0x02, 0x03, 0x80, 0x81, 0xFF, 0x40))
            return _envelope(flags, message), [], f"flags {flags:#04x}"
        if roll < 0.82:
            lie = rng.choice((1, -1, 5, -5, 2**31, 2**32 - 1, -len(message)))
            return _envelope(0, message, max(0, len(message) + lie)), [], "length lies"
        if roll < 0.88:
            whole = _envelope(0, message)
            return whole[: rng.randint(0, max(0, len(whole) - 1))], [], "cut"
        if roll < 0.92:
            return _envelope(0, message) + _envelope(0, message), [], "two envelopes"
        if roll < 0.95:
            return b"", [], "empty body"
        if roll < 0.97:
            end = json.dumps({"error": {"code": "internal"}}).encode()
            return _envelope(0x02, end), [], "end-of-stream envelope"
        return rng.randbytes(rng.randint(1, 64)), [], "random bytes"

    # --- families -----------------------------------------------------------------------

    def connect(self) -> HttpRequest:
        """Connect unary: POST, JSON or binary, gzip or not, odd protocol headers."""
        rng, method = self.rng, self.base.method
        codec = rng.choice(("json", "proto"))
        content_type = rng.choice(_UNARY_TYPES[codec][:1] * 3 + _UNARY_TYPES[codec][1:])
        message = self.message(codec)
        body, detail = message, f"{codec} body ({self.base.kind})"
        if rng.random() < 0.12:
            content_type = rng.choice(_GARBAGE_TYPES)  # "": none at all
            detail += ", another content type"
        headers = self.host()
        if content_type:
            headers.append((b"Content-Type", content_type.encode()))
        roll = rng.random()
        if roll < 0.1:
            body, detail = _gzip(message), detail + ", gzipped"
            headers.append((b"Content-Encoding", b"gzip"))
        elif roll < 0.13:
            headers.append((b"Content-Encoding", rng.choice(_ENCODINGS).encode()))
            detail += ", odd encoding"
        elif roll < 0.15:
            body = _bomb(rng.choice((70_000, 5_000_000)))
            headers.append((b"Content-Encoding", b"gzip"))
            detail = "gzip bomb"
        if rng.random() < 0.3:
            headers.append((b"Accept-Encoding", rng.choice((b"gzip", b"br, gzip", b"*", b"\xff"))))
        if rng.random() < 0.1:
            version = rng.choice((b"1", b"2", b"0", b"", b"1.0", b"\xe9"))
            headers.append((b"Connect-Protocol-Version", version))
        timeout, timeout_set = self.connect_timeout()
        headers += timeout + self.credentials() + [(b"Connection", b"close")]
        return self.request(
            "connect",
            detail,
            content_type,
            [_h1(b"POST", self.path(), headers, body)],
            method=method,
            haystack=message,
            timeout_set=timeout_set,
        )

    def connect_stream(self) -> HttpRequest:
        """Connect streaming envelopes, to any method (a unary one takes them too)."""
        rng, method = self.rng, self.base.method
        codec = rng.choice(("proto", "proto", "json"))
        content_type = f"application/connect+{codec}"
        if rng.random() < 0.05:
            content_type = rng.choice(("application/connect+PROTO", "application/connect+xml"))
        message = self.message(codec)
        body, encoding, detail = self.envelope_body(message, b"Connect-Content-Encoding")
        headers = self.host() + [(b"Content-Type", content_type.encode())] + encoding
        if rng.random() < 0.2:
            headers.append((b"Connect-Accept-Encoding", rng.choice((b"gzip", b"br", b""))))
        timeout, timeout_set = self.connect_timeout()
        headers += timeout + self.credentials() + [(b"Connection", b"close")]
        return self.request(
            "connect_stream",
            detail,
            content_type,
            [_h1(b"POST", self.path(), headers, body)],
            method=method,
            haystack=message,
            stream=method.server_streaming,
            timeout_set=timeout_set,
        )

    def grpc_web(self) -> HttpRequest:
        rng, method = self.rng, self.base.method
        content_type = rng.choice(
            (
                "application/grpc-web",
                "application/grpc-web+proto",
                "application/grpc-web+proto",
                "application/grpc-web+json",
                "application/grpc-web-text",
                "application/grpc-web-text+proto",
            )
        )
        codec = "json" if content_type.endswith("json") else "proto"
        message = self.message(codec)
        body, encoding, detail = self.envelope_body(message, b"grpc-encoding")
        if "text" in content_type and rng.random() < 0.7:
            body = base64.b64encode(body)
            detail += ", base64"
        headers = self.host() + [(b"Content-Type", content_type.encode())] + encoding
        if rng.random() < 0.8:
            headers.append((b"X-Grpc-Web", b"1"))
        if rng.random() < 0.2:
            headers.append((b"grpc-accept-encoding", rng.choice((b"gzip", b"identity", b"zz"))))
        timeout, timeout_set = self.grpc_timeout()
        headers += timeout + self.credentials() + [(b"Connection", b"close")]
        return self.request(
            "grpc_web",
            detail,
            content_type,
            [_h1(b"POST", self.path(), headers, body)],
            method=method,
            haystack=message,
            stream=method.server_streaming,
            timeout_set=timeout_set,
        )

    def grpc_http1(self) -> HttpRequest:
        """gRPC needs HTTP/2: over HTTP/1.1 it is refused in its own headers."""
        rng, method = self.rng, self.base.method
        content_type = rng.choice(
            ("application/grpc", "application/grpc+proto", "application/grpc+json")
        )
        body, encoding, detail = self.envelope_body(self.base.payload, b"grpc-encoding")
        timeout, timeout_set = self.grpc_timeout()
        headers = self.host() + [(b"Content-Type", content_type.encode()), (b"TE", b"trailers")]
        headers += encoding + timeout + self.credentials() + [(b"Connection", b"close")]
        return self.request(
            "grpc_http1",
            detail,
            content_type,
            [_h1(b"POST", self.path(), headers, body)],
            method=method,
            timeout_set=timeout_set,
        )

    def grpc_channel(self) -> HttpRequest:
        """The request as fuzz_rpc sends it, on a grpc channel to the HTTP port (HTTP/2)."""
        return HttpRequest(
            index=self.base.index,
            family="grpc_channel",
            detail=self.base.kind,
            base=self.base,
            method=self.base.method,
            transport="grpc",
            content_type="application/grpc",
            stream=self.base.method.server_streaming,
            haystack=self.base.payload,
            paths=(self.base.method.path,),
        )

    def h2(self) -> HttpRequest:
        """Raw HTTP/2 frames: each protocol, broken pseudo-headers, bad content lengths,
        header values no HTTP/1.1 parser lets through, resets, several streams at once."""
        rng, method = self.rng, self.base.method
        streams: list[H2Stream] = []
        details: list[str] = []
        may_close = ""
        stream_read = False
        timeout_set = False
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            protocol = rng.choice(
                ("connect", "connect", "connect_stream", "grpc_web", "grpc", "grpc", "get")
            )
            headers: Headers = [
                (b":method", b"POST"),
                (b":scheme", b"http"),
                (b":authority", b"boneyard"),
                (b":path", self.path()),
            ]
            if protocol == "connect":
                codec = rng.choice(("json", "proto"))
                body: bytes | None = self.message(codec)
                headers.append((b"content-type", f"application/{codec}".encode()))
                timeout, set_ = self.connect_timeout()
            elif protocol == "get":
                headers[0] = (b":method", rng.choice((b"GET", b"HEAD", b"OPTIONS", b"DELETE")))
                headers[3] = (b":path", rng.choice(_STATIC_TARGETS + (b"/healthz", b"/")))
                body, timeout, set_ = None, [], False
            else:
                codec = "proto"
                content_type = {
                    "connect_stream": b"application/connect+proto",
                    "grpc_web": b"application/grpc-web+proto",
                    "grpc": b"application/grpc",
                }[protocol]
                header = (
                    b"connect-content-encoding"
                    if protocol == "connect_stream"
                    else b"grpc-encoding"
                )
                body, encoding, what = self.envelope_body(self.base.payload, header)
                headers += [(b"content-type", content_type), *encoding]
                if protocol == "grpc":
                    headers.append((b"te", b"trailers"))
                details.append(what)
                timeout, set_ = (
                    self.connect_timeout() if protocol == "connect_stream" else self.grpc_timeout()
                )
                stream_read = stream_read or method.server_streaming
            timeout_set = timeout_set or set_
            headers += timeout + self.credentials()
            headers = [(k.lower(), v) for k, v in headers]
            reset = False
            roll = rng.random()
            if roll < 0.06:
                index = rng.randrange(len(headers))
                name, value = headers[index]
                headers[index] = (name, rng.choice(_HOSTILE_VALUES) + value)
                details.append(f"hostile {name.decode()}")
            elif roll < 0.1:
                headers.append(
                    (
                        b"content-length",
                        rng.choice(
                            (
                                b"\xc2\xb2",
                                b"-1",
                                b"1 1",
                                b"99999999999999999999",
                                b"0",
                                b"1e3",
                                b"+5",
                                b"7, 7",
                            )
                        ),
                    )
                )
                details.append("odd content-length")
                may_close = "HTTP/2 content-length the stream breaks"
            elif roll < 0.16:
                broken = rng.randrange(8)
                if broken == 0:
                    headers = [h for h in headers if h[0] != b":path"]
                elif broken == 1:
                    headers.append((b":path", b"/other"))
                elif broken == 2:
                    headers.append((b"Content-Type", b"application/json"))
                elif broken == 3:
                    headers.append((b"connection", b"keep-alive"))
                elif broken == 4:
                    headers.append((b"te", b"gzip"))
                elif broken == 5:
                    headers.insert(0, (b"x-first", b"1"))
                elif broken == 6:
                    headers[3] = (b":path", rng.choice((b"", b"*", b"relative", b"http://x/y")))
                else:
                    headers.append((b":bogus", b"1"))
                details.append(f"malformed header list ({broken})")
            elif roll < 0.2:
                reset = True
                details.append("reset by the client")
                may_close = may_close or "reset by the client"
            elif roll < 0.23:
                headers += [(b"x-big", b"v" * rng.choice((8_000, 30_000, 70_000)))]
                details.append("big header")
                may_close = may_close or "HTTP/2 header list over the limit"
            streams.append(H2Stream(tuple(headers), body, reset))
        return HttpRequest(
            index=self.base.index,
            family="h2",
            detail=", ".join(details) or "plain",
            base=self.base,
            method=method,
            transport="h2",
            content_type=next(
                (v.decode("latin-1") for k, v in streams[0].headers if k == b"content-type"), ""
            ),
            h2_streams=tuple(streams),
            paths=tuple(
                _path_of(next((v for k, v in s.headers if k == b":path"), b"")) for s in streams
            ),
            stream=stream_read,
            may_close=may_close,
            timeout_set=timeout_set,
            haystack=self.base.payload + b"".join(s.body or b"" for s in streams),
        )

    def headers(self) -> HttpRequest:
        """A Connect unary request with its headers broken in one way."""
        rng, method = self.rng, self.base.method
        codec = rng.choice(("json", "proto"))
        content_type = f"application/{codec}"
        body = self.message(codec)
        if rng.random() < 0.3:
            content_type = rng.choice(("application/grpc-web+proto", "application/connect+proto"))
            body = _envelope(0, self.base.payload)
        headers = self.host() + [(b"Content-Type", content_type.encode())] + self.credentials()
        kind = rng.randrange(17)
        detail = ""
        length = True
        if kind == 0:
            name = rng.choice(_HEADER_NAMES)
            headers.append((name, rng.choice(_HOSTILE_VALUES)))
            detail = f"hostile value of {name.decode()}"
        elif kind == 1:
            name = rng.choice(_HEADER_NAMES)
            headers.append((name, b"v" * rng.choice((1_000, 8_000, 15_000, 17_000, 40_000))))
            detail = f"long {name.decode()}"
        elif kind == 2:
            headers += [(f"x-h{i}".encode(), b"1") for i in range(rng.choice((100, 400, 2000)))]
            detail = "many headers"
        elif kind == 3:
            other = (
                b"application/proto",
                b"application/json",
                b"text/plain",
                b"application/connect+proto",
                b"application/grpc-web+proto",
            )
            headers.append((b"Content-Type", rng.choice(other)))
            if rng.random() < 0.5:
                headers.insert(1, headers.pop())  # the other one first
            detail = "two content types"
        elif kind == 4:
            extra = rng.choice(self.pools.seat_tokens or ("x",))
            headers.append((b"Authorization", b"Bearer " + extra.encode()))
            detail = "two authorizations"
        elif kind == 5:
            headers.append((b"Connect-Timeout-Ms", rng.choice(_CONNECT_TIMEOUTS).encode()))
            headers.append((b"Connect-Timeout-Ms", rng.choice(_CONNECT_TIMEOUTS).encode()))
            detail = "two timeouts"
        elif kind == 6:
            headers = [h for h in headers if h[0] != b"Host"]
            detail = "no host"
        elif kind == 7:
            headers += [(b"Host", rng.choice((b"other", b"", b"a b", b"\xff", b"x:99999")))]
            detail = "odd or second host"
        elif kind == 8:
            value = rng.choice(
                (b"+5", b"05", b" 5", b"-1", b"0x10", b"99999999999999999999", b"5, 5", b"\xe9")
            )
            headers.append((b"Content-Length", value))
            length = False
            detail = f"content-length {value!r}"
        elif kind == 9:
            headers += [(b"Content-Length", str(len(body)).encode()), (b"Content-Length", b"3")]
            length = False
            detail = "two content lengths"
        elif kind == 10:
            headers.append((b"X-Folded", b"a\r\n  continued"))
            detail = "obsolete line folding"
        elif kind == 11:
            headers.append(
                (rng.choice((b"Bad Name", b"", b"x\x00y", b"\xe9", b"(x)", b"a:b")), b"1")
            )
            detail = "bad header name"
        elif kind == 12:
            headers.append((b"X-Ctl", bytes([rng.choice((0, 1, 8, 11, 12, 31, 127))]) + b"v"))
            detail = "control character"
        elif kind == 13:
            headers = [(k.upper() if rng.random() < 0.5 else k.lower(), v) for k, v in headers]
            headers.append((b"CONTENT-TYPE ", b"application/json"))
            detail = "odd header case and a space before the colon"
        elif kind == 14:
            headers.append((b"Expect", rng.choice((b"100-continue", b"nonsense"))))
            detail = "expect"
        elif kind == 15:
            name = rng.choice((b"Connect-Content-Encoding", b"grpc-encoding", b"Content-Encoding"))
            headers += [
                (name, rng.choice((b"identity", b"gzip"))),
                (name, rng.choice((b"gzip", b"identity", b"br"))),
            ]
            if rng.random() < 0.5:
                body = _envelope(1, body[5:] if body[:1] == b"\x00" else body)
            detail = f"two {name.decode()}"
        else:
            headers.append((b"Content-Type", b""))
            headers = [h for h in headers if h != (b"Content-Type", content_type.encode())]
            detail = "empty content type"
        headers.append((b"Connection", b"close"))
        return self.request(
            "headers",
            detail,
            content_type,
            [_h1(b"POST", self.path(), headers, body, length=length)],
            method=method,
            haystack=body,
            may_close="the request's body never ends" if kind == 8 else "",
        )

    def methods(self) -> HttpRequest:
        """Other HTTP methods, on the API, /healthz and the web app; CORS preflights."""
        rng = self.rng
        verb = rng.choice(
            (
                b"GET",
                b"HEAD",
                b"PUT",
                b"DELETE",
                b"OPTIONS",
                b"PATCH",
                b"TRACE",
                b"PROPFIND",
                b"get",
                b"POST",
            )
        )
        target_roll = rng.random()
        method: Method | None = None
        if target_roll < 0.5:
            method = self.base.method
            target = self.path()
        elif target_roll < 0.65:
            target = b"/healthz"
        else:
            target = rng.choice(_STATIC_TARGETS)
        headers = self.host()
        detail = verb.decode("latin-1")
        if method is not None and verb == b"GET" and rng.random() < 0.7:
            # A Connect GET: the message in the query (every method here is refused: none is
            # marked free of side effects).
            message = self.message("json")
            query = {
                "encoding": rng.choice(("json", "proto", "xml")),
                "message": message.decode("latin-1"),
            }
            if rng.random() < 0.5:
                query["base64"] = "1"
                query["message"] = base64.urlsafe_b64encode(self.base.payload).decode()
            if rng.random() < 0.2:
                query["compression"] = rng.choice(("gzip", "br", "identity"))
            target += b"?" + urllib.parse.urlencode(query).encode()
            detail += " with a Connect query"
        if verb == b"OPTIONS" and rng.random() < 0.7:
            headers += [
                (
                    b"Origin",
                    rng.choice((CORS_ORIGIN.encode(), b"https://evil.example", b"null", b"\xff")),
                ),
                (
                    b"Access-Control-Request-Method",
                    rng.choice((b"POST", b"GET", b"DELETE", b"\xe9")),
                ),
                (
                    b"Access-Control-Request-Headers",
                    rng.choice((b"content-type, authorization", b"x-evil", b"", b"a" * 5000)),
                ),
            ]
            detail += " preflight"
        body = b""
        if rng.random() < 0.3:
            body = self.base.payload[:2000]
            headers.append(
                (b"Content-Type", rng.choice((b"application/proto", b"application/json")))
            )
        headers += self.credentials() + [(b"Connection", b"close")]
        return self.request(
            "methods",
            detail,
            "",
            [_h1(verb, target, headers, body)],
            method=method,
            answers=(verb.decode("latin-1").upper() if verb.isalpha() else "GET",),
        )

    def chunked(self) -> HttpRequest:
        """A body in chunks: good, with extensions and trailers, or broken."""
        rng, method = self.rng, self.base.method
        codec = rng.choice(("json", "proto"))
        content_type = f"application/{codec}"
        message = self.message(codec)
        body = message
        if rng.random() < 0.3:
            content_type = "application/connect+proto"
            body = _envelope(0, self.base.payload)
        chunks: list[bytes] = []
        at = 0
        while at < len(body):
            size = rng.choice((1, 7, 100, 4096, 70_000))
            piece = body[at : at + size]
            at += size
            extension = b";ext=1" if rng.random() < 0.1 else b""
            chunks.append(f"{len(piece):x}".encode() + extension + b"\r\n" + piece + b"\r\n")
        kind = rng.randrange(10)
        end = b"0\r\n\r\n"
        te = b"chunked"
        extra: Headers = []
        may_close = ""
        detail = "good chunks"
        if kind == 1:
            end = b"0\r\nX-Trailer: 1\r\nGrpc-Timeout: zz\r\n\r\n"
            detail = "trailers"
        elif kind == 2:
            chunks.append(b"zz\r\nabc\r\n")
            detail = "bad chunk size"
        elif kind == 3:
            chunks.append(b"ffffffffffffffffffff\r\nabc\r\n")
            detail = "huge chunk size"
            may_close = "a chunk that never ends"
        elif kind == 4:
            chunks.append(b"10\r\nabc\r\n")
            detail = "chunk shorter than its size"
            may_close = "a chunk that never ends"
        elif kind == 5:
            extra = [(b"Content-Length", str(len(body)).encode())]
            detail = "content-length and chunked"
        elif kind == 6:
            te = rng.choice(
                (
                    b"gzip, chunked",
                    b"chunked, gzip",
                    b"identity",
                    b"CHUNKED",
                    b"chunked, chunked",
                    b"\xe9",
                )
            )
            detail = f"transfer-encoding {te!r}"
            may_close = "a body of unknown length"
        elif kind == 7:
            end = b"0\r\n"
            detail = "no end of the trailers"
            may_close = "a body that never ends"
        elif kind == 8:
            chunks.append(b"-5\r\nabc\r\n")
            detail = "negative chunk size"
        headers = self.host() + [
            (b"Content-Type", content_type.encode()),
            (b"Transfer-Encoding", te),
        ]
        headers += extra + self.credentials() + [(b"Connection", b"close")]
        head = _h1(b"POST", self.path(), headers, b"", length=False)
        return self.request(
            "chunked",
            detail,
            content_type,
            [head, b"".join(chunks) + end],
            method=method,
            haystack=message,
            may_close=may_close,
        )

    def too_large(self) -> HttpRequest:
        """Bodies over the method's limit, declared or not, up to past the drain limit."""
        rng = self.rng
        method = self.base.method
        size = rng.choice((64 * 1024 + 1, 70_000, 300_000, 1_000_000, 4_300_000, 9_000_000))
        if size > DRAIN_LIMIT and rng.random() < 0.7:
            size = 1_000_000  # a body past the drain limit is rare: it takes long to send
        content_type = rng.choice(
            (
                "application/proto",
                "application/json",
                "application/connect+proto",
                "application/grpc-web+proto",
            )
        )
        payload = self.base.payload + b"\x00" * max(0, size - len(self.base.payload))
        if content_type != "application/proto" and content_type != "application/json":
            payload = _envelope(0, payload)
        kind = rng.randrange(3)
        headers = self.host() + [(b"Content-Type", content_type.encode())] + self.credentials()
        may_close = "a body past the drain limit" if size > DRAIN_LIMIT else ""
        if kind == 0:
            pieces = [_h1(b"POST", self.path(), headers + [(b"Connection", b"close")], payload)]
            detail = f"{size} bytes"
        elif kind == 1:
            declared = rng.choice((size, 2**31, 10**15))
            head = _h1(
                b"POST",
                self.path(),
                headers + [(b"Content-Length", str(declared).encode()), (b"Connection", b"close")],
                b"",
                length=False,
            )
            pieces = [head + payload[: min(len(payload), 100_000)]]
            detail = f"{declared} bytes declared"
            may_close = may_close or "a declared body that never ends"
        else:
            head = _h1(
                b"POST",
                self.path(),
                headers + [(b"Transfer-Encoding", b"chunked"), (b"Connection", b"close")],
                b"",
                length=False,
            )
            step = 256 * 1024
            chunks = [
                f"{len(payload[i : i + step]):x}\r\n".encode() + payload[i : i + step] + b"\r\n"
                for i in range(0, len(payload), step)
            ]
            pieces = [head, b"".join(chunks) + b"0\r\n\r\n"]
            detail = f"{size} bytes chunked"
        return self.request(
            "too_large",
            detail,
            content_type,
            pieces,
            method=method,
            may_close=may_close,
            haystack=self.base.payload,
        )

    def slow(self) -> HttpRequest:
        """Requests that stop or trickle: unfinished headers (the header timeout), a body
        that stops short (the body timeout), a body that trickles in within it."""
        rng, method = self.rng, self.base.method
        body = self.base.payload
        headers = self.host() + [(b"Content-Type", b"application/proto")] + self.credentials()
        kind = rng.randrange(3)
        whole = _h1(b"POST", self.path(), headers + [(b"Connection", b"close")], body)
        if kind == 0:
            cut = whole.index(b"\r\n\r\n")
            return self.request(
                "slow",
                "unfinished headers",
                "application/proto",
                [whole[: rng.randint(1, cut)]],
                method=method,
                may_close="headers that never end",
            )
        if kind == 1:
            head = _h1(
                b"POST",
                self.path(),
                headers
                + [(b"Content-Length", str(len(body) + 10).encode()), (b"Connection", b"close")],
                b"",
                length=False,
            )
            return self.request(
                "slow",
                "body short of its length",
                "application/proto",
                [head + body],
                method=method,
                may_close="a body that never ends",
            )
        step = max(1, len(whole) // 3)
        pieces = [(0.0 if i == 0 else 0.2, whole[i : i + step]) for i in range(0, len(whole), step)]
        return self.request("slow", "trickled in time", "application/proto", pieces, method=method)

    def streams(self) -> HttpRequest:
        """A streaming method with a plausible request, read briefly and cut."""
        rng = self.rng
        streaming = [m for m in self.all_methods if m.server_streaming]
        method = self.base.method if self.base.method.server_streaming else rng.choice(streaming)
        corpus = self.pools.corpus.get(method.request.full_name, ())
        payload = rng.choice(corpus) if corpus and rng.random() < 0.7 else b""
        if method.name == "WatchGame" and rng.random() < 0.5 and self.pools.game_ids:
            payload = game_service_pb2.WatchGameRequest(
                game_id=rng.choice(self.pools.game_ids), from_version=rng.choice((0, 1, 5, 10**6))
            ).SerializeToString()
        protocol = rng.choice(("connect", "grpc_web"))
        if protocol == "connect":
            content_type = "application/connect+proto"
            extra: Headers = []
        else:
            content_type = "application/grpc-web+proto"
            extra = [(b"X-Grpc-Web", b"1")]
        headers = (
            self.host() + [(b"Content-Type", content_type.encode())] + extra + self.credentials()
        )
        headers.append((b"Connection", b"close"))
        return self.request(
            "streams",
            f"{protocol} stream",
            content_type,
            [_h1(b"POST", method.path.encode(), headers, _envelope(0, payload))],
            method=method,
            haystack=payload,
            stream=True,
        )

    def static(self) -> HttpRequest:
        """GET or HEAD of a path that tries to climb out of the web app."""
        rng = self.rng
        target = rng.choice(_STATIC_TARGETS) if rng.random() < 0.5 else _climb(rng)
        verb = rng.choice((b"GET", b"GET", b"GET", b"HEAD"))
        headers = self.host()
        detail = "path"
        if rng.random() < 0.2:
            headers.append((b"Range", rng.choice(_RANGES)))
            detail += ", range"
        if rng.random() < 0.1:
            headers.append(
                rng.choice(
                    (
                        (b"If-None-Match", b"*"),
                        (b"If-None-Match", b'"x", W/"y"'),
                        (b"If-Modified-Since", b"garbage"),
                        (b"If-Modified-Since", b"Fri, 31 Dec 9999 23:59:59 GMT"),
                    )
                )
            )
            detail += ", conditional"
        if rng.random() < 0.05:
            headers.append((b"Accept-Encoding", b"gzip"))
        headers.append((b"Connection", b"close"))
        return self.request(
            "static", detail, "", [_h1(verb, target, headers)], answers=(verb.decode(),)
        )

    def healthz(self) -> HttpRequest:
        rng = self.rng
        query = rng.choice(
            (
                b"", b"?", b"?service=", b"?service=boneyard.v1.GameService",
                b"?service=grpc.health.v1.Health", b"?service=nope", b"?service=%ff%fe",
                b"?service=" + b"A" * 10_000, b"?service=a&service=b", b"?=&&&", b"?service=%00",
                b"?%", b"?service=%zz", b"?service=\xff", b"?service=a%20b", b"?service[]=x",
                b"?service=" + b"%41" * 3000, b"#frag", b"?service=boneyard.v1.GameService#x",
            )
        )  # fmt: skip
        verb = rng.choice((b"GET", b"GET", b"HEAD"))
        headers = self.host() + [(b"Connection", b"close")]
        if rng.random() < 0.2:
            headers += self.credentials()
        return self.request(
            "healthz",
            f"query {query[:30]!r}",
            "",
            [_h1(verb, b"/healthz" + query, headers)],
            answers=(verb.decode(),),
        )

    def raw(self) -> HttpRequest:
        """Malformed request lines, other HTTP versions, absolute and asterisk targets,
        pipelining, an h2c upgrade, bytes that are no HTTP at all."""
        rng = self.rng
        host = b"Host: boneyard\r\n"
        kind = rng.randrange(14)
        answers: tuple[str, ...] = ("GET",)
        upgrade = False
        h1_answer = True
        may_close = ""
        method: Method | None = None
        if kind == 0:
            data = b"GET /healthz HTTP/1.0\r\n\r\n"
            detail = "HTTP/1.0"
        elif kind == 1:
            data = (
                b"GET / "
                + rng.choice(
                    (b"HTTP/2.0", b"HTTP/1.2", b"HTTP/9.9", b"HTTP/1", b"HTTP/x", b"http/1.1")
                )
                + b"\r\n"
                + host
                + b"\r\n"
            )
            detail = "odd version"
        elif kind == 2:
            data = b"GET /\r\n\r\n"
            detail = "HTTP/0.9"
        elif kind == 3:
            data = b"OPTIONS * HTTP/1.1\r\n" + host + b"\r\n"
            detail = "asterisk"
            answers = ("OPTIONS",)
        elif kind == 4:
            target = rng.choice(
                (
                    b"http://boneyard/healthz",
                    b"http://evil/../../etc/passwd",
                    b"http://boneyard/%2e%2e/%2e%2e/pyproject.toml",
                    b"https://x/index.html",
                )
            )
            data = b"GET " + target + b" HTTP/1.1\r\n" + host + b"\r\n"
            detail = "absolute target"
        elif kind == 5:
            data = (
                rng.choice(
                    (
                        b"get / HTTP/1.1\r\n",
                        b"GET  / HTTP/1.1\r\n",
                        b"GET / HTTP/1.1 extra\r\n",
                        b"G\x00T / HTTP/1.1\r\n",
                        b" GET / HTTP/1.1\r\n",
                        b"GET /\x00 HTTP/1.1\r\n",
                        b"GET /\x7f HTTP/1.1\r\n",
                        b"GET / HTTP/1.1\n",
                    )
                )
                + host
                + b"\r\n"
            )
            detail = "malformed request line"
        elif kind == 6:
            count = rng.randint(2, 3)
            one = b"GET /healthz HTTP/1.1\r\n" + host + b"\r\n"
            call_ = _h1(
                b"POST",
                self.base.method.path.encode(),
                [(b"Host", b"boneyard"), (b"Content-Type", b"application/proto")],
                self.base.payload[:60_000],
            )
            data = b"".join(rng.choice((one, call_)) for _ in range(count))
            answers = ("GET",) * count
            detail = f"{count} pipelined"
            method = self.base.method
        elif kind == 7:
            data = (
                b"GET /healthz HTTP/1.1\r\n" + host + b"Connection: Upgrade, HTTP2-Settings\r\n"
                b"Upgrade: h2c\r\nHTTP2-Settings: "
                + rng.choice((b"AAMAAABkAARAAAAAAAIAAAAA", b"!!", b""))
                + b"\r\n\r\n"
            )
            upgrade = True
            detail = "h2c upgrade"
        elif kind == 8:
            data = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + rng.randbytes(rng.randint(0, 64))
            detail = "HTTP/2 preface, then garbage"
            may_close = "HTTP/2 protocol error"
            h1_answer = False
        elif kind == 9:
            data = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + rng.randbytes(100)
            detail = "a TLS hello"
            may_close = "no HTTP at all"
        elif kind == 10:
            data = rng.randbytes(rng.randint(1, 300)) + b"\r\n\r\n"
            detail = "random bytes"
            may_close = "no HTTP at all"
        elif kind == 11:
            data = b"\r\n\r\n" + b"GET /healthz HTTP/1.1\r\n" + host + b"\r\n"
            detail = "blank lines first"
        elif kind == 12:
            data = (
                b"GET /"
                + b"a" * rng.choice((4_000, 15_000, 20_000, 70_000))
                + b" HTTP/1.1\r\n"
                + host
                + b"\r\n"
            )
            detail = "long target"
        else:
            data = b"CONNECT boneyard:443 HTTP/1.1\r\n" + host + b"\r\n"
            detail = "CONNECT"
            answers = ("CONNECT",)
        return self.request(
            "raw",
            detail,
            "",
            [data],
            answers=answers,
            upgrade=upgrade,
            may_close=may_close,
            method=method,
            h1_answer=h1_answer,
        )


def _poke(obj: object, rng: random.Random) -> None:
    """Put a hostile value somewhere in a JSON object (or a new, unknown key)."""
    holder = obj
    for _ in range(4):
        if isinstance(holder, dict) and holder and rng.random() < 0.6:
            key = rng.choice(list(holder))
            if isinstance(holder[key], (dict, list)) and holder[key]:
                holder = holder[key]
                continue
        break
    value = rng.choice(_HOSTILE_JSON_VALUES)
    if isinstance(holder, list):
        holder[rng.randrange(len(holder))] = value
    elif isinstance(holder, dict):
        keys = list(holder)
        key = (
            rng.choice(keys)
            if keys and rng.random() < 0.8
            else rng.choice(("unknownField", "gameId", "game_id", "rules", "@type"))
        )
        holder[key] = value


_SENSITIVE = (
    b"etc/passwd", b"pyproject.toml", b"server/main.py", b"main.py", b"http_door.py",
    b"proc/self/environ", b".git/config", b"webapp/index.html", b"index.html",
    b"assets/", b"../webapp/index.html",
)  # fmt: skip
_DOTS = (
    b"..",
    b"%2e%2e",
    b"%2E%2E",
    b".%2e",
    b"%2e.",
    b"%252e%252e",
    b"..%00",
    b"%c0%ae%c0%ae",
    b"...",
    b"..;",
)
_SEPARATORS = (b"/", b"%2f", b"%2F", b"\\", b"%5c", b"%252f", b"//", b"/./")
_STATIC_TARGETS = (
    b"/", b"/index.html", b"/assets/", b"/assets", b"/nope", b"/../../../../etc/passwd",
    b"/%2e%2e/%2e%2e/%2e%2e/etc/passwd", b"/..%2f..%2f..%2f..%2fetc%2fpasswd",
    b"/%252e%252e/%252e%252e/etc/passwd", b"/..\\..\\..\\etc\\passwd",
    b"/assets/../../pyproject.toml", b"/assets/%2e%2e/%2e%2e/%2e%2e/pyproject.toml",
    b"/../main.py", b"/..%2fmain.py", b"/%2e%2e/http_door.py", b"//etc/passwd",
    b"/etc/passwd", b"/%2fetc%2fpasswd", b"/./././index.html", b"/assets/./../index.html",
    b"/index.html%00.js", b"/%00", b"/assets/" + b"a" * 300, b"/" + b"a/" * 2000,
    b"/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd", b"/..;/..;/etc/passwd", b"/index.html/",
    b"/index.html/..", b"/.git/config", b"/\xff\xfe", b"/%ff%fe", b"/index.html?x=../../etc/passwd",
    b"/%2e%2e%2f%2e%2e%2f%2e%2e%2fpyproject.toml", b"/....//....//etc/passwd",
    b"/assets/..%252f..%252fpyproject.toml", b"/%u002e%u002e/pyproject.toml", b"/~root",
    b"/proc/self/environ", b"/../../../../proc/self/environ", b"/.", b"/..", b"/%2e",
)  # fmt: skip
_RANGES = (
    b"bytes=0-10", b"bytes=-5", b"bytes=5-", b"bytes=0-0,2-3,1-1", b"bytes=99999999-",
    b"bytes=a-b", b"bytes=" + b"0-1," * 500 + b"0-1", b"items=0-1", b"bytes=10-5", b"bytes=",
    b"bytes=-0", b"bytes=0-18446744073709551616",
)  # fmt: skip


def _climb(rng: random.Random) -> bytes:
    """A path of one to eight ``..`` (spelled one of many ways) toward a file outside."""
    parts = [rng.choice(_DOTS) for _ in range(rng.randint(1, 8))]
    sep = rng.choice(_SEPARATORS)
    lead = rng.choice((b"/", b"/assets/", b"//", b"/index.html/"))
    return lead + sep.join(parts) + sep + rng.choice(_SENSITIVE)


# ------------------------------------------------------------------------------ answers


@dataclass
class _Answer:
    status: int | None = None
    headers: Headers = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)
    trailers: Headers = field(default_factory=list)
    ended: bool = False
    """The whole answer arrived."""
    closed: str = ""
    """How the exchange ended before the whole answer: ``closed``, ``reset``, ``timeout``,
    ``cut`` (a stream the fuzzer cut), HTTP/2: ``reset N``, ``goaway N``."""
    malformed: str = ""
    h2_error: int | None = None
    """An HTTP/2 RST_STREAM or GOAWAY code from the server."""
    owed: bool = True
    """Whether the server owes this answer (not a stream the client reset, nor a request
    after one the server closed the connection on)."""
    refusable: bool = False
    """HTTP/2: a malformed request, which the server may refuse with RST_STREAM."""
    asked: str = ""
    """The protocol of the request (``HttpOutcome.asked``)."""
    verb: str = ""
    """The request's method."""


@dataclass(frozen=True)
class HttpOutcome:
    request: HttpRequest
    status: int | None
    """The HTTP status (``None``: none came)."""
    code: str
    """The protocol's code: a Connect code (``ok``, ``invalid_argument`` ...), ``grpc N``, a
    grpc channel's status name, or ``""`` where the answer has none (a file, a 404 of the
    router)."""
    message: str = ""
    closed: str = ""
    messages: int = 0
    seconds: float = 0.0
    """How long the exchange took (for an HTTP/1.1 connection closed unanswered: whether
    the header timeout closed it)."""
    body: bytes = b""
    path: str | None = None
    """The path of the request this answers (``None``: not known)."""
    owed: bool = True
    refusable: bool = False
    malformed: str = ""
    h2_error: int | None = None
    asked: str = ""
    """The protocol the request asked for by its first content type (as the door reads it:
    ``connect``, ``connect-stream``, ``grpc``, ``grpc-web``), ``""`` for none of them."""
    content_type: str = ""
    """The answer's."""
    verb: str = ""
    """The request's method."""
    found: tuple[str, ...] = ()
    """Findings made where the answer was read (a grpc channel's, by fuzz_rpc's bars)."""
    extra: tuple[HttpOutcome, ...] = ()
    """The answers to the other requests of the same connection (pipelined, HTTP/2 streams)."""

    @property
    def label(self) -> str:
        if self.request.transport == "grpc":
            return f"grpc channel {self.code}"
        if self.status is None:
            return f"no answer ({self.closed or 'none'})"
        return f"{self.status} {self.code}".strip()

    @property
    def accepted(self) -> bool:
        """Whether the server may have done what was asked (for any request of the
        connection)."""
        return any(o._accepted() for o in (self, *self.extra))

    def _accepted(self) -> bool:
        if self.messages:
            return True
        if self.request.transport == "grpc":
            return self.code in ("OK", "DEADLINE_EXCEEDED", "UNAVAILABLE", "CANCELLED")
        if self.status is None:
            # Not a request the server refused as malformed, nor one that never ended (the
            # client reset it, or its headers never ended): no application saw those.
            unseen = (
                self.refusable and self.h2_error is not None
            ) or self.closed == "reset by the client"
            return not unseen and self.request.may_close != "headers that never end"
        if self.code:
            return self.code in (
                "ok",
                "canceled",
                "deadline_exceeded",
                "grpc 0",
                "grpc 1",
                "grpc 4",
            )
        return self.status < 300


def _header(headers: Headers, name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _envelopes(body: bytes) -> list[tuple[int, bytes]]:
    out = []
    at = 0
    while at + 5 <= len(body):
        flags, length = body[at], int.from_bytes(body[at + 1 : at + 5], "big")
        out.append((flags, body[at + 5 : at + 5 + length]))
        at += 5 + length
    return out


def _grpc_code(answer: _Answer, body: bytes) -> tuple[str, str, int]:
    """gRPC and gRPC-Web: the status (headers, trailers, or gRPC-Web's trailer envelope),
    its message, and the messages before it."""
    status = _header(answer.headers, b"grpc-status") or _header(answer.trailers, b"grpc-status")
    message = _header(answer.headers, b"grpc-message") or _header(answer.trailers, b"grpc-message")
    messages = 0
    for flags, data in _envelopes(body):
        if not flags & 0x80:
            messages += 1
            continue
        for line in data.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.strip().lower() == "grpc-status":
                status = value.strip()
            elif key.strip().lower() == "grpc-message":
                message = value.strip()
    code = f"grpc {status}" if status is not None else ""
    return code, urllib.parse.unquote(message or ""), messages


def _connect_stream_code(answer: _Answer, body: bytes) -> tuple[str, str, int]:
    """Connect streaming: the code of the end-of-stream envelope, its message, and the
    messages before it."""
    code, message, messages = "", "", 0
    for flags, data in _envelopes(body):
        if not flags & 0x02:
            messages += 1
            continue
        try:
            end = json.loads(gzip.decompress(data) if flags & 1 else data)
            error = end.get("error") or {}
            code, message = str(error.get("code", "ok")), str(error.get("message", ""))
        except (ValueError, OSError, AttributeError):
            code = "unreadable end of stream"
    return code, message, messages


def _json_error(body: bytes) -> tuple[str, str]:
    if not body:
        return "", ""  # an answer to HEAD
    try:
        error = json.loads(body)
    except ValueError:
        return "unreadable error", ""
    if not isinstance(error, dict) or "code" not in error:
        return "", ""
    return str(error["code"]), str(error.get("message", ""))


def _outcome(request: HttpRequest, answer: _Answer, path: str | None) -> HttpOutcome:
    """An answer, with its protocol's code, found from its content type."""
    status = answer.status
    body = bytes(answer.body)
    content_type = (_header(answer.headers, b"content-type") or "").lower()
    code, message, messages = "", "", 0
    if status is None:
        pass
    elif content_type.startswith("application/grpc"):
        code, message, messages = _grpc_code(answer, body)
    elif status == 200 and content_type.startswith("application/connect+"):
        code, message, messages = _connect_stream_code(answer, body)
    elif content_type.startswith("application/json") and status != 200:
        code, message = _json_error(body)
    elif status == 200 and path is not None and path.startswith("/boneyard.v1.") and answer.ended:
        code = "ok"
    return HttpOutcome(
        request,
        status,
        code,
        message,
        closed=answer.closed,
        messages=messages,
        body=body,
        path=path,
        owed=answer.owed,
        refusable=answer.refusable,
        malformed=answer.malformed,
        h2_error=answer.h2_error,
        asked=answer.asked,
        content_type=content_type,
        verb=answer.verb,
    )


# ------------------------------------------------------------------------------ the bars


def _web_app_files() -> dict[str, bytes]:
    root = web_app_dir()
    if root is None:
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _outside_markers(web: dict[str, bytes]) -> dict[bytes, str]:
    """A line of each of a few files outside the web app (none of which a web app file
    holds): no answer may contain one."""
    files = [
        Path("/etc/passwd"),
        REPO / "pyproject.toml",
        REPO / "server" / "main.py",
        REPO / "server" / "http_door.py",
    ]
    markers: dict[bytes, str] = {}
    for path in files:
        try:
            lines = path.read_bytes().splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if len(line) >= 24 and not any(line in content for content in web.values()):
                markers[line] = str(path)
                break
    return markers


WEB_APP = _web_app_files()
"""The files the HTTP listener may serve, by path in the web app."""
OUTSIDE = _outside_markers(WEB_APP)


def findings_of(outcome: HttpOutcome) -> list[str]:
    """What is wrong with the answers of one request (nothing, mostly); those of the other
    requests of its connection say which they are."""
    found = list(outcome.found) + _answer_findings(outcome)
    for number, one in enumerate(outcome.extra, 2):
        found += [f"{f} (request {number} of the connection)" for f in _answer_findings(one)]
    return found


def _answer_findings(outcome: HttpOutcome) -> list[str]:
    request = outcome.request
    found: list[str] = []
    status, code = outcome.status, outcome.code
    if outcome.malformed:
        found.append(f"a malformed answer: {outcome.malformed}")
    if status is None and request.transport != "grpc":
        owed = outcome.owed and not request.stream and not request.may_close
        refused = outcome.refusable and outcome.h2_error is not None
        if outcome.closed == "timeout":
            # Even a request the door may leave unanswered has its connection closed.
            found.append("no answer, and the connection still open, when the fuzzer gave up")
        elif (
            owed
            and not refused
            and outcome.closed != "cut"
            and not _timed_out_on_a_stalled_server(outcome)
        ):
            found.append(f"no answer ({outcome.closed or 'nothing'})")
    if status is not None and status >= 500:
        allowed = ALLOWED_5XX.get(status)
        if status == 501 and not code and request.odd_coding:
            pass
        elif allowed != code or (status == 504 and not request.timeout_set):
            found.append(f"HTTP {status}")
    if code in FORBIDDEN_CONNECT:
        found.append(f"answered {code}")
    if code.startswith("grpc "):
        number = code.split(" ", 1)[1]
        if number.isdigit() and int(number) in FORBIDDEN_GRPC:
            found.append(f"answered grpc-status {number} ({FORBIDDEN_GRPC[int(number)]})")
    shape = _shape(outcome)
    if shape and outcome.asked and shape not in _SHAPES[outcome.asked]:
        found.append(f"a {outcome.asked} request answered with a {shape}")
    if outcome.h2_error == h2.errors.ErrorCodes.INTERNAL_ERROR:
        found.append("HTTP/2 INTERNAL_ERROR from the server")
    if len(outcome.message) > MAX_DETAILS:
        found.append(f"an error message of {len(outcome.message)} characters")
    body = outcome.body
    for marker, path in OUTSIDE.items():
        if marker in body:
            found.append(f"an answer holds a line of {path}")
    served = status is not None and 200 <= status < 300 and body and not code
    served = served and outcome.verb in ("GET", "HEAD")  # not a CORS preflight's "OK"
    if served and _outside_the_api(outcome.path) and not _from_the_web_app(body, status == 206):
        found.append(f"HTTP {status} with {len(body)} bytes that are no file of the web app")
    return found


def _from_the_web_app(body: bytes, ranges: bool) -> bool:
    """Whether ``body`` is a file of the web app (``ranges``: a range of one, or ranges of
    them), as the files are now (they are read again if it is not: ``make web`` may have
    rewritten them meanwhile)."""
    for again in (False, True):
        if again:
            WEB_APP.clear()
            WEB_APP.update(_web_app_files())
        files = WEB_APP.values()
        if not ranges and body in files:
            return True
        if ranges and all(any(p in f for f in files) for p in _parts_of_ranges(body)):
            return True
    return False


_SHAPES = {
    "connect": {"Connect error"},
    "connect-stream": {"Connect end of stream", "Connect error"},
    "grpc": {"gRPC status"},
    "grpc-web": {"gRPC status"},
}
"""The shapes of error an answer to each protocol may take (a Connect streaming call refused
before its stream began gets a Connect error, as connectrpc writes it)."""


def _shape(outcome: HttpOutcome) -> str:
    """The shape of the error an answer carries ("": none, or no error)."""
    if not outcome.code or outcome.code == "ok":
        return ""
    if outcome.code.startswith("grpc"):
        return "gRPC status"
    if outcome.content_type.startswith("application/connect+"):
        return "Connect end of stream"
    if outcome.content_type.startswith("application/json"):
        return "Connect error"
    return ""


def _parts_of_ranges(body: bytes) -> list[bytes]:
    """The parts of a 206 answer (one range as it is, or multipart/byteranges)."""
    if not body.startswith(b"--"):
        return [body]
    boundary = body.split(b"\r\n", 1)[0]
    parts = []
    for part in body.split(boundary)[1:]:
        if b"\r\n\r\n" in part:
            parts.append(part.split(b"\r\n\r\n", 1)[1].removesuffix(b"\r\n"))
    return parts


# ------------------------------------------------------------------------------ sending

_H2_CONFIG = h2.config.H2Configuration(
    client_side=True,
    header_encoding=None,
    validate_outbound_headers=False,
    normalize_outbound_headers=False,
    validate_inbound_headers=False,
)


async def _h1_exchange(port: int, request: HttpRequest) -> list[_Answer]:
    """Send the bytes, read the answers (h11 parses them), close."""
    reader, writer = await asyncio.open_connection(HOST, port)
    started = time.monotonic()
    deadline = (
        started + ANSWER_DEADLINE + (HEADER_TIMEOUT + BODY_TIMEOUT if request.may_close else 0.0)
    )
    cut_at = started + STREAM_SECONDS if request.stream else None

    async def write() -> None:
        with contextlib.suppress(OSError):
            for pause, piece in request.pieces:
                if pause:
                    await asyncio.sleep(pause)
                writer.write(piece)
                await writer.drain()

    sender = asyncio.create_task(write())
    try:
        return await _read_h1(reader, request, deadline, cut_at)
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, OSError):
            await sender
        writer.transport.abort()


def _fake_request(conn: h11.Connection, method: str, upgrade: bool) -> None:
    """Put h11's client side where it reads an answer to ``method`` (the bytes really sent
    are the fuzzer's own)."""
    headers = [("Host", "boneyard")]
    if upgrade:
        headers += [("Connection", "Upgrade"), ("Upgrade", "h2c")]
    conn.send(h11.Request(method=method, target="/", headers=headers))
    conn.send(h11.EndOfMessage())


async def _read_h1(
    reader: asyncio.StreamReader, request: HttpRequest, deadline: float, cut_at: float | None
) -> list[_Answer]:
    conn = h11.Connection(h11.CLIENT)
    methods_ = list(request.answers)
    _fake_request(conn, methods_.pop(0), request.upgrade)
    answers: list[_Answer] = []
    current = _Answer()
    received = 0
    """Bytes received since the last whole answer."""
    while True:
        try:
            event = conn.next_event() if request.h1_answer else h11.NEED_DATA
        except h11.RemoteProtocolError as error:
            if received:
                current.malformed = f"{error} (after {received} bytes)"
            else:
                current.closed = "closed"  # nothing at all, then the end
            break
        if event is h11.NEED_DATA:
            until = deadline if cut_at is None else min(deadline, cut_at)
            try:
                data = await asyncio.wait_for(
                    reader.read(65536), max(0.0, until - time.monotonic())
                )
            except TimeoutError:
                current.closed = (
                    "cut" if cut_at is not None and time.monotonic() >= cut_at else "timeout"
                )
                break
            except OSError:
                current.closed = "reset"
                break
            if not request.h1_answer:
                if not data:
                    current.closed = "closed"
                    break
                continue  # not HTTP/1.1: only whether and when it closes is looked at
            received += len(data)
            conn.receive_data(data)
            continue
        if isinstance(event, h11.InformationalResponse):
            if event.status_code == 101:
                current.status, current.headers, current.ended = 101, list(event.headers), True
                break
            continue
        if isinstance(event, h11.Response):
            current.status, current.headers = event.status_code, list(event.headers)
        elif isinstance(event, h11.Data):
            current.body += event.data
        elif isinstance(event, h11.EndOfMessage):
            current.trailers, current.ended = list(event.headers), True
            answers.append(current)
            current = _Answer()
            received = 0
            if not methods_ or conn.their_state is not h11.DONE or conn.our_state is not h11.DONE:
                break
            conn.start_next_cycle()
            _fake_request(conn, methods_.pop(0), False)
        elif isinstance(event, h11.ConnectionClosed):
            current.closed = current.closed or "closed"
            break
        else:  # pragma: no cover - h11 has no other events
            break
    if not answers or current.status is not None or current.malformed:
        answers.append(current)
    return answers


async def _h2_exchange(port: int, request: HttpRequest) -> list[_Answer]:
    """HTTP/2 with prior knowledge: the streams' headers and bodies (within the flow
    control windows), then their answers."""
    reader, writer = await asyncio.open_connection(HOST, port)
    conn = h2.connection.H2Connection(config=_H2_CONFIG)
    started = time.monotonic()
    deadline = started + ANSWER_DEADLINE
    cut_at = started + STREAM_SECONDS if request.stream else None
    answers: dict[int, _Answer] = {}
    bodies: dict[int, memoryview] = {}
    open_: set[int] = set()
    try:
        conn.initiate_connection()
        for stream in request.h2_streams:
            sid = conn.get_next_available_stream_id()
            content_type = next((v for k, v in stream.headers if k == b"content-type"), None)
            verb = next((v for k, v in stream.headers if k == b":method"), b"")
            answers[sid] = _Answer(
                refusable=bool(stream.malformed),
                asked=_asked(content_type),
                verb=verb.decode("latin-1").upper(),
            )
            try:
                conn.send_headers(sid, list(stream.headers), end_stream=stream.body is None)
            except h2.exceptions.H2Error as error:
                answers[sid].closed = f"not sendable: {type(error).__name__}"
                answers[sid].owed = False
                continue
            if stream.reset:
                conn.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
                answers[sid].closed = "reset by the client"
                answers[sid].owed = False
                continue
            open_.add(sid)
            if stream.body is not None:
                bodies[sid] = memoryview(stream.body)
        while open_:
            for sid in list(bodies):
                rest = bodies[sid]
                try:
                    if not rest:
                        conn.end_stream(sid)
                    while rest:
                        window = min(
                            conn.local_flow_control_window(sid), conn.max_outbound_frame_size
                        )
                        if window <= 0:
                            break
                        conn.send_data(sid, bytes(rest[:window]), end_stream=len(rest) <= window)
                        rest = rest[window:]
                except h2.exceptions.H2Error:
                    rest = memoryview(b"")
                if rest:
                    bodies[sid] = rest
                else:
                    del bodies[sid]
            writer.write(conn.data_to_send())
            await writer.drain()
            until = deadline if cut_at is None else min(deadline, cut_at)
            try:
                data = await asyncio.wait_for(
                    reader.read(65536), max(0.0, until - time.monotonic())
                )
            except TimeoutError:
                why = "cut" if cut_at is not None and time.monotonic() >= cut_at else "timeout"
                for sid in open_:
                    answers[sid].closed = why
                    with contextlib.suppress(h2.exceptions.H2Error):
                        conn.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
                break
            if not data:
                for sid in open_:
                    answers[sid].closed = "closed"
                break
            try:
                events = conn.receive_data(data)
            except h2.exceptions.H2Error as error:
                for sid in open_:
                    answers[sid].malformed = f"HTTP/2: {type(error).__name__}: {error}"
                break
            for event in events:
                sid = getattr(event, "stream_id", 0)
                answer = answers.get(sid)
                if isinstance(event, h2.events.ResponseReceived) and answer:
                    headers = [(bytes(k), bytes(v)) for k, v in event.headers]
                    answer.headers = headers
                    status = _header(headers, b":status")
                    answer.status = int(status) if status and status.isdigit() else None
                elif isinstance(event, h2.events.DataReceived) and answer:
                    answer.body += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, sid)
                elif isinstance(event, h2.events.TrailersReceived) and answer:
                    answer.trailers = [(bytes(k), bytes(v)) for k, v in event.headers]
                elif isinstance(event, h2.events.StreamEnded) and answer:
                    answer.ended = True
                    open_.discard(sid)
                elif isinstance(event, h2.events.StreamReset) and answer:
                    answer.closed = f"reset {event.error_code!s}"
                    answer.h2_error = int(event.error_code)
                    open_.discard(sid)
                    bodies.pop(sid, None)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    for left in open_:
                        answers[left].closed = f"goaway {event.error_code!s}"
                        answers[left].h2_error = int(event.error_code)
                    open_.clear()
            with contextlib.suppress(OSError):
                writer.write(conn.data_to_send())
    except OSError as error:
        for sid in open_:
            answers[sid].closed = answers[sid].closed or f"reset ({type(error).__name__})"
    finally:
        with contextlib.suppress(Exception):
            writer.write(conn.data_to_send())
        writer.transport.abort()
    return list(answers.values()) or [_Answer(closed="no stream sent")]


async def send(port: int, channel: grpc.aio.Channel, request: HttpRequest) -> HttpOutcome:
    """Send ``request`` to the HTTP listener on ``port`` (``channel``: a grpc channel to it)."""
    if request.transport == "grpc":
        rpc = await call(channel, request.base)
        return HttpOutcome(
            request,
            None,
            rpc.code.name,
            rpc.details,
            messages=rpc.messages,
            path=request.base.method.path,
            # The door's own answer when a body is late is an answer, not a hang.
            found=()
            if _body_timeout_answer(rpc.code.name, rpc.details)
            else tuple(rpc_findings_of(rpc)),
        )
    started = time.monotonic()
    try:
        if request.transport == "h2":
            answers = await _h2_exchange(port, request)
        else:
            answers = await _h1_exchange(port, request)
            head = request.pieces[0][1][:70_000].split(b"\r\n\r\n", 1)[0] if request.pieces else b""
            answers[0].asked = _asked(_first_content_type(head))
            for answer, verb in zip(answers, request.answers, strict=False):
                answer.verb = verb
            for later in answers[1:]:
                later.owed = False  # the server may close the connection after an answer
    except OSError as error:
        answers = [_Answer(closed=f"connect failed ({type(error).__name__})")]
    seconds = time.monotonic() - started
    paths: list[str | None] = list(request.paths)
    paths += [None] * (len(answers) - len(paths))
    outcomes = [_outcome(request, a, p) for a, p in zip(answers, paths, strict=False)]
    return dataclasses.replace(outcomes[0], seconds=seconds, extra=tuple(outcomes[1:]))


def describe(request: HttpRequest, seed: int) -> str:
    """Enough to see what was sent and to send it again."""
    if request.transport == "h2":
        shown = "; ".join(
            f"headers {list(s.headers)!r:.600}, body {len(s.body or b'')} bytes {(s.body or b'')[:100]!r}"
            + (", reset" if s.reset else "")
            for s in request.h2_streams
        )
    elif request.transport == "grpc":
        shown = f"{len(request.base.payload)} bytes: {request.base.payload[:200].hex()}"
    else:
        data = b"".join(p for _, p in request.pieces)
        shown = f"{len(data)} bytes: {data[:700]!r}" + ("..." if len(data) > 700 else "")
    return (
        f"request {request.index} ({request.family}: {request.detail}) over {request.transport}"
        f", RPC {request.method.path if request.method else '-'} ({request.base.kind}), "
        f"credentials: {request.base.credential.kind}\n  {shown}\n"
        f"  again: python -m tests.server.fuzz_http --seed {seed} --only {request.index}"
    )


# ------------------------------------------------------------------------------ the run


@dataclass
class HttpReport(Report):
    families: collections.Counter[str] = field(default_factory=collections.Counter)
    content_types: collections.Counter[str] = field(default_factory=collections.Counter)
    closed_as_documented: collections.Counter[str] = field(default_factory=collections.Counter)
    """Requests the door closed without an answer, as it documents, by why."""
    static_served: int = 0
    """Answers 2xx with a file of the web app, to a path outside the API."""
    finding_kinds: collections.Counter[str] = field(default_factory=collections.Counter)
    """Findings by kind (numbers taken out); ``findings`` shows the first of each kind."""

    def summary(self) -> str:
        lines = super().summary().splitlines()
        lines[0] = lines[0].replace("fuzz:", "fuzz-http:", 1).replace(" methods", " RPCs", 1)
        families = ", ".join(f"{name} {n}" for name, n in self.families.most_common())
        types = ", ".join(
            f"{name or '(none)'} {n}" for name, n in self.content_types.most_common(12)
        )
        closed = ", ".join(f"{why} {n}" for why, n in self.closed_as_documented.most_common())
        lines[2:2] = [
            f"  families: {families}",
            f"  content types sent: {types}",
            f"  closed unanswered as documented: {closed or 'none'}",
            f"  web app files served to paths outside the API: {self.static_served}",
        ]
        if self.finding_count:
            at = next(i for i, line in enumerate(lines) if line.startswith("  findings: "))
            kinds = "; ".join(f"{kind} {n}" for kind, n in self.finding_kinds.most_common())
            lines[at] = (
                f"  findings: {self.finding_count} (by kind: {kinds}); the first of each kind:"
            )
        else:
            lines.append("  findings: none")
        return "\n".join(lines)


def _record(outcome: HttpOutcome, report: HttpReport, seed: int) -> None:
    request = outcome.request
    report.requests += 1
    report.codes[outcome.label] += 1
    for extra in outcome.extra:
        report.codes[extra.label] += 1
    report.families[request.family] += 1
    report.content_types[request.content_type.split(";")[0][:40]] += 1
    if request.method is not None:
        report.methods[request.method.name] += 1
    if outcome.status is None and request.may_close and request.transport != "grpc":
        report.closed_as_documented[request.may_close] += 1
    elif outcome.status is None and (
        _timed_out_on_a_stalled_server(outcome)
        or (request.transport == "grpc" and _body_timeout_answer(outcome.code, outcome.message))
    ):
        report.closed_as_documented["a header or body timeout, on a stalled server"] += 1
    for one in (outcome, *outcome.extra):
        if _outside_the_api(one.path) and one.status is not None and 200 <= one.status < 300:
            report.static_served += bool(one.body)
    found = findings_of(outcome)
    if found:
        report.finding_count += 1
        kinds = {re.sub(r"\d+", "N", f) for f in found}
        new = kinds - set(report.finding_kinds)
        report.finding_kinds.update(kinds)
        if new and len(report.findings) < MAX_SHOWN:
            message = outcome.message[:300] + ("..." if len(outcome.message) > 300 else "")
            report.findings.append(
                f"{'; '.join(found)}: {outcome.label} {message!r}\n" + describe(request, seed)
            )


def _mentions(haystack: bytes, forms: dict[str, bytes]) -> set[str]:
    flat = haystack.lower().replace(b"-", b"")
    return {g for g, form in forms.items() if form in flat}


async def _run(
    server: ServerProcess,
    pools: Pools,
    indexes: Sequence[int],
    seed: int,
    concurrency: int,
    warmup: int,
    report: HttpReport,
    progress: bool,
) -> set[str]:
    """Send the requests; the ids of real games named by a possibly accepted call that may
    change something."""
    port = int(server.http_url.rsplit(":", 1)[1])
    all_methods = methods()
    touched: set[str] = set()
    forms = {g: g.replace("-", "").encode() for g in pools.game_ids}
    n = len(indexes)
    stops = sorted({min(warmup, n), *(n * k // 10 for k in range(1, 11))} - {0})
    started = time.monotonic()
    async with grpc.aio.insecure_channel(f"{HOST}:{port}") as channel:

        async def worker(queue: collections.deque[int]) -> None:
            while queue:
                request = make_http_request(seed, queue.popleft(), all_methods, pools)
                outcome = await send(port, channel, request)
                _record(outcome, report, seed)
                method = request.method
                if outcome.accepted and method is not None and not method.read_only:
                    touched.update(_mentions(request.haystack, forms))

        done = 0
        for stop in stops:
            queue = collections.deque(indexes[done:stop])
            await asyncio.gather(*(worker(queue) for _ in range(concurrency)))
            done = stop
            report.rss_kb.append((done, rss_kb(server.proc.pid)))
            if progress:
                print(
                    f"fuzz-http: {done}/{n} requests, {time.monotonic() - started:.0f} s, server "
                    f"RSS {report.rss_kb[-1][1] // 1024} MiB, {report.finding_count} findings",
                    file=sys.stderr,
                    flush=True,
                )
        report.seconds = time.monotonic() - started
    return touched


def _http_healthy(server: ServerProcess) -> bool:
    try:
        with urllib.request.urlopen(f"{server.http_url}/healthz", timeout=30) as answer:
            return bool(json.loads(answer.read()).get("status") == "SERVING")
    except (OSError, ValueError):
        return False


def fuzz_http_server(
    server: ServerProcess,
    database_url: str,
    requests: int,
    seed: int,
    *,
    concurrency: int = 16,
    warmup: int | None = None,
    only: Sequence[int] | None = None,
    progress: bool = False,
) -> HttpReport:
    """Make the world on ``server`` (its database is ``database_url``; it listens for HTTP),
    fuzz its HTTP listener with ``requests`` requests of ``seed`` (or the requests ``only`` of
    them) and check what must hold; ``progress``: say on stderr how far it is every tenth."""
    report = HttpReport(seed)
    with grpc.insecure_channel(server.address) as channel:
        world: World = build_world(channel, database_url)
        before: dict[str, Snapshot] = {g: snapshot(channel, g) for g in world.games}
    report.rss_kb.append((0, rss_kb(server.proc.pid)))
    indexes = list(only) if only is not None else list(range(requests))
    report.warmup = warmup = len(indexes) // 2 if warmup is None else warmup
    touched = asyncio.run(
        _run(server, world.pools, indexes, seed, concurrency, warmup, report, progress)
    )
    report.healthy = (
        server.proc.poll() is None
        and healthy(server.address, sorted({m.service for m in methods()}))
        and _http_healthy(server)
    )
    if report.healthy:
        with grpc.insecure_channel(server.address) as channel:
            for game_id, state in world.games.items():
                if game_id in touched:
                    continue
                report.games_checked[state] += 1
                if snapshot(channel, game_id) != before[game_id]:
                    report.games_changed.append(f"{game_id} ({state})")
    report.log_errors = log_errors(server)
    return report


def start_http_server(log_path: Path, database_url: str) -> ServerProcess:
    """The server to fuzz, as ``fuzz_rpc.start_server`` makes it, listening for HTTP too
    (short header and body timeouts, a CORS origin)."""
    return ServerProcess.start(
        log_path,
        database_url,
        env=clean_env(MALLOC_ARENA_MAX="2"),
        http_listen=f"{HOST}:0",
        extra_args=[
            "--max-live-games",
            str(MAX_LIVE_GAMES),
            "--http-header-timeout",
            str(HEADER_TIMEOUT),
            "--http-body-timeout",
            str(BODY_TIMEOUT),
            "--http-cors-origin",
            CORS_ORIGIN,
        ],
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.server.fuzz_http", description=__doc__)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--only", type=int, nargs="+", metavar="I", help="send only these requests of the seed"
    )
    parser.add_argument(
        "--family", help="send only the requests (of the first --requests) of this family"
    )
    parser.add_argument(
        "--database-url",
        help="an empty database for the server (default: a new SQLite file in a temporary "
        "directory)",
    )
    args = parser.parse_args(argv)
    only = args.only
    if args.family:
        picked = range(args.requests) if only is None else only
        only = [i for i in picked if _family_of(args.seed, i) == args.family]
    with tempfile.TemporaryDirectory(prefix="boneyard-fuzz-http-") as tmp:
        url = args.database_url or f"sqlite:///{Path(tmp) / 'fuzz.db'}"
        with start_http_server(Path(tmp) / "server.log", url) as server:
            report = fuzz_http_server(
                server,
                url,
                args.requests,
                args.seed,
                concurrency=args.concurrency,
                only=only,
                progress=True,
            )
        print(report.summary(), flush=True)
        if report.failed():
            kept = Path(tempfile.gettempdir()) / f"boneyard-fuzz-http-{args.seed}.log"
            shutil.copyfile(Path(tmp) / "server.log", kept)
            print(f"  the server's log: {kept}", flush=True)
    sys.exit(1 if report.failed() else 0)


def _family_of(seed: int, index: int) -> str:
    rng = random.Random(f"http:{seed}:{index}")
    return rng.choices([f for f, _ in _FAMILIES], [w for _, w in _FAMILIES])[0]


if __name__ == "__main__":
    main()
