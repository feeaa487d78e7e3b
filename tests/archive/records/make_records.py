"""Make the records in this directory: one whole game on each preset, played by the heuristic
bot in process, built and signed as the server archives a finished game.

They were made with the code of a8e0b94, before the house-rule options of issue 19 were added,
so that ``test_records_made_before_house_rules`` shows those records still encode and verify
byte for byte. Run with the old code first on the path to remake them (they are reproducible:
the deals, the bots and the signing key are seeded):

    git worktree add --detach /tmp/oldsrc a8e0b94
    # /tmp/oldtree/boneyard: links to its directories, as `make typecheck-tree` makes them
    PYTHONPATH=/tmp/oldtree python tests/archive/records/make_records.py
"""

from __future__ import annotations

import base64
import hashlib
import random
import sys
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from boneyard import engine
from boneyard.bots import strategy
from boneyard.engine import Deal, Phase
from boneyard.records import record, signing

PRESETS = ("texas42", "texas42-house", "texas42-redeal", "texas42-points", "moon", "moon-s1", "moon-pagat")
KEY = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"boneyard test records").digest())
HERE = Path(__file__).parent


def play(preset: str) -> list[engine.Event]:
    rng = random.Random(preset)
    rules = engine.ruleset(preset)
    bots = [strategy("heuristic", rng.randrange(2**31)) for _ in range(rules.players)]
    events = list(engine.start(rules))
    state = engine.replay(events)
    while state.phase is not Phase.GAME_OVER:
        if state.phase is Phase.DEAL:
            command: engine.Command = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            command = bots[state.hand.turn].choose(engine.view(state, state.hand.turn))
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
            events.append(event)
    return events


def main() -> int:
    for preset in PRESETS:
        events = play(preset)
        made = record.build_record(
            f"before-house-rules-{preset}",
            record.stored_log(events),
            name=f"{preset}, heuristic bots",
            players={seat: f"heuristic {seat}" for seat in range(engine.ruleset(preset).players)},
            create_time=datetime(2026, 11, 1, 12, 0, tzinfo=UTC),
            finish_time=datetime(2026, 11, 1, 12, 30, tzinfo=UTC),
        )
        signing.sign_record(made, KEY)
        (HERE / f"{preset}.json").write_bytes(record.dump_record(made))
        print(f"{preset}: {len(events)} events", file=sys.stderr)
    (HERE / "public_key.txt").write_text(base64.b64encode(signing.public_key_of(KEY)).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
