"""Signed records (issue 13, part 8). A forged but legal game with its hash chain recomputed
used to pass `boneyard verify`, and the header (names, times, ids) was covered by nothing. The
server now signs every record it gives with a key of its own (Ed25519), kept in its database or
a key file; `boneyard verify --public-key` and VerifyRecord check the signature."""

from __future__ import annotations

import base64
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from archive_helpers import (
    NAMES,
    ArchiveServer,
    application,
    copy,
    play_in_app,
    play_over_grpc,
    random_game,
    rechain,
    record_of,
)
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from boneyard import engine
from boneyard.api.v1 import archive_pb2, archive_pb2_grpc, game_service_pb2_grpc
from boneyard.records.record import (
    GENESIS_HASH,
    canonical_bytes,
    chain_hash,
    dump_record,
    load_record,
)
from boneyard.records.signing import public_key_of, sign_record, signed_bytes
from boneyard.records.verify import verdict_from_proto, verify_record
from boneyard.server.archive.signing import signer_from_database
from boneyard.server.store import EventStore
from boneyard.server.store.models import SigningKeyRow
from tests.server.process_helpers import ServerProcess, clean_env, fresh_pg_database

BIN = Path(sys.executable).parent


def run(*args: str, server: str | None = None) -> subprocess.CompletedProcess[str]:
    env = clean_env(**({"BONEYARD_SERVER": server} if server else {}))
    return subprocess.run(
        [*args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def server_key(server: ArchiveServer) -> bytes:
    response = server.archive.GetSigningKey(archive_pb2.GetSigningKeyRequest(), timeout=30)
    assert response.algorithm == archive_pb2.SIGNATURE_ALGORITHM_ED25519
    return response.public_key


def get_record(server: ArchiveServer, game_id: str) -> archive_pb2.GameRecord:
    request = archive_pb2.GetRecordRequest(game_id=game_id)
    return server.archive.GetRecord(request, timeout=60).record


def verify_served(
    server: ArchiveServer, record: archive_pb2.GameRecord
) -> archive_pb2.VerifyRecordResponse:
    request = archive_pb2.VerifyRecordRequest(record=record)
    return server.archive.VerifyRecord(request, timeout=60)


@pytest.fixture(scope="module")
def signed(archive_server: ArchiveServer, finished: dict[str, str]) -> archive_pb2.GameRecord:
    """The server's record of its finished Texas 42 game: signed by the server."""
    return get_record(archive_server, finished["texas42"])


# ---------------------------------------------------------------- a legitimate record


def test_a_record_the_server_gives_is_signed_and_verifies_with_its_key(
    archive_server: ArchiveServer, signed: archive_pb2.GameRecord
) -> None:
    key = server_key(archive_server)
    assert signed.signature.public_key == key
    verdict = verify_record(signed, public_key=key)
    assert verdict.valid, verdict
    assert verdict.summary is not None and verdict.summary.signing_key == key
    assert "signed by the expected ed25519 key " + base64.b64encode(key).decode() in str(verdict)
    # Either form of the file carries the signature whole.
    for binary in (False, True):
        assert verify_record(load_record(dump_record(signed, binary=binary)), public_key=key).valid
    # The same record and key sign alike every time (Ed25519 is deterministic).
    assert get_record(archive_server, signed.game_id).signature == signed.signature
    served = verify_served(archive_server, signed)
    assert served.valid and served.signed_by == archive_pb2.SIGNED_BY_THIS_SERVER
    assert served.summary.signing_key == key


# ---------------------------------------------------------------- forgeries


def _forged_game(signed: archive_pb2.GameRecord) -> archive_pb2.GameRecord:
    """What a forger who knows the format makes: another legal game, under the header of the
    server's record (its id, names, times), with the seed table and the result made to agree,
    and the whole chain recomputed. Every check but the signature passes."""
    # Under the same rules as the server's game (which gave it its deal limit).
    other = record_of(random_game("texas42", 99, options={"deal_limit": engine.DEAL_LIMIT}))
    forged = copy(signed)
    del forged.events[:]
    forged.events.extend(other.events)
    del forged.hands[:]
    forged.hands.extend(other.hands)
    forged.result.CopyFrom(other.result)
    return rechain(forged)


def test_a_forged_legal_game_with_its_chain_recomputed_fails_with_the_public_key(
    archive_server: ArchiveServer, signed: archive_pb2.GameRecord
) -> None:
    key = server_key(archive_server)
    forged = _forged_game(signed)
    # The signature copied from the server's record does not hold for the forged log.
    verdict = verify_record(forged, public_key=key)
    assert verdict.discrepancy is not None
    assert (verdict.discrepancy.event, verdict.discrepancy.kind) == (0, "signature")
    assert "the header or the log was changed after signing" in verdict.discrepancy.found
    assert not verify_record(forged).valid  # a signature is checked with or without a key

    # The forger strips the signature: unsigned is valid without a key, and nothing with one.
    stripped = copy(forged)
    stripped.ClearField("signature")
    assert verify_record(stripped).valid
    verdict = verify_record(stripped, public_key=key)
    assert verdict.discrepancy is not None and verdict.discrepancy.kind == "signature"
    assert verdict.discrepancy.found == "no signature"

    # The forger signs with a key of their own: it holds, but it is not the server's.
    resigned = copy(forged)
    forger = Ed25519PrivateKey.generate()
    sign_record(resigned, forger)
    assert verify_record(resigned).valid
    verdict = verify_record(resigned, public_key=key)
    assert verdict.discrepancy is not None and verdict.discrepancy.kind == "signature"
    assert base64.b64encode(public_key_of(forger)).decode() in verdict.discrepancy.found
    served = verify_served(archive_server, resigned)
    assert served.valid and served.signed_by == archive_pb2.SIGNED_BY_ANOTHER_KEY
    assert served.stored_copy == archive_pb2.STORED_COPY_DIFFERENT


def _edit_name(r: archive_pb2.GameRecord) -> None:
    r.name = r.name + " (edited)"


def _edit_player(r: archive_pb2.GameRecord) -> None:
    r.seats[1].player_name = "Mallory"


def _edit_create_time(r: archive_pb2.GameRecord) -> None:
    r.create_time.seconds -= 3600


def _edit_finish_time(r: archive_pb2.GameRecord) -> None:
    r.finish_time.nanos = (r.finish_time.nanos + 1) % 1_000_000_000


def _edit_game_id(r: archive_pb2.GameRecord) -> None:
    r.game_id = "00000000-0000-4000-8000-000000000000"


def _drop_finish_time(r: archive_pb2.GameRecord) -> None:
    r.ClearField("finish_time")


@pytest.mark.parametrize(
    "edit",
    [_edit_name, _edit_player, _edit_create_time, _edit_finish_time, _edit_game_id, _drop_finish_time],
    ids=["name", "player_name", "create_time", "finish_time", "game_id", "no_finish_time"],
)
def test_changing_a_header_field_breaks_the_signature(
    archive_server: ArchiveServer, signed: archive_pb2.GameRecord, edit: object
) -> None:
    """None of these fields is in the log: before signatures, no check could see them change."""
    edited = copy(signed)
    edit(edited)  # type: ignore[operator]
    for key in (None, server_key(archive_server)):
        verdict = verify_record(edited, public_key=key)
        assert verdict.discrepancy is not None, verdict
        assert (verdict.discrepancy.event, verdict.discrepancy.kind) == (0, "signature")
    served = verify_served(archive_server, edited)
    assert not served.valid
    assert served.discrepancy.kind == archive_pb2.DISCREPANCY_KIND_SIGNATURE
    assert verdict_from_proto(served) == verify_record(edited)


def test_a_changed_signature_or_one_of_an_unknown_version_fails(
    signed: archive_pb2.GameRecord,
) -> None:
    flipped = copy(signed)
    flipped.signature.signature = bytes([signed.signature.signature[0] ^ 1]) + (
        signed.signature.signature[1:]
    )
    assert verify_record(flipped).discrepancy.kind == "signature"  # type: ignore[union-attr]
    newer = copy(signed)
    newer.signature.version = 2
    verdict = verify_record(newer)
    assert verdict.discrepancy is not None
    assert (verdict.discrepancy.expected, verdict.discrepancy.found) == (
        "signature version 1",
        "signature version 2",
    )
    short = copy(signed)
    short.signature.public_key = b"\x01" * 31
    assert verify_record(short).discrepancy.found == "31 bytes"  # type: ignore[union-attr]


# ---------------------------------------------------------------- records made before


def test_unsigned_old_records_still_verify_reported_as_unsigned(
    archive_server: ArchiveServer, signed: archive_pb2.GameRecord, tmp_path: Path
) -> None:
    old = copy(signed)
    old.ClearField("signature")  # as every record was before records were signed
    verdict = verify_record(old)
    assert verdict.valid and str(verdict).endswith("; unsigned")
    served = verify_served(archive_server, old)
    assert served.valid and served.signed_by == archive_pb2.SIGNED_BY_NOBODY
    assert served.stored_copy == archive_pb2.STORED_COPY_SAME
    path = tmp_path / "old.json"
    path.write_bytes(dump_record(old))
    result = run(str(BIN / "boneyard"), "verify", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("; unsigned")
    # Asked for the server's key, an unsigned record is not enough.
    key = base64.b64encode(server_key(archive_server)).decode()
    result = run(str(BIN / "boneyard"), "verify", str(path), "--public-key", key)
    assert result.returncode == 1
    assert result.stdout.startswith("invalid: record: signature: expected a signature by ")
    assert result.stdout.rstrip().endswith("found no signature")


# ---------------------------------------------------------------- the command line


def test_verify_with_the_public_key_passes_the_servers_records_and_fails_edited_ones(
    archive_server: ArchiveServer, signed: archive_pb2.GameRecord, tmp_path: Path
) -> None:
    key = server_key(archive_server)
    good, edited = tmp_path / "good.json", tmp_path / "edited.bin"
    good.write_bytes(dump_record(signed))
    changed = copy(signed)
    _edit_player(changed)
    edited.write_bytes(dump_record(changed, binary=True))
    key_files = {
        "raw": key,
        "base64": base64.b64encode(key) + b"\n",
        "pem": Ed25519PublicKey.from_public_bytes(key).public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    }
    given = [base64.b64encode(key).decode(), key.hex()]
    for name, data in key_files.items():
        (tmp_path / name).write_bytes(data)
        given.append(str(tmp_path / name))
    for form in given:
        result = run(str(BIN / "boneyard"), "verify", "--public-key", form, str(good), str(edited))
        assert result.returncode == 1, result.stdout + result.stderr
        first, second = result.stdout.splitlines()
        assert first.startswith(f"{good}: valid: ") and "signed by the expected ed25519" in first
        assert second.startswith(f"{edited}: invalid: record: signature: ")
    result = run(str(BIN / "boneyard"), "verify", str(good))
    assert result.returncode == 0
    assert "a key not compared with one you trust" in result.stdout


def test_verify_refuses_a_public_key_that_is_no_key(tmp_path: Path) -> None:
    record = tmp_path / "r.json"
    record.write_bytes(dump_record(record_of(random_game("texas42", 3))))
    result = run(str(BIN / "boneyard"), "verify", "--public-key", "not-a-key", str(record))
    assert result.returncode == 2
    assert "'not-a-key' is not an Ed25519 public key" in result.stderr


def test_the_rpc_returns_the_key_the_commands_print(archive_server: ArchiveServer) -> None:
    key = base64.b64encode(server_key(archive_server)).decode()
    admin = run(
        str(BIN / "boneyard-server"),
        "admin",
        "signing-key",
        "--database-url",
        archive_server.database_url,
    )
    assert admin.returncode == 0, admin.stderr
    assert admin.stdout == key + "\n"
    client = run(str(BIN / "boneyard"), "public-key", "--server", archive_server.address)
    assert client.returncode == 0, client.stderr
    assert client.stdout == key + "\n"


# ---------------------------------------------------------------- where the key is kept


def test_the_signing_key_persists_across_server_restarts(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    log = tmp_path / "server.log"
    keys = []
    for _ in range(2):
        with ServerProcess.start(log, url) as server:
            stub = archive_pb2_grpc.ArchiveServiceStub(server.channel())
            request = archive_pb2.GetSigningKeyRequest()
            keys.append(stub.GetSigningKey(request, timeout=30).public_key)
            assert server.terminate() == 0
    assert keys[0] == keys[1] and len(keys[0]) == 32


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.db'}"
        return
    with fresh_pg_database(request.getfixturevalue("postgres_url"), "boneyard_keys") as url:
        yield url


def test_two_stores_on_one_database_get_one_key(database_url: str) -> None:
    """Two processes starting at once on an empty database each make a key pair; one is kept,
    and both sign with it."""
    stores = [EventStore.open(database_url, migrate=True) for _ in range(2)]
    try:
        start = threading.Barrier(len(stores))
        keys: list[bytes] = []

        def first_start(store: EventStore) -> None:
            start.wait()
            keys.append(signer_from_database(store).public_key)

        threads = [threading.Thread(target=first_start, args=(s,)) for s in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(keys) == 2 and keys[0] == keys[1]
        with stores[0].engine.connect() as conn:
            rows = conn.execute(SigningKeyRow.__table__.select()).all()
        assert [(r.purpose, bytes(r.public_key)) for r in rows] == [("records", keys[0])]
    finally:
        for store in stores:
            store.close()


def _pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _raw(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


@pytest.mark.parametrize("form", [_pem, _raw], ids=["pem", "raw"])
def test_a_key_file_given_with_signing_key_signs_the_records(tmp_path: Path, form: object) -> None:
    private = Ed25519PrivateKey.generate()
    key_file = tmp_path / "signing.key"
    key_file.write_bytes(form(private))  # type: ignore[operator]
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    args = ["--signing-key", str(key_file)]
    with ServerProcess.start(tmp_path / "server.log", url, extra_args=args) as server:
        channel = server.channel()
        stub = archive_pb2_grpc.ArchiveServiceStub(channel)
        served = stub.GetSigningKey(archive_pb2.GetSigningKeyRequest(), timeout=30).public_key
        game_id, _ = play_over_grpc(
            game_service_pb2_grpc.GameServiceStub(channel), "moon", 5, NAMES["moon"]
        )
        record = stub.GetRecord(archive_pb2.GetRecordRequest(game_id=game_id), timeout=60).record
    assert served == public_key_of(private)
    assert verify_record(record, public_key=served).valid
    admin = run(str(BIN / "boneyard-server"), "admin", "signing-key", "--signing-key", str(key_file))
    assert admin.stdout == base64.b64encode(served).decode() + "\n"
    # The database made no key of its own.
    store = EventStore.open(url)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(SigningKeyRow.__table__.select()).all() == []
    finally:
        store.close()


def test_a_key_file_that_holds_no_key_stops_the_server_with_a_clear_error(
    tmp_path: Path,
) -> None:
    key_file = tmp_path / "not-a-key"
    key_file.write_text("hello\n")
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    server = ServerProcess.start(
        tmp_path / "server.log", url, extra_args=["--signing-key", str(key_file)], wait=False
    )
    with server:
        assert server.proc.wait(timeout=60) == 1
    assert (
        f"{key_file}: neither a PEM private key nor 32 raw bytes (6 bytes)" in server.log_text()
    )


# ---------------------------------------------------------------- the signed bytes


def _documented_signed_bytes(record: archive_pb2.GameRecord) -> bytes:
    """The signed bytes exactly as docs/record-format.md spells them out, written again from
    the document (not from boneyard.records.signing), as a checker in another language would."""

    def u32(n: int) -> bytes:
        return struct.pack(">I", n)

    def blob(b: bytes) -> bytes:
        return u32(len(b)) + b

    def time(field: str) -> bytes:
        if not record.HasField(field):  # type: ignore[arg-type]
            return bytes(13)
        stamp = getattr(record, field)
        return b"\x01" + struct.pack(">q", stamp.seconds) + u32(stamp.nanos)

    out = b"boneyard.record.signature.v1\x00" + u32(record.format_version)
    out += blob(record.game_id.encode()) + blob(record.name.encode())
    out += blob(record.rules.SerializeToString(deterministic=True))
    out += u32(len(record.seats))
    for s in record.seats:
        out += u32(s.seat) + blob(s.player_name.encode()) + u32(s.team)
    out += u32(len(record.hands))
    for h in record.hands:
        out += u32(h.number) + blob(h.seed_commitment) + blob(h.seed)
    out += u32(len(record.result.scores))
    out += b"".join(struct.pack(">i", score) for score in record.result.scores)
    out += u32(record.result.winner) + u32(len(record.result.winning_seats))
    out += b"".join(u32(seat) for seat in record.result.winning_seats)
    out += time("create_time") + time("finish_time")
    head = GENESIS_HASH
    for recorded in record.events:
        head = chain_hash(head, canonical_bytes(recorded.event))
    return out + struct.pack(">Q", len(record.events)) + head


def test_the_signature_is_over_the_documented_bytes(signed: archive_pb2.GameRecord) -> None:
    documented = _documented_signed_bytes(signed)
    assert signed_bytes(signed) == documented
    key = Ed25519PublicKey.from_public_bytes(signed.signature.public_key)
    key.verify(signed.signature.signature, documented)  # raises if it does not hold
    assert documented[-32:] == signed.events[-1].hash


def test_the_record_of_the_archive_layer_is_signed_with_the_databases_key(
    tmp_path: Path,
) -> None:
    """The application layer (archive_helpers.application) signs as the server does."""
    with application(tmp_path, seed=4) as (app, archive):
        game_id = play_in_app(app, "texas42", 4)
        record = archive.record(game_id)
        key = signer_from_database(app.store).public_key
    assert verify_record(record, public_key=key).valid


def test_replay_of_a_record_whose_signature_fails_shows_every_move(
    signed: archive_pb2.GameRecord, tmp_path: Path
) -> None:
    """A signature discrepancy is at "event 0", which used to leave nothing to replay."""
    edited = copy(signed)
    _edit_name(edited)
    path = tmp_path / "edited.json"
    path.write_bytes(dump_record(edited))
    result = run(str(BIN / "boneyard"), "replay", str(path), "--all")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "warning: the record does not verify (record: signature: " in result.stderr
    assert f"replaying its first {len(signed.events)} events" in result.stderr
    assert "game over: team" in result.stdout
