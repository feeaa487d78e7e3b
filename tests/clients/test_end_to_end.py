"""End to end: the clients as a person or an operator runs them, against a real server.

Every piece is a real process: ``boneyard-server`` on a throwaway SQLite file (started with
``tests/server/process_helpers.py``), and the ``boneyard`` console script of the venv running
the tests: ``bot`` (whole games, one process for all seats or one per seat, and through a
``kill -9`` and restart of the server), ``watch`` and ``games`` on a finished game, and ``make demo``.

What a command printed is checked against what the server says over the API (GetGame,
GetView, WatchGame from version 0).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from boneyard.api.v1 import events_pb2, game_pb2, game_service_pb2_grpc
from boneyard.clients.api import Client
from tests.clients.cli_helpers import (
    RUN_TIMEOUT,
    Background,
    kill_group,
    run_cli,
)
from tests.server.process_helpers import ServerProcess, clean_env, free_port, watch

REPO = Path(__file__).resolve().parents[2]

GAME_LINE = re.compile(r"^game (?P<id>[0-9a-f-]{36})$")
FINAL_LINE = re.compile(
    r"^final score: (?P<teams>.*?)(?:; (?P<side>team|seat) (?P<winner>\d+) wins)?$"
)
TEAM_PART = re.compile(
    r"^(?:team (?P<team>\d+) \(seats (?P<seats>[\d ]+)\)|seat (?P<seat>\d+)): (?P<score>-?\d+)$"
)
"""A side of the final score: a team and its seats, or a seat that plays for itself."""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")

FINISHED = game_pb2.GAME_STATUS_FINISHED


# --- the server ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server on a fresh SQLite file for the module's tests (each makes games of its own)."""
    d = tmp_path_factory.mktemp("e2e-server")
    with ServerProcess.start(d / "server.log", f"sqlite:///{d / 'boneyard.db'}") as running:
        yield running


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[Client]:
    with Client(server.address) as client:
        yield client


# --- what the clients print, and what the server says -------------------------------------


@dataclass(frozen=True)
class FinalScore:
    scores: list[int]
    teams: list[list[int]]
    winner: int | None


def parse_final(line: str) -> FinalScore:
    match = FINAL_LINE.match(line)
    assert match, f"not a final score line: {line!r}"
    scores: list[int] = []
    teams: list[list[int]] = []
    for i, part in enumerate(match["teams"].split(", ")):
        side = TEAM_PART.match(part)
        assert side, f"side {i} in {line!r}: {part!r}"
        if side["seat"] is not None:
            teams.append([int(side["seat"])])
        else:
            assert int(side["team"]) == i, f"team {i} in {line!r}: {part!r}"
            assert len(side["seats"].split()) > 1, f"a team of one seat is said as a seat: {part!r}"
            teams.append([int(s) for s in side["seats"].split()])
        scores.append(int(side["score"]))
    winner = None
    if match["winner"] is not None:
        n = int(match["winner"])
        winner = n if match["side"] == "team" else next(t for t, s in enumerate(teams) if s == [n])
    return FinalScore(scores, teams, winner)


def game_id_of(line: str) -> str:
    match = GAME_LINE.match(line)
    assert match, f"the first line should be `game GAME_ID`, not {line!r}"
    return match["id"]


def stub_of(client: Client) -> game_service_pb2_grpc.GameServiceStub:
    return client._stub  # the same channel; the process helpers take a raw stub


def assert_finished_as_printed(api: Client, game_id: str, preset: str, final: FinalScore) -> None:
    """GetGame says the game is over, with the scores and the winner the client printed."""
    summary = api.game(game_id)
    assert summary.status == FINISHED, game_pb2.GameStatus.Name(summary.status)
    assert summary.rules.preset == preset
    assert all(seat.occupied for seat in summary.seats)
    assert list(summary.scores) == final.scores
    assert summary.HasField("winner"), "a finished game has a winner"
    assert final.winner == summary.winner
    if preset.startswith("texas42"):
        assert final.teams == [[0, 2], [1, 3]]
        # marks only go up, so the team that got there first has the most
        assert summary.scores[summary.winner] == max(summary.scores)
        assert summary.scores[summary.winner] >= summary.rules.marks_to_win
    else:
        assert final.teams == [[0], [1], [2]]


def full_log(api: Client, game_id: str) -> list[events_pb2.Event]:
    """The game's events as a spectator gets them from WatchGame from version 0 (the stream
    ends at the end of a finished game), checked to be one event per version, in order, with
    no gap: the same number as the spectator's GetView version."""
    public = api.view(game_id, timeout=30)
    messages = watch(stub_of(api), game_id, 0, timeout=60)
    versions = [m.version for m in messages]
    assert versions == list(range(1, public.version + 1)), (
        f"versions {versions[:5]}..{versions[-5:]} of {len(versions)}; view at {public.version}"
    )
    events = []
    for m in messages:
        assert m.event.WhichOneof("kind") is not None, f"version {m.version} carries no event"
        assert m.event.seq == m.version
        assert m.view.version == m.version
        events.append(m.event)
    return events


def assert_no_action_twice(events: Sequence[events_pb2.Event]) -> None:
    """No tile is played twice in a hand, and no seat bids twice in one auction (where the
    auction goes round, no seat bids twice running or after its pass): a resent action was
    answered, not applied again."""
    first = events[0]
    goes_round = first.WhichOneof("kind") == "game_created" and first.game_created.rules.auction_goes_round
    played: set[int] = set()
    bidders: set[int] = set()
    passed: set[int] = set()
    last: int | None = None
    for event in events:
        kind = event.WhichOneof("kind")
        if kind == "hand_dealt":
            played.clear()
            bidders.clear()
            passed.clear()
            last = None
        elif kind == "tile_played" and not event.tile_played.face_down:
            assert event.tile_played.tile not in played, f"tile played twice at {event.seq}"
            played.add(event.tile_played.tile)
        elif kind in ("bid_placed", "passed"):
            seat = getattr(event, kind).seat
            if goes_round:
                assert seat != last and seat not in passed, f"seat {seat} bid again at {event.seq}"
                last = seat
                if kind == "passed":
                    passed.add(seat)
                continue
            assert seat not in bidders, f"seat {seat} bid twice in one auction at {event.seq}"
            bidders.add(seat)


# --- 1. whole games by bots --------------------------------------------------------------

PRESETS = [
    "texas42", "texas42-house", "texas42-redeal", "moon", "moon-s1", "moon-pagat", "moon-no-widow",
    "moon-overcall",
]


@pytest.mark.parametrize("preset", PRESETS)
def test_bot_new_plays_a_whole_game(server: ServerProcess, api: Client, preset: str) -> None:
    done = run_cli("bot", "--server", server.address, "--new", preset, "--strategy", "heuristic")
    assert done.returncode == 0, done.explain()
    lines = done.lines
    assert len(lines) == 2, done.explain()
    game_id = game_id_of(lines[0])
    final = parse_final(lines[-1])
    assert final.winner is not None, done.explain()
    assert_finished_as_printed(api, game_id, preset, final)
    events = full_log(api, game_id)
    assert events[0].WhichOneof("kind") == "game_created"
    assert events[-1].WhichOneof("kind") == "game_won"
    assert events[-1].game_won.team == final.winner
    assert_no_action_twice(events)


def test_bot_new_plays_the_expert_with_the_budget_given(server: ServerProcess, api: Client) -> None:
    """``--move-ms`` reaches the strategies: the expert and the sampler, on a small budget,
    play a one-mark game beside the heuristic to its end."""
    done = run_cli(
        "bot", "--server", server.address, "--new", "texas42", "--option", "marks_to_win=1",
        "--strategy", "expert,sampler,expert,heuristic", "--move-ms", "50",
    )  # fmt: skip
    assert done.returncode == 0, done.explain()
    game_id = game_id_of(done.lines[0])
    final = parse_final(done.lines[-1])
    assert_finished_as_printed(api, game_id, "texas42", final)
    summary = api.game(game_id)
    assert [s.player_name for s in summary.seats] == [
        "expert bot", "sampler bot", "expert bot", "heuristic bot",
    ]  # fmt: skip
    assert_no_action_twice(full_log(api, game_id))


@pytest.mark.parametrize(
    "args",
    [
        ["bot", "--new", "texas42", "--strategy", "expert", "--move-ms", "0"],
        ["bot", "--new", "moon", "--strategy", "sampler", "--move-ms", "60001"],
        ["play", "--bots", "3", "--strategy", "expert", "--move-ms", "-5"],
        ["play", "--house-bots", "3", "--strategy", "expert", "--move-ms", "100"],
    ],
)
def test_a_budget_out_of_range_or_for_no_bot_here_is_a_usage_error_that_makes_nothing(
    server: ServerProcess, api: Client, args: list[str], tmp_path: Path
) -> None:
    before = len(list(api.games()))
    done = run_cli(
        args[0], "--server", server.address, *args[1:],
        *(["--seats-file", str(tmp_path / "seats.json")] if args[0] == "play" else []),
    )  # fmt: skip
    assert done.returncode == 2, done.explain()
    assert "--move-ms" in done.stderr, done.explain()
    assert len(list(api.games())) == before
    assert not (tmp_path / "seats.json").exists()


@pytest.mark.parametrize("preset", ["texas42", "moon"])
def test_one_bot_process_per_seat(
    server: ServerProcess, api: Client, background: Callable[..., Background], preset: str
) -> None:
    game_id = api.create_game(preset, name=f"one process a seat ({preset})").game_id
    players = api.game(game_id).rules.players
    bots = [
        background(
            "bot",
            "--server",
            server.address,
            "--game",
            game_id,
            "--seat",
            str(seat),
            "--strategy",
            "heuristic",
            "--seed",
            str(seat),
            "--name",
            f"bot {seat}",
        )
        for seat in range(players)
    ]
    results = [bot.wait() for bot in bots]
    for done in results:
        assert done.returncode == 0, done.explain()
        assert len(done.lines) == 1, done.explain()  # no `game` line: the game was given
    finals = {done.lines[-1] for done in results}
    assert len(finals) == 1, f"the seats disagree on the final score: {finals}"
    final = parse_final(finals.pop())
    assert_finished_as_printed(api, game_id, preset, final)
    summary = api.game(game_id)
    assert [s.player_name for s in summary.seats] == [f"bot {s}" for s in range(players)]
    assert_no_action_twice(full_log(api, game_id))


# --- 2. a person at the terminal: tests/clients/test_terminal_table.py (80x24, pyte) ------


def events_by(events: Sequence[events_pb2.Event], kind: str, seat: int) -> list[events_pb2.Event]:
    return [e for e in events if e.WhichOneof("kind") == kind and getattr(e, kind).seat == seat]


def full_log_so_far(api: Client, game_id: str) -> list[events_pb2.Event]:
    """The events of a game still being played, up to the spectator's current version."""
    public = api.view(game_id, timeout=60)
    messages = watch(stub_of(api), game_id, 0, public.version, timeout=60)
    assert [m.version for m in messages] == list(range(1, public.version + 1))
    return [m.event for m in messages]


# --- 3. the server killed and restarted under running bots --------------------------------


def _wait_version(api: Client, game_id: str, at_least: int, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        summary = api.game(game_id)
        if summary.version >= at_least or summary.status == FINISHED:
            return int(summary.version)
        assert time.monotonic() < deadline, f"the game stayed at version {summary.version}"
        time.sleep(0.005)


def test_bots_survive_kill_9_and_restart_of_the_server(
    tmp_path: Path, background: Callable[..., Background]
) -> None:
    port = free_port()
    db = f"sqlite:///{tmp_path / 'boneyard.db'}"
    log = tmp_path / "server.log"
    listen = f"127.0.0.1:{port}"
    servers: list[ServerProcess] = []
    try:
        servers.append(ServerProcess.start(log, db, listen))
        bot = background(
            "-v", "bot", "--server", listen, "--new", "texas42", "--strategy", "heuristic"
        )
        game_id = game_id_of(bot.next_line())
        killed_at = []
        with Client(listen) as watcher:
            for at_least in (12, 80):
                version = _wait_version(watcher, game_id, at_least)
                servers[-1].kill()  # SIGKILL
                killed_at.append(version)
                time.sleep(1.5)
                servers.append(ServerProcess.start(log, db, listen))
        done = bot.wait()
        assert done.returncode == 0, done.explain() + "\n--- server:\n" + log.read_text()[-5000:]
        assert "reconnecting" in done.stderr, "the bots never noticed the server was gone"

        with Client(listen) as api:
            summary = api.game(game_id)
            assert summary.status == FINISHED
            assert all(v < summary.version for v in killed_at), (
                f"killed at {killed_at}, but the game ended at {summary.version}"
            )
            final = parse_final(done.lines[-1])
            assert_finished_as_printed(api, game_id, "texas42", final)
            events = full_log(api, game_id)
            assert events[-1].WhichOneof("kind") == "game_won"
            assert_no_action_twice(events)
    finally:
        for s in servers:
            s.kill()


# --- 4. watch and games on a finished game ------------------------------------------------


@pytest.fixture(scope="module")
def finished_game(server: ServerProcess) -> str:
    done = run_cli("bot", "--server", server.address, "--new", "moon-s1", "--name", "watched")
    assert done.returncode == 0, done.explain()
    return game_id_of(done.lines[0])


def test_watch_prints_a_finished_game(
    server: ServerProcess, api: Client, finished_game: str
) -> None:
    done = run_cli("watch", "--server", server.address, finished_game, timeout=60)
    assert done.returncode == 0, done.explain()
    summary = api.game(finished_game)
    events = full_log(api, finished_game)
    numbered = [
        (int(m[1]), m[2]) for m in re.finditer(r"^\s*(\d+) (.+)$", done.stdout, re.MULTILINE)
    ]
    # one line per event worth telling, in order; the first is the deal
    versions = [v for v, _ in numbered]
    assert versions == sorted(set(versions)), versions
    assert numbered[0][1].startswith("hand 1 dealt")
    assert versions[-1] == summary.version
    told = {e.seq for e in events if e.WhichOneof("kind") != "game_created"}
    assert set(versions) == told
    plays = [text for _, text in numbered if re.fullmatch(r"seat \d plays \d-\d", text)]
    assert len(plays) == sum(e.WhichOneof("kind") == "tile_played" for e in events)
    winner = summary.winner
    # Moon: each seat plays for itself, so the winner is a seat, not a team
    assert f"game over: seat {winner} wins" in done.stdout
    assert "team" not in done.stdout and "(seats" not in done.stdout
    # and the table at the end: the score of every seat, and who won
    tail = done.stdout[done.stdout.rindex(f"game over: seat {winner} wins") :]
    for seat, score in enumerate(summary.scores):
        assert re.search(rf"seat {seat}\s+{score} points?", tail), (seat, score, tail)
    assert f"game over: seat {winner} won" in tail


def test_games_lists_the_finished_game(
    server: ServerProcess, api: Client, finished_game: str
) -> None:
    done = run_cli("games", "--server", server.address, "--status", "finished", timeout=60)
    assert done.returncode == 0, done.explain()
    rows = [line for line in done.lines if finished_game in line]
    assert len(rows) == 1, done.explain()
    cells = [c.strip() for c in rows[0].strip("│ ").split("│")]
    summary = api.game(finished_game)
    assert cells == [
        finished_game,
        "watched",
        "moon-s1",
        "finished",
        "3/3",
        " ".join(map(str, summary.scores)),
        str(summary.version),
    ]
    playing = run_cli("games", "--server", server.address, "--status", "playing", timeout=60)
    assert playing.returncode == 0, playing.explain()
    assert finished_game not in playing.stdout


# --- 5. make demo ------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_demo() -> None:
    port = free_port()
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "demo", f"DEMO_PORT={port}"],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=clean_env(DEMO_PORT=str(port)),
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, _ = proc.communicate()
        pytest.fail(f"make demo did not finish in {RUN_TIMEOUT} s:\n{out}")
    finally:
        kill_group(proc)
    assert proc.returncode == 0, out
    finals = [parse_final(line) for line in out.splitlines() if line.startswith("final score:")]
    assert len(finals) == 2, out
    texas, moon = finals
    assert texas.teams == [[0, 2], [1, 3]] and texas.winner is not None
    assert moon.teams == [[0], [1], [2]] and moon.winner is not None
    assert "Texas 42, 4 heuristic bots:" in out and "Moon, 3 heuristic bots:" in out
