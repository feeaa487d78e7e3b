"""Exhaustive minimax over the engine's own rules: the oracle the solver is checked against.

No pruning, no table, no merging of tiles: every legal play (``engine.play.legal_plays``) of
every seat, every trick won as ``engine.play.trick_winner`` says. Only for small endgames.
"""

from __future__ import annotations

import random
from dataclasses import replace

from boneyard.engine.contracts import Contract
from boneyard.engine.play import legal_plays, trick_winner
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.solver import Game, Position
from boneyard.engine.state import HandState
from boneyard.engine.tiles import iter_tiles


def hand_state(rules: Ruleset, contract: Contract, game: Game, position: Position) -> HandState:
    """A ``HandState`` of the engine in this position (enough for legal plays and winners)."""
    return HandState(
        number=1,
        dealer=0,
        seed=b"oracle",
        dealt=position.hands,
        hands=position.hands,
        rest=0,
        bidder=0,
        declarer=0,
        contract=contract,
        table=game.table,
        trick=position.trick,
        tricks=(),  # bidder_leads_trump binds on the first trick only: keep it out of the way
        sitting_out=game.sitting_out,
        turn=position.to_move(game),
    )


def minimax(
    rules: Ruleset, contract: Contract, game: Game, position: Position, side: frozenset[int],
    scorers: frozenset[int] | None = None,
) -> int:
    """The side's points from the trick in progress on, by brute force."""
    scorers = side if scorers is None else scorers
    hand = hand_state(rules, contract, game, position)
    hand = replace(hand, tricks=(None,))  # type: ignore[arg-type]
    return _minimax(rules, game, hand, side, scorers)


def _minimax(rules: Ruleset, game: Game, hand: HandState, side: frozenset[int], scorers: frozenset[int]) -> int:
    if not any(hand.hands):
        return 0
    seat = hand.turn
    assert seat is not None
    results = []
    for t in iter_tiles(legal_plays(rules, hand, seat)):
        hands = list(hand.hands)
        hands[seat] &= ~(1 << t)
        trick = hand.trick + ((seat, t),)
        if len(trick) == game.players - len(game.sitting_out):
            winner = trick_winner(hand, trick)
            gain = game.trick_value + sum(game.points[x] for _, x in trick) if winner in scorers else 0
            after = replace(hand, hands=tuple(hands), trick=(), turn=winner)
            results.append(gain + _minimax(rules, game, after, side, scorers))
        else:
            nxt = Position(tuple(hands), trick[0][0], trick).to_move(game)
            after = replace(hand, hands=tuple(hands), trick=trick, turn=nxt)
            results.append(_minimax(rules, game, after, side, scorers))
    return max(results) if seat in side else min(results)


def random_position(rng: random.Random, rules: Ruleset, game: Game, tricks: int) -> Position:
    """Hands of ``tricks`` tiles for the seats in play (from the game's tiles, at random), a
    random leader, and up to a whole trick but one already played legally."""
    seats = [s for s in range(game.players) if s not in game.sitting_out]
    deck = list(iter_tiles(rules.tiles))
    rng.shuffle(deck)
    hands = [0] * game.players
    for i, s in enumerate(seats):
        for t in deck[i * tricks : (i + 1) * tricks]:
            hands[s] |= 1 << t
    leader = rng.choice(seats)
    position = Position(tuple(hands), leader)
    for _ in range(rng.randrange(len(seats))):
        seat = position.to_move(game)
        hand = hand_state(rules, Contract.of_trump(0), game, position)
        hand = replace(hand, table=game.table, tricks=(None,))  # type: ignore[arg-type]
        t = rng.choice(list(iter_tiles(legal_plays(rules, hand, seat))))
        new_hands = list(position.hands)
        new_hands[seat] &= ~(1 << t)
        position = Position(tuple(new_hands), leader, position.trick + ((seat, t),))
    return position
