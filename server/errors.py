"""Errors of the application layer; the gRPC layer maps each to one status code."""

from __future__ import annotations

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


class InvalidArgument(AppError):
    """Malformed input: an unknown preset or option, a tile out of range, a missing field."""


class NotFound(AppError):
    """No such game."""


class Unauthenticated(AppError):
    """No token, or a token that opens no seat of this game."""


class PermissionDenied(AppError):
    """Acting for another seat, or asking for what the seat may not see."""


class PreconditionFailed(AppError):
    """The rules refuse the action now (wrong phase, not your turn, must follow suit...)."""


class StaleVersion(AppError):
    """The game has moved on since the version the client sent, or another writer won."""


class OutOfRange(AppError):
    """A position past the end (watching a game from a version it has not reached)."""


class DeadlineExceeded(AppError):
    """Work given up because its time ran out: the caller's deadline, or a limit of the
    server's (verifying an uploaded record)."""


class Unavailable(AppError):
    """The server cannot take the call now (it is shutting down): try another server."""
