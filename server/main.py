"""``boneyard-server``: the gRPC server on SQLite (default) or PostgreSQL.

    boneyard-server [--database-url URL] [--listen HOST:PORT] [--signing-key FILE]
                    [--shutdown-grace SECONDS]
    boneyard-server admin create-bot NAME | create-player NAME | accounts | revoke KEY_OR_NAME
                          | rotate NAME | signing-key

Also ``BONEYARD_DATABASE_URL`` and ``BONEYARD_LISTEN``; defaults ``sqlite:///boneyard.db``
(a file in the working directory) and ``127.0.0.1:50051``. The schema is migrated on start.

SIGTERM or SIGINT drains the server (``Boneyard.shut_down``) and exits 0; a second signal cuts
the drain's grace short.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from boneyard.api.v1 import (
    archive_pb2_grpc,
    challenges_pb2,
    challenges_pb2_grpc,
    competition_pb2,
    competition_pb2_grpc,
    game_service_pb2,
    game_service_pb2_grpc,
    ratings_pb2_grpc,
)
from boneyard.engine import ClockExpired, Event
from boneyard.server.archive.archive import MAX_VERIFY_SECONDS
from boneyard.server.archive.service import ARCHIVE_SERVICE_NAME, REQUEST_LIMITS, archive_servicer
from boneyard.server.archive.signing import load_signer
from boneyard.server.competition.bot_workers import DEFAULT_WORKERS, MAX_WORKERS
from boneyard.server.competition.challenge_service import AccountServicer, ChallengeServicer
from boneyard.server.competition.challenges import ChallengeBook
from boneyard.server.competition.house_bots import HouseBots
from boneyard.server.competition.lobby import Lobby, SeatWatch
from boneyard.server.competition.rating_service import RATING_SERVICE_NAME, RatingServicer
from boneyard.server.competition.ratings import Rater
from boneyard.server.competition.service import LobbyServicer, TournamentServicer
from boneyard.server.competition.sweeper import (
    DEFAULT_IDLE_AFTER,
    DEFAULT_OPEN_AFTER,
    Abandonment,
    Sweeper,
)
from boneyard.server.competition.tournaments import TournamentDirector
from boneyard.server.games.app import GameApp
from boneyard.server.games.clocks import ClockKeeper
from boneyard.server.games.feed import Feed
from boneyard.server.games.host import ABSENT_AFTER, MAX_LIVE_GAMES, GameHost, LiveGame
from boneyard.server.games.service import GameServicer
from boneyard.server.ops.admin import admin
from boneyard.server.ops.drain import Drain, Grace
from boneyard.server.ops.logs import LOG_FORMATS, configure
from boneyard.server.ops.metrics import Metrics, MetricsListener
from boneyard.server.ops.observing import CallObserver, ObservingInterceptor
from boneyard.server.ops.pg_listener import LOBBY_CHANNEL, Listener, announce
from boneyard.server.quotas import Quotas
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.db import SQLITE_SYNCHRONOUS, is_sqlite
from boneyard.server.store.repository import NOTIFY_CHANNEL
from boneyard.server.store.writer import Writer
from boneyard.server.transport.grpc import keepalive
from boneyard.server.transport.grpc.interceptors import (
    CredentialsInterceptor,
    DrainInterceptor,
    ErrorInterceptor,
    StreamQuotaInterceptor,
)
from boneyard.server.transport.grpc.reflection import enable_reflection
from boneyard.server.transport.http.connect import Services, http_app
from boneyard.server.transport.http.door import DEFAULT_BODY_TIMEOUT
from boneyard.server.transport.http.listener import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    HttpLimits,
    HttpListener,
)

__all__ = ["Boneyard", "create_server", "main"]

log = logging.getLogger("boneyard.server")

DEFAULT_DATABASE_URL = "sqlite:///boneyard.db"
DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_HTTP_LISTEN = "127.0.0.1:8080"
DEFAULT_SHUTDOWN_GRACE = 10.0
"""Seconds a shutdown may take to let the calls in flight finish and the streams end."""
MAX_SHUTDOWN_GRACE = 3600.0
SERVICE_NAME = game_service_pb2.DESCRIPTOR.services_by_name["GameService"].full_name
LOBBY_SERVICE_NAME = competition_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name
TOURNAMENT_SERVICE_NAME = competition_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name
CHALLENGE_SERVICE_NAME = challenges_pb2.DESCRIPTOR.services_by_name["ChallengeService"].full_name
ACCOUNT_SERVICE_NAME = challenges_pb2.DESCRIPTOR.services_by_name["AccountService"].full_name

TRANSPORT_LIMIT = 8 * 1024 * 1024
"""The bytes of a message gRPC reads at all: twice the largest request a method takes
(VerifyRecord's 4 MiB record), so that a request a little over its method's limit is read and
refused with the limit named (``ErrorInterceptor``), not cut off by the transport."""

_background: set[asyncio.Task[None]] = set()
"""The background tasks (clock keeper, director, lobby heartbeat, listener) of every server
this process runs."""


async def create_server(
    database_url: str,
    listen: str,
    *,
    max_live_games: int = MAX_LIVE_GAMES,
    sqlite_synchronous: str = "FULL",
    tls: tuple[bytes, bytes] | None = None,
    quotas: Quotas | None = None,
    abandonment: Abandonment | None = None,
    verify_seconds: float = MAX_VERIFY_SECONDS,
    signing_key: str | None = None,
    http_listen: str | None = None,
    http_cors_origins: Sequence[str] = (),
    http_tls: tuple[str, str] | None = None,
    house_bot_workers: int = DEFAULT_WORKERS,
    metrics_listen: str | None = None,
    http_limits: HttpLimits | None = None,
) -> tuple[grpc.aio.Server, int, Boneyard]:
    """A started server on ``listen`` (port 0 picks a free one); returns it, its port and the
    parts it runs (``Boneyard``). ``tls``: ``(certificate chain, private key)`` in PEM, to
    serve TLS only. ``verify_seconds``: the most time one VerifyRecord may take.
    ``signing_key``: a key file to sign records with, instead of the database's key.
    ``http_listen``: also serve Connect and gRPC-Web (and the web app) there
    (``Boneyard.http_port`` is its port), with TLS from the files ``http_tls``.
    ``house_bot_workers``: processes deciding
    for the house bots. ``metrics_listen``: serve Prometheus metrics there
    (``Boneyard.metrics_port`` is its port). ``http_limits``: the HTTP listener's timeouts and
    connections a client may hold."""
    http_limits = http_limits or HttpLimits()
    kwargs = {"sqlite_synchronous": sqlite_synchronous} if is_sqlite(database_url) else {}
    store = await asyncio.to_thread(EventStore.open, database_url, migrate=True, **kwargs)
    try:
        signer = await asyncio.to_thread(load_signer, store, signing_key)
    except BaseException:
        store.close()
        raise
    quotas = quotas or Quotas()
    parts = Boneyard(
        store,
        quotas,
        max_live_games=max_live_games,
        abandonment=abandonment or Abandonment(),
        house_bot_workers=house_bot_workers,
    )
    # gRPC sets SO_REUSEPORT by default: a second server on a busy port would start "fine" and
    # take a share of the connections. A port in use must be an error.
    server = grpc.aio.server(
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", TRANSPORT_LIMIT),
            *keepalive.SERVER_OPTIONS,
        ],
        interceptors=[
            ObservingInterceptor(parts.observer),  # outermost: it sees the status answered
            ErrorInterceptor(REQUEST_LIMITS),
            DrainInterceptor(parts.drain),
            CredentialsInterceptor(),
            StreamQuotaInterceptor(quotas),
        ],
    )
    game_service_pb2_grpc.add_GameServiceServicer_to_server(parts.games, server)
    lobby = LobbyServicer(parts.app, parts.lobby, parts.seats, parts.games, quotas)
    competition_pb2_grpc.add_LobbyServiceServicer_to_server(lobby, server)
    tournaments = TournamentServicer(parts.app, parts.director)
    competition_pb2_grpc.add_TournamentServiceServicer_to_server(tournaments, server)
    archive = archive_servicer(store, signer, verify_seconds=verify_seconds)
    archive_pb2_grpc.add_ArchiveServiceServicer_to_server(archive, server)
    challenges = ChallengeServicer(parts.app, parts.challenges)
    challenges_pb2_grpc.add_ChallengeServiceServicer_to_server(challenges, server)
    accounts = AccountServicer(parts.app, parts.challenges, parts.seats)
    challenges_pb2_grpc.add_AccountServiceServicer_to_server(accounts, server)
    archive_service = ARCHIVE_SERVICE_NAME
    ratings = RatingServicer(store)
    ratings_pb2_grpc.add_RatingServiceServicer_to_server(ratings, server)
    health_servicer = parts.health
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    services = (
        SERVICE_NAME,
        LOBBY_SERVICE_NAME,
        TOURNAMENT_SERVICE_NAME,
        archive_service,
        CHALLENGE_SERVICE_NAME,
        ACCOUNT_SERVICE_NAME,
        RATING_SERVICE_NAME,
    )
    enable_reflection((*services, health.SERVICE_NAME), server)
    try:
        if tls is None:
            port = server.add_insecure_port(listen)
        else:
            chain, key = tls
            port = server.add_secure_port(listen, grpc.ssl_server_credentials([(key, chain)]))
    except RuntimeError as e:  # grpc >= 1.60 raises instead of returning 0
        parts.close()
        raise OSError(f"cannot listen on {listen} (in use, or not an address of this host)") from e
    if port == 0:
        parts.close()
        raise OSError(f"cannot listen on {listen}")
    await parts.start()
    await server.start()
    if http_listen:
        services_over_http = Services(
            parts.games, lobby, tournaments, archive, health_servicer, challenges, accounts, ratings
        )
        app = http_app(
            services_over_http,
            quotas,
            cors_origins=http_cors_origins,
            observer=parts.observer,
            drain=parts.drain,
            request_limits=REQUEST_LIMITS,
            body_timeout=http_limits.body_timeout,
        )
        parts.http = HttpListener(app, tls=http_tls, limits=http_limits)
        host, _, http_port = http_listen.rpartition(":")
        try:
            parts.http_port = await parts.http.start(host, int(http_port))
        except OSError as e:
            await server.stop(grace=None)
            await parts.stop()
            parts.close()
            raise OSError(f"cannot listen for HTTP on {http_listen}: {e}") from e
    if metrics_listen:
        parts.metrics_listener = MetricsListener(parts.metrics)
        host, _, metrics_port = metrics_listen.rpartition(":")
        try:
            parts.metrics_port = parts.metrics_listener.start(host, int(metrics_port))
        except OSError as e:
            await server.stop(grace=None)
            await parts.stop()
            parts.close()
            raise OSError(f"cannot listen for metrics on {metrics_listen}: {e}") from e
    for name in ("", *services):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port, parts


class Boneyard:
    """The parts of one server process around its store: the application layer, the games in
    memory with their writer and feed, the lobby, the clock keeper, the director and the house
    bots, and (on PostgreSQL) the listener for the other processes' changes."""

    def __init__(
        self,
        store: EventStore,
        quotas: Quotas,
        *,
        max_live_games: int = MAX_LIVE_GAMES,
        abandonment: Abandonment | None = None,
        house_bot_workers: int = DEFAULT_WORKERS,
    ) -> None:
        self.store = store
        self.metrics = Metrics()
        self.observer = CallObserver(self.metrics)
        postgresql = store.engine.dialect.name == "postgresql"
        self.writer = Writer(
            store.engine,
            notify_channel=NOTIFY_CHANNEL if postgresql else None,
            on_batch=self.metrics.batch,
        )
        self.feed = Feed()
        self.app = GameApp(store)
        abandonment = abandonment or Abandonment()
        self.host = GameHost(
            store,
            self.writer,
            publish=self.feed.publish,
            max_games=max_live_games,
            absent_after=abandonment.absent_after,
        )
        announce_lobby = announce_seats = None
        if postgresql:
            engine = store.engine

            def announce_lobby(digest: str) -> None:
                announce(engine, LOBBY_CHANNEL, f"k:{digest}")

            def announce_seats(account_id: str) -> None:
                announce(engine, LOBBY_CHANNEL, f"a:{account_id}")

        self.lobby = Lobby(self.app, announce_lobby)
        self.seats = SeatWatch(announce_seats)
        self.app.on_created = self._created
        self.challenges = ChallengeBook(self.app, self.seats.reserved, quotas=quotas)
        self.games = GameServicer(self.app, self.host, self.feed, quotas)
        self.director = TournamentDirector(self.app)
        self.host.on_commit(self.director.game_committed)
        self.rater = Rater(store, on_rated=self.seats.reserved)
        self.host.on_commit(self.rater.game_committed)
        self.director.on_published = self.rater.wake_threadsafe
        self.host.on_commit(self._count_actions)
        self.host.on_commit(self._tell_game_over)
        self.quotas = quotas
        self.host.on_commit(self._count_served)
        self.clocks = ClockKeeper(self.host, self.app.competition, self.metrics.timed_out)
        self.house = HouseBots(self.host, store, house_bot_workers)
        self.sweeper = Sweeper(self.host, store, abandonment)
        self.listener = (
            Listener(
                store.engine.url,
                on_game=self._changed_elsewhere,
                on_lobby=self._lobby_changed,
                on_reconnect=self._reconnected,
            )
            if postgresql
            else None
        )
        self.metrics.watch(
            games_by_status=self.competition.games_by_status,
            seeks_waiting=self.lobby.waiting_here,
            tournament_games_in_play=self.competition.tournament_games_in_play,
        )
        self.metrics_listener: MetricsListener | None = None
        self.metrics_port: int | None = None
        """The metrics listener's port, when there is one."""
        self.drain = Drain()
        self.health = health.aio.HealthServicer()
        """The health service of every door (the HTTP listener's ``/healthz`` asks it too)."""
        self.http: HttpListener | None = None
        self.http_port: int | None = None
        """The HTTP listener's port, when there is one."""
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def competition(self) -> CompetitionStore:
        return self.app.competition

    async def start(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self.lobby.attach(loop)
        self.seats.attach(loop)
        jobs = [
            self.clocks.run(),
            self.director.run(),
            self.rater.run(),
            self.lobby.keep_alive(),
            self.sweeper.run(),
            self.house.run(),
            self.challenges.run(),
        ]
        if self.listener is not None:
            jobs.append(self.listener.run())
        for job in jobs:
            task = loop.create_task(job)
            self._tasks.append(task)
            _background.add(task)
            task.add_done_callback(_background.discard)
        if self.listener is not None:
            await asyncio.wait_for(self.listener.ready.wait(), 30)

    async def stop(self) -> None:
        """Stop the HTTP listener and the background work at once (not draining)."""
        if self.http is not None:
            await self.http.stop()
        await self._stop_metrics()
        await self._stop_background()

    async def _stop_metrics(self) -> None:
        if self.metrics_listener is not None:
            await asyncio.to_thread(self.metrics_listener.stop)
            self.metrics_listener = None

    async def _stop_background(self) -> None:
        """Stop the clock keeper, director, lobby heartbeat, sweeper, challenge expiry, listener,
        and the house
        bots with their worker processes (an action they have in flight still commits)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        await self.house.stop()

    async def shut_down(self, server: grpc.aio.Server, grace: Grace) -> None:
        """Drain, within ``grace``: health says NOT_SERVING (every service) and new calls are
        refused UNAVAILABLE at once, the background work stops, the calls in flight finish
        (their actions commit), the streams end UNAVAILABLE, the listeners close. What is left
        when the grace runs out is cut, with a WARNING naming it. Then ``close``."""
        log.info(
            "shutting down: NOT_SERVING, refusing new calls; waiting up to %.1f s for %s and "
            "ending %s",
            grace.remaining(),
            _described(self.drain.calls(), "call") or "no call in flight",
            _described(self.drain.streams(), "stream") or "no stream",
        )
        self.drain.begin()
        await self.health.enter_graceful_shutdown()
        await self._stop_background()
        if not await self.drain.calls_finished(grace):
            log.warning(
                "the shutdown grace ran out with %s in flight: cut (answered UNAVAILABLE)",
                _described(self.drain.calls(), "call"),
            )
            self.drain.cut_calls()
            await self.drain.calls_finished(Grace(_SETTLE))
        if not await self.drain.end_streams(grace if grace.remaining() else Grace(_SETTLE)):
            log.warning(
                "%s did not end when told to: closed with the server",
                _described(self.drain.streams(), "stream"),
            )
        if self.http is not None and not await self.http.stop(
            grace if grace.remaining() else Grace(_SETTLE)
        ):
            log.warning("the HTTP listener's connections did not close in time: dropped")
        await server.stop(grace=max(grace.remaining(), _SETTLE))
        await self._stop_metrics()  # scraped until the end: the drain shows in it
        self.close()
        log.info("stopped")

    def close(self) -> None:
        """Stop the house bots' workers, commit what the writer holds, close the database."""
        self.house.close()
        self.writer.close()
        self.store.close()

    def _count_actions(self, game: LiveGame, events: tuple[Event, ...]) -> None:
        if events:  # taking or leaving a seat commits no event
            self.metrics.committed()

    def _count_served(self, game: LiveGame, events: tuple[Event, ...]) -> None:
        """What the server played for a client (a timeout, a house bot's action) counts
        against the quota of whoever created the game (``Quotas.served_action``)."""
        if events:
            first = events[0]
            if type(first) is ClockExpired or getattr(first, "seat", None) in game.house:
                self.quotas.served_action(game.id)
        if game.over:
            self.quotas.game_over(game.id)

    def _tell_game_over(self, game: LiveGame, events: tuple[Event, ...]) -> None:
        """The commit that ended a game wrote its accounts' game_finished events (the writer,
        ``account_events``): wake their streams, here and in the other processes."""
        if events and game.over and game.accounts:
            self.seats.reserved(list(game.accounts))

    def _created(self, game: LiveGame, accounts: list[str]) -> None:
        """A game was made here (from the creating thread)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._adopt, game)
        if accounts:
            self.seats.reserved(accounts)

    def _adopt(self, game: LiveGame) -> None:
        self.host.adopt(game)
        if game.clock is not None:
            self.clocks.follow(game.id)
        self.house.follow(game)  # a table filled at creation starts with its house bots

    def _changed_elsewhere(self, game_id: str, version: int) -> None:
        held = self.host.held_version(game_id)
        self.host.refresh(game_id, version)
        self.clocks.changed_elsewhere(game_id)
        self.house.changed_elsewhere(game_id, version, held)

    def _lobby_changed(self, payload: str) -> None:
        kind, _, value = payload.partition(":")
        if kind == "k":
            self.lobby.changed(value)
        elif kind == "a":
            self.seats.changed(value)
        elif kind == "s":
            self.host.evict(value)  # a seat was left: the copy here still seats its player
        elif kind == "r":
            # An account's key was revoked or rotated (boneyard-server admin): its streams
            # look again, find the key refused and end UNAUTHENTICATED. Seeks are not kept by
            # account, so every seek here looks (revocations are rare).
            self.seats.changed(value)
            self.lobby.changed_all()

    def _reconnected(self) -> None:
        self.host.evict_all()
        self.feed.publish_all()
        self.lobby.changed_all()
        self.seats.changed_all()  # an account event may have been written meanwhile
        self.director.wake()
        self.rater.wake()
        self.house.rescan()


_SETTLE = 0.5
"""Seconds that what was cut (or told to end) when the grace ran out has to settle."""


def _described(counts: Counter[str], what: str) -> str:
    """``3 calls (SubmitAction 2, GetView 1)``; empty for none."""
    total = sum(counts.values())
    if not total:
        return ""
    methods = ", ".join(f"{m.rsplit('/', 1)[-1]} {n}" for m, n in counts.most_common())
    return f"{total} {what}{'s' if total > 1 else ''} ({methods})"


class StartupError(Exception):
    """The server could not start (database unreachable or not migratable, port unusable)."""


async def _serve(args: argparse.Namespace) -> None:
    database_url, listen = args.database_url, args.listen
    try:
        server, port, app = await create_server(
            database_url,
            listen,
            max_live_games=args.max_live_games,
            sqlite_synchronous=args.sqlite_synchronous,
            tls=_tls_files(args.tls_cert, args.tls_key),
            signing_key=args.signing_key,
            quotas=Quotas(
                games_per_minute=args.max_games_per_minute,
                streams_per_peer=args.max_streams_per_client,
                seeks_per_account=args.max_seeks_per_account,
                open_games=args.open_games,
                served_games=args.max_served_games,
                served_actions_per_minute=args.max_served_actions_per_minute,
                challenges_per_minute=args.max_challenges_per_minute,
            ),
            abandonment=Abandonment(
                idle_after=args.abandon_idle_after,
                open_after=args.expire_open_after,
                absent_after=args.abandon_absent_after,
            ),
            http_listen=args.http_listen or None,
            http_cors_origins=args.http_cors_origin,
            http_tls=(args.tls_cert, args.tls_key) if args.tls_cert and args.tls_key else None,
            house_bot_workers=args.house_bot_workers,
            metrics_listen=args.metrics_listen or None,
            http_limits=HttpLimits(
                header_timeout=args.http_header_timeout,
                body_timeout=args.http_body_timeout,
                max_connections_per_client=args.http_max_connections_per_client,
            ),
        )
    except Exception as e:
        log.debug("start failed", exc_info=True)
        raise StartupError(
            f"cannot start with database {_redacted(database_url)} on {listen}: {e}"
        ) from e
    host = listen.rsplit(":", 1)[0]
    log.info("boneyard-server listening on %s:%d, database %s", host, port, _redacted(database_url))
    print(f"boneyard-server listening on {host}:{port}", flush=True)
    if app.http_port is not None:
        http_host = args.http_listen.rsplit(":", 1)[0]
        scheme = "https" if args.tls_cert else "http"
        log.info("HTTP (Connect, gRPC-Web, web app) on %s://%s:%d", scheme, http_host, app.http_port)
        print(f"boneyard-server serving HTTP on {scheme}://{http_host}:{app.http_port}", flush=True)
    if app.metrics_port is not None:
        metrics_host = args.metrics_listen.rsplit(":", 1)[0]
        log.info("Prometheus metrics on http://%s:%d/metrics", metrics_host, app.metrics_port)
        print(
            f"boneyard-server serving metrics on http://{metrics_host}:{app.metrics_port}/metrics",
            flush=True,
        )
    stop = asyncio.Event()
    grace: Grace | None = None

    def signalled(sig: signal.Signals) -> None:
        nonlocal grace
        if grace is None:
            log.info("%s: shutting down", sig.name)
            grace = Grace(args.shutdown_grace)
            stop.set()
        elif not grace.hurried:
            log.warning("%s again: cutting the shutdown grace short", sig.name)
            grace.hurry()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, signalled, sig)
    await stop.wait()
    assert grace is not None
    await app.shut_down(server, grace)


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparsable database URL>"


def _tls_files(cert: str | None, key: str | None) -> tuple[bytes, bytes] | None:
    """The PEM certificate chain and key of ``--tls-cert``/``--tls-key`` (both or neither)."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise StartupError("--tls-cert and --tls-key go together")
    try:
        with open(cert, "rb") as chain, open(key, "rb") as private:
            return chain.read(), private.read()
    except OSError as e:
        raise StartupError(f"cannot read the TLS files: {e}") from e


def _boolean(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not true or false")


def _quota(text: str) -> int:
    """argparse type of a quota: 1 .. 1,000,000."""
    if not text.isdigit() or not 1 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a limit from 1 to 1000000")
    return int(text)


def _span(text: str) -> timedelta | None:
    """argparse type of a time a game may sit untouched: seconds, 1 .. 31,536,000 (a year);
    0 for never."""
    if not text.isdigit() or not 0 <= int(text) <= 31_536_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to 31536000")
    return timedelta(seconds=int(text)) if int(text) else None


def _http_listen_address(text: str) -> str:
    """argparse type of --http-listen and --metrics-listen: like --listen, or '' for no
    listener."""
    return _listen_address(text) if text else ""


def _timeout(text: str) -> float:
    """argparse type of the HTTP listener's timeouts: seconds, 0.1 .. 3600."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0.1 <= seconds <= 3600:  # (NaN too)
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0.1 to 3600")
    return seconds


def _grace(text: str) -> float:
    """argparse type of --shutdown-grace: seconds, 0 .. MAX_SHUTDOWN_GRACE."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= MAX_SHUTDOWN_GRACE:  # (NaN too)
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds from 0 to {MAX_SHUTDOWN_GRACE:g}"
        )
    return seconds


def _live_games(text: str) -> int:
    """argparse type of --max-live-games: 1 .. 1,000,000."""
    if not text.isdigit() or not 1 <= int(text) <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of games from 1 to 1000000")
    return int(text)


def _workers(text: str) -> int:
    """argparse type of --house-bot-workers: 1 .. MAX_WORKERS."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of processes from 1 to {MAX_WORKERS}"
        )
    return int(text)


def _listen_address(text: str) -> str:
    """argparse type of --listen: ``HOST:PORT`` (``[V6ADDR]:PORT``), port 0..65535."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not HOST:PORT with a port 0..65535 (0: any free port)"
        )
    return text


def main(argv: list[str] | None = None) -> None:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["admin"]:  # the operator's commands on the server's database
        admin.main(args=args_in[1:], prog_name="boneyard-server admin")
        return
    parser = argparse.ArgumentParser(prog="boneyard-server", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BONEYARD_DATABASE_URL", DEFAULT_DATABASE_URL),
        help="SQLAlchemy URL: sqlite:///FILE or postgresql+psycopg://USER@HOST/DB "
        "(env BONEYARD_DATABASE_URL; default %(default)s)",
    )
    parser.add_argument(
        "--listen",
        type=_listen_address,
        default=os.environ.get("BONEYARD_LISTEN", DEFAULT_LISTEN),
        help="HOST:PORT to serve gRPC on (env BONEYARD_LISTEN; default %(default)s)",
    )
    parser.add_argument(
        "--http-listen",
        type=_http_listen_address,
        default=os.environ.get("BONEYARD_HTTP_LISTEN", DEFAULT_HTTP_LISTEN),
        metavar="HOST:PORT",
        help="HOST:PORT to serve the same services over Connect and gRPC-Web, and the web app, "
        "on; '' for none (env BONEYARD_HTTP_LISTEN; default %(default)s)",
    )
    parser.add_argument(
        "--metrics-listen",
        type=_http_listen_address,
        default=os.environ.get("BONEYARD_METRICS_LISTEN", ""),
        metavar="HOST:PORT",
        help="HOST:PORT to serve Prometheus metrics on, at /metrics (plain HTTP; keep it off "
        "the public network); '' for none (env BONEYARD_METRICS_LISTEN; default none)",
    )
    parser.add_argument(
        "--http-header-timeout",
        type=_timeout,
        default=_timeout(
            os.environ.get("BONEYARD_HTTP_HEADER_TIMEOUT", str(DEFAULT_HEADER_TIMEOUT))
        ),
        metavar="SECONDS",
        help="an HTTP connection with no request under way (its headers not all sent, or idle "
        "between requests) is closed after this long; a TLS handshake has as long "
        "(env BONEYARD_HTTP_HEADER_TIMEOUT; default %(default)g)",
    )
    parser.add_argument(
        "--http-body-timeout",
        type=_timeout,
        default=_timeout(os.environ.get("BONEYARD_HTTP_BODY_TIMEOUT", str(DEFAULT_BODY_TIMEOUT))),
        metavar="SECONDS",
        help="an HTTP request's body must arrive within this long of its headers, else it is "
        "refused (408, deadline_exceeded) and its connection closed "
        "(env BONEYARD_HTTP_BODY_TIMEOUT; default %(default)g)",
    )
    parser.add_argument(
        "--http-max-connections-per-client",
        type=_quota,
        default=_quota(
            os.environ.get(
                "BONEYARD_HTTP_MAX_CONNECTIONS_PER_CLIENT", str(DEFAULT_MAX_CONNECTIONS_PER_CLIENT)
            )
        ),
        metavar="N",
        help="HTTP connections one client address may hold open at once; more are closed as "
        "they come (env BONEYARD_HTTP_MAX_CONNECTIONS_PER_CLIENT; default %(default)s)",
    )
    parser.add_argument(
        "--http-cors-origin",
        action="append",
        default=[o for o in os.environ.get("BONEYARD_HTTP_CORS_ORIGINS", "").split(",") if o],
        metavar="ORIGIN",
        help="a web origin (https://example.org) whose pages may call the HTTP listener; "
        "repeat for more, '*' for any (env BONEYARD_HTTP_CORS_ORIGINS, comma-separated; "
        "default: none, only pages the listener serves itself)",
    )
    parser.add_argument(
        "--tls-cert",
        default=os.environ.get("BONEYARD_TLS_CERT"),
        metavar="FILE",
        help="PEM certificate chain: serve gRPC over TLS only (with --tls-key; env "
        "BONEYARD_TLS_CERT). Without TLS, seat tokens and API keys travel in the clear.",
    )
    parser.add_argument(
        "--tls-key",
        default=os.environ.get("BONEYARD_TLS_KEY"),
        metavar="FILE",
        help="PEM private key of --tls-cert (env BONEYARD_TLS_KEY)",
    )
    parser.add_argument(
        "--signing-key",
        default=os.environ.get("BONEYARD_SIGNING_KEY"),
        metavar="FILE",
        help="Ed25519 private key to sign records with: PEM (openssl genpkey -algorithm "
        "ed25519) or 32 raw bytes (env BONEYARD_SIGNING_KEY). Without it the key pair is made "
        "on first start and kept in the database, shared by every process on it.",
    )
    parser.add_argument(
        "--open-games",
        type=_boolean,
        default=_boolean(os.environ.get("BONEYARD_OPEN_GAMES", "true")),
        metavar="true|false",
        help="whether anybody may create games; false: only accounts (an API key) may "
        "(env BONEYARD_OPEN_GAMES; default true)",
    )
    for flag, env, default, what in (
        (
            "--max-games-per-minute",
            "BONEYARD_MAX_GAMES_PER_MINUTE",
            600,
            "games one client address, and one account, may create in a minute",
        ),
        (
            "--max-streams-per-client",
            "BONEYARD_MAX_STREAMS_PER_CLIENT",
            5000,
            "streams (WatchGame, Seek, WatchSeats) one client address may hold open",
        ),
        (
            "--max-seeks-per-account",
            "BONEYARD_MAX_SEEKS_PER_ACCOUNT",
            8,
            "seeks one account may hold open",
        ),
        (
            "--max-served-games",
            "BONEYARD_MAX_SERVED_GAMES",
            16,
            (
                "games with house bots or a clock, not yet over, one client address (and one "
                "account) may have created"
            ),
        ),
        (
            "--max-served-actions-per-minute",
            "BONEYARD_MAX_SERVED_ACTIONS_PER_MINUTE",
            1200,
            (
                "actions the server played (house bots, timeouts) in the games of one client "
                "address (and one account) in a minute, beyond which it may create no more "
                "such games"
            ),
        ),
        (
            "--max-challenges-per-minute",
            "BONEYARD_MAX_CHALLENGES_PER_MINUTE",
            10,
            "challenges one account may make in a minute",
        ),
    ):
        parser.add_argument(
            flag,
            type=_quota,
            default=_quota(os.environ.get(env, str(default))),
            help=f"{what}; more is RESOURCE_EXHAUSTED (env {env}; default %(default)s)",
        )
    for flag, env, default, what in (
        (
            "--abandon-idle-after",
            "BONEYARD_ABANDON_IDLE_AFTER",
            DEFAULT_IDLE_AFTER,
            (
                "seconds a game in play without a clock may go without an action before it "
                "ends as abandoned, with no winner"
            ),
        ),
        (
            "--expire-open-after",
            "BONEYARD_EXPIRE_OPEN_AFTER",
            DEFAULT_OPEN_AFTER,
            (
                "seconds an open game may go without a seat taken or left before it ends as "
                "abandoned"
            ),
        ),
    ):
        parser.add_argument(
            flag,
            type=_span,
            default=_span(os.environ.get(env, str(int(default.total_seconds())))),
            help=f"{what}; 0 for never (env {env}; default {int(default.total_seconds())})",
        )
    parser.add_argument(
        "--abandon-absent-after",
        type=_quota,
        default=_quota(os.environ.get("BONEYARD_ABANDON_ABSENT_AFTER", str(ABSENT_AFTER))),
        metavar="N",
        help="timeouts in a row of every seat that is not a house bot's after which a game "
        "with a clock ends as abandoned, with no winner: nobody is playing it "
        "(env BONEYARD_ABANDON_ABSENT_AFTER; default %(default)s)",
    )
    parser.add_argument(
        "--max-live-games",
        type=_live_games,
        default=int(os.environ.get("BONEYARD_MAX_LIVE_GAMES", MAX_LIVE_GAMES)),
        help="games kept in memory; the least recently used beyond it are reloaded from the "
        "log when needed (env BONEYARD_MAX_LIVE_GAMES; default %(default)s)",
    )
    parser.add_argument(
        "--house-bot-workers",
        type=_workers,
        default=_workers(os.environ.get("BONEYARD_HOUSE_BOT_WORKERS", str(DEFAULT_WORKERS))),
        metavar="N",
        help="processes that decide for the house bots (started at the first house bot's "
        "turn) (env BONEYARD_HOUSE_BOT_WORKERS; default %(default)s)",
    )
    parser.add_argument(
        "--shutdown-grace",
        type=_grace,
        default=_grace(os.environ.get("BONEYARD_SHUTDOWN_GRACE", str(DEFAULT_SHUTDOWN_GRACE))),
        metavar="SECONDS",
        help="on SIGTERM or SIGINT: seconds to let the calls in flight finish and the streams "
        "end (health says NOT_SERVING and new calls are refused meanwhile); what is left then "
        "is cut, and the exit is 0 either way; a second signal cuts it short "
        "(env BONEYARD_SHUTDOWN_GRACE; default %(default)g)",
    )
    parser.add_argument(
        "--sqlite-synchronous",
        type=str.upper,
        choices=SQLITE_SYNCHRONOUS,
        default=os.environ.get("BONEYARD_SQLITE_SYNCHRONOUS", "FULL").upper(),
        help="FULL: an acknowledged action survives a power cut; NORMAL: faster on slow disks, "
        "but a power cut may lose the last acknowledged actions (a crash of the server alone "
        "loses nothing) (env BONEYARD_SQLITE_SYNCHRONOUS; default %(default)s)",
    )
    parser.add_argument(
        "--log-level",
        type=str.upper,
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        default=os.environ.get("BONEYARD_LOG_LEVEL", "INFO"),
        help="(env BONEYARD_LOG_LEVEL; default %(default)s)",
    )
    parser.add_argument(
        "--log-format",
        type=str.lower,
        choices=LOG_FORMATS,
        default=os.environ.get("BONEYARD_LOG_FORMAT", "text").lower(),
        help="text: one readable line per record; json: one JSON object per line, with the "
        "call's request id, game, seat and account (env BONEYARD_LOG_FORMAT; default "
        "%(default)s)",
    )
    args = parser.parse_args(argv)
    if args.log_format not in LOG_FORMATS:  # from the environment: argparse checks only flags
        parser.error(f"BONEYARD_LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}")
    configure(args.log_level, args.log_format)
    try:
        asyncio.run(_serve(args))
    except StartupError as e:
        print(f"boneyard-server: {e}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
