"""The archive's application layer: finished games, their records, and verifying a record.

Nothing here knows gRPC (``boneyard.server.archive.service`` is the servicer). Records are made by the one
record builder, ``boneyard.records.record.build_record``, from the store's rows exactly as stored,
signed with the server's key (``boneyard.server.archive.signing``), and verified by
``boneyard.records.verify.verify_record``, the function the offline verifier runs.

Verifying an uploaded record is bounded: a record over ``boneyard.records.record``'s bounds is refused
before any check, and the checks stop (``DeadlineExceeded``) when the caller's deadline passes,
the call is cancelled, or ``MAX_VERIFY_SECONDS`` have gone by.

The rows come from the store's side of the archive (``boneyard.server.store.archive``: the
listing's filters across games and seats, a game's log as stored); the one write, revealing
the seeds of a finished game whose reveal a crash cut off, goes through
``EventStore.reveal_seeds``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import archive_pb2
from boneyard.engine import GameWon, HandScored, Ruleset
from boneyard.records.notation import record_to_text
from boneyard.records.record import (
    GameNotOver,
    MalformedRecord,
    StoredRow,
    build_record,
    canonical_bytes,
    record_bounds_error,
    record_to_json,
)
from boneyard.records.verify import VerificationStopped, verdict_to_proto, verify_record
from boneyard.server import paging
from boneyard.server.archive.signing import RecordSigner
from boneyard.server.errors import DeadlineExceeded, InvalidArgument, NotFound, PreconditionFailed
from boneyard.server.paging import DEFAULT_PAGE_SIZE, decode_time_token, encode_time_token
from boneyard.server.store.archive import ArchiveStore, FinishedGame
from boneyard.server.store.repository import EventStore

__all__ = [
    "EXPORT_FORMATS",
    "MAX_SITE",
    "MAX_VERIFY_SECONDS",
    "Archive",
    "ArchivedGame",
    "ExportedRecord",
    "check_game_id",
]

log = logging.getLogger(__name__)

MAX_FILTER = 200
MAX_VERIFY_SECONDS = 30.0
"""The most time one VerifyRecord may take, whatever the client's deadline. A record within
the bounds verifies in about 2 s on one core (60,000 events): the limit is for a machine so
busy that it would take fifteen times that, where giving up is better than piling up work."""


@dataclass(frozen=True, slots=True)
class ArchivedGame:
    """A finished game as the archive lists it."""

    game_id: str
    name: str
    rules: Ruleset
    players: dict[int, str]
    scores: tuple[int, ...]
    winner: int
    winning_seats: tuple[int, ...]
    events: int
    head_hash: bytes
    create_time: datetime
    finish_time: datetime


@dataclass(frozen=True, slots=True)
class ExportedRecord:
    """A finished game's record as a file: a name to save it under, its media type, its text."""

    file_name: str
    media_type: str
    content: str


EXPORT_FORMATS = ("json", "text")
"""The forms ``Archive.export`` writes: ``boneyard export``'s JSON and the text notation."""
MAX_SITE = 200
"""The most characters of the text notation's [Site] tag an export request may give."""


def check_game_id(game_id: str) -> str:
    """The canonical form of a game id, or ``InvalidArgument``."""
    try:
        return str(uuid.UUID(game_id))
    except ValueError:
        raise InvalidArgument(f"not a game id: {game_id[:40]!r}", reason="BAD_GAME_ID") from None


class Archive:
    """The finished games of ``store``. ``signer`` signs every record (the server always has
    one; without it records are made unsigned, as before records were signed)."""

    def __init__(
        self,
        store: EventStore,
        *,
        signer: RecordSigner | None = None,
        verify_seconds: float = MAX_VERIFY_SECONDS,
    ) -> None:
        self._store = store
        self._rows = ArchiveStore(store)
        self.signer = signer
        self._verify_seconds = verify_seconds

    # ------------------------------------------------------------ listing

    def list_finished(
        self,
        *,
        preset: str = "",
        player_name: str = "",
        finished_after: datetime | None = None,
        finished_before: datetime | None = None,
        tournament_id: str = "",
        page_size: int = DEFAULT_PAGE_SIZE,
        page_token: str = "",
    ) -> tuple[list[ArchivedGame], str]:
        """One page of finished games, the most recently finished first, and the token of the
        next page ("" at the end). Keyset pagination on (finish time, id): a game finished
        while paging does not shift the pages after it."""
        size = paging.page_size(page_size)
        if max(len(preset), len(player_name), len(tournament_id)) > MAX_FILTER:
            raise InvalidArgument(f"a filter is at most {MAX_FILTER} characters")
        games = self._rows.finished(
            preset=preset,
            player_name=player_name,
            tournament_id=tournament_id,
            finished_after=finished_after,
            finished_before=finished_before,
            after=_decode_token(page_token) if page_token else None,
            limit=size + 1,
        )
        archived = [_archived(game) for game in games[:size]]
        token = ""
        if len(games) > size:
            token = encode_time_token(archived[-1].finish_time, archived[-1].game_id)
        return archived, token

    # ------------------------------------------------------------ records

    def record(self, game_id: str) -> archive_pb2.GameRecord:
        """The record of a finished game. ``NotFound``; ``PreconditionFailed`` while the game
        is not over (its record would show hidden tiles)."""
        stored = self._rows.log(game_id)
        if stored is None:
            raise NotFound(f"no game {game_id}", game_id=game_id)
        seeds, rows = stored.seeds, stored.events
        try:
            record = build_record(
                game_id,
                [StoredRow(r.seq, r.payload, r.hash) for r in rows],
                name=stored.name,
                players=stored.players,
                seeds={s.hand_number: (s.commitment, s.seed) for s in seeds},
                create_time=stored.created_at,
                finish_time=rows[-1].created_at if rows else None,
            )
        except GameNotOver as e:
            raise PreconditionFailed(str(e), reason="GAME_NOT_OVER", game_id=game_id) from None
        except MalformedRecord as e:  # a store this server did not write
            log.error("game %s: cannot make its record: %s", game_id, e)
            raise
        if any(not s.revealed for s in seeds) and stored.fixed_deals:
            raise PreconditionFailed(
                f"game {game_id} played a tournament deal that is still being played at another "
                f"table: its record is published when every playing of the deal is over",
                reason="EMBARGOED",
                game_id=game_id,
            )
        if any(not s.revealed for s in seeds):
            # The game is over, so its seeds are public; a crash between the last append and
            # the reveal may have left them marked secret.
            revealed = self._store.reveal_seeds(game_id)
            log.info("game %s: revealed %d seeds of the finished game", game_id, revealed)
        if self.signer is not None:
            self.signer.sign(record)
        return record

    def export(self, game_id: str, form: str, *, site: str = "") -> ExportedRecord:
        """The record of a finished game as ``boneyard export`` writes it: ``form`` "json"
        (``record_to_json``) or "text" (the notation, ``record_to_text``, its [Site] tag
        ``site``). Refused as ``record`` is; ``InvalidArgument`` for a site over ``MAX_SITE``."""
        assert form in EXPORT_FORMATS, form
        if len(site) > MAX_SITE:
            raise InvalidArgument(f"a site is at most {MAX_SITE} characters, not {len(site)}")
        record = self.record(game_id)
        if form == "text":
            return ExportedRecord(
                f"boneyard-{game_id}.txt",
                "text/plain; charset=utf-8",
                record_to_text(record, site=site),
            )
        return ExportedRecord(
            f"boneyard-{game_id}.json", "application/json", record_to_json(record)
        )

    # ------------------------------------------------------------ verifying

    def verify(
        self,
        record: archive_pb2.GameRecord,
        *,
        deadline: float | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> archive_pb2.VerifyRecordResponse:
        """The offline verifier's verdict, whether this server holds the same game, and
        whether its key signed the record.

        ``InvalidArgument`` for a record over the bounds (nothing is checked);
        ``DeadlineExceeded`` once ``deadline`` (``time.monotonic()``) has passed, ``cancelled``
        says the caller has gone, or the archive's time limit is up."""
        too_large = record_bounds_error(record)
        if too_large is not None:
            raise InvalidArgument(f"the record is over the bounds of a record: {too_large}")
        limit = time.monotonic() + self._verify_seconds
        why: list[str] = []

        def stop() -> bool:
            now = time.monotonic()
            if cancelled is not None and cancelled():
                why.append("the call was cancelled")
            elif deadline is not None and now >= deadline:
                why.append("the client's deadline passed")
            elif now >= limit:
                why.append(f"verifying took longer than this server's limit of "
                           f"{self._verify_seconds:g} s")
            return bool(why)

        try:
            verdict = verify_record(record, stop=stop)
        except VerificationStopped as e:
            log.info("VerifyRecord of game %.40r: %s, %s", record.game_id, why[0], e)
            raise DeadlineExceeded(f"VerifyRecord gave up: {why[0]} ({e})") from None
        response = verdict_to_proto(verdict)
        response.stored_copy = self._stored_copy(record)
        if verdict.summary is not None:
            response.signed_by = self._signed_by(verdict.summary.signing_key)
        return response

    def _signed_by(self, signing_key: bytes) -> archive_pb2.SignedBy.ValueType:
        if not signing_key:
            return archive_pb2.SIGNED_BY_NOBODY
        if self.signer is not None and signing_key == self.signer.public_key:
            return archive_pb2.SIGNED_BY_THIS_SERVER
        return archive_pb2.SIGNED_BY_ANOTHER_KEY

    def _stored_copy(self, record: archive_pb2.GameRecord) -> archive_pb2.StoredCopy.ValueType:
        """SAME only when this server holds the game, over, with the record's log event for
        event: the same canonical bytes and the same hashes."""
        try:
            game_id = str(uuid.UUID(record.game_id))
        except ValueError:
            return archive_pb2.STORED_COPY_ABSENT
        found = self._rows.stored_events(game_id)
        if found is None:
            return archive_pb2.STORED_COPY_ABSENT
        status, stored = found
        same = (
            status == "finished"
            and len(stored) == len(record.events)
            and all(
                digest == recorded.hash and payload == canonical_bytes(recorded.event)
                for (payload, digest), recorded in zip(stored, record.events, strict=True)
            )
        )
        return archive_pb2.STORED_COPY_SAME if same else archive_pb2.STORED_COPY_DIFFERENT


def _decode_token(token: str) -> tuple[datetime, str]:
    found = decode_time_token(token)
    if found is None:
        raise InvalidArgument(
            f"not a page token of this listing: {token[:40]!r}", reason="BAD_PAGE_TOKEN"
        )
    return found


def _archived(game: FinishedGame) -> ArchivedGame:
    """What the listing shows of a finished game, read from its first and last events."""
    events = [codec.decode_event(payload) for payload in game.ends]
    created = events[0]
    assert isinstance(created, engine.GameCreated), f"game {game.game_id} starts with {created}"
    scores = next((e.scores for e in reversed(events) if isinstance(e, HandScored)), ())
    won = next((e for e in reversed(events) if isinstance(e, GameWon)), None)
    return ArchivedGame(
        game_id=game.game_id,
        name=game.name,
        rules=created.rules,
        players=game.players,
        scores=tuple(scores),
        winner=won.team if won is not None else 0,
        winning_seats=won.seats if won is not None else (),
        events=game.version,
        head_hash=game.head_hash,
        create_time=game.created_at,
        finish_time=game.finished_at,
    )
