"""What every strategy is, and helpers to read a view in the engine's terms."""

from __future__ import annotations

import hashlib
import random
from typing import Protocol

from boneyard.engine.tiles import Tile, TileSet, iter_tiles
from boneyard.v1 import actions_pb2, rules_pb2, view_pb2

__all__ = ["Strategy", "action_kind", "contract_trump", "is_moon", "tiles_in", "view_rng"]

_MOON_BIDS = (rules_pb2.BID_KIND_TRICKS, rules_pb2.BID_KIND_MOON)
_TEXAS_BIDS = (
    rules_pb2.BID_KIND_POINTS,
    rules_pb2.BID_KIND_MARKS,
    rules_pb2.BID_KIND_PLUNGE,
    rules_pb2.BID_KIND_SPLASH,
)


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


def tiles_in(mask: TileSet) -> list[Tile]:
    """The tiles of a set, lowest first."""
    return list(iter_tiles(mask))


def action_kind(action: actions_pb2.Action) -> str | None:
    return action.WhichOneof("kind")


def contract_trump(contract: rules_pb2.Contract) -> int:
    """The engine's trump (0..6, DOUBLES, FOLLOW_ME) of a trump contract."""
    return int(contract.trump) - 1


def is_moon(view: view_pb2.SeatView) -> bool:
    """Moon is told by its bids (tricks or the moon) and its widow; else 3 players and 22 tiles
    (a view does not carry its ruleset)."""
    kinds = [a.bid.kind for a in view.legal_actions if action_kind(a) == "bid"]
    kinds += [entry.bid.kind for entry in view.bids if entry.HasField("bid")]
    if view.HasField("high_bid"):
        kinds.append(view.high_bid.kind)
    if any(k in _MOON_BIDS for k in kinds):
        return True
    if any(k in _TEXAS_BIDS for k in kinds):
        return False
    if view.phase == view_pb2.PHASE_WIDOW or view.HasField("discard"):
        return True
    return view.players == 3 and sum(view.hand_sizes) <= 22
