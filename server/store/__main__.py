"""``python -m boneyard.server.store DATABASE_URL``: migrate the database to the latest schema."""

from __future__ import annotations

import logging
import sys

from boneyard.server.store.migrate import upgrade


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m boneyard.server.store DATABASE_URL\n")
        return 2
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    upgrade(argv[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
