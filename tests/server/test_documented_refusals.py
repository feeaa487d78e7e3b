"""The reasons each method's comment names (``Refusals: ...``, which grpcurl, buf curl and
docs/api-reference.md show) are the reasons the server really refuses it with: a real
``boneyard-server`` process gets the RPC fuzzer's requests (tests/server/fuzz_inputs.py: raw
bytes, hostile values, real games, seats, accounts and tokens) and every refusal's
``ErrorInfo.reason`` must be one its method documents, or one every method may answer. The
rules' refusals, which only a played game draws, are checked against the engine's own list.
"""

from __future__ import annotations

import asyncio
import collections
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from boneyard import engine
from boneyard.server.transport.refusals import STATUS_TRAILER
from tests.server.fuzz_inputs import Pools, make_request, methods
from tests.server.fuzz_rpc import start_server
from tests.server.fuzz_world import build_world
from tests.server.process_helpers import ServerProcess
from tests.server.test_error_reasons import NOT_REACHABLE_FROM_OUTSIDE

ROOT = Path(__file__).resolve().parents[2]
SEED = 34
REQUESTS = 1500
CALL_TIMEOUT = 60
"""Seconds a unary call may take (generous: the machine may be loaded; nothing is timed)."""
STREAM_TIMEOUT = 3
"""Seconds a stream is watched for its refusal; one that is served is cancelled."""


def _reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "api_reference", ROOT / "proto" / "api_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("api_reference", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def documented() -> tuple[dict[str, list[str]], set[str]]:
    """Each method's own reasons, and those of every method, as the protos' comments say."""
    reference = _reference()
    api = reference.load((ROOT / "api" / "v1" / "descriptors.binpb").read_bytes())
    return reference.method_refusals(api), set(reference.common_refusals(api))


def _reason(metadata: grpc.aio.Metadata | None) -> str | None:
    for key, value in metadata or ():
        if key == STATUS_TRAILER:
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return None


async def _refusals(address: str, pools: Pools) -> dict[str, collections.Counter[str]]:
    """The reason of every refusal of the fuzzer's ``REQUESTS`` requests, by method path."""
    found: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    every = methods()
    queue = collections.deque(range(REQUESTS))
    async with grpc.aio.insecure_channel(address) as channel:

        async def worker() -> None:
            while queue:
                request = make_request(SEED, queue.popleft(), every, pools)
                method, metadata = request.method, request.credential.metadata
                try:
                    if not method.server_streaming:
                        await channel.unary_unary(method.path)(
                            request.payload, metadata=metadata, timeout=CALL_TIMEOUT
                        )
                        continue
                    call = channel.unary_stream(method.path)(
                        request.payload, metadata=metadata, timeout=STREAM_TIMEOUT
                    )
                    async for _ in call:
                        break  # served: not a refusal
                    call.cancel()
                    if await call.code() not in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED):
                        reason = _reason(await call.trailing_metadata())
                        if reason is not None:
                            found[method.path][reason] += 1
                except grpc.aio.AioRpcError as error:
                    reason = _reason(error.trailing_metadata())
                    if reason is not None:
                        found[method.path][reason] += 1

        await asyncio.gather(*(worker() for _ in range(8)))
    return found


@pytest.fixture(scope="module")
def drawn(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, collections.Counter[str]]]:
    path = tmp_path_factory.mktemp("refusals")
    url = f"sqlite:///{path / 'boneyard.db'}"
    server: ServerProcess
    with start_server(path / "server.log", url) as server:
        with grpc.insecure_channel(server.address) as channel:
            world = build_world(channel, url)
        yield asyncio.run(_refusals(server.address, world.pools))


def test_every_refusal_the_fuzzer_draws_is_documented_for_its_method(
    drawn: dict[str, collections.Counter[str]],
    documented: tuple[dict[str, list[str]], set[str]],
) -> None:
    own, common = documented
    undocumented = sorted(
        f"{path}: {reason} ({count}x)"
        for path, reasons in drawn.items()
        for reason, count in reasons.items()
        if reason not in own[path] and reason not in common
    )
    assert not undocumented, (
        "refusals the protos' comments do not name (add them to the method's 'Refusals:' "
        "line, then make proto): " + "; ".join(undocumented)
    )


def test_the_fuzzer_drew_refusals_of_every_kind(
    drawn: dict[str, collections.Counter[str]],
    documented: tuple[dict[str, list[str]], set[str]],
) -> None:
    """Not vacuous: most methods were refused, many with reasons of their own."""
    own, common = documented
    assert len(drawn) >= len(own) * 3 // 4, sorted(drawn)
    specific = {(p, r) for p, reasons in drawn.items() for r in reasons if r not in common}
    assert len(specific) >= 40, sorted(specific)
    assert {"BAD_GAME_ID", "BAD_API_KEY", "NOT_YOUR_SEAT"} <= {r for _, r in specific}


def _subclasses(kind: type[Exception]) -> Iterator[type[Exception]]:
    for sub in kind.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_the_rules_refusals_are_documented_for_submit_action(
    documented: tuple[dict[str, list[str]], set[str]],
) -> None:
    """Each refusal of the engine reaches a client through SubmitAction (a played game draws
    them: tests/server/test_error_reasons.py), but those no request can draw."""
    own, _ = documented
    rules = {sub.reason for sub in _subclasses(engine.IllegalAction)} - set(
        NOT_REACHABLE_FROM_OUTSIDE
    )
    assert rules <= set(own["/boneyard.v1.GameService/SubmitAction"])


@pytest.mark.parametrize(
    "path",
    [
        "/boneyard.v1.GameService/CreateGame",
        "/boneyard.v1.LobbyService/Seek",
        "/boneyard.v1.ChallengeService/CreateChallenge",
        "/boneyard.v1.TournamentService/CreateTournament",
    ],
)
def test_a_method_that_takes_a_ruleset_documents_a_bad_one(
    documented: tuple[dict[str, list[str]], set[str]], path: str
) -> None:
    own, _ = documented
    assert engine.RulesetError.reason in own[path]
