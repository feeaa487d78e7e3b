"""The composition root: every part of one server process built and wired here, and nowhere
else (Cosmic Python's ``bootstrap.py``). ``create_server`` makes the store, the parts
(``Boneyard``: the application layer, the games in memory with their writer and feed, the
lobby, the clocks, the director, the house bots, the sweeper, the PostgreSQL listener), the one
pipeline of what every call shares, the gRPC port with its services and reflection, and the
HTTP listener over the same servicers. ``main`` only parses flags and calls it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

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
    matches_pb2,
    matches_pb2_grpc,
    ratings_pb2_grpc,
)
from boneyard.engine import ClockExpired, Event
from boneyard.server.archive.archive import MAX_VERIFY_SECONDS
from boneyard.server.archive.service import ARCHIVE_SERVICE_NAME, REQUEST_LIMITS, archive_servicer
from boneyard.server.archive.signing import load_signer
from boneyard.server.competition.bot_workers import DEFAULT_WORKERS
from boneyard.server.competition.challenge_service import AccountServicer, ChallengeServicer
from boneyard.server.competition.challenges import ChallengeBook
from boneyard.server.competition.house_bots import HouseBots
from boneyard.server.competition.lobby import Lobby
from boneyard.server.competition.match_service import MatchServicer
from boneyard.server.competition.matches import MatchDirector
from boneyard.server.competition.rating_service import RATING_SERVICE_NAME, RatingServicer
from boneyard.server.competition.ratings import Rater
from boneyard.server.competition.seat_watch import SeatWatch
from boneyard.server.competition.service import LobbyServicer, TournamentServicer
from boneyard.server.competition.sweeper import (
    Abandonment,
    Sweeper,
)
from boneyard.server.competition.tournaments import TournamentDirector
from boneyard.server.competition.turns import TurnWatch
from boneyard.server.games.app import GameApp
from boneyard.server.games.cache import MAX_LIVE_GAMES
from boneyard.server.games.clocks import ClockKeeper
from boneyard.server.games.feed import Feed
from boneyard.server.games.host import GameHost
from boneyard.server.games.live import LiveGame
from boneyard.server.games.service import GameServicer
from boneyard.server.ops.drain import Drain, Grace
from boneyard.server.ops.metrics import Metrics, MetricsListener
from boneyard.server.ops.observing import CallObserver
from boneyard.server.ops.pg_listener import Listener
from boneyard.server.quotas import Quotas
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.db import is_sqlite
from boneyard.server.store.notify import LOBBY_CHANNEL, NOTIFY_CHANNEL, announce
from boneyard.server.store.writer import Writer
from boneyard.server.transport.grpc import keepalive
from boneyard.server.transport.grpc.by_name import ByName
from boneyard.server.transport.grpc.piping import PipedServer, Piping
from boneyard.server.transport.grpc.reflection import enable_reflection
from boneyard.server.transport.http.connect import Services, http_app
from boneyard.server.transport.http.listener import (
    HttpLimits,
    HttpListener,
)
from boneyard.server.transport.pipeline import Pipeline

__all__ = ["Boneyard", "create_server"]

log = logging.getLogger("boneyard.server")

SERVICE_NAME = game_service_pb2.DESCRIPTOR.services_by_name["GameService"].full_name
LOBBY_SERVICE_NAME = competition_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name
TOURNAMENT_SERVICE_NAME = competition_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name
CHALLENGE_SERVICE_NAME = challenges_pb2.DESCRIPTOR.services_by_name["ChallengeService"].full_name
ACCOUNT_SERVICE_NAME = challenges_pb2.DESCRIPTOR.services_by_name["AccountService"].full_name
MATCH_SERVICE_NAME = matches_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name

TRANSPORT_LIMIT = 8 * 1024 * 1024
"""The bytes of a message gRPC reads at all: twice the largest request a method takes
(VerifyRecord's 4 MiB record), so that a request a little over its method's limit is read and
refused with the limit named (the pipeline's check), not cut off by the transport."""

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
    kwargs: dict[str, Any] = (
        {"sqlite_synchronous": sqlite_synchronous} if is_sqlite(database_url) else {}
    )
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
    # One pipeline of what every call shares, for both doors.
    pipeline = Pipeline(parts.drain, quotas, parts.observer, REQUEST_LIMITS)
    # gRPC sets SO_REUSEPORT by default: a second server on a busy port would start "fine" and
    # take a share of the connections. A port in use must be an error.
    server = grpc.aio.server(
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", TRANSPORT_LIMIT),
            *keepalive.SERVER_OPTIONS,
        ],
    )
    # Every handler wrapped in the pipeline as it is added (``piping``). (The generated
    # functions are typed for a server: PipedServer and ByName are the part of one they use.)
    piped = cast(grpc.aio.Server, PipedServer(server, Piping(pipeline)))
    # Every service found by name but an action's two methods, registered (``by_name``); the
    # game's service first, the one each action calls.
    by_name = cast(grpc.aio.Server, ByName(piped))
    game_service_pb2_grpc.add_GameServiceServicer_to_server(parts.games, by_name)
    turns = TurnWatch(parts.host, parts.feed, parts.seats, parts.competition)
    lobby = LobbyServicer(
        parts.app, parts.lobby, parts.seats, parts.games, quotas, turns, parts.metrics.turn_answered
    )
    competition_pb2_grpc.add_LobbyServiceServicer_to_server(lobby, by_name)
    tournaments = TournamentServicer(parts.app, parts.director)
    competition_pb2_grpc.add_TournamentServiceServicer_to_server(tournaments, by_name)
    archive = archive_servicer(store, signer, verify_seconds=verify_seconds, quotas=quotas)
    archive_pb2_grpc.add_ArchiveServiceServicer_to_server(archive, by_name)
    challenges = ChallengeServicer(parts.app, parts.challenges)
    challenges_pb2_grpc.add_ChallengeServiceServicer_to_server(challenges, by_name)
    accounts = AccountServicer(parts.app, parts.challenges, parts.seats)
    challenges_pb2_grpc.add_AccountServiceServicer_to_server(accounts, by_name)
    archive_service = ARCHIVE_SERVICE_NAME
    ratings = RatingServicer(store)
    ratings_pb2_grpc.add_RatingServiceServicer_to_server(ratings, by_name)
    matches = MatchServicer(parts.app, parts.matches)
    matches_pb2_grpc.add_MatchServiceServicer_to_server(matches, by_name)
    health_servicer = parts.health
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, by_name)
    services = (
        SERVICE_NAME,
        LOBBY_SERVICE_NAME,
        TOURNAMENT_SERVICE_NAME,
        archive_service,
        CHALLENGE_SERVICE_NAME,
        ACCOUNT_SERVICE_NAME,
        RATING_SERVICE_NAME,
        MATCH_SERVICE_NAME,
    )
    enable_reflection((*services, health.SERVICE_NAME), piped)
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
            parts.games,
            lobby,
            tournaments,
            archive,
            health_servicer,
            challenges,
            accounts,
            ratings,
            matches,
        )
        app = http_app(
            services_over_http,
            pipeline,
            cors_origins=http_cors_origins,
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
            lane=store.lane,
            notify_channel=NOTIFY_CHANNEL if postgresql else None,
            on_batch=self.metrics.batch,
        )
        # On SQLite the games made and seats taken (tournaments', challenges' ...) go in the
        # writer's batches: one commit for them and the actions beside them.
        store.join_batches(self.writer)
        self.feed = Feed()
        self.app = GameApp(store)
        abandonment = abandonment or Abandonment()
        self.host = GameHost(
            store,
            self.writer,
            publish=self.feed.publish,
            max_games=max_live_games,
            absent_after=abandonment.absent_after,
            on_loaded=self.metrics.games_loaded,
            seat_notices=postgresql,
        )
        announce_lobby = announce_seats = announce_written = None
        self._process = secrets.token_hex(8)
        """Names this process in its account notices: it has woken its own streams already."""
        if postgresql:
            engine = store.engine

            def announce_lobby(digest: str) -> None:
                announce(engine, LOBBY_CHANNEL, f"k:{digest}")

            def announce_seats(account_id: str) -> None:
                announce(engine, LOBBY_CHANNEL, f"a:{account_id}/{self._process}")

            def announce_written(account_id: str) -> None:
                announce(engine, LOBBY_CHANNEL, f"e:{account_id}/{self._process}")

        self.lobby = Lobby(self.app, announce_lobby)
        self.seats = SeatWatch(announce_seats, announce_written)
        self.app.on_created = self._created
        self.challenges = ChallengeBook(self.app, self.seats.written, quotas=quotas)
        self.games = GameServicer(self.app, self.host, self.feed, quotas)
        self.director = TournamentDirector(self.app)
        self.host.on_game_over(self.director.game_committed)
        self.rater = Rater(store, on_rated=self.seats.written)
        self.host.on_game_over(self.rater.game_committed)
        self.director.on_published = self.rater.wake_threadsafe
        self.matches = MatchDirector(self.app)
        self.host.on_game_over(self.matches.game_committed)
        self.matches.on_published = self.rater.wake_threadsafe
        self.host.on_game_over(self._tell_game_over)
        self.quotas = quotas
        self.host.on_commit(self._count)
        self.clocks = ClockKeeper(self.host, self.app.competition, self.metrics.timed_out)
        self.house = HouseBots(self.host, store, house_bot_workers)
        self.sweeper = Sweeper(self.host, store, abandonment)
        self.listener = (
            Listener(
                store.engine.url,
                on_game=self._changed_elsewhere,
                on_lobby=self._lobby_changed,
                on_reconnect=self._reconnected,
                on_listening=self.app.keys.listening,
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
            self.matches.run(),
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
        self.store.join_batches(None)
        self.writer.close()
        self.app.keys.close()
        self.store.close()

    def _count(self, game: LiveGame, events: tuple[Event, ...]) -> None:
        """A commit counted: an action in the metrics; what the server played for a client (a
        timeout, a house bot's action) against the quota of whoever created the game
        (``Quotas.served_action``). Taking or leaving a seat commits no event."""
        if events:
            self.metrics.committed()
            first = events[0]
            if type(first) is ClockExpired or getattr(first, "seat", None) in game.house:
                self.quotas.served_action(game.id)
        if game.over:
            self.quotas.game_over(game.id)

    def _tell_game_over(self, game: LiveGame, events: tuple[Event, ...]) -> None:
        """The commit that ended a game wrote its accounts' game_finished events (the writer,
        ``account_events``): wake their streams, here and in the other processes."""
        if events and game.over and game.accounts:
            self.seats.written(list(game.accounts))

    def _created(self, game: LiveGame) -> None:
        """A game was made here (from the creating thread)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._adopt, game)
        if game.accounts:
            self.seats.reserved(game.id, game.accounts)

    def _adopt(self, game: LiveGame) -> None:
        self.host.adopt(game)
        self.feed.publish(game.id)  # the live lobby shows it
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
        elif kind in ("a", "e"):
            account_id, _, process = value.partition("/")
            if process == self._process:
                pass  # its streams here were woken when it was written
            elif kind == "a":
                self.seats.changed(account_id)  # a seat reserved there: read the account's
            else:
                self.seats.events_written(account_id)
        elif kind == "s":
            # A seat was taken or left there: the copy here is out of date (and the live
            # lobby, which may hold no copy, looks again). Not when the seat was taken here:
            # the copy has it, and dropping it made every table's start read its log again.
            if not self.host.own_seat_notice(value):
                self.host.evict(value)
            self.feed.publish(value)
        elif kind == "r":
            # An account's key was revoked or rotated (boneyard-server admin): the keys
            # remembered here are forgotten first, then its streams look again, find the key
            # refused and end UNAUTHENTICATED. Seeks are not kept by account, so every seek
            # here looks (revocations are rare).
            self.app.keys.forget()
            self.seats.changed(value)
            self.lobby.changed_all()

    def _reconnected(self) -> None:
        self.host.forget_own_seat_notices()
        self.host.evict_all()
        self.feed.publish_all()
        self.lobby.changed_all()
        self.seats.changed_all()  # an account event may have been written meanwhile
        self.director.wake()
        self.matches.wake()
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


