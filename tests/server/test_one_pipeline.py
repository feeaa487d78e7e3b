"""One pipeline for both doors (issue 32): every method of every service has the same byte
limit and the same refusals through every door — the gRPC port, and the HTTP listener by
Connect and by gRPC-Web — because both hand each call to ``boneyard.server.transport.pipeline``.

(The gRPC port and the HTTP listener once built the chain twice, and differed: over gRPC only
VerifyRecord took 4 MiB, over HTTP every ArchiveService method did.)
"""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest
from api_helpers import RPC_TIMEOUT, RunningServer, fresh_database
from google.protobuf.descriptor import MethodDescriptor
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from boneyard.api.v1 import (
    archive_pb2,
    challenges_pb2,
    competition_pb2,
    game_service_pb2,
    matches_pb2,
    ratings_pb2,
)
from boneyard.server.archive.service import REQUEST_LIMITS
from boneyard.server.transport.pipeline import DEFAULT_REQUEST_LIMIT

METHODS = [
    method
    for module in (
        game_service_pb2,
        competition_pb2,
        archive_pb2,
        challenges_pb2,
        ratings_pb2,
        matches_pb2,
    )
    for service in module.DESCRIPTOR.services_by_name.values()
    for method in service.methods
]


def path_of(method: MethodDescriptor) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"


@dataclass(frozen=True)
class Answer:
    """A refusal as any door wrote it."""

    code: str
    reason: str
    metadata: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, code: str, reason: str, metadata: dict[str, str]) -> Answer:
        return cls(code, reason, tuple(sorted(metadata.items())))


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    with fresh_database("sqlite", request, tmp_path_factory) as url:
        running = RunningServer(url, http=True)
        try:
            yield running
        finally:
            running.close()


def _info(status: status_pb2.Status) -> tuple[str, dict[str, str]]:
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason, dict(info.metadata)
    return "", {}


def over_grpc(server: RunningServer, method: MethodDescriptor, body: bytes, auth: str) -> Answer:
    with grpc.insecure_channel(server.address) as channel:
        metadata = (("authorization", auth),) if auth else None
        try:
            if method.server_streaming:
                call = channel.unary_stream(path_of(method))
                list(call(body, metadata=metadata, timeout=RPC_TIMEOUT))
            else:
                channel.unary_unary(path_of(method))(body, metadata=metadata, timeout=RPC_TIMEOUT)
        except grpc.RpcError as error:
            status = rpc_status.from_call(error)  # type: ignore[arg-type]
            reason, metadata_ = _info(status) if status is not None else ("", {})
            return Answer.of(error.code().name, reason, metadata_)  # type: ignore[attr-defined]
    raise AssertionError(f"{path_of(method)} over gRPC was not refused")


def _post(server: RunningServer, method: MethodDescriptor, content_type: str, body: bytes, auth: str):
    host, port = server.http_address.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=RPC_TIMEOUT)
    headers = {"Content-Type": content_type}
    if content_type == "application/proto":
        headers["Connect-Protocol-Version"] = "1"
    if auth:
        headers["Authorization"] = auth
    connection.request("POST", path_of(method), body=body, headers=headers)
    response = connection.getresponse()
    return response, response.read()


def _envelope(message: bytes) -> bytes:
    return b"\x00" + len(message).to_bytes(4, "big") + message


def _code_name(connect_code: str) -> str:
    return "CANCELLED" if connect_code == "canceled" else connect_code.upper()


def _from_connect_error(error: dict) -> Answer:
    for detail in error.get("details", ()):
        if detail.get("type") == "google.rpc.ErrorInfo":
            value = detail["value"]
            info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(value + "=" * (-len(value) % 4)))
            return Answer.of(_code_name(error["code"]), info.reason, dict(info.metadata))
    return Answer.of(_code_name(error["code"]), "", {})


def over_connect(server: RunningServer, method: MethodDescriptor, body: bytes, auth: str) -> Answer:
    if not method.server_streaming:
        _, data = _post(server, method, "application/proto", body, auth)
        return _from_connect_error(json.loads(data))
    _, data = _post(server, method, "application/connect+proto", _envelope(body), auth)
    while data:
        flags, length = data[0], int.from_bytes(data[1:5], "big")
        frame, data = data[5 : 5 + length], data[5 + length :]
        if flags & 0x02:
            return _from_connect_error(json.loads(frame)["error"])
    raise AssertionError(f"{path_of(method)} over Connect ended without an error")


def over_grpc_web(server: RunningServer, method: MethodDescriptor, body: bytes, auth: str) -> Answer:
    response, data = _post(server, method, "application/grpc-web+proto", _envelope(body), auth)
    trailers = {k.lower(): v for k, v in response.getheaders()}
    while "grpc-status" not in trailers and data:
        flags, length = data[0], int.from_bytes(data[1:5], "big")
        frame, data = data[5 : 5 + length], data[5 + length :]
        if flags & 0x80:
            for line in frame.decode().split("\r\n"):
                key, _, value = line.partition(":")
                if key:
                    trailers[key.strip().lower()] = value.strip()
    code = grpc.StatusCode(next(c.value for c in grpc.StatusCode if c.value[0] == int(trailers["grpc-status"])))
    details = trailers.get("grpc-status-details-bin", "")
    status = status_pb2.Status.FromString(base64.b64decode(details + "=" * (-len(details) % 4)))
    reason, metadata = _info(status)
    return Answer.of(code.name, reason, metadata)


DOORS = {"grpc": over_grpc, "connect": over_connect, "grpc-web": over_grpc_web}


@pytest.mark.parametrize("method", METHODS, ids=path_of)
def test_every_method_has_the_same_byte_limit_through_every_door(
    server: RunningServer, method: MethodDescriptor
) -> None:
    limit = REQUEST_LIMITS.get(path_of(method), DEFAULT_REQUEST_LIMIT)
    body = b"\x00" * (limit + 1)
    answers = {door: ask(server, method, body, "") for door, ask in DOORS.items()}
    assert set(answers.values()) == {
        Answer.of("RESOURCE_EXHAUSTED", "REQUEST_TOO_LARGE", {"limit": str(limit), "size": str(limit + 1)})
    }, answers


@pytest.mark.parametrize("method", METHODS, ids=path_of)
def test_every_method_refuses_malformed_credentials_alike_through_every_door(
    server: RunningServer, method: MethodDescriptor
) -> None:
    answers = {door: ask(server, method, b"", "Basic abc") for door, ask in DOORS.items()}
    assert set(answers.values()) == {
        Answer.of("UNAUTHENTICATED", "MALFORMED_AUTHORIZATION", {})
    }, answers
