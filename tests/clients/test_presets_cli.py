"""The presets the command line knows are the server's (GameService.ListPresets), never a list
of its own: ``boneyard presets`` lists them, and ``play --game`` and ``bot --accept`` refuse a
preset the server does not have, naming those it has."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from boneyard import engine
from boneyard.clients.api import Client
from tests.clients.cli_helpers import run_cli
from tests.server.process_helpers import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    d = tmp_path_factory.mktemp("presets")
    with ServerProcess.start(d / "server.log", f"sqlite:///{d / 'boneyard.db'}") as running:
        yield running


def test_the_client_reads_the_servers_presets(server: ServerProcess) -> None:
    with Client(server.address) as client:
        presets = client.presets()
    assert [p.name for p in presets] == list(engine.preset_names())
    assert {p.name: p.rules.players for p in presets}["moon-no-widow"] == 3


def test_presets_lists_each_with_its_game_table_size_and_description(
    server: ServerProcess,
) -> None:
    done = run_cli("presets", "--server", server.address)
    assert done.returncode == 0, done.explain()
    rows = [" ".join(line.split()) for line in done.lines]
    for name, rules in engine.PRESETS.items():
        game = "Moon" if rules.is_moon else "Texas 42"
        description = engine.PRESET_DESCRIPTIONS[name]
        assert any(
            row.startswith(f"│ {name} │ {game} │ {rules.players} │ {description}") for row in rows
        ), done.explain()


def test_play_refuses_a_preset_the_server_does_not_have_naming_those_it_has(
    server: ServerProcess,
) -> None:
    with Client(server.address) as client:
        before = len(list(client.games()))
        done = run_cli("play", "--server", server.address, "--game", "chess", "--bots", "3")
        assert done.returncode == 2, done.explain()
        said = " ".join(done.stderr.split())
        assert f"no preset 'chess' on {server.address}: choose one of texas42, texas42-house" in said
        assert len(list(client.games())) == before


def test_a_bot_accepting_challenges_refuses_a_preset_the_server_does_not_have(
    server: ServerProcess,
) -> None:
    done = run_cli(
        "bot", "--server", server.address, "--key", "by_any_key", "--accept", "moon,chess"
    )
    assert done.returncode == 2, done.explain()
    assert "no preset 'chess'" in " ".join(done.stderr.split())
