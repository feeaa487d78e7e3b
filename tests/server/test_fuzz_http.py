"""The HTTP fuzz test of issue 31, in the suite: a few thousand seeded requests (Connect, gRPC-Web
and gRPC over HTTP/2 with good and broken bodies, envelopes and headers, other methods, chunked
and oversized bodies, streams cut short, paths that climb out of the web app, /healthz) to the
HTTP listener of a real ``boneyard-server`` process on each backend, then the bars of
``tests/server/fuzz_http.py``. ``make stress`` runs the same fuzzer with 100,000 requests."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.api_helpers import BACKENDS
from tests.server.fuzz_http import (
    HttpOutcome,
    HttpRequest,
    findings_of,
    fuzz_http_server,
    make_http_request,
    start_http_server,
)
from tests.server.fuzz_inputs import Credential, Pools, Request, methods
from tests.server.process_helpers import fresh_pg_database

SEED = 13
REQUESTS = 2500


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fuzz.db'}"
        return
    with fresh_pg_database(request.getfixturevalue("postgres_url"), "boneyard_fuzz_http") as url:
        yield url


def test_thousands_of_fuzzed_http_requests_get_apt_answers_and_change_nothing(
    database_url: str, tmp_path: Path
) -> None:
    with start_http_server(tmp_path / "server.log", database_url) as server:
        report = fuzz_http_server(server, database_url, REQUESTS, SEED)
    print(report.summary())
    assert not report.failed(), report.summary()
    # Not vacuous: every method was called, every kind of request was sent, with several
    # content types, and answered in several ways; files were served; real games were there
    # to be left alone.
    assert set(report.methods) == {m.name for m in methods()}, report.summary()
    assert len(report.families) == 15, report.summary()
    assert set(report.content_types) >= {
        "application/json",
        "application/proto",
        "application/connect+proto",
        "application/grpc-web+proto",
        "application/grpc",
    }, report.summary()
    assert {
        "200 ok",
        "400 invalid_argument",
        "200 grpc 3",
        "200 invalid_argument",
        "404",
        "405",
        "415",
        "429 resource_exhausted",
        "grpc channel OK",
    } <= set(report.codes), report.summary()
    assert report.static_served > 0, report.summary()
    assert sum(report.games_checked.values()) >= 2, report.summary()


_POOLS = Pools(
    game_ids=("4b2a0c1e-1111-4222-8333-123456789abc",),
    tournament_ids=(),
    account_names=("north",),
    seat_tokens=("token",),
    account_keys=("byk_key",),
    versions=(1, 2),
)


def test_a_request_of_a_seed_is_made_again_alike_on_its_own() -> None:
    """So that ``fuzz_http --only I`` sends exactly what request I was in the run."""
    all_methods = methods()
    run = [make_http_request(SEED, i, all_methods, _POOLS) for i in range(400)]
    assert make_http_request(SEED, 271, all_methods, _POOLS) == run[271]
    assert make_http_request(SEED + 1, 271, all_methods, _POOLS) != run[271]
    assert {r.family for r in run} >= {"connect", "grpc_web", "h2", "static", "raw"}


def _outcome(
    status: int | None,
    code: str = "",
    *,
    message: str = "",
    body: bytes = b"",
    path: str = "/boneyard.v1.GameService/ListGames",
    closed: str = "",
    timeout_set: bool = False,
) -> HttpOutcome:
    method = next(m for m in methods() if m.name == "ListGames")
    base = Request(0, method, "plausible", b"", Credential("none"))
    request = HttpRequest(
        0, "connect", "", base, method, "h1", "application/json", timeout_set=timeout_set
    )
    return HttpOutcome(
        request,
        status,
        code,
        message,
        closed=closed,
        body=body,
        path=path,
        asked="connect",
        verb="GET",
    )


def test_the_fuzzer_flags_5xx_unknown_internal_silence_long_messages_and_files_outside() -> None:
    assert findings_of(_outcome(500)) == ["HTTP 500"]
    assert findings_of(_outcome(500, "internal")) == ["HTTP 500", "answered internal"]
    assert findings_of(_outcome(200, "unknown")) == ["answered unknown"]
    assert findings_of(_outcome(200, "grpc 13")) != []
    assert findings_of(_outcome(None, closed="closed")) == ["no answer (closed)"]
    assert findings_of(_outcome(400, "invalid_argument", message="x" * 1001)) != []
    passwd = b"root:x:0:0:root:/root:/bin/bash\n"
    assert findings_of(_outcome(200, body=passwd, path="/../../etc/passwd")) != []
    assert findings_of(_outcome(200, body=b"<html>not ours</html>", path="/index.html")) != []
    grpc_web = dataclasses.replace(
        _outcome(400, "invalid_argument"), asked="grpc-web", content_type="application/json"
    )
    assert findings_of(grpc_web) == ["a grpc-web request answered with a Connect error"]
    # What the protocols answer, and may: a refusal, an unimplemented compression, a deadline
    # the request set, a 404 of the router.
    assert findings_of(_outcome(400, "invalid_argument", message="not a game id")) == []
    assert findings_of(_outcome(501, "unimplemented")) == []
    assert findings_of(_outcome(504, "deadline_exceeded", timeout_set=True)) == []
    assert findings_of(_outcome(504, "deadline_exceeded")) == ["HTTP 504"]
    assert findings_of(_outcome(404, path="/../../etc/passwd")) == []
