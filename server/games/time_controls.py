"""A table's clock between protobuf (``TimeControl``) and the store's ``TimeControl``."""

from __future__ import annotations

from boneyard.api.v1 import events_pb2, game_pb2
from boneyard.server.errors import InvalidArgument
from boneyard.server.store.competition import TimeControl
from boneyard.server.store.game_setup import TimeoutPolicy

__all__ = ["time_control_from_proto", "time_control_to_proto"]

_POLICIES: dict[events_pb2.TimeoutPolicy.ValueType, TimeoutPolicy] = {
    events_pb2.TIMEOUT_POLICY_AUTO_PLAY: "auto_play",
    events_pb2.TIMEOUT_POLICY_FORFEIT: "forfeit",
}
_POLICY_TO_PROTO = {v: k for k, v in _POLICIES.items()}


def time_control_from_proto(msg: game_pb2.TimeControl, present: bool) -> TimeControl | None:
    """A table's clock; ``None`` when the message is absent or has no per-move time."""
    if not present or (msg.per_move_ms == 0 and msg.bank_ms == 0 and not msg.policy):
        return None
    if msg.per_move_ms == 0:
        raise InvalidArgument("a time control needs per_move_ms (the time each action may take)")
    policy = _POLICIES.get(msg.policy)
    if policy is None:
        raise InvalidArgument(
            f"a time control needs a policy: TIMEOUT_POLICY_AUTO_PLAY or TIMEOUT_POLICY_FORFEIT "
            f"(got {msg.policy})"
        )
    return TimeControl(msg.per_move_ms, msg.bank_ms, policy)


def time_control_to_proto(control: TimeControl) -> game_pb2.TimeControl:
    return game_pb2.TimeControl(
        per_move_ms=control.per_move_ms,
        bank_ms=control.bank_ms,
        policy=_POLICY_TO_PROTO[control.policy],
    )
