"""What is checked in of the web app is what its sources make: the generated code of the
TypeScript client package, ``clients/typescript/src/gen``, is what protoc-gen-es makes of the
.proto files (``buf generate`` into a temporary directory, compared byte for byte), and the
built app under ``server/transport/http/webapp`` (what
the HTTP listener serves at ``/``) is what ``vite build`` makes of ``web/`` (built into a
temporary directory, compared byte for byte). ``make web`` regenerates and rebuilds both.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.web.web_helpers import REPO, node, npm_tool

GENERATED = REPO / "clients" / "typescript" / "src" / "gen"
BUILT = REPO / "server" / "transport" / "http" / "webapp"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _compare(fresh: dict[str, bytes], checked_in: dict[str, bytes], what: str) -> None:
    assert fresh, f"{what}: nothing was made"
    missing = sorted(set(fresh) - set(checked_in))
    extra = sorted(set(checked_in) - set(fresh))
    stale = sorted(n for n in set(fresh) & set(checked_in) if fresh[n] != checked_in[n])
    assert not (missing or extra or stale), (
        f"{what} is stale: run `make web` and check in the result (missing: {missing}, "
        f"not made any more: {extra}, different: {stale})"
    )


def test_the_typescript_client_is_what_the_proto_files_generate(tmp_path: Path) -> None:
    node()
    npm_tool("protoc-gen-es")
    result = subprocess.run(
        [str(npm_tool("buf")), "generate", "--template", "buf.gen.web.yaml", "-o", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    fresh = _tree(tmp_path / GENERATED.relative_to(REPO))
    _compare(fresh, _tree(GENERATED), "clients/typescript/src/gen")


def test_the_built_web_app_is_what_its_sources_build(tmp_path: Path) -> None:
    node()
    out = tmp_path / "webapp"
    result = subprocess.run(
        [
            str(npm_tool("vite")),
            "build",
            "web",
            "--outDir",
            str(out),
            "--emptyOutDir",
            "--logLevel",
            "warn",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    _compare(_tree(out), _tree(BUILT), "server/transport/http/webapp")


def test_the_web_app_references_only_files_it_ships() -> None:
    index = (BUILT / "index.html").read_text(encoding="utf-8")
    assets = [p.name for p in (BUILT / "assets").iterdir()]
    assert assets and all(f"./assets/{name}" in index for name in assets), (index, assets)
