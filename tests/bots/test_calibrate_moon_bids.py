"""The Moon bid calibration script: each bid played out is counted under its band of solved
chance, with the share made."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "calibrate_moon_bids.py"


def test_every_bid_played_out_is_counted_under_its_band_of_solved_chance() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--deals",
            "3",
            "--move-ms",
            "20",
            "--workers",
            "1",
            "--floor",
            "0",
            "--bids",
            "5,7",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = re.findall(
        r"^  (5 tricks|moon) +solved (\d\.\d)-(\d\.\d): +(\d+) hands, mean solved (\d\.\d\d), "
        r"made (\d\.\d\d)$",
        done.stdout,
        re.MULTILINE,
    )
    # With no floor, each of the 3 deals plays out both bids.
    assert sorted(r[0] for r in rows for _ in range(int(r[3]))) == ["5 tricks"] * 3 + ["moon"] * 3
    for _, low, high, _, solved, made in rows:
        assert float(low) <= float(solved) <= float(high)
        assert 0.0 <= float(made) <= 1.0


def test_a_bid_it_does_not_calibrate_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--bids", "4"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 2 and "--bids" in done.stderr
