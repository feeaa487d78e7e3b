"""The house's rules, read from the code itself (issue 32): which package may import which,
and that what a seat may see is decided in the engine alone.

Layers, each importing only those before it:

    engine  <-  records.hashing  <-  api (codec, generated)  <-  records  <-  server

``records.hashing`` imports nothing of Boneyard (the chain, the seed commitments and token
hashes are defined once, for the server and the verifier alike); a record is written in the
API's messages, so the record library stands on the API. Beside them: ``bots`` import the
engine only, ``clients`` never the server, and the store nothing of the server outside itself;
and only the store speaks SQL.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "engine": "boneyard.engine",
    "records": "boneyard.records",
    "api": "boneyard.api",
    "bots": "boneyard.bots",
    "server": "boneyard.server",
    "clients": "boneyard.clients",
}


def modules() -> Iterator[tuple[str, Path]]:
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[0] == "v1" and folder == "api":
                continue  # generated
            name = ".".join((package, *parts)).removesuffix(".__init__")
            yield name, path


def imports_of(path: Path) -> set[str]:
    """The ``boneyard`` modules a file imports (``from boneyard.x import y`` counts as both
    ``boneyard.x`` and ``boneyard.x.y``: y may be a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("boneyard")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("boneyard"):
            if node.module != "boneyard":  # the namespace itself holds nothing
                found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


ALLOWED = {
    "boneyard.records.hashing": (),
    "boneyard.engine": ("boneyard.engine",),
    "boneyard.api": ("boneyard.engine", "boneyard.api", "boneyard.records.hashing"),
    "boneyard.records": ("boneyard.engine", "boneyard.api", "boneyard.records"),
    "boneyard.bots": ("boneyard.engine", "boneyard.bots"),
}
"""What each layer may import of Boneyard (the most specific name that a module is within)."""


def _rule_of(name: str) -> tuple[str, tuple[str, ...]] | None:
    matching = [layer for layer in ALLOWED if within(name, layer)]
    if not matching:
        return None
    layer = max(matching, key=len)
    return layer, ALLOWED[layer]


@pytest.mark.parametrize(("name", "path"), list(modules()), ids=lambda v: str(v))
def test_each_module_imports_only_the_layers_below_it(name: str, path: Path) -> None:
    imported = {i for i in imports_of(path) if i.startswith("boneyard")}
    rule = _rule_of(name)
    if rule is not None:
        layer, allowed = rule
        wrong = sorted(i for i in imported if not within(i, *allowed))
        assert not wrong, f"{name} ({layer}) imports {wrong}; it may import only {allowed}"
    if within(name, "boneyard.clients"):
        wrong = sorted(i for i in imported if within(i, "boneyard.server"))
        assert not wrong, f"{name}: clients speak only the API, never the server: {wrong}"
    if within(name, "boneyard.server.store"):
        wrong = sorted(
            i
            for i in imported
            if within(i, "boneyard.server") and not within(i, "boneyard.server.store")
        )
        assert not wrong, f"{name}: the store imports nothing of the server above it: {wrong}"


# ---------------------------------------------------------------- SQL in the store only

DATABASE_PACKAGES = {"sqlalchemy", "alembic", "psycopg", "sqlite3"}
"""What speaks to a database: SQLAlchemy, its migrations, and the drivers."""


def _packages_imported(path: Path) -> set[str]:
    """The top-level packages a file imports (anywhere in it, lazily too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.partition(".")[0])
    return found


def _server_outside_the_store() -> Iterator[tuple[str, Path]]:
    for name, path in modules():
        if within(name, "boneyard.server") and not within(name, "boneyard.server.store"):
            yield name, path


@pytest.mark.parametrize(("name", "path"), list(_server_outside_the_store()), ids=lambda v: str(v))
def test_only_the_store_speaks_sql(name: str, path: Path) -> None:
    """SQL lives in ``server/store`` alone: every other module of the server asks the store's
    public functions (its repository, the per-concern stores, the writer), and code that writes
    in another's transaction (``create_game``'s ``also``) is handed the store's
    ``Transaction``, never a SQLAlchemy type. No module is excepted, the PostgreSQL listener
    (``server/ops/pg_listener.py``) included: it listens through the store's
    ``AsyncPgListener`` and names the database by the store's ``DatabaseUrl``."""
    wrong = sorted(_packages_imported(path) & DATABASE_PACKAGES)
    assert not wrong, f"{name} imports {wrong}: SQL and the database belong to server/store"


# ---------------------------------------------------------------- what a seat sees

HIDDEN_FIELDS = {"own_hand", "face_down"}
"""The fields of the API by which a seat is shown (or not) a hidden tile."""
DECIDING = {"hide_tricks_on_mark_bids", "tricks_hidden_in"}
"""Rules only the engine reads to decide what lies face down."""


def _deciders() -> Iterator[tuple[str, Path]]:
    for name, path in modules():
        if within(name, "boneyard.server", "boneyard.api"):
            yield name, path


@pytest.mark.parametrize(("name", "path"), list(_deciders()), ids=lambda v: str(v))
def test_no_module_of_the_server_or_the_api_decides_which_tiles_a_seat_sees(
    name: str, path: Path
) -> None:
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        # Another seat's hand is never picked out of the deal (``event.hands[seat]``).
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "hands"
        ):
            pytest.fail(f"{name}:{node.lineno} picks a hand out of a deal: the engine's views do")
        if isinstance(node, ast.Attribute) and node.attr in DECIDING:
            pytest.fail(f"{name}:{node.lineno} reads {node.attr}: what lies face down is the engine's")
    # A hidden field is written only where what the engine said is encoded: in a function
    # taking the engine's SeenEvent or SeatView.
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        written = {
            n.arg for n in ast.walk(function) if isinstance(n, ast.keyword) and n.arg in HIDDEN_FIELDS
        } | {
            t.attr
            for n in ast.walk(function)
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Attribute) and t.attr in HIDDEN_FIELDS
        }
        if not written:
            continue
        takes = {
            ast.unparse(a.annotation)
            for a in function.args.args + function.args.kwonlyargs
            if a.annotation is not None
        }
        assert takes & {"SeenEvent", "SeatView"}, (
            f"{name}:{function.lineno} {function.name} writes {sorted(written)} without "
            f"being given the engine's SeenEvent or SeatView: it would decide what a seat sees"
        )
