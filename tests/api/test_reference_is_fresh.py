"""The API reference, ``docs/api-reference.md``, is what ``make proto`` writes from the .proto
files' comments (proto/api_reference.py, through proto/generate.py): regenerated into a
temporary directory and compared. The same generator refuses comments that break its rules:
each method names the reasons it may be refused with, and only reasons the API has."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "proto"
REFERENCE = ROOT / "docs" / "api-reference.md"
DESCRIPTORS = ROOT / "api" / "v1" / "descriptors.binpb"


def _generator() -> ModuleType:
    """proto/api_reference.py (proto/ holds the API's tooling, not a package)."""
    spec = importlib.util.spec_from_file_location("api_reference", PROTO / "api_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("api_reference", module)
    spec.loader.exec_module(module)
    return module


def test_the_api_reference_is_what_the_proto_files_make(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(PROTO / "generate.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    fresh = (tmp_path / "api-reference.md").read_text()
    assert fresh == REFERENCE.read_text(), (
        "docs/api-reference.md is stale: run `make proto` and check in the result"
    )


def test_the_reference_has_every_service_method_message_and_reason() -> None:
    generator = _generator()
    api = generator.load(DESCRIPTORS.read_bytes())
    text = REFERENCE.read_text()
    for service in api.services:
        assert f"### `{service.name}`" in text
        for method in service.methods:
            assert f"#### `{service.name}.{method.name}`" in text
    for file in api.files:
        for message in file.messages:
            assert f"### `{message.name}`" in text, message.name
    for reason in api.reason_names():
        assert f"#### `{reason}`" in text, reason


def test_every_method_names_its_refusals_and_each_is_a_reason_the_api_has() -> None:
    generator = _generator()
    api = generator.load(DESCRIPTORS.read_bytes())
    refusals = generator.method_refusals(api)
    assert set(refusals) == {f"/{s.type_name}/{m.name}" for s in api.services for m in s.methods}
    assert refusals["/boneyard.v1.GameService/SubmitAction"][:3] == [
        "BAD_GAME_ID",
        "BAD_ARGUMENT",
        "GAME_NOT_FOUND",
    ]
    assert "NOT_YOUR_TURN" in refusals["/boneyard.v1.GameService/SubmitAction"]
    assert refusals["/boneyard.v1.GameService/ListPresets"] == []


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("", "names no refusals"),
        ("  // Refusals: NOT_A_REASON.", "is not an boneyard.v1.ErrorReason value"),
        ("  // Refusals: GAME_NOT_FOUND, GAME_NOT_FOUND.", "a reason is named twice"),
    ],
    ids=["none named", "unknown reason", "named twice"],
)
def test_a_method_comment_that_breaks_the_rules_stops_the_reference(
    tmp_path: Path, line: str, why: str
) -> None:
    """A copy of the API whose GetGame comment names no refusals, an unknown reason, or one
    twice: ``make proto`` stops, saying which method and why."""
    copy = tmp_path / "proto"
    subprocess.run(["cp", "-r", str(PROTO), str(copy)], check=True)
    service = copy / "boneyard" / "v1" / "game_service.proto"
    text = service.read_text()
    good = "  //\n  // Refusals: BAD_GAME_ID, GAME_NOT_FOUND.\n  rpc GetGame("
    assert good in text
    service.write_text(text.replace(good, (f"  //\n{line}\n" if line else "") + "  rpc GetGame("))
    result = subprocess.run(
        [sys.executable, str(copy / "generate.py"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode != 0
    assert "/boneyard.v1.GameService/GetGame" in result.stderr, result.stderr
    assert why in result.stderr, result.stderr
