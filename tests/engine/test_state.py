"""States are frozen values: ``state.replace`` makes a changed copy of the fields it is named,
and nothing else."""

from __future__ import annotations

import dataclasses

import pytest

from boneyard import engine
from boneyard.engine import Deal, GameState
from boneyard.engine.state import replace


def _dealt() -> GameState:
    state = engine.replay(engine.start(engine.ruleset("texas42")))
    for event in engine.decide(state, Deal(b"state")):
        state = engine.evolve(state, event)
    return state


def test_replace_changes_the_named_fields_of_a_copy() -> None:
    state = _dealt()
    assert state.hand is not None
    hand = replace(state.hand, turn=None)
    assert hand.turn is None and state.hand.turn is not None
    assert dataclasses.replace(state.hand, turn=None) == hand
    assert replace(state, hand=hand).hand is hand


def test_replace_refuses_a_field_the_state_does_not_have() -> None:
    state = _dealt()
    assert state.hand is not None
    with pytest.raises(TypeError, match="HandState has no field trun"):
        replace(state.hand, trun=None)
    with pytest.raises(TypeError, match="GameState has no field score"):
        replace(state, score=(1, 0))


def test_a_state_cannot_be_changed_in_place() -> None:
    state = _dealt()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.deals = 9  # type: ignore[misc]
    assert state.hand is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.hand.turn = 3  # type: ignore[misc]
