"""The presets (``engine.PRESETS``): each is described for people in one line
(``PRESET_DESCRIPTIONS``, what GameService.ListPresets sends with it)."""

from __future__ import annotations

from boneyard.engine import PRESET_DESCRIPTIONS, PRESETS


def test_every_preset_is_described_in_one_line_that_names_its_game() -> None:
    assert list(PRESET_DESCRIPTIONS) == list(PRESETS)
    for name, line in PRESET_DESCRIPTIONS.items():
        game = "Moon" if PRESETS[name].is_moon else "Texas 42"
        assert line.startswith(game) and "\n" not in line and len(line) <= 80, name


def test_the_standard_texas_42_comes_first() -> None:
    assert next(iter(PRESETS)) == "texas42"
