"""The gRPC servicer of ``boneyard.v1.RatingService``: decode, read ``RatingStore`` in a worker
thread, encode (errors become status codes in ``boneyard.server.transport.grpc.piping``). Ratings are
public: no credentials."""

from __future__ import annotations

import asyncio

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from boneyard.api.v1 import ratings_pb2, ratings_pb2_grpc, rules_pb2
from boneyard.engine.rulesets import MOON, TEXAS42
from boneyard.server.competition.ratings import is_provisional
from boneyard.server.errors import InvalidArgument, NotFound
from boneyard.server.games.service import check_account_name_given
from boneyard.server.paging import decode_token, encode_token, page_size
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.ratings import RatingHistory, RatingStore, StoredRating
from boneyard.server.store.repository import EventStore

__all__ = ["RATING_SERVICE_NAME", "RatingServicer"]

RATING_SERVICE_NAME = ratings_pb2.DESCRIPTOR.services_by_name["RatingService"].full_name


_TYPES: dict[int, str] = {rules_pb2.FAMILY_TEXAS42: TEXAS42, rules_pb2.FAMILY_MOON: MOON}
_FAMILIES: dict[str, rules_pb2.Family.ValueType] = {
    TEXAS42: rules_pb2.FAMILY_TEXAS42,
    MOON: rules_pb2.FAMILY_MOON,
}


class RatingServicer(ratings_pb2_grpc.RatingServiceServicer):
    def __init__(self, store: EventStore) -> None:
        self._ratings = RatingStore(store)
        self._competition = CompetitionStore(store)

    async def GetLeaderboard(
        self, request: ratings_pb2.GetLeaderboardRequest, context: grpc.aio.ServicerContext
    ) -> ratings_pb2.GetLeaderboardResponse:
        game_type = _game_type(request.game_type)
        size = page_size(request.page_size, "page_size")
        after, rank = _decode_token(request.page_token) if request.page_token else (None, 0)
        # One more than asked: whether there is a next page, without counting.
        lines = await asyncio.to_thread(self._ratings.leaderboard, game_type, size + 1, after)
        page = lines[:size]
        entries = [
            ratings_pb2.LeaderboardEntry(rank=rank + n + 1, rating=_rating(line))
            for n, line in enumerate(page)
        ]
        token = ""
        if len(lines) > size and page:
            token = _encode_token(page[-1].ordinal, page[-1].account_id, rank + len(page))
        return ratings_pb2.GetLeaderboardResponse(entries=entries, next_page_token=token)

    async def GetRating(
        self, request: ratings_pb2.GetRatingRequest, context: grpc.aio.ServicerContext
    ) -> ratings_pb2.GetRatingResponse:
        check_account_name_given(request.account_name, "account_name")
        size = page_size(request.history_size, "history_size")
        account = await asyncio.to_thread(self._competition.account_named, request.account_name)
        if account is None:
            raise NotFound(
                f"no account named {request.account_name!r}",
                reason="ACCOUNT_NOT_FOUND",
                account_name=request.account_name,
            )
        ratings = await asyncio.to_thread(self._ratings.ratings_of, account.id)
        answer = ratings_pb2.GetRatingResponse(account_name=account.name)
        for rating in ratings:
            history = await asyncio.to_thread(
                self._ratings.history, account.id, rating.game_type, size
            )
            answer.ratings.append(
                ratings_pb2.GameTypeRating(
                    rating=_rating(rating), history=[_change(h) for h in history]
                )
            )
        return answer


def _game_type(family: int) -> str:
    game_type = _TYPES.get(family)
    if game_type is None:
        raise InvalidArgument(
            f"game_type must be FAMILY_TEXAS42 or FAMILY_MOON, not {family}",
            reason="BAD_ARGUMENT",
        )
    return game_type


def _rating(r: StoredRating) -> ratings_pb2.Rating:
    return ratings_pb2.Rating(
        account_name=r.name,
        game_type=_FAMILIES[r.game_type],
        mu=r.mu,
        sigma=r.sigma,
        ordinal=r.ordinal,
        games=r.games,
        provisional=is_provisional(r),
    )


def _change(h: RatingHistory) -> ratings_pb2.RatingHistoryEntry:
    stamp = Timestamp()
    stamp.FromDatetime(h.at)
    return ratings_pb2.RatingHistoryEntry(
        game_id=h.game_id,
        mu_before=h.mu_before,
        sigma_before=h.sigma_before,
        mu_after=h.mu_after,
        sigma_after=h.sigma_after,
        rate_time=stamp,
    )


def _encode_token(ordinal: float, account_id: str, rank: int) -> str:
    return encode_token(ordinal.hex(), account_id, str(rank))


def _decode_token(token: str) -> tuple[tuple[float, str], int]:
    """``((ordinal, account id), rank)`` of the last line of the previous page."""
    bad = InvalidArgument(
        f"not a page token of this leaderboard: {token[:40]!r}", reason="BAD_PAGE_TOKEN"
    )
    fields = decode_token(token, 3)
    if fields is None:
        raise bad
    ordinal, account_id, rank = fields
    try:
        after = (float.fromhex(ordinal), account_id)
        number = int(rank)
    except ValueError:
        raise bad from None
    if not account_id or len(account_id) > 36 or number < 0 or after[0] != after[0]:
        raise bad
    return after, number
