"""``boneyard export``, ``verify``, ``replay`` and ``archive`` as processes, the way an archivist
runs them: the console script of the venv running the tests, against the session's real server
(``verify`` and ``replay FILE`` with no server at all)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from archive_helpers import NAMES, ArchiveServer, copy, rechain

from boneyard.api.v1 import archive_pb2
from boneyard.engine.tiles import format_tiles
from boneyard.records.record import dump_record, load_record
from boneyard.records.verify import verify_record
from tests.server.process_helpers import clean_env, create_game, free_port, play_one, seat_all

BONEYARD = Path(sys.executable).parent / "boneyard"
STEP = re.compile(
    r"^── step (?P<n>\d+)/(?P<total>\d+) · events? (?P<first>\d+)(?:-(?P<last>\d+))? · "
)


def run(*args: str, stdin: str = "", server: str | None = None) -> subprocess.CompletedProcess[str]:
    """A ``boneyard`` command to its end. Without ``server``, BONEYARD_SERVER points at a port
    nobody listens on: a command that needs no server must not notice."""
    env = clean_env(BONEYARD_SERVER=server or f"127.0.0.1:{free_port()}")
    return subprocess.run(
        [str(BONEYARD), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def explain(result: subprocess.CompletedProcess[str]) -> str:
    return f"$ {' '.join(map(str, result.args))}\nexit {result.returncode}\n{result.stdout}\n{result.stderr}"


@pytest.fixture(scope="module")
def exported(
    archive_server: ArchiveServer,
    finished: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Path]:
    """Each finished game exported by the CLI as JSON (``<preset>``) and protobuf
    (``<preset>-binary``)."""
    directory = tmp_path_factory.mktemp("exported")
    files: dict[str, Path] = {}
    for preset, game_id in finished.items():
        for binary in (False, True):
            path = directory / f"{preset}{'.bin' if binary else '.json'}"
            args = ["export", game_id, "-o", str(path), "--server", archive_server.address]
            result = run(*args, *(["--binary"] if binary else []))
            assert result.returncode == 0, explain(result)
            assert f"wrote {path}" in result.stderr
            files[preset + ("-binary" if binary else "")] = path
    return files


# ---------------------------------------------------------------- export


def test_export_writes_the_servers_record_as_json_or_protobuf(
    archive_server: ArchiveServer, finished: dict[str, str], exported: dict[str, Path]
) -> None:
    for preset, game_id in finished.items():
        served = archive_server.archive.GetRecord(
            archive_pb2.GetRecordRequest(game_id=game_id), timeout=60
        ).record
        text = exported[preset].read_text()
        assert json.loads(text)["gameId"] == game_id  # JSON for people
        assert load_record(text.encode()) == served
        assert exported[preset + "-binary"].read_bytes() == dump_record(served, binary=True)


def test_export_to_stdout(archive_server: ArchiveServer, finished: dict[str, str]) -> None:
    result = run("export", finished["moon"], "--server", archive_server.address)
    assert result.returncode == 0, explain(result)
    assert json.loads(result.stdout)["gameId"] == finished["moon"]


def test_export_of_a_game_not_over_fails_with_the_reason(
    archive_server: ArchiveServer, tmp_path: Path
) -> None:
    game_id = create_game(archive_server.games, "moon", name="unfinished")
    out = tmp_path / "never.json"
    result = run("export", game_id, "-o", str(out), "--server", archive_server.address)
    assert result.returncode == 1, explain(result)
    assert "FAILED_PRECONDITION" in result.stderr and "hidden tiles" in result.stderr
    assert not out.exists()


def test_export_without_a_server_fails_cleanly(tmp_path: Path) -> None:
    result = run("export", "00000000-0000-4000-8000-000000000000", "-o", str(tmp_path / "x.json"))
    assert result.returncode == 1, explain(result)
    assert "no Boneyard server at 127.0.0.1:" in result.stderr
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- verify


@pytest.mark.parametrize("name", ["texas42", "texas42-binary", "moon", "moon-binary"])
def test_verify_of_an_exported_record_is_one_line_and_exit_0(
    exported: dict[str, Path], finished: dict[str, str], name: str
) -> None:
    result = run("verify", str(exported[name]))
    assert result.returncode == 0, explain(result)
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    preset = name.removesuffix("-binary")
    assert lines[0].startswith(f"valid: game {finished[preset]} ({preset}, ")
    assert " won; head " in lines[0]


def test_verify_reports_the_first_discrepancy_and_exit_1(
    exported: dict[str, Path], tmp_path: Path
) -> None:
    record = load_record(exported["texas42"].read_bytes())
    at = next(
        i for i, r in enumerate(record.events, 1) if r.event.WhichOneof("kind") == "tile_played"
    )
    edited = copy(record)
    play = edited.events[at - 1].event.tile_played
    play.tile = next(t for t in range(28) if t != play.tile)
    naive, forged = tmp_path / "naive.json", tmp_path / "forged.bin"
    naive.write_bytes(dump_record(edited))
    forged.write_bytes(dump_record(rechain(copy(edited)), binary=True))

    result = run("verify", str(naive))
    assert result.returncode == 1, explain(result)
    assert result.stdout.startswith(f"invalid: event {at}: hash chain: expected hash ")

    result = run("verify", str(forged))
    assert result.returncode == 1, explain(result)
    assert result.stdout.startswith(f"invalid: event {at}: ")
    expected = verify_record(rechain(copy(edited))).discrepancy
    assert result.stdout.strip() == f"invalid: {expected}"


def test_verify_of_several_records_names_each_and_fails_if_any_is_invalid(
    exported: dict[str, Path], tmp_path: Path
) -> None:
    good = [str(exported["texas42"]), str(exported["moon-binary"])]
    result = run("verify", *good)
    assert result.returncode == 0, explain(result)
    assert [line.split(": ", 1)[0] for line in result.stdout.splitlines()] == good
    assert all(": valid: game " in line for line in result.stdout.splitlines())

    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    result = run("verify", good[0], str(junk), good[1])
    assert result.returncode == 1, explain(result)
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[1].startswith(f"{junk}: invalid: ")
    assert ": valid: " in lines[0] and ": valid: " in lines[2]


def test_verify_of_a_file_that_is_no_record(tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"formatVersion": "one"}')
    result = run("verify", str(junk))
    assert result.returncode == 1, explain(result)
    assert result.stdout.startswith("invalid: record: format: ")
    missing = run("verify", str(tmp_path / "missing.json"))
    assert missing.returncode == 1 and "missing.json" in missing.stderr


# ---------------------------------------------------------------- replay


def _steps(output: str) -> list[tuple[int, int, int, int]]:
    """(step, total, first event, last event) of every step header printed."""
    found = []
    for line in output.splitlines():
        match = STEP.match(line)
        if match:
            first = int(match["first"])
            found.append((int(match["n"]), int(match["total"]), first, int(match["last"] or first)))
    return found


@pytest.mark.parametrize("preset", ["texas42", "moon"])
def test_replay_all_prints_every_move_with_every_hand(
    exported: dict[str, Path], preset: str
) -> None:
    record = load_record(exported[preset].read_bytes())
    result = run("replay", str(exported[preset]), "--all")
    assert result.returncode == 0, explain(result)
    steps = _steps(result.stdout)
    # Every event once, in order, grouped into moves.
    assert steps[0][2] == 1 and steps[-1][3] == len(record.events)
    for (n, total, _first, last), following in zip(steps, steps[1:] + [None], strict=True):
        assert total == len(steps)
        if following is not None:
            assert following[0] == n + 1 and following[2] == last + 1
    # Every hand dealt is shown whole, seat by seat, with the players' names.
    deals = [
        r.event.hand_dealt for r in record.events if r.event.WhichOneof("kind") == "hand_dealt"
    ]
    for deal in deals:
        for seat, hand in enumerate(deal.deal.hands):
            tiles = format_tiles(sum(1 << t for t in hand.tiles))
            pattern = rf"^  seat {seat} {re.escape(NAMES[preset][seat])}\s+{re.escape(tiles)}"
            assert re.search(pattern, result.stdout, re.MULTILINE), (deal.number, seat, tiles)
    # Trick by trick, and the end.
    tricks = sum(1 for r in record.events if r.event.WhichOneof("kind") == "trick_won")
    assert len(re.findall(r"^  trick \d+: .* → seat \d$", result.stdout, re.MULTILINE)) == tricks
    # A team of partners wins Texas 42; in Moon each seat plays for itself.
    side = "team" if preset == "texas42" else "seat"
    assert result.stdout.rstrip().splitlines()[-1].startswith(f"  game over: {side} ")


def test_replay_by_game_id_fetches_the_record(
    archive_server: ArchiveServer, finished: dict[str, str], exported: dict[str, Path]
) -> None:
    by_id = run("replay", finished["moon"], "--all", "--server", archive_server.address)
    by_file = run("replay", str(exported["moon"]), "--all")
    assert by_id.returncode == by_file.returncode == 0, explain(by_id)
    assert by_id.stdout == by_file.stdout


def test_replay_steps_forwards_and_backwards(exported: dict[str, Path]) -> None:
    """n, Enter, p, t (to the end of the next trick), h (to the next hand), q."""
    record = load_record(exported["texas42"].read_bytes())
    kinds = [r.event.WhichOneof("kind") for r in record.events]
    every = _steps(run("replay", str(exported["texas42"]), "--all").stdout)

    def holds(step: int, kind: str) -> bool:
        _, _, first, last = every[step - 1]
        return kind in kinds[first - 1 : last]

    trick_1 = next(n for n, *_ in every if n > 2 and holds(n, "trick_won"))
    trick_2 = next(n for n, *_ in every if n > trick_1 and holds(n, "trick_won"))
    next_hand = next(n for n, *_ in every if n > trick_2 and holds(n, "hand_dealt"))

    result = run("replay", str(exported["texas42"]), stdin="n\n\np\nt\nt\nh\nbogus\nq\nn\n")
    assert result.returncode == 0, explain(result)
    assert result.stdout.startswith(
        "Enter/n next · p previous · t next trick · h next hand · q quit"
    )
    shown = _steps(result.stdout)
    assert [n for n, *_ in shown] == [1, 2, 3, 2, trick_1, trick_2, next_hand]  # q quits
    assert shown == [every[n - 1] for n, *_ in shown]
    assert "? 'bogus'" in result.stdout


def test_replay_of_an_edited_record_stops_before_the_edit(
    exported: dict[str, Path], tmp_path: Path
) -> None:
    record = load_record(exported["moon"].read_bytes())
    at = next(
        i for i, r in enumerate(record.events, 1) if r.event.WhichOneof("kind") == "trick_won"
    )
    edited = copy(record)
    edited.events[at - 1].event.trick_won.points += 1
    path = tmp_path / "edited.json"
    path.write_bytes(dump_record(edited))
    result = run("replay", str(path), "--all")
    assert result.returncode == 1, explain(result)
    assert f"event {at}: hash chain" in result.stderr
    assert _steps(result.stdout)[-1][3] == at - 1


def test_replay_of_something_that_is_neither_file_nor_game() -> None:
    result = run("replay", "no-such-thing")
    assert result.returncode == 2, explain(result)
    assert "neither a record file nor a game id" in result.stderr


# ---------------------------------------------------------------- archive


def test_archive_lists_finished_games(
    archive_server: ArchiveServer, finished: dict[str, str]
) -> None:
    result = run("archive", "--server", archive_server.address, "--player", "alice")
    assert result.returncode == 0, explain(result)
    assert finished["texas42"] in result.stdout and finished["moon"] not in result.stdout
    assert "Alice, Bob, Carol, Dave" in result.stdout
    moon = run(
        "archive", "--server", archive_server.address, "--preset", "moon", "--since", "2000-01-01"
    )
    assert finished["moon"] in moon.stdout and finished["texas42"] not in moon.stdout


def test_an_unfinished_game_is_not_in_the_archive(archive_server: ArchiveServer) -> None:
    stub = archive_server.games
    game_id = create_game(stub, "texas42", name="not yet")
    tokens = seat_all(stub, game_id)
    play_one(stub, game_id, tokens)
    result = run("archive", "--server", archive_server.address)
    assert result.returncode == 0, explain(result)
    assert game_id not in result.stdout


def test_the_verifier_and_the_archive_cli_need_no_server_code() -> None:
    """``boneyard verify`` runs offline: the record and verifier modules and the archive
    commands import neither the server nor a database driver."""
    probe = (
        "import sys, boneyard.records.record, boneyard.records.verify, clients.archive_cli, clients.cli\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('server', 'sqlalchemy'))\n"
        "print(bad)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"
