"""An account's bot in competitions: play every seat reserved for the account, and seek tables.

A ``Competitor`` follows the account's seats (LobbyService.WatchSeats) and starts one ``Bot``
thread per seat it holds: by a tournament, by a seek, by a challenge it accepted, by
CreateGame's reservations, or by a match (whose entrant holds both seats of its partnership,
each played by a ``Bot`` of its own that names its seat). Asked to accept challenges of some presets, it also follows the
account's events (AccountService.WatchAccount) and answers each challenge received.
It may also seek tables itself (LobbyService.Seek), one seek open at a time, seeking again each
time a table forms, until it has played the games it was asked to.

With ``concurrency`` (``boneyard bot --key K --concurrency N``) it holds no stream per game:
every turn of the account's seats, across all its games, comes on one stream
(LobbyService.PlayTurns, with the seat's view), and ``N`` worker threads answer them on the
same stream (``boneyard.clients.turns``); WatchSeats then only says when a game starts. Its
games are as many as the server makes for it (a tournament's ``max_games_per_entrant``), all
played at once.

It lives through a server restart: a dropped stream is reopened with a backoff, and WatchSeats,
reopened, first sends again every seat of a game that is not over; a game already being played
(or played to its end) is not started a second time. Each ``Bot`` resumes its own game (see
``boneyard.clients.bot``); a reopened PlayTurns tells again each seat to act, and the end of
each game the competitor was playing that ended meanwhile (for each of its seats there).

A match's entrant holds both seats of its Texas 42 partnership: in either mode each seat is
played on its own (a ``Bot``, or a strategy in the turn workers), names its seat in every call
(a key holding two seats of a game must: SEAT_REQUIRED) and ends with a result of its own.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

import grpc

from boneyard.api.v1 import challenges_pb2, competition_pb2, game_pb2, view_pb2
from boneyard.clients.api import Client, refusal
from boneyard.clients.bot import RETRY_CODES, Bot, BotGaveUp
from boneyard.clients.strategies import load_strategy
from boneyard.clients.turns import MAX_CONCURRENCY, TurnAnswerer

__all__ = ["MAX_CONCURRENCY", "Competitor", "CompetitorGaveUp", "GameResult", "SeekPlan"]

log = logging.getLogger(__name__)

_GAME_OVER = view_pb2.PHASE_GAME_OVER
_MAX_NAMED = 1000
"""Games a reopened turn stream names at most (WatchTurnsRequest.game_ids' bound)."""


class SeekPlan(NamedTuple):
    """What to seek: a preset, option overrides (``NAME=VALUE`` as typed) and a clock."""

    preset: str
    options: Mapping[str, str] = {}
    time_control: game_pb2.TimeControl | None = None


@dataclass(frozen=True)
class GameResult:
    """How one of the competitor's games went."""

    assignment: competition_pb2.SeatAssignment
    view: view_pb2.SeatView | None = None
    """The seat's last view (the game over, unless ``error``)."""
    error: BaseException | None = None

    @property
    def game_id(self) -> str:
        return str(self.assignment.game_id)

    @property
    def over(self) -> bool:
        return self.view is not None and self.view.phase == _GAME_OVER


class CompetitorGaveUp(RuntimeError):
    """The server stayed unreachable for longer than the competitor's patience."""


@dataclass
class _Backoff:
    """Pauses between reconnections, as ``boneyard.clients.bot`` makes them; remembers when the server
    was first found gone, to give up after ``patience`` seconds. (Streams that were open a while
    and a restart of minutes: beyond the channel's retry policy, which retries a call only
    before its first message, and a few times.)"""

    what: str
    address: str
    patience: float
    attempts: int = 0
    down_since: float | None = None

    def failed(self, code: grpc.StatusCode) -> float:
        now = time.monotonic()
        self.down_since = self.down_since or now
        if now - self.down_since > self.patience:
            raise CompetitorGaveUp(
                f"{self.what}: server {self.address} unreachable for {self.patience:.0f} s"
            )
        self.attempts += 1
        level = logging.WARNING if self.attempts == 1 else logging.INFO
        log.log(level, "%s: %s; reconnecting", self.what, code.name)
        return min(0.2 * self.attempts, 2.0)

    def ok(self) -> None:
        if self.attempts:
            log.info("%s: connected again", self.what)
        self.attempts = 0
        self.down_since = None


@dataclass
class _State:
    active: dict[tuple[str, int], threading.Thread | None] = field(default_factory=dict)
    """Seats being played, (game id, seat): each with its ``Bot``'s thread (``None``: its turns
    come on the turn stream). A match's entrant holds two seats of a game."""
    started: set[tuple[str, int]] = field(default_factory=set)
    """Seats whose start was told (``on_start``)."""
    ended: set[tuple[str, int]] = field(default_factory=set)
    """Turn mode: seats whose game's end was told (a reopened stream may tell it again)."""
    over: set[str] = field(default_factory=set)
    results: list[GameResult] = field(default_factory=list)
    tables_found: int = 0
    error: BaseException | None = None


class Competitor:
    """Plays the seats reserved for the account whose API key is ``key``.

    ``seek``: also seek tables like this one, one at a time. ``games``: stop after this many
    games are over (and seek no more tables than that). ``max_games_at_once``: more games
    than that wait for one to end (a tournament's duplicate deal needs up to three at once).
    ``move_ms``: each decision's budget for a searching strategy (``None``: its own).
    ``concurrency``: play every game through one turn stream, deciding this many turns at once
    (1..64; ``max_games_at_once`` then does not apply); ``None``: a ``Bot`` and a stream per
    game. Callbacks, called from the
    competitor's threads: ``on_start(assignment)`` when a game's bot starts, ``on_end(result)``
    when it ends (the game over, or an error), ``on_seek(waiting)`` for each word from an
    open seek.
    """

    def __init__(
        self,
        client: Client,
        key: str,
        strategy_name: str,
        seed: int = 0,
        *,
        seek: SeekPlan | tuple[str, Mapping[str, str], game_pb2.TimeControl | None] | None = None,
        games: int | None = None,
        patience: float | None = None,
        on_start: Callable[[competition_pb2.SeatAssignment], None] | None = None,
        on_end: Callable[[GameResult], None] | None = None,
        on_seek: Callable[[competition_pb2.SeekWaiting], None] | None = None,
        max_games_at_once: int = 32,
        accept: Sequence[str] = (),
        on_challenge: Callable[[challenges_pb2.Challenge, bool], None] | None = None,
        move_ms: int | None = None,
        concurrency: int | None = None,
    ) -> None:
        # An unknown name or a budget out of range fails here, not in a game's thread.
        load_strategy(strategy_name, seed, move_ms)
        if max_games_at_once < 1:
            raise ValueError(f"max_games_at_once={max_games_at_once}: at least 1")
        if games is not None and games < 1:
            raise ValueError(f"games={games}: at least 1")
        if concurrency is not None and not 1 <= concurrency <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency={concurrency}: 1..{MAX_CONCURRENCY}")
        self.client = client
        self.key = key
        self.strategy_name = strategy_name
        self.seed = seed
        self.move_ms = move_ms
        self.seek = SeekPlan(*seek) if seek is not None else None
        self.games = games
        self.patience = math.inf if patience is None else patience
        self.on_start = on_start
        self.on_end = on_end
        self.on_seek = on_seek
        self.accept = frozenset(accept)
        self.on_challenge = on_challenge
        self._at_once = max_games_at_once
        self._pending: deque[competition_pb2.SeatAssignment] = deque()
        """Games told but not yet played, in the order told: a game's bot (and its thread)
        starts only when fewer than ``max_games_at_once`` are being played. Every account is
        told its games oldest first, so the oldest game not over is being played by each of its
        players: games progress however many an organiser makes at once."""
        self._running = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._state = _State()
        self._calls: set[Any] = set()
        self._threads: list[threading.Thread] = []
        self._assignments: dict[tuple[str, int], competition_pb2.SeatAssignment] = {}
        """Turn mode: the assignment told of each seat being played."""
        self._answerer = (
            TurnAnswerer(
                lambda seat: load_strategy(strategy_name, seed + seat, move_ms),
                concurrency,
                stop=self._stop,
                on_failed=self._turn_failed,
            )
            if concurrency is not None
            else None
        )

    # --- what it did -------------------------------------------------------------------

    @property
    def results(self) -> list[GameResult]:
        """Games ended so far, in the order they ended."""
        with self._lock:
            return list(self._state.results)

    @property
    def playing(self) -> list[str]:
        """Games being played now."""
        with self._lock:
            return list(dict.fromkeys(game_id for game_id, _ in self._state.active))

    @property
    def games_over(self) -> int:
        with self._lock:
            return len(self._state.over)

    # --- running -----------------------------------------------------------------------

    def run(self, until: Callable[[], bool] | None = None) -> list[GameResult]:
        """Play until ``games`` games are over, ``until()`` says so, or ``stop()``; return the
        games' results. Raises what made it stop otherwise: ``grpc.RpcError`` for a refusal
        (UNAUTHENTICATED: a key the server does not know; INVALID_ARGUMENT: a seek of rules
        that do not exist ...), ``CompetitorGaveUp`` after ``patience`` seconds without the
        server."""
        self._start(self._follow_seats, "seats")
        if self._answerer is not None:
            self._answerer.start()
            self._start(self._follow_turns, "turns")
        if self.accept:
            self._start(self._follow_account, "account")
        if self.seek is not None:
            self._start(self._seek_tables, "seek")
        try:
            while not self._stop.is_set():
                with self._lock:
                    error = self._state.error
                    over = len(self._state.over)
                if error is not None:
                    raise error
                if self.games is not None and over >= self.games:
                    break
                if until is not None and until():
                    break
                self._wake.wait(0.25)
                self._wake.clear()
        finally:
            self.stop()
            if self._answerer is not None:
                self._answerer.close()
            for thread in self._threads:
                thread.join(timeout=5)
        return self.results

    def stop(self) -> None:
        """Stop seeking, following seats and playing (from any thread)."""
        self._stop.set()
        self._wake.set()
        with self._lock:
            calls = list(self._calls)
        for call in calls:
            call.cancel()

    def _start(self, target: Callable[[], None], name: str) -> None:
        def guarded() -> None:
            try:
                target()
            except BaseException as error:  # noqa: BLE001 -- handed to run(), which raises it
                self._fail(error)

        thread = threading.Thread(target=guarded, name=f"competitor-{name}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            if self._state.error is None and not self._stop.is_set():
                self._state.error = error
        self._wake.set()

    def _open(self, call: Any) -> None:
        with self._lock:
            self._calls.add(call)
        if self._stop.is_set():  # stop() may have run before the call was known
            call.cancel()

    def _close(self, call: Any) -> None:
        call.cancel()
        with self._lock:
            self._calls.discard(call)

    # --- the account's seats -----------------------------------------------------------

    def _follow_seats(self) -> None:
        backoff = _Backoff("seats", self.client.address, self.patience)
        while not self._stop.is_set():
            call = self.client.watch_seats(self.key)
            self._open(call)
            opened = time.monotonic()
            try:
                for message in call:
                    backoff.ok()
                    self._play(message.assignment)
                pause = 0.2  # the server ended the stream (shutting down): open it again
            except grpc.RpcError as error:
                if self._stop.is_set():
                    return
                code = error.code()
                if code not in RETRY_CODES:
                    raise
                if time.monotonic() - opened > 10:
                    backoff.ok()  # it was open a good while: this is a new outage
                pause = backoff.failed(code)
            finally:
                self._close(call)
            self._stop.wait(pause)

    # --- challenges --------------------------------------------------------------------

    def _follow_account(self) -> None:
        """Answer the challenges the account receives (AccountService.WatchAccount): accept
        those of a preset in ``accept``, decline the others (so that their challengers know at
        once). The games accepted are played like any reserved seat (``_follow_seats``). The
        stream is read from the account's first event, so challenges received while the
        competitor was away are answered too (those expired by then are passed over), and
        resumed after the last event read."""
        backoff = _Backoff("account", self.client.address, self.patience)
        after = 0
        while not self._stop.is_set():
            call = self.client.watch_account(self.key, after)
            self._open(call)
            opened = time.monotonic()
            try:
                for message in call:
                    backoff.ok()
                    after = message.event.sequence
                    if message.event.WhichOneof("kind") == "challenge_received":
                        self._answer(message.event.challenge_received.challenge)
                pause = 0.2
            except grpc.RpcError as error:
                if self._stop.is_set():
                    return
                code = error.code()
                if code not in RETRY_CODES:
                    raise
                if time.monotonic() - opened > 10:
                    backoff.ok()
                pause = backoff.failed(code)
            finally:
                self._close(call)
            self._stop.wait(pause)

    def _answer(self, challenge: challenges_pb2.Challenge) -> None:
        if challenge.expire_time.ToDatetime(tzinfo=UTC) <= datetime.now(UTC):
            return
        playable = challenge.rules.preset in self.accept
        try:
            if playable:
                self.client.accept_challenge(self.key, challenge.challenge_id)
            else:
                self.client.decline_challenge(self.key, challenge.challenge_id)
        except grpc.RpcError as error:
            # Answered already (a replay after a reconnection), declined by another, expired.
            if refusal(error).reason == "CHALLENGE_NOT_OPEN":
                return
            raise
        log.info(
            "challenge %s from %s: %s",
            challenge.challenge_id,
            challenge.challenger,
            "accepted" if playable else "declined",
        )
        if self.on_challenge is not None:
            self.on_challenge(challenge, playable)

    # --- seeking -----------------------------------------------------------------------

    def _want_table(self) -> bool:
        if self.games is None:
            return True
        with self._lock:
            return len(self._state.over | {g for g, _ in self._state.active}) < self.games

    def _seek_tables(self) -> None:
        plan = self.seek
        assert plan is not None
        backoff = _Backoff("seek", self.client.address, self.patience)
        while not self._stop.is_set():
            if not self._want_table():
                self._stop.wait(0.25)
                continue
            call = self.client.seek(self.key, plan.preset, plan.options, plan.time_control)
            self._open(call)
            seated: competition_pb2.SeatAssignment | None = None
            pause = 0.0
            try:
                for message in call:
                    backoff.ok()
                    if message.WhichOneof("kind") == "seated":
                        seated = message.seated
                        break
                    log.info(
                        "seeking %s: %d of %d waiting",
                        plan.preset,
                        message.waiting.seekers,
                        message.waiting.players,
                    )
                    if self.on_seek is not None:
                        self.on_seek(message.waiting)
                else:
                    log.info("seek: the stream ended without a table; seeking again")
                    pause = 0.2
            except grpc.RpcError as error:
                if self._stop.is_set():
                    return
                code = error.code()
                if code not in RETRY_CODES:
                    raise
                pause = backoff.failed(code)
            finally:
                self._close(call)
            if seated is not None:
                with self._lock:
                    self._state.tables_found += 1
                log.info("seek: seated in game %s, seat %d", seated.game_id, seated.seat)
                self._play(seated)
            self._stop.wait(pause)

    # --- playing -----------------------------------------------------------------------

    def _play(self, assignment: competition_pb2.SeatAssignment) -> None:
        """Play the seat (now, or when a game ends), unless its game is being (or was, or is
        waiting to be) played already."""
        if self._answerer is not None:
            self._follow_game(assignment)
            return
        game_id = assignment.game_id
        seat = (game_id, assignment.seat)
        with self._lock:
            if (
                self._stop.is_set()
                or seat in self._state.active
                or game_id in self._state.over
                or any((a.game_id, a.seat) == seat for a in self._pending)
            ):
                return
            self._pending.append(assignment)
        self._admit()

    def _admit(self) -> None:
        """Start the bots of waiting games while fewer than ``max_games_at_once`` play."""
        while True:
            with self._lock:
                if self._stop.is_set() or not self._pending or self._running >= self._at_once:
                    return
                assignment = self._pending.popleft()
                game_id = assignment.game_id
                thread = threading.Thread(
                    target=self._play_game,
                    args=(assignment,),
                    name=f"game-{game_id[:8]}-seat-{assignment.seat}",
                    daemon=True,
                )
                self._state.active[game_id, assignment.seat] = thread
                self._running += 1
            try:
                thread.start()
            except RuntimeError as error:  # no more threads: the competitor cannot go on
                with self._lock:
                    self._state.active.pop((game_id, assignment.seat), None)
                    self._running -= 1
                self._fail(error)
                return

    def _play_game(self, assignment: competition_pb2.SeatAssignment) -> None:
        try:
            self._play_seat(assignment)
        finally:
            with self._lock:
                self._running -= 1
            self._admit()

    def _play_seat(self, assignment: competition_pb2.SeatAssignment) -> None:
        game_id = assignment.game_id
        view: view_pb2.SeatView | None = None
        error: BaseException | None = None
        log.info("game %s: playing seat %d", game_id, assignment.seat)
        try:
            if self.on_start is not None:
                self.on_start(assignment)
            bot = Bot(
                self.client,
                game_id,
                self.key,
                load_strategy(self.strategy_name, self.seed + assignment.seat, self.move_ms),
                patience=self.patience,
                stop=self._stop,
                seat=assignment.seat,
            )
            view = bot.run()
        except BotGaveUp as gave_up:
            error = gave_up
        except Exception as failure:  # noqa: BLE001 -- one game's failure is reported, not fatal
            error = failure
            if not self._stop.is_set():
                log.warning("game %s: the bot stopped: %s", game_id, _describe(failure))
        result = GameResult(assignment, view, error)
        tell = result.over or not self._stop.is_set()  # stopped mid-game: nothing to tell
        try:
            # Told before it counts: run() returns (and a command may exit) as soon as enough
            # games count as over, and this thread is not waited for. The seat stays active
            # meanwhile, so that its game is not played again.
            if tell and self.on_end is not None:
                self.on_end(result)
        finally:
            with self._lock:
                self._state.active.pop((game_id, assignment.seat), None)
                if result.over:
                    self._state.over.add(game_id)
                self._state.results.append(result)
            self._wake.set()

    # --- turn mode: every game's turns on one stream --------------------------------------

    def _follow_turns(self) -> None:
        """Read the account's turn stream; hand each turn to the workers, tell each end. A
        reopened stream names the games being played, to be told those that ended meanwhile
        (the server follows again every seat of the account in each: both of a partnership)."""
        assert self._answerer is not None
        backoff = _Backoff("turns", self.client.address, self.patience)
        while not self._stop.is_set():
            with self._lock:
                games = dict.fromkeys(game_id for game_id, _ in self._state.active)
            call = self.client.play_turns(
                self.key, self._answerer.open(list(games)[-_MAX_NAMED:])
            )
            self._open(call)
            opened = time.monotonic()
            try:
                for message in call:
                    backoff.ok()
                    if message.HasField("refused"):
                        self._answerer.refused(message.refused)
                        continue
                    turn = message.turn
                    if turn.game_over:
                        self._turns_over(turn)
                    else:
                        self._follow_game(
                            competition_pb2.SeatAssignment(game_id=turn.game_id, seat=turn.seat),
                            tell=False,
                        )
                        self._answerer.answer(turn)
                pause = 0.2  # the server ended the stream (shutting down): open it again
            except grpc.RpcError as error:
                if self._stop.is_set():
                    return
                code = error.code()
                if code not in RETRY_CODES:
                    raise
                if time.monotonic() - opened > 10:
                    backoff.ok()
                pause = backoff.failed(code)
            finally:
                self._close(call)
            self._stop.wait(pause)

    def _follow_game(self, assignment: competition_pb2.SeatAssignment, tell: bool = True) -> None:
        """Turn mode: a seat being played. ``tell``: the assignment is the server's word (from
        WatchSeats or a seek), and its start is told once; a seat first seen by a turn is
        followed without it until then."""
        seat = (assignment.game_id, assignment.seat)
        with self._lock:
            if self._stop.is_set() or seat in self._state.ended:
                return
            self._state.active.setdefault(seat, None)
            if not tell:
                self._assignments.setdefault(seat, assignment)
                return
            self._assignments[seat] = assignment
            if seat in self._state.started:
                return
            self._state.started.add(seat)
        log.info("game %s: playing seat %d", assignment.game_id, assignment.seat)
        if self.on_start is not None:
            self.on_start(assignment)

    def _turns_over(self, message: competition_pb2.WatchTurnsResponse) -> None:
        """A seat's game ended: its result (each seat of a partnership has its own)."""
        assert self._answerer is not None
        seat = (message.game_id, message.seat)
        self._answerer.forget(message.game_id, message.seat)
        with self._lock:
            if seat in self._state.ended:
                return
            assignment = self._assignments.pop(seat, None)
            self._state.ended.add(seat)
        result = GameResult(
            assignment
            or competition_pb2.SeatAssignment(game_id=message.game_id, seat=message.seat),
            message.view,
        )
        try:
            if self.on_end is not None:
                self.on_end(result)  # told before it counts, as in _play_seat
        finally:
            with self._lock:
                self._state.active.pop(seat, None)
                self._state.over.add(message.game_id)
                self._state.results.append(result)
            self._wake.set()

    def _turn_failed(self, turn: competition_pb2.WatchTurnsResponse, error: BaseException) -> None:
        """A turn could not be answered (from a worker, or from the stream's thread for an
        answer the server refused): the seat is reported stopped, as a ``Bot`` that failed is;
        a later turn of it is answered again."""
        log.warning(
            "game %s: a turn of seat %d was not answered: %s",
            turn.game_id,
            turn.seat,
            _describe(error),
        )
        seat = (turn.game_id, turn.seat)
        with self._lock:
            assignment = self._assignments.pop(seat, None)
            self._state.active.pop(seat, None)
            self._state.started.discard(seat)
            result = GameResult(
                assignment or competition_pb2.SeatAssignment(game_id=turn.game_id, seat=turn.seat),
                turn.view,
                error,
            )
            self._state.results.append(result)
        self._wake.set()
        if self.on_end is not None:
            self.on_end(result)


def _describe(error: BaseException) -> str:
    if isinstance(error, grpc.RpcError):
        return f"{error.code().name}: {error.details()}"
    return f"{type(error).__name__}: {error}"
