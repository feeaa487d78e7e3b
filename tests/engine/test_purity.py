"""``engine/`` is pure (STYLE.md rule 1): no I/O, no logging, no clock, no ``random``, and
nothing of the server, the clients or their transports and storage."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"

LAYERS_ABOVE = {
    "boneyard.server", "boneyard.clients", "boneyard.bots", "boneyard.v1", "grpc", "sqlalchemy",
}  # fmt: skip
RANDOMNESS = {"random", "secrets"}  # a shuffle takes a seed
CLOCK = {"time", "datetime"}
IO = {"os", "socket", "logging"}  # the engine explains itself with exceptions, not logs
FORBIDDEN_MODULES = frozenset(LAYERS_ABOVE | RANDOMNESS | CLOCK | IO)
FORBIDDEN_CALLS = frozenset({"print"})

SOURCES = sorted(ENGINE.rglob("*.py"))


def _forbidden(module: str) -> bool:
    """Whether ``module`` is, or is inside, one of the forbidden modules."""
    parts = module.split(".")
    return any(".".join(parts[:n]) in FORBIDDEN_MODULES for n in range(1, len(parts) + 1))


def impurities(source: str, name: str) -> list[str]:
    """What in this source breaks the rule, each as ``name:line: what``."""
    tree = ast.parse(source, filename=name)
    found: list[str] = []

    def report(node: ast.AST, what: str) -> None:
        found.append(f"{name}:{getattr(node, 'lineno', '?')}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _forbidden(alias.name):
                    report(node, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and _forbidden(node.module):
                report(node, f"from {node.module} import ...")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
                report(node, f"calls {func.id}()")
            # Dynamic imports of a forbidden module by a literal name.
            dynamic = (isinstance(func, ast.Name) and func.id == "__import__") or (
                isinstance(func, ast.Attribute) and func.attr == "import_module"
            )
            if dynamic and node.args and isinstance(node.args[0], ast.Constant):
                target = node.args[0].value
                if isinstance(target, str) and _forbidden(target):
                    report(node, f"imports {target} dynamically")
    return found


def test_the_engine_has_sources() -> None:
    assert ENGINE.is_dir() and (ENGINE / "__init__.py") in SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ENGINE.parent)))
def test_engine_module_is_pure(path: Path) -> None:
    name = str(path.relative_to(ENGINE.parent))
    assert impurities(path.read_text(encoding="utf-8"), name) == []


def test_the_checker_sees_every_kind_of_impurity() -> None:
    """So that an empty report means something."""
    source = (
        "import os.path\n"
        "from boneyard.server.games.app import x\n"
        "import random as r\n"
        "from datetime import date\n"
        "def f():\n"
        "    print('hi')\n"
        "    __import__('socket')\n"
        "    importlib.import_module('logging')\n"
        "from boneyard.engine import tiles\n"
        "import boneyard.clients.bot\n"
        "from . import deal\n"
        "import hashlib\n"
    )
    found = impurities(source, "probe.py")
    assert sorted(f.split(": ", 1)[1] for f in found) == sorted(
        [
            "import os.path",
            "from boneyard.server.games.app import ...",
            "import boneyard.clients.bot",
            "import random",
            "from datetime import ...",
            "calls print()",
            "imports socket dynamically",
            "imports logging dynamically",
        ]
    )
