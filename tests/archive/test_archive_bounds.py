"""Defects of verifying uploaded records (issue 13, part 1), one test each: a record carrying a
huge option, a record or file of any size, and a verification nobody waits for any more used to
pin `boneyard verify` and `ArchiveService.VerifyRecord`. Each is now refused, or given up,
with a clear verdict or status and nothing changed."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from archive_helpers import ArchiveServer, application, copy, random_game, rechain, record_of

from boneyard.api.v1 import archive_pb2, archive_pb2_grpc
from boneyard.records.record import (
    MAX_GAME_NAME,
    MAX_PLAYER_NAME,
    MAX_RECORD_BYTES,
    MAX_RECORD_EVENTS,
    MAX_RECORD_FILE_BYTES,
    MAX_RECORD_HANDS,
    dump_record,
)
from boneyard.records.verify import MAX_QUOTE, verify_record
from boneyard.server.archive.service import MAX_VERIFY_REQUEST_BYTES
from boneyard.server.errors import DeadlineExceeded
from tests.server.api_helpers import RunningServer
from tests.server.process_helpers import clean_env

BONEYARD = Path(sys.executable).parent / "boneyard"
VERIFY_RECORD = "/boneyard.v1.ArchiveService/VerifyRecord"


@pytest.fixture(scope="module")
def record() -> archive_pb2.GameRecord:
    return record_of(random_game("texas42", 11))


def verify_over_grpc(
    server: ArchiveServer, record: archive_pb2.GameRecord
) -> archive_pb2.VerifyRecordResponse:
    request = archive_pb2.VerifyRecordRequest(record=record)
    return server.archive.VerifyRecord(request, timeout=60)


def refusal(call: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    return caught.value


def verify_files(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BONEYARD), "verify", *map(str, files)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
        check=False,
    )


# ---------------------------------------------------------------- options


def test_a_record_with_a_huge_option_is_refused_at_its_first_event(
    archive_server: ArchiveServer, record: archive_pb2.GameRecord
) -> None:
    """max_opening_marks=1653443733 used to make the verifier enumerate every mark bid."""
    huge = copy(record)
    huge.events[0].event.game_created.rules.max_opening_marks = 1653443733
    huge.rules.max_opening_marks = 1653443733
    rechain(huge)
    offline = verify_record(huge)
    assert offline.discrepancy is not None
    assert (offline.discrepancy.event, offline.discrepancy.kind) == (1, "format")
    assert "max_opening_marks=1653443733 must be 1..7" in offline.discrepancy.found
    served = verify_over_grpc(archive_server, huge)
    assert not served.valid
    assert served.discrepancy.message == str(offline.discrepancy)


# ---------------------------------------------------------------- sizes


def test_a_record_over_the_size_bound_is_refused_before_it_is_parsed(
    archive_server: ArchiveServer,
) -> None:
    # Bytes no parser would take: had the server parsed them, it would say they are no message.
    call = archive_server.process.channel().unary_unary(VERIFY_RECORD)
    error = refusal(lambda: call(b"\xff" * (MAX_VERIFY_REQUEST_BYTES + 1), timeout=60))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error.details()
    assert error.details() == (
        f"the request is {MAX_VERIFY_REQUEST_BYTES + 1} bytes; a VerifyRecord request is at "
        f"most {MAX_VERIFY_REQUEST_BYTES} bytes (refused unread)"
    )


def test_a_record_at_the_size_bound_is_read_and_judged(archive_server: ArchiveServer) -> None:
    """Just within the request's limit, the record is parsed and its own bounds checked."""
    record = archive_pb2.GameRecord(format_version=1)
    record.hands.add(seed=b"\x00" * (MAX_RECORD_BYTES - 10))
    assert record.ByteSize() > MAX_RECORD_BYTES
    assert archive_pb2.VerifyRecordRequest(record=record).ByteSize() <= MAX_VERIFY_REQUEST_BYTES
    error = refusal(lambda: verify_over_grpc(archive_server, record))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"bytes of protobuf; a record has at most {MAX_RECORD_BYTES // 2**20} MiB" in (
        error.details() or ""
    )


def _too_many_events() -> archive_pb2.GameRecord:
    record = archive_pb2.GameRecord(format_version=1)
    for _ in range(MAX_RECORD_EVENTS + 1):
        record.events.add()
    return record


def _too_many_hands() -> archive_pb2.GameRecord:
    record = archive_pb2.GameRecord(format_version=1)
    for number in range(1, MAX_RECORD_HANDS + 2):
        record.hands.add(number=number)
    return record


def _long_name(record: archive_pb2.GameRecord) -> archive_pb2.GameRecord:
    out = copy(record)
    out.name = "n" * (MAX_GAME_NAME + 1)
    return out


def _long_player_name(record: archive_pb2.GameRecord) -> archive_pb2.GameRecord:
    out = copy(record)
    out.seats[2].player_name = "p" * (MAX_PLAYER_NAME + 1)
    return out


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda r: _too_many_events(), f"{MAX_RECORD_EVENTS + 1} events; a record has at most"),
        (lambda r: _too_many_hands(), f"{MAX_RECORD_HANDS + 1} hands; a record has at most"),
        (_long_name, f"a game name of {MAX_GAME_NAME + 1} characters"),
        (_long_player_name, f"a player name of {MAX_PLAYER_NAME + 1} characters (seat 2)"),
    ],
    ids=["events", "hands", "name", "player_name"],
)
def test_a_record_over_a_count_bound_is_refused_before_any_check(
    archive_server: ArchiveServer, record: archive_pb2.GameRecord, make: object, says: str
) -> None:
    over = make(record)  # type: ignore[operator]
    error = refusal(lambda: verify_over_grpc(archive_server, over))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert says in (error.details() or "")
    offline = verify_record(over)
    assert offline.discrepancy is not None
    assert (offline.discrepancy.event, offline.discrepancy.kind) == (0, "format")
    assert says in offline.discrepancy.found


def test_a_record_file_over_the_size_bound_is_refused_without_being_read_whole(
    tmp_path: Path, record: archive_pb2.GameRecord
) -> None:
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as file:  # sparse: the bound and one byte more, of nothing
        file.write(b"{")
        file.truncate(MAX_RECORD_FILE_BYTES + 1)
    binary = tmp_path / "big.bin"
    binary.write_bytes(dump_record(record, binary=True) + b"\x00" * MAX_RECORD_BYTES)
    good = tmp_path / "good.json"
    good.write_bytes(dump_record(record))
    result = verify_files(huge, binary, good)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"{huge}: invalid: record: format: expected a record within the bounds; found a file of "
        f"more than {MAX_RECORD_FILE_BYTES} bytes; a record file is at most 16 MiB"
    )
    assert lines[1].startswith(
        f"{binary}: invalid: record: format: expected a record within the bounds; found "
        f"{binary.stat().st_size} bytes of protobuf; a record has at most 4 MiB"
    )
    assert lines[2].startswith(f"{good}: valid: "), lines


def test_a_discrepancy_quotes_at_most_a_short_prefix_of_the_record(
    archive_server: ArchiveServer, record: archive_pb2.GameRecord
) -> None:
    """A seed of a megabyte in the seed table used to come back whole, twice, in hex."""
    edited = copy(record)
    edited.hands[0].seed = b"\x07" * 1_000_000
    verdict = verify_record(edited)
    assert verdict.discrepancy is not None and verdict.discrepancy.kind == "seed"
    assert len(verdict.discrepancy.found) <= MAX_QUOTE
    assert verdict.discrepancy.found.endswith("characters in all)")
    served = verify_over_grpc(archive_server, edited)
    assert served.discrepancy.found == verdict.discrepancy.found


# ---------------------------------------------------------------- time


def test_verifying_stops_once_the_clients_deadline_has_passed(
    tmp_path: Path, record: archive_pb2.GameRecord
) -> None:
    """The worker thread of a VerifyRecord whose client had gone used to verify on to the end."""
    with application(tmp_path) as (_, archive):
        with pytest.raises(DeadlineExceeded, match="the client's deadline passed"):
            archive.verify(record, deadline=time.monotonic())
        with pytest.raises(DeadlineExceeded, match="the call was cancelled"):
            archive.verify(record, cancelled=lambda: True)
        # With time to spare it answers.
        assert archive.verify(record, deadline=time.monotonic() + 600).valid


@pytest.fixture
def impatient_server(tmp_path: Path) -> Iterator[RunningServer]:
    """A server whose limit on one verification is 0 s: every verification is over it."""
    server = RunningServer(f"sqlite:///{tmp_path / 'impatient.db'}", verify_seconds=0.0)
    try:
        yield server
    finally:
        server.close()


def test_verifying_stops_at_the_servers_time_limit(
    impatient_server: RunningServer, record: archive_pb2.GameRecord
) -> None:
    with grpc.insecure_channel(impatient_server.address) as channel:
        stub = archive_pb2_grpc.ArchiveServiceStub(channel)
        request = archive_pb2.VerifyRecordRequest(record=record)
        error = refusal(lambda: stub.VerifyRecord(request, timeout=60))
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert error.details() == (
        "VerifyRecord gave up: verifying took longer than this server's limit of 0 s "
        f"(stopped at event 1 of {len(record.events)})"
    )
