"""A perfect-information solver for the play of the tricks, Texas 42 and Moon.

Given every hand, the contract and the trick in progress, the solver finds the exact result of
the rest of the hand with best play by everyone: alpha-beta over the plays, with a
transposition table of the positions at the start of each trick, move ordering, and equivalent
tiles searched once.

**What is solved.** A ``Game`` says how the tricks are played and counted: the suit table of
the contract (``boneyard.engine.contracts``), the seats in play (a nello partner sits out), whether a
player may trump instead of following, what each tile is worth to the side that wins it
(Texas 42: its count) and what a trick is worth (1). A ``Solver`` adds the *side*: the seats
that maximise; every other seat in play minimises. Its value of a position is the points the
side takes from the trick in progress (the tiles already in it included) to the end of the
hand, under best play; ``scorers`` (default: the side) are the seats whose tricks count for
the side, which lets the nello bidder maximise the tricks its opponents take.

- Texas 42, point bids: ``Game.of(rules, contract)``; side = a team; value = its points.
- Texas 42, all-tricks goals (42, 84 ..., plunge, splash): ``objective="tricks"``; value =
  the team's tricks; the goal is met exactly when it equals the tricks left.
- Nello: ``objective="tricks"``, side = the bidder, scorers = the bidder's opponents: the
  bidder makes it when the value equals the tricks left.
- Moon: three players for themselves. ``solve`` takes the *paranoid* reading: the value is the
  tricks of the player to move, the two others playing together against it (the Moon bidder's
  real situation, and a lower bound for anyone). A ``Solver`` takes any side, e.g. the two
  defenders against the bidder.

``solve(game, position)`` is the exact best result for the side to move (its team, or in Moon
itself); ``Solver.move_values`` the exact value of each legal play.

**Equivalent tiles.** Two tiles of the seat to play are played alike, and only the first is
searched, when they are worth the same points, call for the same suit when led, are both or
neither trumps, and for every suit that can still be led (the suit of the trick in progress,
and the suit any tile left would call for) both or neither follow it and no tile of another
seat still to be played (or in the trick) ranks between them. Swapping them then maps every
line of play onto one with the same result: they never meet in a trick, and every comparison,
every obligation to follow and every point is the same.

**Speed.** The search runs on bitmasks in a C extension, ``boneyard.engine._solver_c``, built by the
package's own install (``pip install -e .``; ``pyproject.toml`` declares it, optional: without
a compiler the install goes on). ``boneyard.engine._solver_core`` is the same algorithm in pure Python,
used when the extension is missing (or ``core="python"``); both give the same values
(``tests/solver/test_cores_agree.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from boneyard.engine import _solver_core
from boneyard.engine.contracts import (
    Contract,
    ContractKind,
    SuitTable,
    nello_table,
    suit_table,
)
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.tiles import COUNT, Tile, TileSet


def _compiled() -> ModuleType | None:
    """The compiled core, when the install built it."""
    try:
        from boneyard.engine import _solver_c
    except ImportError:  # pragma: no cover - depends on the build
        return None
    return _solver_c


_C = _compiled()

__all__ = [
    "CORES",
    "Game",
    "Position",
    "SearchAborted",
    "Solver",
    "best_core",
    "remaining_points",
    "solve",
]

Seat = int
Play = tuple[Seat, Tile]
CoreName = Literal["c", "python"]

CORES: tuple[CoreName, ...] = ("c", "python") if _C is not None else ("python",)
"""The cores this install has, fastest first."""

SearchAborted = _solver_core.SearchAborted
"""A search reached ``Solver.node_limit`` (both cores raise this class)."""



def best_core() -> CoreName:
    """``"c"`` when the extension is built, else ``"python"``."""
    return CORES[0]


@dataclass(frozen=True, slots=True)
class Game:
    """How the tricks of one hand are played and counted."""

    table: SuitTable
    players: int
    teams: tuple[tuple[Seat, ...], ...]
    """Who plays together (in Moon, each seat alone); ``solve`` maximises the mover's team."""
    sitting_out: tuple[Seat, ...] = ()
    points: tuple[int, ...] = (0,) * 28
    """What each tile is worth to the side whose trick it is in."""
    trick_value: int = 1
    may_trump: bool = False
    """``may_trump_when_able_to_follow`` [S1]."""

    @classmethod
    def of(
        cls,
        rules: Ruleset,
        contract: Contract,
        sitting_out: Iterable[Seat] = (),
        objective: Literal["points", "tricks"] = "points",
    ) -> Game:
        """The game of a hand of ``rules`` under ``contract`` (not sevens: it has no suits).
        Texas 42 counts points (``objective="points"``) or tricks; Moon always tricks."""
        if contract.kind is ContractKind.SEVENS:
            raise ValueError("sevens has no suits and no choice worth solving")
        if contract.kind is ContractKind.NELLO:
            table = nello_table(rules.nello_doubles)
        else:
            table = suit_table(contract.trump)
        count = not rules.is_moon and objective == "points"
        return cls(
            table=table,
            players=rules.players,
            teams=rules.teams,
            sitting_out=tuple(sorted(sitting_out)),
            points=COUNT if count else (0,) * 28,
            trick_value=1,
            may_trump=rules.may_trump_when_able_to_follow,
        )

    def team_of(self, seat: Seat) -> tuple[Seat, ...]:
        return next(team for team in self.teams if seat in team)

    @property
    def active(self) -> TileSet:
        """The seats in play, as a bitmask."""
        return sum(1 << s for s in range(self.players) if s not in self.sitting_out)


@dataclass(frozen=True, slots=True)
class Position:
    """Every hand, the trick in progress (in the order played) and the seat that led it."""

    hands: tuple[TileSet, ...]
    leader: Seat
    trick: tuple[Play, ...] = ()

    def to_move(self, game: Game) -> Seat:
        if not self.trick:
            return self.leader
        seat = self.trick[-1][0]
        while True:
            seat = (seat + 1) % game.players
            if seat not in game.sitting_out:
                return seat


def _mask(seats: Iterable[Seat]) -> int:
    return sum(1 << s for s in set(seats))


class Solver:
    """Solves positions of one ``Game`` for one side; remembers what it solved (its
    transposition table) until ``clear``. Not thread-safe."""

    def __init__(
        self,
        game: Game,
        side: Iterable[Seat],
        scorers: Iterable[Seat] | None = None,
        core: CoreName | None = None,
        tt_bits: int = 18,
    ) -> None:
        self.game = game
        self.side = tuple(sorted(set(side)))
        self.scorers = self.side if scorers is None else tuple(sorted(set(scorers)))
        self.core_name: CoreName = core or best_core()
        if self.core_name not in CORES:
            raise ValueError(f"no solver core {self.core_name!r} here: have {', '.join(CORES)}")
        table = game.table
        args = (
            table.lead_suit,
            table.members,
            table.power,
            table.trumps,
            game.may_trump,
            game.points,
            game.trick_value,
            game.players,
            game.active,
            _mask(self.side),
            _mask(self.scorers),
            tt_bits,
        )
        self._core: Any
        if self.core_name == "c":
            assert _C is not None
            self._core = _C.Core(*args)
        else:
            self._core = _solver_core.Core(*args)

    @property
    def nodes(self) -> int:
        """Positions visited so far (every play searched is one)."""
        return int(self._core.nodes)

    @property
    def node_limit(self) -> int:
        """Stop (``SearchAborted``) once ``nodes`` passes this; 0: never."""
        return int(self._core.node_limit)

    @node_limit.setter
    def node_limit(self, limit: int) -> None:
        self._core.node_limit = limit

    def clear(self) -> None:
        self._core.clear()

    def _hands(self, position: Position) -> tuple[TileSet, ...]:
        """The hands in play (a seat sitting out holds nothing that counts), checked: every seat
        in play holds as many tiles as the others, one fewer once it has played to the trick."""
        game = self.game
        out = game.sitting_out
        hands = position.hands
        if len(hands) != game.players:
            raise ValueError(f"{len(hands)} hands for {game.players} players")
        if out:
            hands = tuple(0 if s in out else h for s, h in enumerate(hands))
        played = {s for s, _ in position.trick}
        sizes = {
            hands[s].bit_count() + (s in played)
            for s in range(game.players)
            if s not in out
        }
        if len(sizes) != 1:
            raise ValueError(
                f"the hands do not fit one deal: sizes {[h.bit_count() for h in hands]} with "
                f"{len(position.trick)} tiles in the trick (seats {sorted(played)} played)"
            )
        return hands

    def value(self, position: Position, alpha: int = -1, beta: int = 1 << 20) -> int:
        """The side's points from the trick in progress on. Exact inside ``(alpha, beta)``;
        otherwise a bound on the same side of the window (fail-soft)."""
        return int(
            self._core.search(self._hands(position), position.trick, position.leader, alpha, beta)
        )

    def move_values(
        self, position: Position, allowed: TileSet = -1, alpha: int = -1, beta: int = 1 << 20
    ) -> dict[Tile, int]:
        """The value of each legal play of the seat to move (limited to ``allowed``): exact
        inside ``(alpha, beta)`` (by default, always), else a bound as ``value`` gives."""
        pairs = self._core.move_values(
            self._hands(position), position.trick, position.leader, allowed, alpha, beta
        )
        return {int(t): int(v) for t, v in pairs}

    def best_move(self, position: Position) -> tuple[Tile, int]:
        """A best play for the seat to move and the value it leads to (for the side)."""
        values = self.move_values(position)
        if not values:
            raise ValueError("the seat to move holds no tile")
        mover = position.to_move(self.game)
        maximise = mover in self.side
        tile = max(values, key=lambda t: (values[t] if maximise else -values[t], -t))
        return tile, values[tile]


def solve(game: Game, position: Position, core: CoreName | None = None) -> int:
    """The exact best result for the side to move: in Texas 42 its team's points (or tricks,
    as ``game`` counts) from the trick in progress to the end; in Moon (every seat alone) its
    own tricks, the others playing against it."""
    mover = position.to_move(game)
    return Solver(game, game.team_of(mover), core=core).value(position)


def remaining_points(game: Game, position: Position) -> int:
    """Everything still to be won: the tricks left and the points in them."""
    tiles = 0
    for h in position.hands:
        tiles |= h
    in_trick = len(position.trick)
    seats = game.players - len(game.sitting_out)
    tricks = (tiles.bit_count() + in_trick) // seats
    pts = sum(game.points[t] for t in range(28) if tiles >> t & 1)
    pts += sum(game.points[t] for _, t in position.trick)
    return tricks * game.trick_value + pts
