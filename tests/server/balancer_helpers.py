"""HAProxy in front of ``boneyard-server`` processes, run from the sample configuration the
documentation ships (``docs/haproxy.cfg``), its addresses replaced by the processes' own.

Not a conftest: ``tests/server/test_load_balancer.py`` and ``benchmarks/bench_balancer.py``
import it.

- ``haproxy_config``: ``docs/haproxy.cfg`` for the given ports; N processes of the sample's
  three; ``affinity=False`` swaps the game header's hash for round robin (the benchmark's
  "without affinity");
- ``Balancer``: ``haproxy -db`` on that configuration, waited for until it sees every process
  up on its stats page; killed on exit.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import pytest

__all__ = [
    "HAPROXY_MISSING",
    "SAMPLE",
    "Balancer",
    "Ports",
    "find_haproxy",
    "haproxy",
    "haproxy_config",
]

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "docs" / "haproxy.cfg"
HAPROXY_MISSING = "haproxy is not installed (Debian: apt-get install haproxy; .ci/run installs it)"

# The sample's own addresses: the fronts, and each process's gRPC port and HTTP listener.
_FRONT_GRPC, _FRONT_HTTP, _STATS = 50051, 8080, 8404
_GRPC = (50061, 50062, 50063)
_HTTP = (8081, 8082, 8083)


def find_haproxy() -> str | None:
    """The haproxy binary (on PATH, or Debian's /usr/sbin/haproxy), or ``None``."""
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/sbin/haproxy") if os.access(p, os.X_OK)), None
    )


def haproxy() -> str:
    """The haproxy binary; skips the test without one, or fails it where the load balancer's
    tests are required (``BONEYARD_HAPROXY_TESTS=required``, as ``.ci/run`` sets)."""
    found = find_haproxy()
    if found is None:
        if os.environ.get("BONEYARD_HAPROXY_TESTS") == "required":
            pytest.fail(f"{HAPROXY_MISSING} (BONEYARD_HAPROXY_TESTS=required)")
        pytest.skip(HAPROXY_MISSING)
    assert found is not None
    return found


@dataclass(frozen=True)
class Ports:
    grpc: int
    """The balancer's gRPC front."""
    http: int
    """The balancer's HTTP front."""
    stats: int
    """Its stats page (``/stats;csv``)."""


def haproxy_config(
    processes: Sequence[tuple[int, int]],
    ports: Ports,
    *,
    affinity: bool = True,
    logged: bool = False,
) -> str:
    """``docs/haproxy.cfg`` with its fronts on ``ports`` and its servers at ``processes``
    (``(grpc_port, http_port)`` each, 1 to 3 of them; the sample's other servers left out).
    ``affinity=False``: round robin instead of the game header's hash; ``logged``: each
    request and each health verdict in haproxy's output (a test's, not a benchmark's)."""
    if not 1 <= len(processes) <= len(_GRPC):
        raise ValueError(f"1 to {len(_GRPC)} processes, not {len(processes)}")
    text = SAMPLE.read_text()
    # Every address the sample names must be found, or the sample changed under the tests.
    expected = {
        f"bind 127.0.0.1:{_FRONT_GRPC} proto h2": f"bind 127.0.0.1:{ports.grpc} proto h2",
        f"bind 127.0.0.1:{_FRONT_HTTP}\n": f"bind 127.0.0.1:{ports.http}\n",
        f"bind 127.0.0.1:{_STATS}\n": f"bind 127.0.0.1:{ports.stats}\n",
    }
    for n, (grpc_port, http_port) in enumerate(processes):
        expected[f"127.0.0.1:{_GRPC[n]} id {n + 1} port {_HTTP[n]}\n"] = (
            f"127.0.0.1:{grpc_port} id {n + 1} port {http_port}\n"
        )
        expected[f"127.0.0.1:{_HTTP[n]} id {n + 1}\n"] = f"127.0.0.1:{http_port} id {n + 1}\n"
    for old, new in expected.items():
        if text.count(old) != 1:
            raise AssertionError(f"{SAMPLE} no longer holds {old.strip()!r} once")
        text = text.replace(old, new)
    for n in range(len(processes), len(_GRPC)):
        text = re.sub(rf"^\s*server boneyard{n + 1} .*\n", "", text, flags=re.MULTILINE)
    # What a failed test needs to tell a refused connection from a health check's verdict.
    log_lines = {
        "global\n": "global\n    log stderr format raw daemon\n",
        "defaults\n    mode http\n": "defaults\n    mode http\n    log global\n"
        "    option httplog\n    option log-health-checks\n",
    }
    for old, new in log_lines.items() if logged else ():
        if text.count(old) != 1:
            raise AssertionError(f"{SAMPLE} no longer holds {old.strip()!r} once")
        text = text.replace(old, new)
    if not affinity:
        hashed = "    balance hdr(boneyard-game)\n    hash-type consistent\n"
        if text.count(hashed) != 2:
            raise AssertionError(f"{SAMPLE} no longer hashes both backends on boneyard-game")
        text = text.replace(hashed, "    balance roundrobin\n")
    return text


class Balancer:
    """One ``haproxy`` process in the foreground (``-db``). Use as a context manager."""

    def __init__(self, proc: subprocess.Popen[bytes], ports: Ports, log_path: Path) -> None:
        self.proc = proc
        self.ports = ports
        self.log_path = log_path

    @classmethod
    def start(
        cls,
        directory: Path,
        processes: Sequence[tuple[int, int]],
        ports: Ports,
        *,
        affinity: bool = True,
        binary: str | None = None,
        logged: bool = False,
    ) -> Balancer:
        directory.mkdir(parents=True, exist_ok=True)
        config = directory / "haproxy.cfg"
        config.write_text(haproxy_config(processes, ports, affinity=affinity, logged=logged))
        log_path = directory / "haproxy.log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [binary or haproxy(), "-db", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return cls(proc, ports, log_path)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.ports.grpc}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.http}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def servers(self) -> dict[str, dict[str, str]]:
        """Each backend's servers and their status (``UP``, ``DOWN`` ...), from the stats
        page's CSV."""
        url = f"http://127.0.0.1:{self.ports.stats}/stats;csv"
        with urllib.request.urlopen(url, timeout=10) as answer:
            text = answer.read().decode()
        rows = csv.DictReader(io.StringIO(text.lstrip("# ")))
        out: dict[str, dict[str, str]] = {}
        for row in rows:
            if row["svname"] not in ("FRONTEND", "BACKEND"):
                out.setdefault(row["pxname"], {})[row["svname"]] = row["status"]
        return out

    def wait_until(self, up: int, timeout: float = 120.0) -> dict[str, dict[str, str]]:
        """Wait until both backends see exactly ``up`` servers UP (a hang guard, not a bound
        on speed); the stats then."""
        deadline = time.monotonic() + timeout
        seen: dict[str, dict[str, str]] = {}
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"haproxy exited with {self.proc.returncode}:\n{self.log_text()}"
                )
            try:
                seen = self.servers()
            except OSError:
                seen = {}
            counts = [sum(s == "UP" for s in b.values()) for b in seen.values()]
            if len(counts) == 2 and all(c == up for c in counts):
                return seen
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"haproxy did not see {up} servers up: {seen}\n{self.log_text()}"
                )
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
