"""The codecs the HTTP door reads and writes messages with: connectrpc's, with their refusals
made sayable.

A Connect JSON body may spell a lone surrogate (``"\\ud800"``): valid JSON, valid UTF-8 on
the wire, but a string no UTF-8 encoder takes. protobuf's JSON parser quotes the offending
value in its error, connectrpc makes that ``invalid_argument``, and then fails to encode its
own answer (``UnicodeEncodeError``: HTTP 500 and an ERROR line; the HTTP fuzzer found it, a
``reservations`` or ``house_bots`` field given ``"\\ud800"``). Each codec here refuses what it
cannot decode with the decoder's words escaped, as the gRPC port's messages are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from connectrpc.code import Code
from connectrpc.codec import Codec, proto_binary_codec, proto_json_codec
from connectrpc.compat import google_protobuf_codecs
from connectrpc.errors import ConnectError

__all__ = ["Encoded", "api_codecs", "reflection_codecs", "sayable"]

_BINARY = "proto"
"""The name of the binary protobuf codec (Connect's ``application/proto``, gRPC's default)."""


def sayable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (lone surrogates) written as escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class Encoded:
    """A message a handler encoded once (WatchGame's for all its watchers, SubmitAction's kept
    for retries): the binary codec sends these very bytes; the JSON codec parses them back
    (``message_class``) to write them as JSON."""

    __slots__ = ("data", "message_class")

    def __init__(self, data: bytes, message_class: type[Any]) -> None:
        self.data = data
        self.message_class = message_class

    def message(self) -> Any:
        return self.message_class.FromString(self.data)


class _Sayable(Codec[Any, Any]):
    """A codec whose decoding refusals are always sayable (``invalid_argument``, as
    connectrpc's own, with the decoder's words escaped)."""

    def __init__(self, codec: Codec[Any, Any]) -> None:
        self._codec = codec
        self._binary = codec.name() == _BINARY

    def name(self) -> str:
        return self._codec.name()

    def encode(self, message: Any) -> bytes:
        if type(message) is Encoded:
            if self._binary:
                return message.data
            message = message.message()
        return self._codec.encode(message)

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        try:
            return self._codec.decode(data, message_class)
        except ConnectError:
            raise
        except Exception as error:  # any decoder's refusal is the client's own trouble
            raise ConnectError(
                Code.INVALID_ARGUMENT, f"unmarshal message: {sayable(str(error))}"
            ) from error


def _sayable(codecs: Iterable[Codec[Any, Any]]) -> list[Codec[Any, Any]]:
    return [_Sayable(codec) for codec in codecs]


def api_codecs() -> list[Codec[Any, Any]]:
    """The codecs of Boneyard's services (google.protobuf messages: binary and JSON)."""
    return _sayable(google_protobuf_codecs())


def reflection_codecs() -> list[Codec[Any, Any]]:
    """The codecs of the reflection services (connectrpc's own message classes)."""
    return _sayable([proto_binary_codec(), proto_json_codec()])
