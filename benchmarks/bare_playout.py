"""The anchor of ``bench_engine.py``: a bare bitmask playout of complete hands, no engine.

The least a program must do to play a random hand out: deal the tiles (the engine's own
seeded shuffle, so both play the same deals), name a random trump, and for seven tricks (or
Moon's seven with three players) give each seat a random tile among those it may play (it must
follow the led suit when it can), find the trick's winner and count its points. Hands are ints
of bits, suits and powers are tables made once; no objects, no checks, no events. The engine
does all of that and more (bids, validation, events, state, views' legal actions), so its
hands per second over this loop's, measured in the same run, say how close it comes.
"""

from __future__ import annotations

import random

from boneyard.engine.deal import deal
from boneyard.engine.tiles import COUNT, FULL_SET, HIGH, LOW

__all__ = ["MOON_TILES", "bare_hands"]

MOON_TILES = sum(1 << t for t in range(28) if LOW[t] != 0 or HIGH[t] == 0)
_DOUBLES, _FOLLOW_ME = 7, 8


def _tables(trump: int) -> tuple[list[int], list[int], list[list[int]]]:
    """``lead[t]`` (the suit a led tile calls for), ``members[suit]`` (the tiles that follow
    it) and ``power[suit][t]`` (higher wins; trumps above every other tile) under ``trump``."""

    def is_trump(t: int) -> bool:
        if trump == _DOUBLES:
            return HIGH[t] == LOW[t]
        return trump != _FOLLOW_ME and trump in (HIGH[t], LOW[t])

    trump_suit = 7 if trump == _DOUBLES else trump
    lead = [trump_suit if is_trump(t) else HIGH[t] for t in range(28)]
    members = [0] * 8
    for t in range(28):
        if is_trump(t):
            members[trump_suit] |= 1 << t
        else:
            members[HIGH[t]] |= 1 << t
            members[LOW[t]] |= 1 << t
    power = [[-1] * 28 for _ in range(8)]
    for suit in range(8):
        for t in range(28):
            double = HIGH[t] == LOW[t]
            if is_trump(t) and trump == _DOUBLES:
                power[suit][t] = 100 + HIGH[t]
            elif is_trump(t):  # the double on top, then by the other end
                power[suit][t] = 100 + (8 if double else LOW[t] + HIGH[t] - trump + 1)
            elif members[suit] >> t & 1:
                power[suit][t] = 8 if double else (LOW[t] if HIGH[t] == suit else HIGH[t]) + 1
    return lead, members, power


_TABLES = [_tables(trump) for trump in range(9)]


def bare_hands(hands: int, seed: int, moon: bool = False) -> int:
    """Play ``hands`` random hands out; returns the points (tricks in Moon) the first seat's
    side took, so that the work cannot be optimised away."""
    rng = random.Random(seed)
    players = 3 if moon else 4
    tiles = MOON_TILES if moon else FULL_SET
    total = 0
    choice = rng.choice
    for _ in range(hands):
        held, _rest = deal(rng.randbytes(16), tiles, players, 7)
        held = list(held)
        lead_of, members, power = _TABLES[rng.randrange(9)]
        leader = rng.randrange(players)
        for _trick in range(7):
            seat = leader
            first = choice([t for t in range(28) if held[seat] >> t & 1])
            held[seat] &= ~(1 << first)
            suit = lead_of[first]
            table = power[suit]
            best, winner, points = table[first], seat, 1 + COUNT[first]
            follow = members[suit]
            for _ in range(players - 1):
                seat = (seat + 1) % players
                hand = held[seat]
                allowed = hand & follow or hand
                t = choice([t for t in range(28) if allowed >> t & 1])
                held[seat] = hand & ~(1 << t)
                points += COUNT[t]
                if table[t] > best:
                    best, winner = table[t], seat
            leader = winner
            if moon and winner == 0:
                total += 1
            elif not moon and winner % 2 == 0:
                total += points
    return total
