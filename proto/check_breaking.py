"""``buf breaking`` of the API (proto/boneyard/v1) against the API as it was released: the
newest tag reachable from the commit before this one, or, before the first tag, that previous
commit itself (``main``'s previous commit, in CI's clone of main). Uncommitted changes to the
.proto files are compared with ``HEAD`` instead, so a breaking edit fails ``make lint`` before
it is committed. ``BONEYARD_API_BASELINE=REF`` names the baseline outright.

One change buf's FILE rules count as breaking is let through: a method whose idempotency was
unsaid marked ``NO_SIDE_EFFECTS`` (a read declared a read). It changes no byte on the wire and
nothing for an existing client (a POST is answered as before); it lets Connect clients send the
read as an HTTP GET. Any other change of a method's idempotency (a read unmarked, a method
marked a read that was not one) is still refused: clients that send it as a GET would break.

Run from the repository's root (``make breaking``, ``make lint`` and ``.ci/run`` do):
    python proto/check_breaking.py [--buf PATH]
Exit status: 0 compatible; 1 (or buf's own status) with what broke printed, one line per change.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API = "proto"
_DECLARED_A_READ = re.compile(
    r'changed option "idempotency_level" from "IDEMPOTENCY_UNKNOWN" to "NO_SIDE_EFFECTS"\.$'
)


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def baseline() -> tuple[str, str] | None:
    """The commit to compare with and why it was chosen; ``None`` when there is none (a
    repository of one commit, or a shallow clone without the parent)."""
    named = os.environ.get("BONEYARD_API_BASELINE")
    if named:
        found = _git("rev-parse", "--verify", f"{named}^{{commit}}")
        if found.returncode != 0:
            raise SystemExit(f"BONEYARD_API_BASELINE={named}: no such commit")
        return found.stdout.strip(), f"BONEYARD_API_BASELINE={named}"
    if _git("diff", "--quiet", "HEAD", "--", API).returncode != 0:
        return _git(
            "rev-parse", "HEAD"
        ).stdout.strip(), "HEAD (the .proto files have uncommitted changes)"
    parent = _git("rev-parse", "--verify", "HEAD^")
    if parent.returncode != 0:
        return None
    tag = _git("describe", "--tags", "--abbrev=0", "HEAD^")
    if tag.returncode == 0:
        name = tag.stdout.strip()
        return _git("rev-parse", f"{name}^{{commit}}").stdout.strip(), f"the last release, {name}"
    return parent.stdout.strip(), "the previous commit (no release is tagged yet)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--buf", default=str(ROOT / "node_modules" / ".bin" / "buf"))
    args = parser.parse_args(argv)
    against = baseline()
    if against is None:
        print("buf breaking: no earlier commit to compare the API with; nothing to check")
        return 0
    commit, why = against
    print(f"buf breaking: the API against {commit[:12]}, {why}", flush=True)
    result = subprocess.run(
        [args.buf, "breaking", "--against", f".git#ref={commit}", "--error-format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    breaking, allowed = changes(result.stdout)
    for line in allowed:
        print(f"allowed: {line}")
    if result.returncode != 0 and not breaking and not allowed:
        print(result.stderr, end="", file=sys.stderr)  # buf itself failed
        return result.returncode
    for line in breaking:
        print(line)
    if breaking:
        print(
            "buf breaking: the change above breaks boneyard.v1 for existing clients; add a "
            "field or message instead of changing one (or start boneyard.v2)",
            file=sys.stderr,
        )
        return 1
    return 0


def changes(output: str) -> tuple[list[str], list[str]]:
    """buf's findings (its JSON lines), as ``path:line:column:message``: those that break
    clients, and those let through (see the module's doc)."""
    breaking, allowed = [], []
    for line in output.splitlines():
        if not line.strip():
            continue
        found = json.loads(line)
        shown = (
            f"{found['path']}:{found.get('start_line', 0)}:{found.get('start_column', 0)}:"
            f"{found['message']}"
        )
        declared_a_read = found.get("type") == "RPC_SAME_IDEMPOTENCY_LEVEL" and bool(
            _DECLARED_A_READ.search(found["message"])
        )
        (allowed if declared_a_read else breaking).append(shown)
    return breaking, allowed


if __name__ == "__main__":
    sys.exit(main())
