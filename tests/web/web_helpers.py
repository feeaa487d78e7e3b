"""Helpers of the web app's tests: where node, Chromium and the npm tools are, a node script of
``web/e2e/`` run as a process with its lines read as they come ("game ID", "watching",
"screenshot PATH", "report {...}"), bots in processes of their own for the other seats, and
the TypeScript client package (``clients/typescript``) built into a front end's
``node_modules`` as ``npm install`` would put it.

Without node, the npm packages (``npm ci``) or Chromium the tests skip and say what is missing,
unless ``BONEYARD_BROWSER_TESTS=required`` (``.ci/run`` sets it): then they fail, so CI never
skips them silently.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_MODULES = REPO / "node_modules"
CLIENT_PACKAGE = REPO / "clients" / "typescript"
E2E = REPO / "web" / "e2e"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
BOT = Path(sys.executable).parent / "boneyard"
SCRIPT_TIMEOUT = 900.0
"""A hang guard for one browser script (a whole game is well under a minute here), never a
bound on speed."""


def _missing(what: str) -> None:
    if os.environ.get("BONEYARD_BROWSER_TESTS") == "required":
        pytest.fail(f"{what} (BONEYARD_BROWSER_TESTS=required)")
    pytest.skip(what)


def node() -> str:
    found = shutil.which("node")
    if found is None:
        _missing("node is not installed: the web tests need node 20+ and `npm ci`")
    assert found is not None
    return found


def npm_tool(name: str) -> Path:
    """A binary of the pinned npm packages (``node_modules/.bin``)."""
    tool = NODE_MODULES / ".bin" / name
    if not tool.exists():
        _missing(f"{tool.relative_to(REPO)} is missing: run `npm ci` (make setup-web)")
    return tool


def install_client_package(where: Path) -> Path:
    """``where/node_modules`` as a front end has it after installing ``@boneyard/client``: the
    package built by ``tsc`` (its ``dist/``, with its ``package.json``), beside the pinned npm
    packages (links to the repository's, its peers among them); returns the package's folder."""
    node()
    modules = where / "node_modules"
    package = modules / "@boneyard" / "client"
    package.mkdir(parents=True)
    for entry in NODE_MODULES.iterdir():
        if not entry.name.startswith("."):
            (modules / entry.name).symlink_to(entry)
    built = subprocess.run(
        [str(npm_tool("tsc")), "-p", str(CLIENT_PACKAGE), "--outDir", str(package / "dist")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    shutil.copy(CLIENT_PACKAGE / "package.json", package / "package.json")
    return package


def chromium() -> Path:
    node()
    npm_tool("playwright-core")
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"{CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium")
    return CHROMIUM


@dataclass
class ScriptRun:
    """What a browser script said: its report, its screenshots, and every line."""

    returncode: int
    report: dict[str, Any]
    screenshots: list[Path]
    lines: list[str]
    stderr: str

    def explain(self) -> str:
        return (
            f"exit {self.returncode}\nstdout:\n"
            + "\n".join(self.lines)
            + f"\nstderr:\n{self.stderr}"
        )


def run_script(
    name: str,
    base_url: str,
    out_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    on_line: Callable[[str], object] = lambda line: None,
    timeout: float = SCRIPT_TIMEOUT,
    browser: bool = True,
    args: Sequence[str] = (),
) -> ScriptRun:
    """Run ``web/e2e/NAME`` (or the script at an absolute path) against the server at
    ``base_url``; ``on_line`` sees each stdout line as it comes (to seat bots when the script
    says so). ``browser=False``: a script that needs no Chromium; ``args``: its arguments."""
    full_env = {
        **os.environ,
        "BONEYARD_URL": base_url,
        "OUT_DIR": str(out_dir),
        **({"CHROMIUM": str(chromium())} if browser else {}),
        **(env or {}),
    }
    proc = subprocess.Popen(
        [node(), str(E2E / name), *args],
        cwd=REPO,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    stderr: list[str] = []

    def pump_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def pump_err() -> None:
        assert proc.stderr is not None
        stderr.extend(proc.stderr)

    threads = [threading.Thread(target=f, daemon=True) for f in (pump_out, pump_err)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    report: dict[str, Any] = {}
    shots: list[Path] = []
    try:
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.1))
            except queue.Empty:
                raise AssertionError(
                    f"{name} did not finish in {timeout} s:\n" + "\n".join(seen) + "".join(stderr)
                ) from None
            if line is None:
                break
            seen.append(line)
            if line.startswith("report "):
                report = json.loads(line.removeprefix("report "))
            elif line.startswith("screenshot "):
                shots.append(Path(line.removeprefix("screenshot ")))
            on_line(line)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for thread in threads:
            thread.join(timeout=10)
    return ScriptRun(proc.returncode, report, shots, seen, "".join(stderr))


@dataclass
class Bots:
    """Bot processes (``boneyard bot``), one per seat, killed on exit."""

    server: str
    log_dir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def seat(self, game_id: str, seats: list[int], strategy: str = "heuristic") -> None:
        for seat in seats:
            log = open(self.log_dir / f"bot-{game_id[:8]}-{seat}.log", "wb")  # noqa: SIM115 - closed with the process
            self.procs.append(
                subprocess.Popen(
                    [
                        str(BOT),
                        "bot",
                        "--server",
                        self.server,
                        "--game",
                        game_id,
                        "--seat",
                        str(seat),
                        "--name",
                        f"bot {seat}",
                        "--strategy",
                        strategy,
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
            log.close()

    def account(self, name: str, key: str, *args: str, strategy: str = "heuristic") -> None:
        """A bot for an account (``boneyard bot --key KEY ARGS``, the key in the environment,
        not on the command line): it plays every seat reserved for the account, and answers
        challenges (``--accept PRESET``) or seeks (``--seek PRESET``) as ``args`` say."""
        log = open(self.log_dir / f"bot-{name}.log", "wb")  # noqa: SIM115 - closed with the process
        self.procs.append(
            subprocess.Popen(
                [str(BOT), "bot", "--server", self.server, "--strategy", strategy, *args],
                env={**os.environ, "BONEYARD_KEY": key},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        log.close()

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)
        self.procs.clear()


@contextmanager
def bots(server: str, log_dir: Path) -> Iterator[Bots]:
    running = Bots(server, log_dir)
    try:
        yield running
    finally:
        running.stop()
