"""The duplicate benchmark (benchmarks/bench_duplicate.py) runs as ``make bench-bots`` runs it,
on a handful of deals, and prints every figure issue 17 asks for in lines that parse: the win
rate and its interval, the mean score, the contract table of each side, the decision times and
one summary line a game."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_duplicate.py"
PCT = r"(\d+\.\d)%"
SIGNED = r"([+-]\d+\.\d\d)"


def run(args: str) -> subprocess.CompletedProcess[str]:
    """The benchmark with ``args`` (words split as a shell would)."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *shlex.split(args)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def output() -> str:
    done = run("--hero heuristic --against random --games texas42,moon --deals 4,3 --workers 1")
    assert done.returncode == 0, done.stderr
    return done.stdout


def block(output: str, game: str) -> str:
    """The lines of one game's report, from its title to the next title or the totals."""
    match = re.search(rf"^{game}: .*?(?=^\S)", output, re.MULTILINE | re.DOTALL)
    assert match, output
    return match.group(0)


@pytest.mark.parametrize(("game", "deals"), [("texas42", 4), ("moon", 3)])
def test_each_game_reports_win_rate_with_wilson_interval_and_mean_score(
    output: str, game: str, deals: int
) -> None:
    text = block(output, game)
    won = re.search(
        rf"{deals} deals: heuristic won ([\d.]+) \(ties count half\), win rate {PCT}, "
        rf"95% Wilson interval \[{PCT}, {PCT}\]",
        text,
    )
    assert won, text
    wins, rate, low, high = (float(g) for g in won.groups())
    assert rate == pytest.approx(100 * wins / deals, abs=0.05)
    assert low <= rate <= high
    unit = "marks" if game == "texas42" else "points"
    mean = re.search(
        rf"mean score a deal {SIGNED} {unit}, 95% interval \[{SIGNED}, {SIGNED}\]", text
    )
    assert mean, text
    average, below, above = (float(g) for g in mean.groups())
    assert below <= average <= above


@pytest.mark.parametrize(
    ("game", "rows"),
    [
        ("texas42", ["30-31", "32-34", "35-41", "1 mark", "2+ marks"]),
        ("moon", ["4 tricks", "5 tricks", "6 tricks", "7 tricks", "moon"]),
    ],
)
def test_contract_table_counts_every_hand_once_under_the_side_that_won_the_auction(
    output: str, game: str, rows: list[str]
) -> None:
    text = block(output, game)
    counted = 0
    for row in rows:
        line = re.search(
            rf"^ +{re.escape(row)} +(\d+) +(\d+%|-) +(\d+) +(\d+%|-)$", text, re.MULTILINE
        )
        assert line, f"no row {row!r} in\n{text}"
        for count, rate in ((line.group(1), line.group(2)), (line.group(3), line.group(4))):
            assert (rate == "-") == (count == "0"), line.group(0)
            counted += int(count)
    hands = {"texas42": 4 * 2, "moon": 3 * 3}[game]  # a deal is played once a seating
    assert counted == hands
    assert "plunge" not in text and "overcall" not in text  # not in these presets' rules


@pytest.mark.parametrize("game", ["texas42", "moon"])
def test_each_side_reports_median_and_p95_time_of_play_and_of_other_decisions(
    output: str, game: str
) -> None:
    text = block(output, game)
    for role, name in (("hero", "heuristic"), ("against", "random")):
        line = re.search(
            rf"^  {role} {name} time a decision: play median ([\d.]+) ms, p95 ([\d.]+) ms "
            r"\((\d+) decisions\); auction/widow/trump median ([\d.]+) ms, p95 ([\d.]+) ms "
            r"\((\d+) decisions\)$",
            text,
            re.MULTILINE,
        )
        assert line, text
        play_median, play_p95, plays, setup_median, setup_p95, setups = line.groups()
        assert float(play_median) <= float(play_p95) and int(plays) > 0
        assert float(setup_median) <= float(setup_p95) and int(setups) > 0


def test_last_lines_summarise_each_game_and_say_whether_the_interval_is_clear_of_50(
    output: str,
) -> None:
    last = output.strip().splitlines()[-2:]
    summary = re.compile(
        rf"^(texas42|moon): heuristic vs random {PCT} \[(\d+\.\d), (\d+\.\d)\] over (\d+) deals, "
        rf"{SIGNED} (marks|points) a deal, (clear|NOT clear) of 50%$"
    )
    parsed = [summary.match(line) for line in last]
    assert all(parsed), last
    assert [m.group(1) for m in parsed if m] == ["texas42", "moon"]
    for m in parsed:
        assert m is not None
        low, high = float(m.group(3)), float(m.group(4))
        clear = low > 50 or high < 50
        assert (m.group(8) == "clear") == clear
        if not clear:
            assert f"NOT CLEAR of 50%: {m.group(5)} deals do not separate" in output


def test_deal_counts_must_match_the_games() -> None:
    done = run("--hero heuristic --against random --games texas42,moon --deals 1,2,3")
    assert done.returncode == 2
    assert "one count, or one for each of the 2 games" in done.stderr
    assert done.stdout == ""


def test_an_unknown_preset_is_refused_before_any_deal() -> None:
    done = run("--hero heuristic --against random --games chess")
    assert done.returncode == 2 and "no preset 'chess'" in done.stderr
    assert done.stdout == ""


def test_dump_writes_each_deal_with_its_plays_whose_changes_add_up_to_its_score(
    tmp_path: Path,
) -> None:
    dump = tmp_path / "deals.jsonl"
    done = run(
        f"--hero heuristic --against random --games texas42 --deals 3 --workers 1 --dump {dump}"
    )
    assert done.returncode == 0, done.stderr
    deals = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(deals) == 3
    for deal in deals:
        assert deal["game"] == "texas42" and isinstance(deal["seed"], int)
        assert len(deal["plays"]) == 2  # one a seating
        score = sum(p["changes"]["hero"] - p["changes"]["against"] for p in deal["plays"])
        assert score == deal["score"]
        for play in deal["plays"]:
            assert play["bidder"] in ("hero", "against") and play["contract"]
            assert [role for role, _ in play["auction"]] == ["hero", "against"] * 2 or [
                role for role, _ in play["auction"]
            ] == ["against", "hero"] * 2


def test_replay_plays_the_deals_of_a_dump_of_the_games_chosen_the_same_way(
    tmp_path: Path,
) -> None:
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    done = run(
        "--hero heuristic --against random --games texas42,moon --deals 3,2 --workers 1 "
        f"--seed 5 --dump {first}"
    )
    assert done.returncode == 0, done.stderr
    done = run(
        f"--hero heuristic --against random --games moon --workers 1 --replay {first} "
        f"--dump {again}"
    )
    assert done.returncode == 0, done.stderr
    assert f"the moon deals of {first}" in done.stdout
    played = [json.loads(line) for line in first.read_text().splitlines()]
    replayed = [json.loads(line) for line in again.read_text().splitlines()]
    assert replayed == [deal for deal in played if deal["game"] == "moon"]
