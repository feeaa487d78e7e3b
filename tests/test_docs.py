"""The documentation a clone holds is whole: every link of the README and of ``docs/`` leads to
a file of the repository (and to a heading that is there), never outside it; every path it
names in code is a file or folder of the repository; the rules name every option and preset
the engine has; and the README stays a front door."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from boneyard.engine.rulesets import option_names, preset_names
from tests.markdown_helpers import DOCUMENTS, REPO, anchors, links

README_MOST_LINES = 300
"""Issue 34: "a README that is a front door ... of a few hundred lines at most"."""

TOP_FOLDERS = (
    "api",
    "benchmarks",
    "bots",
    "clients",
    "docs",
    "engine",
    "migrations",
    "proto",
    "records",
    "server",
    "tests",
    "web",
)
# A path of the repository written in code: a top folder, then more of a path (no spaces, no
# placeholders in capitals), as `server/transport/http/door.py` or `docs/rules.md`.
REPO_PATH = re.compile(rf"`((?:{'|'.join(TOP_FOLDERS)})/[\w./-]*)`")


def _name(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_every_link_leads_to_a_file_and_heading_of_the_repository(document: Path) -> None:
    broken = []
    for target in links(document):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            continue  # the web: not this test's to fetch
        where = (document.parent / unquote(parts.path)).resolve() if parts.path else document
        if not where.is_relative_to(REPO) or not where.exists():
            broken.append(f"{target}: no such file in the repository")
        elif parts.fragment and where.suffix == ".md" and parts.fragment not in anchors(where):
            broken.append(f"{target}: {_name(where)} has no heading #{parts.fragment}")
    assert not broken, f"{_name(document)}: " + "; ".join(broken)


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_every_path_named_in_code_is_in_the_repository(document: Path) -> None:
    missing = sorted(
        {
            path
            for path in REPO_PATH.findall(document.read_text(encoding="utf-8"))
            if not (REPO / path).exists()
        }
    )
    assert not missing, f"{_name(document)} names {missing}, which the repository lacks"


def test_the_rules_name_every_option_and_preset() -> None:
    rules = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    missing = [name for name in (*option_names(), *preset_names()) if f"`{name}`" not in rules]
    assert not missing, f"docs/rules.md does not explain {missing}"


def test_the_readme_is_a_front_door() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MOST_LINES
    linked = {Path(urlsplit(t).path).name for t in links(REPO / "README.md")}
    unlinked = [p.name for p in sorted((REPO / "docs").glob("*.md")) if p.name not in linked]
    assert not unlinked, f"README.md links no {unlinked}"
    assert "LICENSE" in linked
