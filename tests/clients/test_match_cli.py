"""End to end: ``boneyard match`` against a real server, played by real ``boneyard bot --key``
processes (issue 35). Every piece is a process, as in ``test_competition_cli.py``: the server on
a throwaway SQLite file, the operator's ``boneyard-server admin`` making the accounts, a bot
process per entrant. What the commands print is checked against what the server says
(MatchService over the API)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

from boneyard.api.v1 import matches_pb2
from boneyard.clients.api import Client
from boneyard.clients.match_cli import llr_bar
from tests.clients.cli_helpers import Background, run_cli
from tests.clients.test_competition_cli import Site, table_rows, unique
from tests.server.process_helpers import ServerProcess
from tests.server.test_competition import wait_for

MATCH_LINE = re.compile(r"^match (?P<id>[0-9a-f-]{36})$", re.MULTILINE)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One server on a fresh SQLite file for the module's tests (each uses accounts of its own)."""
    d = tmp_path_factory.mktemp("match-server")
    url = f"sqlite:///{d / 'boneyard.db'}"
    with ServerProcess.start(d / "server.log", url) as running:
        yield Site(running, url)


@pytest.fixture(scope="module")
def api(site: Site) -> Iterator[Client]:
    with Client(site.address) as client:
        yield client


def _entrants(site: Site) -> tuple[str, str, str, str]:
    a, b = unique("mine"), unique("theirs")
    return a, site.create_bot(a), b, site.create_bot(b)


def test_an_sprt_match_followed_from_the_command_line_names_the_stronger_bot(
    site: Site,
    api: Client,
    background: Callable[..., Background],
) -> None:
    a, a_key, b, b_key = _entrants(site)
    bots = [
        background("bot", "--server", site.address, "--key", a_key, "--strategy", "heuristic"),
        background("bot", "--server", site.address, "--key", b_key, "--strategy", "random"),
    ]
    made = run_cli(
        "match", "create", a, b, "--sprt", "--m1", "0.1", "--key", site.organiser,
        "--server", site.address, "--follow",
    )  # fmt: skip
    assert made.returncode == 0, made.explain() + "\n".join(bot.explain() for bot in bots)
    found = MATCH_LINE.search(made.stdout)
    assert found, made.explain()
    match = api.match(found["id"], timeout=30)
    assert match.status == matches_pb2.MATCH_STATUS_FINISHED
    assert match.verdict == matches_pb2.MATCH_VERDICT_A_STRONGER
    # The last drawing of the match: its figures and its verdict.
    assert f"verdict: {a} is stronger than {b} (after {match.deals_at_verdict} deals" in made.stdout
    assert f"deals: {match.deals_finished} counted, {match.deals_started} started" in made.stdout
    assert "-2.94 [" in made.stdout and "] +2.94" in made.stdout, made.explain()

    shown = run_cli("match", "show", match.match_id, "--deals", "--server", site.address)
    assert shown.returncode == 0, shown.explain()
    assert f"{a} (A) vs {b} (B)" in shown.stdout
    rows = table_rows(shown.stdout, "deals")
    assert [row[0] for row in rows] == [str(d) for d in range(match.deals_started)]
    assert all(row[2] == "yes" for row in rows)
    assert sum(int(row[3]) for row in rows) == match.total_a
    assert sum(int(row[4]) for row in rows) == match.total_b

    listed = run_cli("match", "list", "--server", site.address)
    assert listed.returncode == 0 and match.match_id in listed.stdout, listed.explain()
    assert "A stronger" in listed.stdout, listed.explain()


def test_a_match_is_played_by_bots_deciding_turns_at_once_on_one_stream(
    site: Site,
    api: Client,
    background: Callable[..., Background],
) -> None:
    """``boneyard bot --concurrency N``: each entrant's two seats of a game come on its one
    turn stream, each answered naming its seat."""
    a, a_key, b, b_key = _entrants(site)
    bots = [
        background(
            "bot", "--server", site.address, "--key", key, "--strategy", "heuristic",
            "--concurrency", "4",
        )
        for key in (a_key, b_key)
    ]  # fmt: skip
    made = run_cli(
        "match", "create", a, b, "--deals", "3", "--key", site.organiser,
        "--server", site.address, "--follow",
    )  # fmt: skip
    assert made.returncode == 0, made.explain() + "\n".join(bot.explain() for bot in bots)
    found = MATCH_LINE.search(made.stdout)
    assert found, made.explain()
    match = api.match(found["id"], timeout=30)
    assert match.status == matches_pb2.MATCH_STATUS_FINISHED
    assert match.deals_started == match.deals_finished == 3
    assert "deals: 3 counted, 3 started" in made.stdout, made.explain()
    # Each bot told the end of each of its seats (two a game, six games), none stopped (a
    # turn answered without its seat is refused SEAT_REQUIRED: "game ... stopped").
    for bot in bots:
        wait_for(
            lambda b=bot: sum(" over: " in line for line in b.lines) == 12,
            f"12 seats' ends told:\n{bot.explain()}",
        )
        assert not any(" stopped: " in line for line in bot.lines), bot.explain()
        started = [line for line in bot.lines if " started: seat " in line]
        assert started and len(started) == len(set(started)), bot.explain()


def test_a_match_is_cancelled_by_its_organiser_only(site: Site) -> None:
    a, _, b, _ = _entrants(site)
    made = run_cli(
        "match", "create", a, b, "--deals", "3", "--key", site.organiser, "--server", site.address
    )
    assert made.returncode == 0, made.explain()
    match_id = MATCH_LINE.search(made.stdout)["id"]  # type: ignore[index]
    assert f"follow it with: boneyard match show {match_id} --follow" in made.stdout
    someone = site.create_bot(unique("someone"), "player")
    refused = run_cli("match", "cancel", match_id, "--server", site.address, "--key", someone)
    assert refused.returncode == 1 and "PERMISSION_DENIED" in refused.stdout, refused.explain()
    done = run_cli("match", "cancel", match_id, "--server", site.address, "--key", site.organiser)
    assert done.returncode == 0 and "; cancelled" in done.stdout, done.explain()


def test_match_create_needs_deals_or_an_sprt(site: Site) -> None:
    for length in ((), ("--deals", "3", "--sprt")):
        done = run_cli(
            "match", "create", "x", "y", *length, "--key", site.organiser, "--server", site.address
        )
        assert done.returncode == 2 and "give --deals N or --sprt" in done.stderr, done.explain()


@pytest.mark.parametrize(
    ("llr", "drawn"),
    [
        (0.0, "-2.94 [··········●··········] +2.94"),
        (2.944, "-2.94 [··········|·········●] +2.94"),
        (-5.0, "-2.94 [◀·········|··········] +2.94"),
        (9.0, "-2.94 [··········|·········▶] +2.94"),
        (1.5, "-2.94 [··········|····●·····] +2.94"),
    ],
)
def test_the_llr_is_drawn_between_its_bounds(llr: float, drawn: str) -> None:
    assert llr_bar(llr, -2.944, 2.944, width=21) == drawn
