"""A game whose server was killed (kill -9) and restarted in the middle has a record like any
other: it verifies offline, and its hashes are the database's."""

from __future__ import annotations

import random
from pathlib import Path

from archive_helpers import choose_action

from boneyard.api.v1 import archive_pb2, archive_pb2_grpc
from boneyard.records.record import canonical_bytes, dump_record
from boneyard.records.verify import verify_bytes, verify_record
from boneyard.server.store import EventStore
from tests.server.process_helpers import ServerProcess, create_game, play_one, seat_all


def test_a_game_across_a_kill_9_and_restart_has_a_record_that_verifies(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    log = tmp_path / "server.log"
    choose = choose_action(random.Random(3))
    with ServerProcess.start(log, url) as server:
        stub = server.stub()
        game_id = create_game(stub, "texas42", name="across a restart")
        tokens = seat_all(stub, game_id)
        for _ in range(60):  # a hand or two
            assert play_one(stub, game_id, tokens, choose) is not None
        server.kill()
    assert server.proc.returncode == -9

    with ServerProcess.start(log, url) as server:
        stub = server.stub()
        archive = archive_pb2_grpc.ArchiveServiceStub(server.channel())
        while play_one(stub, game_id, tokens, choose) is not None:
            pass
        record = archive.GetRecord(archive_pb2.GetRecordRequest(game_id=game_id), timeout=60).record
        response = archive.VerifyRecord(archive_pb2.VerifyRecordRequest(record=record), timeout=60)

    verdict = verify_record(record)
    assert verdict.valid, verdict
    assert verify_bytes(dump_record(record)).valid
    assert response.valid and response.stored_copy == archive_pb2.STORED_COPY_SAME
    assert verdict.summary is not None and verdict.summary.hands >= 3
    store = EventStore.open(url)
    try:
        stored = store.load_events(game_id)
    finally:
        store.close()
    assert [(r.event.seq, r.hash) for r in record.events] == [(s.seq, s.hash) for s in stored]
    assert [canonical_bytes(r.event) for r in record.events] == [s.payload for s in stored]
