"""One writer per process, with group commit: every append waiting when the writer is free
is committed in one transaction.

The server decides actions in memory (``boneyard.server.games.host``) and hands the writer what
to append; the answer to the client waits for ``Append.done``, called after the commit, so an
acknowledged action is durable. A batch is (Core statements, no ORM; on SQLite run on its
driver, below): for each game one conditional ``UPDATE games SET version = new WHERE id = ?
AND version = expected``, then one multi-row INSERT of all the batch's events and one of its
requests (plus the seeds of hands dealt, and the clocks). A game no longer at its expected
version (another process wrote it) gets ``VersionConflict`` and nothing of it is written,
without failing the others; any other failure rolls the batch back and retries each append in
a transaction of its own, so one bad append never fails its batch. The primary key
``(game_id, seq)`` stays the last word: an INSERT that collides is a ``VersionConflict`` too.
A hand's seed recorded again is left as it is (the same seed) or refused (``SeedConflict``,
another seed).

The transaction is a plain function over a connection, ``write_batch``: the ``Writer``'s
thread calls it for each batch, and ``EventStore.append`` for a batch of one, so the store's
contract suite tests the code the server runs (there is no second path to the log).

Games are updated in id order, so two processes' batches on one PostgreSQL take the row locks
in the same order and cannot deadlock. On PostgreSQL the batch also announces the new
versions (``NOTIFY``, delivered at commit) for the other processes.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hmac
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import String, bindparam, func, insert, select, update
from sqlalchemy.engine import Connection, Engine, RootTransaction
from sqlalchemy.exc import IntegrityError

from boneyard.server.store.account_events import NewAccountEvent, append_account_events
from boneyard.server.store.db import WRITE
from boneyard.server.store.driver import DriverTransaction, Prepared, driver_cursor, run
from boneyard.server.store.errors import (
    DuplicateRequest,
    GameNotFound,
    SeedConflict,
    VersionConflict,
)
from boneyard.server.store.game_setup import ClockState
from boneyard.server.store.lane import WriteLane
from boneyard.server.store.models import (
    EventRow,
    GameClockRow,
    GameRow,
    HandSeedRow,
    RequestRow,
    UTCDateTime,
    table_of,
)
from boneyard.server.store.notify import notification_payloads, notify

__all__ = ["Append", "Writer", "refusal", "write_appended", "write_batch"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

MAX_BATCH = 512
"""Appends committed in one transaction at most (the rest wait for the next)."""

_EVENTS = table_of(EventRow)
_GAMES = table_of(GameRow)
_REQUESTS = table_of(RequestRow)
_SEEDS = table_of(HandSeedRow)

# Built once: a statement object reused keeps its compiled form and cache key.
_CLAIM = (
    update(_GAMES)
    .where(_GAMES.c.id == bindparam("g_id"), _GAMES.c.version == bindparam("expected"))
    .values(
        version=bindparam("new_version"),
        updated_at=bindparam("now"),
        status=func.coalesce(bindparam("new_status", type_=String), _GAMES.c.status),
    )
)
_STAMPS: dict[Any, Callable[[Any], Any] | None] = {}
"""The store's time column's writer, a dialect."""
_INSERT_EVENTS = insert(_EVENTS)
_INSERT_REQUESTS = insert(_REQUESTS)
_INSERT_SEEDS = Prepared(insert(_SEEDS))
_CLOCKS = table_of(GameClockRow)
_UPDATE_CLOCK = Prepared(
    update(_CLOCKS)
    .where(_CLOCKS.c.game_id == bindparam("g_id"))
    .values(
        banks=bindparam("banks", type_=_CLOCKS.c.banks.type),
        turn_seat=bindparam("turn_seat"),
        turn_version=bindparam("turn_version"),
        turn_started_at=bindparam("turn_started_at", type_=_CLOCKS.c.turn_started_at.type),
    )
)
_REVEAL = Prepared(
    update(_SEEDS).where(_SEEDS.c.game_id == bindparam("g_id")).values(revealed=True)
)
_VERSION = Prepared(select(_GAMES.c.version).where(_GAMES.c.id == bindparam("g_id")))
_KNOWN_SEED = Prepared(
    select(_SEEDS.c.seed).where(
        _SEEDS.c.game_id == bindparam("g_id"), _SEEDS.c.hand_number == bindparam("hand")
    )
)
"""A hand's seed recorded already, if any (a hand is dealt once a game's thirty-odd actions:
one small statement each, on SQLite's driver, cost less than one look-up of all the batch's)."""

# The same three statements in SQLite's own words, run on the driver's cursor (pysqlite): they
# are every action's writes, and SQLAlchemy's work around each execute held the GIL for longer
# than SQLite took to run them (the writer was an eighth of a busy server's GIL). A dealt hand's
# seed, a finished game's reveal, a clock, a conflict's version and the accounts told a game's
# end are ``Prepared`` (``store/driver.py``: the same on the driver, from one Core statement).
_SQLITE_CLAIM = (
    "UPDATE games SET version = ?, updated_at = ?, status = coalesce(?, status) "
    "WHERE id = ? AND version = ?"
)
_SQLITE_MOVE = "UPDATE games SET version = ?, updated_at = ? WHERE id = ? AND version = ?"
"""The claim of a batch that changes no game's status (nearly every batch): ``status`` left
out of it is left out of its index's work too."""
_EVENT_COLUMNS = ("game_id", "seq", "kind", "payload", "hash", "created_at")
_REQUEST_COLUMNS = ("game_id", "request_id", "seat", "result_version", "created_at")


def _sqlite_insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


_SQLITE_EVENTS = _sqlite_insert("events", _EVENT_COLUMNS)
_SQLITE_REQUESTS = _sqlite_insert("requests", _REQUEST_COLUMNS)


@dataclass(slots=True)
class Append:
    """Events to append to one game at ``expected_version``; ``done(error)`` is called from
    the writer's thread once committed (``None``) or refused (``VersionConflict``,
    ``DuplicateRequest``, ``GameNotFound``, ``SeedConflict``, or whatever the database
    raised)."""

    game_id: str
    expected_version: int
    events: Sequence[tuple[str, bytes, bytes]]
    """``(kind, payload, chain hash)`` of each event, in order."""
    done: Callable[[BaseException | None], None]
    request: tuple[str, int] | None = None
    """``(request_id, seat)`` remembered for retries (with the version it produced)."""
    status: str | None = None
    seeds: Sequence[tuple[int, bytes, bytes]] = ()
    """``(hand_number, seed, commitment)`` of hands these events deal (kept secret)."""
    clock: ClockState | None = None
    reveal_seeds: bool = False
    """The game is over: its seeds (this append's too) are public from the commit on."""
    at: datetime | None = None
    """When it happened (the game's ``updated_at``; default: when written)."""
    account_events: Sequence[NewAccountEvent] = ()
    """What the accounts at the table are told in the same transaction (the game's end)."""

    @property
    def new_version(self) -> int:
        return self.expected_version + len(self.events)


class _Call:
    """A write other than an append, made in a batch's transaction (``Writer.call``)."""

    __slots__ = ("future", "outcome", "prepared_only", "work")

    def __init__(self, work: Callable[[Connection], Any], prepared_only: bool) -> None:
        self.work = work
        self.prepared_only = prepared_only
        """``work`` runs the store's prepared statements only (``driver.Prepared``)."""
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.outcome: tuple[bool, Any] | None = None
        """``(True, result)`` or ``(False, error)`` of its latest attempt."""

    def start(self) -> bool:
        """Whether it is still wanted (its caller did not cancel it before it began)."""
        return self.future.set_running_or_notify_cancel()

    def attempt(self, conn: Connection) -> None:
        """Run it in a savepoint of ``conn``'s open transaction: what it raises undoes its own
        writes only, and is kept to be told after the commit."""
        try:
            with _savepoint(conn):
                self.outcome = (True, self.work(conn))
        except BaseException as error:  # noqa: BLE001 - handed to the waiting caller
            self.outcome = (False, error)

    def tell(self, failed: BaseException | None = None) -> None:
        """Tell the caller its outcome once its transaction committed, or ``failed``."""
        if failed is not None or self.outcome is None:
            self.future.set_exception(failed or RuntimeError("the call was not run"))
        elif self.outcome[0]:
            self.future.set_result(self.outcome[1])
        else:
            self.future.set_exception(self.outcome[1])


_SAVEPOINT = "boneyard_call"


@contextlib.contextmanager
def _savepoint(conn: Connection) -> Iterator[None]:
    """A savepoint of ``conn``'s open transaction around the block, rolled back to if the block
    raises. On SQLite's driver it is the driver's own statements: SQLAlchemy compiles a
    savepoint's statement anew each time (a third of a seat taken in a batch)."""
    cursor = driver_cursor(conn)
    if cursor is None:
        with conn.begin_nested():
            yield
        return
    run(cursor.execute, f"SAVEPOINT {_SAVEPOINT}", ())
    try:
        yield
    except BaseException:
        run(cursor.execute, f"ROLLBACK TO {_SAVEPOINT}", ())
        run(cursor.execute, f"RELEASE {_SAVEPOINT}", ())
        raise
    run(cursor.execute, f"RELEASE {_SAVEPOINT}", ())


class Writer:
    """The writer thread of one process. ``submit`` queues an append, ``call`` another write;
    ``close`` commits what is queued and stops."""

    def __init__(
        self,
        engine: Engine,
        *,
        lane: WriteLane | None = None,
        notify_channel: str | None = None,
        name: str = "boneyard-writer",
        on_batch: Callable[[int], None] | None = None,
    ) -> None:
        """``lane``: the connection its batches are written through, shared with the store's
        other writes (on SQLite: ``EventStore.lane``); by default one of its own.
        ``on_batch(size)``: told the size of each batch it commits (from its thread)."""
        self._owns_lane = lane is None
        self._lane = lane or WriteLane(engine.execution_options(**{WRITE: True}))
        self._on_batch = on_batch
        self._notify_channel = notify_channel
        self._queue: queue.SimpleQueue[Append | _Call | None] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, append: Append) -> None:
        if self._closed:
            append.done(RuntimeError("the writer is closed"))
            return
        self._queue.put(append)

    def call(
        self, work: Callable[[Connection], _T], *, prepared_only: bool = False
    ) -> concurrent.futures.Future[_T]:
        """Run ``work(conn)`` (a write of the store's: a seat taken or left) in the
        transaction of the next batch, after its appends, in a savepoint of its own: one
        commit (one sync of the disk) for both. The future tells what ``work`` returned or
        raised once that transaction committed (what it raised undid its own writes only);
        cancelled before the batch begins, it is not run. ``prepared_only``: ``work`` runs
        the store's prepared statements (``driver.Prepared``) and nothing else, so that on
        SQLite a batch of such calls stays in a transaction of the driver's own."""
        call = _Call(work, prepared_only)
        if self._closed:
            call.future.set_exception(RuntimeError("the writer is closed"))
        else:
            self._queue.put(call)
        return call.future

    def on_its_thread(self) -> bool:
        """Whether the caller runs on the writer's thread (inside a call of its batch)."""
        return threading.current_thread() is self._thread

    def close(self, timeout: float = 30.0) -> None:
        """Commit what is queued, then stop the thread."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join(timeout)
        if self._owns_lane:
            self._lane.close()

    # --- the thread --------------------------------------------------------------------

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is None:
                break
            batch: list[Append] = []
            calls: list[_Call] = []
            item: Append | _Call = first
            while True:
                if isinstance(item, _Call):
                    calls.append(item)
                else:
                    batch.append(item)
                if len(batch) >= MAX_BATCH:
                    break
                try:
                    following = self._queue.get_nowait()
                except queue.Empty:
                    break
                if following is None:
                    stopping = True
                    break
                item = following
            if calls:
                calls = [call for call in calls if call.start()]
            if batch or calls:
                self._commit(batch, calls)

    def _write(self, batch: list[Append], calls: list[_Call]) -> list[BaseException | None]:
        alongside: Callable[[Connection], None] | None = None
        prepared_only = False
        if calls:

            def attempt(conn: Connection) -> None:
                for call in calls:
                    call.attempt(conn)

            alongside = attempt
            prepared_only = all(call.prepared_only for call in calls)

        with self._lane.connection() as conn:
            return _write_batch(
                conn,
                self._lane.cursor,
                batch,
                self._notify_channel,
                datetime.now(UTC),
                alongside,
                prepared_only,
            )

    def _commit(self, batch: list[Append], calls: list[_Call]) -> None:
        try:
            outcomes = self._write(batch, calls)
        except Exception:
            log.warning(
                "a batch of %d appends and %d other writes failed; retrying each alone",
                len(batch),
                len(calls),
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            outcomes = []
            for item in batch:
                try:
                    outcomes.extend(self._write([item], []))
                except Exception as error:  # noqa: BLE001 - handed to the waiting caller
                    outcomes.append(refusal(item, error))
            for call in calls:
                try:
                    self._write([], [call])
                except Exception as error:  # noqa: BLE001 - handed to the waiting caller
                    call.tell(error)
                else:
                    call.tell()
        else:
            for call in calls:
                call.tell()
        if self._on_batch is not None and batch:
            try:
                self._on_batch(len(batch))
            except Exception:  # counting must not stop the writer
                log.exception("the batch listener failed")
        for item, outcome in zip(batch, outcomes, strict=True):
            try:
                item.done(outcome)
            except Exception:  # a caller's callback must not stop the writer
                log.exception("game %s: the append's callback failed", item.game_id)


def write_batch(
    conn: Connection,
    batch: Sequence[Append],
    *,
    notify_channel: str | None = None,
    now: datetime | None = None,
    alongside: Callable[[Connection], None] | None = None,
    alongside_prepared: bool = False,
) -> list[BaseException | None]:
    """Write ``batch`` in one transaction on ``conn`` (which has none open); the outcome of
    each append, in order: ``None`` (written) or the ``VersionConflict`` / ``GameNotFound``
    it is refused with (nothing of it written). Anything else the database raises (a key
    collision, ``SeedConflict``) rolls the whole batch back and is raised: retry each append
    alone and tell it ``refusal(item, error)``. ``now``: when it is written (default: now).
    ``alongside(conn)``: more writes in the transaction that commits, after the appends;
    ``alongside_prepared``: they run the store's prepared statements only (``Writer.call``).

    This is the one path to the log: the ``Writer`` calls it for each batch, and
    ``EventStore.append`` for a batch of one."""
    return _write_batch(
        conn,
        driver_cursor(conn),
        batch,
        notify_channel,
        now or datetime.now(UTC),
        alongside,
        alongside_prepared,
    )


def _write_batch(
    conn: Connection,
    cursor: sqlite3.Cursor | None,
    batch: Sequence[Append],
    notify_channel: str | None,
    written_at: datetime,
    alongside: Callable[[Connection], None] | None,
    alongside_prepared: bool,
) -> list[BaseException | None]:
    """``write_batch``, given ``conn``'s SQLite driver cursor (``None``: not SQLite's), which
    the ``Writer`` finds once a connection (``WriteLane.cursor``), not once a batch."""
    on_driver = (
        cursor is not None and notify_channel is None and (alongside is None or alongside_prepared)
    )
    n = len(batch)
    order = sorted(range(n), key=lambda i: batch[i].game_id) if n > 1 else range(n)
    if n > 1 and conn.dialect.supports_sane_multi_rowcount:
        # Every game at once; if one moved elsewhere, claim them one by one instead to find
        # which (rare: only with several processes on one database). A batch of one append
        # (or none) goes straight to its one transaction below.
        with _begin(conn, cursor if on_driver else None) as transaction:
            if _claim(conn, cursor, [batch[i] for i in order], written_at) == n:
                _write_appended(conn, cursor, batch, written_at, notify_channel)
                if alongside is not None:
                    alongside(conn)
                return [None] * n
            transaction.rollback()
    outcomes: list[BaseException | None] = [None] * n
    written: list[Append] = []
    with _begin(conn, cursor if on_driver else None):
        for index in order:
            item = batch[index]
            if _claim(conn, cursor, [item], written_at) != 1:
                outcomes[index] = _conflict(conn, item)
                continue
            written.append(item)
        if written:
            _write_appended(conn, cursor, written, written_at, notify_channel)
        if alongside is not None:
            alongside(conn)
    return outcomes


def _begin(conn: Connection, cursor: sqlite3.Cursor | None) -> DriverTransaction | RootTransaction:
    """The batch's transaction: on SQLite's driver (``cursor``'s) when every statement of it
    runs there (no notification, and no write alongside it but prepared statements: a
    SQLAlchemy statement would begin a second transaction and fail), else SQLAlchemy's. Its
    begin and commit and their events cost more than most batches' statements."""
    if cursor is not None:
        return DriverTransaction(cursor)
    return conn.begin()


def write_appended(
    conn: Connection,
    written: Sequence[Append],
    now: datetime,
    notify_channel: str | None = None,
) -> None:
    """Insert what ``written`` appends (their games' versions already claimed), in the open
    transaction: one multi-row INSERT of the events, one of the requests, and so on.
    ``EventStore.create_game`` writes a new game's first events with it too."""
    _write_appended(conn, driver_cursor(conn), written, now, notify_channel)


def _write_appended(
    conn: Connection,
    cursor: sqlite3.Cursor | None,
    written: Sequence[Append],
    now: datetime,
    notify_channel: str | None,
) -> None:
    """``write_appended``, given ``conn``'s SQLite driver cursor (``None``: not SQLite's)."""
    # On SQLite's driver the rows go as they are, the time as its column writes it.
    at = now if cursor is None else _stamp(conn, now)
    events: list[tuple[Any, ...]] = []
    requests: list[tuple[Any, ...]] = []
    rare: list[Append] = []
    """The appends that deal a hand, move a clock, end a game (a few in a hundred)."""
    for item in written:
        game_id, version = item.game_id, item.expected_version
        for kind, payload, chain in item.events:
            version += 1
            events.append((game_id, version, kind, payload, chain, at))
        if (request := item.request) is not None:
            requests.append((game_id, request[0], request[1], version, at))
        if item.seeds or item.clock is not None or item.account_events or item.reveal_seeds:
            rare.append(item)
    _insert(conn, cursor, _INSERT_EVENTS, _SQLITE_EVENTS, _EVENT_COLUMNS, events)
    _insert(conn, cursor, _INSERT_REQUESTS, _SQLITE_REQUESTS, _REQUEST_COLUMNS, requests)
    if rare:
        _write_rare(conn, rare, now)
    if notify_channel is not None:
        notify(
            conn,
            notify_channel,
            *notification_payloads((i.game_id, i.new_version) for i in written),
        )


def _write_rare(conn: Connection, written: Sequence[Append], now: datetime) -> None:
    """What a few appends carry besides their events and request: the seeds of hands dealt,
    a clock, the accounts told a game's end, the seeds revealed at a game's end."""
    _INSERT_SEEDS.executemany(conn, _new_seeds(conn, written, now))
    clocks = [
        {
            "g_id": item.game_id,
            "banks": list(item.clock.banks),
            "turn_seat": item.clock.turn_seat,
            "turn_version": item.new_version,
            "turn_started_at": item.clock.turn_started_at,
        }
        for item in written
        if item.clock is not None
    ]
    _UPDATE_CLOCK.executemany(conn, clocks)
    told = [event for item in written for event in item.account_events]
    if told:
        append_account_events(conn, told, now)
    for item in written:
        if item.reveal_seeds:
            _REVEAL.execute(conn, {"g_id": item.game_id})


def _stamp(conn: Connection, at: datetime) -> Any:
    """``at`` as the store's column type writes it on SQLite (fixed-width naive UTC text)."""
    return _stamper(conn)(at)


def _stamper(conn: Connection) -> Callable[[Any], Any]:
    """``_stamp`` for ``conn``'s dialect, found once for a batch's many times (each append has
    its own)."""
    process = _STAMPS.get(conn.dialect)
    if process is None:
        process = _STAMPS[conn.dialect] = (
            UTCDateTime().dialect_impl(conn.dialect).bind_processor(conn.dialect)
        )
    assert process is not None
    return process


def _claim(
    conn: Connection, cursor: sqlite3.Cursor | None, claims: Sequence[Append], written_at: datetime
) -> int:
    """Move the game of each of ``claims`` to its new version if it is still at the expected
    one (its ``updated_at`` to the append's time, else ``written_at``); how many moved.
    ``cursor``: ``conn``'s SQLite driver cursor (``None``: not SQLite's)."""
    if cursor is None:
        return int(
            conn.execute(
                _CLAIM,
                [
                    {
                        "g_id": c.game_id,
                        "expected": c.expected_version,
                        "new_version": c.new_version,
                        "now": c.at or written_at,
                        "new_status": c.status,
                    }
                    for c in claims
                ],
            ).rowcount
        )
    stamp = _stamper(conn)
    rows: list[tuple[Any, ...]]
    sql = _SQLITE_MOVE
    for c in claims:  # (a loop, not ``any`` over a generator: most batches hold one or two)
        if c.status is not None:
            sql = _SQLITE_CLAIM
            break
    if sql is _SQLITE_CLAIM:
        rows = [
            (c.new_version, stamp(c.at or written_at), c.status, c.game_id, c.expected_version)
            for c in claims
        ]
    else:
        rows = [
            (c.new_version, stamp(c.at or written_at), c.game_id, c.expected_version)
            for c in claims
        ]
    run(cursor.executemany, sql, rows)
    return cursor.rowcount


def _insert(
    conn: Connection,
    cursor: sqlite3.Cursor | None,
    statement: Any,
    sql: str,
    columns: tuple[str, ...],
    rows: list[tuple[Any, ...]],
) -> None:
    """Insert ``rows`` (each the tuple of ``columns``): ``sql`` on SQLite's driver ``cursor``,
    else ``statement`` (Core); none at all (a game may be created with no events) is no
    statement."""
    if not rows:
        return
    if cursor is None:
        conn.execute(statement, [dict(zip(columns, row, strict=True)) for row in rows])
        return
    run(cursor.executemany, sql, rows)


def _new_seeds(conn: Connection, written: Sequence[Append], now: datetime) -> list[dict[str, Any]]:
    """The seed rows to insert: a hand's seed recorded already (the same seed) is left out, a
    different seed for it is ``SeedConflict`` (a published commitment never changes). Looked
    up only when the batch deals a hand (once a hand per game, not once an action)."""
    rows: list[dict[str, Any]] = []
    new: dict[tuple[str, int], bytes] = {}
    for item in written:
        for number, seed, commitment in item.seeds:
            known = new.get((item.game_id, number))
            if known is None:
                found = _KNOWN_SEED.rows(conn, {"g_id": item.game_id, "hand": number})
                known = bytes(found[0][0]) if found else None
            if known is not None:
                if not hmac.compare_digest(known, seed):
                    raise SeedConflict(item.game_id, number)
                continue
            new[item.game_id, number] = seed
            rows.append(
                {
                    "game_id": item.game_id,
                    "hand_number": number,
                    "commitment": commitment,
                    "seed": seed,
                    "revealed": False,
                    "created_at": now,
                }
            )
    return rows


def _conflict(conn: Connection, item: Append) -> BaseException:
    found = _VERSION.rows(conn, {"g_id": item.game_id})
    if not found:
        return GameNotFound(item.game_id)
    return VersionConflict(item.game_id, item.expected_version, int(found[0][0]))


def refusal(item: Append, error: BaseException) -> BaseException:
    """What an append that failed alone is told: a collision on a key is a lost race."""
    if isinstance(error, IntegrityError):
        text_of = str(error.orig).lower() if error.orig is not None else str(error).lower()
        if "request" in text_of and item.request is not None:
            return DuplicateRequest(item.game_id, item.request[0])
        return VersionConflict(item.game_id, item.expected_version, None)
    return error
