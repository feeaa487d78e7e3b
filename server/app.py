"""The application layer: load a game's events, fold them, let the engine decide, append
the new events with the expected version, and tell the watchers.

Nothing here knows gRPC. The server deals: whenever a game reaches the deal phase, the
next hand is dealt in the same append, from a seed drawn with ``secrets``; the seed's
SHA-256 commitment is recorded when the hand is dealt and the seed stays secret until the
game ends.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import engine
from boneyard import codec
from engine import Event, GameState, HandDealt, Phase, SeatCommand
from server.errors import (
    InvalidArgument,
    NotFound,
    PreconditionFailed,
    StaleVersion,
    Unauthenticated,
)
from server.store import errors as store_errors
from server.store.repository import EventStore, GameStatus

__all__ = ["GameApp", "Submitted", "token_hash"]

log = logging.getLogger(__name__)

_CACHE_SIZE = 1024


def token_hash(token: str) -> str:
    """Seat tokens are stored only as this hash."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Submitted:
    version: int
    events: tuple[Event, ...]
    replayed: bool
    """True when this answers a retried ``request_id`` and nothing was applied."""
    response: bytes | None = None
    """The stored response of the first attempt, for a retried request."""


class GameApp:
    def __init__(self, store: EventStore, seeds: Callable[[], bytes] | None = None) -> None:
        self._store = store
        self._seeds = seeds or (lambda: secrets.token_bytes(32))
        self._cache: OrderedDict[str, tuple[int, GameState]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._full: set[str] = set()
        """Games whose every seat is taken."""

    @property
    def store(self) -> EventStore:
        return self._store

    # ------------------------------------------------------------ games

    def create_game(self, preset: str, options: Mapping[str, Any], name: str = "") -> tuple[str, int]:
        try:
            rules = engine.ruleset(preset, options)
        except engine.RulesetError as e:
            raise InvalidArgument(str(e)) from None
        game_id = str(uuid.uuid4())
        events: list[Event] = list(engine.start(rules))
        state = engine.replay(events)
        seeds: list[tuple[int, bytes]] = []
        events += self._deal(state, seeds)
        self._store.create_game(
            game_id,
            preset,
            rules.options(),
            rules.players,
            name,
            [codec.encode_event(e) for e in events],
            seeds=[(n, s, _commitment(s)) for n, s in seeds],
        )
        return game_id, len(events)

    def _deal(self, state: GameState, seeds: list[tuple[int, bytes]]) -> list[Event]:
        """Deal while the game waits for a deal (the server is the shaker)."""
        dealt: list[Event] = []
        while state.phase is Phase.DEAL:
            seed = self._seeds()
            events = engine.decide(state, engine.Deal(seed))
            for event in events:
                state = engine.evolve(state, event)
                if type(event) is HandDealt:
                    seeds.append((event.number, seed))
            dealt += events
        return dealt

    def take_seat(self, game_id: str, seat: int | None, player_name: str) -> tuple[int, str]:
        """Seat a player (``seat=None``: the lowest free seat); return the seat and its token.

        The token is returned once and stored only as its SHA-256."""
        state, _ = self.load(game_id)
        players = state.rules.players
        if seat is not None and not 0 <= seat < players:
            raise InvalidArgument(f"game {game_id} has seats 0..{players - 1}, not {seat}")
        while True:
            if seat is None:
                taken = {s.seat for s in self._store.list_seats(game_id)}
                free = [s for s in range(players) if s not in taken]
                if not free:
                    raise PreconditionFailed(f"every seat of game {game_id} is taken")
                chosen, automatic = free[0], True
            else:
                chosen, automatic = seat, False
            token = secrets.token_urlsafe(32)
            try:
                seated = self._store.take_seat(game_id, chosen, player_name, token_hash(token))
            except store_errors.SeatTaken:
                if automatic:
                    continue  # somebody took it meanwhile: try the next free seat
                raise PreconditionFailed(f"seat {chosen} of game {game_id} is taken") from None
            if seated == players and state.phase is not Phase.GAME_OVER:
                self._store.set_status(game_id, "playing")
            return chosen, token

    def seat_for(self, game_id: str, token: str | None) -> int | None:
        """The seat a token opens, ``None`` for no token (a spectator)."""
        if token is None:
            return None
        seat = self._store.seat_for_token(game_id, token_hash(token))
        if seat is None:
            self._require_game(game_id)
            raise Unauthenticated(f"this token opens no seat of game {game_id}")
        return seat

    def _require_game(self, game_id: str) -> None:
        try:
            self._store.get_game(game_id)
        except store_errors.GameNotFound:
            raise NotFound(f"no game {game_id}") from None

    # ------------------------------------------------------------ reading

    def load(self, game_id: str) -> tuple[GameState, int]:
        """The game's state and version, folding only the events the cache has not seen."""
        with self._cache_lock:
            cached = self._cache.get(game_id)
        version, state = cached if cached else (0, None)
        try:
            rows = self._store.load_events(game_id, from_seq=version)
        except store_errors.GameNotFound:
            raise NotFound(f"no game {game_id}") from None
        for row in rows:
            state = engine.evolve(state, codec.decode_event(row.payload))
            version = row.seq
        assert state is not None
        with self._cache_lock:
            self._cache[game_id] = (version, state)
            self._cache.move_to_end(game_id)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return state, version

    def events_since(self, game_id: str, from_version: int) -> list[tuple[int, Event]]:
        try:
            rows = self._store.load_events(game_id, from_seq=from_version)
        except store_errors.GameNotFound:
            raise NotFound(f"no game {game_id}") from None
        return [(row.seq, codec.decode_event(row.payload)) for row in rows]

    # ------------------------------------------------------------ acting

    def submit(
        self,
        game_id: str,
        seat: int,
        expected_version: int,
        request_id: str,
        command: SeatCommand,
        response_for: Callable[[int, GameState], bytes],
    ) -> Submitted:
        """Apply ``command`` for ``seat`` if the game is still at ``expected_version``.

        ``response_for(version, state)`` makes the bytes stored with the request so that a
        retry with the same ``request_id`` gets the same answer.
        """
        earlier = self._earlier(game_id, seat, request_id)
        if earlier is not None:
            return earlier
        state, version = self.load(game_id)
        if expected_version != version:
            # The version may have moved because this very request, sent twice, was applied
            # meanwhile: that is answered, not refused.
            earlier = self._earlier(game_id, seat, request_id)
            if earlier is not None:
                return earlier
            raise StaleVersion(
                f"game {game_id} is at version {version}, not {expected_version}: fetch the view "
                f"and decide again"
            )
        try:
            events = engine.decide(state, command)
        except engine.IllegalAction as e:
            raise PreconditionFailed(f"game {game_id} version {version}: {e}") from None
        for event in events:
            state = engine.evolve(state, event)
        seeds: list[tuple[int, bytes]] = []
        if state.phase is Phase.DEAL:
            dealt = self._deal(state, seeds)
            for event in dealt:
                state = engine.evolve(state, event)
            events = events + dealt
        new_version = version + len(events)
        request = None
        if request_id:
            request = (request_id, seat, response_for(new_version, state))
        try:
            self._store.append(
                game_id,
                version,
                [codec.encode_event(e) for e in events],
                request=request,
                status="finished" if state.phase is Phase.GAME_OVER else self._playing(game_id),
                seeds=[(n, s, _commitment(s)) for n, s in seeds],
            )
        except store_errors.DuplicateRequest:
            # The same request raced itself: the other attempt was applied; answer as it was.
            earlier = self._earlier(game_id, seat, request_id)
            assert earlier is not None
            return earlier
        except store_errors.VersionConflict:
            earlier = self._earlier(game_id, seat, request_id)
            if earlier is not None:
                return earlier
            raise StaleVersion(
                f"game {game_id} moved past version {version} while this action was applied"
            ) from None
        if state.phase is Phase.GAME_OVER:
            self._store.reveal_seeds(game_id)
            self._full.discard(game_id)
        with self._cache_lock:
            self._cache[game_id] = (new_version, state)
        return Submitted(new_version, tuple(events), False, request[2] if request else None)

    def _playing(self, game_id: str) -> GameStatus | None:
        """``"playing"`` once every seat is taken; ``None`` (the status stays ``open``) while a
        seat is free, even if the seated players have begun (TakeSeat of the last seat sets
        ``playing`` then). Seats are never given up, so a full table is remembered."""
        if game_id not in self._full:
            record = self._store.get_game(game_id)
            if record.seats_taken < record.players:
                return None
            self._full.add(game_id)
        return "playing"

    def _earlier(self, game_id: str, seat: int, request_id: str) -> Submitted | None:
        """The stored answer to ``request_id`` if it was applied already, for a retry.

        The answer holds the acting seat's view (its hand): another seat sending the same id
        is refused, never shown it."""
        if not request_id:
            return None
        earlier = self._store.find_request(game_id, request_id)
        if earlier is None:
            return None
        if earlier.seat != seat:
            raise InvalidArgument(
                f"request_id {request_id!r} was already used by another seat's action in game "
                f"{game_id}: send a new, unique id (a UUID) with each action"
            )
        return Submitted(earlier.result_version, (), True, earlier.response)


def _commitment(seed: bytes) -> bytes:
    return hashlib.sha256(seed).digest()
