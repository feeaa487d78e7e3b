"""The store's side of challenges (``challenges``, ``challenge_participants``; migration 0008).

A challenge leaves ``open`` once, by ``UPDATE ... WHERE status = 'open'``: of two processes
finishing it (the last two acceptances, an acceptance and the expiry), the database lets one
win. Every answer first takes the challenge's row lock (an update of the row that changes
nothing), so the answers of one challenge are serialized and the last acceptance sees the
others. What each change tells the accounts (their ``account_events``) is written in its
transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import ColumnElement, CursorResult, func, insert, or_, select, update

from boneyard.server.store.account_events import (
    AccountEvent,
    NewAccountEvent,
    account_events_after,
    append_account_events,
    last_sequence,
)
from boneyard.server.store.errors import StoreError
from boneyard.server.store.game_setup import TimeControl
from boneyard.server.store.models import AccountRow, ChallengeParticipantRow, ChallengeRow
from boneyard.server.store.repository import EventStore
from boneyard.server.store.unit_of_work import Transaction

__all__ = [
    "Challenge",
    "ChallengeGone",
    "ChallengeSeat",
    "ChallengeStatus",
    "ChallengeStore",
    "Events",
    "Refused",
]

ChallengeStatus = Literal["open", "accepted", "declined", "expired"]
Answer = Literal["accepted", "declined"]


@dataclass(frozen=True, slots=True)
class ChallengeSeat:
    seat: int
    account_id: str
    name: str
    challenger: bool
    answer: Answer | None


@dataclass(frozen=True, slots=True)
class Challenge:
    id: str
    challenger_id: str
    challenger_name: str
    preset: str
    options: dict[str, Any]
    time_control: TimeControl | None
    rated: bool
    status: ChallengeStatus
    game_id: str | None
    declined_by: str | None
    """The name of the account that declined."""
    created_at: datetime
    expires_at: datetime
    seats: tuple[ChallengeSeat, ...]
    """By seat."""

    @property
    def account_ids(self) -> list[str]:
        return [s.account_id for s in self.seats]

    def seat_of(self, account_id: str) -> ChallengeSeat | None:
        return next((s for s in self.seats if s.account_id == account_id), None)


Events = Callable[[Challenge], Sequence[NewAccountEvent]]
"""What a change of a challenge tells the accounts, given the challenge after it."""


class Refused(StoreError):
    """An answer the challenge cannot take: ``why`` is ``not_found`` (no such challenge, or
    the account is not at its table), ``not_challenged`` (the challenger) or ``not_open`` (over,
    or answered already); ``challenge`` is as it stands (``None`` for ``not_found``)."""

    def __init__(self, why: str, challenge: Challenge | None) -> None:
        super().__init__(why)
        self.why = why
        self.challenge = challenge


class ChallengeGone(StoreError):
    """The challenge changed while its game was being made (an answer or the expiry won the
    race): the game is undone."""


class ChallengeStore:
    def __init__(self, store: EventStore) -> None:
        self._store = store

    # --- making -------------------------------------------------------------------------

    def create(
        self,
        challenge_id: str,
        challenger_id: str,
        preset: str,
        options: dict[str, Any],
        time_control: TimeControl | None,
        rated: bool,
        expires_at: datetime,
        seats: Sequence[tuple[int, str, bool]],
        events: Events,
        max_open: int,
    ) -> tuple[Challenge, list[AccountEvent]] | None:
        """Store an open challenge (``seats``: ``(seat, account_id, is_challenger)``) with
        what it tells the accounts; ``None`` (nothing stored) if the challenger has
        ``max_open`` open challenges already."""
        now = self._store.now()
        with self._store.writing() as session:
            # The challenger's row lock: two CreateChallenges of one account count in turn.
            session.execute(
                update(AccountRow)
                .where(AccountRow.id == challenger_id)
                .values(event_seq=AccountRow.event_seq)
                .execution_options(synchronize_session=False)
            )
            open_now = session.scalar(
                select(func.count())
                .select_from(ChallengeRow)
                .where(
                    ChallengeRow.challenger_id == challenger_id,
                    ChallengeRow.status == "open",
                    ChallengeRow.expires_at > now,
                )
            )
            if int(open_now or 0) >= max_open:
                return None
            session.add(
                ChallengeRow(
                    id=challenge_id,
                    challenger_id=challenger_id,
                    preset=preset,
                    options=options,
                    time_control=time_control.as_json() if time_control else {},
                    rated=rated,
                    status="open",
                    created_at=now,
                    expires_at=expires_at,
                )
            )
            session.flush()
            session.execute(
                insert(ChallengeParticipantRow),
                [
                    {
                        "challenge_id": challenge_id,
                        "seat": seat,
                        "account_id": account_id,
                        "challenger": challenger,
                        "answer": None,
                    }
                    for seat, account_id, challenger in seats
                ],
            )
            challenge = _load(session, challenge_id)
            assert challenge is not None
            told = append_account_events(session, events(challenge), now)
        return challenge, told

    # --- reading ------------------------------------------------------------------------

    def get(self, challenge_id: str) -> Challenge | None:
        with self._store.reading() as session:
            return _load(session, challenge_id)

    def of_account(
        self, account_id: str, received: bool, sent: bool, status: str | None, limit: int
    ) -> list[Challenge]:
        """The account's challenges (those it received, made, or both), newest first."""
        with self._store.reading() as session:
            mine = select(ChallengeParticipantRow.challenge_id).where(
                ChallengeParticipantRow.account_id == account_id,
                ChallengeParticipantRow.challenger.is_(False),
            )
            conditions: list[ColumnElement[bool]] = []
            if received:
                conditions.append(ChallengeRow.id.in_(mine))
            if sent:
                conditions.append(ChallengeRow.challenger_id == account_id)
            query = select(ChallengeRow.id).where(or_(*conditions))
            if status is not None:
                query = query.where(ChallengeRow.status == status)
            ids = session.scalars(
                query.order_by(ChallengeRow.created_at.desc(), ChallengeRow.id.desc()).limit(limit)
            ).all()
            found = [_load(session, i) for i in ids]
        return [c for c in found if c is not None]

    def due(self, now: datetime, limit: int) -> list[str]:
        """Open challenges whose time is up."""
        with self._store.reading() as session:
            return list(
                session.scalars(
                    select(ChallengeRow.id)
                    .where(ChallengeRow.status == "open", ChallengeRow.expires_at <= now)
                    .order_by(ChallengeRow.expires_at)
                    .limit(limit)
                )
            )

    # --- answers ------------------------------------------------------------------------

    def accept(
        self, challenge_id: str, account_id: str, events: Events
    ) -> tuple[Challenge, list[AccountEvent]] | None:
        """Record the account's acceptance, if others are still to accept (with what it
        tells); ``None`` (nothing recorded) if it is the last: the caller makes the game with
        ``complete`` in its transaction. Raises ``Refused``."""
        now = self._store.now()
        with self._store.writing() as session:
            challenge = self._answerable(session, challenge_id, account_id, now)
            pending = [s for s in challenge.seats if not s.challenger and s.answer is None]
            if len(pending) == 1:
                return None
            self._answer(session, challenge_id, account_id, "accepted")
            after = _load(session, challenge_id)
            assert after is not None
            told = append_account_events(session, events(after), now)
        return after, told

    def complete(
        self, session: Transaction, challenge_id: str, account_id: str, game_id: str, events: Events
    ) -> tuple[Challenge, list[AccountEvent]]:
        """In the transaction making the challenge's game: the last acceptance, and the
        challenge accepted with its game. Raises ``ChallengeGone`` (undoing the game) if the
        challenge is not as ``accept`` left it: another answer or the expiry came first."""
        now = self._store.now()
        result = cast(
            CursorResult[Any],
            session.execute(
                update(ChallengeRow)
                .where(
                    ChallengeRow.id == challenge_id,
                    ChallengeRow.status == "open",
                    ChallengeRow.expires_at > now,
                )
                .values(status="accepted", game_id=game_id)
                .execution_options(synchronize_session=False)
            ),
        )
        if result.rowcount != 1 or not self._answer(session, challenge_id, account_id, "accepted"):
            raise ChallengeGone(challenge_id)
        after = _load(session, challenge_id)
        assert after is not None
        if any(not s.challenger and s.answer != "accepted" for s in after.seats):
            raise ChallengeGone(challenge_id)
        return after, append_account_events(session, events(after), now)

    def decline(
        self, challenge_id: str, account_id: str, events: Events
    ) -> tuple[Challenge, list[AccountEvent]]:
        """End the challenge, declined by the account. Raises ``Refused``."""
        now = self._store.now()
        with self._store.writing() as session:
            self._answerable(session, challenge_id, account_id, now)
            self._answer(session, challenge_id, account_id, "declined")
            session.execute(
                update(ChallengeRow)
                .where(ChallengeRow.id == challenge_id)
                .values(status="declined", declined_by=account_id)
                .execution_options(synchronize_session=False)
            )
            after = _load(session, challenge_id)
            assert after is not None
            told = append_account_events(session, events(after), now)
        return after, told

    def expire(
        self, challenge_id: str, now: datetime, events: Events
    ) -> tuple[Challenge, list[AccountEvent]] | None:
        """End the challenge as expired if it is still open and due; ``None`` if an answer (or
        another process's expiry) came first."""
        with self._store.writing() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(ChallengeRow)
                    .where(
                        ChallengeRow.id == challenge_id,
                        ChallengeRow.status == "open",
                        ChallengeRow.expires_at <= now,
                    )
                    .values(status="expired")
                    .execution_options(synchronize_session=False)
                ),
            )
            if result.rowcount != 1:
                return None
            after = _load(session, challenge_id)
            assert after is not None
            told = append_account_events(session, events(after), self._store.now())
        return after, told

    # --- what the accounts are told ------------------------------------------------------

    def events_after(self, account_id: str, after: int, limit: int) -> list[AccountEvent]:
        """The account's events numbered above ``after``, oldest first, at most ``limit``."""
        with self._store.reading() as session:
            return account_events_after(session, account_id, after, limit)

    def last_sequence(self, account_id: str) -> int:
        """The number of the account's last event (0: none yet)."""
        with self._store.reading() as session:
            return last_sequence(session, account_id)

    def _answerable(
        self, session: Transaction, challenge_id: str, account_id: str, now: datetime
    ) -> Challenge:
        """The challenge, locked for this transaction, if the account may answer it now."""
        # The row lock first (PostgreSQL), so that the answers of one challenge take turns.
        session.execute(
            update(ChallengeRow)
            .where(ChallengeRow.id == challenge_id)
            .values(status=ChallengeRow.status)
            .execution_options(synchronize_session=False)
        )
        challenge = _load(session, challenge_id)
        seat = None if challenge is None else challenge.seat_of(account_id)
        if challenge is None or seat is None:
            raise Refused("not_found", None)
        if seat.challenger:
            raise Refused("not_challenged", challenge)
        if challenge.status != "open" or challenge.expires_at <= now or seat.answer is not None:
            raise Refused("not_open", challenge)
        return challenge

    @staticmethod
    def _answer(session: Transaction, challenge_id: str, account_id: str, answer: Answer) -> bool:
        result = cast(
            CursorResult[Any],
            session.execute(
                update(ChallengeParticipantRow)
                .where(
                    ChallengeParticipantRow.challenge_id == challenge_id,
                    ChallengeParticipantRow.account_id == account_id,
                    ChallengeParticipantRow.challenger.is_(False),
                    ChallengeParticipantRow.answer.is_(None),
                )
                .values(answer=answer)
                .execution_options(synchronize_session=False)
            ),
        )
        return result.rowcount == 1


def _load(session: Transaction, challenge_id: str) -> Challenge | None:
    row = session.get(ChallengeRow, challenge_id, populate_existing=True)
    if row is None:
        return None
    seats = session.execute(
        select(ChallengeParticipantRow, AccountRow.name)
        .join(AccountRow, AccountRow.id == ChallengeParticipantRow.account_id)
        .where(ChallengeParticipantRow.challenge_id == challenge_id)
        .order_by(ChallengeParticipantRow.seat)
        .execution_options(populate_existing=True)
    ).all()
    wanted = [row.challenger_id] + ([row.declined_by] if row.declined_by else [])
    names = {
        r.id: r.name
        for r in session.execute(select(AccountRow.id, AccountRow.name).where(AccountRow.id.in_(wanted)))
    }
    return Challenge(
        id=row.id,
        challenger_id=row.challenger_id,
        challenger_name=names[row.challenger_id],
        preset=row.preset,
        options=dict(row.options),
        time_control=TimeControl.from_json(row.time_control),
        rated=row.rated,
        status=cast(ChallengeStatus, row.status),
        game_id=row.game_id,
        declined_by=names.get(row.declined_by) if row.declined_by else None,
        created_at=row.created_at,
        expires_at=row.expires_at,
        seats=tuple(
            ChallengeSeat(
                p.seat, p.account_id, name, p.challenger, cast(Answer | None, p.answer)
            )
            for p, name in seats
        ),
    )
