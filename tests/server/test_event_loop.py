"""The server's event loop: uvloop's where it is installed, asyncio's on request, the same game
either way (``boneyard.server.ops.event_loop``)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from process_helpers import SERVER_BIN, ServerProcess, clean_env, create_game, play_one, seat_all

from boneyard.server.ops import event_loop


def _play_a_few(server: ServerProcess) -> None:
    stub = server.stub()
    game_id = create_game(stub)
    tokens = seat_all(stub, game_id)
    for _ in range(6):
        assert play_one(stub, game_id, tokens) is not None


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop is not installed on Windows")
def test_the_server_runs_on_uvloop_by_default(tmp_path: Path) -> None:
    with ServerProcess.start(tmp_path / "server.log", f"sqlite:///{tmp_path / 'b.db'}") as server:
        _play_a_few(server)
        assert "event loop uvloop" in server.log_text()
        assert server.terminate() == 0


def test_asyncio_s_own_loop_is_chosen_by_option_or_environment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'b.db'}"
    log = tmp_path / "server.log"
    with ServerProcess.start(log, url, extra_args=["--event-loop", "asyncio"]) as server:
        _play_a_few(server)
        assert "event loop asyncio" in server.log_text()
        assert server.terminate() == 0
    env = clean_env(BONEYARD_EVENT_LOOP="asyncio")
    with ServerProcess.start(log, url, env=env) as server:
        _play_a_few(server)
        assert "event loop asyncio" in server.log_text()
        assert server.terminate() == 0


def test_an_unknown_event_loop_is_refused_before_anything_starts(tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    for env in (clean_env(), clean_env(BONEYARD_EVENT_LOOP="tokio")):
        args = [str(SERVER_BIN), "--database-url", f"sqlite:///{db}", "--listen", "127.0.0.1:0"]
        if "BONEYARD_EVENT_LOOP" not in env:
            args += ["--event-loop", "tokio"]
        result = subprocess.run(
            args, check=False, capture_output=True, text=True, timeout=60, env=env
        )
        assert result.returncode == 2, result.stdout + result.stderr
        assert "event" in result.stderr.lower() and "Traceback" not in result.stderr
    assert not db.exists()


def test_auto_is_uvloop_when_installed_and_asyncio_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    installed = importlib.util.find_spec("uvloop") is not None
    assert event_loop.chosen("auto") == ("uvloop" if installed else "asyncio")
    assert event_loop.chosen("asyncio") == "asyncio"
    with pytest.raises(ValueError, match="one of"):
        event_loop.chosen("tokio")

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "uvloop" else real_find_spec(name, *a),
    )
    assert event_loop.chosen("auto") == "asyncio"
    with pytest.raises(event_loop.LoopChoiceError, match="not installed"):
        event_loop.chosen("uvloop")


def test_run_gives_back_what_the_coroutine_returns_on_either_loop() -> None:
    async def answer() -> int:
        return 42

    for loop in {event_loop.chosen("auto"), "asyncio"}:
        assert event_loop.run(answer(), loop) == 42
