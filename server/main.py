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
from datetime import timedelta

from boneyard.server.bootstrap import create_server
from boneyard.server.competition.bot_workers import DEFAULT_WORKERS, MAX_WORKERS
from boneyard.server.competition.sweeper import (
    DEFAULT_IDLE_AFTER,
    DEFAULT_OPEN_AFTER,
    Abandonment,
)
from boneyard.server.games.cache import MAX_LIVE_GAMES
from boneyard.server.games.host import ABSENT_AFTER
from boneyard.server.ops import collector, event_loop
from boneyard.server.ops.admin import admin
from boneyard.server.ops.drain import Grace
from boneyard.server.ops.logs import LOG_FORMATS, configure
from boneyard.server.quotas import Quotas
from boneyard.server.store.db import SQLITE_SYNCHRONOUS, redacted_url
from boneyard.server.transport.http.door import DEFAULT_BODY_TIMEOUT
from boneyard.server.transport.http.listener import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    HttpLimits,
)

__all__ = ["main"]

log = logging.getLogger("boneyard.server")

DEFAULT_DATABASE_URL = "sqlite:///boneyard.db"
DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_HTTP_LISTEN = "127.0.0.1:8080"
DEFAULT_SHUTDOWN_GRACE = 10.0
"""Seconds a shutdown may take to let the calls in flight finish and the streams end."""
MAX_SHUTDOWN_GRACE = 3600.0
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
                turn_streams_per_account=args.max_turn_streams_per_account,
                open_games=args.open_games,
                served_games=args.max_served_games,
                served_actions_per_minute=args.max_served_actions_per_minute,
                challenges_per_minute=args.max_challenges_per_minute,
                analyses_per_minute=args.max_analyses_per_minute,
                loads_per_minute=args.max_game_loads_per_minute,
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
            f"cannot start with database {redacted_url(database_url)} on {listen}: {e}"
        ) from e
    collector.settle()  # (why: its module)
    host = listen.rsplit(":", 1)[0]
    log.info(
        "boneyard-server listening on %s:%d, database %s, event loop %s",
        host,
        port,
        redacted_url(database_url),
        args.event_loop,
    )
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
            (
                "streams (WatchGame, WatchLobby, Seek, WatchSeats, WatchTurns ...) one client "
                "address may hold open"
            ),
        ),
        (
            "--max-seeks-per-account",
            "BONEYARD_MAX_SEEKS_PER_ACCOUNT",
            8,
            "seeks one account may hold open",
        ),
        (
            "--max-turn-streams-per-account",
            "BONEYARD_MAX_TURN_STREAMS_PER_ACCOUNT",
            4,
            (
                "turn streams (WatchTurns, PlayTurns: every turn of the account's seats) one "
                "account may hold open"
            ),
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
        (
            "--max-analyses-per-minute",
            "BONEYARD_MAX_ANALYSES_PER_MINUTE",
            60,
            "hands one client address may have analysed (AnalyzeHand, not already kept) a minute",
        ),
        (
            "--max-game-loads-per-minute",
            "BONEYARD_MAX_GAME_LOADS_PER_MINUTE",
            2000,
            "games one client address may have read back from the log to be listed a minute"
            + " (ListGames; a game held in memory does not count)",
        ),
    ):
        parser.add_argument(
            flag,
            type=_quota,
            default=_quota(os.environ.get(env, str(default))),
            help=f"{what}; more is RESOURCE_EXHAUSTED (env {env}; default %(default)s)",
        )
    for flag, env, default_span, what in (
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
            default=_span(os.environ.get(env, str(int(default_span.total_seconds())))),
            help=f"{what}; 0 for never (env {env}; default {int(default_span.total_seconds())})",
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
        "--event-loop",
        type=str.lower,
        choices=event_loop.EVENT_LOOPS,
        default=os.environ.get("BONEYARD_EVENT_LOOP", "auto").lower(),
        help="auto: uvloop if it is installed (less of the server's CPU an action), else "
        "asyncio's own (env BONEYARD_EVENT_LOOP; default %(default)s)",
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
    try:
        args.event_loop = event_loop.chosen(args.event_loop)
    except ValueError:  # an unknown name from the environment, as above
        parser.error(f"BONEYARD_EVENT_LOOP must be one of {', '.join(event_loop.EVENT_LOOPS)}")
    except event_loop.LoopChoiceError as e:
        parser.error(str(e))
    configure(args.log_level, args.log_format)
    try:
        event_loop.run(_serve(args), args.event_loop)
    except StartupError as e:
        if args.log_format == "json":  # every line of stderr a JSON object
            log.critical("%s", e)
        else:
            print(f"boneyard-server: {e}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
