"""``bots/`` is a pure package (DESIGN.md): a strategy is a function of a seat's view and its
seed, importing nothing but ``boneyard.engine`` and the standard library, and of the standard
library nothing that reaches outside (files, sockets, logs, the clock, threads, processes) or
draws global randomness. So the same strategy runs in a client and in the server's workers,
and a view always gets the same choice."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

BOTS = Path(__file__).resolve().parents[2] / "bots"
SOURCES = sorted(BOTS.rglob("*.py"))

ALLOWED_PACKAGES = ("boneyard.engine", "boneyard.bots")
OUTSIDE = frozenset(
    {
        "os", "io", "sys", "socket", "logging", "time", "datetime", "secrets", "threading",
        "asyncio", "subprocess", "multiprocessing", "concurrent", "pathlib", "shutil", "signal",
        "tempfile", "urllib", "http", "sqlite3", "pickle",
    }
)  # fmt: skip
"""Standard modules a pure strategy has no business with."""
RANDOM_ALLOWED = frozenset({"Random"})
"""Of ``random``, only a generator with an explicit seed (``random.Random(seed)``)."""


def _top(module: str) -> str:
    return module.split(".")[0]


def _allowed(module: str) -> bool:
    if any(module == p or module.startswith(p + ".") for p in ALLOWED_PACKAGES):
        return True
    top = _top(module)
    return top in sys.stdlib_module_names and top not in OUTSIDE


def impurities(source: str, name: str) -> list[str]:
    """What in this source breaks the rule, each as ``name:line: what``."""
    tree = ast.parse(source, filename=name)
    found: list[str] = []

    def report(node: ast.AST, what: str) -> None:
        found.append(f"{name}:{getattr(node, 'lineno', '?')}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _allowed(alias.name):
                    report(node, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                report(node, "a relative import")
            elif node.module and not _allowed(node.module):
                report(node, f"from {node.module} import ...")
            elif node.module == "random":
                for alias in node.names:
                    if alias.name not in RANDOM_ALLOWED:
                        report(node, f"from random import {alias.name}")
        elif isinstance(node, ast.Attribute):
            if (
                isinstance(node.value, ast.Name)
                and node.value.id == "random"
                and node.attr not in RANDOM_ALLOWED
            ):
                report(node, f"random.{node.attr}")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("print", "open", "input", "__import__"):
                report(node, f"calls {func.id}()")
            if isinstance(func, ast.Attribute) and func.attr == "import_module":
                report(node, "imports a module dynamically")
    return found


def test_the_bots_have_sources() -> None:
    assert (BOTS / "__init__.py") in SOURCES and len(SOURCES) >= 4


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(BOTS.parent)))
def test_bot_module_imports_only_the_engine_and_the_standard_library(path: Path) -> None:
    name = str(path.relative_to(BOTS.parent))
    assert impurities(path.read_text(encoding="utf-8"), name) == []


def test_the_checker_sees_every_kind_of_impurity() -> None:
    """So that an empty report means something."""
    source = (
        "import os\n"
        "import grpc\n"
        "from boneyard.api.v1 import view_pb2\n"
        "from boneyard import codec\n"
        "from boneyard.clients.bot import Bot\n"
        "from time import monotonic\n"
        "from random import choice\n"
        "from . import base\n"
        "def f():\n"
        "    print('hi')\n"
        "    random.shuffle([])\n"
        "    importlib.import_module('socket')\n"
        "    return random.Random(1)\n"
        "import hashlib, math\n"
        "from boneyard.engine import SeatView\n"
        "from boneyard.bots.base import view_rng\n"
    )
    found = impurities(source, "probe.py")
    assert sorted(f.split(": ", 1)[1] for f in found) == sorted(
        [
            "import os",
            "import grpc",
            "from boneyard.api.v1 import ...",
            "from boneyard import ...",
            "from boneyard.clients.bot import ...",
            "from time import ...",
            "from random import choice",
            "a relative import",
            "calls print()",
            "random.shuffle",
            "imports a module dynamically",
        ]
    )
