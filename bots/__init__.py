"""Bot strategies: each is a pure ``choose(view) -> command`` over the engine's ``SeatView``.

A strategy sees exactly what a human in that seat sees (the view, the complete ruleset
included), picks one of the view's ``legal`` commands and returns it. It depends on the engine
alone (no protobuf, no network, no clock, no global randomness: ``tests/bots/test_purity.py``),
so the same strategy plays in a client's bot (``boneyard.clients.bot``, which turns the API's
view into the engine's with ``boneyard.api.codec.view_from_proto``) and as one of the server's house
bots (``boneyard.server.competition.house_bots``, in worker processes). Find one by name with
``strategy(name, seed)``; ``choose(name, seed, view)`` is the one-call form a worker runs.
"""

from __future__ import annotations

from collections.abc import Callable

from boneyard.bots.base import Strategy
from boneyard.bots.random_play import RandomStrategy
from boneyard.engine import SeatCommand, SeatView

__all__ = ["MOVE_MS_MAX", "STRATEGIES", "Strategy", "choose", "strategy", "strategy_names"]


def _heuristic(seed: int) -> Strategy:
    from boneyard.bots.heuristic import HeuristicStrategy

    return HeuristicStrategy(seed)


def _sampler(seed: int) -> Strategy:
    from boneyard.bots.sampler import SamplerStrategy

    return SamplerStrategy(seed)


def _expert(seed: int) -> Strategy:
    from boneyard.bots.expert import ExpertStrategy

    return ExpertStrategy(seed)


STRATEGIES: dict[str, Callable[[int], Strategy]] = {
    "random": RandomStrategy,
    "heuristic": _heuristic,
    "sampler": _sampler,
    "expert": _expert,
}

MOVE_MS_MAX = 60_000
"""The longest budget a decision may be given (a minute of solver nodes)."""


def strategy_names() -> tuple[str, ...]:
    return tuple(STRATEGIES)


def strategy(name: str, seed: int = 0, move_ms: int | None = None) -> Strategy:
    """The strategy ``name`` with ``seed``; ``move_ms``: the budget of each decision, in
    milliseconds of solver nodes, for the searching strategies (``sampler``, ``expert``; the
    others take no time worth bounding and ignore it)."""
    try:
        make = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"no strategy {name!r}: choose one of {', '.join(STRATEGIES)}") from None
    if move_ms is None:
        return make(seed)
    if not 1 <= move_ms <= MOVE_MS_MAX:
        raise ValueError(f"move_ms={move_ms}: a decision's budget is 1..{MOVE_MS_MAX} ms")
    if name == "expert":
        from boneyard.bots.expert import ExpertStrategy

        return ExpertStrategy(seed, move_ms=move_ms)
    if name == "sampler":
        from boneyard.bots.sampler import SamplerStrategy

        seconds = move_ms / 1000
        return SamplerStrategy(seed, time_budget=seconds / 5, auction_budget=seconds)
    return make(seed)


def choose(name: str, seed: int, view: SeatView) -> SeatCommand:
    """What strategy ``name`` with ``seed`` plays in ``view`` (a picklable top-level function,
    for a process pool)."""
    return strategy(name, seed).choose(view)
