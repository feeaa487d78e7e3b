"""A bot resumes a stream that ended before its game did, and counts it (``Bot.resumes``),
whether the stream failed (``reconnects`` counts those too) or simply ended (closed by the
server or by a balancer in front of it) without an error ever reaching the bot.

The client here is a stand-in that plays the server's part (a view, then streams that end as
the test says), so the count is the bot's own, not a timing.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import grpc

from boneyard.api.v1 import view_pb2
from boneyard.clients.api import Client
from boneyard.clients.bot import Bot
from boneyard.clients.strategies import load_strategy


class _Unavailable(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE


class _Stream:
    def __init__(self, messages: list[Any], then: BaseException | None) -> None:
        self._messages = messages
        self._then = then

    def __iter__(self) -> Iterator[Any]:
        yield from self._messages
        if self._then is not None:
            raise self._then

    def cancel(self) -> None:
        pass


class _Server:
    """Each watch stream ends as ``endings`` says (``None``: cleanly, or the error it raises)
    before the game does; the stream after them brings the game's end."""

    def __init__(self, endings: list[BaseException | None]) -> None:
        self._endings = endings
        self.watches = 0

    def view(self, game_id: str, token: str, timeout: float, seat: int | None) -> Any:
        return view_pb2.SeatView(seat=0, version=self.watches + 1, phase=view_pb2.PHASE_BIDDING)

    def watch(self, game_id: str, token: str, version: int, seat: int | None) -> _Stream:
        self.watches += 1
        if self.watches <= len(self._endings):
            return _Stream([], self._endings[self.watches - 1])
        over = view_pb2.SeatView(seat=0, version=version + 1, phase=view_pb2.PHASE_GAME_OVER)
        return _Stream([SimpleNamespace(view=over)], None)


def _bot(server: _Server) -> Bot:
    return Bot(cast(Client, server), "g-1", "token", load_strategy("random", seed=1), patience=60)


def test_a_bot_that_never_loses_its_stream_resumes_nothing() -> None:
    bot = _bot(_Server([]))
    assert bot.run().phase == view_pb2.PHASE_GAME_OVER
    assert (bot.resumes, bot.reconnects) == (0, 0)


def test_a_stream_that_ends_before_the_game_is_resumed_and_counted() -> None:
    bot = _bot(_Server([None, None]))
    assert bot.run().phase == view_pb2.PHASE_GAME_OVER
    assert (bot.resumes, bot.reconnects) == (2, 0)


def test_a_stream_that_fails_is_resumed_and_counted_as_a_reconnect_too() -> None:
    bot = _bot(_Server([_Unavailable()]))
    assert bot.run().phase == view_pb2.PHASE_GAME_OVER
    assert (bot.resumes, bot.reconnects) == (1, 1)
