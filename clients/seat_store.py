"""The seats ``boneyard play`` holds, kept in a local file so that ``play --resume GAME_ID``
goes back to one after the terminal was left (Ctrl-C, a closed window).

The file is JSON, ``{game_id: {"server", "seat", "token", "name", "bots": {seat: token},
"strategy", "move_ms"}}``, readable by its owner only (mode 0600: a seat's token is the seat). It lives at
``$BONEYARD_SEATS_FILE``, else ``$XDG_STATE_HOME/boneyard/seats.json`` (``~/.local/state``
when that is not set).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["KeptSeat", "SeatStore", "default_path"]


@dataclass(frozen=True, slots=True)
class KeptSeat:
    """A seat of one game: the person's, and the seats of the bots this client ran."""

    server: str
    seat: int
    token: str
    name: str = ""
    bots: dict[int, str] = field(default_factory=dict)
    strategy: str = "heuristic"
    move_ms: int | None = None
    """The bots' budget a decision (``--move-ms``); ``None``: the strategy's own."""


def default_path() -> Path:
    given = os.environ.get("BONEYARD_SEATS_FILE")
    if given:
        return Path(given)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "boneyard" / "seats.json"


def _budget(value: object) -> int | None:
    """A kept ``move_ms``: a file written before it was kept has none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class SeatStore:
    """Read and write the kept seats (each change rewrites the whole small file)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise ValueError(f"{self.path}: not a file of kept seats ({error})") from None
        return data if isinstance(data, dict) else {}

    def get(self, game_id: str) -> KeptSeat | None:
        entry = self._load().get(game_id)
        if not isinstance(entry, dict):
            return None
        bots = entry.get("bots") or {}
        assert isinstance(bots, dict)
        return KeptSeat(
            server=str(entry["server"]),
            seat=int(entry["seat"]),  # type: ignore[call-overload]  # a JSON int, as put() wrote it
            token=str(entry["token"]),
            name=str(entry.get("name", "")),
            bots={int(s): str(t) for s, t in bots.items()},
            strategy=str(entry.get("strategy", "heuristic")),
            move_ms=_budget(entry.get("move_ms")),
        )

    def put(self, game_id: str, seat: KeptSeat) -> None:
        data = self._load()
        data[game_id] = asdict(seat)
        self._write(data)

    def forget(self, game_id: str) -> None:
        data = self._load()
        if data.pop(game_id, None) is not None:
            self._write(data)

    def _write(self, data: dict[str, dict[str, object]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = self.path.with_name(self.path.name + ".partial")
        # Made 0600 from the start: the token is never readable by others, not even briefly.
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.chmod(partial, 0o600)
        os.replace(partial, self.path)
