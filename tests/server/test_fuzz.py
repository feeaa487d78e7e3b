"""The fuzz test of issue 13, in the suite: a few thousand seeded requests (raw bytes, mutated
encodings, hostile values, seated and not) to every RPC of a real ``boneyard-server`` process on
each backend, then the bars of ``tests/server/fuzz_rpc.py``. ``make stress`` runs the same
fuzzer with 100,000 requests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.server.api_helpers import BACKENDS
from tests.server.fuzz_inputs import Credential, Pools, Request, make_request, methods
from tests.server.fuzz_rpc import MAX_DETAILS, Outcome, findings_of, fuzz_server, start_server
from tests.server.process_helpers import fresh_pg_database

SEED = 13
REQUESTS = 4000


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fuzz.db'}"
        return
    with fresh_pg_database(request.getfixturevalue("postgres_url"), "boneyard_fuzz") as url:
        yield url


def test_thousands_of_fuzzed_requests_get_apt_answers_and_change_nothing(
    database_url: str, tmp_path: Path
) -> None:
    with start_server(tmp_path / "server.log", database_url) as server:
        report = fuzz_server(server, database_url, REQUESTS, SEED)
    print(report.summary())
    assert not report.failed(), report.summary()
    # Not vacuous: every method was called and answered both ways, and real games were there
    # to be left alone.
    assert set(report.methods) == {m.name for m in methods()}, report.summary()
    assert report.codes["OK"] and report.codes["INVALID_ARGUMENT"], report.summary()
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
    """So that ``fuzz_rpc --only I`` sends exactly what request I was in the run."""
    all_methods = methods()
    run = [make_request(SEED, i, all_methods, _POOLS) for i in range(300)]
    assert make_request(SEED, 271, all_methods, _POOLS) == run[271]
    assert make_request(SEED + 1, 271, all_methods, _POOLS) != run[271]
    assert {r.kind for r in run} >= {"plausible", "hostile", "mutated", "random bytes"}


def _outcome(code: grpc.StatusCode, details: str = "", streaming: bool = False) -> Outcome:
    method = next(m for m in methods() if m.server_streaming == streaming)
    request = Request(0, method, "plausible", b"", Credential("none"))
    return Outcome(request, code, details, 0)


def test_the_fuzzer_flags_unknown_internal_hangs_and_long_messages() -> None:
    Code = grpc.StatusCode
    assert findings_of(_outcome(Code.UNKNOWN)) == ["answered UNKNOWN"]
    assert findings_of(_outcome(Code.INTERNAL)) == ["answered INTERNAL"]
    assert findings_of(_outcome(Code.DEADLINE_EXCEEDED)) != []  # a unary call never answered
    assert findings_of(_outcome(Code.INVALID_ARGUMENT, "x" * (MAX_DETAILS + 1))) != []
    too_big = "Stream removed (CLIENT: Received message larger than max (6000220 vs. 4194304))"
    assert findings_of(_outcome(Code.RESOURCE_EXHAUSTED, too_big)) != []
    assert findings_of(_outcome(Code.INVALID_ARGUMENT, "not a game id: 'A'")) == []
    assert findings_of(_outcome(Code.DEADLINE_EXCEEDED, streaming=True)) == []  # a watch
