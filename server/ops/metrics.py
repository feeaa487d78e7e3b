"""The server's Prometheus metrics (``--metrics-listen``), in a registry of each server's own
(several servers in one process, as in tests, count apart).

What moves is counted where it happens, by the part that does it: the RPCs by the observing
interceptor and the HTTP bridge (``boneyard.server.ops.observing``), the commit batches by the
writer, the actions by the game host's commit listeners, the timeouts by the clock keeper.
What stands (games by status, seeks waiting, tournament games in play) is read when
Prometheus scrapes (``watch``), not polled.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_wsgi_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["GAME_STATUSES", "Metrics", "MetricsListener"]

log = logging.getLogger(__name__)

GAME_STATUSES = ("open", "playing", "finished", "abandoned")

_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600)
"""From a cached read (a millisecond) to a watching stream (minutes)."""
_BATCH = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
"""Up to the writer's ``MAX_BATCH``."""


class Metrics:
    """The metrics of one server."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        self.rpcs = Counter(
            "boneyard_rpcs",
            "RPCs answered, by method (/package.Service/Method), status code and transport "
            "(grpc: the gRPC port; http: Connect and gRPC-Web)",
            ["method", "code", "transport"],
            registry=registry,
        )
        self.rpc_seconds = Histogram(
            "boneyard_rpc_duration_seconds",
            "Seconds from a call's start to its answer (for a stream: to its end), by method "
            "and transport",
            ["method", "transport"],
            buckets=_SECONDS,
            registry=registry,
        )
        self.open_streams = Gauge(
            "boneyard_open_streams",
            "Streams (WatchGame, Seek, WatchSeats ...) open now, by method and transport",
            ["method", "transport"],
            registry=registry,
        )
        self.calls_in_flight = Gauge(
            "boneyard_calls_in_flight",
            "Calls (unary and streams) under way now, by method and transport: what a drain "
            "waits for",
            ["method", "transport"],
            registry=registry,
        )
        self.actions = Counter(
            "boneyard_actions_committed",
            "Actions committed to games' logs by this process (a seat's action, a timeout, "
            "an abandonment)",
            registry=registry,
        )
        self.commit_batch = Histogram(
            "boneyard_commit_batch_size",
            "Appends the writer committed in one transaction (group commit)",
            buckets=_BATCH,
            registry=registry,
        )
        self.timeouts = Counter(
            "boneyard_timeouts_applied",
            "Seats that ran out of time and had their game's timeout policy applied",
            registry=registry,
        )

    def watch(
        self,
        *,
        games_by_status: Callable[[], Mapping[str, int]],
        seeks_waiting: Callable[[], int],
        tournament_games_in_play: Callable[[], int],
    ) -> None:
        """Read these at every scrape (from the scraping thread)."""
        self.registry.register(
            _Standing(games_by_status, seeks_waiting, tournament_games_in_play)
        )

    def committed(self, actions: int = 1) -> None:
        self.actions.inc(actions)

    def batch(self, size: int) -> None:
        """The writer committed ``size`` appends at once (from its thread)."""
        self.commit_batch.observe(size)

    def timed_out(self) -> None:
        self.timeouts.inc()


class _Standing(Collector):
    """The gauges read at scrape time. A read that fails leaves its gauge out of that
    scrape (and is logged) rather than failing the whole scrape."""

    def __init__(
        self,
        games_by_status: Callable[[], Mapping[str, int]],
        seeks_waiting: Callable[[], int],
        tournament_games_in_play: Callable[[], int],
    ) -> None:
        self._games_by_status = games_by_status
        self._seeks_waiting = seeks_waiting
        self._tournament_games = tournament_games_in_play

    def describe(self) -> Iterable[Metric]:
        return ()  # collect() reads the database: not at registration

    def collect(self) -> Iterable[Metric]:
        try:
            counts = self._games_by_status()
        except Exception:
            log.warning("metrics: counting the games by status failed", exc_info=True)
        else:
            games = GaugeMetricFamily(
                "boneyard_games",
                "Games in the database by status (the same figure from every process on one "
                "database)",
                labels=["status"],
            )
            for status in sorted({*GAME_STATUSES, *counts}):
                games.add_metric([status], counts.get(status, 0))
            yield games
        yield GaugeMetricFamily(
            "boneyard_seeks_waiting",
            "Seeks (Seek streams) of this process waiting for a table",
            value=self._seeks_waiting(),
        )
        try:
            in_play = self._tournament_games()
        except Exception:
            log.warning("metrics: counting the tournament games in play failed", exc_info=True)
        else:
            yield GaugeMetricFamily(
                "boneyard_tournament_games_in_play",
                "Tournament games made and not over, in the database",
                value=in_play,
            )


class MetricsListener:
    """``/metrics`` (Prometheus text) on a port of its own, served by a thread: a scrape
    never waits for the event loop, nor the loop for a scrape."""

    def __init__(self, metrics: Metrics) -> None:
        self._registry = metrics.registry
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self, host: str, port: int) -> int:
        """Listen on ``host:port``; the port (a free one for 0). ``OSError`` if the address
        is in use or not this host's."""
        self._server, self._thread = start_wsgi_server(
            port, addr=host.strip("[]"), registry=self._registry
        )
        return int(self._server.server_port)

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._server = self._thread = None
