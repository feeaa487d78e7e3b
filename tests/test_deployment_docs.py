"""The deployment files in docs/ say what the server really reads: the environment-file
example and the operator's guide (docs/operating.md) name every ``BONEYARD_*`` variable the
server's source reads (grepped, so a new variable cannot be forgotten), the example serves the
network only over TLS, and the systemd unit is one systemd accepts (``systemd-analyze verify``
where this machine has it) with the settings the guide promises."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
UNIT = REPO / "docs" / "boneyard.service"
ENV_EXAMPLE = REPO / "docs" / "boneyard.env.example"
OPERATING = REPO / "docs" / "operating.md"
LISTENERS = ("BONEYARD_LISTEN", "BONEYARD_HTTP_LISTEN")
LOOPBACK = ("127.0.0.1", "[::1]", "localhost")
VARIABLE = re.compile(r"\bBONEYARD_[A-Z][A-Z0-9_]*\b")


def _variables_the_server_reads() -> set[str]:
    """Every ``BONEYARD_*`` name in the server's source (main.py's flags, the admin
    commands, the store's migrations directory)."""
    names: set[str] = set()
    for path in (REPO / "server").rglob("*.py"):
        names |= set(VARIABLE.findall(path.read_text()))
    assert "BONEYARD_DATABASE_URL" in names and "BONEYARD_LISTEN" in names  # the grep works
    return names


def test_the_environment_example_names_every_variable_the_server_reads() -> None:
    named = set(VARIABLE.findall(ENV_EXAMPLE.read_text()))
    missing = _variables_the_server_reads() - named
    assert not missing, f"docs/boneyard.env.example lacks {sorted(missing)}"


def test_the_environment_example_is_assignments_and_comments_only() -> None:
    for number, line in enumerate(ENV_EXAMPLE.read_text().splitlines(), 1):
        if line and not line.startswith("#"):
            assert re.fullmatch(r"BONEYARD_[A-Z0-9_]+=\S*", line), f"line {number}: {line!r}"


def test_the_operators_guide_names_every_variable_the_server_reads() -> None:
    named = set(VARIABLE.findall(OPERATING.read_text()))
    missing = _variables_the_server_reads() - named
    assert not missing, f"docs/operating.md lacks {sorted(missing)}"


def _settings() -> dict[str, str]:
    """What the example sets (its assignments, not its comments)."""
    lines = ENV_EXAMPLE.read_text().splitlines()
    pairs = (line.partition("=") for line in lines if line and not line.startswith("#"))
    return {name: value for name, _, value in pairs}


def test_the_environment_example_serves_the_network_only_over_tls() -> None:
    """Without TLS seat tokens and keys travel in the clear (docs/operating.md): the example
    listens on loopback, or else speaks TLS. An unset listener is the server's default, which
    is loopback; an empty one is none."""
    settings = _settings()
    tls = bool(settings.get("BONEYARD_TLS_CERT")) and bool(settings.get("BONEYARD_TLS_KEY"))
    for name in LISTENERS:
        address = settings.get(name, "127.0.0.1:0")
        host = address.rpartition(":")[0]
        assert not address or host in LOOPBACK or tls, f"{name}={address} without TLS"


def test_the_environment_example_shows_how_to_serve_the_network_over_tls() -> None:
    commented = {
        line[1:].split("=", 1)[0]
        for line in ENV_EXAMPLE.read_text().splitlines()
        if re.fullmatch(r"#BONEYARD_[A-Z0-9_]+=\S*", line)
    }
    assert {"BONEYARD_TLS_CERT", "BONEYARD_TLS_KEY", *LISTENERS} <= commented


def _unit() -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=True, delimiters=("=",), comment_prefixes=("#",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    parser.read_string(UNIT.read_text())
    return parser


def test_the_unit_runs_the_venv_server_as_its_own_user_and_outlasts_the_shutdown_grace() -> None:
    unit = _unit()
    assert set(unit.sections()) == {"Unit", "Service", "Install"}
    service = unit["Service"]
    assert service["ExecStart"].split()[0] == "/opt/boneyard/venv/bin/boneyard-server"
    assert service["EnvironmentFile"] == "/etc/boneyard/boneyard.env"
    assert service["User"] == "boneyard" and service["User"] != "root"
    assert service["KillSignal"] == "SIGTERM"
    assert service["Restart"] == "on-failure"
    # The server's default grace (--shutdown-grace) is 10 s; systemd must not SIGKILL first.
    assert int(service["TimeoutStopSec"]) > 10
    for hardening in ("NoNewPrivileges", "PrivateTmp", "ProtectHome"):
        assert service[hardening] == "yes"
    assert service["ProtectSystem"] == "strict"
    # ... with the state directory, where the SQLite file lives, still writable.
    assert service["StateDirectory"] == "boneyard"
    assert service["WorkingDirectory"] == "/var/lib/boneyard"
    assert "/var/lib/boneyard" in service["ReadWritePaths"].split()
    assert unit["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_accepts_the_unit_without_a_warning(tmp_path: Path) -> None:
    # verify insists that ExecStart exists: point it at this venv's server for the check.
    unit = tmp_path / "boneyard.service"
    server = Path(sys.executable).parent / "boneyard-server"
    unit.write_text(UNIT.read_text().replace("/opt/boneyard/venv/bin/boneyard-server", str(server)))
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = done.stdout + done.stderr
    # systemd only warns (exit 0) about an unknown key or a bad value: any line about the
    # unit file is a mistake in it.
    assert done.returncode == 0 and str(unit) not in said, said
