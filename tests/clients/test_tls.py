"""TLS (issue 13, defect 7): ``boneyard-server --tls-cert FILE --tls-key FILE`` serves gRPC over
TLS only, and the clients reach it with ``boneyard --tls --ca FILE``; without TLS they cannot."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clients.cli_helpers import BONEYARD, RUN_TIMEOUT
from tests.server.process_helpers import ServerProcess, clean_env

FINAL = re.compile(r"^final score: .*; team \d wins$", re.MULTILINE)

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key (its own certificate authority)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def boneyard(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BONEYARD), *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=RUN_TIMEOUT,
        check=False,
    )


def test_a_bot_plays_a_whole_game_over_tls(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with ServerProcess.start(
        tmp_path / "server.log",
        f"sqlite:///{tmp_path / 'b.db'}",
        extra_args=["--tls-cert", str(cert), "--tls-key", str(key)],
        wait=False,
    ) as server:
        server.wait_for_line()
        done = boneyard(
            "--tls",
            "--ca",
            str(cert),
            "bot",
            "--server",
            server.address,
            "--new",
            "texas42",
            "--strategy",
            "random",
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert FINAL.search(done.stdout), done.stdout
        # In the clear, the same server cannot be reached.
        plain = boneyard("games", "--server", server.address)
        assert plain.returncode != 0, plain.stdout


def test_tls_cert_without_its_key_does_not_start(tmp_path: Path) -> None:
    cert, _ = self_signed(tmp_path)
    with ServerProcess.start(
        tmp_path / "server.log",
        f"sqlite:///{tmp_path / 'b.db'}",
        extra_args=["--tls-cert", str(cert)],
        wait=False,
    ) as server:
        assert server.proc.wait(timeout=60) != 0
        assert "--tls-cert and --tls-key go together" in server.log_text()


def test_ca_without_tls_is_a_usage_error(tmp_path: Path) -> None:
    cert, _ = self_signed(tmp_path)
    done = boneyard("--ca", str(cert), "games")
    assert done.returncode == 2 and "--ca is for --tls" in done.stderr
