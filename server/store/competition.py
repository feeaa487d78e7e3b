"""The store's side of competitions: accounts, seats reserved for accounts, clocks, fixed
deals, seeks and tournaments (the tables of migration 0002).

``CompetitionStore`` shares the ``EventStore``'s database through its unit of work
(``reading()``, ``writing()``); what must happen in the same transaction as a game's creation
(reservations, the clock) is done by ``insert_setup``, which ``EventStore.create_game`` calls
(and an append's clock by the writer).
"""

from __future__ import annotations

import hmac
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import CursorResult, Row, bindparam, case, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from boneyard.records.hashing import is_token_hash
from boneyard.server.store.errors import StoreError
from boneyard.server.store.game_setup import (
    ClockState,
    GameClock,
    GameSetup,
    Reservation,
    TimeControl,
    TimeoutPolicy,
    insert_setup,
)
from boneyard.server.store.key_check import mark_key_change
from boneyard.server.store.models import (
    AccountRow,
    GameClockRow,
    GameDealRow,
    GameRow,
    HandSeedRow,
    SeatAccountRow,
    SeekRow,
    TournamentEntrantRow,
    TournamentGameRow,
    TournamentRoundRow,
    TournamentRow,
    table_of,
)
from boneyard.server.store.notify import LOBBY_CHANNEL, notify
from boneyard.server.store.repository import EventStore
from boneyard.server.store.unit_of_work import Transaction

__all__ = [
    "Account",
    "AccountExists",
    "AccountKind",
    "ClockState",
    "CompetitionStore",
    "GameClock",
    "GameSetup",
    "Reservation",
    "Seek",
    "SwissRound",
    "TimeControl",
    "Tournament",
    "TournamentGame",
    "deal_fits",
    "insert_setup",
]

AccountKind = Literal["bot", "player"]

_accounts = AccountRow.__table__.c
_KEY_QUERY = select(
    _accounts.id, _accounts.name, _accounts.kind, _accounts.created_at, _accounts.key_hash
).where(_accounts.key_hash == bindparam("key_hash"), _accounts.key_revoked_at.is_(None))
"""The account a key authenticates, built once: it runs whenever a server does not remember
the key (``boneyard.server.competition.key_cache``)."""

_ALL_ACCOUNTS = select(
    _accounts.id,
    _accounts.name,
    _accounts.kind,
    _accounts.created_at,
    _accounts.key_revoked_at,
    _accounts.key_rotated_at,
)
_ACCOUNTS_OF = _ALL_ACCOUNTS.where(_accounts.id.in_(bindparam("ids", expanding=True)))
"""Accounts by id, built once: a tournament's director and every reader of it (the entrants'
names) ask at each game's end."""
_ACCOUNTS_NAMED = _ALL_ACCOUNTS.where(_accounts.name.in_(bindparam("names", expanding=True)))
"""Accounts by name, built once: every game made with seats reserved for accounts (a bot
competition's, a seek's table) asks for all of them at once."""

_TOURNAMENT_GAMES = table_of(TournamentGameRow)
_GAMES = table_of(GameRow)
_SCHEDULED = _TOURNAMENT_GAMES.outerjoin(_GAMES, _GAMES.c.id == _TOURNAMENT_GAMES.c.game_id)
"""A tournament's schedule, each entry with its game once made."""
# Built once: a statement reused keeps its compiled form.
_SCHEDULE = (
    select(
        _TOURNAMENT_GAMES.c.number,
        _TOURNAMENT_GAMES.c.deal,
        _TOURNAMENT_GAMES.c.rotation,
        _TOURNAMENT_GAMES.c.seating,
        _TOURNAMENT_GAMES.c.game_id,
        _GAMES.c.status,
        _TOURNAMENT_GAMES.c.round,
    )
    .select_from(_SCHEDULED)
    .where(_TOURNAMENT_GAMES.c.tournament_id == bindparam("t_id"))
    .order_by(_TOURNAMENT_GAMES.c.number)
)
_TOURNAMENTS = table_of(TournamentRow)
_TOURNAMENT = select(_TOURNAMENTS).where(_TOURNAMENTS.c.id == bindparam("t_id"))
# Making a tournament's game (``link_tournament_game``, in its creating transaction):
_ENTRANT_LIMIT = (
    select(_TOURNAMENTS.c.max_games_per_entrant)
    .where(_TOURNAMENTS.c.id == bindparam("t_id"))
    .with_for_update()
)
_OTHER_DEALS_IN_PLAY = (
    select(_TOURNAMENT_GAMES.c.seating)
    .join(_GAMES, _GAMES.c.id == _TOURNAMENT_GAMES.c.game_id)
    .where(
        _TOURNAMENT_GAMES.c.tournament_id == bindparam("t_id"),
        _TOURNAMENT_GAMES.c.deal != bindparam("deal"),
        _GAMES.c.status.in_(("open", "playing")),
    )
)
_DEAL_SEATINGS = select(_TOURNAMENT_GAMES.c.seating).where(
    _TOURNAMENT_GAMES.c.tournament_id == bindparam("t_id"),
    _TOURNAMENT_GAMES.c.deal == bindparam("deal"),
)
_LINK_GAME = (
    update(_TOURNAMENT_GAMES)
    .where(
        _TOURNAMENT_GAMES.c.tournament_id == bindparam("t_id"),
        _TOURNAMENT_GAMES.c.number == bindparam("n"),
        _TOURNAMENT_GAMES.c.game_id.is_(None),
    )
    .values(game_id=bindparam("g_id"))
)
_ENTRANTS = table_of(TournamentEntrantRow)
_ENTRANTS_OF = (
    select(_ENTRANTS.c.account_id)
    .where(_ENTRANTS.c.tournament_id == bindparam("t_id"))
    .order_by(_ENTRANTS.c.position)
)
_SEAT_ACCOUNTS = table_of(SeatAccountRow)
_OPEN_SEATS = (
    select(_SEAT_ACCOUNTS.c.game_id, _SEAT_ACCOUNTS.c.seat)
    .select_from(_SEAT_ACCOUNTS.join(_GAMES, _GAMES.c.id == _SEAT_ACCOUNTS.c.game_id))
    .where(
        _SEAT_ACCOUNTS.c.account_id == bindparam("account_id"),
        _GAMES.c.status.in_(("open", "playing")),
    )
    .order_by(_GAMES.c.created_at, _GAMES.c.id, _SEAT_ACCOUNTS.c.seat)
)
"""An account's seats in games not over (every turn stream reads it when a seat is
reserved for its account)."""
_PROGRESS = (
    select(
        func.count(_TOURNAMENT_GAMES.c.number),
        func.sum(case((_GAMES.c.status == "finished", 1), else_=0)),
    )
    .select_from(_SCHEDULED)
    .where(_TOURNAMENT_GAMES.c.tournament_id == bindparam("t_id"))
)


class AccountExists(StoreError):
    def __init__(self, name: str) -> None:
        super().__init__(f"an account named {name!r} exists already")
        self.name = name


@dataclass(frozen=True, slots=True)
class Account:
    id: str
    name: str
    kind: AccountKind
    created_at: datetime
    key_revoked_at: datetime | None = None
    """Set while the account's key is revoked (it authenticates nothing)."""
    key_rotated_at: datetime | None = None
    """When the account last got a new key (``None``: it has its first)."""


@dataclass(frozen=True, slots=True)
class Seek:
    id: str
    account_id: str
    table_key: str
    preset: str
    options: dict[str, Any]
    time_control: TimeControl | None
    players: int
    status: Literal["waiting", "seated", "cancelled"]
    game_id: str | None
    seat: int | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Tournament:
    id: str
    name: str
    organiser_id: str
    preset: str
    options: dict[str, Any]
    deals: int
    duplicate: bool
    format: str
    time_control: TimeControl | None
    status: Literal["created", "running", "finished", "cancelled"]
    secret: bytes
    entrants: tuple[str, ...]
    """Account ids, in entry order."""
    created_at: datetime
    max_games_per_entrant: int = 1
    """The most unfinished games of the tournament an entrant may be in at once (1: one deal
    at a time)."""
    rounds: int = 0
    """A Swiss tournament's rounds (its ``format`` is ``"swiss"``); 0 for a round robin."""


@dataclass(frozen=True, slots=True)
class TournamentGame:
    number: int
    deal: int
    rotation: int
    seating: tuple[str, ...]
    """The entrant's account id in each seat."""
    game_id: str | None
    status: str | None
    """The game's status once made."""
    round: int = 0
    """The Swiss round, from 1; 0 in a round robin."""


@dataclass(frozen=True, slots=True)
class SwissRound:
    """A Swiss round paired: its number (from 1) and its bye's account id (``None``: none)."""

    round: int
    bye: str | None


class CompetitionStore:
    def __init__(self, store: EventStore) -> None:
        self._store = store

    @property
    def events(self) -> EventStore:
        return self._store

    # --- accounts ----------------------------------------------------------------------

    def create_account(self, account_id: str, name: str, kind: AccountKind, key_hash: str) -> Account:
        """Register an account; only ``key_hash`` (sha256 of the key) is kept. Raises
        ``AccountExists`` for a name in use."""
        if not is_token_hash(key_hash):
            raise ValueError("key_hash must be a sha256 hex digest; refusing to store anything else")
        if kind not in ("bot", "player"):
            raise ValueError(f"an account is a bot or a player, not {kind!r}")
        now = self._store.now()
        try:
            with self._store.writing() as session:
                session.add(AccountRow(id=account_id, name=name, kind=kind, key_hash=key_hash, created_at=now))
        except IntegrityError as exc:
            if self.account_named(name) is not None:
                raise AccountExists(name) from exc
            raise
        return Account(account_id, name, kind, now)

    def account_for_key(self, key_hash: str) -> Account | None:
        """The account a key authenticates: ``None`` for an unknown key and for a revoked
        one. Asked whenever a server does not remember the key (``KeyCache``, which forgets
        on every revocation): one indexed Core query, no ORM objects."""
        if not is_token_hash(key_hash):
            return None
        with self._store.engine.connect() as conn:
            row = conn.execute(_KEY_QUERY, {"key_hash": key_hash}).one_or_none()
        if row is None or not hmac.compare_digest(row.key_hash, key_hash):
            return None
        return Account(row.id, row.name, cast(AccountKind, row.kind), row.created_at)

    def account_with_key(self, key_hash: str) -> Account | None:
        """The account whose current key this is, revoked or not (for the operator)."""
        if not is_token_hash(key_hash):
            return None
        with self._store.reading() as session:
            row = session.scalars(select(AccountRow).where(AccountRow.key_hash == key_hash)).one_or_none()
        return None if row is None else _account(row)

    def revoke_key(self, account_id: str) -> datetime | None:
        """Revoke the account's key; when, or ``None`` if it was revoked already. On
        PostgreSQL the other processes are told at commit (``"r:<account id>"`` on the lobby
        channel), so that their streams opened with the key end."""
        now = self._store.now()
        with self._store.writing() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(AccountRow)
                    .where(AccountRow.id == account_id, AccountRow.key_revoked_at.is_(None))
                    .values(key_revoked_at=now)
                ),
            )
            if result.rowcount == 0:
                return None
            self._announce_key_change(session, account_id)
        mark_key_change(self._store.engine)
        return now

    def rotate_key(self, account_id: str, key_hash: str) -> Account:
        """Give the account a new key (its hash): the old key, revoked or not, is unknown
        from the commit on; the account, its seats and its history stay. Raises
        ``StoreError`` for an unknown account."""
        if not is_token_hash(key_hash):
            raise ValueError("key_hash must be a sha256 hex digest; refusing to store anything else")
        now = self._store.now()
        with self._store.writing() as session:
            row = session.get(AccountRow, account_id)
            if row is None:
                raise StoreError(f"no account {account_id}")
            row.key_hash = key_hash
            row.key_revoked_at = None
            row.key_rotated_at = now
            session.flush()
            self._announce_key_change(session, account_id)
            account = _account(row)
        mark_key_change(self._store.engine)
        return account

    @staticmethod
    def _announce_key_change(session: Transaction, account_id: str) -> None:
        notify(session, LOBBY_CHANNEL, f"r:{account_id}")

    def account_named(self, name: str) -> Account | None:
        """The account named ``name``, if there is one (``accounts_named``'s read)."""
        return self.accounts_named([name]).get(name)

    def accounts_named(self, names: Sequence[str]) -> dict[str, Account]:
        """The accounts of those of ``names`` that name one, by name: one read for a table's
        reservations (through an ORM session each, four cost about 2 ms of a game's set-up)."""
        if not names:
            return {}
        with self._store.reading_rows() as conn:
            rows = conn.execute(_ACCOUNTS_NAMED, {"names": list(dict.fromkeys(names))})
            return {row.name: _account(row) for row in rows}

    def accounts(self, ids: Sequence[str] | None = None) -> dict[str, Account]:
        """Accounts by id (all of them, or those of ``ids``)."""
        with self._store.reading_rows() as conn:
            if ids is None:
                rows = conn.execute(_ALL_ACCOUNTS)
            else:
                rows = conn.execute(_ACCOUNTS_OF, {"ids": list(ids)})
            return {row.id: _account(row) for row in rows}

    # --- reserved seats ----------------------------------------------------------------

    def seat_of_account(self, game_id: str, account_id: str) -> int | None:
        with self._store.reading() as session:
            seat = session.scalar(
                select(SeatAccountRow.seat).where(
                    SeatAccountRow.game_id == game_id, SeatAccountRow.account_id == account_id
                )
            )
        return None if seat is None else int(seat)

    def account_seats(self, game_id: str) -> set[int]:
        """The seats of a game held by accounts."""
        with self._store.reading() as session:
            return set(session.scalars(select(SeatAccountRow.seat).where(SeatAccountRow.game_id == game_id)))

    def open_seats_of(self, account_id: str) -> list[tuple[str, int]]:
        """``(game_id, seat)`` of the account's seats in games not over, oldest game first."""
        with self._store.reading_rows() as conn:
            rows = conn.execute(_OPEN_SEATS, {"account_id": account_id}).all()
        return [(r.game_id, int(r.seat)) for r in rows]

    # --- clocks and deals --------------------------------------------------------------

    def clock(self, game_id: str) -> GameClock | None:
        with self._store.reading() as session:
            row = session.execute(
                select(GameClockRow, GameRow.version)
                .join(GameRow, GameRow.id == GameClockRow.game_id)
                .where(GameClockRow.game_id == game_id)
            ).one_or_none()
        return None if row is None else _clock(row[0], row[1])

    def running_clocks(self) -> list[GameClock]:
        """The clocks of the games being played (whether or not they run: a clock that should
        and does not is for the keeper to set right)."""
        with self._store.reading() as session:
            rows = session.execute(
                select(GameClockRow, GameRow.version)
                .join(GameRow, GameRow.id == GameClockRow.game_id)
                .where(GameRow.status == "playing")
            ).all()
        return [_clock(row[0], row[1]) for row in rows]

    def restart_turn(
        self, game_id: str, seen_turn_version: int, turn_seat: int | None, version: int
    ) -> bool:
        """Start the turn of ``turn_seat`` now, at ``version``, if the clock is still as seen
        (at ``seen_turn_version``): for a table that has just filled, or a clock left behind
        its game. ``False`` if somebody changed the clock meanwhile."""
        with self._store.writing() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(GameClockRow)
                    .where(
                        GameClockRow.game_id == game_id,
                        GameClockRow.turn_version == seen_turn_version,
                    )
                    .values(
                        turn_seat=turn_seat,
                        turn_version=version,
                        turn_started_at=self._store.now() if turn_seat is not None else None,
                    )
                    .execution_options(synchronize_session=False)
                ),
            )
            return result.rowcount == 1

    def deal_secret(self, game_id: str) -> bytes | None:
        with self._store.reading() as session:
            secret = session.scalar(select(GameDealRow.secret).where(GameDealRow.game_id == game_id))
        return None if secret is None else bytes(secret)

    # --- seeks -------------------------------------------------------------------------

    def add_seek(
        self,
        seek_id: str,
        account_id: str,
        table_key: str,
        preset: str,
        options: dict[str, Any],
        time_control: TimeControl | None,
        players: int,
    ) -> None:
        with self._store.writing() as session:
            session.add(
                SeekRow(
                    id=seek_id,
                    account_id=account_id,
                    table_key=table_key,
                    preset=preset,
                    options=options,
                    time_control=time_control.as_json() if time_control else {},
                    players=players,
                    status="waiting",
                    created_at=self._store.now(),
                    seen_at=self._store.now(),
                )
            )

    def seek(self, seek_id: str) -> Seek | None:
        with self._store.reading() as session:
            row = session.get(SeekRow, seek_id)
            return None if row is None else _seek(row)

    def waiting_seeks(self, table_key: str, seen_since: datetime) -> list[Seek]:
        """The seeks waiting for this kind of table whose streams were seen since
        ``seen_since``, oldest first."""
        with self._store.reading() as session:
            rows = session.scalars(
                select(SeekRow)
                .where(
                    SeekRow.status == "waiting",
                    SeekRow.table_key == table_key,
                    SeekRow.seen_at >= seen_since,
                )
                .order_by(SeekRow.created_at, SeekRow.id)
            ).all()
            return [_seek(r) for r in rows]

    def seen(self, seek_ids: Sequence[str], absent_before: datetime) -> set[str]:
        """The seeks' streams are still there (a statement or two for all of a process's
        seeks); the table keys of those that had been absent (last seen before
        ``absent_before``) and so were passed over: their tables may form now."""
        if not seek_ids:
            return set()
        with self._store.writing() as session:
            back = set(
                session.scalars(
                    update(SeekRow)
                    .where(
                        SeekRow.id.in_(list(seek_ids)),
                        SeekRow.status == "waiting",
                        SeekRow.seen_at < absent_before,
                    )
                    .values(seen_at=self._store.now())
                    .returning(SeekRow.table_key)
                    .execution_options(synchronize_session=False)
                )
            )
            session.execute(
                update(SeekRow)
                .where(SeekRow.id.in_(list(seek_ids)), SeekRow.status == "waiting")
                .values(seen_at=self._store.now())
                .execution_options(synchronize_session=False)
            )
        return back

    def cancel_unseen_seeks(self, account_id: str, table_key: str, seen_before: datetime) -> int:
        """Cancel the account's waiting seeks of this kind not seen since ``seen_before``
        (their streams are gone: a server restart, a client that died)."""
        with self._store.writing() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(SeekRow)
                    .where(
                        SeekRow.account_id == account_id,
                        SeekRow.table_key == table_key,
                        SeekRow.status == "waiting",
                        SeekRow.seen_at < seen_before,
                    )
                    .values(status="cancelled")
                    .execution_options(synchronize_session=False)
                ),
            )
            return int(result.rowcount)

    def cancel_seek(self, seek_id: str) -> bool:
        """Stop a waiting seek; ``False`` if it was seated (or stopped) meanwhile."""
        with self._store.writing() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(SeekRow)
                    .where(SeekRow.id == seek_id, SeekRow.status == "waiting")
                    .values(status="cancelled")
                    .execution_options(synchronize_session=False)
                ),
            )
            return result.rowcount == 1

    @staticmethod
    def seat_seeks(session: Transaction, game_id: str, seats: dict[str, int]) -> None:
        """Mark the seeks (id -> seat) seated at ``game_id``, in the game's creating
        transaction; raises ``SeekGone`` if any is no longer waiting (another process formed a
        table with it, or it was cancelled), which undoes the game."""
        for seek_id, seat in seats.items():
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(SeekRow)
                    .where(SeekRow.id == seek_id, SeekRow.status == "waiting")
                    .values(status="seated", game_id=game_id, seat=seat)
                    .execution_options(synchronize_session=False)
                ),
            )
            if result.rowcount != 1:
                raise SeekGone(seek_id)

    # --- tournaments -------------------------------------------------------------------

    def create_tournament(
        self, tournament: Tournament, schedule: Sequence[tuple[int, int, Sequence[str]]]
    ) -> None:
        """Store a tournament, its entrants and its schedule (``(deal, rotation, seating)``
        in playing order)."""
        with self._store.writing() as session:
            session.add(
                TournamentRow(
                    id=tournament.id,
                    name=tournament.name,
                    organiser_id=tournament.organiser_id,
                    preset=tournament.preset,
                    options=tournament.options,
                    deals=tournament.deals,
                    duplicate=tournament.duplicate,
                    format=tournament.format,
                    time_control=tournament.time_control.as_json() if tournament.time_control else {},
                    status=tournament.status,
                    secret=tournament.secret,
                    created_at=tournament.created_at,
                    max_games_per_entrant=tournament.max_games_per_entrant,
                    rounds=tournament.rounds,
                )
            )
            session.flush()
            session.execute(
                insert(TournamentEntrantRow),
                [
                    {"tournament_id": tournament.id, "position": i, "account_id": a}
                    for i, a in enumerate(tournament.entrants)
                ],
            )
            if schedule:  # a Swiss tournament's games are written round by round
                session.execute(
                    insert(TournamentGameRow),
                    [
                        {
                            "tournament_id": tournament.id,
                            "number": n,
                            "deal": deal,
                            "rotation": rotation,
                            "seating": list(seating),
                            "game_id": None,
                        }
                        for n, (deal, rotation, seating) in enumerate(schedule)
                    ],
                )

    def tournament(self, tournament_id: str) -> Tournament | None:
        with self._store.reading_rows() as conn:
            row = conn.execute(_TOURNAMENT, {"t_id": tournament_id}).one_or_none()
            if row is None:
                return None
            entrants = conn.execute(_ENTRANTS_OF, {"t_id": tournament_id}).scalars().all()
            return _tournament(row, tuple(entrants))

    def tournaments(self, status: str | None = None) -> list[Tournament]:
        """Newest first."""
        found = (self.tournament(i) for i in self.tournament_ids(status))
        return [t for t in found if t is not None]

    def tournament_ids(self, status: str | None = None) -> list[str]:
        """Newest first."""
        query = select(TournamentRow.id).order_by(TournamentRow.created_at.desc(), TournamentRow.id)
        if status is not None:
            query = query.where(TournamentRow.status == status)
        with self._store.reading() as session:
            return list(session.scalars(query).all())

    def set_tournament_status(self, tournament_id: str, status: str) -> None:
        with self._store.writing() as session:
            session.execute(
                update(TournamentRow)
                .where(TournamentRow.id == tournament_id)
                .values(status=status)
                .execution_options(synchronize_session=False)
            )

    def tournament_games(self, tournament_id: str) -> list[TournamentGame]:
        # Columns, not row objects: the director reads the whole schedule at every game's
        # end, and building an ORM instance a row made that quadratic cost most of its CPU.
        with self._store.reading_rows() as conn:
            rows = conn.execute(_SCHEDULE, {"t_id": tournament_id}).all()
        return [
            TournamentGame(
                int(r.number),
                int(r.deal),
                int(r.rotation),
                tuple(r.seating),
                r.game_id,
                r.status,
                int(r.round),
            )
            for r in rows
        ]

    def tournament_progress(self, tournament_id: str) -> tuple[int, int]:
        """The games of a tournament's schedule so far, and how many of them finished: what
        a tournament's BASIC view tells, counted without reading the schedule."""
        with self._store.reading_rows() as conn:
            row = conn.execute(_PROGRESS, {"t_id": tournament_id}).one()
        return int(row[0] or 0), int(row[1] or 0)

    def swiss_rounds(self, tournament_id: str) -> list[SwissRound]:
        """The rounds of a Swiss tournament paired so far, in order."""
        with self._store.reading() as session:
            rows = session.execute(
                select(TournamentRoundRow.round, TournamentRoundRow.bye_id)
                .where(TournamentRoundRow.tournament_id == tournament_id)
                .order_by(TournamentRoundRow.round)
            ).all()
        return [SwissRound(int(r.round), r.bye_id) for r in rows]

    def pair_swiss_round(
        self,
        tournament_id: str,
        round: int,
        bye: str | None,
        games: Sequence[tuple[int, int, Sequence[str]]],
    ) -> bool:
        """Write a Swiss round's pairing: its bye and its games (``(deal, rotation,
        seating)`` in playing order, numbered after the tournament's games so far). ``False``
        (writing nothing) if the round is paired already, or the tournament is not running:
        another process paired it first, or it was cancelled meanwhile. As
        ``link_tournament_game``, the tournament's row is locked first (PostgreSQL: ``SELECT
        ... FOR UPDATE``; SQLite: the writer's ``BEGIN IMMEDIATE``), so that processes pairing
        it take turns and each sees the rounds the one before it committed; the key of
        ``tournament_rounds`` is the last word."""
        with self._store.writing() as session:
            status = session.scalar(
                select(TournamentRow.status)
                .where(TournamentRow.id == tournament_id)
                .with_for_update()
            )
            if status != "running":
                return False
            paired = session.scalar(
                select(func.count())
                .select_from(TournamentRoundRow)
                .where(TournamentRoundRow.tournament_id == tournament_id)
            )
            if paired != round - 1:
                return False
            number = session.scalar(
                select(func.count())
                .select_from(TournamentGameRow)
                .where(TournamentGameRow.tournament_id == tournament_id)
            )
            session.add(
                TournamentRoundRow(
                    tournament_id=tournament_id,
                    round=round,
                    bye_id=bye,
                    paired_at=self._store.now(),
                )
            )
            session.flush()
            if games:
                session.execute(
                    insert(TournamentGameRow),
                    [
                        {
                            "tournament_id": tournament_id,
                            "number": int(number or 0) + n,
                            "deal": deal,
                            "rotation": rotation,
                            "seating": list(seating),
                            "game_id": None,
                            "round": round,
                        }
                        for n, (deal, rotation, seating) in enumerate(games)
                    ],
                )
        return True

    @staticmethod
    def link_tournament_game(
        session: Transaction,
        tournament_id: str,
        number: int,
        deal: int,
        seating: Sequence[str],
        game_id: str,
    ) -> None:
        """Record the game made for a schedule entry, in the game's creating transaction.
        Raises ``GameAlreadyMade`` (undoing the game) if another process made it first, or if
        it would put one of its entrants in more unfinished games of the tournament than its
        ``max_games_per_entrant`` (``deal_fits``). The tournament's row is locked first
        (PostgreSQL: ``SELECT ... FOR UPDATE``), so that processes making its games take turns
        and each counts what the one before it committed (READ COMMITTED: every statement
        sees what was committed before it began); on SQLite a writer holds the database's
        one write lock from its ``BEGIN IMMEDIATE``, which does the same."""
        conn = session.connection()
        limit = conn.execute(_ENTRANT_LIMIT, {"t_id": tournament_id}).scalar()
        if limit is None:
            raise GameAlreadyMade(tournament_id, number)
        # The games of the other deals made and not over, as the director counts them; those
        # of this deal are counted whole (``need``) however many of them are made yet, so
        # that the rest of a deal begun before a crash can always be made.
        playing = conn.execute(_OTHER_DEALS_IN_PLAY, {"t_id": tournament_id, "deal": deal}).scalars()
        # Games, not seats: a Swiss entrant holds both seats of its partnership.
        in_play = Counter(entrant for seats in playing for entrant in set(seats))
        need = Counter(
            entrant
            for seats in conn.execute(_DEAL_SEATINGS, {"t_id": tournament_id, "deal": deal}).scalars()
            for entrant in set(seats)
        )
        if not deal_fits({e: need[e] for e in seating}, in_play, int(limit)):
            raise GameAlreadyMade(tournament_id, number)
        result = cast(
            CursorResult[Any],
            conn.execute(_LINK_GAME, {"t_id": tournament_id, "n": number, "g_id": game_id}),
        )
        if result.rowcount != 1:
            raise GameAlreadyMade(tournament_id, number)

    def deals_revealed(self, game_ids: Sequence[str]) -> bool:
        """Whether every seed of these games is revealed."""
        with self._store.reading() as session:
            hidden = session.scalar(
                select(func.count())
                .select_from(HandSeedRow)
                .where(HandSeedRow.game_id.in_(list(game_ids)), HandSeedRow.revealed.is_(False))
            )
        return not hidden

    # --- counts for the metrics -------------------------------------------------------

    def games_by_status(self) -> dict[str, int]:
        """How many games the database holds in each status."""
        with self._store.reading() as session:
            rows = session.execute(
                select(GameRow.status, func.count()).group_by(GameRow.status)
            ).all()
        return {str(status): int(count) for status, count in rows}

    def tournament_games_in_play(self) -> int:
        """Tournament games made and not over."""
        with self._store.reading() as session:
            return int(
                session.scalar(
                    select(func.count())
                    .select_from(TournamentGameRow)
                    .join(GameRow, GameRow.id == TournamentGameRow.game_id)
                    .where(GameRow.status.in_(("open", "playing")))
                )
                or 0
            )

    def count_waiting(self, table_key: str, seen_since: datetime) -> int:
        with self._store.reading() as session:
            return int(
                session.scalar(
                    select(func.count())
                    .select_from(SeekRow)
                    .where(
                        SeekRow.status == "waiting",
                        SeekRow.table_key == table_key,
                        SeekRow.seen_at >= seen_since,
                    )
                )
                or 0
            )

def deal_fits(need: Mapping[str, int], in_play: Mapping[str, int], limit: int) -> bool:
    """Whether a deal may start: each of its entrants, in ``need[entrant]`` of its playings,
    is in no unfinished game of the tournament's other deals (``in_play``), or would be in
    at most ``limit`` with them. All the playings of a deal start together (the embargo
    needs them to), so a deal whose playings alone are more than ``limit`` starts only
    when its entrants have nothing else in play; with ``limit`` 1, a deal starts only when
    none of its entrants is in a game of another deal: one deal at a time."""
    return all(
        not in_play.get(entrant, 0) or in_play.get(entrant, 0) + count <= limit
        for entrant, count in need.items()
    )


class SeekGone(StoreError):
    def __init__(self, seek_id: str) -> None:
        super().__init__(f"seek {seek_id} is no longer waiting")


class GameAlreadyMade(StoreError):
    """Another process made the schedule entry's game, or an entrant of it is in as many
    unfinished games of the tournament as it may be."""

    def __init__(self, tournament_id: str, number: int) -> None:
        super().__init__(f"tournament {tournament_id}: game {number} cannot be made now")


def _account(row: Any) -> Account:
    """An account from its row: an ORM object or a row of columns of the same names."""
    return Account(
        row.id,
        row.name,
        cast(AccountKind, row.kind),
        row.created_at,
        row.key_revoked_at,
        row.key_rotated_at,
    )


def _clock(row: GameClockRow, version: int) -> GameClock:
    control = TimeControl(row.per_move_ms, row.bank_ms, cast(TimeoutPolicy, row.policy))
    state = ClockState(tuple(int(b) for b in row.banks), row.turn_seat, row.turn_started_at)
    return GameClock(row.game_id, control, state, row.turn_version, int(version))


def _seek(row: SeekRow) -> Seek:
    return Seek(
        row.id,
        row.account_id,
        row.table_key,
        row.preset,
        dict(row.options),
        TimeControl.from_json(dict(row.time_control)),
        row.players,
        cast(Any, row.status),
        row.game_id,
        row.seat,
        row.created_at,
    )


def _tournament(row: TournamentRow | Row[Any], entrants: tuple[str, ...]) -> Tournament:
    return Tournament(
        row.id,
        row.name,
        row.organiser_id,
        row.preset,
        dict(row.options),
        row.deals,
        bool(row.duplicate),
        row.format,
        TimeControl.from_json(dict(row.time_control)),
        cast(Any, row.status),
        bytes(row.secret),
        entrants,
        row.created_at,
        row.max_games_per_entrant,
        row.rounds,
    )
