"""What the archive gives a person to keep and to compare: ``ExportRecord`` (a finished game's
record as the very file ``boneyard export`` writes, JSON or the text notation), the listing's
winners, and one fingerprint of the signing key, the same from the RPC, the commands and a
verdict. Against the session's real server over gRPC, the commands as processes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from archive_helpers import NAMES, ArchiveServer

from boneyard.api.v1 import archive_pb2
from boneyard.records.notation import record_to_text, text_to_record
from boneyard.records.record import dump_record, load_record
from boneyard.records.signing import FINGERPRINT_DIGITS, key_fingerprint, key_text
from boneyard.records.verify import verify_record
from tests.server.process_helpers import clean_env, create_game, play_one, seat_all

BIN = Path(sys.executable).parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*args], capture_output=True, text=True, env=clean_env(), timeout=120, check=False
    )


def get_record(server: ArchiveServer, game_id: str) -> archive_pb2.GameRecord:
    request = archive_pb2.GetRecordRequest(game_id=game_id)
    return server.archive.GetRecord(request, timeout=60).record


def export(
    server: ArchiveServer, game_id: str, form: int = 0, site: str = ""
) -> archive_pb2.ExportRecordResponse:
    request = archive_pb2.ExportRecordRequest(game_id=game_id, format=form, site=site)  # type: ignore[arg-type]
    return server.archive.ExportRecord(request, timeout=60)


def refusal(call: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()  # type: ignore[operator]
    return info.value


# ---------------------------------------------------------------- ExportRecord


@pytest.mark.parametrize("preset", ["texas42", "moon"])
def test_the_exported_json_is_the_file_boneyard_export_writes_and_verifies(
    archive_server: ArchiveServer, finished: dict[str, str], preset: str, tmp_path: Path
) -> None:
    game_id = finished[preset]
    record = get_record(archive_server, game_id)
    for form in (archive_pb2.RECORD_FILE_FORMAT_JSON, archive_pb2.RECORD_FILE_FORMAT_UNSPECIFIED):
        answer = export(archive_server, game_id, form)
        assert answer.file_name == f"boneyard-{game_id}.json"
        assert answer.media_type == "application/json"
        assert answer.content.encode() == dump_record(record)
    cli = tmp_path / "cli.json"
    exported = run(
        str(BIN / "boneyard"), "export", game_id, "-o", str(cli), "--server", archive_server.address
    )
    assert exported.returncode == 0, exported.stderr
    assert cli.read_text() == answer.content
    downloaded = tmp_path / answer.file_name
    downloaded.write_text(answer.content)
    verified = run(str(BIN / "boneyard"), "verify", str(downloaded))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith(f"valid: game {game_id} ")
    assert verify_record(load_record(downloaded.read_bytes())).valid


@pytest.mark.parametrize("preset", ["texas42", "moon"])
def test_the_exported_text_is_the_notation_boneyard_export_writes(
    archive_server: ArchiveServer, finished: dict[str, str], preset: str
) -> None:
    game_id = finished[preset]
    site = archive_server.address
    answer = export(archive_server, game_id, archive_pb2.RECORD_FILE_FORMAT_TEXT, site)
    assert answer.file_name == f"boneyard-{game_id}.txt"
    assert answer.media_type == "text/plain; charset=utf-8"
    record = get_record(archive_server, game_id)
    assert answer.content == record_to_text(record, site=site)
    assert f'[Site "{site}"]' in answer.content
    for name in NAMES[preset]:
        assert f'"{name}"]' in answer.content
    cli = run(
        str(BIN / "boneyard"),
        *("export", game_id, "--format", "text", "--server", archive_server.address),
    )
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == answer.content
    # Read back, the text is the record, signature and all.
    back = text_to_record(answer.content)
    assert back.events == record.events and back.signature == record.signature
    assert verify_record(back, public_key=record.signature.public_key).valid
    assert (
        "[Site" not in export(archive_server, game_id, archive_pb2.RECORD_FILE_FORMAT_TEXT).content
    )


def test_export_record_is_refused_as_get_record_is_and_for_bad_options(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    stub = archive_server.games
    playing = create_game(stub, "texas42", name="still playing")
    tokens = seat_all(stub, playing)
    for _ in range(5):
        play_one(stub, playing, tokens)
    not_over = refusal(lambda: export(archive_server, playing))
    assert not_over.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "hidden tiles" in (not_over.details() or "")
    unknown = "00000000-0000-4000-8000-000000000000"
    assert refusal(lambda: export(archive_server, unknown)).code() == grpc.StatusCode.NOT_FOUND
    assert refusal(lambda: export(archive_server, "x")).code() == grpc.StatusCode.INVALID_ARGUMENT
    game_id = finished["texas42"]
    bad_format = refusal(lambda: export(archive_server, game_id, 7))
    assert bad_format.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "format 7 is no RecordFileFormat" in (bad_format.details() or "")
    long_site = refusal(lambda: export(archive_server, game_id, 2, "s" * 201))
    assert long_site.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "a site is at most 200 characters, not 201" in (long_site.details() or "")
    control = refusal(lambda: export(archive_server, game_id, 2, "a\nb"))
    assert control.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert export(archive_server, game_id, 2, "s" * 200).content.count("s" * 200) == 1


# ---------------------------------------------------------------- the listing's winners


def test_the_listing_names_the_winning_seats(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    request = archive_pb2.ListArchivedGamesRequest(page_size=1000)
    listed = {g.game_id: g for g in archive_server.archive.ListArchivedGames(request).games}
    for game_id in finished.values():
        game, record = listed[game_id], get_record(archive_server, game_id)
        assert list(game.winning_seats) == list(record.result.winning_seats)
        assert game.winning_seats, "a finished game has winners"
        assert {s.team for s in game.seats if s.seat in game.winning_seats} == {game.winner}


# ---------------------------------------------------------------- one fingerprint


def test_a_fingerprint_is_sha256_of_the_raw_key_in_groups_of_four() -> None:
    key = bytes(32)
    digest = hashlib.sha256(key).hexdigest()
    assert key_fingerprint(key) == "6668 7aad f862 bd77 6c8f"
    assert key_fingerprint(key).replace(" ", "") == digest[:FINGERPRINT_DIGITS]
    assert key_fingerprint(bytes([1]) + bytes(31)) != key_fingerprint(key)
    assert key_text(key).endswith("(fingerprint 6668 7aad f862 bd77 6c8f)")


def test_the_rpc_the_commands_and_a_verdict_show_one_fingerprint(
    archive_server: ArchiveServer, finished: dict[str, str], tmp_path: Path
) -> None:
    answer = archive_server.archive.GetSigningKey(archive_pb2.GetSigningKeyRequest(), timeout=30)
    fingerprint = key_fingerprint(answer.public_key)
    assert answer.fingerprint == fingerprint
    admin = run(
        str(BIN / "boneyard-server"),
        *("admin", "signing-key", "--database-url", archive_server.database_url),
    )
    assert admin.returncode == 0, admin.stderr
    assert admin.stderr == f"fingerprint {fingerprint}\n"
    client = run(str(BIN / "boneyard"), "public-key", "--server", archive_server.address)
    assert client.returncode == 0, client.stderr
    assert client.stderr == f"fingerprint {fingerprint}\n"
    record = get_record(archive_server, finished["texas42"])
    path = tmp_path / "game.json"
    path.write_bytes(dump_record(record))
    key_file = tmp_path / "server.key"
    key_file.write_text(client.stdout)
    for args in ((), ("--public-key", str(key_file))):
        verified = run(str(BIN / "boneyard"), "verify", *args, str(path))
        assert verified.returncode == 0, verified.stdout
        assert f"(fingerprint {fingerprint})" in verified.stdout
    served = archive_server.archive.VerifyRecord(
        archive_pb2.VerifyRecordRequest(record=record), timeout=60
    )
    assert served.summary.signing_key_fingerprint == fingerprint
    record.ClearField("signature")
    unsigned = archive_server.archive.VerifyRecord(
        archive_pb2.VerifyRecordRequest(record=record), timeout=60
    )
    assert unsigned.valid and unsigned.summary.signing_key_fingerprint == ""
