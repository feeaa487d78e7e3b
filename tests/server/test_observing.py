"""The observer of every call is the call's fields in the log's context too: it sets those
fields itself (a call of ``CallFields.__init__`` with keywords cost one more Python call at
every call of both doors), so each must start as a fresh call's does."""

from __future__ import annotations

from boneyard.api.v1 import game_service_pb2
from boneyard.server.ops import logs
from boneyard.server.ops.metrics import UNARY, Metrics
from boneyard.server.ops.observing import CallObserver

GET_VIEW = "/boneyard.v1.GameService/GetView"


def test_an_observed_call_has_every_log_field_a_fresh_call_has() -> None:
    metadata = (("x-request-id", "client-1"),)
    request = game_service_pb2.GetViewRequest(game_id="game-1")
    observed = CallObserver(Metrics()).of(GET_VIEW, "grpc", UNARY)(
        metadata, "ipv4:127.0.0.1:5000", request
    )
    fresh = logs.CallFields(metadata=metadata, request=request)
    for field in logs.CallFields.__slots__:
        assert getattr(observed, field) == getattr(fresh, field), field
    assert (observed.request_id, observed.game) == ("client-1", "game-1")


def test_a_game_made_known_replaces_the_one_the_request_names() -> None:
    request = game_service_pb2.GetViewRequest(game_id="named")
    observed = CallObserver(Metrics()).of(GET_VIEW, "grpc", UNARY)((), "peer", request)
    with observed:
        logs.known(game="resolved", seat=2)
    assert (observed.game, observed.seat) == ("resolved", 2)
