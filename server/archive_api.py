"""The gRPC servicer of ``boneyard.v1.ArchiveService``: decode, call ``boneyard.server.archive``
(errors become status codes in ``boneyard.server.interceptors``). Blocking store and
verification work runs in worker threads."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from boneyard import codec
from boneyard.server.api import check_text
from boneyard.server.archive import Archive, ArchivedGame, check_game_id
from boneyard.server.errors import InvalidArgument
from boneyard.server.store import EventStore
from boneyard.v1 import archive_pb2, archive_pb2_grpc

__all__ = ["ARCHIVE_SERVICE_NAME", "ArchiveServicer", "add_archive_service"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

ARCHIVE_SERVICE_NAME = archive_pb2.DESCRIPTOR.services_by_name["ArchiveService"].full_name

_MIN_SECONDS = -62_135_596_800
"""0001-01-01T00:00:00Z, the first instant a Timestamp may hold."""
_MAX_SECONDS = 253_402_300_799
"""9999-12-31T23:59:59Z, the last."""


def _instant(stamp: Timestamp, what: str) -> datetime:
    """A Timestamp as an aware datetime; ``InvalidArgument`` outside what a Timestamp may
    hold (years 1 to 9999, nanos 0 to 999,999,999)."""
    if not _MIN_SECONDS <= stamp.seconds <= _MAX_SECONDS or not 0 <= stamp.nanos <= 999_999_999:
        raise InvalidArgument(
            f"{what} must be a time from year 1 to 9999 with nanos 0..999999999, not "
            f"seconds={stamp.seconds} nanos={stamp.nanos}"
        )
    return stamp.ToDatetime(tzinfo=UTC)


def _archived_to_proto(game: ArchivedGame) -> archive_pb2.ArchivedGame:
    rules = game.rules
    message = archive_pb2.ArchivedGame(
        game_id=game.game_id,
        name=game.name,
        rules=codec.rules_to_proto(rules),
        seats=[
            archive_pb2.RecordSeat(
                seat=seat, player_name=game.players.get(seat, ""), team=rules.team_of[seat]
            )
            for seat in range(rules.players)
        ],
        scores=game.scores,
        winner=game.winner,
        events=game.events,
        head_hash=game.head_hash,
    )
    message.create_time.FromDatetime(game.create_time)
    message.finish_time.FromDatetime(game.finish_time)
    return message


class ArchiveServicer(archive_pb2_grpc.ArchiveServiceServicer):
    def __init__(self, archive: Archive) -> None:
        self._archive = archive

    async def _call(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def ListArchivedGames(
        self, request: archive_pb2.ListArchivedGamesRequest, context: grpc.aio.ServicerContext
    ) -> archive_pb2.ListArchivedGamesResponse:
        # No stored name or preset holds a control character; a NUL would even fail the
        # query on PostgreSQL (which cannot hold one in text).
        check_text(request.preset, "preset")
        check_text(request.player_name, "player_name")
        games, token = await self._call(
            self._archive.list_finished,
            preset=request.preset,
            player_name=request.player_name,
            finished_after=(
                _instant(request.finished_after, "finished_after")
                if request.HasField("finished_after")
                else None
            ),
            finished_before=(
                _instant(request.finished_before, "finished_before")
                if request.HasField("finished_before")
                else None
            ),
            page_size=request.page_size,
            page_token=request.page_token,
        )
        return archive_pb2.ListArchivedGamesResponse(
            games=[_archived_to_proto(g) for g in games], next_page_token=token
        )

    async def GetRecord(
        self, request: archive_pb2.GetRecordRequest, context: grpc.aio.ServicerContext
    ) -> archive_pb2.GetRecordResponse:
        game_id = check_game_id(request.game_id)
        record = await self._call(self._archive.record, game_id)
        return archive_pb2.GetRecordResponse(record=record)

    async def VerifyRecord(
        self, request: archive_pb2.VerifyRecordRequest, context: grpc.aio.ServicerContext
    ) -> archive_pb2.VerifyRecordResponse:
        if not request.HasField("record"):
            raise InvalidArgument("VerifyRecord needs a record")
        return await self._call(self._archive.verify, request.record)


def add_archive_service(server: grpc.aio.Server, store: EventStore) -> str:
    """Serve the archive of ``store`` on ``server``; return the service's full name (for
    reflection and health checking)."""
    archive_pb2_grpc.add_ArchiveServiceServicer_to_server(ArchiveServicer(Archive(store)), server)
    return ARCHIVE_SERVICE_NAME
