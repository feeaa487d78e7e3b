"""What reaches the process's stderr without passing through its log, made log records.

gRPC's C core writes its own lines to file descriptor 2, where Python's logging never sees
them (a failed TLS handshake: ``I1203 17:49:15.205426   30353 ssl_transport_security.cc:2563]
Handshake failed with error SSL_ERROR_SSL: ...``), and so may any library, Python itself, or a
house bots' worker process (which inherits the descriptor). With ``--log-format json`` every
line of stderr must be JSON, so ``capture`` points descriptor 2 at a pipe and a thread logs
each line read from it: a gRPC core line under the logger ``grpc.core`` at its own severity
(the line's first letter) with ``origin`` (the C source file and line), anything else under
``stderr`` at WARNING. The log's handler writes to the real stderr. Nothing is silenced: what
gRPC says still reaches the operator, in the log's format and subject to ``--log-level``.

An exception nobody caught (in the main thread or another) is logged whole as one record
rather than as a traceback's lines, and Python's warnings go through the log too.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import sys
import threading
from types import TracebackType
from typing import TextIO

__all__ = ["capture", "record_of"]

log = logging.getLogger(__name__)

core_log = logging.getLogger("grpc.core")
"""gRPC's C core (its lines, re-logged)."""
stray_log = logging.getLogger("stderr")
"""Any other line written to stderr."""

_CORE_LINE = re.compile(
    r"(?P<severity>[DIWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ (?P<origin>[^\s\]]+:\d+)\] ?"
    r"(?P<message>.*)"
)
"""The C core's (absl's) format: severity letter, MMDD, time, thread, file:line, message."""
_SEVERITY = {
    "D": logging.DEBUG,
    "I": logging.INFO,
    "W": logging.WARNING,
    "E": logging.ERROR,
    "F": logging.CRITICAL,
}
_DRAIN_AT_EXIT = 5.0
"""Seconds the exit waits for the relay to log what is left in the pipe (only a process that
still holds the pipe, a worker being stopped, keeps it that long)."""


def record_of(line: str) -> tuple[logging.Logger, int, str, dict[str, str]]:
    """The logger, level, message and extra fields one line of stderr is logged with."""
    core = _CORE_LINE.fullmatch(line)
    if core is None:
        return stray_log, logging.WARNING, line, {}
    return core_log, _SEVERITY[core["severity"]], core["message"], {"origin": core["origin"]}


def capture() -> logging.Handler:
    """Point descriptor 2 at a pipe whose every line is logged (by a thread of its own), and
    return the log's handler, which writes to the real stderr. Undone at exit, once the relay
    has logged what was left in the pipe."""
    sys.stderr.flush()
    real = os.dup(2)
    read, write = os.pipe()
    os.dup2(write, 2)  # inheritable: worker processes write into the pipe too
    os.close(write)
    relay = threading.Thread(target=_relay, args=(read,), name="stderr-relay", daemon=True)
    relay.start()
    atexit.register(_release, real, relay)
    sys.excepthook = _uncaught
    threading.excepthook = _uncaught_in_thread
    logging.captureWarnings(True)
    return _RealStderr(
        os.fdopen(os.dup(real), "w", buffering=1, encoding="utf-8", errors="backslashreplace")
    )


class _RealStderr(logging.StreamHandler[TextIO]):
    """The log's handler while stderr is captured."""

    def handleError(self, record: logging.LogRecord) -> None:
        # The real stderr is gone (its reader closed it): there is nowhere to say so, and
        # saying it on descriptor 2 would come back through the relay, and fail again.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handleError(record)


def _relay(read: int) -> None:
    with open(read, "rb", closefd=True) as pipe:
        for raw in pipe:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line.strip():
                continue
            logger, level, message, extra = record_of(line)
            logger.log(level, "%s", message, extra=extra)


def _release(real: int, relay: threading.Thread) -> None:
    with contextlib.suppress(Exception):  # a stderr already closed has nothing to flush
        sys.stderr.flush()
    # Descriptor 2 back on the real stderr: the pipe's last write end closes (once no worker
    # holds it), and the relay reads it to its end.
    os.dup2(real, 2)
    os.close(real)
    relay.join(_DRAIN_AT_EXIT)


def _uncaught(
    kind: type[BaseException], error: BaseException, traceback: TracebackType | None
) -> None:
    log.critical("uncaught %s: %s", kind.__name__, error, exc_info=error)


def _uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    log.error(
        "uncaught %s in thread %s: %s",
        args.exc_type.__name__,
        name,
        args.exc_value,
        exc_info=args.exc_value,
    )
