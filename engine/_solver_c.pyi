"""Types of the C extension ``engine._solver_c`` (``engine/_solver_c.c``): the same API as
``engine._solver_core.Core``."""

from collections.abc import Sequence

from engine._solver_core import SearchAborted as SearchAborted

class Core:
    nodes: int
    node_limit: int
    def __init__(
        self,
        lead_suit: Sequence[int],
        members: Sequence[int],
        power: Sequence[Sequence[int]],
        trumps: int,
        may_trump: bool,
        points: Sequence[int],
        trick_value: int,
        players: int,
        active: int,
        side: int,
        scorers: int,
        tt_bits: int = 18,
    ) -> None: ...
    def search(
        self,
        hands: Sequence[int],
        trick: Sequence[tuple[int, int]],
        leader: int,
        alpha: int,
        beta: int,
    ) -> int: ...
    def move_values(
        self,
        hands: Sequence[int],
        trick: Sequence[tuple[int, int]],
        leader: int,
        allowed: int = -1,
        alpha: int = -1,
        beta: int = 1048576,
    ) -> list[tuple[int, int]]: ...
    def clear(self) -> None: ...
