"""The record format, in-process: a record of every preset, made by the server's archive from a
real SQLite store, verifies; its hashes are the store's; JSON and protobuf carry one record; a
game not over has no record; and no input makes the verifier fail other than with a verdict."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from archive_helpers import application, copy, play_in_app, random_game, rechain, record_of
from google.protobuf import json_format
from sqlalchemy import update

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import archive_pb2, events_pb2
from boneyard.records.hashing import chain_hash as store_chain_hash
from boneyard.records.record import (
    FORMAT_VERSION,
    GENESIS_HASH,
    GameNotOver,
    MalformedRecord,
    build_record,
    canonical_bytes,
    chain_hash,
    dump_record,
    load_record,
    record_from_json,
    record_to_json,
    stored_log,
)
from boneyard.records.verify import Verdict, verify_bytes, verify_record
from boneyard.server.errors import PreconditionFailed
from boneyard.server.store.models import HandSeedRow
from tests.server.process_helpers import fresh_pg_database

PRESETS = engine.preset_names()


@pytest.mark.parametrize("preset", PRESETS)
def test_a_record_of_every_preset_made_by_the_server_verifies(tmp_path: Path, preset: str) -> None:
    with application(tmp_path, seed=len(preset)) as (app, archive):
        game_id = play_in_app(app, preset, seed=11)
        record = archive.record(game_id)
        stored = app.store.load_events(game_id)
        state, version = app.load(game_id)

    verdict = verify_record(record)
    assert verdict.valid, verdict
    assert verdict.summary is not None
    assert verdict.summary.events == version == len(record.events)
    assert verdict.summary.scores == state.scores
    assert verdict.summary.winner == state.winner
    assert verdict.summary.rules == state.rules
    # The record's hash chain is the database's, event for event.
    assert [(r.event.seq, r.hash) for r in record.events] == [(s.seq, s.hash) for s in stored]
    assert [canonical_bytes(r.event) for r in record.events] == [s.payload for s in stored]
    assert verdict.summary.head_hash == stored[-1].hash
    # The header: the complete ruleset, who sat where, every seed (revealed), the result.
    assert record.format_version == FORMAT_VERSION
    assert record.rules == codec.rules_to_proto(state.rules)
    assert [(s.seat, s.player_name) for s in record.seats] == [
        (seat, f"Player {seat}") for seat in range(state.rules.players)
    ]
    dealt = [
        e for e in (codec.decode_event(s.payload) for s in stored) if type(e) is engine.HandDealt
    ]
    assert [(h.number, h.seed) for h in record.hands] == [(e.number, e.seed) for e in dealt]
    for hand in record.hands:
        assert hand.seed_commitment == hashlib.sha256(hand.seed).digest()
    assert list(record.result.scores) == list(state.scores)
    assert record.result.winner == state.winner


@pytest.mark.parametrize("preset", PRESETS)
def test_json_and_protobuf_carry_the_same_record(preset: str) -> None:
    record = record_of(random_game(preset, seed=3))
    text = record_to_json(record)
    assert record_from_json(text) == record
    assert load_record(text.encode()) == record
    assert load_record(dump_record(record, binary=True)) == record
    # protobuf's own JSON mapping reads it too, and its hashes hold after the round trip.
    parsed = archive_pb2.GameRecord()
    json_format.Parse(text, parsed)
    assert parsed.SerializeToString(deterministic=True) == record.SerializeToString(
        deterministic=True
    )
    assert verify_bytes(text.encode()).valid
    assert verify_bytes(dump_record(record, binary=True)).valid


def test_the_chain_is_the_stores_chain() -> None:
    events = random_game("texas42", seed=5)
    prev = GENESIS_HASH
    for row, event in zip(stored_log(events), events, strict=True):
        _, payload = codec.encode_event(event)
        assert row.payload == payload == canonical_bytes(codec.event_to_proto(event, row.seq))
        assert row.hash == chain_hash(prev, payload) == store_chain_hash(prev, payload)
        prev = row.hash


@pytest.mark.parametrize("seq", [0, 1, 127, 128, 300, 16383, 16384, 2**35, 2**64 - 1])
def test_the_bytes_hashed_are_the_event_with_seq_zero_whatever_its_number(seq: int) -> None:
    # canonical_bytes cuts seq's field off the serialization instead of copying the message:
    # the same bytes as clearing it, for every length of number, and with unknown fields.
    unknown = b"\xf8\x07\x05"  # field 127, a varint: a field some later version might add
    for event in random_game("moon", seed=3)[:40]:
        message = codec.event_to_proto(event, seq)
        with_unknown = events_pb2.Event.FromString(message.SerializeToString() + unknown)
        for m in (message, with_unknown):
            cleared = events_pb2.Event()
            cleared.CopyFrom(m)
            cleared.seq = 0
            assert canonical_bytes(m) == cleared.SerializeToString(deterministic=True)


def test_a_game_not_over_has_no_record(tmp_path: Path) -> None:
    with application(tmp_path) as (app, archive):
        game_id = play_in_app(app, "texas42", seed=1, moves=12)
        with pytest.raises(PreconditionFailed, match="not over.*hidden tiles"):
            archive.record(game_id)
        stored = app.store.load_events(game_id)
    with pytest.raises(GameNotOver):
        build_record(game_id, stored)


def test_seeds_a_crash_left_secret_are_revealed_when_the_record_is_made(tmp_path: Path) -> None:
    """The server reveals a game's seeds after its last append: a kill -9 in between leaves a
    finished game with secret seeds, which the archive reveals (the game is over)."""
    with application(tmp_path) as (app, archive):
        game_id = play_in_app(app, "moon", seed=2)
        with app.store.engine.begin() as conn:
            conn.execute(update(HandSeedRow).values(revealed=False))
        assert not app.store.get_seed(game_id, 1).revealed  # type: ignore[union-attr]
        record = archive.record(game_id)
        assert verify_record(record).valid
        assert all(app.store.get_seed(game_id, h.number).revealed for h in record.hands)  # type: ignore[union-attr]


def test_an_unknown_format_version_is_refused() -> None:
    record = record_of(random_game("moon", seed=1))
    record.format_version = 2
    verdict = verify_record(record)
    assert verdict.discrepancy is not None
    assert (verdict.discrepancy.event, verdict.discrepancy.kind) == (0, "format")
    assert "format version 1" in verdict.discrepancy.expected
    assert "format version 2" in verdict.discrepancy.found


def test_an_empty_record_is_not_a_game() -> None:
    verdict = verify_record(archive_pb2.GameRecord(format_version=FORMAT_VERSION))
    assert verdict.discrepancy is not None
    assert (verdict.discrepancy.event, verdict.discrepancy.kind) == (1, "format")


def test_bytes_that_are_no_record_are_a_format_discrepancy() -> None:
    for junk in (b"\xff\xff\xff", b"{not json", b'{"formatVersion": "x"}'):
        verdict = verify_bytes(junk)
        assert verdict.discrepancy is not None and verdict.discrepancy.kind == "format", junk
        with pytest.raises(MalformedRecord):
            load_record(junk)


def test_a_record_cut_short_and_rechained_is_a_game_not_over() -> None:
    record = record_of(random_game("texas42", seed=8))
    count = len(record.events)
    short = copy(record)
    del short.events[count - 40 :]
    verdict = verify_record(rechain(short))
    assert verdict.discrepancy is not None
    assert verdict.discrepancy.event == count - 40 + 1
    assert verdict.discrepancy.kind in ("outcome", "event", "score")
    assert verdict.discrepancy.found == "the end of the record"


def test_the_summary_is_one_line_naming_the_game() -> None:
    record = record_of(
        random_game("texas42", seed=9), game_id="4f9e1b4e-0000-4000-8000-000000000000"
    )
    verdict = verify_record(record)
    text = str(verdict)
    assert "\n" not in text
    assert text.startswith("valid: game 4f9e1b4e-0000-4000-8000-000000000000 (texas42, 4 players)")
    assert "marks" in text and "won" in text


@pytest.mark.parametrize("preset", ["texas42", "moon-s1"])
def test_random_damage_never_makes_the_verifier_fail_other_than_with_a_verdict(preset: str) -> None:
    """Byte flips, truncations and splices of a record's bytes: every one is read as a record
    with a discrepancy, or as no record (a format discrepancy); none raises."""
    data = dump_record(record_of(random_game(preset, seed=4)), binary=True)
    rng = random.Random(preset)
    outcomes: dict[str, int] = {}
    for _ in range(300):
        damaged = bytearray(data)
        how = rng.randrange(3)
        if how == 0:
            for _ in range(rng.randint(1, 3)):
                damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        elif how == 1:
            del damaged[rng.randrange(len(damaged)) :]
        else:
            at = rng.randrange(len(damaged))
            damaged[at:at] = damaged[rng.randrange(len(damaged)) :][: rng.randint(1, 40)]
        verdict = verify_bytes(bytes(damaged))
        assert isinstance(verdict, Verdict)
        if bytes(damaged) != data:
            kind = verdict.discrepancy.kind if verdict.discrepancy else "valid"
            outcomes[kind] = outcomes.get(kind, 0) + 1
    # A flip may land in the header's unhashed text (a player's name) and change nothing the
    # verifier checks; everything else is found.
    assert outcomes.get("valid", 0) < 30, outcomes


def _scalar_fields(message: object) -> list[tuple[object, str]]:
    """Every (message, field name) of scalar fields set in an event, nested messages included."""
    found: list[tuple[object, str]] = []
    for field, value in message.ListFields():  # type: ignore[attr-defined]
        if field.message_type is not None:
            values = value if field.is_repeated else [value]
            for inner in values:
                found += _scalar_fields(inner)
        else:
            found.append((message, field.name))
    return found


@pytest.mark.parametrize("preset", ["texas42-house", "moon"])
def test_random_field_edits_by_a_forger_never_crash_the_verifier(preset: str) -> None:
    """Any field of any event set to another value, the chain recomputed: the verifier always
    answers with a verdict, and every record whose log is not the original's is invalid."""
    record = record_of(random_game(preset, seed=6))
    original = [canonical_bytes(r.event) for r in record.events]
    rng = random.Random(preset)
    invalid = 0
    for _ in range(300):
        forged = copy(record)
        recorded = forged.events[rng.randrange(len(forged.events))]
        fields = _scalar_fields(recorded.event)
        if not fields:
            continue
        message, name = rng.choice(fields)
        value = getattr(message, name)
        field = message.DESCRIPTOR.fields_by_name[name]  # type: ignore[attr-defined]
        if field.is_repeated:
            if not value:
                continue
            i = rng.randrange(len(value))
            value[i] = type(value[i])(rng.randrange(0, 40))
        elif isinstance(value, bytes):
            setattr(message, name, rng.randbytes(rng.choice((0, 1, 32))))
        elif isinstance(value, bool):
            setattr(message, name, not value)
        elif isinstance(value, int):
            low = -5 if field.cpp_type in (field.CPPTYPE_INT32, field.CPPTYPE_INT64) else 0
            setattr(message, name, rng.randrange(low, 40))
        elif isinstance(value, str):
            setattr(message, name, rng.choice(["", "moon", "texas42-house", "nonsense"]))
        verdict = verify_record(rechain(forged))
        if [canonical_bytes(r.event) for r in forged.events] == original:
            assert verdict.valid  # the edit set a value to what it was
        else:
            assert not verdict.valid
            invalid += 1
    assert invalid > 150


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database of each backend (PostgreSQL when BONEYARD_TEST_DATABASE_URL is set)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'archive.db'}"
        return
    with fresh_pg_database(request.getfixturevalue("postgres_url"), "boneyard_archive") as url:
        yield url


def test_the_archive_lists_and_records_finished_games_on_each_backend(
    tmp_path: Path, database_url: str
) -> None:
    with application(tmp_path, seed=4, url=database_url) as (app, archive):
        texas = play_in_app(app, "texas42", seed=1)
        moon = play_in_app(app, "moon", seed=2)
        unfinished = play_in_app(app, "texas42", seed=3, moves=5)
        games, token = archive.list_finished()
        assert [g.game_id for g in games] == [moon, texas] and token == ""
        assert unfinished not in {g.game_id for g in games}
        assert [g.game_id for g in archive.list_finished(preset="moon")[0]] == [moon]
        assert [g.game_id for g in archive.list_finished(player_name="player 2")[0]] == [
            moon,
            texas,
        ]
        assert [g.game_id for g in archive.list_finished(player_name="PLAYER 3")[0]] == [texas]
        first, token = archive.list_finished(page_size=1)
        second, last = archive.list_finished(page_size=1, page_token=token)
        assert [g.game_id for g in first + second] == [moon, texas] and last == ""
        finished_at = games[0].finish_time
        assert archive.list_finished(finished_after=finished_at)[0][0].game_id == moon
        assert [g.game_id for g in archive.list_finished(finished_before=finished_at)[0]] == [texas]
        for game in games:
            record = archive.record(game.game_id)
            assert verify_record(record).valid
            assert record.events[-1].hash == game.head_hash
            assert archive.verify(record).stored_copy == archive_pb2.STORED_COPY_SAME
            assert list(record.result.scores) == list(game.scores)
        with pytest.raises(PreconditionFailed):
            archive.record(unfinished)
