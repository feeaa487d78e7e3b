"""A game as this process holds it (``LiveGame``), and what its watchers are sent of it.

A ``LiveGame`` is made from the game's log once (``live_game``) and then changed only by the
game host, under the game's lock, on the event loop. It keeps the states after its latest
versions, and the stream messages made of them, so that however many watch a game each message
is made and encoded once. What a watcher may see is the engine's (``engine.view_event``,
``engine.view``): this module only encodes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import game_service_pb2
from boneyard.engine import Event, GameState, Phase
from boneyard.records.hashing import GENESIS_HASH
from boneyard.server.store.game_setup import GameClock, MadeFor
from boneyard.server.store.repository import GameSnapshot, RequestRecord

__all__ = [
    "PHASE_DEAL",
    "PHASE_GAME_OVER",
    "LiveGame",
    "Submitted",
    "account_seats",
    "face_down_through",
    "live_game",
    "stream_message",
    "turn_of",
]

_RECENT = 16
"""States (and stream messages) kept for the latest versions, shared by every watcher."""
PHASE_DEAL, PHASE_GAME_OVER = Phase.DEAL, Phase.GAME_OVER
"""The phases the host reads at every action, read once here for it and this module: on
Python 3.11 an enum's member read through its class passes through ``EnumType.__getattr__``'s
hook, several times a plain attribute's cost."""
_NOBODY_TO_ACT = frozenset((PHASE_DEAL, PHASE_GAME_OVER))


class Submitted(NamedTuple):
    """What an action brought about. (A named tuple, not a frozen dataclass: that sets each
    field through ``object.__setattr__``, and one is made at every action.)"""

    version: int
    events: tuple[Event, ...]
    replayed: bool
    """True when this answers a retried ``request_id`` and nothing was applied."""
    response: bytes | None = None
    """The answer the caller's ``response_for`` made (made again for a retried request)."""


@dataclass(eq=False, slots=True)
class LiveGame:
    """One game as this process holds it. Changed only under ``lock``, on the event loop."""

    id: str
    name: str
    created_at: datetime
    updated_at: datetime
    status: str
    state: GameState
    version: int
    last_hash: bytes
    events: list[Event]
    seats: dict[int, str]
    """Seat -> player name."""
    tokens: dict[str, int]
    """Token hash -> seat."""
    accounts: dict[str, tuple[int, ...]]
    """Account id -> its reserved seats, lowest first: one, or (a match's entrant) its
    partnership's (``account_seats``)."""
    requests: dict[str, RequestRecord]
    clock: GameClock | None
    deal_secret: bytes | None
    house: dict[int, str] = field(default_factory=dict)
    """Seat -> the strategy of the house bot playing it (``boneyard.server.competition.house_bots``)."""
    made_for: MadeFor = field(default_factory=MadeFor)
    """The tournament, match or ratings the game was made for, from its creation (here, or
    read with the game): its end wakes only what it concerns."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    recent: dict[int, GameState] = field(default_factory=dict)
    """State after each of the latest versions."""
    messages: dict[tuple[int, int | None], bytes] = field(default_factory=dict)
    """The stream message of a recent version for a seat (``None``: spectators), encoded:
    made and serialized once however many watch."""
    evicted: bool = False
    """Dropped from the cache: whoever holds this object must get the game again."""
    absence: engine.Absence | None = None
    """Each seat's timeouts in a row (``engine.absence``), kept up with every commit."""

    def __post_init__(self) -> None:
        if self.absence is None:
            self.absence = engine.absence(self.events, self.state.rules.players)

    @property
    def players(self) -> int:
        return self.state.rules.players

    @property
    def full(self) -> bool:
        return len(self.seats) == self.players

    @property
    def over(self) -> bool:
        return self.state.phase is PHASE_GAME_OVER

    def forget_tokens(self, seat: int) -> None:
        """The seat's tokens open it no more (it was left, or its token issued anew)."""
        for old in [t for t, s in self.tokens.items() if s == seat]:
            del self.tokens[old]

    def state_at(self, version: int) -> GameState | None:
        """The state at ``version`` if it is one of the latest (or the current)."""
        if version == self.version:
            return self.state
        return self.recent.get(version)

    def message(self, seq: int, seat: int | None) -> bytes | None:
        """The stream message of event ``seq`` as ``seat`` sees it, made once for all the
        watchers in that seat; ``None`` if ``seq`` is too old to be kept (the caller folds)."""
        key = (seq, seat)
        found = self.messages.get(key)
        if found is not None:
            return found
        before, after = self.state_at(seq - 1), self.state_at(seq)
        if before is None or after is None or seq > self.version:
            return None
        found = stream_message(self.events[seq - 1], before, after, seat, seq)
        self.messages[key] = found
        return found

    def _remember(self, states: list[GameState]) -> None:
        """Record the states after each new event (``states[-1]`` is now current)."""
        recent = self.recent
        first = self.version - len(states) + 1
        for offset, state in enumerate(states):
            recent[first + offset] = state
        # Versions go in only here, each after the last: those now behind the horizon are the
        # ones the last horizon kept and this one does not.
        horizon = self.version - _RECENT
        for version in range(first - 1 - _RECENT, horizon):
            recent.pop(version, None)
        if self.messages:
            for key in [k for k in self.messages if k[0] < horizon]:
                del self.messages[key]


def stream_message(
    event: Event,
    before: GameState | None,
    after: GameState,
    seat: int | None,
    seq: int,
    face_down_through: int = 0,
) -> bytes:
    """What a watcher in ``seat`` (``None``: a spectator) is sent for event ``seq``: an
    encoded ``WatchGameResponse`` (the gRPC port's piping passes bytes through unchanged), as the
    engine's views say: ``face_down_through``, the version up to which the tricks lay face
    down when the stream began (``engine.face_down_through``)."""
    behind = seq <= face_down_through
    seen = engine.view_event(event, before, seat, after=after, behind=behind)
    message = game_service_pb2.WatchGameResponse(
        event=codec.seen_event_to_proto(seen, seq),
        version=seq,
        view=codec.view_to_proto(engine.view(after, seat, behind=behind), seq),
    )
    return message.SerializeToString()


def face_down_through(game: LiveGame) -> int:
    """``engine.face_down_through`` of the game as this process holds it."""
    return engine.face_down_through(game.events, game.state)


def account_seats(held: Iterable[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    """``(account id, seat)`` pairs as each account's seats, lowest first."""
    seats: dict[str, list[int]] = {}
    for account_id, seat in held:
        seats.setdefault(account_id, []).append(seat)
    return {account_id: tuple(sorted(mine)) for account_id, mine in seats.items()}


def turn_of(state: GameState) -> int | None:
    """The seat to act, if anybody is."""
    if state.phase in _NOBODY_TO_ACT or state.hand is None:
        return None
    return state.hand.turn


def live_game(snapshot: GameSnapshot) -> LiveGame:
    """Fold a game's log into the copy kept in memory."""
    events = [codec.decode_event(row.payload) for row in snapshot.events]
    state = engine.replay(events)
    seats = {seat: name for seat, (name, _) in snapshot.seats.items()}
    tokens = {token: seat for seat, (_, token) in snapshot.seats.items()}
    record = snapshot.game
    return LiveGame(
        id=record.id,
        name=record.name,
        created_at=record.created_at,
        updated_at=record.updated_at,
        status=record.status,
        state=state,
        version=len(events),
        last_hash=snapshot.events[-1].hash if snapshot.events else GENESIS_HASH,
        events=events,
        seats=seats,
        tokens=tokens,
        accounts=dict(snapshot.accounts),
        requests=dict(snapshot.requests),
        clock=snapshot.clock,
        deal_secret=snapshot.deal_secret,
        house=dict(snapshot.house_bots),
        made_for=snapshot.made_for,
    )
