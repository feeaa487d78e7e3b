"""Hand analysis: every play of a finished hand valued with every hand known (double dummy).

For each play of the tricks of one hand, in order, ``analyze_hand`` gives the seat, the tile
played, and for every tile the seat could legally play at that point its exact value under
best play by everyone from there on (``boneyard.engine.solver``), so that a replay can mark
the plays that cost something, as a bridge site shows double-dummy results.

**The value** of a tile is measured for the *bidding side*, in the hand's own terms, and
counts the whole hand: what the side has already taken in the tricks completed before the
play, plus what it takes from the trick in progress (the tiles already in it, this one, and
the rest) to the last trick, every trick played out with best play by all after this tile
(a Texas 42 hand that stopped early once decided is valued as if played to the end).

- Texas 42, any trump or follow-me contract: the bidding team's points (1 a trick plus the
  count of the tiles in its tricks; 42 in all with four players). The bidders want more.
- Texas 42, nello: the tricks the bidder takes (its partner sits out). The bidder's side wants
  fewer.
- Moon: the tricks the bidder takes, the two others playing together against it. The bidder
  wants more.
- Sevens has no suits and nothing to solve: the plays are listed without values.

A play's ``cost`` is how much worse for the side of the seat that played it the played tile
is than its best legal tile, in the same measure (0 for a best play). Which side a seat is
on: the bidder's team (Moon: the bidder alone) or the others.

A hand whose play never began (all passed, a redeal, a game that ended in the auction) has no
plays. Analysing shows every hand: only a finished game's hands may be (the caller's rule;
the deal is public once the game is over).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from boneyard.engine.commands import PlayTile
from boneyard.engine.contracts import ContractKind
from boneyard.engine.decider import evolve, legal_actions, replay
from boneyard.engine.events import Event, HandDealt, TilePlayed
from boneyard.engine.solver import CoreName, Game, Position, Solver
from boneyard.engine.state import GameState, HandState
from boneyard.engine.tiles import COUNT, Tile

__all__ = ["HandAnalysis", "NoSuchHand", "PlayAnalysis", "analyze_hand", "hands_in"]

Measure = Literal["points", "tricks", ""]


class NoSuchHand(LookupError):
    """The log has no hand of that number."""


@dataclass(frozen=True, slots=True)
class PlayAnalysis:
    """One play of the hand and the value of every tile its seat could have played."""

    seat: int
    tile: Tile
    values: tuple[tuple[Tile, int], ...]
    """``(tile, value)`` for each legal tile, lowest tile first (empty when not solved)."""
    best: int
    """The value of the seat's side's best legal tile (0 when not solved)."""
    cost: int
    """How much worse for the seat's side the played tile is than its best (0 when best)."""

    @property
    def value(self) -> int:
        """The played tile's value (0 when not solved)."""
        return dict(self.values).get(self.tile, 0)


@dataclass(frozen=True, slots=True)
class HandAnalysis:
    """A hand's plays, valued (the module's doc says what a value is)."""

    number: int
    measure: Measure
    """``points`` (Texas 42 trump contracts), ``tricks`` (nello, Moon), ``""`` when nothing
    was solved (sevens, or no play)."""
    bidder: int | None
    side: tuple[int, ...]
    """The seats whose take the values count: the bidder's team (Moon, nello: the bidder)."""
    side_wants_more: bool
    """Whether more is better for the bidding side (false only in nello)."""
    plays: tuple[PlayAnalysis, ...]


def hands_in(events: Sequence[Event]) -> int:
    """How many hands (deals, redeals included) the log has."""
    return sum(1 for e in events if isinstance(e, HandDealt))


def analyze_hand(
    events: Sequence[Event], number: int, *, core: CoreName | None = None
) -> HandAnalysis:
    """The analysis of hand ``number`` (1 for the first deal, counting redeals, as
    ``HandDealt.number``) of a game's log. ``NoSuchHand`` when the log has no such hand."""
    start = next(
        (i for i, e in enumerate(events) if isinstance(e, HandDealt) and e.number == number),
        None,
    )
    if start is None or start == 0:
        raise NoSuchHand(f"the game has {hands_in(events)} hands, not a hand {number}")
    state = replay(events[:start])
    plays: list[tuple[GameState, TilePlayed]] = []
    for event in events[start:]:
        if isinstance(event, HandDealt) and event.number != number:
            break
        if isinstance(event, TilePlayed):
            plays.append((state, event))
        state = evolve(state, event)
    if not plays:
        return HandAnalysis(number, "", None, (), True, ())
    first = plays[0][0].hand
    assert first is not None
    rules = plays[0][0].rules
    contract, bidder = first.contract, first.bidder
    assert contract is not None and bidder is not None and first.table is not None
    if contract.kind is ContractKind.SEVENS:
        bare = tuple(PlayAnalysis(e.seat, e.tile, (), 0, 0) for _, e in plays)
        return HandAnalysis(number, "", bidder, (), True, bare)
    nello = contract.kind is ContractKind.NELLO
    bidders = (bidder,) if rules.is_moon or nello else rules.teams[rules.team_of[bidder]]
    game = Game(
        table=first.table,
        players=rules.players,
        teams=rules.teams,
        sitting_out=tuple(sorted(first.sitting_out)),
        points=COUNT if not (rules.is_moon or nello) else (0,) * 28,
        trick_value=1,
        may_trump=rules.may_trump_when_able_to_follow,
    )
    # The solver maximises for ``side``; its value counts the tricks of ``scorers``.
    if nello:
        active = [s for s in range(rules.players) if s not in first.sitting_out]
        solver = Solver(game, [s for s in active if s != bidder], scorers=bidders, core=core)
    else:
        solver = Solver(game, bidders, core=core)
    out = [_analyse_play(solver, before, event, bidders, not nello) for before, event in plays]
    return HandAnalysis(
        number, "points" if game.points is COUNT else "tricks", bidder, bidders, not nello,
        tuple(out),
    )


def _analyse_play(
    solver: Solver,
    before: GameState,
    event: TilePlayed,
    bidders: tuple[int, ...],
    more_is_better: bool,
) -> PlayAnalysis:
    hand = before.hand
    assert hand is not None
    legal = 0
    for action in legal_actions(before, event.seat):
        if isinstance(action, PlayTile):
            legal |= 1 << action.tile
    leader = hand.trick[0][0] if hand.trick else event.seat
    solved = solver.move_values(Position(hand.hands, leader, hand.trick), legal)
    already = _taken_by(solver.game, hand, bidders)
    values = tuple(sorted((t, already + v) for t, v in solved.items()))
    # The seat's own side wants what the bidding side wants, or the opposite.
    wants_more = more_is_better == (event.seat in bidders)
    pick = max if wants_more else min
    best = pick(v for _, v in values)
    played = dict(values)[event.tile]
    return PlayAnalysis(event.seat, event.tile, values, best, abs(best - played))


def _taken_by(game: Game, hand: HandState, bidders: tuple[int, ...]) -> int:
    """What ``bidders`` took in the tricks completed so far, as the game counts."""
    total = 0
    for trick in hand.tricks:
        if trick.winner in bidders:
            total += game.trick_value + sum(game.points[t] for _, t in trick.plays)
    return total

