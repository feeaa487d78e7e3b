"""Dealing: the server is the shaker. Each hand's seed is drawn afresh (``secrets``), or, for
a game whose deals are fixed (a duplicate tournament's), derived from the game's deal secret
(``deal_seed``); its commitment (``records.hashing.seed_commitment``) is recorded when the hand
is dealt, and the seed stays secret until the game ends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from boneyard import engine
from boneyard.engine import Event, GameState, HandDealt, Phase
from boneyard.records.hashing import seed_commitment

__all__ = ["deal_hands", "deal_seed"]


def deal_seed(secret: bytes, hand_number: int) -> bytes:
    """The seed of hand ``hand_number`` of a game with fixed deals (duplicate tournaments)."""
    return hashlib.sha256(secret + hand_number.to_bytes(4, "big")).digest()


def deal_hands(
    state: GameState, draw_seed: Callable[[], bytes], secret: bytes | None
) -> tuple[list[Event], list[tuple[int, bytes, bytes]]]:
    """Deal while the game waits for a deal: the server is the shaker (``draw_seed``), unless
    the game's deals are fixed by a secret. The events, and each hand's
    ``(number, seed, commitment)``."""
    dealt: list[Event] = []
    seeds: list[tuple[int, bytes, bytes]] = []
    while state.phase is Phase.DEAL:
        seed = draw_seed() if secret is None else deal_seed(secret, state.deals + 1)
        events = engine.decide(state, engine.Deal(seed))
        for event in events:
            state = engine.evolve(state, event)
            if type(event) is HandDealt:
                seeds.append((event.number, seed, seed_commitment(seed)))
        dealt += events
    return dealt, seeds
