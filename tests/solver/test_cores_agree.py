"""The C core (``boneyard.engine._solver_c``, built by the install) and the pure-Python fallback
(``boneyard.engine._solver_core``) are the same algorithm: they give the same values, on positions far
bigger than brute force can check, whole hands included."""

from __future__ import annotations

import os
import random

import pytest

from boneyard import engine
from boneyard.engine.contracts import DOUBLES, FOLLOW_ME, Contract
from boneyard.engine.rulesets import ruleset
from boneyard.engine.solver import CORES, Game, Position, SearchAborted, Solver
from tests.solver.oracle import random_position

needs_c = pytest.mark.skipif("c" not in CORES, reason="the C extension is not built")


def test_the_install_built_the_c_core() -> None:
    """``pip install -e .`` compiles it (set BONEYARD_NO_C_SOLVER=1 where there is no compiler)."""
    if os.environ.get("BONEYARD_NO_C_SOLVER"):
        pytest.skip("BONEYARD_NO_C_SOLVER is set")
    assert CORES == ("c", "python")


CASES = [
    ("texas42", Contract.of_trump(6), "points", ()),
    ("texas42", Contract.of_trump(DOUBLES), "points", ()),
    ("texas42", Contract.of_trump(FOLLOW_ME), "tricks", ()),
    ("texas42-house", Contract.nello(), "tricks", (3,)),
    ("moon", Contract.of_trump(2), "tricks", ()),
    ("moon", Contract.of_trump(FOLLOW_ME), "tricks", ()),
    ("moon-s1", Contract.of_trump(5), "tricks", ()),
]


@needs_c
@pytest.mark.parametrize(("preset", "contract", "objective", "out"), CASES)
def test_both_cores_agree_on_endgames_of_four_and_five_tricks(
    preset: str, contract: Contract, objective: str, out: tuple[int, ...]
) -> None:
    rules = ruleset(preset)
    game = Game.of(rules, contract, out, objective)  # type: ignore[arg-type]
    rng = random.Random(f"{preset} {contract} {objective}")
    for _ in range(6):
        position = random_position(rng, rules, game, rng.randint(4, 5))
        mover = position.to_move(game)
        side = game.team_of(mover)
        c, py = Solver(game, side, core="c"), Solver(game, side, core="python")
        assert c.value(position) == py.value(position)
        assert c.move_values(position) == py.move_values(position)
        lo, hi = rng.randint(0, 10), rng.randint(11, 30)
        # Windowed: both exact inside, both a bound on the same side outside.
        vc = Solver(game, side, core="c").value(position, lo, hi)
        vp = Solver(game, side, core="python").value(position, lo, hi)
        assert (vc <= lo) == (vp <= lo) and (vc >= hi) == (vp >= hi)
        if lo < vc < hi:
            assert vc == vp


@needs_c
@pytest.mark.parametrize("seed", range(3))
def test_both_cores_agree_on_a_whole_texas_42_hand(seed: int) -> None:
    rules = ruleset("texas42")
    hands, _ = engine.deal(bytes([seed, 42]), rules.tiles, 4, 7)
    game = Game.of(rules, Contract.of_trump(seed + 2))
    position = Position(hands, leader=seed)
    assert Solver(game, (0, 2), core="c").value(position) == Solver(
        game, (0, 2), core="python"
    ).value(position)


@needs_c
def test_both_cores_agree_on_a_whole_moon_hand() -> None:
    rules = ruleset("moon")
    hands, _ = engine.deal(b"moon hand", rules.tiles, 3, 7)
    game = Game.of(rules, Contract.of_trump(DOUBLES))
    position = Position(hands, leader=1)
    c = Solver(game, (1,), core="c").move_values(position)
    assert c == Solver(game, (1,), core="python").move_values(position)


@pytest.mark.parametrize("core", CORES)
def test_a_search_past_its_node_limit_stops_with_search_aborted(core: str) -> None:
    rules = ruleset("texas42")
    hands, _ = engine.deal(b"limit", rules.tiles, 4, 7)
    solver = Solver(Game.of(rules, Contract.of_trump(4)), (0, 2), core=core)  # type: ignore[arg-type]
    solver.node_limit = 50
    with pytest.raises(SearchAborted):
        solver.value(Position(hands, leader=0))
    solver.node_limit = 0
    assert 0 <= solver.value(Position(hands, leader=0)) <= 42
