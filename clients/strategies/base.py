"""What every strategy is, and helpers to read a view in the engine's terms."""

from __future__ import annotations

import hashlib
import random
from typing import Protocol

from boneyard.v1 import actions_pb2, view_pb2

__all__ = ["Strategy", "view_rng"]


class Strategy(Protocol):
    name: str

    def choose(self, view: view_pb2.SeatView) -> actions_pb2.Action:
        """One of ``view.legal_actions``: a function of the view (and the strategy's seed)."""
        ...


def view_rng(seed: int, view: view_pb2.SeatView) -> random.Random:
    """A generator seeded by the strategy's seed and the view itself, so that the same view
    always gets the same choice (a bot that reconnects chooses as it did before)."""
    digest = hashlib.sha256(seed.to_bytes(8, "big", signed=True) + view.SerializeToString(deterministic=True))
    return random.Random(digest.digest())
