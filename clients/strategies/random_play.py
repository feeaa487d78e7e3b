"""The random bot: any legal action, uniformly."""

from __future__ import annotations

from boneyard.clients.strategies.base import view_rng
from boneyard.v1 import actions_pb2, view_pb2

__all__ = ["RandomStrategy"]


class RandomStrategy:
    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def choose(self, view: view_pb2.SeatView) -> actions_pb2.Action:
        if not view.legal_actions:
            raise ValueError(f"seat {view.seat} has nothing to do at version {view.version}")
        return view_rng(self.seed, view).choice(list(view.legal_actions))
