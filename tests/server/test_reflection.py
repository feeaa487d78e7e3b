"""Server reflection, v1 and v1alpha (issue 31, defect 6): an outside run found v1alpha only
(``buf curl --reflect-protocol grpc-v1`` failed) and bytes it could not decode answered
UNKNOWN with an ERROR traceback in the log. Both versions are served now, and undecodable input
is INVALID_ARGUMENT in both: "no answer is ever UNKNOWN" covers every service of the port.

Issue 34: reflection carries the protos' comments and is served on both doors, the gRPC port
and the HTTP listener (over HTTP/2, cleartext), so clients nobody here wrote (``buf curl``,
grpcurl) list, describe and call the API with no .proto file and no ``--schema``, against a
real ``boneyard-server`` process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from api_helpers import RPC_TIMEOUT, RunningServer
from grpc_reflection.v1alpha import reflection_pb2
from process_helpers import GRPCURL, ServerProcess, clean_env

from boneyard.server.transport.grpc.reflection import V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / "node_modules" / ".bin" / "buf"
SERVICES = {
    "boneyard.v1.GameService",
    "boneyard.v1.LobbyService",
    "boneyard.v1.TournamentService",
    "boneyard.v1.ArchiveService",
    "boneyard.v1.ChallengeService",
    "boneyard.v1.AccountService",
    "boneyard.v1.RatingService",
    "boneyard.v1.MatchService",
}
needs_buf = pytest.mark.skipif(not BUF.exists(), reason="buf is an npm package: make setup-web")


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


# ------------------------------------------------------------ both doors, with comments


@pytest.fixture(scope="module")
def both_doors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A ``boneyard-server`` process listening on a gRPC port and an HTTP listener."""
    path = tmp_path_factory.mktemp("reflection")
    with ServerProcess.start(
        path / "server.log", f"sqlite:///{path / 'boneyard.db'}", http_listen="127.0.0.1:0"
    ) as server:
        yield server


def _doors(server: ServerProcess) -> dict[str, str]:
    return {"grpc port": f"http://{server.address}", "http listener": server.http_url}


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A client that nobody here wrote, in a folder with no .proto file: all it knows of the
    API comes from reflection."""
    return subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=clean_env(),
    )


def _buf_curl(cwd: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    # --http2-prior-knowledge: HTTP/2 over cleartext (h2c), which both doors speak.
    return _run([str(BUF), "curl", "--http2-prior-knowledge", *args, url], cwd)


@needs_buf
@pytest.mark.parametrize(
    ("door", "protocol"),
    [
        ("grpc port", "grpc"),
        ("http listener", "grpc"),
        ("http listener", "connect"),
        ("http listener", "grpcweb"),
    ],
)
def test_buf_curl_lists_the_services_by_reflection_on_both_doors(
    both_doors: ServerProcess, tmp_path: Path, door: str, protocol: str
) -> None:
    url = _doors(both_doors)[door]
    listed = _buf_curl(tmp_path, url, "--protocol", protocol, "--list-services")
    assert listed.returncode == 0, listed.stderr
    names = set(listed.stdout.split())
    assert SERVICES | {V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME} <= names, listed.stdout


@needs_buf
@pytest.mark.parametrize("door", ["grpc port", "http listener"])
def test_buf_curl_calls_a_method_by_reflection_on_both_doors(
    both_doors: ServerProcess, tmp_path: Path, door: str
) -> None:
    url = _doors(both_doors)[door]
    created = _buf_curl(
        tmp_path,
        f"{url}/boneyard.v1.GameService/CreateGame",
        "--protocol",
        "grpc",
        "--data",
        json.dumps({"rules": {"preset": "moon"}, "name": f"made by buf curl on the {door}"}),
    )
    assert created.returncode == 0, created.stderr
    game = json.loads(created.stdout)
    assert game["game"]["rules"]["players"] == 3
    # buf curl's own protocol, Connect, where the door speaks it.
    protocol = "grpc" if door == "grpc port" else "connect"
    read = _buf_curl(
        tmp_path,
        f"{url}/boneyard.v1.GameService/GetGame",
        "--protocol",
        protocol,
        "--data",
        json.dumps({"gameId": game["gameId"]}),
    )
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["game"]["name"] == f"made by buf curl on the {door}"


@needs_buf
@pytest.mark.parametrize("door", ["grpc port", "http listener"])
def test_buf_curl_by_reflection_v1alpha_too(
    both_doors: ServerProcess, tmp_path: Path, door: str
) -> None:
    listed = _buf_curl(
        tmp_path,
        _doors(both_doors)[door],
        "--protocol",
        "grpc",
        "--reflect-protocol",
        "grpc-v1alpha",
        "--list-services",
    )
    assert listed.returncode == 0, listed.stderr
    assert SERVICES <= set(listed.stdout.split())


@pytest.mark.parametrize("door", ["grpc port", "http listener"])
def test_grpcurl_describe_shows_a_methods_comment_and_its_refusals(
    both_doors: ServerProcess, tmp_path: Path, door: str
) -> None:
    address = _doors(both_doors)[door].removeprefix("http://")
    described = _run(
        [str(GRPCURL), "-plaintext", address, "describe", "boneyard.v1.GameService.GetView"],
        tmp_path,
    )
    assert described.returncode == 0, described.stderr
    assert (
        "// What the token's seat may know now; without a token, what a spectator may know."
        in described.stdout
    ), described.stdout
    assert "// Refusals: BAD_GAME_ID, GAME_NOT_FOUND" in described.stdout
    assert "option idempotency_level = NO_SIDE_EFFECTS;" in described.stdout


@pytest.mark.parametrize("door", ["grpc port", "http listener"])
def test_grpcurl_describe_shows_a_fields_comment(
    both_doors: ServerProcess, tmp_path: Path, door: str
) -> None:
    address = _doors(both_doors)[door].removeprefix("http://")
    described = _run(
        [str(GRPCURL), "-plaintext", address, "describe", "boneyard.v1.SubmitActionRequest"],
        tmp_path,
    )
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    field = next(i for i, line in enumerate(lines) if "expected_version" in line and "=" in line)
    assert lines[field - 1].strip().startswith("//"), described.stdout


def test_the_gRPC_port_describes_its_health_service(
    both_doors: ServerProcess, tmp_path: Path
) -> None:
    listed = _run([str(GRPCURL), "-plaintext", both_doors.address, "list"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "grpc.health.v1.Health" in listed.stdout.split()
    described = _run(
        [str(GRPCURL), "-plaintext", both_doors.address, "describe", "grpc.health.v1.Health"],
        tmp_path,
    )
    assert described.returncode == 0, described.stderr
    assert "rpc Check" in described.stdout


def test_an_unknown_symbol_is_not_found_not_an_error_of_the_stream(
    channel: grpc.Channel,
) -> None:
    request = reflection_pb2.ServerReflectionRequest(file_containing_symbol="boneyard.v1.Nope")
    (answer,) = ask(channel, V1_SERVICE_NAME, request.SerializeToString())
    assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


def test_a_request_that_asks_nothing_is_invalid_argument(channel: grpc.Channel) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        ask(channel, V1_SERVICE_NAME, reflection_pb2.ServerReflectionRequest().SerializeToString())
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
