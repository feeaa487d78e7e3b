"""The gRPC servicer of ``boneyard.v1.ArchiveService``: decode, call ``boneyard.server.archive.archive``
(errors become status codes in ``boneyard.server.transport.grpc.piping``). Blocking store and
verification work runs in worker threads.

A VerifyRecord request is at most ``MAX_VERIFY_REQUEST_BYTES`` (``REQUEST_LIMITS``, which the
pipeline enforces before parsing); its verification is told the client's deadline,
and that the call is over when it is cancelled, so that a worker thread does not go on with a
record nobody waits for."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from boneyard.api import codec
from boneyard.api.v1 import archive_pb2, archive_pb2_grpc
from boneyard.records.record import MAX_RECORD_BYTES
from boneyard.records.signing import key_fingerprint
from boneyard.server.archive.analysis import HandAnalyst
from boneyard.server.archive.archive import MAX_VERIFY_SECONDS, Archive, ArchivedGame, check_game_id
from boneyard.server.archive.signing import RecordSigner
from boneyard.server.errors import InvalidArgument, PreconditionFailed
from boneyard.server.games.service import check_text
from boneyard.server.quotas import Quotas, peer_of
from boneyard.server.store import EventStore

__all__ = [
    "ARCHIVE_SERVICE_NAME",
    "MAX_VERIFY_REQUEST_BYTES",
    "REQUEST_LIMITS",
    "ArchiveServicer",
    "archive_servicer",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

ARCHIVE_SERVICE_NAME = archive_pb2.DESCRIPTOR.services_by_name["ArchiveService"].full_name

MAX_VERIFY_REQUEST_BYTES = MAX_RECORD_BYTES + 16
"""A record of at most ``MAX_RECORD_BYTES`` and the few bytes that wrap it in the request."""
REQUEST_LIMITS = {f"/{ARCHIVE_SERVICE_NAME}/VerifyRecord": MAX_VERIFY_REQUEST_BYTES}
"""The request bytes of this service's methods that differ from the server's default."""

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
        winning_seats=game.winning_seats,
        events=game.events,
        head_hash=game.head_hash,
    )
    message.create_time.FromDatetime(game.create_time)
    message.finish_time.FromDatetime(game.finish_time)
    return message


_EXPORT_FORMATS = {
    archive_pb2.RECORD_FILE_FORMAT_UNSPECIFIED: "json",
    archive_pb2.RECORD_FILE_FORMAT_JSON: "json",
    archive_pb2.RECORD_FILE_FORMAT_TEXT: "text",
}
"""ExportRecord's formats, as ``Archive.export`` names them."""

MAX_HAND_NUMBER = 10_000
"""Above the hands any game may have (``deal_limit`` and the record's bounds are lower)."""


class ArchiveServicer(archive_pb2_grpc.ArchiveServiceServicer):
    def __init__(
        self, archive: Archive, analyst: HandAnalyst | None = None, quotas: Quotas | None = None
    ) -> None:
        self._archive = archive
        self._analyst = analyst
        self._quotas = quotas or Quotas()

    async def _call(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def ListArchivedGames(
        self, request: archive_pb2.ListArchivedGamesRequest, context: grpc.aio.ServicerContext
    ) -> archive_pb2.ListArchivedGamesResponse:
        # No stored name or preset holds a control character; a NUL would even fail the
        # query on PostgreSQL (which cannot hold one in text).
        check_text(request.preset, "preset")
        check_text(request.player_name, "player_name")
        check_text(request.tournament_id, "tournament_id")
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
            tournament_id=request.tournament_id,
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
        remaining = context.time_remaining()
        deadline = None if remaining is None else time.monotonic() + remaining
        over = threading.Event()
        try:
            return await self._call(
                self._archive.verify, request.record, deadline=deadline, cancelled=over.is_set
            )
        finally:
            # Cancelled (the client went away, or its deadline passed): the worker thread
            # runs on regardless of the await, until it sees this.
            over.set()

    async def GetSigningKey(
        self, request: archive_pb2.GetSigningKeyRequest, context: grpc.aio.ServicerContext
    ) -> archive_pb2.GetSigningKeyResponse:
        signer = self._archive.signer
        if signer is None:
            raise PreconditionFailed("this server does not sign records", reason="NOT_SIGNING")
        return archive_pb2.GetSigningKeyResponse(
            algorithm=archive_pb2.SIGNATURE_ALGORITHM_ED25519,
            public_key=signer.public_key,
            fingerprint=key_fingerprint(signer.public_key),
        )

    async def ExportRecord(
        self, request: archive_pb2.ExportRecordRequest, context: grpc.aio.ServicerContext
    ) -> archive_pb2.ExportRecordResponse:
        game_id = check_game_id(request.game_id)
        form = _EXPORT_FORMATS.get(request.format)
        if form is None:
            raise InvalidArgument(
                f"format {request.format} is no RecordFileFormat this server knows "
                f"(JSON = 1, TEXT = 2)"
            )
        check_text(request.site, "site")
        exported = await self._call(self._archive.export, game_id, form, site=request.site)
        return archive_pb2.ExportRecordResponse(
            file_name=exported.file_name, media_type=exported.media_type, content=exported.content
        )

    # The base class says a message; this answers it encoded, as kept (the doors send bytes).
    async def AnalyzeHand(  # type: ignore[override]
        self, request: archive_pb2.AnalyzeHandRequest, context: grpc.aio.ServicerContext
    ) -> bytes:
        game_id = check_game_id(request.game_id)
        hand = request.hand_number
        if not 1 <= hand <= MAX_HAND_NUMBER:
            raise InvalidArgument(
                f"hand_number counts the deals from 1 (at most {MAX_HAND_NUMBER}), not {hand}"
            )
        assert self._analyst is not None, "the archive servicer was made without an analyst"
        kept = self._analyst.cached(game_id, hand)
        if kept is not None:
            return kept
        self._quotas.analysing(peer_of(context.peer()))
        return await self._analyst.analyse(game_id, hand)


def archive_servicer(
    store: EventStore,
    signer: RecordSigner,
    *,
    verify_seconds: float = MAX_VERIFY_SECONDS,
    quotas: Quotas | None = None,
) -> ArchiveServicer:
    """The archive of ``store``, its records signed by ``signer``, as a servicer (for the gRPC
    port and the HTTP listener alike); ``quotas`` bound the hand analyses a client asks for."""
    return ArchiveServicer(
        Archive(store, signer=signer, verify_seconds=verify_seconds), HandAnalyst(store), quotas
    )
