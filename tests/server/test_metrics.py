"""Prometheus metrics (``--metrics-listen``): a real server process on SQLite, scraped over
HTTP while a game is played against it over gRPC (and Connect), the figures moving with what
is done. The calls are counted under grpc-prometheus's names and labels, the process and
Python runtime are there, and no ``*_created`` series. Waits are for a figure to arrive (a
stream closing is seen a moment later), bounded generously only to catch a hang.
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator

import grpc
import pytest
from process_helpers import (
    ServerProcess,
    bearer,
    clean_env,
    create_game,
    next_move,
    play_one,
    seat_all,
    submit,
)
from prometheus_client.parser import text_string_to_metric_families

from boneyard.api.v1 import (
    competition_pb2,
    competition_pb2_grpc,
    game_service_connect,
    game_service_pb2,
)
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore

GAME = "boneyard.v1.GameService"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def series(
    method: str,
    *,
    service: str = GAME,
    transport: str = "grpc",
    stream: bool = False,
    code: str | None = None,
) -> dict[str, str]:
    """The labels of a method's call series (``code``: of ``grpc_server_handled_total``)."""
    labels = {
        "grpc_type": "server_stream" if stream else "unary",
        "grpc_service": service,
        "grpc_method": method,
        "transport": transport,
    }
    if code is not None:
        labels["grpc_code"] = code
    return labels


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value; 0 for one not (yet) there (a labelled counter appears when first
    counted)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def eventually(read: Callable[[], float], expected: float, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while (got := read()) != expected:
        assert time.monotonic() < deadline, f"stayed at {got}, not {expected}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def bot_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """``(database URL, account name, API key)`` of a bot account made before the server."""
    url = f"sqlite:///{tmp_path_factory.mktemp('metrics') / 'metrics.db'}"
    store = EventStore.open(url, migrate=True)
    name, key = f"seeker-{uuid.uuid4().hex[:6]}", new_api_key()
    try:
        CompetitionStore(store).create_account(str(uuid.uuid4()), name, "bot", key_hash(key))
    finally:
        store.close()
    yield url, name, key


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, bot_key: tuple[str, str, str]) -> Iterator[ServerProcess]:
    url, _, _ = bot_key
    log = tmp_path_factory.mktemp("metrics-log") / "server.log"
    with ServerProcess.start(
        log, url, metrics_listen="127.0.0.1:0", http_listen="127.0.0.1:0", env=clean_env()
    ) as running:
        yield running


def test_the_metrics_port_is_chosen_and_printed_and_serves_every_metric_with_help(
    server: ServerProcess,
) -> None:
    assert server.metrics_url.startswith("http://127.0.0.1:")
    assert not server.metrics_url.endswith(":0/metrics")
    with urllib.request.urlopen(server.metrics_url, timeout=30) as response:
        text = response.read().decode()
    described = {line.split()[2] for line in text.splitlines() if line.startswith("# HELP ")}
    assert {
        "grpc_server_started_total",
        "grpc_server_handled_total",
        "grpc_server_msg_received_total",
        "grpc_server_msg_sent_total",
        "grpc_server_handling_seconds",
        "boneyard_calls_in_flight",
        "boneyard_actions_committed_total",
        "boneyard_commit_batch_size",
        "boneyard_timeouts_applied_total",
        "boneyard_turn_answers_total",
        "boneyard_games_loaded_total",
        "boneyard_games",
        "boneyard_seeks_waiting",
        "boneyard_tournament_games_in_play",
    } <= described


def test_the_process_and_the_python_runtime_are_measured(server: ServerProcess) -> None:
    names = {name for name, _ in scrape(server.metrics_url)}
    assert {
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
        "python_info",
        "python_gc_collections_total",
        "python_gc_objects_collected_total",
    } <= names


def test_actions_commits_and_rpcs_move_with_the_actions_played(server: ServerProcess) -> None:
    stub = server.stub()
    game_id = create_game(stub)
    tokens = seat_all(stub, game_id)
    before = scrape(server.metrics_url)
    played = 0
    for _ in range(6):
        assert play_one(stub, game_id, tokens) is not None
        played += 1
    after = scrape(server.metrics_url)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    submitted = series("SubmitAction")
    assert moved("grpc_server_started_total", **submitted) == played
    assert moved("grpc_server_msg_received_total", **submitted) == played
    assert moved("grpc_server_msg_sent_total", **submitted) == played
    assert moved("grpc_server_handled_total", **series("SubmitAction", code="OK")) == played
    assert moved("boneyard_actions_committed_total") == played
    # The game made here is held here: never read back from its log.
    assert moved("boneyard_games_loaded_total") == 0
    # Each action is one append; however the writer grouped them, they add up.
    assert moved("boneyard_commit_batch_size_sum") == played
    assert 1 <= moved("boneyard_commit_batch_size_count") <= played
    assert moved("grpc_server_handling_seconds_count", **submitted) == played
    assert moved("grpc_server_handling_seconds_bucket", le="+Inf", **submitted) == played
    assert moved("grpc_server_handled_total", **series("GetView", code="OK")) == (
        2 * played  # next_move reads the public view and the seat's own
    )


def test_a_refused_call_is_counted_under_its_own_status_code(server: ServerProcess) -> None:
    stub = server.stub()
    game_id = create_game(stub)
    tokens = seat_all(stub, game_id)
    move = next_move(stub, game_id, tokens)
    assert move is not None
    before = scrape(server.metrics_url)
    stale = type(move)(move.seat, move.expected_version + 5, move.request_id, move.action)
    with pytest.raises(grpc.RpcError) as refused:
        submit(stub, game_id, tokens, stale)
    assert refused.value.code() == grpc.StatusCode.ABORTED
    with pytest.raises(grpc.RpcError) as missing:
        stub.GetGame(game_service_pb2.GetGameRequest(game_id=str(uuid.uuid4())), timeout=30)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as malformed:
        stub.GetGame(game_service_pb2.GetGameRequest(game_id="not a game id"), timeout=30)
    assert malformed.value.code() == grpc.StatusCode.INVALID_ARGUMENT

    def moved(method: str, code: str, now: Samples | None = None) -> float:
        labels = series(method, code=code)
        handled = "grpc_server_handled_total"
        return value(now or scrape(server.metrics_url), handled, **labels) - value(
            before, handled, **labels
        )

    # grpc sends a refusal's status as the handler aborts, a moment before the call is
    # counted (an answer is sent after): wait for the count, which must then be exact.
    eventually(lambda: moved("GetGame", "INVALID_ARGUMENT"), 1)
    after = scrape(server.metrics_url)
    assert moved("SubmitAction", "ABORTED", after) == 1
    assert moved("GetGame", "NOT_FOUND", after) == 1
    assert moved("GetGame", "INVALID_ARGUMENT", after) == 1
    assert moved("SubmitAction", "OK", after) == 0
    assert value(after, "boneyard_actions_committed_total") == value(
        before, "boneyard_actions_committed_total"
    )  # a refusal changes nothing
    # A version ahead of the copy held here (another process's?): the game was read back.
    assert value(after, "boneyard_games_loaded_total") - value(
        before, "boneyard_games_loaded_total"
    ) == 1
    assert not any(
        name == "grpc_server_handled_total" and ("grpc_code", "UNKNOWN") in labels
        for name, labels in after
    )
    # A refused call was started and received, and answered no message.
    for method, refusals in (("SubmitAction", 1), ("GetGame", 2)):
        for name, moves in (
            ("grpc_server_started_total", refusals),
            ("grpc_server_msg_received_total", refusals),
            ("grpc_server_msg_sent_total", 0),
        ):
            labels = series(method)
            assert value(after, name, **labels) - value(before, name, **labels) == moves, (
                method,
                name,
            )


def test_an_open_watch_is_an_open_stream_until_it_is_cancelled(server: ServerProcess) -> None:
    stub = server.stub()
    game_id = create_game(stub)
    watching = series("WatchGame", stream=True)
    watch = stub.WatchGame(game_service_pb2.WatchGameRequest(game_id=game_id), timeout=60)
    try:
        next(watch)  # the server is in the stream
        samples = scrape(server.metrics_url)
        assert value(samples, "boneyard_calls_in_flight", **watching) == 1
        assert value(samples, "grpc_server_msg_sent_total", **watching) >= 1
    finally:
        watch.cancel()
    eventually(lambda: value(scrape(server.metrics_url), "boneyard_calls_in_flight", **watching), 0)
    ended = series("WatchGame", stream=True, code="CANCELLED")
    eventually(lambda: value(scrape(server.metrics_url), "grpc_server_handled_total", **ended), 1)


def test_games_are_counted_by_status(server: ServerProcess) -> None:
    stub = server.stub()
    before = scrape(server.metrics_url)
    create_game(stub)
    create_game(stub)
    seat_all(stub, create_game(stub))
    after = scrape(server.metrics_url)

    def moved(status: str) -> float:
        return value(after, "boneyard_games", status=status) - value(
            before, "boneyard_games", status=status
        )

    assert (moved("open"), moved("playing"), moved("finished"), moved("abandoned")) == (2, 1, 0, 0)


def test_a_waiting_seek_is_counted_while_its_stream_waits(
    server: ServerProcess, bot_key: tuple[str, str, str]
) -> None:
    _, _, key = bot_key
    lobby = competition_pb2_grpc.LobbyServiceStub(server.channel())
    call = lobby.Seek(competition_pb2.SeekRequest(), metadata=bearer(key), timeout=60)
    try:
        first = next(call)
        assert first.HasField("waiting")
        samples = scrape(server.metrics_url)
        assert value(samples, "boneyard_seeks_waiting") == 1
        seek = series("Seek", service="boneyard.v1.LobbyService", stream=True)
        assert value(samples, "boneyard_calls_in_flight", **seek) == 1
    finally:
        call.cancel()
    eventually(lambda: value(scrape(server.metrics_url), "boneyard_seeks_waiting"), 0)


def test_calls_over_the_http_listener_are_counted_apart(server: ServerProcess) -> None:
    async def calls() -> None:
        client = game_service_connect.GameServiceClient(server.http_url)
        try:
            await client.create_game(game_service_pb2.CreateGameRequest())
        finally:
            await client.close()

    handled = "grpc_server_handled_total"
    over_http = series("CreateGame", transport="http", code="OK")
    over_grpc = series("CreateGame", transport="grpc", code="OK")
    before = scrape(server.metrics_url)
    asyncio.run(calls())
    after = scrape(server.metrics_url)
    assert value(after, handled, **over_http) - value(before, handled, **over_http) == 1
    assert value(after, handled, **over_grpc) == value(before, handled, **over_grpc)
