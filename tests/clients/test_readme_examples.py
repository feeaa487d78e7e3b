"""The "Write your own bot" examples of docs/bots.md run as printed, from outside the checkout (only
the installed ``boneyard`` package on the path), against a real server where they need one."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from boneyard.api.v1 import game_pb2
from boneyard.clients.api import Client
from boneyard.clients.competitor import Competitor
from boneyard.server.competition.accounts import key_hash, new_api_key
from tests.clients.cli_helpers import BONEYARD, RUN_TIMEOUT, kill_group
from tests.markdown_helpers import REPO, code_blocks, section
from tests.server.api_helpers import RunningServer
from tests.server.process_helpers import ServerProcess, clean_env

EXAMPLE_ADDRESS = "127.0.0.1:50051"


def bot_examples() -> list[str]:
    """The ```python blocks of docs/bots.md's "Write your own bot" section, in order."""
    return code_blocks(section(REPO / "docs" / "bots.md", "Write your own bot"), "python")


def run_example(code: str, cwd: Path, timeout: float = RUN_TIMEOUT) -> subprocess.Popen[str]:
    """The example in a fresh interpreter whose working directory is not the checkout."""
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def test_the_guide_has_both_bot_examples() -> None:
    network, offline = bot_examples()
    assert EXAMPLE_ADDRESS in network and "SubmitAction" in network
    assert "from boneyard import engine" in offline


def test_the_offline_example_plays_a_whole_game(tmp_path: Path) -> None:
    _, offline = bot_examples()
    proc = run_example(offline, tmp_path)
    out, _ = proc.communicate(timeout=RUN_TIMEOUT)
    assert proc.returncode == 0, out
    assert re.fullmatch(r"team [01] wins \(\d+, \d+\)\n", out), out


def test_the_network_example_plays_a_seat_to_the_end(tmp_path: Path) -> None:
    """The example's address is the server's default one; the server here listens on a free
    port, so that is the one thing changed. The other seats are filled by ``boneyard bot``, as
    the example's comment says."""
    network, _ = bot_examples()
    with ServerProcess.start(tmp_path / "server.log", f"sqlite:///{tmp_path / 'b.db'}") as server:
        proc = run_example(network.replace(EXAMPLE_ADDRESS, server.address), tmp_path)
        bots: list[subprocess.Popen[str]] = []
        try:
            with Client(server.address) as api:
                game_id = _game_of(api, "mybot", proc)
                for seat in (1, 2, 3):
                    bots.append(
                        subprocess.Popen(
                            [
                                str(BONEYARD),
                                "bot",
                                "--server",
                                server.address,
                                "--game",
                                game_id,
                                "--seat",
                                str(seat),
                                "--strategy",
                                "random",
                            ],
                            env=clean_env(),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            text=True,
                            start_new_session=True,
                        )
                    )
                out, _ = proc.communicate(timeout=RUN_TIMEOUT)
                assert proc.returncode == 0, out
                assert api.game(game_id).status == game_pb2.GAME_STATUS_FINISHED
        finally:
            for p in (proc, *bots):
                kill_group(p)


def _game_of(api: Client, player: str, proc: subprocess.Popen[str]) -> str:
    """The open game in which ``player`` sat down (the example prints nothing)."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        for game in api.games(status=game_pb2.GAME_STATUS_OPEN):
            if any(seat.player_name == player for seat in game.seats):
                return game.game_id
        if proc.poll() is not None:
            pytest.fail(f"the example exited before a seat was taken:\n{proc.communicate()[0]}")
        time.sleep(0.05)
    pytest.fail("the example took no seat")


def test_the_account_example_plays_its_game_on_one_stream(tmp_path: Path) -> None:
    """docs/bots.md's "An account's bot" example, as printed but for the server's port, plays
    one seat of a game reserved for four bot accounts (the other three: ``Competitor``s at
    ``--concurrency 1``, as ``boneyard bot --key`` runs) to the end."""
    (example,) = code_blocks(
        section(REPO / "docs" / "bots.md", "An account's bot, every game on one stream"), "python"
    )
    assert EXAMPLE_ADDRESS in example and "PlayTurns" in example
    server = RunningServer(f"sqlite:///{tmp_path / 'a.db'}")
    others: list[Competitor] = []
    threads: list[threading.Thread] = []
    try:
        four = [_account(server, "bot") for _ in range(4)]
        organiser = _account(server, "player")[1]
        proc = subprocess.Popen(
            [sys.executable, "-c", example.replace(EXAMPLE_ADDRESS, server.address)],
            cwd=tmp_path,
            env={**clean_env(), "BONEYARD_KEY": four[0][1]},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            for _, key in four[1:]:
                competitor = Competitor(
                    Client(server.address), key, "random", games=1, concurrency=1
                )
                others.append(competitor)
                threads.append(threading.Thread(target=competitor.run, daemon=True))
                threads[-1].start()
            with Client(server.address) as api:
                game = api.create_game(
                    "texas42",
                    {"hand_limit": "1"},
                    reservations={seat: name for seat, (name, _) in enumerate(four)},
                    key=organiser,
                )
                out, _ = proc.communicate(timeout=RUN_TIMEOUT)
                assert proc.returncode == 0, out
                assert out.endswith(f"game {game.game_id} over\n"), out
                assert api.game(game.game_id).status == game_pb2.GAME_STATUS_FINISHED
        finally:
            kill_group(proc)
    finally:
        for competitor in others:
            competitor.stop()
        for thread in threads:
            thread.join(timeout=RUN_TIMEOUT)
        for competitor in others:
            competitor.client.close()
        server.close()


def _account(server: RunningServer, kind: str) -> tuple[str, str]:
    name = f"{kind}-{uuid.uuid4().hex[:8]}"
    key = new_api_key()
    server.app.competition.create_account(str(uuid.uuid4()), name, kind, key_hash(key))  # type: ignore[arg-type]
    return name, key
