"""The details of a refusal as the API ships them: proto/google/rpc/ holds the very messages
Python's googleapis-common-protos has (so the TypeScript generated from them and Python's
``google.rpc`` decode the same bytes), and ``boneyard.api.error_details`` reads a refused
call's ``ErrorInfo`` and its ``ErrorReason``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

from boneyard.api import error_details
from boneyard.api.v1 import errors_pb2, game_service_pb2, game_service_pb2_grpc
from tests.server.process_helpers import ServerProcess, free_port

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("google/rpc/status.proto", "google/rpc/error_details.proto")


def _definitions(file: descriptor_pb2.FileDescriptorProto) -> bytes:
    """A file's definitions: without its comments, nor the JSON names protoc fills in (the
    generated Python's descriptors leave them out)."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(file)
    copy.ClearField("source_code_info")
    messages = list(copy.message_type)
    while messages:
        message = messages.pop()
        messages.extend(message.nested_type)
        for field in message.field:
            field.ClearField("json_name")
    return copy.SerializeToString(deterministic=True)


def test_the_shipped_google_rpc_files_describe_the_messages_python_decodes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "shipped.binpb"
    # protoc's own include path brings google/protobuf/any.proto and duration.proto.
    include = Path(protoc.__file__).parent / "_proto"
    args = [f"-I{ROOT / 'proto'}", f"-I{include}", f"--descriptor_set_out={out}", *SHIPPED]
    assert protoc.main(["protoc", *args]) == 0
    made = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    shipped = {f.name: f for f in made.file}
    python = {
        "google/rpc/status.proto": error_details.Status.DESCRIPTOR.file,
        "google/rpc/error_details.proto": error_details.ErrorInfo.DESCRIPTOR.file,
    }
    for name in SHIPPED:
        installed = descriptor_pb2.FileDescriptorProto.FromString(python[name].serialized_pb)
        assert _definitions(shipped[name]) == _definitions(installed), (
            f"proto/{name} is not googleapis-common-protos' own: copy it again from the "
            "installed package (site-packages/google/rpc/)"
        )


@pytest.fixture(scope="module")
def stub(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[game_service_pb2_grpc.GameServiceStub]:
    where = tmp_path_factory.mktemp("server")
    with ServerProcess.start(where / "server.log", f"sqlite:///{where / 'api.db'}") as server:
        yield server.stub()


def test_a_refused_calls_error_info_names_its_reason_and_the_game(
    stub: game_service_pb2_grpc.GameServiceStub,
) -> None:
    missing = str(uuid.uuid4())
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetGame(game_service_pb2.GetGameRequest(game_id=missing), timeout=30)
    info = error_details.error_info_of(refused.value)
    assert info is not None and info.domain == error_details.DOMAIN
    assert error_details.reason_of(info) == errors_pb2.ERROR_REASON_GAME_NOT_FOUND
    assert dict(info.metadata) == {"game_id": missing}
    status = error_details.status_of(refused.value)
    assert status is not None and status.code == grpc.StatusCode.NOT_FOUND.value[0]


def test_a_call_that_never_reached_a_server_has_no_error_info() -> None:
    with grpc.insecure_channel(f"127.0.0.1:{free_port()}") as channel:
        stub = game_service_pb2_grpc.GameServiceStub(channel)
        with pytest.raises(grpc.RpcError) as failed:
            stub.GetGame(game_service_pb2.GetGameRequest(game_id=str(uuid.uuid4())), timeout=60)
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
    assert error_details.error_info_of(failed.value) is None
    assert error_details.reason_of(None) == errors_pb2.ERROR_REASON_UNSPECIFIED


def test_a_reason_of_a_later_version_is_read_as_unspecified() -> None:
    later = error_details.ErrorInfo(domain=error_details.DOMAIN, reason="SOMETHING_NEW")
    assert error_details.reason_of(later) == errors_pb2.ERROR_REASON_UNSPECIFIED
