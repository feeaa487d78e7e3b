"""ArchiveService on a real ``boneyard-server`` process, over gRPC: records of games played on
it verify and carry the database's hashes; only finished games are listed and fetched; the
listing's filters and pages; VerifyRecord's verdict and stored copy; health and reflection."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from archive_helpers import (
    NAMES,
    ArchiveServer,
    copy,
    play_over_grpc,
    random_game,
    rechain,
    record_of,
)
from grpc_health.v1 import health_pb2

from boneyard.api.v1 import archive_pb2, game_service_pb2
from boneyard.records.record import canonical_bytes, dump_record, load_record
from boneyard.records.verify import verify_record
from boneyard.server.store import EventStore
from tests.server.process_helpers import GRPCURL, create_game, play_one, seat_all

RECORD_PRESETS = ("texas42", "moon")


def get_record(server: ArchiveServer, game_id: str) -> archive_pb2.GameRecord:
    request = archive_pb2.GetRecordRequest(game_id=game_id)
    return server.archive.GetRecord(request, timeout=60).record


def list_games(server: ArchiveServer, **filters: object) -> list[archive_pb2.ArchivedGame]:
    """Every page of ListArchivedGames with these filters."""
    request = archive_pb2.ListArchivedGamesRequest(**filters)  # type: ignore[arg-type]
    games: list[archive_pb2.ArchivedGame] = []
    while True:
        page = server.archive.ListArchivedGames(request, timeout=60)
        games += page.games
        if not page.next_page_token:
            return games
        request.page_token = page.next_page_token


def status_of(call: object) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as info:
        call()  # type: ignore[operator]
    return info.value.code()  # type: ignore[no-any-return]


# ---------------------------------------------------------------- records


@pytest.mark.parametrize("preset", RECORD_PRESETS)
def test_the_record_of_a_game_played_over_grpc_verifies(
    archive_server: ArchiveServer, finished: dict[str, str], preset: str
) -> None:
    game_id = finished[preset]
    record = get_record(archive_server, game_id)
    verdict = verify_record(record)
    assert verdict.valid, verdict
    summary = archive_server.games.GetGame(
        game_service_pb2.GetGameRequest(game_id=game_id), timeout=30
    ).game
    assert verdict.summary is not None
    assert verdict.summary.game_id == game_id
    assert verdict.summary.events == summary.version == len(record.events)
    assert list(verdict.summary.scores) == list(summary.scores)
    assert verdict.summary.winner == summary.winner
    assert record.rules == summary.rules
    assert [s.player_name for s in record.seats] == NAMES[preset]
    assert record.create_time == summary.create_time
    # The JSON and binary forms carry it whole.
    assert load_record(dump_record(record)) == record
    assert load_record(dump_record(record, binary=True)) == record


@pytest.mark.parametrize("preset", RECORD_PRESETS)
def test_the_records_hashes_are_the_databases(
    archive_server: ArchiveServer, finished: dict[str, str], preset: str
) -> None:
    game_id = finished[preset]
    record = get_record(archive_server, game_id)
    store = EventStore.open(archive_server.database_url)
    try:
        stored = store.load_events(game_id)
        assert store.verify_chain(game_id) == len(stored)
        seeds = [store.get_seed(game_id, h.number) for h in record.hands]
    finally:
        store.close()
    assert [(r.event.seq, r.hash) for r in record.events] == [(s.seq, s.hash) for s in stored]
    assert [canonical_bytes(r.event) for r in record.events] == [s.payload for s in stored]
    # The seeds are the ones the server drew, revealed now that the game is over.
    for hand, seed in zip(record.hands, seeds, strict=True):
        assert seed is not None and seed.revealed
        assert (hand.seed, hand.seed_commitment) == (seed.seed, seed.commitment)


def test_a_game_not_over_has_no_record(archive_server: ArchiveServer) -> None:
    stub = archive_server.games
    game_id = create_game(stub, "texas42", name="still playing")
    tokens = seat_all(stub, game_id)
    for _ in range(10):
        play_one(stub, game_id, tokens)
    with pytest.raises(grpc.RpcError) as info:
        get_record(archive_server, game_id)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "hidden tiles" in (info.value.details() or "")
    assert game_id not in {g.game_id for g in list_games(archive_server)}


def test_get_record_refuses_unknown_and_malformed_ids(archive_server: ArchiveServer) -> None:
    unknown = "00000000-0000-4000-8000-000000000000"
    assert status_of(lambda: get_record(archive_server, unknown)) == grpc.StatusCode.NOT_FOUND
    assert status_of(lambda: get_record(archive_server, "no-such-id")) == (
        grpc.StatusCode.INVALID_ARGUMENT
    )


# ---------------------------------------------------------------- the listing


def test_the_listing_has_the_finished_games_with_their_head_hashes(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    listed = {g.game_id: g for g in list_games(archive_server)}
    for preset, game_id in finished.items():
        game = listed[game_id]
        record = get_record(archive_server, game_id)
        assert game.head_hash == record.events[-1].hash
        assert game.events == len(record.events)
        assert list(game.scores) == list(record.result.scores)
        assert game.winner == record.result.winner
        assert game.rules.preset == preset
        assert [s.player_name for s in game.seats] == NAMES[preset]
        assert game.finish_time == record.finish_time
    finish_times = [g.finish_time.ToDatetime() for g in listed.values()]
    assert finish_times == sorted(finish_times, reverse=True), "most recently finished first"


def test_the_listing_filters_by_preset_player_and_date(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    texas, moon = finished["texas42"], finished["moon"]
    by_preset = {g.game_id for g in list_games(archive_server, preset="moon")}
    assert moon in by_preset and texas not in by_preset
    assert all(g.rules.preset == "moon" for g in list_games(archive_server, preset="moon"))
    assert list_games(archive_server, preset="texas42-points") == [] or all(
        g.rules.preset == "texas42-points"
        for g in list_games(archive_server, preset="texas42-points")
    )

    # A player's name, without regard to case; any seat.
    assert {g.game_id for g in list_games(archive_server, player_name="carol")} == {texas}
    assert {g.game_id for g in list_games(archive_server, player_name="GRACE")} == {moon}
    assert list_games(archive_server, player_name="Nobody At All") == []
    assert {
        g.game_id for g in list_games(archive_server, player_name="Erin", preset="texas42")
    } == set()

    # The date range: [finished_after, finished_before).
    record = get_record(archive_server, moon)
    finished_at = record.finish_time.ToDatetime(tzinfo=UTC)
    second = timedelta(seconds=1)

    def window(after: datetime | None, before: datetime | None) -> set[str]:
        request: dict[str, object] = {}
        if after is not None:
            request["finished_after"] = _timestamp(after)
        if before is not None:
            request["finished_before"] = _timestamp(before)
        return {g.game_id for g in list_games(archive_server, **request)}

    assert moon in window(finished_at, finished_at + second)
    assert moon in window(finished_at - second, None)
    assert moon not in window(finished_at + second, None)
    assert moon not in window(None, finished_at)
    assert moon in window(None, finished_at + second)
    future = datetime.now(UTC) + timedelta(days=1)
    assert window(future, None) == set()


def _timestamp(moment: datetime) -> object:
    from google.protobuf.timestamp_pb2 import Timestamp

    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def test_the_listing_pages_through_every_game_once(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    for seed in range(3):
        play_over_grpc(archive_server.games, "texas42", seed=20 + seed, name="for paging")
    everything = [g.game_id for g in list_games(archive_server)]
    assert len(everything) >= 5
    paged = [g.game_id for g in list_games(archive_server, page_size=2)]
    assert paged == everything
    assert len(set(paged)) == len(paged)
    first = archive_server.archive.ListArchivedGames(
        archive_pb2.ListArchivedGamesRequest(page_size=1), timeout=30
    )
    assert len(first.games) == 1 and first.next_page_token


def test_the_listing_refuses_a_bad_page_token_and_page_size(archive_server: ArchiveServer) -> None:
    def listing(**fields: object) -> object:
        return archive_server.archive.ListArchivedGames(
            archive_pb2.ListArchivedGamesRequest(**fields),
            timeout=30,  # type: ignore[arg-type]
        )

    assert status_of(lambda: listing(page_token="not a token")) == grpc.StatusCode.INVALID_ARGUMENT
    assert status_of(lambda: listing(page_size=-1)) == grpc.StatusCode.INVALID_ARGUMENT


# ---------------------------------------------------------------- VerifyRecord


def test_verify_record_of_a_stored_game_says_valid_and_same(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    record = get_record(archive_server, finished["texas42"])
    response = archive_server.archive.VerifyRecord(
        archive_pb2.VerifyRecordRequest(record=record), timeout=60
    )
    assert response.valid
    assert response.stored_copy == archive_pb2.STORED_COPY_SAME
    assert response.summary.game_id == record.game_id
    assert response.summary.head_hash == record.events[-1].hash
    assert not response.HasField("discrepancy")


def test_a_legal_forgery_verifies_but_is_not_the_servers_copy(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    """Another whole game under this game's id, its chain computed: every check passes, but
    the server holds another log, and says so."""
    real = get_record(archive_server, finished["texas42"])
    forged = record_of(random_game("texas42", seed=99), game_id=real.game_id)
    response = archive_server.archive.VerifyRecord(
        archive_pb2.VerifyRecordRequest(record=forged), timeout=60
    )
    assert response.valid
    assert response.stored_copy == archive_pb2.STORED_COPY_DIFFERENT


def test_verify_record_reports_the_first_discrepancy(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    record = get_record(archive_server, finished["moon"])
    bad = copy(record)
    at = next(i for i, r in enumerate(bad.events, 1) if r.event.WhichOneof("kind") == "hand_scored")
    bad.events[at - 1].event.hand_scored.scores[0] += 3
    for edited, kind in (
        (bad, "DISCREPANCY_KIND_HASH_CHAIN"),
        (rechain(copy(bad)), "DISCREPANCY_KIND_SCORE"),
    ):
        response = archive_server.archive.VerifyRecord(
            archive_pb2.VerifyRecordRequest(record=edited), timeout=60
        )
        assert not response.valid
        assert response.discrepancy.event == at
        assert archive_pb2.DiscrepancyKind.Name(response.discrepancy.kind) == kind
        assert response.discrepancy.message.startswith(f"event {at}: ")
        assert response.stored_copy == archive_pb2.STORED_COPY_DIFFERENT
        assert not response.HasField("summary")


def test_verify_record_needs_a_record(archive_server: ArchiveServer) -> None:
    assert (
        status_of(
            lambda: archive_server.archive.VerifyRecord(
                archive_pb2.VerifyRecordRequest(), timeout=30
            )
        )
        == grpc.StatusCode.INVALID_ARGUMENT
    )


# ---------------------------------------------------------------- the service


def test_the_archive_service_is_healthy_and_reflected(archive_server: ArchiveServer) -> None:
    status = archive_server.process.health("boneyard.v1.ArchiveService")
    assert status == health_pb2.HealthCheckResponse.SERVING
    listed = subprocess.run(
        [str(GRPCURL), "-plaintext", archive_server.address, "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "boneyard.v1.ArchiveService" in listed.stdout.split()
    described = subprocess.run(
        [
            str(GRPCURL),
            "-plaintext",
            archive_server.address,
            "describe",
            "boneyard.v1.ArchiveService",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for rpc in ("ListArchivedGames", "GetRecord", "VerifyRecord"):
        assert rpc in described.stdout
