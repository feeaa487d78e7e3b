"""Sevens played out: whether the bidding team takes every trick, for bidding and declaring it.

In sevens (RULES.md section 2) everyone must play the tile of their hand nearest 7 pips, the
nearest tile of a trick wins and a tie goes to the first played. Which of several equally near
tiles a player lays never matters: the trick's winner depends only on how near each tile is,
and what is left in the hand is the same set of distances whichever was played. So the result
of a sevens hand follows from the hands and the leader alone, and this plays it out instead of
searching it (``tests/bots/test_sevens.py`` shows every choice of tile gives the same result).
"""

from __future__ import annotations

from collections.abc import Sequence

from boneyard.engine.tiles import PIPS, TileSet

__all__ = ["sevens_tricks"]

_DISTANCE = tuple(abs(p - 7) for p in PIPS)


def _nearest(hand: TileSet) -> int:
    """The lowest-numbered tile nearest 7 pips."""
    best, nearest = 99, -1
    while hand:
        low = hand & -hand
        t = low.bit_length() - 1
        if _DISTANCE[t] < best:
            best, nearest = _DISTANCE[t], t
        hand ^= low
    return nearest


def sevens_tricks(
    hands: Sequence[TileSet], leader: int, team: Sequence[int], sitting_out: Sequence[int] = ()
) -> int:
    """Tricks ``team`` takes when the hands are played out in sevens from ``leader``'s lead."""
    held = list(hands)
    seats = [s for s in range(len(held)) if s not in sitting_out]
    won = 0
    while held[leader]:
        order = seats[seats.index(leader) :] + seats[: seats.index(leader)]
        winner, best = leader, 99
        for s in order:
            t = _nearest(held[s])
            held[s] &= ~(1 << t)
            if _DISTANCE[t] < best:
                winner, best = s, _DISTANCE[t]
        won += winner in team
        leader = winner
    return won
