"""Which methods the gRPC port registers with grpc (``transport/grpc/by_name.py``): an
action's two, GetView and SubmitAction, whose calls grpc's core matches as they arrive; every
other method is found by name. (That every method answers, and refuses alike, through the
port is ``test_one_pipeline``'s, on a real server.)"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2_grpc

from boneyard.api.v1 import competition_pb2_grpc, game_service_pb2_grpc
from boneyard.server.transport.grpc.by_name import ByName


class Recorded:
    """What a generated ``add_...Servicer_to_server`` handed the server (the part of a
    ``grpc.aio.Server`` it calls)."""

    def __init__(self) -> None:
        self.generic: list[grpc.GenericRpcHandler] = []
        self.registered: dict[str, set[str]] = {}

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self.generic.extend(handlers)

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        self.registered.setdefault(service, set()).update(handlers)


def _port(recorded: Recorded) -> Any:
    return ByName(recorded)  # type: ignore[arg-type]  # (the part of a server it uses)


def test_an_actions_two_methods_are_registered() -> None:
    recorded = Recorded()
    game_service_pb2_grpc.add_GameServiceServicer_to_server(
        game_service_pb2_grpc.GameServiceServicer(), _port(recorded)
    )
    assert recorded.registered == {"boneyard.v1.GameService": {"GetView", "SubmitAction"}}


def test_every_method_of_the_game_is_found_by_name_too() -> None:
    recorded = Recorded()
    game_service_pb2_grpc.add_GameServiceServicer_to_server(
        game_service_pb2_grpc.GameServiceServicer(), _port(recorded)
    )
    (generic,) = recorded.generic
    for name in ("CreateGame", "TakeSeat", "GetView", "SubmitAction", "WatchGame"):
        details = _Details(f"/boneyard.v1.GameService/{name}")
        assert generic.service(details) is not None, name


def test_other_services_register_no_method() -> None:
    recorded = Recorded()
    competition_pb2_grpc.add_LobbyServiceServicer_to_server(
        competition_pb2_grpc.LobbyServiceServicer(), _port(recorded)
    )
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), _port(recorded))
    assert recorded.registered == {}
    assert len(recorded.generic) == 2


class _Details(grpc.HandlerCallDetails):
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()
