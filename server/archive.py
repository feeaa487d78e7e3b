"""The archive's application layer: finished games, their records, and verifying a record.

Nothing here knows gRPC (``boneyard.server.archive_api`` is the servicer). Records are made by the one
record builder, ``boneyard.record.build_record``, from the store's rows exactly as stored, and
verified by ``boneyard.verify.verify_record``, the function the offline verifier runs.

Reads go to the store's tables through SQLAlchemy directly (read-only queries the repository
has no method for: filters across games and seats); the one write, revealing the seeds of a
finished game whose reveal a crash cut off, goes through ``EventStore.reveal_seeds``.
"""

from __future__ import annotations

import base64
import binascii
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.orm import Session, aliased, sessionmaker

from boneyard import codec, engine
from boneyard.engine import GameWon, HandScored, Ruleset
from boneyard.record import (
    GameNotOver,
    MalformedRecord,
    StoredRow,
    build_record,
    canonical_bytes,
)
from boneyard.server.errors import InvalidArgument, NotFound, PreconditionFailed
from boneyard.server.store.models import EventRow, GameDealRow, GameRow, HandSeedRow, SeatRow
from boneyard.server.store.repository import EventStore
from boneyard.v1 import archive_pb2
from boneyard.verify import verdict_to_proto, verify_record

__all__ = ["Archive", "ArchivedGame", "check_game_id"]

log = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
MAX_FILTER = 200


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
        raise InvalidArgument(f"not a game id: {game_id[:40]!r}") from None


class Archive:
    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._sessions = sessionmaker(store.engine, expire_on_commit=False)

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
        page_size: int = DEFAULT_PAGE_SIZE,
        page_token: str = "",
    ) -> tuple[list[ArchivedGame], str]:
        """One page of finished games, the most recently finished first, and the token of the
        next page ("" at the end). Keyset pagination on (finish time, id): a game finished
        while paging does not shift the pages after it."""
        if page_size < 0:
            raise InvalidArgument(f"page_size must not be negative, not {page_size}")
        size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        if len(preset) > MAX_FILTER or len(player_name) > MAX_FILTER:
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
            token = _encode_token(games[-1].finish_time, games[-1].game_id)
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
                raise NotFound(f"no game {game_id}")
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
            raise PreconditionFailed(str(e)) from None
        except MalformedRecord as e:  # a store this server did not write
            log.error("game %s: cannot make its record: %s", game_id, e)
            raise
        if any(not s.revealed for s in seeds) and fixed_deals:
            raise PreconditionFailed(
                f"game {game_id} played a tournament deal that is still being played at another "
                f"table: its record is published when every playing of the deal is over"
            )
        if any(not s.revealed for s in seeds):
            # The game is over, so its seeds are public; a crash between the last append and
            # the reveal may have left them marked secret.
            revealed = self._store.reveal_seeds(game_id)
            log.info("game %s: revealed %d seeds of the finished game", game_id, revealed)
        return record

    # ------------------------------------------------------------ verifying

    def verify(self, record: archive_pb2.GameRecord) -> archive_pb2.VerifyRecordResponse:
        """The offline verifier's verdict, and whether this server holds the same game."""
        response = verdict_to_proto(verify_record(record))
        response.stored_copy = self._stored_copy(record)
        return response

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


def _encode_token(finished: datetime, game_id: str) -> str:
    raw = f"{finished.astimezone(UTC).isoformat()}|{game_id}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _decode_token(token: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("utf-8")
        stamp, game_id = raw.split("|", 1)
        finished = datetime.fromisoformat(stamp)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidArgument(f"not a page token of this listing: {token[:40]!r}") from None
    if finished.tzinfo is None or not game_id:
        raise InvalidArgument(f"not a page token of this listing: {token[:40]!r}")
    return finished, game_id
