"""A thin client of Boneyard's gRPC API: what a front end or a bot author would write.

Only the generated API code (``boneyard.v1``) and the standard library are used here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Self

import grpc

from boneyard.v1 import (
    actions_pb2,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
    view_pb2,
)

__all__ = ["DEFAULT_SERVER", "Client", "OptionError", "ruleset_request"]

DEFAULT_SERVER = "127.0.0.1:50051"
_OPENER = "first_hand_opener"


class OptionError(ValueError):
    """A ``NAME=VALUE`` option that does not fit the API's Ruleset message."""


def ruleset_request(preset: str, options: Mapping[str, str]) -> rules_pb2.Ruleset:
    """The ``Ruleset`` message for a preset and ``NAME=VALUE`` overrides as typed on a
    command line (``widow=may_exchange``, ``nello=true``, ``marks_to_win=5``)."""
    msg = rules_pb2.Ruleset(preset=preset)
    fields = rules_pb2.Ruleset.DESCRIPTOR.fields_by_name
    for name, text in options.items():
        value = text.strip()
        if name == _OPENER:
            if value == "holds_1_0":
                msg.opener_holds_one_blank = True
            elif value.isdigit():
                msg.opener_seat = int(value)
            else:
                raise OptionError(f"{name}={text!r}: holds_1_0 or a seat number")
            continue
        field = fields.get(name)
        if field is None or name == "preset":
            known = sorted(n for n in fields if n not in ("preset", "opener_holds_one_blank", "opener_seat"))
            raise OptionError(f"no option {name!r}; options are {', '.join(known + [_OPENER])}")
        if field.enum_type is not None:
            wanted = value.upper().replace("-", "_")
            match = [v for v in field.enum_type.values if v.number and v.name.endswith("_" + wanted)]
            if not match:
                choices = [v.name.split("_", 1)[-1].lower() for v in field.enum_type.values if v.number]
                raise OptionError(f"{name}={text!r}: choose one of {', '.join(choices)}")
            setattr(msg, name, match[0].number)
        elif field.type == field.TYPE_BOOL:
            if value.lower() not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
                raise OptionError(f"{name}={text!r}: say true or false")
            setattr(msg, name, value.lower() in ("true", "on", "yes", "1"))
        else:
            try:
                setattr(msg, name, int(value))
            except ValueError:
                raise OptionError(f"{name}={text!r}: a whole number is needed") from None
    return msg


class Client:
    """One channel to a server; seat tokens are passed per call."""

    def __init__(self, address: str = DEFAULT_SERVER) -> None:
        self.address = address
        self._channel = grpc.insecure_channel(address)
        self._stub = game_service_pb2_grpc.GameServiceStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _auth(token: str | None) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {token}")] if token else []

    def create_game(
        self, preset: str, options: Mapping[str, str] | None = None, name: str = ""
    ) -> game_pb2.GameSummary:
        request = game_service_pb2.CreateGameRequest(
            rules=ruleset_request(preset, options or {}), name=name
        )
        return self._stub.CreateGame(request).game

    def game(self, game_id: str) -> game_pb2.GameSummary:
        return self._stub.GetGame(game_service_pb2.GetGameRequest(game_id=game_id)).game

    def games(self, status: int = 0, page_size: int = 50) -> Iterator[game_pb2.GameSummary]:
        token = ""
        while True:
            page = self._stub.ListGames(
                game_service_pb2.ListGamesRequest(page_size=page_size, page_token=token, status=status)
            )
            yield from page.games
            token = page.next_page_token
            if not token:
                return

    def take_seat(self, game_id: str, player_name: str, seat: int | None = None) -> tuple[int, str]:
        request = game_service_pb2.TakeSeatRequest(game_id=game_id, player_name=player_name)
        if seat is not None:
            request.seat = seat
        response = self._stub.TakeSeat(request)
        return response.seat, response.seat_token

    def view(self, game_id: str, token: str | None = None, timeout: float | None = None) -> view_pb2.SeatView:
        request = game_service_pb2.GetViewRequest(game_id=game_id)
        return self._stub.GetView(request, metadata=self._auth(token), timeout=timeout).view

    def submit(
        self,
        game_id: str,
        token: str,
        expected_version: int,
        action: actions_pb2.Action,
        request_id: str | None = None,
        timeout: float | None = None,
    ) -> game_service_pb2.SubmitActionResponse:
        request = game_service_pb2.SubmitActionRequest(
            game_id=game_id,
            expected_version=expected_version,
            request_id=request_id or str(uuid.uuid4()),
            action=action,
        )
        return self._stub.SubmitAction(request, metadata=self._auth(token), timeout=timeout)

    def watch(
        self, game_id: str, token: str | None = None, from_version: int = 0
    ) -> Iterator[game_service_pb2.WatchGameResponse]:
        """The game's events after ``from_version`` and then live ones; cancel by closing the
        returned iterator (``.cancel()``)."""
        request = game_service_pb2.WatchGameRequest(game_id=game_id, from_version=from_version)
        return self._stub.WatchGame(request, metadata=self._auth(token))  # type: ignore[no-any-return]
