"""The gRPC servicer of matches (MatchService). Thin, like the others: decode and bound the
request, authenticate the organiser's key, call the director, encode its report."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime

import grpc

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import game_pb2, matches_pb2, matches_pb2_grpc
from boneyard.server.competition.match_stats import Verdict
from boneyard.server.competition.matches import (
    DEFAULT_IN_FLIGHT,
    MAX_DEALS,
    MatchDirector,
    MatchReport,
    check_sprt,
)
from boneyard.server.errors import InvalidArgument
from boneyard.server.games.app import GameApp
from boneyard.server.games.service import GAME_STATUS_TO_PROTO, check_account_name_given
from boneyard.server.games.time_controls import time_control_from_proto, time_control_to_proto
from boneyard.server.paging import (
    decode_time_token,
    decode_token,
    encode_time_token,
    encode_token,
    page_size,
)
from boneyard.server.store.matches import Scoring
from boneyard.server.transport.pipeline import credentials

__all__ = ["MatchServicer"]

_STATUS = {
    "running": matches_pb2.MATCH_STATUS_RUNNING,
    "finished": matches_pb2.MATCH_STATUS_FINISHED,
    "cancelled": matches_pb2.MATCH_STATUS_CANCELLED,
}
_SCORING: dict[int, Scoring] = {
    matches_pb2.MATCH_SCORING_UNSPECIFIED: "marks",
    matches_pb2.MATCH_SCORING_MARKS: "marks",
    matches_pb2.MATCH_SCORING_POINTS: "points",
}
_SCORING_TO_PROTO = {
    "marks": matches_pb2.MATCH_SCORING_MARKS,
    "points": matches_pb2.MATCH_SCORING_POINTS,
}
_VERDICT = {
    Verdict.UNDECIDED.value: matches_pb2.MATCH_VERDICT_UNDECIDED,
    Verdict.STRONGER.value: matches_pb2.MATCH_VERDICT_A_STRONGER,
    Verdict.NOT_STRONGER.value: matches_pb2.MATCH_VERDICT_A_NOT_STRONGER,
}


class MatchServicer(matches_pb2_grpc.MatchServiceServicer):
    def __init__(self, app: GameApp, director: MatchDirector) -> None:
        self._app = app
        self._director = director

    async def CreateMatch(
        self, request: matches_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext
    ) -> matches_pb2.CreateMatchResponse:
        organiser = await self._app.keys.organiser(credentials())
        check_account_name_given(request.entrant_a, "entrant_a")
        check_account_name_given(request.entrant_b, "entrant_b")
        preset, options = codec.rules_overrides_from_proto(request.rules)
        control = time_control_from_proto(request.time_control, request.HasField("time_control"))
        scoring = _SCORING.get(request.scoring)
        if scoring is None:
            raise InvalidArgument(f"unknown match scoring {request.scoring}")
        length = request.WhichOneof("length")
        if length is None:
            raise InvalidArgument("a match needs its length: deals, or an sprt")
        deals = request.deals if length == "deals" else None
        sprt = None
        max_deals = MAX_DEALS
        if length == "sprt":
            given = request.sprt
            sprt = check_sprt(given.m0, given.m1, given.alpha, given.beta)
            max_deals = given.max_deals or MAX_DEALS
        match = await asyncio.to_thread(
            self._director.create,
            organiser,
            request.entrant_a,
            request.entrant_b,
            preset,
            options,
            scoring=scoring,
            deals=deals,
            sprt=sprt,
            max_deals=max_deals,
            time_control=control,
            max_in_flight=request.max_games_in_flight or DEFAULT_IN_FLIGHT,
        )
        self._director.wake()
        message = await asyncio.to_thread(self._describe, match.id)
        return matches_pb2.CreateMatchResponse(match=message)

    async def GetMatch(
        self, request: matches_pb2.GetMatchRequest, context: grpc.aio.ServicerContext
    ) -> matches_pb2.GetMatchResponse:
        match_id = _check_match_id(request.match_id)
        message = await asyncio.to_thread(self._describe, match_id)
        return matches_pb2.GetMatchResponse(match=message)

    async def ListMatches(
        self, request: matches_pb2.ListMatchesRequest, context: grpc.aio.ServicerContext
    ) -> matches_pb2.ListMatchesResponse:
        size = page_size(request.page_size)
        after = _decode_after(request.page_token) if request.page_token else None
        messages, last = await asyncio.to_thread(self._page, size, after)
        token = encode_time_token(*last) if last is not None and len(messages) == size else ""
        return matches_pb2.ListMatchesResponse(matches=messages, next_page_token=token)

    async def ListMatchDeals(
        self, request: matches_pb2.ListMatchDealsRequest, context: grpc.aio.ServicerContext
    ) -> matches_pb2.ListMatchDealsResponse:
        match_id = _check_match_id(request.match_id)
        size = page_size(request.page_size)
        first = _decode_deal(request.page_token) if request.page_token else 0
        deals, started = await asyncio.to_thread(self._deals, match_id, first, size)
        following = first + size
        token = encode_token(str(following)) if following < started else ""
        return matches_pb2.ListMatchDealsResponse(deals=deals, next_page_token=token)

    async def CancelMatch(
        self, request: matches_pb2.CancelMatchRequest, context: grpc.aio.ServicerContext
    ) -> matches_pb2.CancelMatchResponse:
        caller = await self._app.keys.organiser(credentials())
        match_id = _check_match_id(request.match_id)
        await asyncio.to_thread(self._director.cancel, match_id, caller)
        self._director.wake()
        message = await asyncio.to_thread(self._describe, match_id)
        return matches_pb2.CancelMatchResponse(match=message)

    # ------------------------------------------------------------ describing

    def _describe(self, match_id: str) -> matches_pb2.Match:
        match = self._director.get(match_id)
        return self._messages([self._director.reports([match])[0]])[0]

    def _page(
        self, size: int, after: tuple[datetime, str] | None
    ) -> tuple[list[matches_pb2.Match], tuple[datetime, str] | None]:
        matches = self._director.store.page(size, after)
        last = (matches[-1].created_at, matches[-1].id) if matches else None
        return self._messages(self._director.reports(matches)), last

    def _messages(self, reports: list[MatchReport]) -> list[matches_pb2.Match]:
        ids = {
            a for r in reports for a in (r.match.organiser_id, r.match.entrant_a, r.match.entrant_b)
        }
        names = {a.id: a.name for a in self._app.competition.accounts(sorted(ids)).values()}
        return [_match_to_proto(r, names) for r in reports]

    def _deals(
        self, match_id: str, first: int, size: int
    ) -> tuple[list[matches_pb2.MatchDeal], int]:
        self._director.get(match_id)  # MATCH_NOT_FOUND
        store = self._director.store
        started = store.deals_started(match_id)
        games = store.deal_games(match_id, first, size)
        counted = store.counted_deals(match_id, first, size)
        by_deal: dict[int, matches_pb2.MatchDeal] = {}
        for g in games:
            deal = by_deal.setdefault(g.deal, matches_pb2.MatchDeal(deal=g.deal))
            deal.game_ids.append(g.game_id)
            deal.statuses.append(
                GAME_STATUS_TO_PROTO.get(g.status, game_pb2.GAME_STATUS_UNSPECIFIED)
            )
        for number, scores in counted.items():
            deal = by_deal.setdefault(number, matches_pb2.MatchDeal(deal=number))
            deal.counted = True
            deal.score_a = scores.score_a
            deal.score_b = scores.score_b
        return [by_deal[d] for d in sorted(by_deal)], started


def _match_to_proto(report: MatchReport, names: dict[str, str]) -> matches_pb2.Match:
    match, totals, tally = report.match, report.totals, report.tally
    rules = engine.ruleset(match.preset, match.options)
    message = matches_pb2.Match(
        match_id=match.id,
        organiser=names.get(match.organiser_id, ""),
        entrant_a=names.get(match.entrant_a, ""),
        entrant_b=names.get(match.entrant_b, ""),
        rules=codec.rules_to_proto(rules),
        scoring=_SCORING_TO_PROTO[match.scoring],
        deals=match.max_deals if match.sprt is None else 0,
        max_games_in_flight=match.max_in_flight,
        status=_STATUS[match.status],
        deals_started=report.deals_started,
        deals_finished=totals.deals,
        total_a=totals.total_a,
        total_b=totals.total_b,
        mean=tally.mean,
        mean_interval=matches_pb2.ConfidenceInterval(low=report.mean.low, high=report.mean.high),
        wins=tally.wins,
        draws=tally.draws,
        losses=tally.losses,
        win_rate=tally.win_rate,
        win_rate_interval=matches_pb2.ConfidenceInterval(
            low=tally.win_rate_interval.low, high=tally.win_rate_interval.high
        ),
    )
    message.create_time.FromDatetime(match.created_at)
    if match.time_control is not None:
        message.time_control.CopyFrom(time_control_to_proto(match.time_control))
    if match.sprt is not None and report.sprt is not None:
        message.sprt.CopyFrom(
            matches_pb2.MatchSprt(
                m0=match.sprt.m0,
                m1=match.sprt.m1,
                alpha=match.sprt.alpha,
                beta=match.sprt.beta,
                max_deals=match.max_deals,
            )
        )
        message.llr = report.sprt.llr
        message.llr_lower_bound = report.sprt.lower
        message.llr_upper_bound = report.sprt.upper
        message.verdict = _VERDICT[match.verdict or Verdict.UNDECIDED.value]
        message.deals_at_verdict = match.deals_at_verdict or 0
        message.llr_at_verdict = match.llr_at_verdict or 0.0
    return message


def _check_match_id(match_id: str) -> str:
    try:
        return str(uuid.UUID(match_id))
    except ValueError:
        raise InvalidArgument(f"not a match id: {match_id[:40]!r}") from None


def _decode_after(token: str) -> tuple[datetime, str]:
    found = decode_time_token(token)
    if found is None:
        raise InvalidArgument(
            f"not a page token of the matches: {token[:40]!r}", reason="BAD_PAGE_TOKEN"
        )
    return found


def _decode_deal(token: str) -> int:
    fields = decode_token(token, 1)
    if fields is None or not (fields[0].isascii() and fields[0].isdigit()) or len(fields[0]) > 6:
        raise InvalidArgument(
            f"not a page token of a match's deals: {token[:40]!r}", reason="BAD_PAGE_TOKEN"
        )
    return int(fields[0])
