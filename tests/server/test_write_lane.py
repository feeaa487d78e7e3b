"""The write lane (``boneyard.server.store.lane``): one connection lent to one holder at a
time; a block that fails leaves no transaction open, a connection the database failed on is
not lent again, and a second block opened inside the first on one thread is refused."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from boneyard.server.store.lane import WriteLane


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    made = create_engine(f"sqlite:///{tmp_path / 'lane.db'}")
    with made.begin() as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    return made


def test_the_same_connection_is_lent_again(engine: Engine) -> None:
    lane = WriteLane(engine)
    with lane.connection() as first:
        pass
    with lane.connection() as second:
        assert second is first
    lane.close()


def test_a_block_opened_inside_another_on_one_thread_is_refused(engine: Engine) -> None:
    lane = WriteLane(engine)
    with (
        lane.connection(),
        pytest.raises(RuntimeError, match="inside another"),
        lane.connection(),
    ):
        pass  # pragma: no cover - never entered
    with lane.connection() as conn:  # the outer block gave the lane back
        assert conn.execute(text("SELECT 1")).scalar_one() == 1
    lane.close()


def test_a_block_that_fails_leaves_no_transaction_open(engine: Engine) -> None:
    lane = WriteLane(engine)
    with pytest.raises(ValueError), lane.connection() as conn:
        conn.begin()
        conn.execute(text("INSERT INTO t VALUES (1)"))
        raise ValueError("the caller's own trouble")
    with lane.connection() as again:
        assert again is conn  # not the database's failure: the connection is kept
        assert not again.in_transaction()
        assert again.execute(text("SELECT count(*) FROM t")).scalar_one() == 0
    lane.close()


def test_a_connection_the_database_failed_on_is_not_lent_again(engine: Engine) -> None:
    lane = WriteLane(engine)
    with pytest.raises(OperationalError), lane.connection() as failed:
        failed.execute(text("SELECT * FROM no_such_table"))
    with lane.connection() as conn:
        assert conn is not failed
        assert conn.execute(text("SELECT 1")).scalar_one() == 1
    lane.close()


def test_the_cursor_is_the_lent_connections_driver_cursor_and_a_new_connection_brings_its_own(
    engine: Engine,
) -> None:
    lane = WriteLane(engine)
    with pytest.raises(OperationalError), lane.connection() as failed:
        first = lane.cursor
        assert first is not None
        assert first.connection is failed.connection.driver_connection
        failed.execute(text("SELECT * FROM no_such_table"))
    assert lane.cursor is None  # dropped with its connection
    with lane.connection() as conn:
        cursor = lane.cursor
        assert cursor is not None and cursor is not first
        assert cursor.connection is conn.connection.driver_connection
        assert cursor.execute("SELECT 1").fetchone() == (1,)
    with lane.connection():
        assert lane.cursor is cursor  # the same connection lent again: the same cursor
    lane.close()
    assert lane.cursor is None


def test_a_second_thread_waits_for_the_holder_to_give_the_lane_back(engine: Engine) -> None:
    lane = WriteLane(engine)
    order: list[str] = []

    def borrower() -> None:
        with lane.connection():
            order.append("second")

    with lane.connection():
        order.append("first")
        other = threading.Thread(target=borrower)
        other.start()
        other.join(timeout=0.2)  # it cannot have the lane yet, however long it is given
        assert other.is_alive() and order == ["first"]
    other.join(timeout=30)
    assert not other.is_alive() and order == ["first", "second"]
    lane.close()
