"""The Grafana dashboard shipped in ``docs/grafana-dashboard.json``, against a real server: after
calls over both doors (the gRPC port and Connect on the HTTP listener), a scrape of its
``/metrics`` holds every metric each panel's query and each variable's query names, with every
label the query filters, groups or names its legend by; and no ``*_created`` series.

PromQL is read loosely, enough for the queries a dashboard holds: strings and range selectors
are dropped, ``by (...)``/``without (...)`` clauses give labels, ``name{...}`` selectors give a
metric and the labels of its matchers, and any other identifier not followed by ``(`` (a
function or an aggregation) is a metric name.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from process_helpers import (
    ServerProcess,
    clean_env,
    create_game,
    play_one,
    seat_all,
)
from prometheus_client.parser import text_string_to_metric_families

from boneyard.api.v1 import game_service_connect, game_service_pb2

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "docs" / "grafana-dashboard.json"
TARGET_LABELS = frozenset({"instance", "job"})
"""Labels Prometheus adds to every series it scrapes: the server does not export them."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
_SELECTOR = re.compile(r"([A-Za-z_:][\w:]*)\s*\{([^}]*)\}")
_MATCHER = re.compile(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)")
_IDENTIFIER = re.compile(r"(?<![\w$.])([A-Za-z_:][\w:]*)(?![\w:]|\s*\()")
_KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "inf", "nan"})
_LEGEND = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_LABEL_VALUES = re.compile(r"label_values\(\s*([A-Za-z_:][\w:]*)\s*,\s*(\w+)\s*\)")


@dataclass
class Query:
    """What one query names: its metrics, the labels each selector filters by, and the labels
    it groups or names its legend by (on any of its metrics)."""

    where: str
    metrics: set[str] = field(default_factory=set)
    filtered: list[tuple[str, set[str]]] = field(default_factory=list)
    grouped: set[str] = field(default_factory=set)


def read_promql(where: str, expr: str, legend: str = "") -> Query:
    query = Query(where)
    text = _RANGE.sub("", _STRING.sub('""', expr))
    for labels in _GROUPING.findall(text):
        query.grouped |= {label.strip() for label in labels.split(",") if label.strip()}
    text = _GROUPING.sub(" ", text)
    for name, matchers in _SELECTOR.findall(text):
        query.filtered.append((name, set(_MATCHER.findall(matchers))))
    text = _SELECTOR.sub(lambda m: f" {m[1]} ", text)
    query.metrics = {
        name for name in _IDENTIFIER.findall(text) if name.lower() not in _KEYWORDS
    }
    query.grouped |= set(_LEGEND.findall(legend))
    return query


def dashboard() -> dict[str, Any]:
    loaded = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def panels(model: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, those inside collapsed rows too."""
    for panel in model["panels"]:
        yield panel
        yield from panel.get("panels", ())


def queries(model: dict[str, Any]) -> list[Query]:
    found = []
    for panel in panels(model):
        for target in panel.get("targets", ()):
            found.append(
                read_promql(
                    f"panel {panel['title']!r} {target['refId']}",
                    target["expr"],
                    target.get("legendFormat", ""),
                )
            )
    for variable in model["templating"]["list"]:
        if variable["type"] != "query":
            continue
        definition = variable["query"]["query"]
        match = _LABEL_VALUES.fullmatch(definition.strip())
        assert match, f"variable {variable['name']}: {definition}"
        query = Query(f"variable {variable['name']!r}", {match[1]}, [], {match[2]})
        found.append(query)
    return found


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        return response.read().decode()


def exported(text: str) -> dict[str, set[str]]:
    """Each sample name the server exports, with the labels its series carry."""
    labels: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels.setdefault(sample.name, set()).update(sample.labels)
    return labels


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The metrics of a server that answered calls of every kind on both doors."""
    base = tmp_path_factory.mktemp("dashboard")
    with ServerProcess.start(
        base / "server.log",
        f"sqlite:///{base / 'dashboard.db'}",
        metrics_listen="127.0.0.1:0",
        http_listen="127.0.0.1:0",
        env=clean_env(),
    ) as server:
        stub = server.stub()
        game_id = create_game(stub)
        tokens = seat_all(stub, game_id)
        for _ in range(4):
            assert play_one(stub, game_id, tokens) is not None
        with pytest.raises(grpc.RpcError):
            stub.GetGame(game_service_pb2.GetGameRequest(game_id="not a game id"), timeout=30)
        watch = stub.WatchGame(game_service_pb2.WatchGameRequest(game_id=game_id), timeout=60)
        next(watch)
        asyncio.run(_over_http(server.http_url, game_id))
        text = scrape(server.metrics_url)
        watch.cancel()
        yield text


async def _over_http(url: str, game_id: str) -> None:
    client = game_service_connect.GameServiceClient(url)
    try:
        await client.get_game(game_service_pb2.GetGameRequest(game_id=game_id))
    finally:
        await client.close()


def test_the_dashboard_is_a_grafana_dashboard_model() -> None:
    model = dashboard()
    assert model["title"] and model["uid"] and isinstance(model["schemaVersion"], int)
    ids = [panel["id"] for panel in panels(model)]
    assert len(ids) == len(set(ids))
    names = {variable["name"] for variable in model["templating"]["list"]}
    assert "datasource" in names
    for panel in panels(model):
        assert {"h", "w", "x", "y"} <= panel["gridPos"].keys(), panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip() and target["refId"], panel["title"]


def test_the_dashboard_shows_calls_errors_latency_games_and_the_process() -> None:
    named = set().union(*(query.metrics for query in queries(dashboard())))
    assert {
        "grpc_server_started_total",
        "grpc_server_handled_total",
        "grpc_server_handling_seconds_bucket",
        "boneyard_games",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
    } <= named


def test_every_metric_a_query_names_is_exported_by_the_server(scraped: str) -> None:
    labels = exported(scraped)
    missing = [
        f"{query.where}: {name}"
        for query in queries(dashboard())
        for name in sorted(query.metrics)
        if name not in labels
    ]
    assert missing == []


def test_every_label_a_query_uses_is_on_the_metrics_it_names(scraped: str) -> None:
    labels = exported(scraped)
    wrong = []
    for query in queries(dashboard()):
        for name, filtered in query.filtered:
            unknown = filtered - labels.get(name, set()) - TARGET_LABELS
            wrong += [f"{query.where}: {name}{{{label}}}" for label in sorted(unknown)]
        on_any = set().union(*(labels.get(name, set()) for name in query.metrics))
        unknown = query.grouped - on_any - TARGET_LABELS
        wrong += [f"{query.where}: by {label}" for label in sorted(unknown)]
    assert wrong == []


def test_the_server_exports_no_created_series(scraped: str) -> None:
    assert "grpc_server_handled_total{" in scraped
    assert not [name for name in exported(scraped) if name.endswith("_created")]
    assert "_created" not in scraped
