"""The details of a refusal, as the API ships them: ``google.rpc.Status`` and
``google.rpc.ErrorInfo`` (proto/google/rpc/, Google's files, generated for TypeScript with
the API; in Python the messages of googleapis-common-protos, ``google.rpc.status_pb2`` and
``google.rpc.error_details_pb2``, exposed here), and the reading of a refused call's
``ErrorInfo``.

Every refusal of the server carries one ``ErrorInfo`` of domain ``boneyard.v1`` whose
``reason`` is an ``ErrorReason`` name without its prefix (proto/boneyard/v1/errors.proto) and
whose ``metadata`` holds what the server knows (``game_id``, ``seat``, ``tile`` ...)::

    try:
        stub.SubmitAction(request, metadata=auth)
    except grpc.RpcError as error:
        info = error_info_of(error)
        if reason_of(info) == errors_pb2.ERROR_REASON_NOT_YOUR_TURN: ...
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import any_pb2
from google.rpc.error_details_pb2 import ErrorInfo
from google.rpc.status_pb2 import Status
from grpc_status import rpc_status

from boneyard.api.v1 import errors_pb2

__all__ = ["DOMAIN", "ErrorInfo", "Status", "error_info", "error_info_of", "reason_of", "status_of"]

DOMAIN = "boneyard.v1"
"""The ``ErrorInfo.domain`` of the server's refusals: the API's package."""

_PREFIX = "ERROR_REASON_"


def status_of(error: grpc.RpcError) -> Status | None:
    """The ``google.rpc.Status`` of a refused gRPC call (its ``grpc-status-details-bin``
    trailer); ``None`` without one, or with one that contradicts the call's code (not the
    server's)."""
    try:
        # grpc raises a call's error as the call itself (its code, its trailers); the stubs
        # keep RpcError and Call apart.
        return rpc_status.from_call(error)  # type: ignore[arg-type,no-any-return]
    except ValueError:
        return None


def error_info(details: Iterable[any_pb2.Any]) -> ErrorInfo | None:
    """The server's ``ErrorInfo`` among a status's details (``Status.details``)."""
    for detail in details:
        if detail.Is(ErrorInfo.DESCRIPTOR):
            info = ErrorInfo()
            detail.Unpack(info)
            if info.domain == DOMAIN:
                return info
    return None


def error_info_of(error: grpc.RpcError) -> ErrorInfo | None:
    """The server's ``ErrorInfo`` of a refused gRPC call; ``None`` for a call that failed
    without reaching it (no server, a connection cut)."""
    status = status_of(error)
    return error_info(status.details) if status is not None else None


def reason_of(info: ErrorInfo | None) -> errors_pb2.ErrorReason.ValueType:
    """The ``ErrorReason`` an ``ErrorInfo`` names; ``ERROR_REASON_UNSPECIFIED`` for none, or
    for a reason of a later version of the API (a client then goes by the status code)."""
    if info is None:
        return errors_pb2.ERROR_REASON_UNSPECIFIED
    try:
        return errors_pb2.ErrorReason.Value(_PREFIX + info.reason)
    except ValueError:
        return errors_pb2.ERROR_REASON_UNSPECIFIED
