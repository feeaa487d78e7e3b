"""``boneyard play`` at 80×24, as a person types: a pseudo-terminal (pexpect) whose output is
fed to a terminal emulator (pyte), so each question is checked on the screen a person sees —
the table whole on 24 rows, no line past 80 columns — and answered from the choices shown.
Against a real server whose house bots play the other seats."""

from __future__ import annotations

import contextlib
import io
import re
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pexpect
import pyte
import pytest
from rich.console import Console

from boneyard.api.v1 import game_pb2, game_service_pb2, rules_pb2, view_pb2
from boneyard.clients.api import Client
from boneyard.clients.play import TableSession
from boneyard.clients.seat_store import KeptSeat, SeatStore
from boneyard.clients.table import TableInfo
from boneyard.engine.tiles import tile_name
from tests.clients.cli_helpers import BONEYARD, run_cli
from tests.clients.test_end_to_end import (
    ANSI,
    assert_no_action_twice,
    events_by,
    full_log,
    full_log_so_far,
)
from tests.server.process_helpers import ServerProcess, clean_env

PROMPT = "your choice> "
CHOICE = re.compile(r"\[(\d+)\] (.+?)(?=\s{2,}\[\d+\]|\s*$)")
FINISHED = game_pb2.GAME_STATUS_FINISHED


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    d = tmp_path_factory.mktemp("terminal-server")
    with ServerProcess.start(d / "server.log", f"sqlite:///{d / 'boneyard.db'}") as running:
        yield running


@pytest.fixture(scope="module")
def api(server: ServerProcess) -> Iterator[Client]:
    with Client(server.address) as client:
        yield client


@dataclass
class Choice:
    number: int
    text: str


def _interrupt_as_at_a_terminal() -> None:
    # A test run started in the background (`.ci/run &`, nohup) inherits SIGINT ignored, and so
    # would the child: Ctrl-C would then do nothing. A person at a terminal has it at default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """``boneyard play`` in an 80×24 pseudo-terminal, read through a terminal emulator."""

    def __init__(
        self, args: Sequence[str], log_path: Path, seats_file: Path, **env: str
    ) -> None:
        self.log = open(log_path, "w")  # noqa: SIM115 - closed in close()
        self.child = pexpect.spawn(
            str(BONEYARD),
            list(args),
            encoding="utf-8",
            codec_errors="replace",
            timeout=180,  # a hang fails the test; a slow, busy machine does not
            env=clean_env(TERM="xterm", BONEYARD_SEATS_FILE=str(seats_file), **env),
            dimensions=(24, 80),
            preexec_fn=_interrupt_as_at_a_terminal,
        )
        self.child.logfile_read = self.log
        self.screen = pyte.Screen(80, 24)
        self.stream = pyte.Stream(self.screen)
        self.choices: list[Choice] = []
        self.rows: list[str] = []
        self.since_answer = ""
        """What was written since the last answer (lines told may have scrolled away)."""
        self.game_id = ""

    def close(self) -> None:
        if self.child.isalive():
            self.child.kill(signal.SIGKILL)
        self.child.close(force=True)
        self.log.close()

    def feed(self, text: str) -> None:
        for line in ANSI.sub("", text).replace("\r", "").split("\n"):
            assert len(line) <= 80, f"a line of {len(line)} columns: {line!r}"
        self.stream.feed(text)
        self.rows = [row.rstrip() for row in self.screen.display]
        self.since_answer += ANSI.sub("", text).replace("\r", "")

    def text(self) -> str:
        return "\n".join(self.rows)

    def start(self) -> None:
        self.child.expect(r"game ([0-9a-f-]{36})")
        self.game_id = self.child.match.group(1)
        self.feed(self.child.before + self.child.after)

    def next_question(self) -> bool:
        """The next prompt (``True``, with the choices read off the screen) or the end."""
        index = self.child.expect([PROMPT, pexpect.EOF])
        self.feed(self.child.before + (self.child.after if index == 0 else ""))
        if index != 0:
            self.child.close()
            return False
        assert self.rows[-1].startswith(PROMPT.strip()) or any(
            r.startswith(PROMPT.strip()) for r in self.rows
        ), self.text()
        # the whole table is on the 24 rows: its top border was not scrolled away
        assert any(r.startswith("╭") for r in self.rows), f"the table's top is gone:\n{self.text()}"
        shown = [Choice(int(n), t) for r in self.rows for n, t in CHOICE.findall(r)]
        assert [c.number for c in shown] == list(range(1, len(shown) + 1)), self.text()
        self.choices = shown
        return True

    def answer(self, text: str) -> None:
        self.since_answer = ""
        self.child.sendline(text)

    def finish(self) -> int:
        self.child.expect(pexpect.EOF)
        self.feed(self.child.before)
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[..., Terminal]]:
    made: list[Terminal] = []

    def spawn(*args: str, **env: str) -> Terminal:
        t = Terminal(args, tmp_path / f"terminal-{len(made)}.log", tmp_path / "seats.json", **env)
        made.append(t)
        return t

    yield spawn
    for t in made:
        t.close()


def texts(choices: list[Choice]) -> list[str]:
    return [c.text for c in choices]


def answer_as_a_person(t: Terminal, bids_typed: list[str]) -> None:
    """Bid by typing the amount (30 if it is there, else the lowest; 84 once when shown), name
    trump by its name, play the first tile as shown."""
    shown = texts(t.choices)
    if "pass" in shown:
        if "84 (2 marks)" in shown and "84" not in bids_typed:
            typed = "84"
        elif "30" in shown and "30" not in bids_typed:
            typed = "30"
        elif len(shown) > 1 and bids_typed:
            typed = "pass"
        else:
            typed = shown[-1].split(" ")[0] if shown != ["pass"] else "pass"
        bids_typed.append(typed)
        t.answer(typed)
    elif "sixes" in shown:
        t.answer("sixes")
    else:
        t.answer(shown[0])


def test_a_whole_texas42_game_typed_with_a_refusal_a_leave_and_a_resume(
    server: ServerProcess, api: Client, terminal: Callable[..., Terminal]
) -> None:
    t = terminal("play", "--server", server.address, "--house-bots", "3", "--name", "tester")
    t.start()
    assert t.next_question()
    assert "texas42 · tester's table" in t.rows[0]
    # a word that is no choice: refused with its reason, the choices shown again
    t.answer("banana")
    assert t.next_question()
    assert "refused: 'banana' is none of the choices" in t.text()
    bids_typed: list[str] = []
    questions = 0
    left = False
    while True:
        questions += 1
        assert questions < 1000, "the game does not end"
        if questions == 12 and not left:
            t.child.sendcontrol("c")
            t.child.expect_exact("(r/K)> ")
            t.answer("k")
            assert t.finish() == 0
            assert f"boneyard play --resume {t.game_id}" in " ".join(t.rows)
            assert api.game(t.game_id).status == game_pb2.GAME_STATUS_PLAYING
            game_id = t.game_id
            t = terminal("play", "--server", server.address, "--resume", game_id)
            t.game_id = game_id
            left = True
            if not t.next_question():
                break
        answer_as_a_person(t, bids_typed)
        if not t.next_question():
            break
    assert t.child.exitstatus == 0, t.text()
    assert "game over:" in t.text()
    assert left and ("30" in bids_typed or "84" in bids_typed), bids_typed
    summary = api.game(t.game_id)
    assert summary.status == FINISHED
    events = full_log(api, t.game_id)
    amounts = [e.bid_placed.bid for e in events_by(events, "bid_placed", 0)]
    assert any((b.kind, b.amount) in ((1, 30), (2, 2)) for b in amounts), amounts
    assert events_by(events, "tile_played", 0)
    assert_no_action_twice(events)


def test_a_bid_below_the_minimum_shows_the_engines_reason(
    server: ServerProcess, terminal: Callable[..., Terminal]
) -> None:
    t = terminal("play", "--server", server.address, "--house-bots", "3")
    t.start()
    assert t.next_question()
    t.answer("29")
    assert t.next_question()
    text = " ".join(t.rows)
    # The engine's reason: the lowest bid, or, when the three bots passed and this seat deals,
    # the forced dealer's bid (the deal is the server's, so either can come up).
    reason = r"(the lowest bid is|dealer after 3 passes and must bid)\s+30, not 29"
    assert re.search(r"refused — bid (too low|not allowed): .*" + reason, text), t.text()


def test_ctrl_c_then_resign_ends_the_game(
    server: ServerProcess, api: Client, terminal: Callable[..., Terminal]
) -> None:
    t = terminal("play", "--server", server.address, "--house-bots", "3", "--name", "quitter")
    t.start()
    assert t.next_question()
    t.child.sendcontrol("c")
    t.child.expect_exact("(r/K)> ")
    t.answer("r")
    assert t.finish() == 0
    assert "you resigned" in t.text()
    summary = api.game(t.game_id)
    assert summary.status == FINISHED and summary.winner == 1
    assert events_by(full_log(api, t.game_id), "resigned", 0)


def test_more_bots_than_seats_is_refused_and_nothing_is_made(
    server: ServerProcess, api: Client
) -> None:
    before = len(list(api.games()))
    result = run_cli("play", "--server", server.address, "--bots", "5")
    assert result.returncode == 2, result.explain()
    assert "--bots 5: a texas42 table has 4 free seats, so at most 3 bots" in result.stderr
    assert len(list(api.games())) == before


def test_moon_says_which_tile_the_widow_gave(
    server: ServerProcess, api: Client, terminal: Callable[..., Terminal]
) -> None:
    t = terminal(
        "play", "--server", server.address, "--game", "moon", "--house-bots", "2",
        "--strategy", "random",
    )
    t.start()
    questions = 0
    while True:
        assert t.next_question(), "the game ended before this seat took the widow"
        questions += 1
        assert questions < 300
        shown = texts(t.choices)
        if "moon" in shown:
            t.answer("shoot the moon")
        elif any(s.startswith("lay out ") for s in shown):
            assert "moon" in t.rows[0]
            t.answer(shown[0])
            break
        else:
            t.answer("1")
    laid_out = shown[0].removeprefix("lay out ")
    assert t.next_question()
    said = re.search(r"you received (\d-\d) from the widow and laid out (\d-\d)", t.text())
    assert said and said[2] == laid_out, t.text()
    events = full_log_so_far(api, t.game_id)
    exchanged = events_by(events, "widow_exchanged", 0)
    assert exchanged
    assert said[1] != said[2]


MOON_SHOOTER = """
from boneyard import engine
def choose(view: engine.SeatView) -> engine.SeatCommand:
    \"\"\"Shoots the moon whenever it may, else the first legal command.\"\"\"
    moon = [c for c in view.legal if isinstance(c, engine.PlaceBid) and c.bid == engine.Bid.moon()]
    return moon[0] if moon else view.legal[0]
"""


def test_a_person_types_overcall_over_a_moon_at_a_table_set_by_options(
    server: ServerProcess, api: Client, terminal: Callable[..., Terminal], tmp_path: Path
) -> None:
    """``--option`` sets the house rules of a Moon table (each shown in the table's footer);
    bots that shoot the moon whenever they may (a strategy from outside, run here) give this
    seat the overcall, which it types as a person says it."""
    (tmp_path / "moon_shooter.py").write_text(MOON_SHOOTER, encoding="utf-8")
    options = [
        "moon_overcall=true", "auction_goes_round=true", "moon_min_bid=5",
        "moon_trumps=suits_and_doubles", "all_pass=forced_dealer_any_bid",
        "tie_to_earliest_seat=true", "widow=none",
    ]
    t = terminal(
        "play", "--server", server.address, "--game", "moon",
        *(a for o in options for a in ("--option", o)),
        "--bots", "2", "--strategy", "moon_shooter:choose", "--name", "tester",
        PYTHONPATH=str(tmp_path),
    )
    t.start()
    questions = 0
    while True:
        assert t.next_question(), "the game ended before this seat could overcall"
        questions += 1
        assert questions < 300
        shown = texts(t.choices)
        if "overcall (42)" in shown:
            t.answer("overcall")
            break
        assert not any(s.startswith("lay out ") for s in shown), "a widow at a table without one"
        t.answer("pass" if "pass" in shown else "1")
    assert t.next_question()
    assert "seat 0 bids the overcall (42)" in t.text(), t.text()
    assert "all_pass=forced_dealer_any_bid · widow=none" in t.text()  # the footer, as it fits
    # The trump menu: no blanks without a widow, doubles but no follow-me.
    assert texts(t.choices) == ["ones", "twos", "threes", "fours", "fives", "sixes", "doubles"]
    rules = api.game(t.game_id).rules
    assert rules.moon_overcall and rules.auction_goes_round and rules.moon_min_bid == 5
    bids = events_by(full_log_so_far(api, t.game_id), "bid_placed", 0)
    assert bids[-1].bid_placed.bid.kind == rules_pb2.BID_KIND_OVERCALL


# --- the earlier tests of `boneyard play`, on the new screen ----------------------------------


def test_person_plays_a_whole_texas42_game_by_menu_numbers_against_bots_run_here(
    server: ServerProcess, api: Client, terminal: Callable[..., Terminal]
) -> None:
    """``--bots 3`` (bots in this process): the highest bid until this seat has named trump,
    then passes; trump and tiles by their menu numbers; what this seat did is told before the
    next question."""
    t = terminal("play", "--server", server.address, "--bots", "3", "--name", "tester")
    t.start()
    declared = questions = 0
    told = ""
    while t.next_question():
        questions += 1
        assert questions < 1000, "the game does not end"
        assert told in t.since_answer, f"{told!r} was not told:\n{t.since_answer}"
        shown = texts(t.choices)
        if "sixes" in shown:
            pick = questions % len(shown)
            declared += 1
            told = f"seat 0 declares {shown[pick]}"
        elif all("-" not in s for s in shown):  # bids (a forced dealer has no pass)
            pick = len(shown) - 1 if not declared or "pass" not in shown else shown.index("pass")
            told = "seat 0 "
        else:
            pick = 0
            told = f"seat 0 plays {shown[0]}"
        t.answer(str(pick + 1))
    assert t.child.exitstatus == 0, t.text()
    assert declared, "this seat never named trump"
    summary = api.game(t.game_id)
    assert summary.status == FINISHED and summary.seats[0].player_name == "tester"
    events = full_log(api, t.game_id)
    assert len(events_by(events, "contract_declared", 0)) == declared
    assert_no_action_twice(events)


class _SlowLink(Client):
    """A link so slow that a stream asked for reaches the server only once the other seats
    have played on to this seat's next turn (or the game's end)."""

    def watch(
        self, game_id: str, token: str | None = None, from_version: int = 0
    ) -> Iterator[game_service_pb2.WatchGameResponse]:
        deadline = time.monotonic() + 60
        while True:
            view = self.view(game_id, token)
            mine = view.HasField("turn") and view.turn == view.seat
            if mine or view.phase == view_pb2.PHASE_GAME_OVER:
                break
            assert time.monotonic() < deadline, "the other seats never came round to this one"
            time.sleep(0.01)
        return super().watch(game_id, token, from_version)


@dataclass
class _Person:
    """Answers the table's questions by menu number: the highest bid (2 marks or more, so that
    the tricks won are turned face down), any trump, then a tile; notes what the table wrote
    after each tile it played, up to the next question. Leaves (EOF) after ``plays`` tiles."""

    api: Client
    game_id: str
    token: str
    plays: int
    screen: io.StringIO = field(default_factory=io.StringIO)
    played: list[tuple[str, bool, str]] = field(default_factory=list)
    """Each tile played, whether the hand's tricks lay face down, what was written after it."""
    _seen: int = 0

    def note(self) -> None:
        written = self.screen.getvalue()
        if self.played:
            tile, hidden, told = self.played[-1]
            self.played[-1] = (tile, hidden, told + written[self._seen :])
        self._seen = len(written)

    def input(self, prompt: str = "") -> str:
        assert prompt == "your choice> ", prompt
        self.note()
        if len(self.played) == self.plays:
            raise EOFError
        view = self.api.view(self.game_id, self.token)
        legal = list(view.legal_actions)
        tiles = [a for a in legal if a.WhichOneof("kind") == "play_tile"]
        if tiles:
            # Not the 0-0: a tile sent face down comes as tile 0, which would pass for it.
            pick = next((a for a in tiles if tile_name(a.play_tile.tile) != "0-0"), tiles[0])
            self.played.append((tile_name(pick.play_tile.tile), view.tricks_hidden, ""))
        else:
            bids = [a for a in legal if a.WhichOneof("kind") == "bid"]
            pick = bids[-1] if bids else legal[0]
        return str(legal.index(pick) + 1)


def test_a_seats_own_play_is_told_before_the_next_question_on_a_slow_link(
    server: ServerProcess, api: Client, tmp_path: Path
) -> None:
    """On a slow link the other seats may finish the trick before a stream asked for after this
    seat's play reaches the server; in a hand of 2 marks or more that trick is face down by
    then. The seat's own tile is told all the same, as the person saw it played."""
    summary = api.create_game("texas42", name="slow", house_bots=dict.fromkeys((1, 2, 3), "random"))
    seat, token = api.take_seat(summary.game_id, "slow")
    person = _Person(api, summary.game_id, token, plays=4)
    console = Console(file=person.screen, width=80, height=24)
    console.input = person.input  # type: ignore[method-assign]
    with _SlowLink(server.address) as slow:
        session = TableSession(
            slow, console, summary.game_id, KeptSeat(server.address, seat, token, "slow"),
            SeatStore(tmp_path / "seats.json"), TableInfo.of(api.game(summary.game_id)),
        )
        with contextlib.suppress(EOFError):
            session.run()
    person.note()
    assert any(hidden for _, hidden, _ in person.played), person.played
    for tile, _, told in person.played:
        assert f"seat {seat} plays {tile}" in told, f"{tile} was not told:\n{told}"


def test_person_plays_moon_against_the_servers_house_bots(
    server: ServerProcess, api: Client, terminal: Callable[..., Terminal]
) -> None:
    t = terminal(
        "play", "--server", server.address, "--game", "moon", "--option", "hand_limit=1",
        "--house-bots", "2", "--strategy", "random", "--name", "tester",
    )
    t.start()
    questions = 0
    while t.next_question():
        questions += 1
        assert questions < 200, "the game does not end"
        t.answer("#1")
    assert t.child.exitstatus == 0, t.text()
    summary = api.game(t.game_id)
    assert summary.status == FINISHED
    assert [(s.player_name, s.house_bot) for s in summary.seats] == [
        ("tester", ""),
        ("random bot 1", "random"),
        ("random bot 2", "random"),
    ]
    assert "hand_limit=1" in " ".join(t.rows)  # the option that differs from moon's


def test_house_bots_leave_a_seat_for_the_player(server: ServerProcess) -> None:
    result = run_cli("play", "--server", server.address, "--game", "moon", "--house-bots", "3")
    assert result.returncode == 2
    assert "a moon table has 3 free seats, so at most 2 bots beside you" in result.stderr


def test_person_types_resign_and_confirms(
    server: ServerProcess, api: Client, terminal: Callable[..., Terminal]
) -> None:
    t = terminal("play", "--server", server.address, "--bots", "3", "--name", "quitter")
    t.start()
    assert t.next_question()
    t.answer("resign")
    t.child.expect_exact("Sure? (y/N)> ")
    t.answer("y")
    assert t.finish() == 0
    assert "game over: them won" in t.text()
    summary = api.game(t.game_id)
    assert summary.status == FINISHED and summary.winner == 1
    assert events_by(full_log(api, t.game_id), "resigned", 0)
