"""Strategies from outside Boneyard: what ``--strategy`` of ``boneyard bot`` and ``boneyard play
--bots`` accepts besides the built-in names.

A spec is one of:

- a built-in strategy's name (``random``, ``heuristic``, ``sampler``, ``expert``:
  ``boneyard.bots``);
- the name of an entry point in the group ``boneyard.strategies`` of an installed
  distribution (``[project.entry-points."boneyard.strategies"]`` in its pyproject.toml), whose
  object is as below;
- ``module:Name`` (``module.sub:Name`` too), importable from ``sys.path`` (PYTHONPATH).

The object named is a **class**, made with the seed (``Cls(seed)``) and used by its
``choose(view) -> command`` method, or a **function** ``choose(view) -> command``, used as it
is. ``view`` is the engine's ``SeatView`` (``boneyard.engine``: the seat's hand, the table, and
``view.legal``, the commands it may send), and the command one of ``view.legal``; the bot
runner does the network (``boneyard.clients.bot``), as for the built-in strategies.

The server's house bots play built-in strategies only: they run in the server's processes,
and a name a client sends must never make the server import code. Outside strategies run in
the client that loads them.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, cast

from boneyard.bots import Strategy, strategy, strategy_names
from boneyard.engine import SeatCommand, SeatView

__all__ = ["ENTRY_POINT_GROUP", "StrategySpecError", "is_builtin", "load_strategy", "outside_names"]

ENTRY_POINT_GROUP = "boneyard.strategies"


class StrategySpecError(ValueError):
    """A ``--strategy`` that names nothing usable; the message says what and why."""


class _FunctionStrategy:
    """A bare ``choose(view)`` function as a strategy."""

    def __init__(self, name: str, choose: Callable[[SeatView], SeatCommand]) -> None:
        self.name = name
        self._choose = choose

    def choose(self, view: SeatView) -> SeatCommand:
        return self._choose(view)


def is_builtin(spec: str) -> bool:
    return spec in strategy_names()


def outside_names() -> tuple[str, ...]:
    """The strategies installed distributions declare in ``boneyard.strategies``."""
    return tuple(sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}))


def load_strategy(spec: str, seed: int = 0, move_ms: int | None = None) -> Strategy:
    """The strategy ``spec`` names, made with ``seed``. ``StrategySpecError`` saying why not.

    ``move_ms``: each decision's budget for a built-in searching strategy (``boneyard.bots.
    strategy``; ``None``: the strategy's own default). An outside strategy is made with its
    seed alone: how long it thinks is its own affair."""
    if is_builtin(spec):
        try:
            return strategy(spec, seed, move_ms)
        except ValueError as error:  # a budget out of 1..MOVE_MS_MAX
            raise StrategySpecError(str(error)) from None
    if ":" in spec:
        module_name, _, attribute = spec.partition(":")
        target = _imported(spec, module_name, attribute)
    else:
        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
        if not found:
            installed = outside_names()
            raise StrategySpecError(
                f"no strategy {spec!r}: not a built-in one ({', '.join(strategy_names())}), "
                f"nor an entry point of the group {ENTRY_POINT_GROUP!r} "
                f"({', '.join(installed) if installed else 'none installed'}), nor MODULE:NAME"
            )
        target = _loaded(spec, found[0])
    return _made(spec, target, seed)


def _imported(spec: str, module_name: str, attribute: str) -> Any:
    if not module_name or not attribute:
        raise StrategySpecError(f"{spec!r}: a strategy from a module is MODULE:NAME (both given)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise StrategySpecError(
            f"{spec!r}: cannot import module {module_name!r} ({error}); is it on PYTHONPATH?"
        ) from None
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise StrategySpecError(f"{spec!r}: module {module_name!r} has no {attribute!r}") from None
    return target


def _loaded(spec: str, point: EntryPoint) -> Any:
    try:
        return point.load()
    except Exception as error:  # noqa: BLE001 -- any failure of the plug-in's import: say it
        raise StrategySpecError(
            f"strategy {spec!r} (entry point {point.value!r}) failed to load: "
            f"{type(error).__name__}: {error}"
        ) from None


def _made(spec: str, target: Any, seed: int) -> Strategy:
    if inspect.isclass(target):
        make: Callable[[int], Any] = target
        try:
            made = make(seed)
        except Exception as error:  # noqa: BLE001 -- the plug-in's constructor: say it
            raise StrategySpecError(
                f"strategy {spec!r}: {target.__name__}(seed) failed: {type(error).__name__}: {error}"
            ) from None
        if not callable(getattr(made, "choose", None)):
            raise StrategySpecError(
                f"strategy {spec!r}: {target.__name__} has no choose(view) method"
            )
        if not isinstance(getattr(made, "name", None), str):
            made.name = spec
        return cast(Strategy, made)
    if inspect.isfunction(target) or inspect.isbuiltin(target):
        return _FunctionStrategy(spec, target)
    raise StrategySpecError(
        f"strategy {spec!r} names a {type(target).__name__}: it must be a class (made with the "
        f"seed, with a choose(view) method) or a function choose(view)"
    )
