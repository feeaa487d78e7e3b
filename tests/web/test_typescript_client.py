"""The TypeScript client package (``clients/typescript``, ``@boneyard/client``) as a front end
or a bot in node uses it: built by ``tsc`` into a ``node_modules`` beside the pinned npm
packages, imported by TypeScript programs (``tests/web/typescript/``) that ``tsc`` type-checks
against its declarations and node runs, with ``@connectrpc/connect-node``, against a real
server's HTTP listener: a seat played to the game's end over HTTP/2 in the clear (h2c) and
over HTTP/1.1, with the Connect protocol and with gRPC; a seat that resumes its stream after
the server is killed and started again; refusals read through the generated types (the
``google.rpc.ErrorInfo`` of each, its reason an ``ErrorReason``) over every protocol.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from boneyard.engine import contracts, tiles
from tests.server.process_helpers import ServerProcess, free_port
from tests.web.web_helpers import install_client_package, npm_tool, run_script

SCRIPTS = Path(__file__).parent / "typescript"
TSCONFIG = {
    "compilerOptions": {
        "target": "ES2022",
        "module": "NodeNext",
        "moduleResolution": "NodeNext",
        "lib": ["ES2022"],
        "types": ["node"],
        "strict": True,
        "noEmitOnError": True,
        "skipLibCheck": True,
    },
    "include": ["*.ts"],
}
HAND_LIMIT = "2"
"""Games of two hands: a whole game (its end and its winner) in a few dozen views."""


@pytest.fixture(scope="module")
def front_end(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A node program's folder: the package installed, the scripts compiled beside it."""
    where = tmp_path_factory.mktemp("front-end")
    install_client_package(where)
    for script in SCRIPTS.glob("*.ts"):
        shutil.copy(script, where / script.name)
    (where / "package.json").write_text('{"type": "module", "private": true}\n')
    (where / "tsconfig.json").write_text(json.dumps(TSCONFIG, indent=2))
    compiled = subprocess.run(
        [str(npm_tool("tsc")), "-p", str(where)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return where


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    where = tmp_path_factory.mktemp("server")
    with ServerProcess.start(
        where / "server.log", f"sqlite:///{where / 'ts.db'}", http_listen="127.0.0.1:0"
    ) as running:
        yield running


def _run(front_end: Path, script: str, *args: str, **kwargs: Any) -> Any:
    return run_script(
        str(front_end / f"{script}.js"), "", front_end, browser=False, args=args, **kwargs
    )


def _engine_reads(text: str) -> int | None:
    try:
        return tiles.parse_tile(text)
    except ValueError:
        return None


def test_the_package_builds_with_its_declarations(front_end: Path) -> None:
    built = front_end / "node_modules" / "@boneyard" / "client" / "dist"
    for name in ("index", "errors", "seat", "tiles", "gen/google/rpc/error_details_pb"):
        assert (built / f"{name}.js").is_file() and (built / f"{name}.d.ts").is_file(), name


def test_the_package_names_and_reads_tiles_as_the_engine_does(front_end: Path) -> None:
    texts = ["6-4", "4-6", "6:4", "6/4", "6|4", "64", " 5-5 ", "0-0", "7-1", "6-", "6 4", "x", ""]
    run = _run(front_end, "tiles", *texts)
    assert run.returncode == 0, run.explain()
    assert run.report["names"] == [tiles.tile_name(t) for t in tiles.ALL_TILES]
    assert run.report["suits"] == [contracts.suit_name(s) for s in range(7)]
    assert run.report["parsed"] == {text: _engine_reads(text) for text in texts}


@pytest.mark.parametrize(
    ("http_version", "protocol"),
    [("2", "connect"), ("1.1", "connect"), ("2", "grpc")],
    ids=["connect-over-h2c", "connect-over-http1.1", "grpc-over-h2c"],
)
def test_a_seat_is_played_to_the_end_from_node_with_connect_node(
    front_end: Path, server: ServerProcess, http_version: str, protocol: str
) -> None:
    run = _run(front_end, "play_seat", server.http_url, http_version, protocol, HAND_LIMIT)
    assert run.returncode == 0, run.explain()
    report = run.report
    assert report["over"] and report["inOrder"] and report["resumed"] == [], run.explain()
    assert report["actions"] > 0 and report["plays"] > 0, run.explain()
    assert re.fullmatch(r"team [01] wins \(\d+, \d+\)", run.lines[-1]), run.explain()
    # The tiles it played, named as players write them.
    played = [line for line in run.lines if line.startswith("plays ")]
    assert len(played) == report["plays"], run.explain()
    assert all(re.fullmatch(r"plays [0-6]-[0-6]", line) for line in played), played
    if http_version == "2":
        # The HTTP/2 session was still up at the end: the whole game went over h2c.
        assert report["http2Session"] in ("open", "idle"), run.explain()


@pytest.mark.slow
def test_a_seat_played_from_node_resumes_after_the_server_is_killed_and_started_again(
    front_end: Path, tmp_path: Path
) -> None:
    database = f"sqlite:///{tmp_path / 'restart.db'}"
    grpc_listen, http_listen = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    log = tmp_path / "server.log"
    running = [ServerProcess.start(log, database, grpc_listen, http_listen=http_listen)]
    go = tmp_path / "go"

    def on_line(line: str) -> None:
        # The seat's second choice waits, its stream open, while the server is killed
        # (kill -9) and started again on the same database and ports; then it is sent (its
        # second: two hands are two bids at least; a fifth depended on the deal, and CI once
        # saw the game end first).
        if line == "paused":
            running[0].kill()
            running.append(ServerProcess.start(log, database, grpc_listen, http_listen=http_listen))
            go.touch()

    url = running[0].http_url
    try:
        run = _run(
            front_end, "play_seat", url, "2", "connect", HAND_LIMIT, "2", str(go), on_line=on_line
        )
    finally:
        for server in running:
            server.kill()
    assert run.returncode == 0, run.explain()
    assert len(running) == 2, "the seat never paused:\n" + run.explain()
    report = run.report
    assert report["over"] and report["resumed"], run.explain()
    # Each view once, in order: resumed from the last event seen, none seen twice.
    assert report["inOrder"], run.explain()
    assert re.fullmatch(r"team [01] wins \(\d+, \d+\)", run.lines[-1]), run.explain()


@pytest.mark.parametrize(
    ("http_version", "protocol"),
    [("2", "connect"), ("1.1", "connect"), ("2", "grpc"), ("1.1", "grpc-web")],
    ids=["connect-over-h2c", "connect-over-http1.1", "grpc-over-h2c", "grpc-web-over-http1.1"],
)
def test_a_typescript_client_reads_a_refusals_reason_through_the_generated_types(
    front_end: Path, server: ServerProcess, http_version: str, protocol: str
) -> None:
    run = _run(front_end, "refusals", server.http_url, http_version, protocol)
    assert run.returncode == 0, run.explain()
    report = run.report
    assert report["notYourTurn"] == {
        "code": "FailedPrecondition",
        "reason": "NOT_YOUR_TURN",
        "reasonName": "NOT_YOUR_TURN",
        "metadata": {
            "game_id": report["gameId"],
            "version": report["version"],
            "seat": str(report["other"]),
            "turn": str(report["turn"]),
        },
        "domain": "boneyard.v1",
        "words": "It is not your turn",
    }
    stale = report["staleVersion"]
    assert (stale["code"], stale["reason"], stale["words"]) == (
        "Aborted",
        "STALE_VERSION",
        "Someone acted first",
    )
    assert stale["metadata"]["current_version"] == report["version"]
    assert report["gameNotFound"] == {
        "code": "NotFound",
        "reason": "GAME_NOT_FOUND",
        "reasonName": "GAME_NOT_FOUND",
        "metadata": {"game_id": report["missing"]},
        "domain": "boneyard.v1",
        "words": "There is no such game",
    }


def test_every_call_about_a_game_names_it_in_the_game_header(front_end: Path) -> None:
    # The package's interceptor (which the web app's transport uses) and playSeat, against a
    # node server that records each request's header and refuses it.
    run = _run(front_end, "game_header")
    assert run.returncode == 0, run.explain()
    service = "/boneyard.v1.GameService"
    assert run.report["withInterceptor"] == [
        [f"{service}/GetGame", "g-get"],
        [f"{service}/GetView", "g-view"],
        [f"{service}/SubmitAction", "g-submit"],
        [f"{service}/WatchGame", "g-watch"],
        [f"{service}/CreateGame", None],
        [f"{service}/ListPresets", None],
    ], run.explain()
    assert run.report["playSeat"] == [[f"{service}/GetView", "g-seat"]], run.explain()
