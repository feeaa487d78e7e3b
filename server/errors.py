"""Errors of the application layer; the gRPC layer maps each to one status code.

Each carries a ``reason`` (an upper-snake name of ``ErrorReason`` in
proto/boneyard/v1/errors.proto, sent as the refusal's ``ErrorInfo.reason``) and ``metadata``,
the facts a program may want (``game_id``, ``current_version`` ...), as strings. A class has a
default reason; a raise site whose meaning is finer names its own::

    raise NotFound(f"no game {game_id}", reason="GAME_NOT_FOUND", game_id=game_id)
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AppError",
    "DeadlineExceeded",
    "InvalidArgument",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "PreconditionFailed",
    "StaleVersion",
    "Unauthenticated",
    "Unavailable",
]


class AppError(Exception):
    """Base of every error a request can get."""

    default_reason: ClassVar[str] = "BAD_ARGUMENT"

    def __init__(self, message: str, *, reason: str | None = None, **metadata: object) -> None:
        super().__init__(message)
        self.reason = reason or self.default_reason
        self.metadata: dict[str, str] = {
            name: str(value) for name, value in metadata.items() if value is not None
        }


class InvalidArgument(AppError):
    """Malformed input: an unknown preset or option, a tile out of range, a missing field."""

    default_reason = "BAD_ARGUMENT"


class NotFound(AppError):
    """No such game."""

    default_reason = "GAME_NOT_FOUND"


class Unauthenticated(AppError):
    """No token, or a token that opens no seat of this game."""

    default_reason = "BAD_TOKEN"


class PermissionDenied(AppError):
    """Acting for another seat, or asking for what the seat may not see."""

    default_reason = "NOT_YOUR_SEAT"


class PreconditionFailed(AppError):
    """The rules refuse the action now (wrong phase, not your turn, must follow suit...)."""

    default_reason = "GAME_NOT_OPEN"


class StaleVersion(AppError):
    """The game has moved on since the version the client sent, or another writer won."""

    default_reason = "STALE_VERSION"


class OutOfRange(AppError):
    """A position past the end (watching a game from a version it has not reached)."""

    default_reason = "VERSION_OUT_OF_RANGE"


class DeadlineExceeded(AppError):
    """Work given up because its time ran out: the caller's deadline, or a limit of the
    server's (verifying an uploaded record)."""

    default_reason = "TIMED_OUT"


class Unavailable(AppError):
    """The server cannot take the call now (it is shutting down): try another server."""

    default_reason = "SHUTTING_DOWN"
