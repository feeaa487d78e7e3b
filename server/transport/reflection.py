"""Server reflection with the API's comments, one implementation for both doors: the gRPC port
(``transport.grpc.reflection``) and the HTTP listener (``transport.http.connect``) serve the
same two services, ``grpc.reflection.v1`` (what ``buf curl`` asks) and
``grpc.reflection.v1alpha`` (what grpcurl asks), from ``connectrpc-grpcreflect``.

They describe the API from ``boneyard.api.v1``'s ``descriptors.binpb``: every .proto file with
its comments (protoc's source info, written by ``make proto``). The generated modules' own
descriptors carry no comments (protobuf's runtime drops them), and reflection built on those
answered ``grpcurl describe`` without a word of documentation.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources

from connectrpc_grpcreflect import ServerReflectionAlphaService, ServerReflectionService
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2
from protobuf import DescService, Registry
from protobuf.wkt import FileDescriptorProto, FileDescriptorSet

__all__ = [
    "DESCRIPTOR_SET",
    "V1ALPHA_SERVICE_NAME",
    "V1_SERVICE_NAME",
    "descriptor_set",
    "reflection_services",
]

DESCRIPTOR_SET = "descriptors.binpb"
"""The descriptor set's file in ``boneyard.api.v1`` (proto/generate.py writes it)."""
V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
V1ALPHA_SERVICE_NAME = "grpc.reflection.v1alpha.ServerReflection"


def descriptor_set() -> bytes:
    """The API's ``FileDescriptorSet``, with comments, as ``make proto`` wrote it."""
    return resources.files("boneyard.api.v1").joinpath(DESCRIPTOR_SET).read_bytes()


@functools.cache
def _registry() -> Registry:
    """The API's descriptors and the health service's (listed on the gRPC port; grpcio ships
    its file without comments, which is all there is of it)."""
    files = FileDescriptorSet.from_binary(descriptor_set())
    health = descriptor_pb2.FileDescriptorProto()
    health_pb2.DESCRIPTOR.CopyToProto(health)
    files.file.append(FileDescriptorProto.from_binary(health.SerializeToString()))
    return files.to_registry()


def reflection_services(
    service_names: Sequence[str],
) -> tuple[ServerReflectionService, ServerReflectionAlphaService]:
    """Reflection v1 and v1alpha listing ``service_names`` (and themselves), describing every
    type they use with its comments. A name the descriptors do not know is a ``LookupError``:
    a door that served a service reflection cannot describe would be a bug."""
    registry = _registry()
    services: list[DescService] = []
    for name in service_names:
        found = registry.service(name)
        if found is None:
            raise LookupError(f"no descriptor of the service {name} in {DESCRIPTOR_SET}")
        services.append(found)
    return ServerReflectionService(*services), ServerReflectionAlphaService(*services)
