"""The answers holding a view, encoded once (``boneyard.server.games.answers``), are byte for
byte what their messages serialize to, for every seat and spectator at every step of games of
every preset, and for versions whose varint takes one byte or several."""

from __future__ import annotations

import pytest

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import game_service_pb2
from boneyard.engine import GameState
from boneyard.server.games.answers import action_answer, view_answer
from tests.server.test_codec import SEEDS, TABLES, play

VERSIONS = (1, 127, 128, 300, 16_383, 16_384, 2**32 + 5)
"""Versions at the edges of a varint's bytes (one byte up to 127, two up to 16,383 ...)."""


def _positions() -> list[GameState]:
    states: list[GameState] = []
    for rules in TABLES:
        game = play(rules, SEEDS[0])
        states += [step.after for step in game.steps]
    return states


@pytest.fixture(scope="module")
def positions() -> list[GameState]:
    return _positions()


def _view(state: GameState, seat: int | None, version: int) -> object:
    return codec.view_to_proto(engine.view(state, seat), version)


def test_a_get_view_answer_is_the_bytes_of_its_message(positions: list[GameState]) -> None:
    for number, state in enumerate(positions, start=1):
        for seat in (None, *range(state.rules.players)):
            message = game_service_pb2.GetViewResponse(view=_view(state, seat, number))
            assert view_answer(state, seat, number) == message.SerializeToString(deterministic=True)


def test_an_action_answer_is_the_bytes_of_its_message(positions: list[GameState]) -> None:
    for number, state in enumerate(positions, start=1):
        for seat in range(state.rules.players):
            message = game_service_pb2.SubmitActionResponse(
                version=number, view=_view(state, seat, number)
            )
            assert action_answer(state, seat, number) == message.SerializeToString(
                deterministic=True
            )


@pytest.mark.parametrize("version", VERSIONS)
def test_an_answer_at_any_version_reads_back_as_its_message(
    positions: list[GameState], version: int
) -> None:
    state = positions[len(positions) // 2]
    read = game_service_pb2.SubmitActionResponse.FromString(action_answer(state, 0, version))
    assert read.version == version
    assert read == game_service_pb2.SubmitActionResponse(
        version=version, view=_view(state, 0, version)
    )
    viewed = game_service_pb2.GetViewResponse.FromString(view_answer(state, None, version))
    assert viewed.view == _view(state, None, version)
