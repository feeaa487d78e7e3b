"""A whole competition, end to end, with real processes (issue 6).

The operator makes accounts with ``boneyard-server admin``; one ``boneyard bot --key`` process per
account plays every seat reserved for it (two strategies: heuristic and random); the organiser
makes a duplicate Texas 42 tournament of 16 deals and a duplicate Moon tournament with
``boneyard tournament create`` and starts them with ``boneyard tournament run``. The server is
killed (SIGKILL) in the middle and started again on the same database and port; both
tournaments finish; every game's record verifies with ``boneyard verify``; the standings agree
with what the archived records say.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import grpc
import pytest

from boneyard.api.v1 import archive_pb2, archive_pb2_grpc, competition_pb2, competition_pb2_grpc
from boneyard.records.record import dump_record
from boneyard.records.verify import verify_record
from tests.server.process_helpers import SERVER_BIN, ServerProcess, clean_env, free_port

BONEYARD = Path(sys.executable).parent / "boneyard"
CLOCK = ["--per-move-ms", "10000", "--bank-ms", "60000", "--policy", "auto_play"]
FORTY_TWO_ENTRANTS = {"h-north": "heuristic", "h-south": "heuristic", "r-east": "random", "r-west": "random"}
MOON_ENTRANTS = {"moon-h1": "heuristic", "moon-r": "random", "moon-h2": "heuristic"}


def boneyard(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BONEYARD), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
    )


def admin(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``boneyard-server admin ARGS``: the operator's commands, on the server's machine."""
    return subprocess.run(
        [str(SERVER_BIN), "admin", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def create_account(url: str, name: str, kind: str = "bot") -> str:
    out = ok(admin(f"create-{kind}", name, "--database-url", url))
    found = re.search(r"^key: (byk_\S+)$", out, re.MULTILINE)
    assert found, out
    return found.group(1)


def tournament_of(channel: grpc.Channel, tournament_id: str) -> competition_pb2.GetTournamentResponse:
    stub = competition_pb2_grpc.TournamentServiceStub(channel)
    return stub.GetTournament(
        competition_pb2.GetTournamentRequest(tournament_id=tournament_id), timeout=30
    )


def wait_until(condition, what: str, timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except grpc.RpcError:
            pass  # the server is starting
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_a_duplicate_tournament_survives_a_server_kill_and_verifies(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    listen = f"127.0.0.1:{free_port()}"
    log = tmp_path / "server.log"
    server = ServerProcess.start(log, url, listen)
    bots: list[subprocess.Popen[bytes]] = []
    try:
        organiser = create_account(url, "organiser", "player")
        strategies = {**FORTY_TWO_ENTRANTS, **MOON_ENTRANTS}
        keys = {name: create_account(url, name) for name in strategies}
        again = admin("create-bot", "h-north", "--database-url", url)
        assert again.returncode == 1 and "h-north" in again.stdout + again.stderr

        def start_bot(name: str, *limit: str) -> subprocess.Popen[bytes]:
            with open(tmp_path / f"bot-{name}.log", "ab") as out:
                return subprocess.Popen(
                    [str(BONEYARD), "bot", "--key", keys[name], "--strategy", strategies[name],
                     "--server", listen, *limit],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=clean_env(),
                    start_new_session=True,
                )

        # One Texas 42 entrant's bot stops after 10 games: the tournament is then held in its
        # middle (that seat's moves wait out the 10 s clock) however fast the machine plays,
        # where killing the server when 10 games were seen finished was too late on a busy
        # machine that saw the count late.
        for name in strategies:
            bots.append(start_bot(name, *(("--games", "10") if name == "h-north" else ())))
        held = bots[list(strategies).index("h-north")]

        def create(name: str, preset: str, entrants: dict[str, str], deals: int) -> str:
            args = ["tournament", "create", "--server", listen, "--name", name, "--game", preset,
                    "--deals", str(deals), "--key", organiser, *CLOCK]
            for entrant in entrants:
                args += ["--entrant", entrant]
            out = ok(boneyard(*args))
            found = re.search(r"^tournament (\S+)$", out, re.MULTILINE)
            assert found, out
            return found.group(1)

        forty_two = create("42 duplicate", "texas42", FORTY_TWO_ENTRANTS, 16)
        moon = create("moon duplicate", "moon", MOON_ENTRANTS, 4)
        for tournament_id in (forty_two, moon):
            ok(boneyard("tournament", "run", tournament_id, "--detach", "--server", listen, "--key", organiser))

        # Kill the server in the middle of the Texas 42 tournament.
        channel = grpc.insecure_channel(listen)
        wait_until(lambda: held.poll() is not None, "h-north's bot to play its 10 games", timeout=600)
        assert held.returncode == 0, f"h-north's bot exited with {held.returncode}"
        server.kill()
        channel.close()
        time.sleep(1.0)
        server = ServerProcess.start(log, url, listen)
        channel = grpc.insecure_channel(listen)
        middle = tournament_of(channel, forty_two).tournament
        assert 10 <= middle.games_finished < middle.games_total == 32, "killed too late to tell"
        bots[bots.index(held)] = start_bot("h-north")

        # `tournament run` follows the (already started) tournament to its end and prints the
        # standings.
        run = boneyard("tournament", "run", forty_two, "--server", listen, "--key", organiser, timeout=300)
        out = ok(run)
        for entrant in FORTY_TWO_ENTRANTS:
            assert entrant in out
        wait_until(
            lambda: tournament_of(channel, moon).tournament.status
            == competition_pb2.TOURNAMENT_STATUS_FINISHED,
            "the Moon tournament",
            timeout=300,
        )

        archive = archive_pb2_grpc.ArchiveServiceStub(channel)
        for tournament_id, entrants in ((forty_two, FORTY_TWO_ENTRANTS), (moon, MOON_ENTRANTS)):
            done = tournament_of(channel, tournament_id)
            assert done.tournament.status == competition_pb2.TOURNAMENT_STATUS_FINISHED
            assert done.tournament.games_finished == done.tournament.games_total
            records = {
                g.game_id: archive.GetRecord(archive_pb2.GetRecordRequest(game_id=g.game_id), timeout=30).record
                for g in done.games
            }
            # every game verifies with `boneyard verify`
            files = []
            for game_id, record in records.items():
                path = tmp_path / f"{game_id}.json"
                path.write_bytes(dump_record(record))
                files.append(str(path))
            verified = ok(boneyard("verify", *files))
            assert verified.count(": valid: game ") == len(files)

            # the playings of a deal got the same hands
            hands_of = {}
            for g in done.games:
                first_deal = next(
                    e.event.hand_dealt.deal for e in records[g.game_id].events
                    if e.event.WhichOneof("kind") == "hand_dealt"
                )
                hands = tuple(tuple(h.tiles) for h in first_deal.hands)
                assert hands_of.setdefault(g.deal, hands) == hands

            # the standings are the archive's results
            totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
            pairs: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
            for g in done.games:
                summary = verify_record(records[g.game_id]).summary
                assert summary is not None
                teams = summary.rules.teams
                for team, seats in enumerate(teams):
                    scored = summary.scores[team]
                    against = sum(summary.scores) - scored
                    won = int(summary.winner == team)
                    for seat in seats:
                        t = totals[g.seats[seat]]
                        t[0] += 1
                        t[1] += won
                        t[2] += scored
                        t[3] += against
                    if len(seats) > 1:
                        p = pairs[" & ".join(sorted(g.seats[s] for s in seats))]
                        p[0] += 1
                        p[1] += won
                        p[2] += scored
            standings = {s.name: [s.games, s.wins, s.score_for, s.score_against] for s in done.individuals}
            assert standings == dict(totals)
            assert set(standings) == set(entrants)
            partnerships = {p.name: [p.games, p.wins, p.score_for] for p in done.partnerships}
            assert partnerships == dict(pairs)
            ordinals = [s.ordinal for s in done.individuals]
            assert ordinals == sorted(ordinals, reverse=True)

            printed = ok(boneyard("tournament", "standings", tournament_id, "--server", listen))
            for entrant in entrants:
                assert entrant in printed
        channel.close()

        for bot in bots:
            assert bot.poll() is None, f"a bot process exited with {bot.returncode}"
    finally:
        for bot in bots:
            if bot.poll() is None:
                os.killpg(bot.pid, 15)
        for bot in bots:
            try:
                bot.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(bot.pid, 9)
        server.kill()
    for name in {**FORTY_TWO_ENTRANTS, **MOON_ENTRANTS}:
        assert "Traceback" not in (tmp_path / f"bot-{name}.log").read_text(), name
