"""The store's time column (``UTCDateTime``) on SQLite: written in one step, the very text
that its ``process_bind_param`` and SQLAlchemy's SQLite ``DATETIME`` made together, and read
back as the same aware UTC time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Column, DateTime, MetaData, Table, create_engine, insert, select
from sqlalchemy.dialects import sqlite

from boneyard.server.store.models import UTCDateTime

_SQLITE = sqlite.dialect()
_ZONES = st.sampled_from(
    [UTC, timezone(timedelta(0)), timezone(timedelta(hours=5, minutes=30))]
    + [timezone(-timedelta(hours=hours)) for hours in (1, 8, 12)]
)


def _written(value: datetime | None) -> Any:
    process = UTCDateTime().dialect_impl(_SQLITE).bind_processor(_SQLITE)
    assert process is not None
    return process(value)


def _as_sqlalchemy_writes(value: datetime | None) -> Any:
    """The decorator's own conversion, then SQLAlchemy's SQLite DATETIME's text."""
    converted = UTCDateTime().process_bind_param(value, _SQLITE)
    text_of = DateTime().dialect_impl(_SQLITE).bind_processor(_SQLITE)
    assert text_of is not None
    return text_of(converted)


@given(st.datetimes(timezones=_ZONES))
def test_a_time_is_written_as_sqlalchemys_sqlite_text_of_it_in_utc(value: datetime) -> None:
    assert _written(value) == _as_sqlalchemy_writes(value)


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 12, 5, 14, 0, tzinfo=UTC),  # no microseconds: still six digits
        datetime(1, 1, 1, 0, 0, tzinfo=timezone(-timedelta(hours=3))),
        datetime(5, 6, 7, 8, 9, 10, 11, tzinfo=UTC),  # a year of one digit, zero-padded
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ],
)
def test_the_edges_of_the_calendar_are_written_as_sqlalchemy_writes_them(value: datetime) -> None:
    assert _written(value) == _as_sqlalchemy_writes(value)


@given(st.datetimes(timezones=_ZONES), st.lists(st.integers(0, 999_999), min_size=1, max_size=5))
def test_times_within_one_second_are_each_written_as_sqlalchemy_writes_them(
    value: datetime, microseconds: list[int]
) -> None:
    """The text up to the second is made once a second: each time within it keeps its own
    microseconds (and the examples one after another move between seconds)."""
    for microsecond in microseconds:
        within = value.replace(microsecond=microsecond)
        assert _written(within) == _as_sqlalchemy_writes(within)
    assert _written(value) == _as_sqlalchemy_writes(value)


def test_no_time_is_written_as_null() -> None:
    assert _written(None) is None


def test_a_naive_time_is_refused_not_guessed_at() -> None:
    with pytest.raises(ValueError, match="naive datetime"):
        _written(datetime(2026, 12, 5, 14, 0))
    with pytest.raises(ValueError, match="naive datetime"):
        _as_sqlalchemy_writes(datetime(2026, 12, 5, 14, 0))


def test_a_time_written_in_another_zone_reads_back_as_the_same_instant_in_utc() -> None:
    engine = create_engine("sqlite://")
    times = Table("times", MetaData(), Column("at", UTCDateTime()))
    times.create(engine)
    at = datetime(2026, 12, 5, 23, 30, 1, 5, tzinfo=timezone(timedelta(hours=-7)))
    with engine.begin() as conn:
        conn.execute(insert(times).values(at=at))
        stored = conn.exec_driver_sql("SELECT at FROM times").scalar_one()
        read = conn.execute(select(times.c.at)).scalar_one()
    assert stored == "2026-12-06 06:30:01.000005"
    assert read == at and read.tzinfo is UTC
