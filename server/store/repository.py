"""The store's repository: games as append-only event logs, plus seats, requests and seeds.

``EventStore`` is synchronous SQLAlchemy; the asyncio server calls it through
``asyncio.to_thread``.  Every method is one transaction.  Event payloads are opaque bytes
(the protobuf encoding of engine events, made elsewhere); the store only hashes them.

Concurrency: ``append`` is optimistic.  It is the writer's transaction
(``boneyard.server.store.writer.write_batch``) for a batch of one: it updates
``games.version`` only where it still equals ``expected_version`` (which also queues
concurrent writers of one game on that row in PostgreSQL, and on the write lock in SQLite),
then inserts the events with ``seq = expected_version + 1, ...``; the primary key
``(game_id, seq)`` is the last word, so of two writers at one version exactly one wins and the
other gets ``VersionConflict``.

The other stores of the package (competition, challenges, ratings, keys, the archive) share
its database through its unit of work: ``reading()`` and ``writing()`` open one transaction
each, ``now()`` is its clock.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, TypeVar, cast, get_args

from sqlalchemy import and_, bindparam, case, delete, exists, insert, or_, select, update
from sqlalchemy.engine import URL, Connection, CursorResult, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from boneyard.records.hashing import (
    GENESIS_HASH,
    chain_hash,
    first_chain_break,
    is_token_hash,
    seed_commitment,
)
from boneyard.server.store.db import WRITE, create_engine
from boneyard.server.store.driver import Prepared
from boneyard.server.store.errors import (
    ChainBroken,
    DuplicateRequest,
    DuplicateToken,
    GameExists,
    GameNotFound,
    GameStarted,
    InvalidCursor,
    SeatNotHeld,
    SeatTaken,
    VersionConflict,
)
from boneyard.server.store.game_setup import (
    ClockState,
    GameClock,
    GameSetup,
    MadeFor,
    TimeControl,
    TimeoutPolicy,
    insert_setup,
)
from boneyard.server.store.lane import WriteLane
from boneyard.server.store.models import (
    CREATE_REQUESTS,
    EventRow,
    GameClockRow,
    GameDealRow,
    GameRow,
    HandSeedRow,
    HouseBotRow,
    MatchGameRow,
    RatedGameRow,
    RequestRow,
    SeatAccountRow,
    SeatRow,
    TournamentGameRow,
    table_of,
)
from boneyard.server.store.notify import LOBBY_CHANNEL, NOTIFY_CHANNEL, notify
from boneyard.server.store.paging import decode_time_token, encode_time_token
from boneyard.server.store.unit_of_work import Transaction
from boneyard.server.store.writer import Append, Writer, refusal, write_appended, write_batch

__all__ = [
    "EventStore",
    "GameRecord",
    "GameSnapshot",
    "GameStatus",
    "NewEvent",
    "NewSeed",
    "PendingRequest",
    "RequestRecord",
    "SeatRecord",
    "SeedRecord",
    "StoredEvent",
]

log = logging.getLogger(__name__)

GameStatus = Literal["open", "playing", "finished", "abandoned"]
_STATUSES: tuple[str, ...] = get_args(GameStatus)

#: An event to append: ``(kind, payload)``.
NewEvent = tuple[str, bytes]
#: A request to remember with an append: ``(request_id, seat)``.
PendingRequest = tuple[str, int]
#: A hand's seed to record with an append: ``(hand_number, seed, commitment)``.
NewSeed = tuple[int, bytes, bytes]

_GAMES = table_of(GameRow)
_T = TypeVar("_T")
_SEATS = table_of(SeatRow)
_SEAT_GAME = Prepared(
    select(_GAMES.c.players, _GAMES.c.seats_taken)
    .where(_GAMES.c.id == bindparam("g_id"))
    .with_for_update()
)
_SEAT_HOLDERS = Prepared(
    select(_SEATS.c.seat).where(
        _SEATS.c.game_id == bindparam("g_id"),
        or_(_SEATS.c.seat == bindparam("seat"), _SEATS.c.token_hash == bindparam("token_hash")),
    )
)
"""The seat asked for, if it is taken, and the seat the token holds, if any."""
_INSERT_SEAT = Prepared(insert(_SEATS))
_REQUESTS = table_of(RequestRow)
_INSERT_REQUEST = Prepared(insert(_REQUESTS))
_INSERT_GAME = Prepared(insert(_GAMES))
"""A game's row (Core: the ORM's unit of work for one row cost more than the statement)."""
_GAME_COLUMNS = tuple(column.key for column in _GAMES.columns)
_SEAT_TAKEN_CORE = (
    update(_GAMES)
    .where(_GAMES.c.id == bindparam("g_id"))
    .values(seats_taken=_GAMES.c.seats_taken + 1, updated_at=bindparam("now"))
)
_SEAT_TAKEN = Prepared(_SEAT_TAKEN_CORE)
_SEAT_TAKEN_FULL = Prepared(
    _SEAT_TAKEN_CORE.values(
        status=case((_GAMES.c.status == "open", "playing"), else_=_GAMES.c.status)
    )
)
"""The last seat: an open game starts, in the same transaction."""
_MAX_PAGE_SIZE = 1000
_IN_CHUNK = 500


class StoredEvent(NamedTuple):
    seq: int
    kind: str
    payload: bytes
    hash: bytes


@dataclass(frozen=True, slots=True)
class GameRecord:
    id: str
    preset: str
    options: dict[str, Any]
    name: str
    players: int
    seats_taken: int
    status: GameStatus
    version: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class SeatRecord:
    seat: int
    player_name: str
    created_at: datetime


class RequestRecord(NamedTuple):
    """An applied request: the seat that sent it and the version it produced (an action's
    answer is made again from the log at that version: ``GameHost.submit``). (A named tuple:
    one is made at every action, and a frozen dataclass sets each field through
    ``object.__setattr__``.)"""

    request_id: str
    seat: int
    result_version: int


@dataclass(frozen=True, slots=True)
class SeedRecord:
    """A hand's shuffle seed.  ``seed`` is secret until ``revealed``: callers must not show it."""

    hand_number: int
    commitment: bytes
    seed: bytes
    revealed: bool


@dataclass(frozen=True, slots=True)
class GameSnapshot:
    """Everything the server keeps of a game in memory, read in one transaction."""

    game: GameRecord
    events: list[StoredEvent]
    seats: dict[int, tuple[str, str]]
    """Seat -> (player name, token hash)."""
    accounts: dict[str, tuple[int, ...]]
    """Account id -> the seats reserved for it (one, or a match's partnership), lowest first."""
    requests: dict[str, RequestRecord]
    clock: GameClock | None
    deal_secret: bytes | None
    house_bots: dict[int, str]
    """Seat -> the strategy of the house bot playing it."""
    made_for: MadeFor


def _utcnow() -> datetime:
    return datetime.now(UTC)


class EventStore:
    """Games as append-only, hash-chained event logs in SQLite or PostgreSQL.

    The schema must already be migrated (``boneyard.server.store.migrate.upgrade`` or
    ``EventStore.open(url, migrate=True)``).  ``clock`` returns aware datetimes; tests pass a
    fixed one.
    """

    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = _utcnow) -> None:
        self._engine = engine
        self._clock = clock
        self._writes = engine.execution_options(**{WRITE: True})
        self._reader = sessionmaker(engine, expire_on_commit=False)
        self._writer = sessionmaker(self._writes, expire_on_commit=False)
        self._lane = WriteLane(self._writes) if engine.dialect.name == "sqlite" else None
        self._batches: Writer | None = None

    @classmethod
    def open(
        cls,
        url: str | URL,
        *,
        migrate: bool = False,
        clock: Callable[[], datetime] = _utcnow,
        **engine_kwargs: Any,
    ) -> EventStore:
        """A store on a new engine for ``url``; ``migrate=True`` first upgrades the schema."""
        engine = create_engine(url, **engine_kwargs)
        if migrate:
            from boneyard.server.store.migrate import upgrade

            upgrade(url, engine=engine)
        return cls(engine, clock=clock)

    @property
    def engine(self) -> Engine:
        return self._engine

    @property
    def lane(self) -> WriteLane | None:
        """On SQLite, the one connection every write of the process goes through (the
        writer's batches too: ``store.lane``); ``None`` on PostgreSQL."""
        return self._lane

    def join_batches(self, writer: Writer | None) -> None:
        """On SQLite, from now on write the games made and the seats taken or left through
        this store (from any thread but ``writer``'s) in ``writer``'s next batch, in a
        savepoint of their own: one commit, one sync of the disk, for them and the batch's
        actions (``Writer.call``; the caller waits for that commit). ``None``: each in a
        transaction of its own again (before the writer closes). On PostgreSQL nothing
        changes: writes there need not wait for one another, and a seat's row lock taken
        inside a batch could deadlock with another process's batch."""
        if self._lane is not None:
            self._batches = writer

    def close(self) -> None:
        """Close the engine's pooled connections."""
        if self._lane is not None:
            self._lane.close()
        self._engine.dispose()

    # --- the unit of work --------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[Transaction]:
        """One transaction to read in (one snapshot on SQLite; committed at the end)."""
        with self._reader.begin() as session:
            yield session

    @contextmanager
    def reading_rows(self) -> Iterator[Connection]:
        """One transaction to read in, as ``reading``, on a bare connection for statements built
        once (Core, no ORM): the reads made at every game's end or every seat's reservation,
        where a ``Session``'s own work was most of the call."""
        with self._engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def writing(self) -> Iterator[Transaction]:
        """One transaction to write in: committed when the block ends, rolled back if it
        raises (``BEGIN IMMEDIATE`` on SQLite, so writers queue instead of failing)."""
        if self._lane is None:
            with self._writer.begin() as session:
                yield session
            return
        with (
            self._lane.connection() as conn,
            Session(conn, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    def _write(
        self,
        work: Callable[[Connection], _T],
        conn: Connection | None = None,
        *,
        prepared_only: bool = False,
    ) -> _T:
        """``work(db)`` in a write transaction: on ``conn``, whose transaction the caller
        opened (and ends); else in the next batch of the writer joined (``join_batches``),
        once it committed (``prepared_only``: as ``Writer.call``'s); else in a transaction of
        its own."""
        if conn is not None:
            return work(conn)
        writer = self._batches
        if writer is not None and not writer.on_its_thread():
            return writer.call(work, prepared_only=prepared_only).result()
        with self.writing() as session:
            return work(session.connection())

    def _write_connection(self) -> AbstractContextManager[Connection]:
        """A connection to write on with no transaction open: the lane's on SQLite."""
        return self._writes.connect() if self._lane is None else self._lane.connection()

    def now(self) -> datetime:
        """The store's clock (aware; tests fix it)."""
        return self._clock()

    # --- games and events ------------------------------------------------------------

    def create_game(
        self,
        game_id: str,
        preset: str,
        options: Mapping[str, Any],
        players: int,
        name: str,
        first_events: Sequence[NewEvent],
        *,
        status: GameStatus = "open",
        seeds: Sequence[NewSeed] = (),
        setup: GameSetup | None = None,
        request_id: str | None = None,
        now: datetime | None = None,
    ) -> GameRecord:
        """Create a game whose log starts with ``first_events`` (its version is their number).

        ``seeds`` are recorded in the same transaction, as by ``append``; so is ``setup`` (seats
        reserved for accounts, the clock, a fixed deal secret, and the caller's own writes, such
        as marking the seeks that formed the table). Raises ``GameExists`` when ``game_id`` is
        taken; whatever ``setup.also`` raises undoes the whole creation. ``now``: the creation
        time (the caller's, when its clock starts with the game). Written in the joined
        writer's next batch (``join_batches``) or a transaction of its own.
        """
        _check_seeds(game_id, seeds)
        _check_status(status)
        if players < 1:
            raise ValueError(f"game {game_id!r}: players must be at least 1, got {players}")
        now = now or self._clock()
        first = Append(
            game_id,
            0,
            _chained(GENESIS_HASH, first_events),
            _told_nothing,
            request=None if request_id is None else (request_id, 0),
            seeds=seeds,
        )
        record = GameRecord(
            id=game_id,
            preset=preset,
            options=dict(options),
            name=name,
            players=players,
            seats_taken=len(setup.reservations) + len(setup.house_bots) if setup else 0,
            status=status,
            version=len(first_events),
            created_at=now,
            updated_at=now,
        )
        # The row holds the record's fields (they are its columns), with options of its own.
        row = {field: getattr(record, field) for field in _GAME_COLUMNS}
        row["options"] = dict(options)

        def created(db: Connection) -> None:
            _INSERT_GAME.execute(db, row)
            # The first events go in as the writer appends any (with the request and the
            # seeds, announced on the same channel).
            write_appended(db, [first], now, NOTIFY_CHANNEL)
            if setup is not None:
                insert_setup(db, game_id, len(first_events), setup, now)

        try:
            # (Prepared statements all, but the caller's own writes: ``setup.also``'s session.)
            self._write(created, prepared_only=setup is None or setup.also is None)
        except IntegrityError as exc:
            if self._game_exists(game_id):
                raise GameExists(game_id) from exc
            refused = refusal(first, exc)
            if isinstance(refused, DuplicateRequest):
                raise refused from exc
            raise
        return record

    def append(
        self,
        game_id: str,
        expected_version: int,
        events: Sequence[NewEvent],
        request: PendingRequest | None = None,
        *,
        status: GameStatus | None = None,
        seeds: Sequence[NewSeed] = (),
        clock: ClockState | None = None,
    ) -> int:
        """Append ``events`` as ``seq = expected_version + 1, ...``; return the new version.

        With ``request = (request_id, seat)`` the request is recorded in the same transaction
        (with the version it produced), found later by ``find_request``. ``status`` (if given)
        becomes the game's status. ``seeds`` (``(hand_number, seed, sha256(seed))`` of hands
        dealt by these events) are recorded in the same transaction, unrevealed; recording a
        hand's seed again is a no-op, a different seed for it raises ``SeedConflict``. ``clock``
        (for a game with a time control) is the clock after these events.

        Raises ``VersionConflict`` when the game is no longer at ``expected_version``,
        ``GameNotFound``, or ``DuplicateRequest`` when ``request_id`` was already applied
        to this game.  Nothing is written when it raises.
        """
        if not events:
            raise ValueError(f"game {game_id!r}: append needs at least one event")
        if expected_version < 0:
            raise ValueError(f"game {game_id!r}: expected_version {expected_version} < 0")
        if status is not None:
            _check_status(status)
        _check_seeds(game_id, seeds)
        now = self._clock()
        item = Append(
            game_id,
            expected_version,
            _chained(self._head(game_id, expected_version), events),
            _told_nothing,
            request=request,
            status=status,
            seeds=seeds,
            clock=clock,
        )
        with self._write_connection() as conn:
            try:
                (refused,) = write_batch(conn, [item], notify_channel=NOTIFY_CHANNEL, now=now)
            except Exception as error:
                # As the writer tells an append that failed alone: a key collision is a lost
                # race (or a request applied already); anything else is raised as it is.
                refused = refusal(item, error)
                if refused is error:
                    raise
                raise refused from error
        if refused is not None:
            raise refused
        log.debug(
            "game %s: appended %d events, now at version %d", game_id, len(events), item.new_version
        )
        return item.new_version

    def load_events(
        self, game_id: str, from_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """The events *after* ``from_seq`` (so ``from_seq`` = the version a reader already has),
        in order, at most ``limit`` of them.  Raises ``GameNotFound``."""
        query = (
            select(EventRow.seq, EventRow.kind, EventRow.payload, EventRow.hash)
            .where(EventRow.game_id == game_id, EventRow.seq > from_seq)
            .order_by(EventRow.seq)
        )
        if limit is not None:
            query = query.limit(limit)
        with self.reading() as session:
            rows = session.execute(query).all()
            if not rows and session.get(GameRow, game_id) is None:
                raise GameNotFound(game_id)
        return [StoredEvent(r.seq, r.kind, bytes(r.payload), bytes(r.hash)) for r in rows]

    def snapshot(self, game_id: str) -> GameSnapshot:
        """The game, its whole log, seats, reservations, applied requests, clock and deal
        secret, as of one moment. Raises ``GameNotFound``."""
        found = self.snapshots([game_id])
        if game_id not in found:
            raise GameNotFound(game_id)
        return found[game_id]

    def snapshots(self, game_ids: Sequence[str]) -> dict[str, GameSnapshot]:
        """``snapshot`` of each of a page of games (at most a few hundred ids), in one
        transaction and one query per table; an id the database does not hold is left out."""
        ids = list(dict.fromkeys(game_ids))
        if not ids:
            return {}
        with self.reading() as session:
            games = {
                row.id: _game_record(row)
                for row in session.scalars(select(GameRow).where(GameRow.id.in_(ids)))
            }
            ids = [game_id for game_id in ids if game_id in games]
            if not ids:
                return {}
            events: dict[str, list[StoredEvent]] = {game_id: [] for game_id in ids}
            for event in session.execute(
                select(
                    EventRow.game_id, EventRow.seq, EventRow.kind, EventRow.payload, EventRow.hash
                )
                .where(EventRow.game_id.in_(ids))
                .order_by(EventRow.game_id, EventRow.seq)
            ):
                events[event.game_id].append(
                    StoredEvent(event.seq, event.kind, bytes(event.payload), bytes(event.hash))
                )
            seats: dict[str, dict[int, tuple[str, str]]] = {game_id: {} for game_id in ids}
            for seat in session.execute(
                select(
                    SeatRow.game_id, SeatRow.seat, SeatRow.player_name, SeatRow.token_hash
                ).where(SeatRow.game_id.in_(ids))
            ):
                seats[seat.game_id][int(seat.seat)] = (seat.player_name, seat.token_hash)
            accounts: dict[str, dict[str, tuple[int, ...]]] = {game_id: {} for game_id in ids}
            for held in session.execute(
                select(SeatAccountRow.game_id, SeatAccountRow.account_id, SeatAccountRow.seat)
                .where(SeatAccountRow.game_id.in_(ids))
                .order_by(SeatAccountRow.game_id, SeatAccountRow.seat)
            ):
                of_game = accounts[held.game_id]
                of_game[held.account_id] = (*of_game.get(held.account_id, ()), int(held.seat))
            requests: dict[str, dict[str, RequestRecord]] = {game_id: {} for game_id in ids}
            for request in session.execute(
                select(
                    RequestRow.game_id,
                    RequestRow.request_id,
                    RequestRow.seat,
                    RequestRow.result_version,
                ).where(RequestRow.game_id.in_(ids))
            ):
                requests[request.game_id][request.request_id] = RequestRecord(
                    request.request_id,
                    int(request.seat),
                    int(request.result_version),
                )
            clocks: dict[str, GameClock] = {}
            for clock_row in session.scalars(
                select(GameClockRow).where(GameClockRow.game_id.in_(ids))
            ):
                clocks[clock_row.game_id] = GameClock(
                    clock_row.game_id,
                    TimeControl(
                        clock_row.per_move_ms,
                        clock_row.bank_ms,
                        cast(TimeoutPolicy, clock_row.policy),  # the column's CHECK: one of them
                    ),
                    ClockState(
                        tuple(clock_row.banks), clock_row.turn_seat, clock_row.turn_started_at
                    ),
                    clock_row.turn_version,
                    games[clock_row.game_id].version,
                )
            secrets_of = {
                deal.game_id: bytes(deal.secret)
                for deal in session.execute(
                    select(GameDealRow.game_id, GameDealRow.secret).where(
                        GameDealRow.game_id.in_(ids)
                    )
                )
            }
            house_bots: dict[str, dict[int, str]] = {game_id: {} for game_id in ids}
            for house in session.execute(
                select(HouseBotRow.game_id, HouseBotRow.seat, HouseBotRow.strategy).where(
                    HouseBotRow.game_id.in_(ids)
                )
            ):
                house_bots[house.game_id][int(house.seat)] = str(house.strategy)
            tournaments = dict(
                session.execute(
                    select(TournamentGameRow.game_id, TournamentGameRow.tournament_id).where(
                        TournamentGameRow.game_id.in_(ids)
                    )
                ).all()
            )
            matches = dict(
                session.execute(
                    select(MatchGameRow.game_id, MatchGameRow.match_id).where(
                        MatchGameRow.game_id.in_(ids)
                    )
                ).all()
            )
            rated = set(
                session.scalars(select(RatedGameRow.game_id).where(RatedGameRow.game_id.in_(ids)))
            )
        return {
            game_id: GameSnapshot(
                games[game_id],
                events[game_id],
                seats[game_id],
                accounts[game_id],
                requests[game_id],
                clocks.get(game_id),
                secrets_of.get(game_id),
                house_bots[game_id],
                MadeFor(tournaments.get(game_id), matches.get(game_id), game_id in rated),
            )
            for game_id in ids
        }

    def house_games_in_play(self) -> list[str]:
        """The games being played that have house bots, oldest first: after a restart, those
        whose seat to act is a house seat wait for the house bots to look again."""
        with self.reading() as session:
            rows = session.execute(
                select(GameRow.id)
                .where(
                    GameRow.status == "playing",
                    exists().where(HouseBotRow.game_id == GameRow.id),
                )
                .order_by(GameRow.created_at, GameRow.id)
            ).all()
        return [str(r.id) for r in rows]

    def get_game(self, game_id: str) -> GameRecord:
        with self.reading() as session:
            row = session.get(GameRow, game_id)
            if row is None:
                raise GameNotFound(game_id)
            return _game_record(row)

    def latest_version(self, game_id: str) -> int:
        """The game's version (= its highest ``seq``, 0 for an empty log): a cheap poll."""
        with self.reading() as session:
            version = session.scalar(select(GameRow.version).where(GameRow.id == game_id))
        if version is None:
            raise GameNotFound(game_id)
        return version

    def latest_versions(self, game_ids: Iterable[str]) -> dict[str, int]:
        """``latest_version`` of many games in few queries; unknown games are left out."""
        ids = list(dict.fromkeys(game_ids))
        found: dict[str, int] = {}
        with self.reading() as session:
            for start in range(0, len(ids), _IN_CHUNK):
                chunk = ids[start : start + _IN_CHUNK]
                rows = session.execute(
                    select(GameRow.id, GameRow.version).where(GameRow.id.in_(chunk))
                )
                found.update({r.id: r.version for r in rows})
        return found

    def list_games(
        self,
        status: GameStatus | None = None,
        page_size: int = 50,
        after_cursor: str | None = None,
    ) -> tuple[list[GameRecord], str | None]:
        """One page of games, oldest first, and the cursor of the next page (``None`` at the
        end).  Keyset pagination on ``(created_at, id)``: games created while paging appear
        on later pages, and none is skipped or repeated."""
        if status is not None:
            _check_status(status)
        if not 1 <= page_size <= _MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be 1..{_MAX_PAGE_SIZE}, got {page_size}")
        query = select(GameRow)
        if status is not None:
            query = query.where(GameRow.status == status)
        if after_cursor:
            created_at, last_id = _decode_cursor(after_cursor)
            query = query.where(
                or_(
                    GameRow.created_at > created_at,
                    and_(GameRow.created_at == created_at, GameRow.id > last_id),
                )
            )
        query = query.order_by(GameRow.created_at, GameRow.id).limit(page_size + 1)
        with self.reading() as session:
            rows = session.scalars(query).all()
            games = [_game_record(row) for row in rows[:page_size]]
        next_cursor = None
        if len(rows) > page_size:
            last = games[-1]
            next_cursor = encode_time_token(last.created_at, last.id)
        return games, next_cursor

    def set_status(self, game_id: str, status: GameStatus) -> None:
        """Set a game's status (``open`` -> ``playing`` when its last seat is taken)."""
        _check_status(status)
        with self.writing() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(GameRow)
                    .where(GameRow.id == game_id, GameRow.status.in_(("open", "playing")))
                    .values(status=status)
                    .execution_options(synchronize_session=False)
                ),
            )
            if result.rowcount != 1 and not self._game_exists(game_id):
                raise GameNotFound(game_id)

    def verify_chain(self, game_id: str) -> int:
        """Recompute the hash chain of a game; return its length or raise ``ChainBroken``."""
        with self.reading() as session:
            version = session.scalar(select(GameRow.version).where(GameRow.id == game_id))
            if version is None:
                raise GameNotFound(game_id)
            # Only events up to the version read: a concurrent append cannot cause a false alarm.
            rows = session.execute(
                select(EventRow.seq, EventRow.payload, EventRow.hash)
                .where(EventRow.game_id == game_id, EventRow.seq <= version)
                .order_by(EventRow.seq)
            ).all()
        broken = first_chain_break((r.seq, bytes(r.payload), bytes(r.hash)) for r in rows)
        if broken is not None:
            raise ChainBroken(game_id, broken[0], broken[1])
        if len(rows) != version:
            raise ChainBroken(
                game_id, len(rows) + 1, f"game is at version {version} but has {len(rows)} events"
            )
        return version

    # --- seats -----------------------------------------------------------------------

    def take_seat(
        self,
        game_id: str,
        seat: int,
        player_name: str,
        token_hash: str,
        *,
        playing_when_full: bool = False,
        now: datetime | None = None,
        request_id: str | None = None,
        conn: Connection | None = None,
    ) -> int:
        """Seat a player; return the game's number of taken seats. With
        ``playing_when_full`` the last seat also makes an open game ``playing``, in the same
        transaction (a crash between the two would leave a full table open for ever).
        ``conn``: written in the transaction open on it (the writer's batch); by default in
        the joined writer's next batch (``join_batches``) or a transaction of its own.

        ``token_hash`` is ``hash_token(token)``: the token itself is never stored (a value
        that is not 64 lowercase hex digits is refused).  Raises ``SeatTaken``,
        ``DuplicateToken``, ``GameNotFound``; ``ValueError`` for a seat outside the table.
        """
        if not is_token_hash(token_hash):
            raise ValueError(
                f"game {game_id!r}, seat {seat}: token_hash must be hash_token(token) "
                "(64 lowercase hex digits); refusing to store anything else"
            )
        now = now or self._clock()

        def seated(db: Connection) -> int:
            # Core statements built once and, on SQLite, run on its driver: a new game's four
            # seats are taken at every table, and the ORM's work per call was most of it.
            game = _SEAT_GAME.rows(db, {"g_id": game_id})
            if not game:
                raise GameNotFound(game_id)
            players, seats_taken = game[0]
            if not 0 <= seat < players:
                raise ValueError(f"game {game_id!r}: seat {seat} is not at a table of {players}")
            held = _SEAT_HOLDERS.rows(db, {"g_id": game_id, "seat": seat, "token_hash": token_hash})
            if any(row[0] == seat for row in held):
                raise SeatTaken(game_id, seat)
            if held:
                raise DuplicateToken(game_id, held[0][0])
            try:
                _INSERT_SEAT.execute(
                    db,
                    {
                        "game_id": game_id,
                        "seat": seat,
                        "player_name": player_name,
                        "token_hash": token_hash,
                        "created_at": now,
                    },
                )
            except IntegrityError as exc:  # only if the row lock above did not serialise us
                raise SeatTaken(game_id, seat) from exc
            if request_id is not None:
                # (DuplicateRequest: a retry through another process, at once)
                _insert_request(db, game_id, request_id, seat, 0, now)
            full = playing_when_full and int(seats_taken) + 1 == players
            (_SEAT_TAKEN_FULL if full else _SEAT_TAKEN).execute(db, {"g_id": game_id, "now": now})
            # The other processes' copies (and lobbies) do not seat the player yet.
            notify(db, LOBBY_CHANNEL, f"s:{game_id}")
            return int(seats_taken) + 1

        return self._write(seated, conn, prepared_only=True)

    def leave_seat(
        self,
        game_id: str,
        seat: int,
        token_hash: str,
        *,
        request_prefix: str,
        now: datetime | None = None,
        conn: Connection | None = None,
    ) -> int:
        """Free the seat ``token_hash`` holds in an open game; return the seats still taken.
        The seat's own TakeSeat request ids (``request_prefix`` ...) go with it, so a late
        retry of that TakeSeat seats its sender anew instead of reviving the old seat.
        ``conn``: as ``take_seat``'s. Raises ``GameNotFound``, ``GameStarted``,
        ``SeatNotHeld``."""
        now = now or self._clock()

        def left(db: Connection) -> int:
            game = db.execute(
                select(_GAMES.c.status, _GAMES.c.seats_taken, _GAMES.c.version)
                .where(_GAMES.c.id == game_id)
                .with_for_update()
            ).one_or_none()
            if game is None:
                raise GameNotFound(game_id)
            if game.status != "open":
                raise GameStarted(game_id, game.status)
            gone = db.execute(
                delete(_SEATS).where(
                    _SEATS.c.game_id == game_id,
                    _SEATS.c.seat == seat,
                    _SEATS.c.token_hash == token_hash,
                )
            )
            if gone.rowcount != 1:
                raise SeatNotHeld(game_id, seat)
            db.execute(
                delete(_REQUESTS).where(
                    _REQUESTS.c.game_id == game_id,
                    _REQUESTS.c.seat == seat,
                    _REQUESTS.c.request_id.startswith(request_prefix, autoescape=True),
                )
            )
            db.execute(
                update(_GAMES)
                .where(_GAMES.c.id == game_id)
                .values(seats_taken=_GAMES.c.seats_taken - 1, updated_at=now)
            )
            # The other processes' copies still seat the player: they drop them.
            notify(db, LOBBY_CHANNEL, f"s:{game_id}")
            return int(game.seats_taken) - 1

        return self._write(left, conn)

    def stale_games(
        self, idle_before: datetime | None, open_before: datetime | None, limit: int = 100
    ) -> list[tuple[str, str]]:
        """Games nobody will finish, ``(game_id, status)``, oldest first: games in play
        without a clock untouched since ``idle_before``, open games untouched since
        ``open_before`` (``None``: not looked for). A tournament's games are its director's
        and never listed."""
        wanted = []
        if idle_before is not None:
            wanted.append(
                and_(
                    GameRow.status == "playing",
                    GameRow.updated_at < idle_before,
                    ~exists().where(GameClockRow.game_id == GameRow.id),
                )
            )
        if open_before is not None:
            wanted.append(and_(GameRow.status == "open", GameRow.updated_at < open_before))
        if not wanted:
            return []
        with self.reading() as session:
            rows = session.execute(
                select(GameRow.id, GameRow.status)
                .where(
                    or_(*wanted),
                    ~exists().where(TournamentGameRow.game_id == GameRow.id),
                )
                .order_by(GameRow.updated_at)
                .limit(limit)
            ).all()
        return [(str(r.id), str(r.status)) for r in rows]

    def game_of_request(self, request_id: str) -> str | None:
        """The game a CreateGame's request (its id, ``CREATE_REQUEST`` first) is recorded in,
        if any."""
        with self.reading() as session:
            return session.scalar(
                select(RequestRow.game_id)
                .where(RequestRow.request_id == request_id, CREATE_REQUESTS)
                .limit(1)
            )

    def seat_for_token(self, game_id: str, token_hash: str) -> int | None:
        """The seat whose token hashes to ``token_hash``, or ``None``."""
        if not is_token_hash(token_hash):
            return None
        with self.reading() as session:
            row = session.execute(
                select(SeatRow.seat, SeatRow.token_hash).where(
                    SeatRow.game_id == game_id, SeatRow.token_hash == token_hash
                )
            ).one_or_none()
        if row is None or not hmac.compare_digest(row.token_hash, token_hash):
            return None
        return int(row.seat)

    def list_seats(self, game_id: str) -> list[SeatRecord]:
        """Who sits where (without token hashes), by seat.  Raises ``GameNotFound``."""
        with self.reading() as session:
            rows = session.scalars(
                select(SeatRow).where(SeatRow.game_id == game_id).order_by(SeatRow.seat)
            ).all()
            if not rows and session.get(GameRow, game_id) is None:
                raise GameNotFound(game_id)
            return [SeatRecord(r.seat, r.player_name, r.created_at) for r in rows]

    # --- idempotent requests ---------------------------------------------------------

    def find_request(self, game_id: str, request_id: str) -> RequestRecord | None:
        """The stored outcome of a request already applied to this game, or ``None``."""
        with self.reading() as session:
            row = session.get(RequestRow, (game_id, request_id))
            if row is None:
                return None
            return RequestRecord(row.request_id, row.seat, row.result_version)

    # --- hand seeds ------------------------------------------------------------------

    def record_seed(
        self, game_id: str, hand_number: int, seed: bytes, commitment: bytes
    ) -> SeedRecord:
        """Remember the seed of a hand before it is dealt; return the seed record in force.

        ``commitment`` must be ``sha256(seed)``.  The first seed recorded for a hand stays:
        if one exists (say a deal was retried after a version conflict), it is returned
        unchanged and the new one is ignored, so a published commitment never changes.
        """
        _check_seeds(game_id, [(hand_number, seed, commitment)])
        with self.writing() as session:
            game = session.execute(
                select(GameRow.id).where(GameRow.id == game_id).with_for_update()
            ).one_or_none()
            if game is None:
                raise GameNotFound(game_id)
            existing = session.get(HandSeedRow, (game_id, hand_number))
            if existing is not None:
                return _seed_record(existing)
            session.execute(
                insert(HandSeedRow).values(
                    game_id=game_id,
                    hand_number=hand_number,
                    commitment=commitment,
                    seed=seed,
                    revealed=False,
                    created_at=self._clock(),
                )
            )
        return SeedRecord(hand_number, bytes(commitment), bytes(seed), False)

    def reveal_seeds(self, game_id: str, through_hand: int | None = None) -> int:
        """Mark the game's seeds (those of hands ``<= through_hand``, if given) as revealed;
        return how many were newly revealed.  Raises ``GameNotFound``."""
        query = update(HandSeedRow).where(
            HandSeedRow.game_id == game_id, HandSeedRow.revealed.is_(False)
        )
        if through_hand is not None:
            query = query.where(HandSeedRow.hand_number <= through_hand)
        with self.writing() as session:
            if session.get(GameRow, game_id) is None:
                raise GameNotFound(game_id)
            result = cast(
                CursorResult[Any],
                session.execute(
                    query.values(revealed=True).execution_options(synchronize_session=False)
                ),
            )
            return int(result.rowcount)

    def get_seed(self, game_id: str, hand_number: int) -> SeedRecord | None:
        with self.reading() as session:
            row = session.get(HandSeedRow, (game_id, hand_number))
            return None if row is None else _seed_record(row)

    # --- internals -------------------------------------------------------------------

    def _game_exists(self, game_id: str) -> bool:
        with self.reading() as session:
            return session.get(GameRow, game_id) is not None

    def _head(self, game_id: str, version: int) -> bytes:
        """The chain hash of the game's event ``version`` (what the next event chains on).
        The events are append-only, so it is read before the append's transaction: if the
        game moves meanwhile, the append's claim of the version fails anyway."""
        if version == 0:
            return GENESIS_HASH
        with self.reading() as session:
            stored = session.scalar(
                select(EventRow.hash).where(EventRow.game_id == game_id, EventRow.seq == version)
            )
            if stored is not None:
                return bytes(stored)
            actual = session.scalar(select(GameRow.version).where(GameRow.id == game_id))
        if actual is None:
            raise GameNotFound(game_id)
        if actual != version:
            raise VersionConflict(game_id, version, actual)
        raise ChainBroken(game_id, version, f"game is at version {version} but has no event")


def _check_status(status: str) -> None:
    if status not in _STATUSES:
        raise ValueError(f"unknown game status {status!r}; expected one of {_STATUSES}")


def _check_seeds(game_id: str, seeds: Sequence[NewSeed]) -> None:
    for hand_number, seed, commitment in seeds:
        if not hmac.compare_digest(seed_commitment(seed), commitment):
            raise ValueError(
                f"game {game_id!r}, hand {hand_number}: commitment is not sha256(seed)"
            )


def _insert_request(
    conn: Connection,
    game_id: str,
    request_id: str,
    seat: int,
    result_version: int,
    now: datetime,
) -> None:
    """Remember an applied request, for its retries; ``DuplicateRequest`` if it was already."""
    try:
        _INSERT_REQUEST.execute(
            conn,
            {
                "game_id": game_id,
                "request_id": request_id,
                "seat": seat,
                "result_version": result_version,
                "created_at": now,
            },
        )
    except IntegrityError as exc:
        raise DuplicateRequest(game_id, request_id) from exc


def _chained(head: bytes, events: Sequence[NewEvent]) -> list[tuple[str, bytes, bytes]]:
    """``(kind, payload, chain hash)`` of each event, chained after ``head``."""
    chained: list[tuple[str, bytes, bytes]] = []
    for kind, payload in events:
        payload = bytes(payload)
        head = chain_hash(head, payload)
        chained.append((kind, payload, head))
    return chained


def _told_nothing(error: BaseException | None) -> None:
    """The ``done`` of an append written in the caller's thread: its outcome is returned."""


def _game_record(row: GameRow) -> GameRecord:
    return GameRecord(
        id=row.id,
        preset=row.preset,
        options=dict(row.options),
        name=row.name,
        players=row.players,
        seats_taken=row.seats_taken,
        status=cast(GameStatus, row.status),
        version=row.version,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _seed_record(row: HandSeedRow) -> SeedRecord:
    return SeedRecord(row.hand_number, bytes(row.commitment), bytes(row.seed), bool(row.revealed))


def _decode_cursor(cursor: str) -> tuple[datetime, str]:
    found = decode_time_token(cursor)
    if found is None:
        raise InvalidCursor(cursor)
    return found
