"""What a game is created with besides its first events, and its clock: the values and the
writes that the event store (``repository``) and the competition store share.

Its own module so that the imports go one way: ``repository`` and ``competition`` import
this, and ``competition`` imports ``repository``, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import insert
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from boneyard.records.hashing import is_token_hash
from boneyard.server.store.account_events import NewAccountEvent, append_account_events
from boneyard.server.store.driver import Prepared
from boneyard.server.store.models import (
    GameClockRow,
    GameDealRow,
    HouseBotRow,
    RatedGameRow,
    SeatAccountRow,
    SeatRow,
    table_of,
)
from boneyard.server.store.unit_of_work import Transaction

__all__ = [
    "ClockState",
    "GameClock",
    "GameSetup",
    "HouseSeat",
    "MadeFor",
    "Reservation",
    "TimeControl",
    "TimeoutPolicy",
    "insert_setup",
]

TimeoutPolicy = Literal["auto_play", "forfeit"]

# Built once, Core, no ORM objects: a tournament makes a game every few milliseconds, and the
# ORM's unit of work for these rows cost more than the rest of the creation. ``Prepared`` (run
# on SQLite's driver): a game is made in the writer's batch, and every statement run through
# SQLAlchemy there held up the appends queued behind it.
_INSERT_SEATS = Prepared(insert(table_of(SeatRow)))
_INSERT_SEAT_ACCOUNTS = Prepared(insert(table_of(SeatAccountRow)))
_INSERT_HOUSE_BOTS = Prepared(insert(table_of(HouseBotRow)))
_INSERT_CLOCK = Prepared(insert(table_of(GameClockRow)))
_INSERT_DEAL = Prepared(insert(table_of(GameDealRow)))
_INSERT_RATED = Prepared(insert(table_of(RatedGameRow)))


@dataclass(frozen=True, slots=True)
class MadeFor:
    """What a game was made for, fixed at its creation: a tournament's schedule entry, a
    match's playing, ratings. A game's end wakes only the directors it concerns."""

    tournament_id: str | None = None
    match_id: str | None = None
    rated: bool = False


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Each action may take ``per_move_ms``; beyond it, time comes out of the seat's bank."""

    per_move_ms: int
    bank_ms: int
    policy: TimeoutPolicy

    def as_json(self) -> dict[str, Any]:
        return {"per_move_ms": self.per_move_ms, "bank_ms": self.bank_ms, "policy": self.policy}

    @staticmethod
    def from_json(data: dict[str, Any]) -> TimeControl | None:
        if not data:
            return None
        return TimeControl(int(data["per_move_ms"]), int(data["bank_ms"]), data["policy"])


@dataclass(frozen=True, slots=True)
class ClockState:
    """Where a game's clock stands after an append: each seat's bank (ms), and the seat to act
    with the time its turn began (``None``: the clock is stopped)."""

    banks: tuple[int, ...]
    turn_seat: int | None
    turn_started_at: datetime | None


@dataclass(frozen=True, slots=True)
class GameClock:
    game_id: str
    control: TimeControl
    state: ClockState
    turn_version: int
    version: int
    """The game's version now (``turn_version`` is the version the turn began at)."""


@dataclass(frozen=True, slots=True)
class Reservation:
    seat: int
    account_id: str
    player_name: str
    token_hash: str
    """A seat row needs a token: a fresh one nobody is told (the account's key acts instead)."""


@dataclass(frozen=True, slots=True)
class HouseSeat:
    """A seat the server plays itself with a bot of ``strategy``."""

    seat: int
    strategy: str
    player_name: str
    token_hash: str
    """A seat row needs a token: a fresh one nobody is told (the house bots act without one)."""


@dataclass(frozen=True, slots=True)
class GameSetup:
    """What a game is created with besides its first events."""

    reservations: Sequence[Reservation] = ()
    house_bots: Sequence[HouseSeat] = ()
    clock: tuple[TimeControl, ClockState] | None = None
    deal_secret: bytes | None = None
    rated_as: str | None = None
    """The game type whose ratings the game counts for (``None``: an unrated game); a rated
    game's mark (``RatedGameRow``) is written with it."""
    also: Callable[[Transaction, str], None] | None = None
    """More writes in the creating transaction (given it and the game id), through the
    store's functions; raising undoes the creation."""
    told: Sequence[NewAccountEvent] = ()
    """What the accounts seated are told of the game (after ``also``'s writes)."""

    @property
    def seats(self) -> tuple[Reservation | HouseSeat, ...]:
        """The seats the game is created with a row for: the reserved ones and the house's."""
        return (*self.reservations, *self.house_bots)


def insert_setup(conn: Connection, game_id: str, version: int, setup: GameSetup, now: datetime) -> None:
    """Write ``setup`` for a game being created, in the open transaction on ``conn``: what
    ``also`` raises undoes the creation with it."""
    taken = setup.seats
    for r in taken:
        if not is_token_hash(r.token_hash):
            raise ValueError(f"game {game_id!r}, seat {r.seat}: token_hash must be a sha256 hex digest")
    _INSERT_SEATS.executemany(
        conn,
        [
            {
                "game_id": game_id,
                "seat": r.seat,
                "player_name": r.player_name,
                "token_hash": r.token_hash,
                "created_at": now,
            }
            for r in taken
        ],
    )
    _INSERT_SEAT_ACCOUNTS.executemany(
        conn,
        [{"game_id": game_id, "seat": r.seat, "account_id": r.account_id} for r in setup.reservations],
    )
    _INSERT_HOUSE_BOTS.executemany(
        conn,
        [{"game_id": game_id, "seat": h.seat, "strategy": h.strategy} for h in setup.house_bots],
    )
    if setup.clock is not None:
        control, state = setup.clock
        _INSERT_CLOCK.execute(
            conn,
            {
                "game_id": game_id,
                "per_move_ms": control.per_move_ms,
                "bank_ms": control.bank_ms,
                "policy": control.policy,
                "banks": list(state.banks),
                "turn_seat": state.turn_seat,
                "turn_version": version,
                "turn_started_at": state.turn_started_at,
            },
        )
    if setup.deal_secret is not None:
        _INSERT_DEAL.execute(conn, {"game_id": game_id, "secret": setup.deal_secret})
    if setup.rated_as is not None:
        _INSERT_RATED.execute(
            conn, {"game_id": game_id, "game_type": setup.rated_as, "created_at": now}
        )
    if setup.also is not None:
        # The caller's writes are handed a transaction of the store, joined to this one (a
        # savepoint of it: the session ends there, the creation goes on).
        with (
            Session(bind=conn, expire_on_commit=False, join_transaction_mode="create_savepoint") as session,
            session.begin(),
        ):
            setup.also(session, game_id)
    append_account_events(conn, setup.told, now)
