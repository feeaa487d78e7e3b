"""The solver's results are exact: they match brute-force minimax (``oracle.py``, built on the
engine's own ``legal_plays`` and ``trick_winner``) on random endgames of up to 3 tricks, for
every way of playing: Texas 42 under each kind of trump, counting points or tricks, nello with
the partner out, 42 with 3 players; Moon under suits, doubles and follow-me, and with trumping
allowed instead of following [S1]. Every core is checked (``CORES``)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from boneyard.engine.contracts import DOUBLES, FOLLOW_ME, Contract
from boneyard.engine.play import trick_winner
from boneyard.engine.rulesets import Ruleset, ruleset
from boneyard.engine.solver import CORES, Game, Position, Solver, solve
from boneyard.engine.tiles import parse_tile, parse_tiles
from tests.solver.oracle import hand_state, minimax, random_position


@dataclass(frozen=True)
class Case:
    name: str
    rules: Ruleset
    contract: Contract
    objective: str = "points"
    sitting_out: tuple[int, ...] = ()

    def game(self) -> Game:
        return Game.of(self.rules, self.contract, self.sitting_out, self.objective)  # type: ignore[arg-type]


TEXAS = ruleset("texas42")
HOUSE = ruleset("texas42-house")
MOON = ruleset("moon")
CASES = [
    Case("42 sixes trump", TEXAS, Contract.of_trump(6)),
    Case("42 blanks trump", TEXAS, Contract.of_trump(0)),
    Case("42 threes trump", TEXAS, Contract.of_trump(3)),
    Case("42 doubles trump", TEXAS, Contract.of_trump(DOUBLES)),
    Case("42 follow-me", TEXAS, Contract.of_trump(FOLLOW_ME)),
    Case("42 fives trump, tricks", TEXAS, Contract.of_trump(5), "tricks"),
    Case("42 nello, partner out", HOUSE, Contract.nello(), "tricks", (2,)),
    Case("42 nello doubles low", ruleset("texas42-house", nello_doubles="low"), Contract.nello(),
         "tricks", (0,)),
    Case("42 nello doubles own suit", ruleset("texas42-house", nello_doubles="own_suit"),
         Contract.nello(), "tricks", (1,)),
    Case("42 three players, fours", ruleset("texas42", players=3), Contract.of_trump(4)),
    Case("42 may trump when able to follow", ruleset("texas42", may_trump_when_able_to_follow=True),
         Contract.of_trump(2)),
    Case("moon fours trump", MOON, Contract.of_trump(4)),
    Case("moon blanks trump (0-0 alone)", MOON, Contract.of_trump(0)),
    Case("moon doubles trump", MOON, Contract.of_trump(DOUBLES)),
    Case("moon follow-me", MOON, Contract.of_trump(FOLLOW_ME)),
    Case("moon-s1 may trump when able to follow", ruleset("moon-s1"), Contract.of_trump(6)),
]
POSITIONS = 25


def sides(case: Case, game: Game, position: Position) -> list[frozenset[int]]:
    """The mover's team, and the other side (every other seat in play) too."""
    mover = position.to_move(game)
    seats = [s for s in range(game.players) if s not in game.sitting_out]
    mine = frozenset(game.team_of(mover)) & frozenset(seats)
    return [mine, frozenset(seats) - mine]


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_value_matches_exhaustive_minimax(case: Case, core: str) -> None:
    rng = random.Random(case.name)
    game = case.game()
    for _ in range(POSITIONS):
        position = random_position(rng, case.rules, game, rng.randint(1, 3))
        for side in sides(case, game, position):
            expected = minimax(case.rules, case.contract, game, position, side)
            solver = Solver(game, side, core=core)  # type: ignore[arg-type]
            assert solver.value(position) == expected, (position, side)


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_move_value_matches_exhaustive_minimax(case: Case, core: str) -> None:
    """Including the tiles merged as equivalent: each gets the value of its own minimax."""
    rng = random.Random("moves " + case.name)
    game = case.game()
    for _ in range(POSITIONS):
        position = random_position(rng, case.rules, game, rng.randint(1, 3))
        side = sides(case, game, position)[0]
        mover = position.to_move(game)
        values = Solver(game, side, core=core).move_values(position)  # type: ignore[arg-type]
        assert values
        for tile, value in values.items():
            hands = list(position.hands)
            hands[mover] &= ~(1 << tile)
            trick = position.trick + ((mover, tile),)
            if len(trick) == game.players - len(game.sitting_out):
                # the trick is complete: score it by brute force from the position before
                expected = _after_move(case, game, position, tile, side)
            else:
                child = Position(tuple(hands), position.leader, trick)
                expected = minimax(case.rules, case.contract, game, child, side)
            assert value == expected, (position, tile)


def _after_move(case: Case, game: Game, position: Position, tile: int, side: frozenset[int]) -> int:
    """Minimax value of playing ``tile`` (the last of its trick): the mover restricted to it."""
    mover = position.to_move(game)
    hands = list(position.hands)
    others = hands[mover] & ~(1 << tile)
    plays = position.trick + ((mover, tile),)
    winner = trick_winner(hand_state(case.rules, case.contract, game, position), plays)
    gain = game.trick_value + sum(game.points[t] for _, t in plays) if winner in side else 0
    hands[mover] = others
    rest = Position(tuple(hands), winner)
    return gain + (minimax(case.rules, case.contract, game, rest, side) if any(hands) else 0)


@pytest.mark.parametrize("core", CORES)
def test_a_window_gives_a_bound_on_the_right_side(core: str) -> None:
    """Fail-soft alpha-beta: below the window an upper bound, above it a lower bound."""
    rng = random.Random(7)
    game = Game.of(TEXAS, Contract.of_trump(5))
    for _ in range(30):
        position = random_position(rng, TEXAS, game, 3)
        exact = Solver(game, (0, 2), core=core).value(position)  # type: ignore[arg-type]
        for alpha, beta in ((exact - 3, exact - 1), (exact + 1, exact + 4), (exact - 1, exact + 1)):
            v = Solver(game, (0, 2), core=core).value(position, alpha, beta)  # type: ignore[arg-type]
            if beta <= exact:
                assert v >= beta and v <= exact
            elif alpha >= exact:
                assert v <= alpha and v >= exact
            else:
                assert v == exact


def test_solve_is_the_best_result_for_the_side_to_move() -> None:
    rng = random.Random(3)
    for case in (CASES[0], CASES[-3]):
        game = case.game()
        for _ in range(10):
            position = random_position(rng, case.rules, game, 2)
            mover = position.to_move(game)
            expected = minimax(case.rules, case.contract, game, position, frozenset(game.team_of(mover)))
            assert solve(game, position) == expected


def test_all_the_top_trumps_take_every_trick_and_all_the_count() -> None:
    game = Game.of(TEXAS, Contract.of_trump(6))
    hands = tuple(
        parse_tiles(h)
        for h in ("6-6 6-5 6-4", "5-5 5-0 1-0", "6-3 3-2 2-2", "4-1 4-4 1-1")
    )
    assert solve(game, Position(hands, leader=0)) == 3 + 10 + 10 + 5 + 5 + 5


def test_a_partner_whose_trick_is_safe_gets_the_count() -> None:
    """Sixes trump: seat 0 led 6-6 and wins the trick whatever comes; its partner (seat 2),
    void in sixes, throws the 5-5 on it rather than keep it for a trick the others win."""
    game = Game.of(TEXAS, Contract.of_trump(6))
    hands = tuple(parse_tiles(h) for h in ("2-0", "2-2", "5-5 2-1", "5-4 3-1"))
    position = Position(hands, leader=0, trick=((0, parse_tile("6-6")), (1, parse_tile("6-1"))))
    values = Solver(game, (0, 2)).move_values(position)
    assert values[parse_tile("5-5")] == 1 + 10
    assert values[parse_tile("2-1")] == 1
    assert Solver(game, (0, 2)).best_move(position) == (parse_tile("5-5"), 11)


def test_moon_objective_is_the_movers_tricks_against_the_other_two() -> None:
    game = Game.of(MOON, Contract.of_trump(DOUBLES))
    hands = tuple(parse_tiles(h) for h in ("6-6 5-5", "6-5 6-4", "4-4 1-1"))
    # Seat 0 leads 6-6 (wins), then 5-5: a double again, but 4-4 is lower: 2 tricks.
    assert solve(game, Position(hands, leader=0)) == 2
    # Seat 1 has no trump: its tricks against the others are none.
    assert solve(game, Position(hands, leader=1)) == 0


def test_the_tiles_of_a_seat_sitting_out_play_no_part() -> None:
    """Nello: the partner's tiles lie face down; whatever they are, the result is the same."""
    case = CASES[6]
    game = case.game()
    rng = random.Random(12)
    for _ in range(10):
        position = random_position(rng, case.rules, game, 3)
        held = 0
        for h in position.hands:
            held |= h
        spare = [t for t in range(28) if not held >> t & 1][:3]
        hands = list(position.hands)
        hands[2] = sum(1 << t for t in spare)  # seat 2 sits out
        with_tiles = Position(tuple(hands), position.leader, position.trick)
        for core in CORES:
            side = sides(case, game, position)[0]
            solver = Solver(game, side, core=core)  # type: ignore[arg-type]
            assert solver.value(with_tiles) == solver.value(position)
            assert solver.move_values(with_tiles) == solver.move_values(position)
