"""Strategies from outside Boneyard (issue 16): the "Plug in a strategy" package of docs/bots.md,
installed with pip into a directory of its own (on PYTHONPATH, dist-info and all, so its entry
point is found; the project's venv is left alone), plays a real game against a real server by
its entry point's name; the same module plays by ``MODULE:NAME``; a bad spec is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from boneyard.bots.expert import DEFAULT_MOVE_MS, ExpertStrategy
from boneyard.bots.random_play import RandomStrategy
from boneyard.clients.api import Client
from boneyard.clients.strategies import StrategySpecError, load_strategy
from tests.clients.cli_helpers import BONEYARD, RUN_TIMEOUT
from tests.markdown_helpers import REPO, code_blocks, section
from tests.server.process_helpers import ServerProcess, clean_env


def _package(tmp_path: Path) -> Path:
    """The guide's example package, written out as printed."""
    text = section(REPO / "docs" / "bots.md", "Plug in a strategy")
    (toml,) = code_blocks(text, "toml")
    (module,) = code_blocks(text, "python")
    package = tmp_path / "first-legal"
    package.mkdir()
    (package / "pyproject.toml").write_text(toml, encoding="utf-8")
    (package / "first_legal.py").write_text(module, encoding="utf-8")
    return package


def _bot(server: ServerProcess, preset: str, spec: str, pythonpath: Path, cwd: Path) -> str:
    done = subprocess.run(
        [str(BONEYARD), "bot", "--server", server.address, "--new", preset, "--strategy", spec],
        capture_output=True,
        check=False,
        text=True,
        env=clean_env(PYTHONPATH=str(pythonpath)),
        cwd=cwd,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "final score:" in done.stdout, done.stdout
    return done.stdout.split()[1]  # "game GAME_ID" comes first


def test_an_installed_strategy_plays_by_its_entry_point_and_by_module_name(tmp_path: Path) -> None:
    package = _package(tmp_path)
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(package)],
        check=True,
        capture_output=True,
        timeout=RUN_TIMEOUT,
    )
    assert list(site.glob("first_legal-*.dist-info/entry_points.txt"))
    elsewhere = tmp_path / "elsewhere"  # not the package's directory: found through PYTHONPATH
    elsewhere.mkdir()
    with ServerProcess.start(tmp_path / "server.log", f"sqlite:///{tmp_path / 'b.db'}") as server:
        by_entry_point = _bot(server, "texas42", "first-legal,heuristic", site, elsewhere)
        # (Beside heuristic bots, which bring a game to its end however the plug-in plays.)
        by_module = _bot(server, "moon", "first_legal:FirstLegal,heuristic", package, elsewhere)
        with Client(server.address) as client:
            seated = [s.player_name for s in client.game(by_entry_point).seats]
            assert seated == ["first-legal bot", "heuristic bot"] * 2
            seated = [s.player_name for s in client.game(by_module).seats]
            assert seated == ["first_legal:FirstLegal bot", "heuristic bot", "first_legal:FirstLegal bot"]
            assert client.game(by_module).status == client.game(by_entry_point).status


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no-such-strategy", "nor an entry point of the group 'boneyard.strategies'"),
        ("no_such_module_xyz:Thing", "cannot import module 'no_such_module_xyz'"),
        ("json:NoSuchThing", "module 'json' has no 'NoSuchThing'"),
        ("json:__version__", "names a str: it must be a class"),
        ("fractions:Fraction", "Fraction has no choose(view) method"),
        ("json:JSONDecoder", "JSONDecoder(seed) failed: TypeError"),
        (":Thing", "MODULE:NAME (both given)"),
    ],
)
def test_a_bad_strategy_spec_is_a_usage_error_that_says_why(spec: str, says: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BONEYARD), "bot", "--server", "127.0.0.1:1", "--new", "texas42", "--strategy", spec],
        capture_output=True, text=True, env=clean_env(), cwd=tmp_path, timeout=RUN_TIMEOUT, check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr  # before any connection is tried
    assert says in " ".join(done.stderr.split()), done.stderr


def test_house_bots_play_built_in_strategies_only(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BONEYARD), "play", "--server", "127.0.0.1:1", "--house-bots", "3", "--strategy",
         "fractions:Fraction"],
        capture_output=True, text=True, env=clean_env(), cwd=tmp_path, timeout=RUN_TIMEOUT, check=False,
    )
    assert done.returncode == 2
    assert "has no choose(view) method" in " ".join(done.stderr.split())
    done = subprocess.run(
        [str(BONEYARD), "play", "--server", "127.0.0.1:1", "--house-bots", "3", "--strategy",
         "boneyard.bots.random_play:RandomStrategy"],
        capture_output=True, text=True, env=clean_env(), cwd=tmp_path, timeout=RUN_TIMEOUT, check=False,
    )
    assert done.returncode == 2
    assert "house bots play built-in strategies only" in " ".join(done.stderr.split())


def test_the_budget_reaches_a_built_in_strategy_and_an_outside_one_is_made_without_it() -> None:
    expert = load_strategy("expert", 3, move_ms=50)
    assert isinstance(expert, ExpertStrategy) and expert.move_ms == 50
    assert load_strategy("expert", 3).move_ms == DEFAULT_MOVE_MS  # type: ignore[attr-defined]
    outside = load_strategy("boneyard.bots.random_play:RandomStrategy", 3, move_ms=50)
    assert isinstance(outside, RandomStrategy)
    with pytest.raises(StrategySpecError, match="1..60000"):
        load_strategy("sampler", 3, move_ms=0)
