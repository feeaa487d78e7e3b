"""A refusal as a program reads it: the status code, the message, and a ``google.rpc.ErrorInfo``
(``reason``, ``domain``, ``metadata``) in a ``google.rpc.Status``, the same on every transport.

The reasons are ``ErrorReason`` of proto/boneyard/v1/errors.proto without its prefix. An
``AppError`` names its own (``reason=`` at the raise site, else its class's default); the
engine's errors name theirs as a class attribute (``engine.NotYourTurn.reason``); the other
expected errors (of the codec, the store, the record reader) are named here, by class. No
reason is ever guessed from a message's text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import errors_pb2
from boneyard.records.record import MalformedRecord
from boneyard.server.errors import AppError
from boneyard.server.store import errors as store_errors

__all__ = ["DOMAIN", "STATUS_TRAILER", "Refusal", "reason_of", "reasons", "too_large"]

DOMAIN = "boneyard.v1"
"""The ``ErrorInfo.domain`` of every refusal: the API's package."""

STATUS_TRAILER = "grpc-status-details-bin"
"""The trailer that carries the ``google.rpc.Status`` (``rpc_status.to_status`` writes it,
``rpc_status.from_call`` reads it; grpc_status keeps its own name for it private)."""

_PREFIX = "ERROR_REASON_"

_BY_CLASS: dict[type[BaseException], str] = {
    codec.MalformedMessage: "MALFORMED_REQUEST",
    store_errors.GameNotFound: "GAME_NOT_FOUND",
    store_errors.InvalidCursor: "BAD_PAGE_TOKEN",
    MalformedRecord: "MALFORMED_RECORD",
}


def reasons() -> frozenset[str]:
    """Every reason the API documents (the ``ErrorReason`` names without the prefix)."""
    return frozenset(
        value.name.removeprefix(_PREFIX)
        for value in errors_pb2.ErrorReason.DESCRIPTOR.values
        if value.number != errors_pb2.ERROR_REASON_UNSPECIFIED
    )


def reason_of(error: BaseException) -> tuple[str, dict[str, str]]:
    """The reason and metadata of an expected error (``INTERNAL`` for any other)."""
    if isinstance(error, AppError):
        return error.reason, dict(error.metadata)
    if isinstance(error, engine.IllegalAction):
        return type(error).reason, dict(error.details)
    if isinstance(error, engine.RulesetError):
        return type(error).reason, {}
    if isinstance(error, store_errors.GameNotFound):
        return "GAME_NOT_FOUND", {"game_id": error.game_id}
    for kind in type(error).__mro__:
        reason = _BY_CLASS.get(kind)
        if reason is not None:
            return reason, {}
    return "INTERNAL", {}


@dataclass(frozen=True)
class Refusal:
    """What answers a refused request."""

    code: grpc.StatusCode
    message: str
    reason: str
    metadata: Mapping[str, str] = field(default_factory=dict)

    def error_info(self) -> error_details_pb2.ErrorInfo:
        return error_details_pb2.ErrorInfo(
            reason=self.reason, domain=DOMAIN, metadata=dict(self.metadata)
        )

    def status_proto(self) -> status_pb2.Status:
        detail = any_pb2.Any()
        detail.Pack(self.error_info())
        return status_pb2.Status(
            code=self.code.value[0], message=self.message, details=[detail]
        )

    def status(self) -> grpc.Status:
        """For ``context.abort_with_status``: the code, the message, and the ``Status`` in
        the ``grpc-status-details-bin`` trailer."""
        return rpc_status.to_status(self.status_proto())


def too_large(method: str, size: str, limit: int) -> Refusal:
    """A request of ``method`` (``/package.Service/Method``) of ``size`` bytes, over its
    ``limit``: RESOURCE_EXHAUSTED, as gRPC itself answers a message over its receive limit,
    alike on both doors."""
    name = method.rsplit("/", 1)[-1] or "this"
    return Refusal(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"the request is {size} bytes; a {name} request is at most {limit} bytes "
        f"(refused unread)",
        "REQUEST_TOO_LARGE",
        {"size": size, "limit": str(limit)},
    )
