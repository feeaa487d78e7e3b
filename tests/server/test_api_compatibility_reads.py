"""proto/check_breaking.py lets one change through that buf's FILE rules call breaking: a
method whose idempotency was unsaid declared ``NO_SIDE_EFFECTS`` (no byte changes on the wire;
Connect clients may then read with GET). Taking the mark away again breaks the clients that
read with GET, and stays refused. (The API's copy and its checks: test_api_compatibility.py.)"""

from __future__ import annotations

from pathlib import Path

from tests.server.test_api_compatibility import _check, _commit, _edit, api  # noqa: F401

UNMARKED = "  rpc CreateGame(CreateGameRequest) returns (CreateGameResponse);\n"
MARKED = (
    "  rpc ListPresets(ListPresetsRequest) returns (ListPresetsResponse) {\n"
    "    option idempotency_level = NO_SIDE_EFFECTS;\n"
    "  }\n"
)


def test_a_method_declared_free_of_side_effects_is_compatible(api: Path) -> None:  # noqa: F811
    _edit(
        api,
        UNMARKED,
        UNMARKED.replace(");\n", ") {\n    option idempotency_level = NO_SIDE_EFFECTS;\n  }\n"),
    )
    _commit(api, "CreateGame: NO_SIDE_EFFECTS")
    result = _check(api)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "allowed: proto/boneyard/v1/game_service.proto" in result.stdout
    assert '"CreateGame"' in result.stdout


def test_a_read_whose_mark_is_taken_away_breaks_the_api(api: Path) -> None:  # noqa: F811
    _edit(api, MARKED, MARKED.split(" {\n")[0] + ";\n")
    _commit(api, "ListPresets: unmarked")
    result = _check(api)
    assert result.returncode != 0, result.stdout + result.stderr
    assert '"ListPresets"' in result.stdout
    assert 'from "NO_SIDE_EFFECTS" to "IDEMPOTENCY_UNKNOWN"' in result.stdout


def test_another_idempotency_is_still_breaking(api: Path) -> None:  # noqa: F811
    _edit(
        api,
        UNMARKED,
        UNMARKED.replace(");\n", ") {\n    option idempotency_level = IDEMPOTENT;\n  }\n"),
    )
    _commit(api, "CreateGame: IDEMPOTENT")
    result = _check(api)
    assert result.returncode != 0, result.stdout + result.stderr
    assert 'to "IDEMPOTENT"' in result.stdout
