"""Run a Python program counting the opcodes each of its functions runs, between two signals.

    python benchmarks/count_opcodes.py OUT.json PROGRAM [ARGS ...]

``PROGRAM`` (a script: ``boneyard-server``'s entry point, ``anchor_server.py``) runs as its own
``__main__``. SIGUSR1 starts counting, from then on in every thread's new frames; SIGUSR2 stops
and writes ``{"file:line:function": opcodes}`` to ``OUT.json``. A count of opcodes does not move
with the machine's load, as time does (``bench_server_instructions.py --opcodes``). Tracing
makes the program tens of times slower.
"""

from __future__ import annotations

import json
import runpy
import signal
import sys
import threading
from collections import Counter
from types import CodeType, FrameType
from typing import Any

_counts: Counter[CodeType] = Counter()
_counting = False


def _opcode(frame: FrameType, event: str, arg: Any) -> Any:
    if event == "opcode":
        _counts[frame.f_code] += 1
    return _opcode


def _call(frame: FrameType, event: str, arg: Any) -> Any:
    if not _counting:
        return None
    frame.f_trace_opcodes = True
    return _opcode


def _start(signum: int, frame: FrameType | None) -> None:
    global _counting
    _counts.clear()
    _counting = True


def _write(out: str) -> None:
    global _counting
    _counting = False
    counted: Counter[str] = Counter()
    for code, n in list(_counts.items()):
        counted[f"{code.co_filename}:{code.co_firstlineno}:{code.co_qualname}"] += n
    with open(out, "w") as f:
        json.dump(counted, f)


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__.splitlines()[2].strip())
    out, program = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[2:]
    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, lambda signum, frame: _write(out))
    sys.settrace(_call)
    threading.settrace(_call)  # (the threads the program starts: its writer, its workers)
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
