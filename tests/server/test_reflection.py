"""Server reflection, v1 and v1alpha (issue 31, defect 6): an outside run found v1alpha only
(``buf curl --reflect-protocol grpc-v1`` failed) and bytes it could not decode answered
UNKNOWN with an ERROR traceback in the log. Both versions are served now, and undecodable input
is INVALID_ARGUMENT in both: "no answer is ever UNKNOWN" covers every service of the port."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from api_helpers import RPC_TIMEOUT, RunningServer
from grpc_reflection.v1alpha import reflection_pb2

from boneyard.server.transport.grpc.reflection import V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / "node_modules" / ".bin" / "buf"


def _info(service: str) -> str:
    return f"/{service}/ServerReflectionInfo"


def ask(channel: grpc.Channel, service: str, *requests: bytes) -> list[reflection_pb2.ServerReflectionResponse]:
    """Send raw request bytes on one reflection stream of ``service``; its answers."""
    call = channel.stream_stream(
        _info(service),
        request_serializer=lambda b: b,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    return list(call(iter(requests), timeout=RPC_TIMEOUT))


@pytest.fixture
def channel(server: RunningServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.address) as opened:
        yield opened


@pytest.mark.parametrize("service", [V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME])
def test_both_reflection_versions_list_the_services(channel: grpc.Channel, service: str) -> None:
    request = reflection_pb2.ServerReflectionRequest(list_services="").SerializeToString()
    (answer,) = ask(channel, service, request)
    names = {s.name for s in answer.list_services_response.service}
    assert {"boneyard.v1.GameService", V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME} <= names


@pytest.mark.parametrize("service", [V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME])
def test_both_reflection_versions_describe_a_service_and_themselves(
    channel: grpc.Channel, service: str
) -> None:
    for symbol in ("boneyard.v1.GameService", service):
        request = reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol)
        (answer,) = ask(channel, service, request.SerializeToString())
        assert answer.WhichOneof("message_response") == "file_descriptor_response", answer


@pytest.mark.parametrize("service", [V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME])
def test_undecodable_reflection_requests_are_invalid_argument_not_unknown(
    channel: grpc.Channel, service: str
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        ask(channel, service, b"\xff\xff\xff")
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert "not an encoded ServerReflectionInfo request" in (caught.value.details() or "")


def test_a_good_request_then_bytes_it_cannot_decode_on_one_stream(channel: grpc.Channel) -> None:
    good = reflection_pb2.ServerReflectionRequest(list_services="").SerializeToString()
    call = channel.stream_stream(
        _info(V1_SERVICE_NAME),
        request_serializer=lambda b: b,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    answers = call(iter([good, b"\x0a\xff"]), timeout=RPC_TIMEOUT)
    assert next(answers).HasField("list_services_response")
    with pytest.raises(grpc.RpcError) as caught:
        next(answers)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.skipif(not BUF.exists(), reason="buf is an npm package: make setup-web")
def test_buf_curl_lists_the_services_by_reflection_v1(server: RunningServer) -> None:
    listed = subprocess.run(
        [
            str(BUF),
            "curl",
            "--protocol",
            "grpc",
            "--http2-prior-knowledge",
            "--reflect-protocol",
            "grpc-v1",
            "--list-services",
            f"http://{server.address}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT / "tests",
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert "boneyard.v1.GameService" in listed.stdout.split()
