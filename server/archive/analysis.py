"""Hand analysis of finished games (``ArchiveService.AnalyzeHand``): the engine's double-dummy
values of every play (``boneyard.engine.analysis``), for games whose record is public.

Only a finished game is analysed (its hands are public once it is over, as its record shows
them); a tournament deal still being played elsewhere is embargoed as its record is. An
answer is kept per ``(game, hand)`` in a bounded cache (the least recently asked dropped
beyond ``CACHE_SIZE``): a finished game never changes. The solving runs in a worker thread,
at most ``MAX_SOLVING`` at once, so the event loop goes on (the compiled solver takes some
milliseconds a hand, the pure-Python one some hundred times that). What a client may ask is
bounded by the quotas (``Quotas.analysing``), counted when an answer must be computed.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

from boneyard.api import codec
from boneyard.api.v1 import archive_pb2
from boneyard.engine.analysis import HandAnalysis, NoSuchHand, analyze_hand, hands_in
from boneyard.server.errors import NotFound, PreconditionFailed
from boneyard.server.store.archive import ArchiveStore
from boneyard.server.store.repository import EventStore

__all__ = ["CACHE_SIZE", "MAX_SOLVING", "HandAnalyst", "analysis_to_proto"]

log = logging.getLogger(__name__)

CACHE_SIZE = 512
"""Analysed hands kept (each a few kB)."""
MAX_SOLVING = 2
"""Hands solved at once, at most (the others wait their turn)."""

_MEASURES = {
    "": archive_pb2.ANALYSIS_MEASURE_UNSPECIFIED,
    "points": archive_pb2.ANALYSIS_MEASURE_POINTS,
    "tricks": archive_pb2.ANALYSIS_MEASURE_TRICKS,
}


def analysis_to_proto(game_id: str, analysis: HandAnalysis) -> archive_pb2.AnalyzeHandResponse:
    response = archive_pb2.AnalyzeHandResponse(
        game_id=game_id,
        hand_number=analysis.number,
        measure=_MEASURES[analysis.measure],
        bidding_side=analysis.side,
        bidding_side_wants_more=analysis.side_wants_more,
    )
    if analysis.bidder is not None:
        response.bidder = analysis.bidder
    for play in analysis.plays:
        response.plays.add(
            seat=play.seat,
            tile=play.tile,
            options=[archive_pb2.TileValue(tile=t, value=v) for t, v in play.values],
            best_value=play.best,
            played_value=play.value,
            cost=play.cost,
        )
    return response


class HandAnalyst:
    """Analyses the hands of the finished games of ``store``, keeping the answers."""

    def __init__(self, store: EventStore, cache_size: int = CACHE_SIZE) -> None:
        self._rows = ArchiveStore(store)
        self._cache: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self._cache_size = cache_size
        self._solving = asyncio.Semaphore(MAX_SOLVING)

    def cached(self, game_id: str, hand: int) -> bytes | None:
        """The kept answer, encoded, if there is one."""
        found = self._cache.get((game_id, hand))
        if found is not None:
            self._cache.move_to_end((game_id, hand))
        return found

    async def analyse(self, game_id: str, hand: int) -> bytes:
        """The encoded ``AnalyzeHandResponse`` of hand ``hand`` of a finished game.
        ``NotFound`` (no game, no such hand), ``PreconditionFailed`` (not finished,
        embargoed)."""
        async with self._solving:
            found = self.cached(game_id, hand)
            if found is not None:
                return found
            encoded = await asyncio.to_thread(self._analyse, game_id, hand)
        self._cache[(game_id, hand)] = encoded
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return encoded

    def _analyse(self, game_id: str, hand: int) -> bytes:
        stored = self._rows.log(game_id)
        if stored is None:
            raise NotFound(f"no game {game_id}", game_id=game_id)
        if stored.status != "finished":
            raise PreconditionFailed(
                f"game {game_id} is {stored.status}: only a finished game's hands are analysed "
                f"(they are hidden until the game ends; an abandoned game has no record)",
                reason="GAME_NOT_OVER",
                game_id=game_id,
            )
        if stored.fixed_deals and any(not s.revealed for s in stored.seeds):
            raise PreconditionFailed(
                f"game {game_id} played a tournament deal that is still being played at another "
                f"table: its hands are shown when every playing of the deal is over",
                reason="EMBARGOED",
                game_id=game_id,
            )
        events = [codec.decode_event(row.payload) for row in stored.events]
        try:
            analysis = analyze_hand(events, hand)
        except NoSuchHand:
            raise NotFound(
                f"game {game_id} has {hands_in(events)} hands (counting redeals): no hand {hand}",
                reason="HAND_NOT_FOUND",
                game_id=game_id,
                hand_number=hand,
                hands=hands_in(events),
            ) from None
        return analysis_to_proto(game_id, analysis).SerializeToString()


