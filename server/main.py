"""``boneyard-server``: the gRPC server on SQLite (default) or PostgreSQL.

    boneyard-server [--database-url URL] [--listen HOST:PORT]

Also ``BONEYARD_DATABASE_URL`` and ``BONEYARD_LISTEN``; defaults ``sqlite:///boneyard.db``
(a file in the working directory) and ``127.0.0.1:50051``. The schema is migrated on start.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from boneyard.server.api import GameServicer
from boneyard.server.app import GameApp
from boneyard.server.archive_api import add_archive_service
from boneyard.server.clocks import ClockKeeper
from boneyard.server.competition_api import LobbyServicer, TournamentServicer
from boneyard.server.feed import Feed
from boneyard.server.lobby import Lobby
from boneyard.server.store import EventStore
from boneyard.server.tournaments import TournamentDirector
from boneyard.v1 import (
    competition_pb2,
    competition_pb2_grpc,
    game_service_pb2,
    game_service_pb2_grpc,
)

__all__ = ["create_server", "main"]

log = logging.getLogger("boneyard.server")

DEFAULT_DATABASE_URL = "sqlite:///boneyard.db"
DEFAULT_LISTEN = "127.0.0.1:50051"
SERVICE_NAME = game_service_pb2.DESCRIPTOR.services_by_name["GameService"].full_name
LOBBY_SERVICE_NAME = competition_pb2.DESCRIPTOR.services_by_name["LobbyService"].full_name
TOURNAMENT_SERVICE_NAME = competition_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name

_background: set[asyncio.Task[None]] = set()
"""The clock keeper and the tournament director of every server this process runs."""


async def create_server(database_url: str, listen: str) -> tuple[grpc.aio.Server, int, GameApp]:
    """A started server on ``listen`` (port 0 picks a free one); returns it, its port and the
    application layer."""
    store = await asyncio.to_thread(EventStore.open, database_url, migrate=True)
    app = GameApp(store)
    # gRPC sets SO_REUSEPORT by default: a second server on a busy port would start "fine" and
    # take a share of the connections. A port in use must be an error.
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    feed = Feed(store.latest_versions)
    games = GameServicer(app, feed)
    game_service_pb2_grpc.add_GameServiceServicer_to_server(games, server)
    director = TournamentDirector(app)
    competition_pb2_grpc.add_LobbyServiceServicer_to_server(LobbyServicer(app, Lobby(app), games), server)
    competition_pb2_grpc.add_TournamentServiceServicer_to_server(
        TournamentServicer(app, director), server
    )
    archive_service = add_archive_service(server, store)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    services = (SERVICE_NAME, LOBBY_SERVICE_NAME, TOURNAMENT_SERVICE_NAME, archive_service)
    reflection.enable_server_reflection(
        (*services, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    try:
        port = server.add_insecure_port(listen)
    except RuntimeError as e:  # grpc >= 1.60 raises instead of returning 0
        store.close()
        raise OSError(f"cannot listen on {listen} (in use, or not an address of this host)") from e
    if port == 0:
        store.close()
        raise OSError(f"cannot listen on {listen}")
    await server.start()
    for name in ("", *services):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    for job in (ClockKeeper(app, feed).run(), director.run()):
        task = asyncio.get_running_loop().create_task(job)
        _background.add(task)
        task.add_done_callback(_background.discard)
    return server, port, app


class StartupError(Exception):
    """The server could not start (database unreachable or not migratable, port unusable)."""


async def _serve(database_url: str, listen: str) -> None:
    try:
        server, port, app = await create_server(database_url, listen)
    except Exception as e:
        log.debug("start failed", exc_info=True)
        raise StartupError(
            f"cannot start with database {_redacted(database_url)} on {listen}: {e}"
        ) from e
    host = listen.rsplit(":", 1)[0]
    log.info("boneyard-server listening on %s:%d, database %s", host, port, _redacted(database_url))
    print(f"boneyard-server listening on {host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("stopping")
    for task in list(_background):
        task.cancel()
    await server.stop(grace=2)
    app.store.close()


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparsable database URL>"


def _listen_address(text: str) -> str:
    """argparse type of --listen: ``HOST:PORT`` (``[V6ADDR]:PORT``), port 0..65535."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not HOST:PORT with a port 0..65535 (0: any free port)"
        )
    return text


def main(argv: list[str] | None = None) -> None:
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
        "--log-level",
        type=str.upper,
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        default=os.environ.get("BONEYARD_LOG_LEVEL", "INFO"),
        help="(env BONEYARD_LOG_LEVEL; default %(default)s)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        asyncio.run(_serve(args.database_url, args.listen))
    except StartupError as e:
        print(f"boneyard-server: {e}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
