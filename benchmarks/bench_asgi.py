"""The HTTP listener's server: Hypercorn (as the server runs it) against Granian, the same app.

    make bench-asgi    # last lines: the Granian/Hypercorn ratios, scenario by scenario

Issue 34 asked for HTTP/2 on the HTTP listener "by an ASGI server that supports them (Hypercorn
or Granian: measure both ... and say why you chose)". This measures both, serving the same ASGI
application of a real Boneyard server:

- **Hypercorn**: ``boneyard.server.bootstrap.create_server`` with ``http_listen``, the listener
  exactly as ``boneyard-server`` runs it (``server/transport/http/listener.py``);
- **Hypercorn+nodelay** (only when asked, ``--servers hypercorn,hypercorn-nodelay,granian``):
  the same, with ``TCP_NODELAY`` set again on each connection the listener accepts. Its first
  runs found the listener without it (its socket made by ``socket.create_server``, protocol 0,
  and asyncio sets ``TCP_NODELAY`` only on sockets whose protocol is ``IPPROTO_TCP``): Nagle's
  algorithm held each small write that followed another until the client's delayed ACK, some
  40 ms, and every request on a connection after its first (over HTTP/2, every request) took
  40 ms and more. The listener sets it since; the row shows the two now measure the same;
- **Granian** (``granian.server.embed.Server``, interface ``asginl``: no lifespan, as the
  listener runs none) serving the very app object that ``create_server`` gave the listener,
  on the server's own event loop (the app's parts, the games in memory, the writer, the feed,
  live on that loop: Granian's worker processes, each importing the app, cannot serve one
  server's games). The Hypercorn listener of that process is stopped first.

Each runs in a process of its own (``multiprocessing``, spawned), on a copy of one database
made first (SQLite: one file copied by SQLite's backup, so both start from the same games:
``--in-play`` games a few actions into their first hand, ``--finished`` whole games played to
their end by random legal actions). Only one of them is under load at a time; the load comes
from a third process, connectrpc's Python client (``pyqwest``, a Rust HTTP client: little
client CPU), ``--clients`` concurrent clients each with its own connection, Connect protocol,
binary protobuf, no compression, over HTTP/1.1 and over h2c (HTTP/2 by prior knowledge).
The scenarios:

- ``view``: GetView of a game in play, with a seat's token;
- ``presets``: ListPresets (the smallest call: the HTTP path and the pipeline alone);
- ``play``: each client plays a game of its own (CreateGame, four TakeSeat, then GetView of
  the seat to act and SubmitAction of a random legal action, again and again, a new game
  when one ends): every call a request; the actions commit to the database;
- ``watch``: WatchGame of a finished game from ``--watch-messages`` before its end, read to
  its end (the server ends the stream): a request is one whole stream.

For each scenario and protocol, ``--rounds`` rounds, the two servers one after the other in an
order that alternates from round to round (after ``--warmup-rounds`` rounds not counted),
each measurement ``--warmup`` seconds of load not counted, then ``--duration`` seconds
counted. Printed, medians over the rounds: requests/s (answered in the window), p50/p99
latency as the client sees it, server CPU ms per request (utime + stime of the server process,
all its threads, from /proc/PID/stat), errors; then Granian / Hypercorn for each. The load
average is printed beside the figures: on a loaded machine take the ratios, not the rates.

Before the load, what the door needs, checked on both (``ok`` or what failed): Connect over
HTTP/1.1 and h2c, h2c by upgrade (``curl --http2``, where curl is), Connect GET, a Connect
server stream on each protocol, gRPC-Web, gRPC over h2c from a ``grpc`` channel (a unary
call, a refusal's status and details, which travel in HTTP/2 trailers, and a server stream),
the web app's files, the listener's cap of connections per address; then on a second pair of
servers with TLS (a certificate made here) and a 2 s header timeout: ALPN's choice of h2,
Connect and gRPC over TLS, and whether a half-sent request and an idle connection are closed.

Granian is not a dependency of Boneyard: ``pip install -e '.[bench]'`` (``make bench-asgi``
does it) installs the version this was written against.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import importlib.metadata
import ipaddress
import logging
import math
import multiprocessing
import os
import random
import shutil
import socket
import sqlite3
import ssl
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bench_server import cpu_seconds, quantile

SERVERS = ("hypercorn", "hypercorn-nodelay", "granian")
DEFAULT_SERVERS = ("hypercorn", "granian")
"""The listener as boneyard-server runs it; the same with TCP_NODELAY on each connection it
accepts (see the module's doc); Granian."""
SERVER_NAMES = {
    "hypercorn": "Hypercorn",
    "hypercorn-nodelay": "Hypercorn+nodelay",
    "granian": "Granian",
}
SCENARIOS = ("view", "presets", "play", "watch")
PROTOCOLS = ("h1", "h2")
PROTOCOL_NAMES = {"h1": "HTTP/1.1", "h2": "h2c"}
HEADLINE = ("view", "h1")
START_TIMEOUT = 120.0
RPC_TIMEOUT_MS = 30_000
CHECK_TIMEOUT = 15.0
CHECK_HEADER_TIMEOUT = 2.0
"""The TLS check servers' header timeout (seconds): a half-sent request should be closed
after it."""
CAP_CONNECTIONS = 70
"""Connections opened at once from one address to see whether the listener caps them (its
default cap is 64)."""
GRANIAN_PIN = "granian>=2.8,<2.9"


# --- the machine -------------------------------------------------------------------------


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- a certificate for the TLS checks ------------------------------------------------------


@dataclass(frozen=True)
class Tls:
    ca_pem: bytes
    cert: Path
    key: Path


def make_certificates(folder: Path) -> Tls:
    """A CA and a certificate it signed for 127.0.0.1 and localhost (a self-signed leaf will
    not do: rustls, under pyqwest, refuses a CA certificate used as a server's)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("bench-asgi CA"))
        .issuer_name(name("bench-asgi CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    key_path.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return Tls(ca.public_bytes(pem), cert_path, key_path)


# --- the database, made first ------------------------------------------------------------


@dataclass(frozen=True)
class World:
    """What the database holds for the load: games in play (id, a seat's token), finished
    games (id, their last version)."""

    in_play: list[tuple[str, str]]
    finished: list[tuple[str, int]]


def prepare(database: Path, in_play: int, finished: int, seed: int) -> World:
    """Make the database the servers copy: ``in_play`` Texas 42 games eight actions in,
    ``finished`` games played to their end, by random legal actions over the gRPC port of a
    server run here."""
    return asyncio.run(_prepare(f"sqlite:///{database}", in_play, finished, seed))


async def _prepare(url: str, in_play: int, finished: int, seed: int) -> World:
    import grpc

    from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc, rules_pb2, view_pb2
    from boneyard.server.bootstrap import create_server

    server, port, parts = await create_server(url, "127.0.0.1:0", sqlite_synchronous="NORMAL")
    rng = random.Random(seed)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)

            async def new_game() -> tuple[str, list[str]]:
                created = await stub.CreateGame(
                    game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset="texas42"))
                )
                tokens = []
                for seat in range(created.game.rules.players):
                    seated = await stub.TakeSeat(
                        game_service_pb2.TakeSeatRequest(
                            game_id=created.game_id, seat=seat, player_name=f"bench{seat}"
                        )
                    )
                    tokens.append(seated.seat_token)
                return created.game_id, tokens

            async def play(game_id: str, tokens: list[str], actions: int | None) -> int:
                """Random legal actions (``actions`` of them, or to the end); the version."""
                view = (await stub.GetView(game_service_pb2.GetViewRequest(game_id=game_id))).view
                done = 0
                while view.phase != view_pb2.PHASE_GAME_OVER and (
                    actions is None or done < actions
                ):
                    token = (("authorization", f"Bearer {tokens[view.turn]}"),)
                    view = (
                        await stub.GetView(
                            game_service_pb2.GetViewRequest(game_id=game_id), metadata=token
                        )
                    ).view
                    answer = await stub.SubmitAction(
                        game_service_pb2.SubmitActionRequest(
                            game_id=game_id,
                            expected_version=view.version,
                            request_id=str(uuid.uuid4()),
                            action=rng.choice(view.legal_actions),
                        ),
                        metadata=token,
                    )
                    view = answer.view
                    done += 1
                return int(view.version)

            world = World([], [])
            for _ in range(in_play):
                game_id, tokens = await new_game()
                await play(game_id, tokens, 8)
                world.in_play.append((game_id, tokens[0]))
            for _ in range(finished):
                game_id, tokens = await new_game()
                world.finished.append((game_id, await play(game_id, tokens, None)))
            return world
    finally:
        await parts.stop()
        await server.stop(None)
        parts.close()


def copy_database(source: Path, target: Path) -> None:
    """A copy by SQLite's backup (whole, whatever the journal holds)."""
    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)


# --- the server processes ----------------------------------------------------------------


@dataclass(frozen=True)
class ServerSpec:
    kind: str
    database: Path
    log: Path
    tls: Tls | None = None
    header_timeout: float | None = None
    """Seconds (None: the listener's default, and Granian given the same)."""
    sqlite_synchronous: str = "FULL"


def _serve(spec: ServerSpec, conn: Connection) -> None:
    """A server process: Boneyard with its HTTP app served by ``spec.kind``; sends the HTTP
    port, then serves until told "stop"."""
    log = os.open(spec.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)  # Granian's own log and the gRPC core's lines too
    os.dup2(log, 2)
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        asyncio.run(_serving(spec, conn))
    except BaseException as error:
        logging.getLogger("bench_asgi").exception("the %s server failed", spec.kind)
        with contextlib.suppress(Exception):
            conn.send(f"failed: {type(error).__name__}: {error}")
        raise


async def _serving(spec: ServerSpec, conn: Connection) -> None:
    from boneyard.server import bootstrap
    from boneyard.server.transport.http.listener import HttpLimits, HttpListener

    # The app the listener is given is the app served: the same object for both servers,
    # built by create_server as boneyard-server builds it.
    apps: list[Any] = []

    class Keeping(HttpListener):
        def __init__(self, app: Any, **kwargs: Any) -> None:
            apps.append(app)
            super().__init__(app, **kwargs)

        async def _connected(
            self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
        ) -> None:
            if spec.kind == "hypercorn-nodelay":
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await super()._connected(reader, writer)

    bootstrap.HttpListener = Keeping  # type: ignore[misc]
    limits = HttpLimits()
    if spec.header_timeout is not None:
        limits = HttpLimits(header_timeout=spec.header_timeout)
    tls = (str(spec.tls.cert), str(spec.tls.key)) if spec.tls else None
    server, _, parts = await bootstrap.create_server(
        f"sqlite:///{spec.database}",
        "127.0.0.1:0",
        http_listen="127.0.0.1:0",
        http_tls=tls if spec.kind != "granian" else None,
        http_limits=limits,
        sqlite_synchronous=spec.sqlite_synchronous,
    )
    granian: Any = None
    serving: asyncio.Task[None] | None = None
    try:
        port = parts.http_port
        if spec.kind == "granian":
            assert parts.http is not None
            await parts.http.stop()
            parts.http = None
            port = free_port()
            granian = _granian(apps[0], port, spec, limits.header_timeout)
            serving = asyncio.create_task(granian.serve())
            await _listening(port, serving)
        conn.send(port)
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # "stop"
    finally:
        if granian is not None and serving is not None:
            granian.signal_handler_interrupt()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(serving, 15)
        await parts.stop()
        await server.stop(None)
        parts.close()
    conn.send("stopped")


def _granian(app: Any, port: int, spec: ServerSpec, header_timeout: float) -> Any:
    """Granian's embedded server for ``app`` on ``port``: HTTP/1.1 and HTTP/2 (``auto``),
    the listener's header timeout, TLS from ``spec.tls``; its other settings its defaults."""
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings
    from granian.log import LogLevels
    from granian.server.embed import Server

    return Server(
        app,
        address="127.0.0.1",
        port=port,
        interface=Interfaces.ASGINL,
        http=HTTPModes.auto,
        http1_settings=HTTP1Settings(header_read_timeout=int(header_timeout * 1000)),
        log_level=LogLevels.warning,
        ssl_cert=spec.tls.cert if spec.tls else None,
        ssl_key=spec.tls.key if spec.tls else None,
    )


async def _listening(port: int, serving: asyncio.Task[None]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if serving.done():
            serving.result()
            raise RuntimeError("Granian stopped before it listened")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise TimeoutError(f"Granian did not listen on port {port}")


class ServerProcess:
    """A server process, started and stopped from here."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(spec, child), daemon=True)
        self._process.start()
        child.close()
        if not self._conn.poll(START_TIMEOUT):
            self.stop()
            raise RuntimeError(f"the {spec.kind} server did not start: {self.log_tail()}")
        answer = self._conn.recv()
        if isinstance(answer, str):  # "failed: ..."
            self.stop()
            raise RuntimeError(  # noqa: TRY004 - a server that failed, not a wrong type
                f"the {spec.kind} server did not start ({answer}):\n{self.log_tail()}"
            )
        self.port: int = answer

    @property
    def pid(self) -> int:
        assert self._process.pid is not None
        return self._process.pid

    @property
    def url(self) -> str:
        return f"{'https' if self.spec.tls else 'http'}://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self._process.is_alive():
            with contextlib.suppress(OSError):
                self._conn.send("stop")
                if self._conn.poll(30):
                    self._conn.recv()
            self._process.join(15)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(15)

    def log_tail(self) -> str:
        return self.spec.log.read_text(errors="replace")[-3000:]

    def errors(self) -> list[str]:
        """The log's ERROR lines and tracebacks."""
        text = self.spec.log.read_text(errors="replace")
        return [line for line in text.splitlines() if "ERROR" in line or "Traceback" in line]


# --- the client process ------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    scenario: str
    protocol: str
    url: str
    server_pid: int
    clients: int
    warmup: float
    duration: float
    world: World
    watch_messages: int
    seed: int


@dataclass
class Measured:
    requests: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    def quantile(self, q: float) -> float:
        return quantile(self.latencies, q)

    @property
    def cpu_ms(self) -> float:
        return self.server_cpu * 1000 / self.requests if self.requests else float("nan")


def _client_main(conn: Connection) -> None:
    """The load process: runs each job it is sent and sends back what it measured."""
    while True:
        job = conn.recv()
        if job is None:
            return
        kind, payload = job
        if kind == "measure":
            conn.send(asyncio.run(_measure(payload)))
        elif kind == "checks":
            conn.send(asyncio.run(_checks(*payload)))
        elif kind == "tls-checks":
            conn.send(asyncio.run(_tls_checks(*payload)))


class ClientProcess:
    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_client_main, args=(child,), daemon=True)
        self._process.start()
        child.close()

    def run(self, kind: str, payload: Any) -> Any:
        self._conn.send((kind, payload))
        return self._conn.recv()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(None)
        self._process.join(15)
        if self._process.is_alive():
            self._process.terminate()


def _http_client(protocol: str, opened: list[Any], ca_pem: bytes | None = None) -> Any:
    """A pyqwest client of its own (its own connections), for ``protocol`` (h1, h2: HTTP/2 by
    prior knowledge in cleartext; tls: ALPN's choice); its transport is added to ``opened``
    (``_close`` closes them)."""
    from pyqwest import Client, HTTPTransport, HTTPVersion

    version = {"h1": HTTPVersion.HTTP1, "h2": HTTPVersion.HTTP2}.get(protocol)
    transport = HTTPTransport(http_version=version, tls_ca_cert=ca_pem, timeout=30.0)
    opened.append(transport)
    return Client(transport)


async def _close(opened: list[Any]) -> None:
    """Close the transports (their pooled connections: a server stopped while one is open
    logs it)."""
    for transport in opened:
        with contextlib.suppress(Exception):
            await transport.__aexit__(None, None, None)


def _game_client(url: str, http: Any, grpc_web: bool = False) -> Any:
    from connectrpc.protocol import ProtocolType

    from boneyard.api.v1 import game_service_connect

    return game_service_connect.GameServiceClient(
        url,
        http_client=http,
        protocol=ProtocolType.GRPC_WEB if grpc_web else ProtocolType.CONNECT,
        send_compression=None,
        accept_compression=(),
        timeout_ms=RPC_TIMEOUT_MS,
    )


@dataclass
class _Window:
    """The counted window: requests completed in it count."""

    start: float = float("inf")
    end: float = float("inf")
    over: bool = False
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)

    def done(self, started: float) -> None:
        now = time.perf_counter()
        if self.start <= now <= self.end:
            self.latencies.append(now - started)

    def failed(self, error: BaseException) -> None:
        if time.perf_counter() >= self.start:
            code = getattr(error, "code", None)
            self.errors[f"{type(error).__name__} {getattr(code, 'name', '')}".strip()] += 1


async def _measure(job: Job) -> Measured:
    from connectrpc.errors import ConnectError

    from boneyard.api.v1 import game_service_pb2, rules_pb2, view_pb2

    window = _Window()
    transports: list[Any] = []

    async def timed(call: Awaitable[Any]) -> Any:
        """``call``'s answer, its latency counted (a coroutine does nothing until awaited)."""
        started = time.perf_counter()
        answer = await call
        window.done(started)
        return answer

    async def view(client: Any, n: int) -> None:
        game_id, token = job.world.in_play[n % len(job.world.in_play)]
        request = game_service_pb2.GetViewRequest(game_id=game_id)
        headers = {"authorization": f"Bearer {token}"}
        while not window.over:
            try:
                await timed(client.get_view(request, headers=headers))
            except (ConnectError, OSError, TimeoutError) as error:
                window.failed(error)

    async def presets(client: Any, n: int) -> None:
        request = game_service_pb2.ListPresetsRequest()
        while not window.over:
            try:
                await timed(client.list_presets(request))
            except (ConnectError, OSError, TimeoutError) as error:
                window.failed(error)

    async def play(client: Any, n: int) -> None:
        rng = random.Random(job.seed * 1000 + n)
        while not window.over:
            try:
                await play_one_game(client, rng)
            except (ConnectError, OSError, TimeoutError, IndexError) as error:
                window.failed(error)  # and a new game

    async def play_one_game(client: Any, rng: random.Random) -> None:
        """Create a game, seat four, play random legal actions until it ends or time is up."""
        created = await timed(
            client.create_game(
                game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset="texas42"))
            )
        )
        game_id = created.game_id
        tokens = []
        for seat in range(created.game.rules.players):
            request = game_service_pb2.TakeSeatRequest(
                game_id=game_id, seat=seat, player_name=f"bench{seat}"
            )
            seated = await timed(client.take_seat(request))
            tokens.append({"authorization": f"Bearer {seated.seat_token}"})
        view_request = game_service_pb2.GetViewRequest(game_id=game_id)
        turn = (await timed(client.get_view(view_request))).view.turn
        while not window.over:
            seen = await timed(client.get_view(view_request, headers=tokens[turn]))
            action = game_service_pb2.SubmitActionRequest(
                game_id=game_id,
                expected_version=seen.view.version,
                request_id=str(uuid.uuid4()),
                action=rng.choice(seen.view.legal_actions),
            )
            answer = await timed(client.submit_action(action, headers=tokens[turn]))
            if answer.view.phase == view_pb2.PHASE_GAME_OVER:
                return
            turn = answer.view.turn

    async def watch(client: Any, n: int) -> None:
        game_id, last = job.world.finished[n % len(job.world.finished)]
        request = game_service_pb2.WatchGameRequest(
            game_id=game_id, from_version=max(0, last - job.watch_messages)
        )
        while not window.over:
            started = time.perf_counter()
            try:
                version = 0
                async for message in client.watch_game(request):
                    version = message.version
                if version != last:
                    raise OSError(f"the stream ended at version {version}, not {last}")
                window.done(started)
            except (ConnectError, OSError, TimeoutError) as error:
                window.failed(error)

    loads = {"view": view, "presets": presets, "play": play, "watch": watch}
    clients = []
    for _ in range(job.clients):
        http = _http_client(job.protocol, transports)
        clients.append(_game_client(job.url, http))

    async def measuring() -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        def sample() -> tuple[float, float, float]:
            return time.perf_counter(), cpu_seconds(job.server_pid), time.process_time()

        await asyncio.sleep(job.warmup)
        first = sample()
        window.start, window.end = first[0], first[0] + job.duration
        await asyncio.sleep(job.duration)
        last = sample()
        window.end = last[0]
        window.over = True
        return first, last

    load = loads[job.scenario]
    players = [asyncio.ensure_future(load(c, n)) for n, c in enumerate(clients)]
    try:
        first, last = await measuring()
        await asyncio.gather(*players)
    finally:
        for player in players:
            player.cancel()
        await _close(transports)
    return Measured(
        requests=len(window.latencies),
        seconds=last[0] - first[0],
        latencies=window.latencies,
        server_cpu=last[1] - first[1],
        client_cpu=last[2] - first[2],
        errors=window.errors,
    )


# --- what the door needs -----------------------------------------------------------------


Check = tuple[str, bool, str]
"""A check's name, whether it passed, and what was seen."""


async def _check(name: str, probe: Awaitable[str]) -> Check:
    """``probe`` says what it saw, or raises: the check fails with the error's words."""
    try:
        return name, True, await asyncio.wait_for(probe, CHECK_TIMEOUT)
    except Exception as error:  # noqa: BLE001 - whatever failed is the check's finding
        details = getattr(error, "details", None)  # a grpc error's message
        words = str(details() if callable(details) else error)
        return name, False, f"{type(error).__name__}: {' '.join(words.split())[:160]}"


async def _checks(url: str, port: int, world: World, watch_messages: int) -> list[Check]:
    """What the door needs, on a cleartext server (see the module's doc)."""
    opened: list[Any] = []
    try:
        results = await _cleartext_checks(url, port, world, watch_messages, opened)
    finally:
        await _close(opened)
    # With the other checks' connections closed, so that the cap is all this check's.
    cap = f"per-address cap ({CAP_CONNECTIONS} connections)"
    return [*results, await _check(cap, _cap(port))]


async def _cleartext_checks(
    url: str, port: int, world: World, watch_messages: int, opened: list[Any]
) -> list[Check]:
    import grpc

    from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc
    from boneyard.server.transport.http.connect import web_app_dir

    game_id, last = world.finished[0]
    watch_request = game_service_pb2.WatchGameRequest(
        game_id=game_id, from_version=max(0, last - watch_messages)
    )
    missing_game = str(uuid.UUID(int=1))
    results: list[Check] = []

    def connect(protocol: str, grpc_web: bool = False) -> Any:
        return _game_client(url, _http_client(protocol, opened), grpc_web=grpc_web)

    async def presets(client: Any, use_get: bool = False) -> str:
        answer = await client.list_presets(game_service_pb2.ListPresetsRequest(), use_get=use_get)
        if not answer.presets:
            raise ValueError("no presets in the answer")
        return f"{len(answer.presets)} presets"

    async def stream(client: Any) -> str:
        versions = [m.version async for m in client.watch_game(watch_request)]
        if not versions or versions[-1] != last:
            raise ValueError(f"the stream ended at {versions[-1:]}, not version {last}")
        return f"{len(versions)} messages, to the end"

    for protocol in PROTOCOLS:
        results.append(
            await _check(f"Connect unary, {PROTOCOL_NAMES[protocol]}", presets(connect(protocol)))
        )
    results.append(await _check("h2c by upgrade (curl --http2)", _upgrade(url)))
    results.append(await _check("Connect GET of a read", presets(connect("h1"), True)))
    for protocol in PROTOCOLS:
        results.append(
            await _check(
                f"Connect server stream (WatchGame), {PROTOCOL_NAMES[protocol]}",
                stream(connect(protocol)),
            )
        )
    results.append(await _check("gRPC-Web unary, HTTP/1.1", presets(connect("h1", grpc_web=True))))

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)

        async def grpc_unary() -> str:
            answer = await stub.ListPresets(game_service_pb2.ListPresetsRequest(), timeout=10)
            return f"{len(answer.presets)} presets"

        async def grpc_refusal() -> str:
            try:
                await stub.GetView(
                    game_service_pb2.GetViewRequest(game_id=missing_game), timeout=10
                )
            except grpc.aio.AioRpcError as error:
                details = dict(error.trailing_metadata() or ())
                if error.code() != grpc.StatusCode.NOT_FOUND:
                    raise
                if "grpc-status-details-bin" not in details:
                    raise ValueError("NOT_FOUND, but no grpc-status-details-bin") from error
                return "NOT_FOUND with its details"
            raise ValueError("GetView of a missing game was answered")

        async def grpc_stream() -> str:
            versions = [m.version async for m in stub.WatchGame(watch_request, timeout=10)]
            if not versions or versions[-1] != last:
                raise ValueError(f"the stream ended at {versions[-1:]}, not version {last}")
            return f"{len(versions)} messages, to the end"

        results.append(await _check("gRPC over h2c (grpc channel): unary", grpc_unary()))
        results.append(await _check("gRPC over h2c: a refusal's status (trailers)", grpc_refusal()))
        results.append(await _check("gRPC over h2c: server stream", grpc_stream()))

    async def files() -> str:
        built = web_app_dir()
        if built is None:
            raise FileNotFoundError("the web app is not built (make web)")
        http = _http_client("h1", opened)
        pages = [("/", built / "index.html")]
        pages += [(f"/assets/{p.name}", p) for p in sorted((built / "assets").iterdir())[:2]]
        for path, file in pages:
            answer = await http.get(url + path)
            if answer.status != 200 or answer.content != file.read_bytes():
                raise ValueError(f"{path}: {answer.status}, {len(answer.content)} bytes")
        return f"{len(pages)} files whole"

    results.append(await _check("the web app's files", files()))
    return results


async def _upgrade(url: str) -> str:
    curl = shutil.which("curl")
    if curl is None:
        raise FileNotFoundError("no curl here: not checked")
    done = await asyncio.create_subprocess_exec(
        curl,
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_version}",
        "--http2",
        f"{url}/healthz",
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await done.communicate()
    version = out.decode().strip()
    if version != "2":
        raise ValueError(f"answered over HTTP/{version}: no upgrade")
    return "upgraded to HTTP/2"


async def _cap(port: int) -> str:
    """Open ``CAP_CONNECTIONS`` connections at once, then a request on each: how many are
    answered and how many were closed."""
    opened = []
    try:
        for _ in range(CAP_CONNECTIONS):
            opened.append(await asyncio.open_connection("127.0.0.1", port))
        await asyncio.sleep(0.5)  # (the listener closes those over the cap as they come)

        async def answered(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
            try:
                writer.write(b"GET /healthz HTTP/1.1\r\nhost: bench\r\n\r\n")
                await writer.drain()
                line = await asyncio.wait_for(reader.readline(), 10)
            except (OSError, TimeoutError):
                return False
            return line.startswith(b"HTTP/1.1 200")

        count = sum(await asyncio.gather(*(answered(r, w) for r, w in opened)))
    finally:
        for _, writer in opened:
            writer.close()
    if count == CAP_CONNECTIONS:
        raise ValueError(f"no cap: all {count} answered")
    return f"{count} answered, {CAP_CONNECTIONS - count} closed"


async def _tls_checks(url: str, port: int, ca_pem: bytes, header_timeout: float) -> list[Check]:
    """What the door needs over TLS, and its timeouts, on a TLS server whose header timeout
    is ``header_timeout`` seconds."""
    import grpc

    from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc

    context = ssl.create_default_context(cadata=ca_pem.decode())
    results: list[Check] = []

    async def alpn() -> str:
        context.set_alpn_protocols(["h2", "http/1.1"])
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
        chosen = writer.get_extra_info("ssl_object").selected_alpn_protocol()
        writer.close()
        if chosen != "h2":
            raise ValueError(f"ALPN chose {chosen}")
        return "h2"

    async def connect_tls() -> str:
        opened: list[Any] = []
        try:
            client = _game_client(url, _http_client("tls", opened, ca_pem))
            answer = await client.list_presets(game_service_pb2.ListPresetsRequest())
        finally:
            await _close(opened)
        return f"{len(answer.presets)} presets"

    async def grpc_tls() -> str:
        credentials = grpc.ssl_channel_credentials(root_certificates=ca_pem)
        async with grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            answer = await stub.ListPresets(game_service_pb2.ListPresetsRequest(), timeout=10)
        return f"{len(answer.presets)} presets"

    async def closed_after(sent: bytes) -> str:
        """Send ``sent`` over TLS (HTTP/1.1) and wait: closed after how long?"""
        plain = ssl.create_default_context(cadata=ca_pem.decode())
        plain.set_alpn_protocols(["http/1.1"])
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=plain)
        started = time.monotonic()
        writer.write(sent)
        await writer.drain()
        bound = header_timeout + 6
        try:
            await asyncio.wait_for(reader.read(), bound)
        except TimeoutError:
            raise ValueError(f"still open after {bound:g} s") from None
        except OSError:
            pass
        finally:
            writer.close()
        return f"closed after {time.monotonic() - started:.1f} s"

    results.append(await _check("TLS: ALPN picks h2", alpn()))
    results.append(await _check("Connect over TLS (ALPN)", connect_tls()))
    results.append(await _check("gRPC over TLS (grpc channel)", grpc_tls()))
    timeouts = await asyncio.gather(
        _check(
            f"a half-sent request closed ({header_timeout:g} s timeout)",
            closed_after(b"GET /healthz HT"),
        ),
        _check(f"an idle connection closed ({header_timeout:g} s timeout)", closed_after(b"")),
    )
    return results + list(timeouts)


# --- the rounds --------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    scenario: str
    protocol: str
    server: str
    rate: float
    p50: float
    p99: float
    cpu_ms: float
    errors: int


def summarize(scenario: str, protocol: str, server: str, runs: list[Measured]) -> Row:
    med = statistics.median
    return Row(
        scenario,
        protocol,
        server,
        rate=med(r.rate for r in runs),
        p50=med(r.quantile(0.5) * 1000 for r in runs),
        p99=med(r.quantile(0.99) * 1000 for r in runs),
        cpu_ms=med(r.cpu_ms for r in runs),
        errors=sum(sum(r.errors.values()) for r in runs),
    )


def print_checks(checks: dict[str, list[Check]]) -> None:
    kinds = list(checks)
    names = [name for name, _, _ in checks[kinds[0]]]
    width = max(len(n) for n in names) + 2
    print(f"  {'':<{width}}" + "".join(f"{SERVER_NAMES[k]:<36}" for k in kinds).rstrip())
    for i, name in enumerate(names):
        cells = []
        for kind in kinds:
            _, ok, seen = checks[kind][i]
            cells.append(("ok: " if ok else "FAILS: ") + seen)
        line = "".join(f"{cell[:34]:<36}" for cell in cells[:-1]) + cells[-1]
        print(f"  {name:<{width}}{line}")


def print_table(rows: list[Row]) -> None:
    print(
        f"  {'scenario':<9}{'protocol':<10}{'server':<19}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'CPU ms/req':>12}{'errors':>8}"
    )
    for r in rows:
        print(
            f"  {r.scenario:<9}{PROTOCOL_NAMES[r.protocol]:<10}{r.server:<19}{r.rate:>8.0f}"
            f"{r.p50:>9.2f}{r.p99:>9.2f}{r.cpu_ms:>12.3f}{r.errors:>8}"
        )


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b and not math.isnan(a) and not math.isnan(b) else "-"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="counted rounds (default %(default)s)"
    )
    parser.add_argument(
        "--warmup-rounds",
        type=int,
        default=1,
        help="rounds not counted first (default %(default)s)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=1.5,
        help="counted seconds of one measurement (default %(default)s)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.4,
        help="seconds of load before each measurement's window (default %(default)s)",
    )
    parser.add_argument(
        "--clients",
        type=int,
        default=8,
        help="concurrent clients, a connection each (default %(default)s; the listener takes "
        "64 connections from one address)",
    )
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="comma-separated (default %(default)s)"
    )
    parser.add_argument(
        "--protocols",
        default=",".join(PROTOCOLS),
        help="comma-separated: h1 (HTTP/1.1), h2 (h2c) (default %(default)s)",
    )
    parser.add_argument(
        "--in-play", type=int, default=8, help="games in play in the database (default %(default)s)"
    )
    parser.add_argument(
        "--finished",
        type=int,
        default=2,
        help="finished games in the database, for watch (default %(default)s)",
    )
    parser.add_argument(
        "--watch-messages",
        type=int,
        default=20,
        help="messages a watch stream reads, to a game's end (default %(default)s)",
    )
    parser.add_argument(
        "--sqlite-synchronous",
        default="FULL",
        choices=("FULL", "NORMAL"),
        help="the servers' SQLite synchronous (default %(default)s, as boneyard-server)",
    )
    parser.add_argument(
        "--servers",
        default=",".join(DEFAULT_SERVERS),
        help=f"comma-separated, among {','.join(SERVERS)} (default %(default)s; "
        "hypercorn-nodelay: the listener with TCP_NODELAY set again on each connection, "
        "which it sets itself since it was found missing)",
    )
    parser.add_argument("--no-checks", action="store_true", help="skip what the door needs")
    parser.add_argument("--logs", type=Path, help="keep the server processes' logs in this folder")
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args()
    scenarios = [s for s in args.scenarios.split(",") if s]
    kinds = [s for s in SERVERS if s in args.servers.split(",")]
    if not kinds or set(args.servers.split(",")) - set(SERVERS):
        parser.error(f"--servers among {SERVERS}")
    protocols = [p for p in args.protocols.split(",") if p]
    if set(scenarios) - set(SCENARIOS) or set(protocols) - set(PROTOCOLS):
        parser.error(f"--scenarios among {SCENARIOS}, --protocols among {PROTOCOLS}")
    if args.rounds < 1 or args.duration <= 0 or args.warmup < 0 or args.clients < 1:
        parser.error(
            "--rounds and --clients at least 1, --duration positive, --warmup not negative"
        )
    if args.in_play < 1 or args.finished < 1:
        parser.error("--in-play and --finished at least 1")
    try:
        granian_version = importlib.metadata.version("granian")
    except importlib.metadata.PackageNotFoundError:
        sys.exit(f"bench_asgi: Granian is not installed: pip install -e '.[bench]' ({GRANIAN_PIN})")
    hypercorn_version = importlib.metadata.version("hypercorn")

    print(
        f"ASGI servers for the HTTP listener: Hypercorn {hypercorn_version} (the listener as "
        f"boneyard-server runs it{', and with TCP_NODELAY' if 'hypercorn-nodelay' in kinds else ''})"
        f" against Granian {granian_version} (embedded, the same app object), a process each on "
        f"copies of one SQLite database (synchronous={args.sqlite_synchronous}); connectrpc's "
        f"client in another process, {args.clients} clients, Connect, binary, no compression; "
        f"{args.rounds} round(s) (+{args.warmup_rounds} not counted) of {args.warmup:g} s "
        f"warm-up + {args.duration:g} s counted, the servers' order alternating; "
        f"{load_average()}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-asgi-") as tmp_name:
        tmp = Path(tmp_name)
        started = time.monotonic()
        world = prepare(tmp / "made.db", args.in_play, args.finished, args.seed)
        for kind in kinds:
            copy_database(tmp / "made.db", tmp / f"{kind}.db")
        print(
            f"database made in {time.monotonic() - started:.1f} s: {len(world.in_play)} games in "
            f"play, {len(world.finished)} finished (versions "
            f"{', '.join(str(v) for _, v in world.finished)})",
            flush=True,
        )
        # TCP_NODELAY changes no behaviour: the checks need not run on both Hypercorns.
        checked = [k for k in kinds if not (k == "hypercorn-nodelay" and "hypercorn" in kinds)]
        client = ClientProcess()
        processes: list[ServerProcess] = []
        try:
            checks: dict[str, list[Check]] = {k: [] for k in checked}
            if not args.no_checks:
                checks = tls_checks(client, checked, tmp, processes, args)
            servers = {}
            for kind in kinds:
                spec = ServerSpec(
                    kind,
                    tmp / f"{kind}.db",
                    tmp / f"{kind}.log",
                    sqlite_synchronous=args.sqlite_synchronous,
                )
                servers[kind] = ServerProcess(spec)
                processes.append(servers[kind])
            if not args.no_checks:
                for kind in checked:
                    process = servers[kind]
                    job = (process.url, process.port, world, args.watch_messages)
                    checks[kind] = client.run("checks", job) + checks[kind]
                print(
                    "what the door needs (on the servers measured; then on the same with TLS "
                    f"and a {CHECK_HEADER_TIMEOUT:g} s header timeout):"
                )
                print_checks(checks)
            runs = run_rounds(client, servers, world, scenarios, protocols, args)
        finally:
            client.stop()
            for process in processes:
                process.stop()
        errors = {p.spec.log.name: p.errors() for p in processes if p.errors()}
        if args.logs is not None:
            args.logs.mkdir(parents=True, exist_ok=True)
            for process in processes:
                shutil.copy(process.spec.log, args.logs / process.spec.log.name)

    rows = [
        summarize(s, p, kind, runs[(s, p, kind)])
        for s in scenarios
        for p in protocols
        for kind in kinds
    ]
    print(f"medians over {args.rounds} round(s); {load_average()}")
    print_table(rows)
    for name, lines in errors.items():
        print(f"  {name}: {len(lines)} ERROR line(s), the first: {lines[0][:160]}")
    if any(name.startswith("granian") for name in errors):
        print("  (Granian's: one a gRPC check, refused by connectrpc for want of ASGI trailers)")
    print_ratios(rows, kinds, scenarios, protocols)


def tls_checks(
    client: ClientProcess,
    kinds: Sequence[str],
    tmp: Path,
    processes: list[ServerProcess],
    args: argparse.Namespace,
) -> dict[str, list[Check]]:
    """The TLS checks, on a server of each kind started for them (and stopped)."""
    tls = make_certificates(tmp)
    checks = {}
    for kind in kinds:
        spec = ServerSpec(
            kind,
            tmp / f"{kind}.db",
            tmp / f"{kind}-tls.log",
            tls,
            CHECK_HEADER_TIMEOUT,
            args.sqlite_synchronous,
        )
        process = ServerProcess(spec)
        processes.append(process)
        try:
            job = (process.url, process.port, tls.ca_pem, CHECK_HEADER_TIMEOUT)
            checks[kind] = client.run("tls-checks", job)
        finally:
            process.stop()
    return checks


def print_ratios(
    rows: list[Row], kinds: Sequence[str], scenarios: Sequence[str], protocols: Sequence[str]
) -> None:
    if "granian" not in kinds:
        return
    by = {(r.scenario, r.protocol, r.server): r for r in rows}
    for base in (k for k in kinds if k != "granian"):
        print(
            f"Granian / {SERVER_NAMES[base]} (req/s above 1: Granian answers more; latency and "
            "CPU below 1: Granian's are lower):"
        )
        for s in scenarios:
            for p in protocols:
                g, h = by[(s, p, "granian")], by[(s, p, base)]
                print(
                    f"  {s} {PROTOCOL_NAMES[p]}: req/s {ratio(g.rate, h.rate)}, p50 "
                    f"{ratio(g.p50, h.p50)}, p99 {ratio(g.p99, h.p99)}, CPU/request "
                    f"{ratio(g.cpu_ms, h.cpu_ms)}"
                )


def run_rounds(
    client: ClientProcess,
    servers: dict[str, ServerProcess],
    world: World,
    scenarios: Sequence[str],
    protocols: Sequence[str],
    args: argparse.Namespace,
) -> dict[tuple[str, str, str], list[Measured]]:
    """Warm-up rounds, then counted rounds; in each, every scenario and protocol on every
    server, the order reversed from one to the next."""
    kinds = list(servers)
    runs: dict[tuple[str, str, str], list[Measured]] = {
        (s, p, kind): [] for s in scenarios for p in protocols for kind in kinds
    }
    flip = False
    for n in range(args.warmup_rounds + args.rounds):
        counted = n >= args.warmup_rounds
        label = f"round {n - args.warmup_rounds + 1}/{args.rounds}" if counted else "warm-up round"
        print(f"{label}, {load_average()}", flush=True)
        for s in scenarios:
            for p in protocols:
                order = list(reversed(kinds)) if flip else kinds
                flip = not flip
                line = []
                for kind in order:
                    process = servers[kind]
                    duration = args.duration if counted else max(args.warmup, 0.2)
                    job = Job(
                        s,
                        p,
                        process.url,
                        process.pid,
                        args.clients,
                        args.warmup,
                        duration,
                        world,
                        args.watch_messages,
                        args.seed + n,
                    )
                    measured: Measured = client.run("measure", job)
                    if counted:
                        runs[(s, p, kind)].append(measured)
                    errors = f" errors {dict(measured.errors)}" if measured.errors else ""
                    line.append(
                        f"{kind} {measured.rate:.0f} req/s p99 "
                        f"{measured.quantile(0.99) * 1000:.1f} ms CPU {measured.cpu_ms:.3f} "
                        f"ms/req{errors}"
                    )
                print(f"  {s} {PROTOCOL_NAMES[p]}: " + "; ".join(line), flush=True)
    return runs


if __name__ == "__main__":
    main()
