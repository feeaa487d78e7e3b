"""Fixtures of the CLI's end-to-end tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.clients.cli_helpers import Background


@pytest.fixture
def background(tmp_path: Path) -> Iterator[Callable[..., Background]]:
    """Start ``boneyard`` commands in the background; every one left is killed at the end."""
    started: list[Background] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Background:
        bg = Background(args, tmp_path / "cli-logs", env)
        started.append(bg)
        return bg

    yield start
    for bg in started:
        bg.kill()
