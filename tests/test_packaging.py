"""Boneyard installs like a real Python distribution: ``make dist`` builds an sdist and a wheel
(the wheel from the sdist), the wheel installs into a fresh virtualenv outside the checkout, and
the installed ``boneyard-server`` and ``boneyard bot`` play a whole game from another directory,
finding the migrations without any setting. Every import name is under ``boneyard``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import urllib.request
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from boneyard.server.store import migrate
from boneyard.server.store.errors import MigrationsNotFound
from tests.server.process_helpers import ServerProcess, clean_env

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
FOLDERS = dict(PYPROJECT["tool"]["setuptools"]["package-dir"])
GENERIC_NAMES = ("engine", "records", "api", "bots", "server", "clients", "migrations")
BUILD_TIMEOUT = 600
FINAL = re.compile(r"^final score: .*; team (?P<winner>\d) wins$", re.MULTILINE)


def _package_of(folder: Path) -> str | None:
    """The import name pyproject.toml maps ``folder`` (relative to the repository) to."""
    best: tuple[str, str] | None = None
    for name, root in FOLDERS.items():
        root_path = Path(root)
        inside = folder == root_path or root_path in folder.parents
        if inside and (best is None or len(root) > len(best[1])):
            best = (name, root)
    if best is None:
        return None
    name, root = best
    rest = folder.relative_to(root).parts
    return ".".join((name, *rest))


def test_every_package_folder_is_a_listed_package_under_boneyard() -> None:
    """A folder of Python modules that pyproject.toml does not list would be left out of the
    wheel (the checkout's tests would still pass on it)."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = set()
    for top in ("engine", "records", "api", "bots", "server", "clients", "migrations"):
        for init in (REPO / top).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            package = _package_of(init.parent.relative_to(REPO))
            assert package is not None and package.startswith("boneyard"), init
            found.add(package)
    assert found == listed


def test_no_module_imports_the_old_top_level_names() -> None:
    """``import engine`` would still work in the checkout (pytest puts the root on sys.path),
    so the tree is read for it: every import is ``boneyard.engine`` and so on."""
    pattern = re.compile(
        rf"^\s*(?:from|import) (?:{'|'.join(GENERIC_NAMES)})(?:\.|\s|$)", re.MULTILINE
    )
    offenders = []
    folders = (
        "engine", "records", "api", "bots", "server", "clients", "migrations", "proto", "tests",
        "benchmarks",
    )
    for folder in folders:
        for path in (REPO / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            offenders += [
                f"{path.relative_to(REPO)}: {m.group(0).strip()}" for m in pattern.finditer(text)
            ]
    assert offenders == []


def test_the_migrations_are_found_in_the_package_without_any_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BONEYARD_MIGRATIONS_DIR", raising=False)
    assert migrate.migrations_dir() == REPO / "migrations"  # the editable install's mapping


def test_boneyard_migrations_dir_overrides_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    copy = tmp_path / "patched"
    shutil.copytree(REPO / "migrations", copy)
    monkeypatch.setenv("BONEYARD_MIGRATIONS_DIR", str(copy))
    assert migrate.migrations_dir() == copy
    monkeypatch.setenv("BONEYARD_MIGRATIONS_DIR", str(tmp_path / "missing"))
    with pytest.raises(MigrationsNotFound, match="missing"):
        migrate.migrations_dir()


def test_the_clients_never_import_the_server() -> None:
    """Clients speak only the API (STYLE.md 8): nothing under clients/ imports
    ``boneyard.server``, even lazily inside a function."""
    offenders = []
    for path in (REPO / "clients").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if any(n == "boneyard.server" or n.startswith("boneyard.server.") for n in names):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


CODE_GENERATORS = ("grpcio-tools", "mypy-protobuf", "protoc-gen-connectrpc")
"""The dev extra's generators of the checked-in API code (``make proto``)."""
GENERATOR_MODULES = ("grpc_tools", "mypy_protobuf", "protoc_gen_connectrpc")


def test_nothing_the_distribution_ships_imports_a_code_generator() -> None:
    """The generators are in the dev extra only (``pip install`` of the wheel does not bring
    them): no shipped module may import one, even lazily inside a function."""
    offenders = []
    for top in ("engine", "records", "api", "bots", "server", "clients", "migrations"):
        for path in (REPO / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                if any(n.split(".")[0] in GENERATOR_MODULES for n in names):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def test_the_code_generators_are_dev_requirements_only() -> None:
    def named(requirement: str) -> str:
        return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()

    run_time = {named(r) for r in PYPROJECT["project"]["dependencies"]}
    dev = {named(r) for r in PYPROJECT["project"]["optional-dependencies"]["dev"]}
    assert not run_time & set(CODE_GENERATORS)
    assert set(CODE_GENERATORS) <= dev


# --- the built distribution, installed outside the checkout -------------------------------


@dataclass(frozen=True)
class Installed:
    """A fresh virtualenv, outside the checkout, with the wheel installed."""

    root: Path
    wheel: Path
    sdist: Path

    @property
    def bin(self) -> Path:
        return self.root / "venv" / "bin"

    @property
    def site_packages(self) -> Path:
        (found,) = (self.root / "venv" / "lib").glob("python3*/site-packages")
        return found

    @property
    def elsewhere(self) -> Path:
        """A working directory with nothing of the checkout in it."""
        path = self.root / "elsewhere"
        path.mkdir(exist_ok=True)
        return path

    def env(self) -> dict[str, str]:
        """No PYTHONPATH, no BONEYARD_* (so no BONEYARD_MIGRATIONS_DIR), this venv first."""
        env = clean_env()
        env.pop("PYTHONPATH", None)
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.root / "venv")
        return env

    def python(self, code: str) -> str:
        done = subprocess.run(
            [str(self.bin / "python"), "-c", code],
            cwd=self.elsewhere,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False
    )
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    if shutil.which("make") is None:
        pytest.skip("needs GNU make")
    root = tmp_path_factory.mktemp("packaging")
    dist = root / "dist"
    _run(
        ["make", "--no-print-directory", "dist", f"DIST={dist}", f"PY={sys.executable}"],
        cwd=REPO,
        env=clean_env(),
    )
    (wheel,) = dist.glob("boneyard-*.whl")
    (sdist,) = dist.glob("boneyard-*.tar.gz")
    venv.create(root / "venv", with_pip=True)
    here = Installed(root, wheel, sdist)
    _run(
        [str(here.bin / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        cwd=here.elsewhere,
        env=here.env(),
    )
    yield here


@pytest.mark.slow
def test_the_installed_wheel_brings_no_code_generator_and_the_server_runs(
    installed: Installed,
) -> None:
    listed = _run(
        [str(installed.bin / "python"), "-m", "pip", "list", "--format", "json"],
        cwd=installed.elsewhere,
        env=installed.env(),
    )
    names = {  # PEP 503's normal form: pip lists some with "_" or capitals
        re.sub(r"[-_.]+", "-", package["name"]).lower() for package in json.loads(listed.stdout)
    }
    assert "boneyard" in names and "grpcio" in names
    # The server's event loop comes with it where it builds (server/ops/event_loop.py).
    assert ("uvloop" in names) == (sys.platform != "win32")
    assert not names & set(CODE_GENERATORS)
    helped = _run(
        [str(installed.bin / "boneyard-server"), "--help"],
        cwd=installed.elsewhere,
        env=installed.env(),
    )
    assert helped.stdout.startswith("usage: boneyard-server"), helped.stdout


@pytest.mark.slow
def test_site_packages_holds_no_generic_top_level_module(installed: Installed) -> None:
    for name in GENERIC_NAMES:
        assert not (installed.site_packages / name).exists(), name
        assert not (installed.site_packages / f"{name}.py").exists(), name
    with zipfile.ZipFile(installed.wheel) as wheel:
        tops = {n.split("/", 1)[0] for n in wheel.namelist()}
    assert all(top == "boneyard" or top.endswith(".dist-info") for top in tops), tops


@pytest.mark.slow
def test_the_wheel_ships_the_migrations_and_the_compiled_solver_core(installed: Installed) -> None:
    out = installed.python(
        "from boneyard.server.store.migrate import migrations_dir; print(migrations_dir())\n"
        "from boneyard.engine import solver; print(solver.CORES)\n"
        "import boneyard.engine._solver_c as c; print(c.__file__)\n"
    )
    migrations, cores, compiled = out.splitlines()
    assert Path(migrations) == installed.site_packages / "boneyard" / "migrations"
    assert (Path(migrations) / "versions").is_dir()
    assert Path(compiled).parent == installed.site_packages / "boneyard" / "engine"
    assert cores == "('c', 'python')"
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = wheel.namelist()
    assert "boneyard/migrations/env.py" in names
    assert "boneyard/migrations/script.py.mako" in names
    assert any(n.startswith("boneyard/migrations/versions/0001_") for n in names)
    assert "boneyard/server/transport/http/webapp/index.html" in names
    assert any(n.startswith("boneyard/server/transport/http/webapp/assets/") for n in names)


@pytest.mark.slow
def test_installed_server_and_bot_play_a_whole_texas42_game(installed: Installed) -> None:
    database = installed.root / "fresh.db"
    with ServerProcess.start(
        installed.root / "server.log",
        f"sqlite:///{database}",
        env=installed.env(),
        cwd=installed.elsewhere,
        server_bin=installed.bin / "boneyard-server",
        http_listen="127.0.0.1:0",
    ) as server:
        # The HTTP listener (Connect, gRPC-Web) runs from the wheel too.
        with urllib.request.urlopen(f"{server.http_url}/healthz", timeout=30) as health:
            assert json.load(health) == {"status": "SERVING"}
        # ... and serves the web app from the wheel's package data, its assets included.
        with urllib.request.urlopen(f"{server.http_url}/", timeout=30) as index:
            page = index.read().decode()
        assert "<title>Boneyard" in page
        script = re.search(r'src="\./(assets/[^"]+\.js)"', page)
        assert script, page
        with urllib.request.urlopen(f"{server.http_url}/{script[1]}", timeout=30) as asset:
            assert asset.headers.get_content_type() in ("text/javascript", "application/javascript")
            assert asset.read() == (REPO / "server" / "transport" / "http" / "webapp" / script[1]).read_bytes()
        done = subprocess.run(
            [
                str(installed.bin / "boneyard"),
                "bot",
                "--server",
                server.address,
                "--new",
                "texas42",
                "--strategy",
                "heuristic",
            ],
            cwd=installed.elsewhere,
            env=installed.env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert FINAL.search(done.stdout), done.stdout
        assert "Traceback" not in server.log_text()
    assert database.is_file()
    assert not (installed.elsewhere / "boneyard.db").exists()


@pytest.mark.slow
def test_without_a_compiler_the_wheel_installs_and_the_pure_python_core_is_used(
    installed: Installed,
) -> None:
    """The C core is an optional extension: a build whose compiler fails (CC=false) still makes
    a wheel, which installs (here over the first, in the same venv) and solves with the Python
    core."""
    dist = installed.root / "dist-no-compiler"
    env = clean_env(CC="false", LDSHARED="false")
    # From the sdist, built in a temporary directory (not in the checkout's build/, where an
    # earlier build's compiled core could be picked up).
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-cache-dir",
            "--wheel-dir",
            str(dist),
            str(installed.sdist),
        ],
        cwd=installed.elsewhere,
        env=env,
    )
    (wheel,) = dist.glob("boneyard-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert not [n for n in archive.namelist() if n.endswith(".so")]
    _run(
        [
            str(installed.bin / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--force-reinstall",
            str(wheel),
        ],
        cwd=installed.elsewhere,
        env=installed.env(),
    )
    # The hand of test_all_the_top_trumps_take_every_trick_and_all_the_count (tests/solver).
    out = installed.python(
        "from boneyard import engine\n"
        "from boneyard.engine.contracts import Contract\n"
        "from boneyard.engine.solver import CORES, Game, Position, solve\n"
        "from boneyard.engine.tiles import parse_tiles\n"
        "game = Game.of(engine.ruleset('texas42'), Contract.of_trump(6))\n"
        "hands = tuple(parse_tiles(h) for h in\n"
        "              ('6-6 6-5 6-4', '5-5 5-0 1-0', '6-3 3-2 2-2', '4-1 4-4 1-1'))\n"
        "print(CORES, solve(game, Position(hands, leader=0)))\n"
    )
    assert out.split() == ["('python',)", str(3 + 10 + 10 + 5 + 5 + 5)]
