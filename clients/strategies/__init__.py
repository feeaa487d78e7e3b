"""Bot strategies: each is a pure ``choose(view) -> action`` over the API's ``SeatView``.

A strategy sees exactly what a human in that seat sees (the view), picks one of the view's
``legal_actions`` and returns it. The network loop around it (``boneyard.clients.bot``) is shared by
every strategy. Find one by name with ``strategy(name, seed)``.
"""

from __future__ import annotations

from collections.abc import Callable

from boneyard.clients.strategies.base import Strategy
from boneyard.clients.strategies.random_play import RandomStrategy
from boneyard.clients.strategies.sampler import SamplerStrategy

__all__ = ["STRATEGIES", "Strategy", "strategy", "strategy_names"]


def _heuristic(seed: int) -> Strategy:
    from boneyard.clients.strategies.heuristic import HeuristicStrategy

    return HeuristicStrategy(seed)


STRATEGIES: dict[str, Callable[[int], Strategy]] = {
    "random": RandomStrategy,
    "heuristic": _heuristic,
    "sampler": SamplerStrategy,
}


def strategy_names() -> tuple[str, ...]:
    return tuple(STRATEGIES)


def strategy(name: str, seed: int = 0) -> Strategy:
    try:
        make = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"no strategy {name!r}: choose one of {', '.join(STRATEGIES)}") from None
    return make(seed)
