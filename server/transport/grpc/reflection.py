"""gRPC server reflection, both versions: ``grpc.reflection.v1`` (what ``buf curl`` and newer
clients ask first) and ``grpc.reflection.v1alpha`` (what grpcurl and older clients ask).

grpcio-reflection serves v1alpha only. The two versions are the same protocol: v1 is v1alpha's
file under another package, with the same messages and field numbers. So v1 is served by the
same servicer, its requests read and its answers written as the v1alpha messages they are on
the wire, and its file is v1alpha's renamed into the descriptor pool, so that reflection can
describe itself in both versions.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

__all__ = ["SERVICE_NAMES", "V1ALPHA_SERVICE_NAME", "V1_SERVICE_NAME", "enable_reflection"]

V1ALPHA_SERVICE_NAME: str = reflection.SERVICE_NAME
V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
SERVICE_NAMES = (V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)

_V1ALPHA = "grpc.reflection.v1alpha"
_V1 = "grpc.reflection.v1"


def enable_reflection(service_names: Sequence[str], server: grpc.aio.Server) -> None:
    """Serve reflection v1 and v1alpha on ``server``, listing ``service_names`` and both
    reflection services."""
    _add_v1_file()
    names = (*service_names, *SERVICE_NAMES)
    servicer = reflection.aio.ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": handler}),)
    )


def _add_v1_file() -> None:
    """Put ``grpc/reflection/v1/reflection.proto`` (v1alpha's, renamed) in the default pool,
    once."""
    pool = descriptor_pool.Default()
    try:
        pool.FindServiceByName(V1_SERVICE_NAME)
        return
    except KeyError:
        pass
    source = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(source)
    source.name = source.name.replace("v1alpha", "v1")
    source.package = _V1
    source.options.Clear()
    for message in source.message_type:
        for field in message.field:
            if field.type_name.startswith(f".{_V1ALPHA}."):
                field.type_name = f".{_V1}." + field.type_name[len(_V1ALPHA) + 2 :]
    for service in source.service:
        for method in service.method:
            method.input_type = method.input_type.replace(f".{_V1ALPHA}.", f".{_V1}.")
            method.output_type = method.output_type.replace(f".{_V1ALPHA}.", f".{_V1}.")
    pool.Add(source)
