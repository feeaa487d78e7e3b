"""The call series as a scrape reads them (``Metrics.call``): grpc-prometheus's families
from plain counts, a duration in the first bucket at or above it, as prometheus_client's
histograms count."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from boneyard.server.ops.metrics import BIDI_STREAM, SERVER_STREAM, UNARY, Metrics


def samples(metrics: Metrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = generate_latest(metrics.registry).decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


LABELS = {
    "grpc_type": "unary",
    "grpc_service": "boneyard.v1.GameService",
    "grpc_method": "GetView",
    "transport": "grpc",
}


def of(name: str, **more: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return name, frozenset({**LABELS, **more}.items())


def test_a_call_is_started_received_answered_and_handled_under_its_code() -> None:
    metrics = Metrics()
    series = metrics.call("/boneyard.v1.GameService/GetView", "grpc", UNARY)
    series.begin()
    assert samples(metrics)[of("boneyard_calls_in_flight")] == 1
    series.end("OK", 0.002)
    series.begin()
    series.end("NOT_FOUND", 0.002)
    seen = samples(metrics)
    assert seen[of("grpc_server_started_total")] == 2
    assert seen[of("grpc_server_msg_received_total")] == 2
    assert seen[of("grpc_server_msg_sent_total")] == 1
    assert seen[of("grpc_server_handled_total", grpc_code="OK")] == 1
    assert seen[of("grpc_server_handled_total", grpc_code="NOT_FOUND")] == 1
    assert seen[of("boneyard_calls_in_flight")] == 0


def test_a_duration_counts_in_every_bucket_at_or_above_it() -> None:
    metrics = Metrics()
    series = metrics.call("/boneyard.v1.GameService/GetView", "grpc", UNARY)
    for seconds in (0.001, 0.0011, 0.3, 1000.0):
        series.begin()
        series.end("OK", seconds)
    seen = samples(metrics)
    bucket = "grpc_server_handling_seconds_bucket"
    assert seen[of(bucket, le="0.001")] == 1  # (at the bound: within it)
    assert seen[of(bucket, le="0.0025")] == 2
    assert seen[of(bucket, le="0.25")] == 2
    assert seen[of(bucket, le="0.5")] == 3
    assert seen[of(bucket, le="600.0")] == 3
    assert seen[of(bucket, le="+Inf")] == 4
    assert seen[of("grpc_server_handling_seconds_count")] == 4
    assert abs(seen[of("grpc_server_handling_seconds_sum")] - 1000.3021) < 1e-9


def test_a_stream_counts_its_messages_one_by_one_and_a_stream_each_way_its_requests_too() -> None:
    metrics = Metrics()
    watch = metrics.call("/boneyard.v1.GameService/WatchGame", "grpc", SERVER_STREAM)
    play = metrics.call("/boneyard.v1.LobbyService/PlayTurns", "grpc", BIDI_STREAM)
    for series in (watch, play):
        series.begin()
        series.sent += 3
        series.end("OK", 1.0)
    play.received += 5
    seen = samples(metrics)
    watched = {"grpc_type": SERVER_STREAM, "grpc_method": "WatchGame"}
    played = {
        "grpc_type": BIDI_STREAM,
        "grpc_service": "boneyard.v1.LobbyService",
        "grpc_method": "PlayTurns",
    }
    assert seen[of("grpc_server_msg_sent_total", **watched)] == 3
    assert seen[of("grpc_server_msg_received_total", **watched)] == 1  # (its one request)
    assert seen[of("grpc_server_msg_sent_total", **played)] == 3
    assert seen[of("grpc_server_msg_received_total", **played)] == 5
