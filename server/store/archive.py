"""The store's side of the archive: finished games as the archive lists them, and a game's
log with its seeds and players as a record is made of them.

Only reads, across games and seats (the filters of a listing), each in one transaction of the
store's unit of work. What the rows mean (the rules, the scores, the record) is the archive's
business (``boneyard.server.archive``): the store hands over bytes as stored. The one write of
the archive, revealing the seeds of a finished game whose reveal a crash cut off, is
``EventStore.reveal_seeds``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.orm import aliased

from boneyard.server.store.models import (
    EventRow,
    GameDealRow,
    GameRow,
    HandSeedRow,
    SeatRow,
    TournamentGameRow,
)
from boneyard.server.store.repository import EventStore, SeedRecord
from boneyard.server.store.unit_of_work import Transaction

__all__ = ["ArchiveStore", "FinishedGame", "LoggedEvent", "StoredLog"]


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """A finished game as a listing shows it."""

    game_id: str
    name: str
    version: int
    created_at: datetime
    finished_at: datetime
    """When its last event was written."""
    head_hash: bytes
    ends: tuple[bytes, ...]
    """The payloads of its first event and of its last two (the game's rules, last scores
    and winner are in them)."""
    players: dict[int, str]
    """Seat -> player name."""


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    seq: int
    payload: bytes
    hash: bytes
    created_at: datetime


@dataclass(frozen=True, slots=True)
class StoredLog:
    """A game's log, seeds and players, read in one transaction."""

    game_id: str
    name: str
    status: str
    created_at: datetime
    events: list[LoggedEvent]
    """Up to the game's version, in order."""
    seeds: list[SeedRecord]
    players: dict[int, str]
    fixed_deals: bool
    """It plays a tournament's deals (fixed by a secret): its record waits for every playing."""


class ArchiveStore:
    def __init__(self, store: EventStore) -> None:
        self._store = store

    def finished(
        self,
        *,
        preset: str = "",
        player_name: str = "",
        tournament_id: str = "",
        finished_after: datetime | None = None,
        finished_before: datetime | None = None,
        after: tuple[datetime, str] | None = None,
        limit: int,
    ) -> list[FinishedGame]:
        """Finished games, the most recently finished first, at most ``limit``: those after
        ``after`` (the finish time and id of the last game of the page before), of
        ``preset``, with a seat taken by ``player_name`` (any case), of ``tournament_id``,
        finished in ``[finished_after, finished_before)``. Keyset order on (finish time, id),
        so a game finished while paging does not shift the pages after it. A playing of a
        tournament deal still being played elsewhere (its seeds secret) is left out."""
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
        if after is not None:
            at, last_id = after
            query = query.where(or_(finished < at, and_(finished == at, GameRow.id < last_id)))
        query = query.order_by(finished.desc(), GameRow.id.desc()).limit(limit)
        with self._store.reading() as session:
            return [
                _finished(session, row.GameRow, row.finished, bytes(row.head))
                for row in session.execute(query).all()
            ]

    def log(self, game_id: str) -> StoredLog | None:
        """The game's log (up to its version), seeds and players; ``None``: no such game."""
        with self._store.reading() as session:
            game = session.get(GameRow, game_id)
            if game is None:
                return None
            events = [
                LoggedEvent(r.seq, bytes(r.payload), bytes(r.hash), r.created_at)
                for r in session.execute(
                    select(EventRow.seq, EventRow.payload, EventRow.hash, EventRow.created_at)
                    .where(EventRow.game_id == game_id, EventRow.seq <= game.version)
                    .order_by(EventRow.seq)
                )
            ]
            seeds = [
                SeedRecord(s.hand_number, bytes(s.commitment), bytes(s.seed), bool(s.revealed))
                for s in session.scalars(select(HandSeedRow).where(HandSeedRow.game_id == game_id))
            ]
            return StoredLog(
                game_id=game.id,
                name=game.name,
                status=game.status,
                created_at=game.created_at,
                events=events,
                seeds=seeds,
                players=_players(session, game_id),
                fixed_deals=session.get(GameDealRow, game_id) is not None,
            )

    def stored_events(self, game_id: str) -> tuple[str, list[tuple[bytes, bytes]]] | None:
        """The game's status and the ``(payload, hash)`` of its events up to its version, in
        order; ``None``: no such game."""
        with self._store.reading() as session:
            game = session.get(GameRow, game_id)
            if game is None:
                return None
            rows = session.execute(
                select(EventRow.payload, EventRow.hash)
                .where(EventRow.game_id == game_id, EventRow.seq <= game.version)
                .order_by(EventRow.seq)
            ).all()
            return game.status, [(bytes(r.payload), bytes(r.hash)) for r in rows]


def _finished(session: Transaction, game: GameRow, finished: datetime, head: bytes) -> FinishedGame:
    ends = session.execute(
        select(EventRow.payload)
        .where(
            EventRow.game_id == game.id,
            or_(EventRow.seq == 1, EventRow.seq >= game.version - 1),
        )
        .order_by(EventRow.seq)
    ).all()
    return FinishedGame(
        game_id=game.id,
        name=game.name,
        version=game.version,
        created_at=game.created_at,
        finished_at=finished,
        head_hash=head,
        ends=tuple(bytes(r.payload) for r in ends),
        players=_players(session, game.id),
    )


def _players(session: Transaction, game_id: str) -> dict[int, str]:
    rows = session.execute(
        select(SeatRow.seat, SeatRow.player_name).where(SeatRow.game_id == game_id)
    ).all()
    return {int(r.seat): r.player_name for r in rows}
