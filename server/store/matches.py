"""The store's side of matches (the tables of migration 0011): a match, its deals' games, and
the deals counted.

Two keys carry the guarantees a director running in several processes (or restarted) needs:
``match_games (match_id, deal, playing)``, written by ``link_game`` in the transaction that
makes the game, so each playing has one game; and ``match_deals (match_id, deal)``, written by
``count_deal`` with the deal's seeds revealed in the same transaction, so each deal is counted
once and is public exactly when it is counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import CursorResult, bindparam, case, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from boneyard.server.store.errors import StoreError
from boneyard.server.store.game_setup import TimeControl
from boneyard.server.store.models import (
    GameRow,
    HandSeedRow,
    MatchDealRow,
    MatchGameRow,
    MatchRow,
    table_of,
)
from boneyard.server.store.repository import EventStore
from boneyard.server.store.unit_of_work import Transaction

__all__ = [
    "CountedDeal",
    "Match",
    "MatchGame",
    "MatchGameRefused",
    "MatchStatus",
    "MatchStore",
    "MatchTotals",
    "Scoring",
    "SprtSpec",
]

_MATCHES = table_of(MatchRow)
_WITH_STATUS = (
    select(_MATCHES)
    .where(_MATCHES.c.status == bindparam("status"))
    .order_by(_MATCHES.c.created_at, _MATCHES.c.id)
)

MatchStatus = Literal["running", "finished", "cancelled"]
Scoring = Literal["marks", "points"]
_IN_PLAY = ("open", "playing")


@dataclass(frozen=True, slots=True)
class SprtSpec:
    m0: float
    m1: float
    alpha: float
    beta: float


@dataclass(frozen=True, slots=True)
class Match:
    id: str
    organiser_id: str
    entrant_a: str
    entrant_b: str
    """Account ids."""
    preset: str
    options: dict[str, Any]
    time_control: TimeControl | None
    scoring: Scoring
    max_deals: int
    """The deals asked for, or an SPRT match's cap."""
    sprt: SprtSpec | None
    max_in_flight: int
    status: MatchStatus
    verdict: str | None
    """``stronger`` or ``not_stronger``, once the SPRT has decided."""
    deals_at_verdict: int | None
    llr_at_verdict: float | None
    secret: bytes
    created_at: datetime


@dataclass(frozen=True, slots=True)
class MatchGame:
    deal: int
    playing: int
    game_id: str
    status: str
    """The game's status."""


@dataclass(frozen=True, slots=True)
class CountedDeal:
    deal: int
    score_a: int
    score_b: int


@dataclass(frozen=True, slots=True)
class MatchTotals:
    """Sums over a match's counted deals, each deal's figure being ``score_a - score_b``."""

    deals: int = 0
    total_a: int = 0
    total_b: int = 0
    figures: int = 0
    """The sum of the figures."""
    squares: int = 0
    """The sum of their squares."""
    wins: int = 0
    draws: int = 0
    losses: int = 0


class MatchGameRefused(StoreError):
    """A playing's game cannot be made now: another process made it, the deal is past what
    the match may start (its deals, its games in flight, its verdict, its status), or the
    deal's first playing is missing. Raised in the game's creating transaction, undoing it."""

    def __init__(self, match_id: str, deal: int, playing: int, why: str) -> None:
        super().__init__(f"match {match_id}: deal {deal}, playing {playing}: {why}")


class MatchStore:
    def __init__(self, store: EventStore) -> None:
        self._store = store

    # --- matches -----------------------------------------------------------------------

    def create(self, match: Match) -> None:
        with self._store.writing() as session:
            session.add(
                MatchRow(
                    id=match.id,
                    organiser_id=match.organiser_id,
                    entrant_a=match.entrant_a,
                    entrant_b=match.entrant_b,
                    preset=match.preset,
                    options=match.options,
                    time_control=match.time_control.as_json() if match.time_control else {},
                    scoring=match.scoring,
                    max_deals=match.max_deals,
                    sprt_m0=match.sprt.m0 if match.sprt else None,
                    sprt_m1=match.sprt.m1 if match.sprt else None,
                    sprt_alpha=match.sprt.alpha if match.sprt else None,
                    sprt_beta=match.sprt.beta if match.sprt else None,
                    max_in_flight=match.max_in_flight,
                    status=match.status,
                    secret=match.secret,
                    created_at=match.created_at,
                )
            )

    def match(self, match_id: str) -> Match | None:
        with self._store.reading() as session:
            row = session.get(MatchRow, match_id)
            return None if row is None else _match(row)

    def with_status(self, status: MatchStatus) -> list[Match]:
        """The matches in ``status``, oldest first. (Core, no ORM session: the director asks
        twice at the end of every game seated by accounts, most of them no match's.)"""
        with self._store.reading_rows() as conn:
            return [_match(r) for r in conn.execute(_WITH_STATUS, {"status": status})]

    def page(self, limit: int, after: tuple[datetime, str] | None = None) -> list[Match]:
        """Up to ``limit`` matches, newest first, after the one made at ``after`` (its time and
        id)."""
        query = select(MatchRow).order_by(MatchRow.created_at.desc(), MatchRow.id.desc())
        if after is not None:
            at, match_id = after
            query = query.where(
                (MatchRow.created_at < at)
                | ((MatchRow.created_at == at) & (MatchRow.id < match_id))
            )
        with self._store.reading() as session:
            return [_match(r) for r in session.scalars(query.limit(limit)).all()]

    def set_status(self, match_id: str, status: MatchStatus, was: MatchStatus) -> bool:
        """Move a match from ``was`` to ``status``; ``False`` if it was not in ``was`` (another
        process, or the organiser, moved it first)."""
        with self._store.writing() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(MatchRow)
                    .where(MatchRow.id == match_id, MatchRow.status == was)
                    .values(status=status)
                    .execution_options(synchronize_session=False)
                ),
            )
            return result.rowcount == 1

    def decide(self, match_id: str, verdict: str, deals: int, llr: float) -> bool:
        """Write the SPRT's verdict, unless one was written already."""
        with self._store.writing() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(MatchRow)
                    .where(MatchRow.id == match_id, MatchRow.verdict.is_(None))
                    .values(verdict=verdict, deals_at_verdict=deals, llr_at_verdict=llr)
                    .execution_options(synchronize_session=False)
                ),
            )
            return result.rowcount == 1

    # --- games -------------------------------------------------------------------------

    def deals_started(self, match_id: str) -> int:
        with self._store.reading() as session:
            return _deals_started(session, match_id)

    def uncounted_games(self, match_id: str) -> list[MatchGame]:
        """The games of the deals not counted yet (those in flight, and those just over), by
        deal and playing."""
        counted = (
            select(MatchDealRow.deal)
            .where(MatchDealRow.match_id == match_id, MatchDealRow.deal == MatchGameRow.deal)
            .exists()
        )
        with self._store.reading() as session:
            rows = session.execute(
                select(
                    MatchGameRow.deal, MatchGameRow.playing, MatchGameRow.game_id, GameRow.status
                )
                .join(GameRow, GameRow.id == MatchGameRow.game_id)
                .where(MatchGameRow.match_id == match_id, ~counted)
                .order_by(MatchGameRow.deal, MatchGameRow.playing)
            ).all()
        return [MatchGame(r.deal, r.playing, r.game_id, r.status) for r in rows]

    def deal_games(self, match_id: str, first: int, limit: int) -> list[MatchGame]:
        """The games of deals ``first`` to ``first + limit - 1``."""
        with self._store.reading() as session:
            rows = session.execute(
                select(
                    MatchGameRow.deal, MatchGameRow.playing, MatchGameRow.game_id, GameRow.status
                )
                .join(GameRow, GameRow.id == MatchGameRow.game_id)
                .where(
                    MatchGameRow.match_id == match_id,
                    MatchGameRow.deal >= first,
                    MatchGameRow.deal < first + limit,
                )
                .order_by(MatchGameRow.deal, MatchGameRow.playing)
            ).all()
        return [MatchGame(r.deal, r.playing, r.game_id, r.status) for r in rows]

    def counted_deals(self, match_id: str, first: int, limit: int) -> dict[int, CountedDeal]:
        """The deals counted among ``first`` to ``first + limit - 1``."""
        with self._store.reading() as session:
            rows = session.scalars(
                select(MatchDealRow).where(
                    MatchDealRow.match_id == match_id,
                    MatchDealRow.deal >= first,
                    MatchDealRow.deal < first + limit,
                )
            ).all()
        return {r.deal: CountedDeal(r.deal, r.score_a, r.score_b) for r in rows}

    @staticmethod
    def link_game(
        session: Transaction, match_id: str, deal: int, playing: int, game_id: str
    ) -> None:
        """Record the game made for a playing, in the game's creating transaction, or raise
        ``MatchGameRefused`` (undoing the game). A deal's first playing starts a new deal: only
        the next one, while the match runs undecided, has deals left to start and room in
        flight for both playings. Its second playing needs the first (and is made whatever
        the match's status: a deal started is played out). The match's row is locked first
        (PostgreSQL), so that processes making its games take turns; SQLite's single writer
        does the same."""
        match = session.execute(
            select(MatchRow.status, MatchRow.verdict, MatchRow.max_deals, MatchRow.max_in_flight)
            .where(MatchRow.id == match_id)
            .with_for_update()
        ).one()
        made = session.scalar(
            select(MatchGameRow.game_id).where(
                MatchGameRow.match_id == match_id,
                MatchGameRow.deal == deal,
                MatchGameRow.playing == playing,
            )
        )
        if made is not None:
            raise MatchGameRefused(match_id, deal, playing, "made already")
        if playing == 0:
            if match.status != "running" or match.verdict is not None:
                raise MatchGameRefused(match_id, deal, playing, "the match starts no more deals")
            started = _deals_started(session, match_id)
            if deal != started or deal >= match.max_deals:
                raise MatchGameRefused(match_id, deal, playing, f"{started} deals started")
            in_flight = session.scalar(
                select(func.count())
                .select_from(MatchGameRow)
                .join(GameRow, GameRow.id == MatchGameRow.game_id)
                .where(MatchGameRow.match_id == match_id, GameRow.status.in_(_IN_PLAY))
            )
            if int(in_flight or 0) + 2 > match.max_in_flight:
                raise MatchGameRefused(match_id, deal, playing, f"{in_flight} games in flight")
        else:
            first = session.scalar(
                select(MatchGameRow.game_id).where(
                    MatchGameRow.match_id == match_id,
                    MatchGameRow.deal == deal,
                    MatchGameRow.playing == 0,
                )
            )
            if first is None:
                raise MatchGameRefused(match_id, deal, playing, "its first playing is not made")
        session.execute(
            insert(MatchGameRow).values(
                match_id=match_id, deal=deal, playing=playing, game_id=game_id
            )
        )

    def count_deal(
        self, match_id: str, deal: int, score_a: int, score_b: int, game_ids: Sequence[str]
    ) -> bool:
        """Count a deal whose playings (``game_ids``) are over, and reveal their seeds, in one
        transaction; ``False`` if it was counted already (by another process, or before a
        restart)."""
        try:
            with self._store.writing() as session:
                session.add(
                    MatchDealRow(
                        match_id=match_id,
                        deal=deal,
                        score_a=score_a,
                        score_b=score_b,
                        counted_at=self._store.now(),
                    )
                )
                session.flush()
                session.execute(
                    update(HandSeedRow)
                    .where(HandSeedRow.game_id.in_(list(game_ids)), HandSeedRow.revealed.is_(False))
                    .values(revealed=True)
                    .execution_options(synchronize_session=False)
                )
        except IntegrityError:
            return False
        return True

    def totals(self, match_ids: Sequence[str]) -> dict[str, MatchTotals]:
        """The sums of each match's counted deals (one query for a page of matches)."""
        if not match_ids:
            return {}
        figure = MatchDealRow.score_a - MatchDealRow.score_b
        with self._store.reading() as session:
            rows = session.execute(
                select(
                    MatchDealRow.match_id,
                    func.count(),
                    func.sum(MatchDealRow.score_a),
                    func.sum(MatchDealRow.score_b),
                    func.sum(figure),
                    func.sum(figure * figure),
                    func.sum(case((figure > 0, 1), else_=0)),
                    func.sum(case((figure == 0, 1), else_=0)),
                    func.sum(case((figure < 0, 1), else_=0)),
                )
                .where(MatchDealRow.match_id.in_(list(match_ids)))
                .group_by(MatchDealRow.match_id)
            ).all()
        found = {match_id: MatchTotals() for match_id in match_ids}
        for row in rows:
            found[row[0]] = MatchTotals(*(int(value or 0) for value in row[1:]))
        return found

    def started(self, match_ids: Sequence[str]) -> dict[str, int]:
        """The deals each match has started (one query for a page)."""
        if not match_ids:
            return {}
        with self._store.reading() as session:
            rows = session.execute(
                select(MatchGameRow.match_id, func.max(MatchGameRow.deal))
                .where(MatchGameRow.match_id.in_(list(match_ids)))
                .group_by(MatchGameRow.match_id)
            ).all()
        found = dict.fromkeys(match_ids, 0)
        for match_id, last in rows:
            found[match_id] = int(last) + 1
        return found


def _deals_started(session: Transaction, match_id: str) -> int:
    """Deals are started in order, from 0: the last one's number, plus one."""
    last = session.scalar(
        select(func.max(MatchGameRow.deal)).where(MatchGameRow.match_id == match_id)
    )
    return 0 if last is None else int(last) + 1


def _match(row: Any) -> Match:
    """A match from its row: an ORM object or a row of columns of the same names."""
    sprt = (
        None
        if row.sprt_m0 is None
        else SprtSpec(
            float(row.sprt_m0),
            float(cast(float, row.sprt_m1)),
            float(cast(float, row.sprt_alpha)),
            float(cast(float, row.sprt_beta)),
        )
    )
    return Match(
        id=row.id,
        organiser_id=row.organiser_id,
        entrant_a=row.entrant_a,
        entrant_b=row.entrant_b,
        preset=row.preset,
        options=dict(row.options),
        time_control=TimeControl.from_json(dict(row.time_control)),
        scoring=cast(Scoring, row.scoring),
        max_deals=row.max_deals,
        sprt=sprt,
        max_in_flight=row.max_in_flight,
        status=cast(MatchStatus, row.status),
        verdict=row.verdict,
        deals_at_verdict=row.deals_at_verdict,
        llr_at_verdict=row.llr_at_verdict,
        secret=bytes(row.secret),
        created_at=row.created_at,
    )
