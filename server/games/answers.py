"""The answers that hold a seat's view (GetView's, SubmitAction's), encoded once.

An answer is the bytes of its fields, one after another in the order of their numbers. Made as
a message, the view was built, copied whole into the answer (every hand, trick and legal
action: a deep copy in protobuf's C code) and serialized with it. Here the view is serialized
once and its bytes follow the answer's other fields: byte for byte what the answer message
serializes to (``tests/server/test_answers.py``), and what the doors send as they are.
"""

from __future__ import annotations

from boneyard import engine
from boneyard.api import codec
from boneyard.engine import GameState

__all__ = ["action_answer", "view_answer"]

# A field's key: its number, shifted, and its wire type (0: a varint, 2: length-delimited).
_GET_VIEW_VIEW = bytes([1 << 3 | 2])  # GetViewResponse.view = 1
_SUBMIT_VERSION = bytes([1 << 3 | 0])  # SubmitActionResponse.version = 1
_SUBMIT_VIEW = bytes([2 << 3 | 2])  # SubmitActionResponse.view = 2


def view_answer(state: GameState, seat: int | None, version: int) -> bytes:
    """The encoded ``GetViewResponse``: what ``seat`` (``None``: a spectator) sees of
    ``state`` at ``version``."""
    view = _view_bytes(state, seat, version)
    return _GET_VIEW_VIEW + _VARINTS[len(view)] + view


def action_answer(state: GameState, seat: int, version: int) -> bytes:
    """The encoded ``SubmitActionResponse`` of an action that brought the game to ``version``
    (``state``): the version, and what the acting ``seat`` sees now."""
    view = _view_bytes(state, seat, version)
    # (proto3 leaves a zero version out; a game's version after an action is never zero.)
    return _SUBMIT_VERSION + _VARINTS[version] + _SUBMIT_VIEW + _VARINTS[len(view)] + view


def _view_bytes(state: GameState, seat: int | None, version: int) -> bytes:
    view = codec.view_to_proto(engine.view(state, seat), version)
    return view.SerializeToString(deterministic=True)


class _Varints(dict[int, bytes]):
    """Each number's varint, made when first asked and kept if it takes at most two bytes (a
    view's length, a game's version: a few hundred numbers, asked again at every answer).
    A look-up, not a call: three numbers an action."""

    def __missing__(self, value: int) -> bytes:
        encoded = _varint(value)
        if value < 0x4000:
            self[value] = encoded
        return encoded


_VARINTS = _Varints()


def _varint(value: int) -> bytes:
    """``value`` (not negative) as protobuf's base-128 varint: seven bits a byte, the lowest
    first, the high bit set on every byte but the last."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
