"""Errors of the store layer.

Every error names the game (and the version, seat or request it is about) so a log line or a
gRPC status message built from it says exactly what went wrong.  The servicer maps them to
status codes: ``GameNotFound`` -> NOT_FOUND, ``VersionConflict`` -> ABORTED, ``SeatTaken`` ->
ALREADY_EXISTS or FAILED_PRECONDITION, ``ChainBroken`` -> DATA_LOSS.
"""

from __future__ import annotations

__all__ = [
    "ChainBroken",
    "DuplicateRequest",
    "DuplicateToken",
    "GameExists",
    "GameNotFound",
    "GameStarted",
    "InvalidCursor",
    "MigrationsNotFound",
    "SeatNotHeld",
    "SeatTaken",
    "SeedConflict",
    "StoreError",
    "VersionConflict",
]


class StoreError(Exception):
    """Base class of everything the store raises on purpose."""


class GameNotFound(StoreError, LookupError):
    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game {game_id!r}")
        self.game_id = game_id


class GameExists(StoreError):
    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} already exists")
        self.game_id = game_id


class VersionConflict(StoreError):
    """Another writer appended first: the caller's ``expected_version`` is stale.

    ``actual`` is the game's version as seen when the conflict was detected, or ``None``
    when the conflict surfaced only as a duplicate ``(game_id, seq)`` row.
    """

    def __init__(self, game_id: str, expected: int, actual: int | None) -> None:
        seen = "another event" if actual is None else f"version {actual}"
        super().__init__(
            f"game {game_id!r}: expected version {expected}, but found {seen} "
            f"(another writer appended first)"
        )
        self.game_id = game_id
        self.expected = expected
        self.actual = actual


class DuplicateRequest(StoreError):
    """A request id was already applied to this game; look its response up instead."""

    def __init__(self, game_id: str, request_id: str) -> None:
        super().__init__(f"game {game_id!r}: request {request_id!r} was already applied")
        self.game_id = game_id
        self.request_id = request_id


class SeatTaken(StoreError):
    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(f"game {game_id!r}: seat {seat} is already taken")
        self.game_id = game_id
        self.seat = seat


class SeatNotHeld(StoreError):
    """Leaving a seat the token does not hold (left already, or never taken with it)."""

    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(f"game {game_id!r}: seat {seat} is not held by that token")
        self.game_id = game_id
        self.seat = seat


class GameStarted(StoreError):
    """Leaving a seat of a game that is no longer open."""

    def __init__(self, game_id: str, status: str) -> None:
        super().__init__(f"game {game_id!r} is {status}: its seats can no longer be left")
        self.game_id = game_id
        self.status = status


class DuplicateToken(StoreError):
    """The token (hash) already identifies another seat of this game."""

    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(f"game {game_id!r}: that token already identifies seat {seat}")
        self.game_id = game_id
        self.seat = seat


class SeedConflict(StoreError):
    """A hand already has a committed seed, and it is not the one being recorded."""

    def __init__(self, game_id: str, hand_number: int) -> None:
        super().__init__(
            f"game {game_id!r}: hand {hand_number} already has a different committed seed"
        )
        self.game_id = game_id
        self.hand_number = hand_number


class ChainBroken(StoreError):
    """The stored events do not hash to the stored chain: the log was edited or lost rows."""

    def __init__(self, game_id: str, seq: int, reason: str) -> None:
        super().__init__(f"game {game_id!r}: hash chain broken at event {seq}: {reason}")
        self.game_id = game_id
        self.seq = seq
        self.reason = reason


class InvalidCursor(StoreError, ValueError):
    def __init__(self, cursor: str) -> None:
        # A prefix: the cursor is the client's, and may be megabytes long.
        super().__init__(f"invalid page cursor {cursor[:40]!r}")
        self.cursor = cursor


class MigrationsNotFound(StoreError):
    def __init__(self, tried: list[str]) -> None:
        super().__init__(
            "cannot find the Alembic migrations directory (env.py and versions/); tried: "
            + (", ".join(tried) or "no package boneyard.migrations is installed")
            + " (reinstall boneyard, or point BONEYARD_MIGRATIONS_DIR at a copy)"
        )
        self.tried = tried
