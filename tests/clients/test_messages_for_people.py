"""What the terminal client says to a person (issue 34): a refused move in the rule's words and
without ids or versions; no server, or a TLS mismatch, with what to do about it; ``help`` or
``?`` at every prompt; empty listings that say so; Moon tables without count stars or teams;
no line wrapped mid-phrase at 80 columns. Each test is named after what the person reads.

Against real servers (``boneyard-server`` processes), with the real ``boneyard`` command, at
80×24 in a pseudo-terminal read through a terminal emulator where a screen is concerned."""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from rich.console import Console

from boneyard.api.v1 import actions_pb2, rules_pb2
from boneyard.clients.api import Client, refusal
from boneyard.clients.choices import choice_label, help_lines, parse_choice
from boneyard.clients.table import TableInfo, table_screen
from tests.clients.cli_helpers import run_cli
from tests.clients.test_choices import DECLARES, MOON_BIDS, PLAYS, WIDOW
from tests.clients.test_table_screen import _moon_view_after, bidding_view
from tests.clients.test_terminal_table import Terminal, texts
from tests.clients.test_tls import self_signed
from tests.server.process_helpers import ServerProcess, free_port

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    d = tmp_path_factory.mktemp("people-server")
    with ServerProcess.start(d / "server.log", f"sqlite:///{d / 'boneyard.db'}") as running:
        yield running


@pytest.fixture(scope="module")
def empty_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server nothing is ever made on: every listing of it is empty."""
    d = tmp_path_factory.mktemp("empty-server")
    with ServerProcess.start(d / "server.log", f"sqlite:///{d / 'boneyard.db'}") as running:
        yield running


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    """A server that speaks TLS only, with a self-signed certificate (and that certificate)."""
    d = tmp_path_factory.mktemp("tls-server")
    cert, key = self_signed(d)
    with ServerProcess.start(
        d / "server.log",
        f"sqlite:///{d / 'boneyard.db'}",
        extra_args=["--tls-cert", str(cert), "--tls-key", str(key)],
        wait=False,
    ) as running:
        running.wait_for_line()
        yield running, cert


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[..., Terminal]]:
    made: list[Terminal] = []

    def spawn(*args: str) -> Terminal:
        t = Terminal(args, tmp_path / f"terminal-{len(made)}.log", tmp_path / "seats.json")
        made.append(t)
        return t

    yield spawn
    for t in made:
        t.close()


def _shown_after(t: Terminal, prompt: str) -> str:
    """What the program wrote up to its next ``prompt`` (fed to the screen as well)."""
    t.child.expect_exact(prompt)
    written = t.child.before + t.child.after
    t.feed(written)
    return written


# --- a refused move --------------------------------------------------------------------------


def test_a_refused_move_names_the_rule_without_the_game_id_or_version(
    server: ServerProcess, terminal: Callable[..., Terminal]
) -> None:
    t = terminal("play", "--server", server.address, "--house-bots", "3")
    t.start()
    assert t.next_question()
    t.answer("29")
    assert t.next_question()
    told = " ".join(t.since_answer.split())
    # The rule in the reason's words, then the engine's reason: the lowest bid, or, when the
    # three bots passed and this seat deals, the stuck dealer's bid (the deal is the server's).
    assert re.search(
        r"refused — (bid too low: the lowest bid is 30, not 29"
        r"|bid not allowed: seat 0 is the dealer after 3 passes and must bid 30, not 29)",
        told,
    ), t.text()
    assert t.game_id not in told
    assert not re.search(r"version \d+:", told), told


def test_a_refusal_for_people_drops_the_game_and_version_the_server_quotes(
    server: ServerProcess,
) -> None:
    """The server's message quotes the game and the version (for logs and programs, as every
    error of the server does); the metadata carries both, and the words a person reads drop
    them."""
    with Client(server.address) as client:
        game = client.create_game("texas42", house_bots={1: "random", 2: "random", 3: "random"})
        _, token = client.take_seat(game.game_id, "tester", 0)
        view = client.view(game.game_id, token)
        while not (view.HasField("turn") and view.turn == view.seat and view.legal_actions):
            view = client.view(game.game_id, token)  # the bots before this seat
        too_low = actions_pb2.Action(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_POINTS, amount=1))
        with pytest.raises(grpc.RpcError) as caught:
            client.submit(game.game_id, token, view.version, too_low)
    answer = refusal(caught.value)
    assert answer.code == grpc.StatusCode.FAILED_PRECONDITION
    assert answer.reason in ("BID_TOO_LOW", "BID_NOT_ALLOWED")
    assert answer.message.startswith(f"game {game.game_id} version {view.version}: ")
    assert "not 1" in answer.for_people()
    assert game.game_id not in answer.for_people() and "version" not in answer.for_people()
    assert answer.metadata["game_id"] == game.game_id
    assert answer.metadata["version"] == str(view.version)


# --- no server, or not the transport it speaks -------------------------------------------

PATIENT = ("--connect-timeout", "60")
"""What the advice finds at an address (a TLS handshake, a health check in the clear) must not
depend on the machine's speed: a probe that ran out of the default 2 s on a loaded machine
would find nothing there."""


def test_no_server_says_start_one_with_make_run_or_pass_server() -> None:
    address = f"127.0.0.1:{free_port()}"
    for command in (["games"], ["presets"], ["archive"], ["tournament", "list"]):
        done = run_cli(*command, "--server", address)
        assert done.returncode == 1, done.explain()
        assert (
            f"no Boneyard server at {address} — start one with `make run` (or `boneyard-server`), "
            "or pass --server HOST:PORT"
        ) in done.stderr, done.explain()
        assert "UNAVAILABLE" not in done.stderr and "Traceback" not in done.stderr


@needs_openssl
def test_a_tls_server_reached_without_tls_says_add_tls_and_its_ca(
    tls_server: tuple[ServerProcess, Path],
) -> None:
    server, _ = tls_server
    done = run_cli(*PATIENT, "games", "--server", server.address)
    assert done.returncode == 1, done.explain()
    assert f"the server at {server.address} speaks TLS with a certificate this machine does not " in (
        done.stderr
    ), done.explain()
    assert "add --tls --ca FILE" in done.stderr
    assert "Socket closed" not in done.stderr


@needs_openssl
def test_a_self_signed_tls_server_reached_without_its_ca_says_pass_ca(
    tls_server: tuple[ServerProcess, Path],
) -> None:
    server, cert = tls_server
    done = run_cli(*PATIENT, "--tls", "games", "--server", server.address)
    assert done.returncode == 1, done.explain()
    assert f"the certificate of the server at {server.address} is not one" in done.stderr
    assert "pass --ca FILE" in done.stderr
    # gRPC's own lines about the failed handshake are not the person's to read
    assert "Handshake failed" not in done.stderr and "ssl_transport_security" not in done.stderr
    reached = run_cli(*PATIENT, "--tls", "--ca", str(cert), "games", "--server", server.address)
    assert reached.returncode == 0, reached.explain()


@needs_openssl
def test_a_server_in_the_clear_reached_with_tls_says_leave_out_tls(
    server: ServerProcess, tls_server: tuple[ServerProcess, Path]
) -> None:
    _, cert = tls_server
    done = run_cli(*PATIENT, "--tls", "--ca", str(cert), "games", "--server", server.address)
    assert done.returncode == 1, done.explain()
    assert f"the server at {server.address} does not speak TLS: leave out --tls" in done.stderr


# --- help at every prompt --------------------------------------------------------------------


def test_help_or_a_question_mark_at_the_table_lists_what_may_be_typed(
    server: ServerProcess, terminal: Callable[..., Terminal]
) -> None:
    t = terminal("play", "--server", server.address, "--house-bots", "3")
    t.start()
    assert t.next_question()
    shown = texts(t.choices)
    for asked in ("?", "help"):
        t.answer(asked)
        assert t.next_question()
        screen = t.text()
        assert f"type a choice's number, 1 to {len(shown)}" in screen, screen
        assert "bid: " in screen, screen
        # (A stuck dealer, the other three having passed, has no pass to be told of.)
        assert ("pass (or p)" in screen) == ("pass" in shown), screen
        assert "resign: give up the game · Ctrl-C: leave the table" in screen, screen
        assert "is none of the choices" not in screen
        assert texts(t.choices) == shown  # the same question, asked again


def test_help_at_the_resign_question_says_what_yes_and_no_do(
    server: ServerProcess, terminal: Callable[..., Terminal]
) -> None:
    t = terminal("play", "--server", server.address, "--house-bots", "3")
    t.start()
    assert t.next_question()
    t.answer("resign")
    question = "resign: your team loses the game now. Sure? (y/N)> "
    _shown_after(t, question)
    t.answer("?")
    assert "y: resign, and your team loses · n or Enter: play on" in _shown_after(t, question)
    t.answer("n")
    assert t.next_question()
    assert "not resigned" in t.text()


def test_help_at_the_leave_question_says_what_resign_and_keep_do(
    server: ServerProcess, terminal: Callable[..., Terminal]
) -> None:
    t = terminal("play", "--server", server.address, "--house-bots", "3")
    t.start()
    assert t.next_question()
    t.child.sendcontrol("c")
    _shown_after(t, "(r/K)> ")
    assert "[r] resign: your team loses now · [k] keep your seat, and come back later" in t.rows
    t.answer("?")
    _shown_after(t, "(r/K)> ")
    # each line whole on a row of its own: none wrapped mid-phrase at 80 columns
    assert "r or resign: give up the game, and your team loses" in t.rows, t.text()
    assert "k or Enter: keep your seat; the game waits for you" in t.rows, t.text()
    assert f"  come back with: boneyard play --resume {t.game_id}" in t.rows, t.text()
    t.answer("k")
    assert t.finish() == 0
    assert f"come back with: boneyard play --resume {t.game_id}" in t.rows, t.text()


def test_help_at_the_replay_prompt_lists_its_keys(server: ServerProcess) -> None:
    made = run_cli(
        "bot", "--server", server.address, "--new", "moon", "--option", "hand_limit=1",
        "--strategy", "random",
    )
    assert made.returncode == 0, made.explain()
    game_id = made.lines[0].removeprefix("game ")
    done = run_cli("replay", game_id, "--server", server.address, stdin="?\nhelp\nq\n")
    assert done.returncode == 0, done.explain()
    keys = "Enter/n next · p previous · t next trick · h next hand · q quit · help/? this"
    assert done.stdout.count(keys) == 3, done.explain()  # at the start, then for ? and help
    assert "? '?'" not in done.stdout


def _examples(line: str, after: str) -> list[str]:
    """The spellings a help line gives after ``after``: ``6-4, 4-6 or 64``."""
    return re.split(r", | or ", line.split(after, 1)[1].split(" (")[0])


def test_the_help_for_a_tile_gives_ways_that_each_play_it() -> None:
    lines = help_lines(PLAYS)
    line = next(x for x in lines if x.startswith("a tile either way round: "))
    assert line == "a tile either way round: 6-4, 4-6 or 64"
    for typed in _examples(line, "round: "):
        assert parse_choice(typed, PLAYS) == PLAYS[0], typed


def test_the_help_for_trump_gives_a_name_that_declares_it() -> None:
    lines = help_lines(DECLARES)
    assert "trump by its name as shown, e.g. sixes (or six)" in lines
    assert parse_choice("sixes", DECLARES) == parse_choice("six", DECLARES)


def test_the_help_at_the_widow_says_lay_out_a_tile_or_leave() -> None:
    lines = help_lines(WIDOW)
    assert "the widow: lay out 6-1 (a tile you give up for it)" in lines
    assert parse_choice("lay out 6-1", WIDOW) == WIDOW[0]
    assert any(x.startswith("leave (or keep): ") for x in lines)
    assert parse_choice("leave", WIDOW) == parse_choice("keep", WIDOW) == WIDOW[2]


def test_the_help_for_bids_gives_bids_that_are_on_the_menu() -> None:
    legal = list(bidding_view().legal_actions)
    lines = help_lines(legal)
    assert all(len(x) <= 80 for x in lines), lines
    said = " ".join(x.strip() for x in lines if x.startswith(("bid: ", "     ")))
    assert said == (
        "bid: 31 to 41, 42 or 1 mark, 84 or 2 marks, plunge 4 marks, splash 2 marks, pass (or p)"
    )
    for typed in ("31", "41", "42", "1 mark", "84", "2 marks", "plunge 4 marks", "p"):
        assert parse_choice(typed, legal) in legal, typed


def test_the_help_for_moon_bids_names_the_moon_as_it_is_typed() -> None:
    lines = help_lines(MOON_BIDS)
    assert "bid: 4 to 7, moon or shoot the moon, pass (or p)" in lines
    assert parse_choice("shoot the moon", MOON_BIDS) == MOON_BIDS[-1]


# --- empty listings --------------------------------------------------------------------------


def test_games_with_nothing_to_list_say_no_games(empty_server: ServerProcess) -> None:
    done = run_cli("games", "--server", empty_server.address)
    assert done.returncode == 0, done.explain()
    assert done.lines == ["no games yet: `boneyard play` starts one"], done.explain()
    finished = run_cli("games", "--server", empty_server.address, "--status", "finished")
    assert finished.lines == ["no finished games"], finished.explain()


def test_tournaments_with_nothing_to_list_say_no_tournaments(empty_server: ServerProcess) -> None:
    done = run_cli("tournament", "list", "--server", empty_server.address)
    assert done.returncode == 0, done.explain()
    assert done.lines == ["no tournaments yet: `boneyard tournament create` makes one"]


def test_the_archive_with_nothing_to_list_says_no_finished_games(
    empty_server: ServerProcess,
) -> None:
    done = run_cli("archive", "--server", empty_server.address)
    assert done.returncode == 0, done.explain()
    assert done.lines == ["no finished games yet"], done.explain()
    filtered = run_cli("archive", "--server", empty_server.address, "--preset", "moon")
    assert filtered.lines == ["no finished games match these filters"], filtered.explain()


def test_a_leaderboard_with_nothing_to_list_says_no_ratings(empty_server: ServerProcess) -> None:
    done = run_cli("leaderboard", "--server", empty_server.address, "--game", "moon")
    assert done.returncode == 0, done.explain()
    assert done.lines == ["no ratings: no rated moon game has finished yet"], done.explain()


def test_games_at_80_columns_lists_each_game_on_whole_lines(
    server: ServerProcess, terminal: Callable[..., Terminal]
) -> None:
    """The table of games needs more than 80 columns (a game id alone takes 36): in a terminal
    that narrow each game is two whole lines, not cells wrapped mid-word."""
    with Client(server.address) as client:
        made = client.create_game("moon-no-widow", name="a table with a long name, 80x24")
    t = terminal("games", "--server", server.address, "--status", "open")
    assert t.finish() == 0
    first = next(i for i, row in enumerate(t.rows) if row.startswith(made.game_id))
    assert re.fullmatch(
        rf"{made.game_id}  moon-no-widow  open  0/3 seats  version \d+", t.rows[first]
    ), t.text()
    assert t.rows[first + 1] == "    a table with a long name, 80x24 · scores 0 0 0", t.text()


# --- Moon: no count stars, no teams; nothing wrapped mid-phrase ---------------------------


def test_a_moon_table_stars_no_count_tiles_and_names_no_teams(
    server: ServerProcess, terminal: Callable[..., Terminal]
) -> None:
    t = terminal(
        "play", "--server", server.address, "--game", "moon", "--option", "hand_limit=1",
        "--house-bots", "2", "--strategy", "random", "--name", "Annabelle Longname",
    )
    t.start()
    questions = 0
    while t.next_question():
        questions += 1
        assert questions < 200, "the game does not end"
        screen = t.text()
        hand = [row for row in t.rows if row.startswith("│ hand ")]
        assert hand and not any("*" in row for row in hand), screen
        assert "team" not in screen and "(seats" not in screen, screen
        t.answer("#1")
    assert t.child.exitstatus == 0, t.text()
    assert re.search(r"game over: seat \d wins", t.text()), t.text()
    assert "team" not in t.text() and "(seats" not in t.text()


def test_a_moon_game_run_by_bots_ends_with_a_seat_winning_not_a_team(
    server: ServerProcess,
) -> None:
    done = run_cli(
        "bot", "--server", server.address, "--new", "moon", "--option", "hand_limit=1",
        "--strategy", "random",
    )
    assert done.returncode == 0, done.explain()
    final = done.lines[-1]
    assert re.fullmatch(
        r"final score: seat 0: -?\d+, seat 1: -?\d+, seat 2: -?\d+; seat [012] wins", final
    ), final


def _moon_screen(names: tuple[str, str, str], scores: list[int]) -> tuple[int, list[str]]:
    """The seat whose table it is, and its screen at the first bid of a Moon game with these
    names and scores."""
    view = _moon_view_after("moon")
    del view.scores[:]
    view.scores.extend(scores)
    console = Console(width=80, height=24, record=True, file=io.StringIO())
    menu = [choice_label(a) for a in view.legal_actions]
    console.print(table_screen(view, TableInfo("a table", names), [], menu))
    return view.seat, console.export_text().splitlines()


@pytest.mark.parametrize("length", [3, 12, 18, 30, 60])
def test_the_moon_score_line_fits_80_columns_without_a_wrap(length: int) -> None:
    names = ("x" * length, "heuristic bot 1", "y" * (length - 1) + "2")
    _, lines = _moon_screen(names, [-21, 18, 20])
    assert all(len(line) <= 80 for line in lines), "\n".join(lines)
    score = lines[1]
    assert re.fullmatch(r"│ you -21 points .*\(to 21\) *│", score), "\n".join(lines)
    assert "-21" in score and "18" in score and "20" in score
    assert not lines[2].startswith("│ 21)"), "\n".join(lines)


def test_the_moon_score_line_names_the_players_where_they_fit() -> None:
    names = ("ann", "bob", "cy")
    seat, lines = _moon_screen(names, [4, 12, -21])
    said = [f"{names[s]} {n} points" for s, n in enumerate([4, 12, -21]) if s != seat]
    assert all(part in lines[1] for part in said) and "(to 21)" in lines[1], lines[1]
    assert f"you {[4, 12, -21][seat]} points" in lines[1], lines[1]


def test_a_name_ending_in_a_number_is_not_read_as_the_score() -> None:
    names = ("bot 0", "bot 1", "bot 2")
    seat, lines = _moon_screen(names, [0, 3, 5])
    said = [f"bot {s}: {n} point" for s, n in enumerate([0, 3, 5]) if s != seat]
    assert all(part in lines[1] for part in said), lines[1]
