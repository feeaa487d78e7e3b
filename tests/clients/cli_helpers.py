"""What the end-to-end tests of the CLI share: running ``boneyard`` commands as processes, to
their end (``run_cli``) or in the background (``Background``; the ``background`` fixture is in
conftest.py)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.server.process_helpers import SERVER_BIN, clean_env

__all__ = [
    "BONEYARD",
    "RUN_TIMEOUT",
    "Background",
    "Finished",
    "kill_group",
    "run_admin",
    "run_cli",
]

BONEYARD = Path(sys.executable).parent / "boneyard"
"""The CLI's console script in the venv running the tests."""

RUN_TIMEOUT = 240.0
"""Seconds a command that plays whole games may take before the test gives up."""


# --- processes ----------------------------------------------------------------------------


def kill_group(proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group of a child started with ``start_new_session``; reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - a zombie we cannot reap
        pass


@dataclass
class Finished:
    """A command that ran to its end."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.strip()]

    def explain(self) -> str:
        return (
            f"$ {' '.join(self.args)}\n--- exit {self.returncode}\n--- stdout:\n{self.stdout}"
            f"\n--- stderr:\n{self.stderr[-5000:]}"
        )


def run_admin(*args: str, timeout: float = RUN_TIMEOUT) -> Finished:
    """Run ``boneyard-server admin ARGS`` (the operator's commands) to its end."""
    return run_cli(*args, timeout=timeout, program=[str(SERVER_BIN), "admin"])


def run_cli(
    *args: str, timeout: float = RUN_TIMEOUT, program: Sequence[str] = (), stdin: str | None = None
) -> Finished:
    """Run ``boneyard ARGS`` (or ``program ARGS``) to its end (killed, and the test failed,
    after ``timeout``), with ``stdin`` typed in (none by default)."""
    argv = [*(program or [str(BONEYARD)]), *args]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(COLUMNS="200"),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        pytest.fail(
            f"{' '.join(argv)} did not finish in {timeout} s:\n{out[-5000:]}\n{err[-5000:]}"
        )
    finally:
        kill_group(proc)
    return Finished(argv, proc.returncode, out, err)


class Background:
    """A ``boneyard`` command in the background; its stdout lines are collected as they come,
    its stderr goes to a file."""

    def __init__(
        self, args: Sequence[str], log_dir: Path, env: dict[str, str] | None = None
    ) -> None:
        self.args = [str(BONEYARD), *args]
        log_dir.mkdir(parents=True, exist_ok=True)
        self._stderr_path = log_dir / f"stderr-{time.monotonic_ns()}.log"
        self._stderr = open(self._stderr_path, "w")  # noqa: SIM115 - closed in wait()/kill()
        self.proc = subprocess.Popen(
            self.args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env or clean_env(COLUMNS="200"),
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def next_line(self, timeout: float = 60.0) -> str:
        """The next line of stdout (fails if none comes in time or the process ends)."""
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no line from {self.args} in {timeout} s:\n{self.stderr_text()}")
        if line is None:
            pytest.fail(f"{self.args} ended before printing a line:\n{self.stderr_text()}")
        return line

    def stderr_text(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self._stderr_path.read_text(errors="replace")

    def explain(self) -> str:
        return (
            f"$ {' '.join(self.args)}\n--- stdout:\n"
            + "\n".join(self.lines[-40:])
            + f"\n--- stderr:\n{self.stderr_text()[-5000:]}"
        )

    def wait(self, timeout: float = RUN_TIMEOUT) -> Finished:
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            text = self.explain()
            self.kill()
            pytest.fail(f"did not finish in {timeout} s:\n{text}")
        self._reader.join(timeout=30)
        stderr = self.stderr_text()
        self._stderr.close()
        return Finished(self.args, self.proc.returncode, "\n".join(self.lines) + "\n", stderr)

    def kill(self) -> None:
        kill_group(self.proc)
        self._stderr.close()
