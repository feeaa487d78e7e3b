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

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from boneyard.v1 import game_service_pb2, game_service_pb2_grpc
from server.api import GameServicer
from server.app import GameApp
from server.feed import Feed
from server.store import EventStore

__all__ = ["create_server", "main"]

log = logging.getLogger("boneyard.server")

DEFAULT_DATABASE_URL = "sqlite:///boneyard.db"
DEFAULT_LISTEN = "127.0.0.1:50051"
SERVICE_NAME = game_service_pb2.DESCRIPTOR.services_by_name["GameService"].full_name


async def create_server(database_url: str, listen: str) -> tuple[grpc.aio.Server, int, GameApp]:
    """A started server on ``listen`` (port 0 picks a free one); returns it, its port and the
    application layer."""
    store = await asyncio.to_thread(EventStore.open, database_url, migrate=True)
    app = GameApp(store)
    server = grpc.aio.server()
    game_service_pb2_grpc.add_GameServiceServicer_to_server(GameServicer(app, Feed()), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(listen)
    if port == 0:
        raise OSError(f"cannot listen on {listen}")
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port, app


async def _serve(database_url: str, listen: str) -> None:
    server, port, app = await create_server(database_url, listen)
    host = listen.rsplit(":", 1)[0]
    log.info("boneyard-server listening on %s:%d, database %s", host, port, _redacted(database_url))
    print(f"boneyard-server listening on {host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("stopping")
    await server.stop(grace=2)
    app.store.close()


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


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
        default=os.environ.get("BONEYARD_LISTEN", DEFAULT_LISTEN),
        help="HOST:PORT to serve gRPC on (env BONEYARD_LISTEN; default %(default)s)",
    )
    parser.add_argument("--log-level", default=os.environ.get("BONEYARD_LOG_LEVEL", "INFO"))
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    asyncio.run(_serve(args.database_url, args.listen))


if __name__ == "__main__":
    main()
