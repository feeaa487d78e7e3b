"""The TypeScript client example of docs/api.md ("A TypeScript client") is type-checked (tsc,
strict) against the client package (clients/typescript, built and installed as a front end
would have it), and runs as printed in node against a real server's HTTP listener: it takes a
seat and plays it to the end while bots fill the other seats. Only its address is changed, to
the free port the server here listens on."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.markdown_helpers import code_blocks, section
from tests.server.process_helpers import ServerProcess
from tests.web.web_helpers import REPO, bots, install_client_package, npm_tool, run_script

README_URL = "http://127.0.0.1:8080"
TSCONFIG = """{
  "compilerOptions": {
    "target": "ES2022", "module": "ESNext", "moduleResolution": "bundler",
    "lib": ["ES2022", "DOM", "DOM.Iterable"], "types": [],
    "strict": true, "noEmit": true, "skipLibCheck": true
  },
  "include": ["example.ts"]
}
"""


def typescript_example() -> str:
    (example,) = code_blocks(section(REPO / "docs" / "api.md", "A TypeScript client"), "ts")
    return example


@pytest.fixture
def example_dir(tmp_path: Path) -> Path:
    """The example in a front end's folder, the client package installed beside it."""
    where = tmp_path / "front-end"
    install_client_package(where)
    (where / "tsconfig.json").write_text(TSCONFIG)
    return where


def test_the_example_type_checks(example_dir: Path) -> None:
    (example_dir / "example.ts").write_text(typescript_example())
    result = subprocess.run(
        [str(npm_tool("tsc")), "-p", str(example_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_the_example_plays_a_seat_to_the_end(example_dir: Path, tmp_path: Path) -> None:
    code = typescript_example()
    assert README_URL in code
    with ServerProcess.start(
        tmp_path / "server.log", f"sqlite:///{tmp_path / 'ts.db'}", http_listen="127.0.0.1:0"
    ) as server:
        (example_dir / "example.ts").write_text(code.replace(README_URL, server.http_url))
        # Types stripped and packages bundled by Vite's own bundler (rolldown, in the lock file).
        bundled = subprocess.run(
            [
                str(npm_tool("rolldown")),
                "example.ts",
                "--file",
                "example.mjs",
                "--format",
                "esm",
                "--platform",
                "node",
            ],
            cwd=example_dir,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert bundled.returncode == 0, bundled.stdout + bundled.stderr
        with bots(server.address, tmp_path) as seated:
            run = run_script(
                str(example_dir / "example.mjs"),
                server.http_url,
                tmp_path,
                on_line=lambda line: (
                    line.startswith("game ") and seated.seat(line.split()[1], [1, 2, 3])
                ),
                browser=False,
            )
        assert run.returncode == 0, run.explain()
        assert run.lines[0].startswith("game ")
        assert re.fullmatch(r"team [01] wins \(\d+, \d+\)", run.lines[-1]), run.explain()
