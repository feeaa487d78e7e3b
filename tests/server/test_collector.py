"""The garbage collector of a started server: the start-up's objects frozen out of its way,
the young generation collected after more new objects (``boneyard.server.ops.collector``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from boneyard.server.ops.collector import YOUNG_THRESHOLD


def test_a_settled_collector_freezes_what_start_up_made_and_collects_the_young_less_often() -> (
    None
):
    # In a process of its own: freezing is for the life of the process.
    script = textwrap.dedent(
        """
        import gc
        from boneyard.server import bootstrap  # the server's modules, as at its start
        from boneyard.server.ops import collector
        before = gc.get_freeze_count()
        collector.settle()
        print(before, gc.get_freeze_count(), *gc.get_threshold())
        """
    )
    shown = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    before, frozen, young, *_ = map(int, shown)
    assert before == 0
    assert frozen > 100_000  # modules, descriptors, tables: out of every later collection
    assert young == YOUNG_THRESHOLD
