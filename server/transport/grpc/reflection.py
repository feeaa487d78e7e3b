"""gRPC server reflection on the gRPC port, both versions: ``grpc.reflection.v1`` (what ``buf
curl`` and newer clients ask first) and ``grpc.reflection.v1alpha`` (what grpcurl and older
clients ask), with the API's comments, so that ``grpcurl describe`` shows a method's
documentation.

The services are ``transport.reflection``'s, the very ones the HTTP listener serves:
connectrpc-grpcreflect's, written for connectrpc, whose messages are protobuf-py's. Here they
are handlers of the grpc server: a request is read with its message's ``from_binary`` (bytes it
cannot read are the pipeline's MALFORMED_REQUEST, as for any method) and each answer written
with ``to_binary``. grpcio-reflection's own servicer could not carry the comments: it rebuilds
every file from protobuf's runtime descriptors, which drop them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from connectrpc.errors import ConnectError

from boneyard.server.transport.pipeline import Refused
from boneyard.server.transport.reflection import (
    V1_SERVICE_NAME,
    V1ALPHA_SERVICE_NAME,
    reflection_services,
)
from boneyard.server.transport.refusals import Refusal

__all__ = ["SERVICE_NAMES", "V1ALPHA_SERVICE_NAME", "V1_SERVICE_NAME", "enable_reflection"]

SERVICE_NAMES = (V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
_METHOD = "ServerReflectionInfo"


def enable_reflection(service_names: Sequence[str], server: grpc.aio.Server) -> None:
    """Serve reflection v1 and v1alpha on ``server``, listing ``service_names`` and both
    reflection services, and describing them with their comments."""
    v1, v1alpha = reflection_services(service_names)
    server.add_generic_rpc_handlers(
        tuple(
            grpc.method_handlers_generic_handler(name, {_METHOD: _handler(service)})
            for name, service in ((V1_SERVICE_NAME, v1), (V1ALPHA_SERVICE_NAME, v1alpha))
        )
    )


def _handler(service: Any) -> grpc.RpcMethodHandler:
    """The grpc handler of a reflection service of connectrpc-grpcreflect (v1 or v1alpha:
    the same protocol, each with its own messages)."""
    (method,) = service.desc().methods
    request, response = method.input.type, method.output.type

    async def info(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:
        try:
            # Its context is connectrpc's, of which it reads nothing.
            async for answer in service.server_reflection_info(requests, context):
                yield answer
        except ConnectError as error:
            # A request that names nothing to do (none of the oneof set): "invalid request".
            raise Refused(
                Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"not a reflection request: {error.message}",
                    "MALFORMED_REQUEST",
                )
            ) from None

    return grpc.stream_stream_rpc_method_handler(
        info,  # type: ignore[arg-type]  # grpc's stubs type the threaded server's behaviours
        request_deserializer=request.from_binary,
        response_serializer=response.to_binary,
    )
