"""The network loop every bot shares: follow the game's stream, act when it is this seat's
turn, reconnect and resume after a dropped stream or a server restart, never act twice.

A strategy only chooses (``choose(view) -> command``, on the engine's view: ``boneyard.bots``);
everything about the network is here, and so is the translation: the API's view becomes the
engine's (``codec.view_from_proto``) and the chosen command an action (``codec.action_to_proto``).
The request id of an action is derived from the game, the seat and the version it was chosen
at, so a bot that resends after losing its connection gets the first answer back instead of
acting twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import grpc

from boneyard.api import codec
from boneyard.api.v1 import view_pb2
from boneyard.bots import Strategy
from boneyard.clients.api import Client, refusal

__all__ = ["RETRY_CODES", "Bot", "BotGaveUp"]

log = logging.getLogger(__name__)

RETRY_CODES = {
    # A server restarting or unreachable: worth trying again (bots, competitors and
    # `tournament run` all live through a restart).
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
_GAME_OVER = view_pb2.PHASE_GAME_OVER


class BotGaveUp(RuntimeError):
    """The server stayed unreachable for longer than the bot's patience."""


class Bot:
    def __init__(
        self,
        client: Client,
        game_id: str,
        token: str,
        strategy: Strategy,
        *,
        patience: float = 60.0,
        on_view: Callable[[view_pb2.SeatView], None] | None = None,
        stop: threading.Event | None = None,
        seat: int | None = None,
    ) -> None:
        """``seat``: the seat to play, named in every call; needed where ``token`` is an
        account's key holding several seats of the game (a match's partnership)."""
        self.client = client
        self.game_id = game_id
        self.token = token
        self.seat = seat
        self.strategy = strategy
        self.patience = patience
        self.on_view = on_view
        self.stop = stop or threading.Event()
        self.actions_sent = 0
        self.reconnects = 0
        """Calls that failed with a code worth waiting out (the server went away)."""
        self.resumes = 0
        """Streams opened again after the first: the last one failed or ended before the game
        did. A stream that ends without an error (closed by the server or by a balancer in
        front of it) is resumed too, and only ``resumes`` counts it."""
        self._acted_at: set[int] = set()

    def run(self) -> view_pb2.SeatView:
        """Play until the game ends; return the last view."""
        down_since: float | None = None
        watched = False
        while not self.stop.is_set():
            try:
                view = self.client.view(self.game_id, self.token, timeout=10, seat=self.seat)
                down_since = None
                self._seen(view)
                if view.phase == _GAME_OVER:
                    return view
                self._maybe_act(view)
                if watched:
                    self.resumes += 1
                watched = True
                stream = self.client.watch(self.game_id, self.token, view.version, self.seat)
                try:
                    for message in stream:
                        if self.stop.is_set():
                            break
                        self._seen(message.view)
                        if message.view.phase == _GAME_OVER:
                            return message.view
                        self._maybe_act(message.view)
                finally:
                    stream.cancel()
            except grpc.RpcError as error:
                # Not the channel's retry policy (api.RETRY_SERVICE_CONFIG): that one covers a
                # blip of a few seconds on each call; this loop outlives a restart of minutes
                # (``patience``), and after one reads the view again to resume the stream.
                code = error.code()
                if code not in RETRY_CODES:
                    raise
                now = time.monotonic()
                down_since = down_since or now
                if now - down_since > self.patience:
                    raise BotGaveUp(
                        f"server {self.client.address} unreachable for {self.patience:.0f} s"
                    ) from error
                self.reconnects += 1
                log.info("game %s: %s; reconnecting", self.game_id, code.name)
                time.sleep(min(0.2 * self.reconnects, 2.0))
        raise BotGaveUp("stopped")

    def _seen(self, view: view_pb2.SeatView) -> None:
        if self.on_view is not None:
            self.on_view(view)

    def _maybe_act(self, view: view_pb2.SeatView) -> None:
        if not view.HasField("turn") or view.turn != view.seat or not view.legal_actions:
            return
        if view.version in self._acted_at:
            return
        if any(play.face_down for play in view.current_trick):
            # A view re-sent from before the stream began (its tiles turned face down since):
            # stale by now; the view after the next event is the one to act on.
            return
        action = codec.action_to_proto(self.strategy.choose(codec.view_from_proto(view)))
        request_id = f"{self.game_id}:{view.seat}:{view.version}"
        try:
            self.client.submit(
                self.game_id, self.token, view.version, action, request_id, 10, self.seat
            )
            self.actions_sent += 1
            self._acted_at.add(view.version)
        except grpc.RpcError as error:
            # STALE_VERSION: the stream is behind the game; the event that moved it is on its way.
            if refusal(error).reason != "STALE_VERSION":
                raise
