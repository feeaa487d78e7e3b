"""The archive's application layer: finished games, their records, and verifying a record.

Nothing here knows gRPC (``boneyard.server.archive.service`` is the servicer). Records are made by the one
record builder, ``boneyard.records.record.build_record``, from the store's rows exactly as stored,
signed with the server's key (``boneyard.server.archive.signing``), and verified by
``boneyard.records.verify.verify_record``, the function the offline verifier runs.

Verifying an uploaded record is bounded: a record over ``boneyard.records.record``'s bounds is refused
before any check, and the checks stop (``DeadlineExceeded``) when the caller's deadline passes,
the call is cancelled, or ``MAX_VERIFY_SECONDS`` have gone by.

Reads go to the store's tables through SQLAlchemy directly (read-only queries the repository
has no method for: filters across games and seats); the one write, revealing the seeds of a
finished game whose reveal a crash cut off, goes through ``EventStore.reveal_seeds``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.orm import Session, aliased, sessionmaker

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import archive_pb2
from boneyard.engine import GameWon, HandScored, Ruleset
from boneyard.records.record import (
    GameNotOver,
    MalformedRecord,
    StoredRow,
    build_record,
    canonical_bytes,
    record_bounds_error,
)
from boneyard.records.verify import VerificationStopped, verdict_to_proto, verify_record
from boneyard.server import paging
from boneyard.server.archive.signing import RecordSigner
from boneyard.server.errors import DeadlineExceeded, InvalidArgument, NotFound, PreconditionFailed
from boneyard.server.paging import DEFAULT_PAGE_SIZE, decode_time_token, encode_time_token
from boneyard.server.store.models import (
    EventRow,
    GameDealRow,
    GameRow,
    HandSeedRow,
    SeatRow,
    TournamentGameRow,
)
from boneyard.server.store.repository import EventStore

__all__ = ["MAX_VERIFY_SECONDS", "Archive", "ArchivedGame", "check_game_id"]

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
    events: int
    head_hash: bytes
    create_time: datetime
    finish_time: datetime


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
        self._sessions = sessionmaker(store.engine, expire_on_commit=False)
        self.signer = signer
        self._verify_seconds = verify_seconds

    @contextmanager
    def _read(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

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
        last = aliased(EventRow)
        finished = last.created_at
        query = (
            select(GameRow, finished.label("finished"), last.hash.label("head"))
            .join(last, and_(last.game_id == GameRow.id, last.seq == GameRow.version))
            .where(GameRow.status == "finished")
            # Not a playing of a tournament deal still being played elsewhere (embargoed).
            .where(
                ~exists().where(
                    GameDealRow.game_id == GameRow.id,
                    exists().where(
                        HandSeedRow.game_id == GameRow.id, HandSeedRow.revealed.is_(False)
                    ),
                )
            )
        )
        if preset:
            query = query.where(GameRow.preset == preset)
        if player_name.strip():
            query = query.where(
                exists().where(
                    SeatRow.game_id == GameRow.id,
                    func.lower(SeatRow.player_name) == player_name.strip().lower(),
                )
            )
        if tournament_id:
            query = query.where(
                exists().where(
                    TournamentGameRow.game_id == GameRow.id,
                    TournamentGameRow.tournament_id == tournament_id,
                )
            )
        if finished_after is not None:
            query = query.where(finished >= finished_after)
        if finished_before is not None:
            query = query.where(finished < finished_before)
        if page_token:
            at, last_id = _decode_token(page_token)
            query = query.where(or_(finished < at, and_(finished == at, GameRow.id < last_id)))
        query = query.order_by(finished.desc(), GameRow.id.desc()).limit(size + 1)
        with self._read() as session:
            rows = session.execute(query).all()
            games = [
                self._archived(session, row.GameRow, row.finished, bytes(row.head))
                for row in rows[:size]
            ]
        token = ""
        if len(rows) > size:
            token = encode_time_token(games[-1].finish_time, games[-1].game_id)
        return games, token

    def _archived(
        self, session: Session, game: GameRow, finished: datetime, head: bytes
    ) -> ArchivedGame:
        ends = session.execute(
            select(EventRow.seq, EventRow.payload)
            .where(
                EventRow.game_id == game.id,
                or_(EventRow.seq == 1, EventRow.seq >= game.version - 1),
            )
            .order_by(EventRow.seq)
        ).all()
        events = [codec.decode_event(bytes(r.payload)) for r in ends]
        created = events[0]
        assert isinstance(created, engine.GameCreated), f"game {game.id} starts with {created}"
        scores = next((e.scores for e in reversed(events) if isinstance(e, HandScored)), ())
        winner = next((e.team for e in reversed(events) if isinstance(e, GameWon)), 0)
        seats = session.execute(
            select(SeatRow.seat, SeatRow.player_name).where(SeatRow.game_id == game.id)
        ).all()
        return ArchivedGame(
            game_id=game.id,
            name=game.name,
            rules=created.rules,
            players={s.seat: s.player_name for s in seats},
            scores=tuple(scores),
            winner=winner,
            events=game.version,
            head_hash=head,
            create_time=game.created_at,
            finish_time=finished,
        )

    # ------------------------------------------------------------ records

    def record(self, game_id: str) -> archive_pb2.GameRecord:
        """The record of a finished game. ``NotFound``; ``PreconditionFailed`` while the game
        is not over (its record would show hidden tiles)."""
        with self._read() as session:
            game = session.get(GameRow, game_id)
            if game is None:
                raise NotFound(f"no game {game_id}", game_id=game_id)
            rows = session.execute(
                select(EventRow.seq, EventRow.payload, EventRow.hash, EventRow.created_at)
                .where(EventRow.game_id == game_id, EventRow.seq <= game.version)
                .order_by(EventRow.seq)
            ).all()
            seeds = (
                session.execute(select(HandSeedRow).where(HandSeedRow.game_id == game_id))
                .scalars()
                .all()
            )
            players = session.execute(
                select(SeatRow.seat, SeatRow.player_name).where(SeatRow.game_id == game_id)
            ).all()
            name, created_at = game.name, game.created_at
            fixed_deals = session.get(GameDealRow, game_id) is not None
        try:
            record = build_record(
                game_id,
                [StoredRow(r.seq, bytes(r.payload), bytes(r.hash)) for r in rows],
                name=name,
                players={p.seat: p.player_name for p in players},
                seeds={s.hand_number: (bytes(s.commitment), bytes(s.seed)) for s in seeds},
                create_time=created_at,
                finish_time=rows[-1].created_at if rows else None,
            )
        except GameNotOver as e:
            raise PreconditionFailed(str(e), reason="GAME_NOT_OVER", game_id=game_id) from None
        except MalformedRecord as e:  # a store this server did not write
            log.error("game %s: cannot make its record: %s", game_id, e)
            raise
        if any(not s.revealed for s in seeds) and fixed_deals:
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
        with self._read() as session:
            game = session.get(GameRow, game_id)
            if game is None:
                return archive_pb2.STORED_COPY_ABSENT
            finished = game.status == "finished"
            stored = session.execute(
                select(EventRow.payload, EventRow.hash)
                .where(EventRow.game_id == game_id, EventRow.seq <= game.version)
                .order_by(EventRow.seq)
            ).all()
        same = (
            finished
            and len(stored) == len(record.events)
            and all(
                bytes(row.hash) == recorded.hash
                and bytes(row.payload) == canonical_bytes(recorded.event)
                for row, recorded in zip(stored, record.events, strict=True)
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
