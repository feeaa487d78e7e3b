"""Engine cost in instructions: what ``bench_engine.py`` times, counted by valgrind instead.

This machine's timings wander by a third from run to run; an instruction count does not (the
same program on the same input counts the same, however busy the machine). Each side (the
engine's complete hands, ``bench_engine.play_hands`` with every trick played, and the bare
loop, ``bare_playout.bare_hands``) is run under ``valgrind --tool=callgrind`` for ``--hands``
and for four times as many hands, from the same seed; the difference over the extra hands is
the cost of a hand without the interpreter's start. Instructions are not time (the engine's
are mostly new objects, dearer than the bare loop's arithmetic), so this is a guide for
comparing two versions of the engine, beside the timed ratio, not a replacement for it.

The pure-Python core is the headline (the last lines); where the compiled play path is built,
its counts come on the lines before.

    make bench-engine-instructions   # `texas42: N instructions a hand, bare loop M, ratio R`
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from bench_engine import CORES

HERE = Path(__file__).resolve().parent
_COLLECTED = re.compile(r"Collected : (\d+)")


def _instructions(code: str) -> int:
    """Instructions valgrind counts for ``python -c code`` run from this folder."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code],
        cwd=HERE,
        capture_output=True,
        text=True,
        check=True,
    )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"valgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def per_hand(code: str, hands: int) -> float:
    """Instructions a hand of ``code`` (a format string of ``{hands}``)."""
    few = _instructions(code.format(hands=hands))
    many = _instructions(code.format(hands=4 * hands))
    return (many - few) / (3 * hands)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100, help="hands in the shorter run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench_engine_instructions: needs valgrind (Debian's package valgrind)")
    lines, compiled_lines = [], []
    for preset in ("texas42", "moon"):
        # doubled braces: the code is a format string of {hands}
        options = "{{}}" if preset == "moon" else "{{'end_hand_when_decided': False}}"
        engine = per_hand(
            "from bench_engine import play_hands; "
            f"play_hands({preset!r}, {{hands}}, {args.seed}, {options})",
            args.hands,
        )
        bare = per_hand(
            "from bare_playout import bare_hands; "
            f"bare_hands({{hands}}, {args.seed}, {preset == 'moon'})",
            args.hands,
        )
        lines.append(
            f"{preset}: {engine:,.0f} instructions a hand, bare loop {bare:,.0f}, "
            f"ratio {bare / engine:.2f}"
        )
        if "c" in CORES:
            compiled = per_hand(
                "from bench_engine import play_hands; "
                f"play_hands({preset!r}, {{hands}}, {args.seed}, {options}, 'c')",
                args.hands,
            )
            compiled_lines.append(
                f"{preset} compiled core: {compiled:,.0f} instructions a hand, "
                f"ratio {bare / compiled:.2f}"
            )
    for line in compiled_lines + lines:
        print(line)


if __name__ == "__main__":
    main()
