"""Answering an account's turns, told on one stream, with a few threads.

``boneyard bot --key K --concurrency N`` reads every turn of the account's seats, across all
its games, on one ``LobbyService.WatchTurns`` stream (``boneyard.clients.competitor``) and hands
each here: ``N`` worker threads decide (the strategy of the game's seat, made once a seat) and
answer with ``SubmitAction`` (the account's key, the seat, the turn's version). The view to decide on
comes with the turn, so a turn costs one call; a bot in ``N`` games at once holds no stream per
game, and ``N`` decisions are in flight at once while the others wait in the queue.

The request id of an answer is derived from the game, the seat and the version, as
``boneyard.clients.bot`` derives it: an answer sent again after a lost connection is answered,
not applied twice; a turn told twice (a reopened stream tells again each seat to act) is
answered once.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from boneyard.api import codec
from boneyard.api.v1 import actions_pb2, competition_pb2
from boneyard.bots import Strategy
from boneyard.clients.api import Client, refusal
from boneyard.clients.bot import RETRY_CODES

__all__ = ["MAX_CONCURRENCY", "TurnAnswerer", "TurnGaveUp"]

log = logging.getLogger(__name__)

MAX_CONCURRENCY = 64
"""Turns decided at once at most (``--concurrency``): a thread each."""

_MOVED_ON = frozenset({"STALE_VERSION", "GAME_OVER"})
"""Refusals that mean the game went on without this answer (a clock played the seat, the game
ended): the stream tells what comes next, there is nothing to retry."""

Turn = competition_pb2.WatchTurnsResponse


class TurnGaveUp(RuntimeError):
    """The server stayed unreachable for longer than the bot's patience while it answered."""


@dataclass
class _Seat:
    """One of the account's seats in a game, as the workers answer it (a match's entrant holds
    two seats of a game: each has its own strategy and answers naming its seat)."""

    strategy: Strategy
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while one of its turns is answered: a turn told twice waits, then is skipped."""
    answered: set[int] = field(default_factory=set)
    """The versions answered."""


class TurnAnswerer:
    """``workers`` threads answering the turns handed to ``answer``, in the order told.

    ``strategy_for(seat)`` makes the strategy of a seat (once per game). ``on_failed(turn,
    error)`` is called (from a worker) for a turn that could not be answered: a refusal that is
    not a game moving on, or ``TurnGaveUp`` after ``patience`` seconds without the server."""

    def __init__(
        self,
        client: Client,
        key: str,
        strategy_for: Callable[[int], Strategy],
        workers: int,
        *,
        patience: float,
        stop: threading.Event,
        on_failed: Callable[[Turn, BaseException], None],
    ) -> None:
        if not 1 <= workers <= MAX_CONCURRENCY:
            raise ValueError(f"workers={workers}: 1..{MAX_CONCURRENCY}")
        self._client = client
        self._key = key
        self._strategy_for = strategy_for
        self._patience = patience
        self._stop = stop
        self._on_failed = on_failed
        self._turns: queue.SimpleQueue[Turn | None] = queue.SimpleQueue()
        self._seats: dict[tuple[str, int], _Seat] = {}
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._work, name=f"turns-{i}", daemon=True)
            for i in range(workers)
        ]
        self.answers = 0
        """Actions sent and accepted."""

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def answer(self, turn: Turn) -> None:
        """Queue a turn (from the stream's thread)."""
        self._turns.put(turn)

    def forget(self, game_id: str, seat: int) -> None:
        """The seat's game is over: the seat's state goes."""
        with self._lock:
            self._seats.pop((game_id, seat), None)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the workers (``stop`` is set: a retry in progress gives up) and wait for them."""
        for _ in self._threads:
            self._turns.put(None)
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=timeout)

    # --- the workers -------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            turn = self._turns.get()
            if turn is None or self._stop.is_set():
                return
            try:
                self._answer(turn)
            except Exception as error:  # noqa: BLE001 -- one game's trouble is reported, not fatal
                if not self._stop.is_set():
                    self._on_failed(turn, error)

    def _seat(self, turn: Turn) -> _Seat:
        with self._lock:
            key = (turn.game_id, turn.seat)
            seat = self._seats.get(key)
            if seat is None:
                seat = self._seats[key] = _Seat(self._strategy_for(turn.seat))
            return seat

    def _answer(self, turn: Turn) -> None:
        seat = self._seat(turn)
        with seat.lock:
            if turn.version in seat.answered:
                return
            command = seat.strategy.choose(codec.view_from_proto(turn.view))
            self._submit(turn, codec.action_to_proto(command))
            seat.answered.add(turn.version)

    def _submit(self, turn: Turn, action: actions_pb2.Action) -> None:
        """Send the answer, again while the server is unavailable (for up to ``patience``
        seconds): the turn is told only once on a stream that stays open."""
        request_id = f"{turn.game_id}:{turn.seat}:{turn.version}"
        down_since: float | None = None
        attempts = 0
        while True:
            try:
                # The seat named: a key holding several seats of the game must (SEAT_REQUIRED).
                self._client.submit(
                    turn.game_id, self._key, turn.version, action, request_id, 10, turn.seat
                )
                with self._lock:
                    self.answers += 1
                return
            except grpc.RpcError as error:
                if refusal(error).reason in _MOVED_ON:
                    return
                code = error.code()
                if code not in RETRY_CODES or self._stop.is_set():
                    raise
                now = time.monotonic()
                down_since = down_since or now
                if now - down_since > self._patience:
                    raise TurnGaveUp(
                        f"game {turn.game_id}: server {self._client.address} unreachable for "
                        f"{self._patience:.0f} s"
                    ) from error
                attempts += 1
                log.info("game %s: %s answering; trying again", turn.game_id, code.name)
                self._stop.wait(min(0.2 * attempts, 2.0))
