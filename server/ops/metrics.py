"""The server's Prometheus metrics (``--metrics-listen``), in a registry of each server's own
(several servers in one process, as in tests, count apart).

The calls are counted under the names of grpc-prometheus (go-grpc-middleware's server metrics),
which the stock Grafana gRPC dashboards query, with its labels: ``grpc_type``, ``grpc_service``
(``boneyard.v1.GameService``), ``grpc_method`` (``SubmitAction``) and ``grpc_code`` (the status
code's name: ``OK``, ``INVALID_ARGUMENT``, ``CANCELLED`` ...):

- ``grpc_server_started_total``, ``grpc_server_handled_total`` (with ``grpc_code``),
  ``grpc_server_msg_received_total``, ``grpc_server_msg_sent_total`` and the histogram
  ``grpc_server_handling_seconds`` (a stream: until it ends).

``grpc_type`` is ``unary``, ``server_stream`` (WatchGame, Seek, WatchSeats ...) or
``bidi_stream`` (PlayTurns, server reflection), on both doors; a stream each way counts each
message it reads in ``grpc_server_msg_received_total``. Calls over the HTTP listener
(Connect, gRPC-Web) are counted under the same names as the gRPC port's, with one label more on
every call metric, ``transport``: ``grpc`` for the gRPC port, ``http`` for the HTTP listener. A
dashboard that ignores it sees every call; ``by (transport)`` tells the doors apart.

Beside them: ``boneyard_calls_in_flight`` (what a drain waits for; its ``server_stream`` and
``bidi_stream`` series are the open streams), the process's own figures
(``process_cpu_seconds_total``, ``process_resident_memory_bytes``, ``process_open_fds`` ...) and
Python's (``python_info``, ``python_gc_*``), and the game's, prefixed ``boneyard_``. No
``*_created`` series: a scrape carries the figures only (``docs/grafana-dashboard.json`` is a
dashboard of them).

What moves is counted where it happens, by the part that does it: the RPCs by the observing
of the one pipeline, on both doors (``boneyard.server.ops.observing``), the commit batches by the
writer, the actions by the game host's commit listeners, the timeouts by the clock keeper.
What stands (games by status, seeks waiting, tournament games in play) is read when
Prometheus scrapes (``watch``), not polled.
"""

from __future__ import annotations

import logging
import threading
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    CollectorRegistry,
    Counter,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    start_wsgi_server,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

__all__ = [
    "BIDI_STREAM",
    "GAME_STATUSES",
    "SERVER_STREAM",
    "UNARY",
    "CallMetrics",
    "Metrics",
    "MetricsListener",
]

log = logging.getLogger(__name__)

UNARY = "unary"
SERVER_STREAM = "server_stream"
BIDI_STREAM = "bidi_stream"
"""The kinds of call, as ``grpc_type`` names them."""

GAME_STATUSES = ("open", "playing", "finished", "abandoned")

_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600)
"""From a cached read (a millisecond) to a watching stream (minutes)."""
_BOUNDS = (*map(floatToGoString, _SECONDS), "+Inf")
"""The ``le`` labels of ``_SECONDS``'s buckets, as prometheus_client writes them."""
_BATCH = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
"""Up to the writer's ``MAX_BATCH``."""
_BATCH_BOUNDS = (*map(floatToGoString, _BATCH), "+Inf")

_CALL = ["grpc_type", "grpc_service", "grpc_method", "transport"]
_HANDLED = ["grpc_type", "grpc_service", "grpc_method", "grpc_code", "transport"]

# The *_created series (a counter's creation time) double what a scrape carries, and stock
# dashboards read none of them. The switch is the library's, for the whole process.
disable_created_metrics()


class Metrics:
    """The metrics of one server."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        # The process's CPU, memory, file descriptors (read from /proc: Linux only), the
        # Python version, the garbage collector's figures (CPython only).
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        self._calls: dict[tuple[str, str, str], CallMetrics] = {}
        registry.register(_Calls(self._calls))
        self._actions = _Tally(
            "boneyard_actions_committed",
            "Actions committed to games' logs by this process (a seat's action, a timeout, "
            "an abandonment)",
        )
        registry.register(self._actions)
        self._batches = _BatchSizes()
        registry.register(self._batches)
        self.loaded = Counter(
            "boneyard_games_loaded",
            "Games this process read back from their log: one it did not hold, or held behind "
            "another process's change (several processes: what a call landing away from the "
            "game's process costs)",
            registry=registry,
        )
        self.timeouts = Counter(
            "boneyard_timeouts_applied",
            "Seats that ran out of time and had their game's timeout policy applied",
            registry=registry,
        )
        self.turn_answers = Counter(
            "boneyard_turn_answers",
            "Turns answered on PlayTurns streams (each an action, as a SubmitAction is), by "
            "the status code the answer got (OK: applied; else told on the stream as refused)",
            ["grpc_code"],
            registry=registry,
        )
        self._turn_answers: dict[str, Counter] = {}

    def call(self, method: str, transport: str, kind: str) -> CallMetrics:
        """The metrics of ``method`` (``/package.Service/Method``) on the door ``transport``
        (``grpc`` or ``http``), a call of ``kind`` (``UNARY`` ...), bound once and kept: a call
        then finds its series in one look-up instead of a ``labels()`` per metric."""
        key = (method, transport, kind)
        found = self._calls.get(key)
        if found is None:
            found = self._calls[key] = CallMetrics(method, transport, kind)
        return found

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
        """``actions`` were committed (on the event loop)."""
        self._actions.value += actions

    def batch(self, size: int) -> None:
        """The writer committed ``size`` appends at once (from its thread)."""
        batches = self._batches
        batches.counts[bisect_left(_BATCH, size)] += 1
        batches.total += size

    def games_loaded(self, games: int) -> None:
        """``games`` were read back from their log (on the event loop)."""
        self.loaded.inc(games)

    def timed_out(self) -> None:
        self.timeouts.inc()

    def turn_answered(self, code: str) -> None:
        """A turn answered on a PlayTurns stream got ``code`` (``OK``: applied)."""
        child = self._turn_answers.get(code)
        if child is None:
            child = self._turn_answers[code] = self.turn_answers.labels(code)
        child.inc()


class CallMetrics:
    """The series of one method on one door: plain counts, no lock. Every call of both doors
    is observed on the event loop's thread (the gRPC port's handlers and the HTTP listener
    run on it), so one thread writes them; a scrape reads them from its own (``_Calls``).
    prometheus_client's series take a lock at every change: seven a call, about a tenth
    of what the observing cost a call."""

    __slots__ = (
        "buckets",
        "handled",
        "labels",
        "received",
        "seconds",
        "sent",
        "started",
    )

    def __init__(self, method: str, transport: str, kind: str) -> None:
        service, _, name = method.lstrip("/").rpartition("/")
        self.labels = (kind, service, name, transport)
        """``_CALL``'s values."""
        self.started = 0
        self.received = 0
        """A stream each way's messages read (every other call reads one request: its
        ``started``)."""
        self.sent = 0
        """A stream's messages sent (a unary call sends one answer: its calls ended ``OK``)."""
        self.handled: defaultdict[str, int] = defaultdict(int)
        """Calls ended, by status code's name (``OK``, ``NOT_FOUND`` ...). (The calls in
        flight are those started and not ended, read at a scrape: not counted again at every
        call.)"""
        self.seconds = 0.0
        """The sum of the calls' durations."""
        self.buckets = [0] * (len(_SECONDS) + 1)
        """Calls by the first of ``_SECONDS`` their duration is within (the last: beyond)."""

    def begin(self) -> None:
        """A call starts."""
        self.started += 1

    def end(self, code: str, seconds: float) -> None:
        """A call ended with ``code`` after ``seconds``."""
        self.handled[code] += 1
        self.seconds += seconds
        self.buckets[bisect_left(_SECONDS, seconds)] += 1


class _Calls(Collector):
    """The call series (``CallMetrics``) as grpc-prometheus's families, read at a scrape."""

    def __init__(self, calls: Mapping[tuple[str, str, str], CallMetrics]) -> None:
        self._calls = calls

    def collect(self) -> Iterable[Metric]:
        started = CounterMetricFamily("grpc_server_started", "RPCs started on the server", labels=_CALL)
        handled = CounterMetricFamily(
            "grpc_server_handled",
            "RPCs completed on the server, regardless of success or failure, by status code",
            labels=_HANDLED,
        )
        received = CounterMetricFamily(
            "grpc_server_msg_received",
            "RPC request messages received on the server (one a call; each message of a "
            "stream each way)",
            labels=_CALL,
        )
        sent = CounterMetricFamily(
            "grpc_server_msg_sent",
            "RPC response messages sent by the server (a unary call's answer; each message "
            "of a stream)",
            labels=_CALL,
        )
        seconds = HistogramMetricFamily(
            "grpc_server_handling_seconds",
            "Seconds from a call's start to its answer (a stream: to its end)",
            labels=_CALL,
        )
        in_flight = GaugeMetricFamily(
            "boneyard_calls_in_flight",
            "Calls under way now: what a drain waits for (grpc_type server_stream: the open "
            "streams, WatchGame, Seek, WatchSeats ...)",
            labels=_CALL,
        )
        # (list(): the loop's thread may add a series while this one reads.)
        for series in list(self._calls.values()):
            labels = list(series.labels)
            # (What a call of its kind counts by being started or answered is read from
            # those counts, not counted twice at every call. The ended are read first: a call
            # that ends meanwhile had started before, so the calls in flight never read less
            # than none.)
            ended = dict(series.handled)
            begun = series.started
            started.add_metric(labels, begun)
            kind = labels[0]
            received.add_metric(labels, series.received if kind == BIDI_STREAM else begun)
            sent.add_metric(labels, ended.get("OK", 0) if kind == UNARY else series.sent)
            in_flight.add_metric(labels, begun - sum(ended.values()))
            for code, count in ended.items():
                handled.add_metric([*labels[:3], code, labels[3]], count)
            seconds.add_metric(labels, _cumulative(_BOUNDS, series.buckets), series.seconds)
        yield from (started, handled, received, sent, seconds, in_flight)

    def describe(self) -> Iterable[Metric]:
        return self.collect()


def _cumulative(bounds: Sequence[str], counts: Sequence[int]) -> list[tuple[str, int]]:
    """A histogram's buckets as a scrape gives them: each ``le`` bound with the count of all
    observations within it (``counts`` copied first: its thread may add one meanwhile)."""
    cumulative, seen = [], 0
    for bound, count in zip(bounds, list(counts), strict=True):
        seen += count
        cumulative.append((bound, seen))
    return cumulative


class _Tally(Collector):
    """A counter that one thread adds to (the event loop's) as a plain number, read by a
    scrape from its own thread (``CallMetrics``' way): prometheus_client's ``Counter`` takes a
    lock at every ``inc``, and the actions are counted at every commit."""

    def __init__(self, name: str, documentation: str) -> None:
        self._name = name
        self._documentation = documentation
        self.value = 0

    def collect(self) -> Iterable[Metric]:
        yield CounterMetricFamily(self._name, self._documentation, value=self.value)

    def describe(self) -> Iterable[Metric]:
        return self.collect()


class _BatchSizes(Collector):
    """The histogram of the writer's batch sizes, kept as plain numbers by the writer's one
    thread and read by a scrape from its own (``_Tally``'s way): a ``Histogram``'s observe
    took its locks on the writer's thread at every batch, which the event loop then waited
    for with the GIL."""

    def __init__(self) -> None:
        self.counts = [0] * (len(_BATCH) + 1)
        """Batches by the first of ``_BATCH`` their size is within (the last: beyond)."""
        self.total = 0
        """Appends in all the batches."""

    def collect(self) -> Iterable[Metric]:
        family = HistogramMetricFamily(
            "boneyard_commit_batch_size",
            "Appends the writer committed in one transaction (group commit)",
        )
        family.add_metric([], _cumulative(_BATCH_BOUNDS, self.counts), self.total)
        yield family

    def describe(self) -> Iterable[Metric]:
        return self.collect()


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
