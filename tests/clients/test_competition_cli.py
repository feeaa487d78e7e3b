"""End to end: bot competitions from the command line, against a real server.

Every piece is a real process, as in ``test_end_to_end.py``: ``boneyard-server`` on a throwaway
SQLite file, ``boneyard-server admin`` on that same file (the operator, on the server's machine), and
``boneyard bot --key`` / ``boneyard tournament ...`` processes of the venv running the tests.

What the commands print is checked against what the server says over the API (GetGame,
GetTournament, WatchSeats).
"""

from __future__ import annotations

import functools
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from boneyard.api.v1 import competition_pb2, events_pb2, game_pb2
from boneyard.clients.api import Client, time_control
from tests.clients.cli_helpers import (
    Background,
    run_admin,
    run_cli,
)
from tests.server.process_helpers import ServerProcess, free_port

KEY_LINE = re.compile(r"^key: (?P<key>byk_\S+)$", re.MULTILINE)
STARTED = re.compile(
    r"^game (?P<id>[0-9a-f-]{36}) started: seat (?P<seat>\d+) of (?P<preset>\S+)"
    r"(?: \(tournament (?P<tournament>[0-9a-f-]+)\))?$"
)
OVER = re.compile(r"^game (?P<id>[0-9a-f-]{36}) over: (?P<final>.*)$")
FINAL = re.compile(r"^(?P<teams>.*?)(?:; (?P<side>team|seat) (?P<winner>\d+) wins)?$")
TEAM_PART = re.compile(
    r"^(?:team (?P<team>\d+) \(seats (?P<seats>[\d ]+)\)|seat (?P<seat>\d+)): (?P<score>-?\d+)$"
)
"""A side of the final score: a team and its seats, or a seat that plays for itself."""
TOURNAMENT_LINE = re.compile(r"^tournament (?P<id>[0-9a-f-]{36})$", re.MULTILINE)
GAMES_LINE = re.compile(r"^(?P<games>\d+) games: ", re.MULTILINE)

FINISHED = game_pb2.GAME_STATUS_FINISHED


# --- the server and its accounts ----------------------------------------------------------


@dataclass
class Site:
    """A running server and the database URL its operator's commands use."""

    server: ServerProcess
    database_url: str

    @property
    def address(self) -> str:
        return self.server.address

    @functools.cached_property
    def organiser(self) -> str:
        """The key of a player's account that organises the tests' tournaments."""
        return self.create_bot(unique("organiser"), "player")

    def create_bot(self, name: str, kind: str = "bot") -> str:
        """``boneyard-server admin create-bot NAME`` (or ``create-player``): the key it printed."""
        done = run_admin(
            f"create-{kind}", "--database-url", self.database_url, name, timeout=60
        )
        assert done.returncode == 0, done.explain()
        keys = KEY_LINE.findall(done.stdout)
        assert len(keys) == 1, done.explain()
        return str(keys[0])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One server on a fresh SQLite file for the module's tests (each uses accounts of its own)."""
    d = tmp_path_factory.mktemp("competition-server")
    url = f"sqlite:///{d / 'boneyard.db'}"
    with ServerProcess.start(d / "server.log", url) as running:
        yield Site(running, url)


@pytest.fixture(scope="module")
def api(site: Site) -> Iterator[Client]:
    with Client(site.address) as client:
        yield client


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# --- what the commands print -------------------------------------------------------------


@dataclass(frozen=True)
class Played:
    """What one ``boneyard bot --key`` process printed about one game."""

    game_id: str
    seat: int
    tournament: str | None
    scores: list[int] | None
    winner: int | None


def games_played(lines: Sequence[str]) -> dict[str, Played]:
    """The games a ``bot --key`` process said it started, with their final score if it said
    they ended."""
    started: dict[str, Played] = {}
    for line in lines:
        if m := STARTED.match(line):
            assert m["id"] not in started, f"game {m['id']} started twice:\n" + "\n".join(lines)
            started[m["id"]] = Played(m["id"], int(m["seat"]), m["tournament"], None, None)
        elif m := OVER.match(line):
            assert m["id"] in started, f"game {m['id']} over before it started"
            final = FINAL.match(m["final"])
            assert final, line
            scores, seats = [], []
            for i, part in enumerate(final["teams"].split(", ")):
                side = TEAM_PART.match(part)
                assert side and (side["seat"] is not None or int(side["team"]) == i), line
                seats.append(side["seat"])
                scores.append(int(side["score"]))
            winner = int(final["winner"]) if final["winner"] is not None else None
            if winner is not None and final["side"] == "seat":
                winner = seats.index(str(winner))
            p = started[m["id"]]
            started[m["id"]] = Played(p.game_id, p.seat, p.tournament, scores, winner)
    return started


def games_said_over(
    bot: Background, games: Iterable[str], timeout: float = 60.0
) -> dict[str, Played]:
    """``games_played`` of ``bot`` once it has said each of ``games`` ended (or after
    ``timeout`` seconds, a hang guard): a bot prints a game's end when its own stream tells
    it, in its own time after the tournament's end."""
    wanted = set(games)
    deadline = time.monotonic() + timeout
    while True:
        said = games_played(bot.lines)
        ended = {g for g, p in said.items() if p.scores is not None}
        if wanted <= ended or time.monotonic() > deadline:
            return said
        time.sleep(0.1)


def table_rows(stdout: str, title: str | None) -> list[list[str]]:
    """The body rows of the rich table titled ``title`` (``None``: the first table), cells
    stripped."""
    lines = stdout.splitlines()
    start = (
        -1 if title is None else next(i for i, line in enumerate(lines) if line.strip() == title)
    )
    rows: list[list[str]] = []
    body = False
    for line in lines[start + 1 :]:
        if line.startswith("┡"):
            body = True
            continue
        if line.startswith("└"):
            break
        if body and line.startswith("│"):
            rows.append([cell.strip() for cell in line.strip("│").split("│")])
    return rows


# --- 1. accounts ---------------------------------------------------------------------------


def test_admin_create_bot_shows_the_key_once_and_a_name_only_once(site: Site, api: Client) -> None:
    name = unique("alpha")
    done = run_admin("create-bot", "--database-url", site.database_url, name, timeout=60)
    assert done.returncode == 0, done.explain()
    keys = KEY_LINE.findall(done.stdout)
    assert len(keys) == 1 and done.stdout.count(keys[0]) == 1, done.explain()
    assert "only this once" in done.stdout and "hash" in done.stdout, done.explain()

    again = run_admin("create-bot", "--database-url", site.database_url, name, timeout=60)
    assert again.returncode == 1, again.explain()
    assert f"an account named {name!r} exists already" in again.stderr, again.explain()
    assert "byk_" not in again.stdout + again.stderr

    person = unique("person")
    made = run_admin("create-player", "--database-url", site.database_url, person)
    assert made.returncode == 0, made.explain()

    listed = run_admin("accounts", "--database-url", site.database_url, timeout=60)
    assert listed.returncode == 0, listed.explain()
    kinds = {row[0]: row[1] for row in table_rows(listed.stdout, None)}
    assert kinds.get(name) == "bot" and kinds.get(person) == "player", listed.explain()
    assert "byk_" not in listed.stdout, "a key is never shown again"

    # The key printed is one the server knows: WatchSeats takes it (and has no seat to tell).
    call = api.watch_seats(keys[0])
    with pytest.raises(grpc.RpcError) as waited:
        next(iter(_with_deadline(call, 1.5)))
    assert waited.value.code() == grpc.StatusCode.CANCELLED  # cut by us, not refused


def _with_deadline(call: Iterator[object], seconds: float) -> Iterator[object]:
    timer = threading.Timer(seconds, call.cancel)  # type: ignore[attr-defined]
    timer.start()
    try:
        yield from call
    finally:
        timer.cancel()


@pytest.mark.parametrize(
    "name",
    ["", "x" * 101, "tab\there", "new\nline", " padded"],
    ids=["empty", "101 characters", "tab", "newline", "leading space"],
)
def test_admin_refuses_a_name_that_cannot_name_an_account(site: Site, name: str) -> None:
    done = run_admin("create-bot", "--database-url", site.database_url, "--", name)
    assert done.returncode == 2, done.explain()
    assert "Invalid value for NAME" in done.stderr, done.explain()
    assert "byk_" not in done.stdout


def test_the_clients_cli_has_no_admin_commands_they_belong_to_the_server() -> None:
    """Clients speak only the API: the operator's commands are ``boneyard-server admin``."""
    done = run_cli("admin", "accounts", timeout=60)
    assert done.returncode == 2, done.explain()
    assert "No such command 'admin'" in done.stderr, done.explain()
    listed = run_cli("--help", timeout=60)
    assert listed.returncode == 0 and " admin " not in listed.stdout, listed.explain()


def test_bot_with_an_unknown_key_is_unauthenticated(site: Site) -> None:
    done = run_cli("bot", "--server", site.address, "--key", "byk_" + "x" * 43, timeout=60)
    assert done.returncode == 1, done.explain()
    assert "UNAUTHENTICATED" in done.stdout, done.explain()
    assert "boneyard-server admin create-bot" in done.stdout, done.explain()
    assert "Traceback" not in done.stderr, done.explain()


# --- 2. seeking a table ---------------------------------------------------------------------


CLOCK = ["--per-move-ms", "5000", "--bank-ms", "20000", "--policy", "auto_play"]


@pytest.mark.parametrize(
    ("preset", "clock"),
    [("texas42", []), ("moon", []), ("texas42", CLOCK)],
    ids=["texas42", "moon", "texas42 with a clock"],
)
def test_seekers_meet_at_one_table_and_play_it_to_the_end(
    site: Site,
    api: Client,
    background: Callable[..., Background],
    preset: str,
    clock: list[str],
) -> None:
    players = 4 if preset == "texas42" else 3
    names = [unique(f"seeker{i}") for i in range(players)]
    keys = [site.create_bot(name) for name in names]
    bots = [
        background(
            "bot",
            "--server",
            site.address,
            "--key",
            key,
            "--seek",
            preset,
            *clock,
            "--games",
            "1",
            "--seed",
            str(i),
        )
        for i, key in enumerate(keys)
    ]
    results = [bot.wait() for bot in bots]
    played = []
    for done in results:
        assert done.returncode == 0, done.explain()
        games = games_played(done.lines)
        assert len(games) == 1, done.explain()
        (game,) = games.values()
        assert game.scores is not None, f"the game never ended:\n{done.explain()}"
        assert done.lines[-1] == "done: 1 games over", done.explain()
        played.append(game)

    game_ids = {p.game_id for p in played}
    assert len(game_ids) == 1, f"the seekers sat at different tables: {game_ids}"
    assert sorted(p.seat for p in played) == list(range(players))
    assert len({(tuple(p.scores or ()), p.winner) for p in played}) == 1, played

    summary = api.game(game_ids.pop())
    assert summary.status == FINISHED
    assert summary.rules.preset == preset
    by_seat = {p.seat: name for p, name in zip(played, names, strict=True)}
    assert [s.player_name for s in summary.seats] == [by_seat[s] for s in range(players)]
    assert all(s.account for s in summary.seats)
    assert list(summary.scores) == played[0].scores
    assert summary.winner == played[0].winner
    if clock:
        tc = summary.time_control
        assert (tc.per_move_ms, tc.bank_ms) == (5000, 20000)
        assert tc.policy == events_pb2.TIMEOUT_POLICY_AUTO_PLAY
    else:
        assert not summary.HasField("time_control")


def test_bots_play_the_seats_a_game_reserved_for_their_accounts(
    site: Site, api: Client, background: Callable[..., Background]
) -> None:
    names = [unique(f"reserved{i}") for i in range(3)]
    keys = [site.create_bot(name) for name in names]
    game = api.create_game(
        "moon",
        name="reserved",
        time_control=time_control(30_000, 60_000, "forfeit"),
        reservations={seat: name for seat, name in enumerate(names)},
        key=site.create_bot(unique("organiser"), "player"),
    )
    assert [s.player_name for s in game.seats] == names and all(s.account for s in game.seats)
    bots = [
        background("bot", "--server", site.address, "--key", key, "--games", "1") for key in keys
    ]
    for seat, bot in enumerate(bots):
        done = bot.wait()
        assert done.returncode == 0, done.explain()
        said = games_played(done.lines)
        assert list(said) == [game.game_id], done.explain()
        assert said[game.game_id].seat == seat and said[game.game_id].tournament is None
        assert said[game.game_id].scores is not None, done.explain()
    summary = api.game(game.game_id)
    assert summary.status == FINISHED
    assert summary.time_control.policy == events_pb2.TIMEOUT_POLICY_FORFEIT


def test_reserving_seats_needs_a_key(site: Site, api: Client) -> None:
    name = unique("unasked")
    site.create_bot(name)
    with pytest.raises(grpc.RpcError) as refused:
        api.create_game("moon", reservations={0: name})
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_a_seek_of_rules_that_do_not_exist_is_refused(site: Site) -> None:
    key = site.create_bot(unique("lost"))
    done = run_cli(
        "bot", "--server", site.address, "--key", key, "--seek", "texas42",
        "--option", "marks_to_win=0", "--games", "1", timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.explain()
    assert "INVALID_ARGUMENT" in done.stdout, done.explain()


# --- 3. a tournament --------------------------------------------------------------------------


def _entrants(site: Site, prefix: str, count: int = 4) -> dict[str, str]:
    """``count`` bot accounts: name -> key."""
    names = [unique(f"{prefix}{i}") for i in range(count)]
    return {name: site.create_bot(name) for name in names}


def _create_tournament(
    site: Site, name: str, entrants: dict[str, str], deals: int, *more: str
) -> tuple[str, int]:
    organiser = site.organiser
    args = ["tournament", "create", "--server", site.address, "--name", name, "--game", "texas42"]
    for entrant in entrants:
        args += ["--entrant", entrant]
    done = run_cli(*args, "--deals", str(deals), "--key", organiser, *more, timeout=60)
    assert done.returncode == 0, done.explain()
    tid = TOURNAMENT_LINE.search(done.stdout)
    total = GAMES_LINE.search(done.stdout)
    assert tid and total, done.explain()
    return tid["id"], int(total["games"])


def _assert_standings_show_everyone(stdout: str, entrants: Sequence[str]) -> None:
    individuals = table_rows(stdout, "individuals")
    names = [row[1] for row in individuals]
    assert sorted(names) == sorted(entrants), stdout
    for i, row in enumerate(individuals, 1):
        place, _name, rating, uncertainty, ordinal, games, wins, score_for, against = row
        assert int(place) == i
        # Each figure is printed rounded to 0.01: rating - 3 * uncertainty, made of the rounded
        # figures, may be 0.005 + 3 * 0.005 from the ordinal, itself 0.005 from its print.
        assert float(ordinal) == pytest.approx(float(rating) - 3 * float(uncertainty), abs=0.026)
        assert int(games) > 0 and 0 <= int(wins) <= int(games)
        assert int(score_for) >= 0 and int(against) >= 0
    ordinals = [float(row[4]) for row in individuals]
    assert ordinals == sorted(ordinals, reverse=True), "best first"
    partnerships = table_rows(stdout, "partnerships")
    assert partnerships, stdout
    for row in partnerships:
        members = row[1].split(" & ")
        assert len(members) == 2 and set(members) <= set(entrants), row


def test_tournament_create_run_and_standings(
    site: Site, api: Client, background: Callable[..., Background]
) -> None:
    entrants = _entrants(site, "entrant")
    bots = {
        name: background("bot", "--server", site.address, "--key", key, "--seed", str(i))
        for i, (name, key) in enumerate(entrants.items())
    }
    title = unique("cup")
    tid, total = _create_tournament(site, title, entrants, deals=2)
    assert total > 0

    listed = run_cli("tournament", "list", "--server", site.address, timeout=60)
    assert listed.returncode == 0, listed.explain()
    assert tid in listed.stdout and title in listed.stdout, listed.explain()

    organiser = site.organiser
    ran = run_cli("tournament", "run", tid, "--server", site.address, "--key", organiser)
    assert ran.returncode == 0, ran.explain() + "\n" + "\n".join(b.explain() for b in bots.values())
    _assert_standings_show_everyone(ran.stdout, list(entrants))

    got = api.tournament(tid, timeout=30)
    t = got.tournament
    assert t.status == competition_pb2.TOURNAMENT_STATUS_FINISHED
    assert t.games_finished == t.games_total == total == len(got.games)
    assert t.duplicate and t.deals == 2 and sorted(t.entrants) == sorted(entrants)
    assert all(g.status == FINISHED for g in got.games)

    # Run again: it is over, so there is nothing to wait for (--detach: not even the standings).
    again = run_cli(
        "tournament", "run", tid, "--detach", "--server", site.address, "--key", organiser
    )
    assert again.returncode == 0, again.explain()
    assert f"tournament {tid}: " in again.stdout and "finished" in again.stdout, again.explain()
    assert "individuals" not in again.stdout, again.explain()

    standings = run_cli("tournament", "standings", tid, "--games", "--server", site.address)
    assert standings.returncode == 0, standings.explain()
    _assert_standings_show_everyone(standings.stdout, list(entrants))
    games_rows = table_rows(standings.stdout, "games")
    assert {row[4] for row in games_rows} == {g.game_id for g in got.games}
    assert [row[1] for row in table_rows(standings.stdout, "individuals")] == [
        s.name for s in got.individuals
    ]

    # Every bot said it played exactly the games the tournament seated its account in.
    for name, bot in bots.items():
        seated = {g.game_id: list(g.seats).index(name) for g in got.games if name in g.seats}
        said = games_said_over(bot, seated)
        assert bot.proc.poll() is None, f"{name}'s bot stopped:\n{bot.explain()}"
        assert {gid: p.seat for gid, p in said.items()} == seated, bot.explain()
        assert all(p.tournament == tid and p.scores is not None for p in said.values()), (
            bot.explain()
        )


def test_bots_with_concurrency_play_a_tournament_of_games_at_once_to_the_end(
    site: Site, api: Client, background: Callable[..., Background]
) -> None:
    """Four deals at once (eight games an entrant), each bot following them all on one turn
    stream and deciding up to four turns at once."""
    entrants = _entrants(site, "many")
    tid, total = _create_tournament(
        site, unique("at once"), entrants, 6, "--max-games-per-entrant", "8"
    )
    made = api.tournament(tid, timeout=30).tournament
    assert made.max_games_per_entrant == 8
    bots = {
        name: background(
            "bot", "--server", site.address, "--key", key, "--seed", str(i), "--concurrency", "4"
        )
        for i, (name, key) in enumerate(entrants.items())
    }
    organiser = site.organiser
    ran = run_cli("tournament", "run", tid, "--server", site.address, "--key", organiser)
    assert ran.returncode == 0, ran.explain() + "\n" + "\n".join(b.explain() for b in bots.values())
    assert "up to 8 games an entrant at once" in ran.stdout, ran.explain()
    _assert_standings_show_everyone(ran.stdout, list(entrants))
    got = api.tournament(tid, timeout=30)
    assert got.tournament.games_finished == got.tournament.games_total == total == 12
    # Every bot said it started and ended every game the tournament seated it in, once.
    for name, bot in bots.items():
        seated = {g.game_id: list(g.seats).index(name) for g in got.games if name in g.seats}
        said = games_said_over(bot, seated)
        assert bot.proc.poll() is None, f"{name}'s bot stopped:\n{bot.explain()}"
        assert {gid: p.seat for gid, p in said.items()} == seated, bot.explain()
        assert all(p.tournament == tid and p.scores is not None for p in said.values()), (
            bot.explain()
        )


def test_the_games_an_entrant_plays_at_once_are_bounded_at_the_command_line(site: Site) -> None:
    entrants = _entrants(site, "bound")
    args = ["tournament", "create", "--server", site.address, "--name", "too many at once"]
    args += ["--game", "texas42", "--deals", "2", "--key", site.organiser]
    for entrant in entrants:
        args += ["--entrant", entrant]
    refused = run_cli(*args, "--max-games-per-entrant", "65", timeout=60)
    assert refused.returncode == 2 and "--max-games-per-entrant" in refused.stderr, (
        refused.explain()
    )
    one = run_cli(*args, "--max-games-per-entrant", "1", timeout=60)
    assert one.returncode == 0 and "up to 1 game an entrant at once" in one.stdout, one.explain()
    bot = run_cli("bot", "--server", site.address, "--key", "byk_x", "--concurrency", "0")
    assert bot.returncode == 2 and "--concurrency" in bot.stderr, bot.explain()


def test_tournament_cancel_stops_it_for_its_organiser_only(site: Site) -> None:
    entrants = _entrants(site, "cancel")
    tid, _ = _create_tournament(site, "to be cancelled", entrants, deals=2)
    someone = site.create_bot(unique("someone"), "player")
    refused = run_cli("tournament", "cancel", tid, "--server", site.address, "--key", someone)
    assert refused.returncode == 1 and "PERMISSION_DENIED" in refused.stdout, refused.explain()
    done = run_cli("tournament", "cancel", tid, "--server", site.address, "--key", site.organiser)
    assert done.returncode == 0 and "cancelled" in done.stdout, done.explain()
    again = run_cli("tournament", "cancel", tid, "--server", site.address, "--key", site.organiser)
    assert again.returncode == 1 and "FAILED_PRECONDITION" in again.stdout, again.explain()
    # run follows a tournament that is over at once, and prints its (empty) standings
    ran = run_cli("tournament", "run", tid, "--server", site.address, "--key", site.organiser)
    assert ran.returncode == 0 and "cancelled" in ran.stdout, ran.explain()


def test_tournament_run_follows_through_a_server_restart(
    tmp_path: Path, background: Callable[..., Background]
) -> None:
    port = free_port()
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    log = tmp_path / "server.log"
    listen = f"127.0.0.1:{port}"
    servers = [ServerProcess.start(log, url, listen)]
    try:
        site = Site(servers[0], url)
        entrants = _entrants(site, "restart")
        seeded = list(enumerate(entrants.items()))
        # Every game seats every entrant: with the last entrant's bot held back until after
        # the restart, no game can finish before it, so the kill is surely mid-tournament.
        bots = {
            name: background("bot", "--server", listen, "--key", key, "--seed", str(i))
            for i, (name, key) in seeded[:-1]
        }
        tid, total = _create_tournament(site, "through a restart", entrants, deals=3)
        run = background("tournament", "run", tid, "--server", listen, "--key", site.organiser)
        with Client(listen) as watcher:
            deadline = time.monotonic() + 120
            while not any(g.game_id for g in watcher.tournament(tid, timeout=60).games):
                assert time.monotonic() < deadline, "the tournament did not get going"
                time.sleep(0.1)
        servers[-1].kill()  # SIGKILL, mid-tournament
        # The server stays down until the run has said so: a short outage is hidden by the
        # channel's own retries, and the run would then have nothing to tell.
        deadline = time.monotonic() + 60
        while not any("server unavailable" in line for line in run.lines):
            assert run.proc.poll() is None, run.explain()
            assert time.monotonic() < deadline, "the run never saw the server go\n" + run.explain()
            time.sleep(0.1)
        servers.append(ServerProcess.start(log, url, listen))
        last, (last_name, last_key) = seeded[-1]
        bots[last_name] = background(
            "bot", "--server", listen, "--key", last_key, "--seed", str(last)
        )
        done = run.wait()
        assert done.returncode == 0, done.explain() + "\n--- server:\n" + log.read_text()[-5000:]
        assert "server unavailable" in done.stdout, done.explain()
        _assert_standings_show_everyone(done.stdout, list(entrants))
        with Client(listen) as api:
            got = api.tournament(tid, timeout=30)
            t = got.tournament
            assert t.status == competition_pb2.TOURNAMENT_STATUS_FINISHED
            assert t.games_finished == t.games_total == total
        # The bots lived through the restart; each game was started once in each of them
        # (WatchSeats, reopened, tells the unfinished seats again) and played to its end.
        for name, bot in bots.items():
            seated = {g.game_id for g in got.games if name in g.seats}
            said = games_said_over(bot, seated)
            assert bot.proc.poll() is None, f"{name}'s bot stopped:\n{bot.explain()}"
            assert set(said) == seated, bot.explain()
            assert all(p.scores is not None for p in said.values()), bot.explain()
        assert any("reconnecting" in bot.stderr_text() for bot in bots.values()), (
            "no bot noticed the server was gone"
        )
    finally:
        for s in servers:
            s.kill()


def test_a_swiss_tournament_from_the_command_line_shows_its_rounds_byes_and_tie_breaks(
    site: Site, api: Client, background: Callable[..., Background]
) -> None:
    """Three entrants (one sits out each round), two rounds of one deal a pairing, played
    twice: ``create --format swiss --rounds 2``, ``run``, then ``show``."""
    entrants = _entrants(site, "swiss", count=3)
    bots = {
        name: background("bot", "--server", site.address, "--key", key, "--seed", str(i))
        for i, (name, key) in enumerate(entrants.items())
    }
    args = ["tournament", "create", "--server", site.address, "--name", unique("swiss")]
    args += ["--game", "texas42", "--format", "swiss", "--rounds", "2", "--key", site.organiser]
    for entrant in entrants:
        args += ["--entrant", entrant]
    made = run_cli(*args, timeout=60)
    assert made.returncode == 0, made.explain()
    assert "Swiss, 2 rounds (0 paired), 1 deal a pairing, each played twice" in made.stdout
    tid, total = TOURNAMENT_LINE.search(made.stdout), GAMES_LINE.search(made.stdout)
    assert tid and total and int(total["games"]) == 4, made.explain()
    ran = run_cli("tournament", "run", tid["id"], "--server", site.address, "--key", site.organiser)
    assert ran.returncode == 0, ran.explain() + "\n" + "\n".join(b.explain() for b in bots.values())
    shown = run_cli("tournament", "show", tid["id"], "--server", site.address, timeout=60)
    assert shown.returncode == 0, shown.explain()
    got = api.tournament(tid["id"], timeout=30)
    assert got.tournament.status == competition_pb2.TOURNAMENT_STATUS_FINISHED
    rounds = table_rows(shown.stdout, "rounds")
    # Each round: one pairing and one bye, as the server says.
    expected = []
    for r in got.rounds:
        for p in r.pairings:
            marks = f"{p.first_marks}-{p.second_marks}"
            expected.append([str(r.round), p.first, p.second, marks])
        expected.append([str(r.round), r.bye, "(bye)", ""])
    assert [row[:4] for row in rounds] == expected, shown.stdout
    assert len({r.bye for r in got.rounds}) == 2, "no second bye"
    title = "standings (score, then Buchholz, then marks difference, then name)"
    table = table_rows(shown.stdout, title)
    assert [row[1] for row in table] == [s.name for s in got.swiss_standings], shown.stdout
    assert sum(float(row[2]) for row in table) == 2 + 2  # a point a pairing, one a bye
    games = table_rows(shown.stdout, "games")  # #, round, deal, rotation, seats, game ...
    assert {row[5] for row in games} == {g.game_id for g in got.games}, shown.stdout
    assert sorted(int(row[1]) for row in games) == [1, 1, 2, 2]


def test_a_swiss_tournament_is_checked_at_the_command_line_and_refused_for_moon(
    site: Site,
) -> None:
    entrants = _entrants(site, "swissbad", count=3)
    args = ["tournament", "create", "--server", site.address, "--name", "bad swiss"]
    args += ["--key", site.organiser, "--format", "swiss"]
    for entrant in entrants:
        args += ["--entrant", entrant]
    no_rounds = run_cli(*args, "--game", "texas42", timeout=60)
    assert no_rounds.returncode == 2 and "--rounds" in no_rounds.stderr, no_rounds.explain()
    too_many = run_cli(*args, "--game", "texas42", "--rounds", "33", timeout=60)
    assert too_many.returncode == 2 and "--rounds" in too_many.stderr, too_many.explain()
    moon = run_cli(*args, "--game", "moon", "--rounds", "2", timeout=60)
    assert moon.returncode == 1 and "INVALID_ARGUMENT" in moon.stdout, moon.explain()
    assert "partnership" in moon.stdout, moon.explain()
