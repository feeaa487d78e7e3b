"""Generate the Python code of the API from its .proto files into ``api/v1``: ``make proto``.

For every ``proto/boneyard/**/*.proto`` this writes ``*_pb2.py`` (messages), ``*_pb2.pyi``
(typed stubs, mypy-protobuf) and, for files with services, ``*_pb2_grpc.py`` and
``*_pb2_grpc.pyi`` (grpc stubs and servicers) and ``*_connect.py`` (Connect and gRPC-Web
services and clients, protoc-gen-connectrpc); and for the whole API ``descriptors.binpb``, the
``FileDescriptorSet`` of every file and its imports *with their comments* (protoc's
``--include_source_info``), which server reflection serves on both doors so that ``grpcurl
describe`` and ``buf curl`` show the documentation, and from which ``api_reference.py`` writes
``docs/api-reference.md``. The include root is ``proto/`` (the API's
package is ``boneyard.v1``, its files ``boneyard/v1/*.proto``); protoc names the Python modules
after the files (``boneyard.v1.x_pb2``), and they are installed as ``boneyard.api.v1.x_pb2``
beside the codec, so the modules' names and their imports of each other are written so. The
generated files are checked in; ``tests/api/test_generated_is_fresh.py`` regenerates into a
temporary directory and fails if they differ.

    python proto/generate.py            # into api/v1 and docs/ (what `make proto` runs)
    python proto/generate.py --out DIR  # all of it into DIR (the freshness tests)

Generated code depends on the generator's version (grpcio-tools, mypy-protobuf): pyproject.toml
pins both, so every checkout generates the same bytes.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import api_reference  # beside this script (proto/), which Python puts first on sys.path

PROTO_ROOT = Path(__file__).resolve().parent
"""The include root: imports read ``boneyard/v1/rules.proto``."""
PACKAGE = "boneyard"
OUT = PROTO_ROOT.parent / "api" / "v1"
"""Where the generated modules live: the package ``boneyard.api.v1``."""
DESCRIPTOR_SET = "descriptors.binpb"
"""The API's descriptors with their comments, beside the modules (``boneyard.api.v1``)."""
REFERENCE = PROTO_ROOT.parent / "docs" / "api-reference.md"
"""The API reference, written from the descriptor set (``api_reference.py``)."""
GENERATED_SUFFIXES = (
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    "_pb2_grpc.pyi",
    "_connect.py",
    DESCRIPTOR_SET,
)
_MODULES = re.compile(
    r"\bboneyard\.v1(?=\.\w+_(?:pb2|pb2_grpc|connect)\b)|(?<=from )boneyard\.v1(?= import )"
)
"""``boneyard.v1`` where it names a Python module (``from boneyard.v1 import``,
``boneyard.v1.rules_pb2``), never where it is the proto package: a type's full name in a
descriptor's bytes (``.boneyard.v1.Ruleset``) or a method's path (``/boneyard.v1.GameService/``)."""


def proto_files(root: Path = PROTO_ROOT) -> list[Path]:
    """Every .proto file of the API, relative to the include root, in a stable order."""
    return sorted(p.relative_to(root) for p in (root / PACKAGE).rglob("*.proto"))


def generated_files(root: Path) -> list[Path]:
    """Every generated file directly under ``root``, relative to it."""
    return sorted(
        p.relative_to(root)
        for p in root.iterdir()
        if p.is_file() and p.name.endswith(GENERATED_SUFFIXES)
    )


def _plugin(name: str) -> str:
    """A protoc plugin installed beside this Python (the venv's bin/), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found: install the dev extra (make setup)")
    return found


def generate(out: Path) -> list[Path]:
    """Generate every .proto file's modules into ``out`` (the ``boneyard.api.v1`` folder);
    return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in generated_files(out):
        (out / stale).unlink()
    with tempfile.TemporaryDirectory() as scratch:
        made = Path(scratch)
        _protoc(made)
        for path in sorted((made / PACKAGE / "v1").iterdir()):
            if path.name.endswith(GENERATED_SUFFIXES):
                (out / path.name).write_text(_MODULES.sub("boneyard.api.v1", path.read_text()))
        # Binary, and it names proto packages only (never a Python module): copied as it is.
        shutil.copyfile(made / DESCRIPTOR_SET, out / DESCRIPTOR_SET)
    return generated_files(out)


def _protoc(out: Path) -> None:
    """Run protoc on every .proto file, writing into ``out`` as protoc lays it out."""
    files = [str(p) for p in proto_files()]
    args = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"--proto_path={PROTO_ROOT}",
        f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
        f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
        f"--plugin=protoc-gen-connectrpc={_plugin('protoc-gen-connectrpc')}",
        f"--python_out={out}",
        f"--mypy_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_grpc_out={out}",
        # Connect and gRPC-Web services over Google's protobuf messages, asyncio only.
        f"--connectrpc_out={out}",
        "--connectrpc_opt=protobuf=google,io=async",
        # Every file with its imports (google/protobuf/timestamp.proto), so that the set
        # stands alone, and with its comments (the source info), for reflection and the
        # reference.
        f"--descriptor_set_out={out / DESCRIPTOR_SET}",
        "--include_imports",
        "--include_source_info",
        *files,
    ]
    # Relative paths keep the absolute checkout path out of the generated code.
    result = subprocess.run(args, cwd=PROTO_ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"protoc failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    # grpc_python_out writes a *_pb2_grpc.py for every file; keep only those with services.
    for grpc_file in (out / PACKAGE).rglob("*_pb2_grpc.py"):
        proto = PROTO_ROOT / grpc_file.relative_to(out).with_name(
            grpc_file.name.removesuffix("_pb2_grpc.py") + ".proto"
        )
        if not _has_service(proto):
            grpc_file.unlink()
            stub = grpc_file.with_suffix(".pyi")
            if stub.exists():
                stub.unlink()


def _has_service(proto: Path) -> bool:
    return any(line.lstrip().startswith("service ") for line in proto.read_text().splitlines())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default: api/v1, and the reference into docs/; with --out, the "
        "reference too goes into the folder)",
    )
    args = parser.parse_args(argv)
    out = (args.out or OUT).resolve()
    written = generate(out)
    reference = out / REFERENCE.name if args.out is not None else REFERENCE
    try:
        reference.write_text(api_reference.render((out / DESCRIPTOR_SET).read_bytes()))
    except api_reference.ReferenceError as error:
        raise SystemExit(f"the API reference: {error}") from None
    print(f"generated {len(written)} files under {out} and {reference}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
