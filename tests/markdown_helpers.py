"""Reading the documentation as Markdown (markdown-it, CommonMark): its headings, the sections
under them, its links and the code blocks of a section, so that a test reads an example where
a reader finds it, and a link is checked where it points."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
"""Every Markdown file a reader of the repository is sent to."""

_PARSER = MarkdownIt("commonmark").enable("table")


@dataclass(frozen=True)
class Heading:
    level: int
    title: str
    line: int
    """0-based line of the heading in its file."""


def _tokens(path: Path) -> list[Token]:
    return _PARSER.parse(path.read_text(encoding="utf-8"))


def headings(path: Path) -> list[Heading]:
    tokens = _tokens(path)
    found = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            found.append(Heading(int(token.tag[1:]), tokens[i + 1].content, token.map[0]))
    return found


def anchors(path: Path) -> set[str]:
    """The fragments GitHub gives the headings of ``path``: lower case, punctuation dropped,
    spaces made hyphens, a repeated one numbered (``-1``, ``-2`` ...); and the explicit
    ``<a id="...">`` anchors (the generated API reference names its entries so)."""
    seen: dict[str, int] = {}
    names = set(re.findall(r'<a id="([^"]+)"></a>', path.read_text(encoding="utf-8")))
    for heading in headings(path):
        slug = re.sub(r"[^\w\- ]", "", heading.title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        names.add(slug if count == 0 else f"{slug}-{count}")
    return names


def section(path: Path, title: str) -> str:
    """The text under the heading ``title`` of ``path``, up to the next heading of the same or
    a higher level."""
    found = headings(path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for i, heading in enumerate(found):
        if heading.title == title:
            end = next((h.line for h in found[i + 1 :] if h.level <= heading.level), len(lines))
            return "".join(lines[heading.line + 1 : end])
    raise AssertionError(f"{path.relative_to(REPO)} has no heading {title!r}")


def code_blocks(text: str, language: str) -> list[str]:
    """The fenced code blocks of ``text`` written in ``language``, in order."""
    return [t.content for t in _PARSER.parse(text) if t.type == "fence" and t.info == language]


def links(path: Path) -> list[str]:
    """Every link and image target of ``path``, as written."""
    targets = []
    for token in _tokens(path):
        for child in token.children or ():
            if child.type == "link_open":
                targets.append(str(child.attrs["href"]))
            elif child.type == "image":
                targets.append(str(child.attrs["src"]))
    return targets
