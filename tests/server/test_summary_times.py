"""A game summary's times are what protobuf's ``Timestamp.FromDatetime`` makes of them: the
summary sets them by one subtraction from the epoch (``service._set_time``), for every time
the store can hold, in any zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import given
from hypothesis import strategies as st

from boneyard.server.games.service import _set_time

_ZONES = st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-14 * 60, 14 * 60)
)


@given(
    st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=_ZONES)
)
def test_a_summary_time_is_protobufs_timestamp_of_it(at: datetime) -> None:
    expected, made = Timestamp(), Timestamp()
    expected.FromDatetime(at)
    _set_time(made, at)
    assert made == expected


def test_a_time_before_the_epoch_counts_back_from_it() -> None:
    made = Timestamp()
    _set_time(made, datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC))
    assert (made.seconds, made.nanos) == (-1, 500_000_000)


def test_a_naive_time_is_read_as_utc_as_protobuf_reads_it() -> None:
    expected, made = Timestamp(), Timestamp()
    at = datetime(2026, 12, 6, 19, 30, 1, 250)
    expected.FromDatetime(at)
    _set_time(made, at)
    assert made == expected
