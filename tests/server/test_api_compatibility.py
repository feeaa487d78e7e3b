"""The `buf breaking` step (proto/check_breaking.py, run by `make lint` and `.ci/run`) on a copy
of the API in a git repository of its own: a change that breaks boneyard.v1 for existing
clients fails it, a compatible one passes, and the baseline is the last tag when there is one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.test_generated_is_fresh import _buf

ROOT = Path(__file__).resolve().parents[2]
SERVICE = Path("proto/boneyard/v1/game_service.proto")
FIELD = "  string strategy = 2;\n"


@pytest.fixture
def api(tmp_path: Path) -> Path:
    """A repository holding the API as it is now, in one commit."""
    if _buf() is None:
        pytest.skip("buf not found: `make setup-web` installs it into node_modules/")
    repo = tmp_path / "api"
    shutil.copytree(
        ROOT / "proto" / "boneyard",
        repo / "proto" / "boneyard",
        ignore=shutil.ignore_patterns("*.py", "*.pyi", "__pycache__"),
    )
    shutil.copy(ROOT / "proto" / "check_breaking.py", repo / "proto")
    shutil.copy(ROOT / "buf.yaml", repo)
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, "the API")
    return repo


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _commit(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)


def _edit(repo: Path, old: str, new: str) -> None:
    path = repo / SERVICE
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def _delete_a_field(repo: Path) -> None:
    _edit(repo, FIELD, "  reserved 2;\n")


def _add_a_field(repo: Path) -> None:
    _edit(repo, FIELD, FIELD + "  // A name for the bot.\n  string label = 3;\n")


def _check(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "proto/check_breaking.py", "--buf", str(_buf())],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_deleted_field_not_yet_committed_breaks_the_api(api: Path) -> None:
    _delete_a_field(api)
    result = _check(api)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "uncommitted changes" in result.stdout
    assert 'field "2" with name "strategy" on message "HouseBot" was deleted' in result.stdout
    assert "breaks boneyard.v1" in result.stderr


def test_a_deleted_field_in_the_last_commit_breaks_the_api(api: Path) -> None:
    _delete_a_field(api)
    _commit(api, "drop HouseBot.strategy")
    result = _check(api)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "the previous commit (no release is tagged yet)" in result.stdout
    assert '"strategy" on message "HouseBot" was deleted' in result.stdout


def test_a_new_field_is_compatible(api: Path) -> None:
    _add_a_field(api)
    _commit(api, "HouseBot.label")
    result = _check(api)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_break_since_the_last_release_is_caught_after_later_commits(api: Path) -> None:
    _git(api, "tag", "v0.1.0")
    _delete_a_field(api)
    _commit(api, "drop HouseBot.strategy")
    _edit(api, "  reserved 2;\n", "  reserved 2;\n  // A name for the bot.\n  string label = 3;\n")
    _commit(api, "HouseBot.label")
    result = _check(api)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "the last release, v0.1.0" in result.stdout


def test_a_repository_of_one_commit_has_nothing_to_compare(api: Path) -> None:
    result = _check(api)
    assert result.returncode == 0 and "nothing to check" in result.stdout
