"""Answering an account's turns, told and answered on one stream, with a few threads.

``boneyard bot --key K --concurrency N`` plays every seat of the account, across all its
games, on one ``LobbyService.PlayTurns`` stream (``boneyard.clients.competitor`` reads it) and
hands each turn here: ``N`` worker threads decide (the strategy of the game's seat, made once a
seat) and send the answer on the same stream. The view to decide on comes with the turn and the
answer needs no reply (the seat's next turn, or its game's end, says it was applied), so a turn
costs one message each way; a bot in ``N`` games at once holds no stream per game, and ``N``
decisions are in flight at once while the others wait in the queue.

A stream lost is opened again by the competitor (``open``): the turns told on the lost one and
not answered yet are dropped, since the new stream tells again each seat to act; an answer
that was sent and applied is not applied twice (the server knows a turn's answer by its game,
seat and version).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from boneyard.api import codec
from boneyard.api.v1 import competition_pb2
from boneyard.bots import Strategy

__all__ = ["MAX_CONCURRENCY", "TurnAnswerer", "TurnRefused"]

log = logging.getLogger(__name__)

MAX_CONCURRENCY = 64
"""Turns decided at once at most (``--concurrency``): a thread each."""

_MOVED_ON = frozenset({"STALE_VERSION", "GAME_OVER"})
"""Refusals that mean the game went on without this answer (a clock played the seat, the game
ended): the stream tells what comes next, there is nothing to do."""

Turn = competition_pb2.WatchTurnsResponse
Request = competition_pb2.PlayTurnsRequest


class TurnRefused(RuntimeError):
    """The server did not apply an answer (``TurnRefused`` on the stream), for a reason that
    is not the game moving on."""

    def __init__(self, refused: competition_pb2.TurnRefused) -> None:
        super().__init__(f"{refused.reason or refused.code}: {refused.message}")
        self.refused = refused


@dataclass
class _Seat:
    """One of the account's seats in a game, as the workers answer it (a match's entrant holds
    two seats of a game: each has its own strategy and answers naming its seat)."""

    strategy: Strategy
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while one of its turns is decided."""
    answered: dict[int, int] = field(default_factory=dict)
    """The stream (its number) each version was answered on: a turn told twice on one stream
    is answered once, and told again on a new stream, answered again."""


class _Outbox:
    """The answers of one stream, as its request iterator sends them."""

    def __init__(self, number: int) -> None:
        self.number = number
        self._requests: queue.SimpleQueue[Request | None] = queue.SimpleQueue()

    def put(self, request: Request) -> None:
        self._requests.put(request)

    def close(self) -> None:
        self._requests.put(None)

    def requests(self, opening: Request) -> Iterator[Request]:
        yield opening
        while (request := self._requests.get()) is not None:
            yield request


class TurnAnswerer:
    """``workers`` threads answering the turns handed to ``answer``, in the order told, on the
    stream ``open`` last made the messages of.

    ``strategy_for(seat)`` makes the strategy of a seat (once per game). ``on_failed(turn,
    error)`` is called (from a worker, or from ``refused``) for a turn that could not be
    answered: a strategy that failed, or a refusal that is not the game moving on."""

    def __init__(
        self,
        strategy_for: Callable[[int], Strategy],
        workers: int,
        *,
        stop: threading.Event,
        on_failed: Callable[[Turn, BaseException], None],
    ) -> None:
        if not 1 <= workers <= MAX_CONCURRENCY:
            raise ValueError(f"workers={workers}: 1..{MAX_CONCURRENCY}")
        self._strategy_for = strategy_for
        self._stop = stop
        self._on_failed = on_failed
        self._turns: queue.SimpleQueue[tuple[Turn, int] | None] = queue.SimpleQueue()
        self._seats: dict[tuple[str, int], _Seat] = {}
        self._lock = threading.Lock()
        self._outbox = _Outbox(0)
        self._threads = [
            threading.Thread(target=self._work, name=f"turns-{i}", daemon=True)
            for i in range(workers)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def open(self, game_ids: Sequence[str]) -> Iterator[Request]:
        """The messages of a new PlayTurns stream: its opening (naming ``game_ids``, the games
        being played when the last one was lost), then each answer decided while it is the
        stream, until ``close``. Turns told on an earlier stream and not answered yet are
        dropped: the new one tells them again."""
        with self._lock:
            self._outbox.close()
            self._outbox = _Outbox(self._outbox.number + 1)
            outbox = self._outbox
        opening = Request(open=competition_pb2.WatchTurnsRequest(game_ids=list(game_ids)))
        return outbox.requests(opening)

    def answer(self, turn: Turn) -> None:
        """Queue a turn told on the current stream (from the stream's thread)."""
        self._turns.put((turn, self._outbox.number))

    def refused(self, refused: competition_pb2.TurnRefused) -> None:
        """An answer the server did not apply (from the stream's thread)."""
        if refused.reason in _MOVED_ON:
            return
        turn = Turn(game_id=refused.game_id, seat=refused.seat, version=refused.version)
        self._on_failed(turn, TurnRefused(refused))

    def forget(self, game_id: str, seat: int) -> None:
        """The seat's game is over: the seat's state goes."""
        with self._lock:
            self._seats.pop((game_id, seat), None)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the workers (``stop`` is set) and the stream's messages, and wait for them."""
        with self._lock:
            self._outbox.close()
        for _ in self._threads:
            self._turns.put(None)
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=timeout)

    # --- the workers -------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            item = self._turns.get()
            if item is None or self._stop.is_set():
                return
            turn, stream = item
            try:
                self._answer(turn, stream)
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

    def _answer(self, turn: Turn, stream: int) -> None:
        seat = self._seat(turn)
        with seat.lock:
            if seat.answered.get(turn.version) == stream or stream != self._outbox.number:
                return  # answered on this stream already, or told on one that is gone
            command = seat.strategy.choose(codec.view_from_proto(turn.view))
            answer = competition_pb2.TurnAnswer(
                game_id=turn.game_id,
                seat=turn.seat,  # a key holding several seats of the game names the one
                version=turn.version,
                action=codec.action_to_proto(command),
            )
            with self._lock:
                if self._outbox.number != stream:
                    return  # the stream was lost while deciding: the new one tells it again
                self._outbox.put(Request(answer=answer))
            seat.answered[turn.version] = stream
