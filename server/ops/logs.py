"""The server's log: what a line knows of the call it was written in, and the two formats
(``--log-format text|json``).

Every RPC (on the gRPC port and the HTTP listener alike) runs inside ``call_scope``, which
sets the call's request id (the client's ``x-request-id`` when it is a valid one, else a new
one) in a context variable; the application layer adds the game, seat and account once it
has resolved them (``known``). ``JsonFormatter`` writes each record as one JSON object with
those fields, so every line logged during a call, by any module, carries them. Nothing here
ever sees a token or an API key: the fields are ids and names only. With ``json``, the lines
others write straight to stderr (gRPC's C core) are made records of the log too
(``boneyard.server.ops.stderr``): every line of stderr is then a JSON object.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from boneyard.server.ops import stderr

__all__ = [
    "LOG_FORMATS",
    "REQUEST_ID_HEADER",
    "CallFields",
    "JsonFormatter",
    "TextFormatter",
    "call_scope",
    "configure",
    "current",
    "known",
    "request_id_of",
]

REQUEST_ID_HEADER = "x-request-id"
"""A client may name its call (at most 64 printable characters); the server's log and an
INTERNAL answer quote it, so the two can be matched. Without one the server makes one up."""

LOG_FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class CallFields:
    """What the log knows of the call being handled. Changed in place: a call's work may run
    in tasks of its own (the drain races each stream message against the shutdown), whose
    copies of the context hold this same object, so what they learn reaches the access line.

    The request id and the game are found when something first asks for them (a line
    written, an INTERNAL answer), from the call's metadata and request: most calls are never
    asked. A call the client did not name gets a request id made up then (a read of the
    system's random source)."""

    __slots__ = ("_game", "_metadata", "_request", "_request_id", "account", "seat")

    def __init__(
        self,
        request_id: str | None = None,
        game: str | None = None,
        seat: int | None = None,
        account: str | None = None,
        *,
        metadata: Any = None,
        request: Any = None,
    ) -> None:
        """``metadata``: the call's, for the client's ``x-request-id``; ``request``: its
        request, for the game it names (``game_id``)."""
        self._request_id = request_id
        self._metadata = metadata
        self._game = game
        self._request = request
        self.seat = seat
        self.account = account
        """The account's name (never its key)."""

    @property
    def request_id(self) -> str:
        if self._request_id is None:
            self._request_id = _named(self._metadata) or new_request_id()
        return self._request_id

    @property
    def game(self) -> str | None:
        """The game the call is about: as the application resolved it, else as its request
        names it."""
        if self._game is None and self._request is not None:
            self._game = game_of(self._request)
            self._request = None
        return self._game


def game_of(request: Any) -> str | None:
    """The game a request names (its ``game_id`` field), if it has one."""
    game_id = getattr(request, "game_id", None)
    return game_id if isinstance(game_id, str) and game_id else None


_call: contextvars.ContextVar[CallFields | None] = contextvars.ContextVar(
    "boneyard_call", default=None
)


def current() -> CallFields | None:
    """The fields of the call being handled (``None`` outside a call: background tasks)."""
    return _call.get()


def request_id_of(metadata: Any) -> str:
    """The client's ``x-request-id`` if it is a valid one, else a new id."""
    return _named(metadata) or new_request_id()


def new_request_id() -> str:
    return uuid.uuid4().hex[:16]


def _named(metadata: Any) -> str | None:
    """The client's ``x-request-id``, if it sent a valid one."""
    for key, value in metadata or ():
        if key == REQUEST_ID_HEADER:
            text = value if isinstance(value, str) else value.decode("ascii", "replace")
            if 0 < len(text) <= 64 and text.isprintable():
                return text
    return None


@contextlib.contextmanager
def call_scope(metadata: Any, request: Any = None) -> Iterator[CallFields]:
    """Run a call with its request id (and the game its request names) in the log's
    context; yields the fields as they stand at the start."""
    fields = CallFields(metadata=metadata, request=request)
    token = enter(fields)
    try:
        yield fields
    finally:
        leave_call(token)


def enter(fields: CallFields) -> Any:
    """``call_scope``'s start with ``fields`` made by the caller, which keeps the token
    ``leave_call`` takes (the observer of every call, whose one object a call is its fields
    too: a generator's frames would cost more than the rest)."""
    return _call.set(fields)


def leave_call(token: Any) -> None:
    """``call_scope``'s end."""
    # A stream closed by the loop's shutdown (not by its own task) ends in another context,
    # where there is nothing to restore.
    try:
        _call.reset(token)
    except ValueError:
        pass


def known(*, game: str | None = None, seat: int | None = None, account: str | None = None) -> None:
    """The application layer resolved the call's game, seat or account: the rest of the
    call's lines carry it. Nothing outside a call."""
    fields = _call.get()
    if fields is None:
        return
    if game:
        # (Set here, not through a property's setter: a Python call at every call that names
        # a game.)
        fields._game = game
        fields._request = None
    if seat is not None:
        fields.seat = seat
    if account:
        fields.account = account


_RESERVED = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}
"""The attributes every record has: anything else on a record came in ``extra=``."""


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ISO 8601), ``level``, ``logger``,
    ``message``, the call's fields when logged during a call, whatever the line passed in
    ``extra=``, and ``exception`` (the traceback) if it has one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = _call.get()
        if fields is not None:
            line["request_id"] = fields.request_id
            for name in ("game", "seat", "account"):
                value = getattr(fields, name)
                if value is not None:
                    line[name] = value
        for key, value in record.__dict__.items():
            if key not in _RESERVED and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The plain format, with the call's fields at the end of a line logged during a call."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = _call.get()
        if fields is None:
            return text
        parts = [f"request={fields.request_id}"]
        parts += [
            f"{name}={getattr(fields, name)}"
            for name in ("game", "seat", "account")
            if getattr(fields, name) is not None
        ]
        first, newline, rest = text.partition("\n")  # after the message, before a traceback
        return f"{first} [{' '.join(parts)}]{newline}{rest}"


def configure(level: str, log_format: str = "text") -> None:
    """The root logger's one handler (stderr), in ``log_format``: for the process's entry
    point (``json`` takes over the process's stderr, ``boneyard.server.ops.stderr``, so that
    what gRPC's C core writes there is JSON too)."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format {log_format!r} is not one of {', '.join(LOG_FORMATS)}")
    if log_format == "json":
        handler = stderr.capture()
        handler.setFormatter(JsonFormatter())
    else:
        handler = logging.StreamHandler()
        handler.setFormatter(TextFormatter())
    logging.basicConfig(level=level, handlers=[handler], force=True)
