"""The checked-in Python code under api/v1 is what the .proto files generate, and the .proto
files pass ``buf lint``. Both run offline: the generator is the venv's grpcio-tools and
mypy-protobuf; buf is found locally (``make lint`` installs it into node_modules/) or skipped.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "proto"
GENERATED_INTO = ROOT / "api" / "v1"
GENERATED = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi", "_connect.py", ".binpb")
"""The generated modules, and the descriptor set with the comments (reflection's)."""


def _generated(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.iterdir())
        if p.is_file() and p.name.endswith(GENERATED)
    }


def _generators() -> str:
    versions = []
    for dist in ("grpcio-tools", "mypy-protobuf", "protoc-gen-connectrpc"):
        try:
            versions.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist} not installed")
    return ", ".join(versions)


def test_generated_python_is_fresh(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(PROTO / "generate.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh, checked_in = _generated(tmp_path), _generated(GENERATED_INTO)
    assert fresh, "proto/generate.py generated nothing"
    missing = sorted(set(fresh) - set(checked_in))
    extra = sorted(set(checked_in) - set(fresh))
    stale = sorted(name for name in set(fresh) & set(checked_in) if fresh[name] != checked_in[name])
    assert not (missing or extra or stale), (
        f"the generated code under api/v1 is stale: run `make proto` and check in the result "
        f"(missing: {missing}, not generated any more: {extra}, different: {stale}; generated "
        f"here with {_generators()}, the versions pyproject.toml pins)"
    )


def test_generated_modules_import_as_the_boneyard_package() -> None:
    from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc

    assert game_service_pb2.DESCRIPTOR.package == "boneyard.v1"
    assert game_service_pb2.DESCRIPTOR.name == "boneyard/v1/game_service.proto"
    assert hasattr(game_service_pb2_grpc, "GameServiceServicer")


def _buf() -> str | None:
    """A buf binary: $BUF, then node_modules/.bin/buf (``make lint`` installs it), then PATH."""
    candidates = [os.environ.get("BUF"), str(ROOT / "node_modules" / ".bin" / "buf")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("buf")


@pytest.mark.parametrize(
    "command", [["lint"], ["format", "--diff", "--exit-code"]], ids=["lint", "format"]
)
def test_buf_is_happy_with_the_proto_files(command: list[str]) -> None:
    buf = _buf()
    if buf is None:
        pytest.skip(
            "buf not found: `make lint` installs it into node_modules/ (npm ci), or set BUF to a "
            "buf binary"
        )
    result = subprocess.run(
        [buf, *command], check=False, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"buf {' '.join(command)}:\n{result.stdout}{result.stderr}"
