"""The play-reading calibration script: every rule is counted where it applied, with the
share of the times it was kept."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from boneyard.bots.play_reading import CHANCES

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "calibrate_play_reading.py"


def test_every_rule_is_counted_with_the_share_kept() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--hands", "40", "--bots", "heuristic", "--workers", "1"],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = {
        rule: (int(n), float(kept))
        for rule, n, kept in re.findall(
            r"^ *(\w+): applied +(\d+), kept (\d\.\d{3}|nan) \(CHANCES \d\.\d\d\)$",
            done.stdout,
            re.MULTILINE,
        )
    }
    assert set(rows) == set(CHANCES)
    assert rows["count_off_opponents"][0] > 0
    assert 0.0 <= rows["count_off_opponents"][1] <= 1.0


def test_a_number_of_hands_out_of_bounds_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--hands", "0"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "--hands must be 1..100000" in done.stderr
