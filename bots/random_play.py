"""The random bot: any legal action, uniformly."""

from __future__ import annotations

from boneyard.bots.base import nothing_to_do, view_rng
from boneyard.engine import SeatCommand, SeatView

__all__ = ["RandomStrategy"]


class RandomStrategy:
    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def choose(self, view: SeatView) -> SeatCommand:
        if not view.legal:
            raise nothing_to_do(view)
        return view_rng(self.seed, view).choice(list(view.legal))
