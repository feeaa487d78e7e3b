"""A ``Prepared`` statement run on SQLite's driver writes and reads what the same Core statement
writes and reads through SQLAlchemy: the column types' bind processors applied (times, JSON),
the statement's own literals kept, the driver's errors raised as SQLAlchemy's."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import bindparam, case, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from boneyard.server.store.db import create_engine
from boneyard.server.store.driver import DriverTransaction, Prepared, driver_cursor
from boneyard.server.store.models import Base, GameRow, SeatRow, table_of

_GAMES = table_of(GameRow)
_SEATS = table_of(SeatRow)
_AT = datetime(2026, 12, 5, 9, 30, 15, 123456, tzinfo=UTC)
_GAME = {
    "id": "g-1",
    "preset": "texas42",
    "options": {"nello": True, "marks_to_win": 5},
    "name": "a game",
    "players": 4,
    "seats_taken": 3,
    "status": "open",
    "version": 2,
    "created_at": _AT,
    "updated_at": _AT,
}
_FILL = update(_GAMES).where(_GAMES.c.id == bindparam("g_id"))
_SEAT_TAKEN_FULL = _FILL.values(
    seats_taken=_GAMES.c.seats_taken + 1,
    status=case((_GAMES.c.status == "open", "playing"), else_=_GAMES.c.status),
    updated_at=bindparam("now"),
)


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[tuple[Engine, Engine]]:
    """Two fresh SQLite stores: one written through ``Prepared``, one through Core."""
    made = []
    for name in ("prepared", "core"):
        engine = create_engine(f"sqlite:///{tmp_path / name}.db")
        Base.metadata.create_all(engine)
        made.append(engine)
    yield made[0], made[1]
    for engine in made:
        engine.dispose()


def _everything(conn: Connection) -> list[Any]:
    return [list(conn.execute(select(table)).all()) for table in (_GAMES, _SEATS)]


def test_a_prepared_statement_runs_on_the_sqlite_driver(engines: tuple[Engine, Engine]) -> None:
    with engines[0].connect() as conn:
        assert driver_cursor(conn) is not None


def test_prepared_writes_store_what_core_writes(engines: tuple[Engine, Engine]) -> None:
    prepared, core = engines
    seat = {"game_id": "g-1", "seat": 3, "player_name": "Ann", "token_hash": "a" * 64}
    later = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
    with prepared.begin() as conn:
        assert Prepared(insert(_GAMES)).execute(conn, _GAME) == 1
        assert Prepared(insert(_SEATS)).execute(conn, {**seat, "created_at": _AT}) == 1
        assert Prepared(_SEAT_TAKEN_FULL).execute(conn, {"g_id": "g-1", "now": later}) == 1
        written = _everything(conn)
    with core.begin() as conn:
        conn.execute(insert(_GAMES), _GAME)
        conn.execute(insert(_SEATS), {**seat, "created_at": _AT})
        conn.execute(_SEAT_TAKEN_FULL, {"g_id": "g-1", "now": later})
        expected = _everything(conn)
    assert written == expected
    game = written[0][0]
    assert (game.status, game.seats_taken, game.updated_at) == ("playing", 4, later)
    assert game.options == {"nello": True, "marks_to_win": 5}


def test_prepared_rows_are_the_selected_columns(engines: tuple[Engine, Engine]) -> None:
    with engines[0].begin() as conn:
        Prepared(insert(_GAMES)).execute(conn, _GAME)
        found = Prepared(
            select(_GAMES.c.players, _GAMES.c.seats_taken).where(_GAMES.c.id == bindparam("g"))
        )
        assert [tuple(row) for row in found.rows(conn, {"g": "g-1"})] == [(4, 3)]
        assert found.rows(conn, {"g": "no such game"}) == []


def test_several_rows_go_in_one_statement_and_count(engines: tuple[Engine, Engine]) -> None:
    with engines[0].begin() as conn:
        games = Prepared(insert(_GAMES))
        assert games.executemany(conn, [{**_GAME, "id": f"g-{n}"} for n in range(3)]) == 3
        assert games.executemany(conn, []) == 0
        moved = Prepared(_FILL.values(version=bindparam("v")))
        assert moved.execute(conn, {"g_id": "g-1", "v": 9}) == 1
        assert moved.execute(conn, {"g_id": "no such game", "v": 9}) == 0


def test_a_key_collision_is_sqlalchemys_integrity_error(engines: tuple[Engine, Engine]) -> None:
    with engines[0].begin() as conn:
        games = Prepared(insert(_GAMES))
        games.execute(conn, _GAME)
        with pytest.raises(IntegrityError):
            games.execute(conn, _GAME)


def test_a_missing_value_is_refused_before_the_database(engines: tuple[Engine, Engine]) -> None:
    with engines[0].begin() as conn, pytest.raises(KeyError, match="now"):
        Prepared(_SEAT_TAKEN_FULL).execute(conn, {"g_id": "g-1"})


def test_a_column_read_through_a_processor_is_refused(engines: tuple[Engine, Engine]) -> None:
    # The driver's rows are not read back through result processors: such a column must be
    # selected with Core, not silently handed over as stored text.
    with engines[0].begin() as conn:
        Prepared(insert(_GAMES)).execute(conn, _GAME)
        with pytest.raises(ValueError, match="created_at"):
            Prepared(select(_GAMES.c.created_at)).rows(conn, {})


def test_a_statement_returning_gives_its_rows_as_through_core(
    engines: tuple[Engine, Engine],
) -> None:
    taken = _FILL.values(seats_taken=_GAMES.c.seats_taken + 1).returning(_GAMES.c.seats_taken)
    found = []
    for engine, rows in (
        (engines[0], lambda conn, p: Prepared(taken).rows(conn, p)),
        (engines[1], lambda conn, p: list(conn.execute(taken, p).all())),
    ):
        with engine.begin() as conn:
            Prepared(insert(_GAMES)).execute(conn, _GAME)
            found.append([tuple(row) for row in rows(conn, {"g_id": "g-1"})])
            found.append([tuple(row) for row in rows(conn, {"g_id": "no such game"})])
    assert found == [[(4,)], [], [(4,)], []]


def test_a_column_returned_through_a_processor_is_refused(engines: tuple[Engine, Engine]) -> None:
    stamped = _FILL.values(version=9).returning(_GAMES.c.updated_at)
    with engines[0].begin() as conn, pytest.raises(ValueError, match="updated_at"):
        Prepared(stamped).rows(conn, {"g_id": "g-1"})


def test_an_expanding_parameter_is_refused(engines: tuple[Engine, Engine]) -> None:
    many = select(_GAMES.c.id).where(_GAMES.c.id.in_(bindparam("ids", expanding=True)))
    with engines[0].begin() as conn, pytest.raises(ValueError, match="expanding"):
        Prepared(many).rows(conn, {"ids": ["g-1"]})


# --- a transaction on the driver ---------------------------------------------------------


def _games(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return [str(row[0]) for row in conn.execute(select(_GAMES.c.id))]


@pytest.fixture
def on_driver(engines: tuple[Engine, Engine]) -> Iterator[tuple[Connection, DriverTransaction]]:
    """A connection of the first store and a transaction (not yet begun) on its driver."""
    with engines[0].connect() as conn:
        cursor = driver_cursor(conn)
        assert cursor is not None
        yield conn, DriverTransaction(cursor)


def test_a_driver_transaction_commits_what_its_block_wrote(
    on_driver: tuple[Connection, DriverTransaction], engines: tuple[Engine, Engine]
) -> None:
    conn, transaction = on_driver
    with transaction:
        Prepared(insert(_GAMES)).execute(conn, _GAME)
    assert not conn.in_transaction()  # (SQLAlchemy never began one)
    assert _games(engines[0]) == ["g-1"]


def test_a_driver_transaction_rolls_back_when_its_block_raises(
    on_driver: tuple[Connection, DriverTransaction], engines: tuple[Engine, Engine]
) -> None:
    conn, transaction = on_driver
    with pytest.raises(IntegrityError), transaction:
        Prepared(insert(_GAMES)).execute(conn, _GAME)
        Prepared(insert(_GAMES)).execute(conn, _GAME)  # the same key again
    assert _games(engines[0]) == []


def test_a_driver_transaction_rolled_back_early_writes_nothing(
    on_driver: tuple[Connection, DriverTransaction], engines: tuple[Engine, Engine]
) -> None:
    conn, transaction = on_driver
    with transaction:
        Prepared(insert(_GAMES)).execute(conn, _GAME)
        transaction.rollback()
    assert _games(engines[0]) == []


def test_sqlalchemy_inside_a_driver_transaction_fails_and_writes_nothing(
    on_driver: tuple[Connection, DriverTransaction], engines: tuple[Engine, Engine]
) -> None:
    # It would begin a second transaction: refused, and the first rolled back with it.
    conn, transaction = on_driver
    with pytest.raises(sqlite3.OperationalError, match="within a transaction"), transaction:
        Prepared(insert(_GAMES)).execute(conn, _GAME)
        conn.execute(insert(_GAMES), {**_GAME, "id": "g-2"})
    conn.rollback()
    assert _games(engines[0]) == []
