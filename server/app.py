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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from boneyard import codec, engine
from boneyard.engine import Command, Event, GameState, HandDealt, Phase
from boneyard.server.accounts import is_api_key, key_hash
from boneyard.server.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    PreconditionFailed,
    StaleVersion,
    Unauthenticated,
)
from boneyard.server.store import errors as store_errors
from boneyard.server.store.competition import (
    Account,
    ClockState,
    CompetitionStore,
    GameClock,
    GameSetup,
    Reservation,
    TimeControl,
)
from boneyard.server.store.repository import EventStore, GameStatus

__all__ = ["GameApp", "Submitted", "check_time_control", "deal_seed", "rules_for", "token_hash"]

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


_V = TypeVar("_V")


class _Memo(OrderedDict[str, _V]):
    """What the app remembers of a game (its deal secret, whether it has a clock ...), for the
    games used last: a long-running server must not keep something for every game it saw."""

    def __setitem__(self, game_id: str, value: _V) -> None:
        super().__setitem__(game_id, value)
        self.move_to_end(game_id)
        while len(self) > _CACHE_SIZE * 4:
            self.popitem(last=False)


def deal_seed(secret: bytes, hand_number: int) -> bytes:
    """The seed of hand ``hand_number`` of a game with fixed deals (duplicate tournaments)."""
    return hashlib.sha256(secret + hand_number.to_bytes(4, "big")).digest()


class GameApp:
    def __init__(
        self,
        store: EventStore,
        seeds: Callable[[], bytes] | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._store = store
        self._competition = CompetitionStore(store)
        self._seeds = seeds or (lambda: secrets.token_bytes(32))
        self._now = now or (lambda: datetime.now(UTC))
        self._started_at = self._now()
        """Clocks do not count the time the server was down: a turn begun before this
        process started is timed from its start."""
        self._cache: OrderedDict[str, tuple[int, GameState]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._full: set[str] = set()
        """Games whose every seat is taken."""
        self._secrets: _Memo[bytes | None] = _Memo()
        self._clocked: _Memo[bool] = _Memo()
        self._public: _Memo[bool] = _Memo()
        """Games spectators may watch (checked once: an embargo is only ever lifted)."""

    @property
    def store(self) -> EventStore:
        return self._store

    @property
    def competition(self) -> CompetitionStore:
        return self._competition

    # ------------------------------------------------------------ games

    def create_game(
        self,
        preset: str,
        options: Mapping[str, Any],
        name: str = "",
        *,
        time_control: TimeControl | None = None,
        reservations: Sequence[tuple[int, Account]] = (),
        deal_secret: bytes | None = None,
        also: Callable[[Session, str], None] | None = None,
    ) -> tuple[str, int]:
        """Make a game and deal its first hand. ``reservations`` keep seats for accounts;
        ``deal_secret`` fixes the deals (``deal_seed``); ``also`` writes more in the same
        transaction (a seek's or tournament's bookkeeping)."""
        rules = rules_for(preset, options)
        if time_control is not None:
            check_time_control(time_control)
        seats = [seat for seat, _ in reservations]
        if any(not 0 <= seat < rules.players for seat in seats):
            raise InvalidArgument(f"a {rules.name} table has seats 0..{rules.players - 1}, not {seats}")
        if len(set(seats)) != len(seats):
            raise InvalidArgument(f"a seat is reserved twice: {sorted(seats)}")
        holders = [account.id for _, account in reservations]
        if len(set(holders)) != len(holders):
            raise InvalidArgument("an account may hold only one seat of a game")
        game_id = str(uuid.uuid4())
        events: list[Event] = list(engine.start(rules))
        state = engine.replay(events)
        seeds: list[tuple[int, bytes]] = []
        events += self._deal(state, seeds, deal_secret)
        for event in events[1:]:
            state = engine.evolve(state, event)
        full = len(reservations) == rules.players
        clock = None
        if time_control is not None:
            turn = _turn(state) if full else None
            clock = (
                time_control,
                ClockState(
                    (time_control.bank_ms,) * rules.players,
                    turn,
                    self._now() if turn is not None else None,
                ),
            )
        setup = GameSetup(
            reservations=[
                Reservation(seat, account.id, account.name, token_hash(secrets.token_urlsafe(32)))
                for seat, account in reservations
            ],
            clock=clock,
            deal_secret=deal_secret,
            also=also,
        )
        self._store.create_game(
            game_id,
            preset,
            rules.options(),
            rules.players,
            name,
            [codec.encode_event(e) for e in events],
            seeds=[(n, s, _commitment(s)) for n, s in seeds],
            status="playing" if full else "open",
            setup=setup,
        )
        self._secrets[game_id] = deal_secret
        self._clocked[game_id] = clock is not None
        return game_id, len(events)

    def _deal(
        self, state: GameState, seeds: list[tuple[int, bytes]], secret: bytes | None
    ) -> list[Event]:
        """Deal while the game waits for a deal (the server is the shaker, unless the game's
        deals are fixed by a secret)."""
        dealt: list[Event] = []
        while state.phase is Phase.DEAL:
            seed = self._seeds() if secret is None else deal_seed(secret, state.deals + 1)
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
            token = _seat_token()
            try:
                seated = self._store.take_seat(game_id, chosen, player_name, token_hash(token))
            except store_errors.SeatTaken:
                if automatic:
                    continue  # somebody took it meanwhile: try the next free seat
                raise PreconditionFailed(f"seat {chosen} of game {game_id} is taken") from None
            if seated == players and state.phase is not Phase.GAME_OVER:
                self._store.set_status(game_id, "playing")
                clock = self._competition.clock(game_id) if self._has_clock(game_id) else None
                if clock is not None and clock.state.turn_started_at is None:
                    state, version = self.load(game_id)
                    # If a seated player acted meanwhile, this finds the clock moved on and
                    # leaves it; the keeper sets right a clock left behind (repair_clock).
                    self._competition.restart_turn(
                        game_id, clock.turn_version, _turn(state), version
                    )
            return chosen, token

    def account_for(self, key: str | None) -> Account:
        """The account an API key belongs to."""
        if key is None:
            raise Unauthenticated("this call needs an account's API key: 'authorization: Bearer <key>'")
        account = self._competition.account_for_key(key_hash(key)) if is_api_key(key) else None
        if account is None:
            raise Unauthenticated("this API key belongs to no account")
        return account

    def organiser_for(self, key: str | None) -> Account:
        """The account an API key belongs to, if it may organise (make games for other
        accounts, make and start tournaments): a player's account, never a bot's."""
        account = self.account_for(key)
        if account.kind != "player":
            raise PermissionDenied(
                f"{account.name!r} is a bot account: only a player's account organises games "
                f"and tournaments for others (boneyard admin create-player NAME)"
            )
        return account

    def seat_for(self, game_id: str, token: str | None) -> int | None:
        """The seat a token (or an account's API key) opens, ``None`` for no token (a
        spectator)."""
        if token is None:
            return None
        if is_api_key(token):
            account = self.account_for(token)
            held = self._competition.seat_of_account(game_id, account.id)
            if held is None:
                self._require_game(game_id)
                raise PermissionDenied(f"account {account.name!r} holds no seat of game {game_id}")
            return held
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
        command: Command,
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
        return self._commit(game_id, seat, version, state, events, request_id, response_for)

    def time_out(self, clock: GameClock) -> Submitted | None:
        """Apply the clock's policy if the seat to act has run out of time (``clock`` as the
        keeper read it); ``None`` if it has not, or has acted meanwhile."""
        game_id = clock.game_id
        deadline = self.deadline(clock)
        if deadline is None or self._now() < deadline:
            return None
        state, version = self.load(game_id)
        seat = clock.state.turn_seat
        if version != clock.turn_version or seat is None or _turn(state) != seat:
            return None
        events = engine.decide(state, engine.TimeOut(seat, clock.control.policy))
        log.info("game %s: seat %d ran out of time (%s)", game_id, seat, clock.control.policy)
        try:
            return self._commit(game_id, seat, version, state, events, "", None, expired=clock)
        except StaleVersion:
            return None  # the seat acted at the last moment, or another process timed it out

    def repair_clock(self, clock: GameClock) -> bool:
        """Set right the clock of a full table that is not running, or not at the game's
        version (a seat taken while a seated player acted, or a crash between the two):
        the seat to act gets a fresh turn. ``False`` if the clock was fine."""
        if clock.state.turn_started_at is not None and clock.turn_version == clock.version:
            return False
        state, version = self.load(clock.game_id)
        log.warning("game %s: the clock was not running at version %d; restarting the turn",
                    clock.game_id, version)
        return self._competition.restart_turn(
            clock.game_id, clock.turn_version, _turn(state), version
        )

    def clock(self, game_id: str) -> tuple[GameClock, datetime | None] | None:
        """A game's clock and the deadline of the seat to act (``None`` when stopped)."""
        if not self._has_clock(game_id):
            return None
        clock = self._competition.clock(game_id)
        return None if clock is None else (clock, self.deadline(clock))

    def deadline(self, clock: GameClock) -> datetime | None:
        """When the seat to act runs out of time; ``None`` while the clock is stopped."""
        started, seat = clock.state.turn_started_at, clock.state.turn_seat
        if started is None or seat is None:
            return None
        allowed = clock.control.per_move_ms + clock.state.banks[seat]
        return max(started, self._started_at) + timedelta(milliseconds=allowed)

    def _commit(
        self,
        game_id: str,
        seat: int,
        version: int,
        state: GameState,
        events: list[Event],
        request_id: str,
        response_for: Callable[[int, GameState], bytes] | None,
        expired: GameClock | None = None,
    ) -> Submitted:
        """Append what ``seat``'s command caused (and any deal it leads to) at ``version``."""
        for event in events:
            state = engine.evolve(state, event)
        seeds: list[tuple[int, bytes]] = []
        if state.phase is Phase.DEAL:
            dealt = self._deal(state, seeds, self._deal_secret(game_id))
            for event in dealt:
                state = engine.evolve(state, event)
            events = events + dealt
        new_version = version + len(events)
        request = None
        if request_id and response_for is not None:
            request = (request_id, seat, response_for(new_version, state))
        status = "finished" if state.phase is Phase.GAME_OVER else self._playing(game_id)
        clock = None
        if self._has_clock(game_id):
            clock = self._clock_after(game_id, seat, state, status == "playing", expired)
        try:
            self._store.append(
                game_id,
                version,
                [codec.encode_event(e) for e in events],
                request=request,
                status=status,
                seeds=[(n, s, _commitment(s)) for n, s in seeds],
                clock=clock,
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
            if self._deal_secret(game_id) is None:
                # A game with fixed deals (a tournament's) is published by its director once
                # every playing of its deal is over.
                self._store.reveal_seeds(game_id)
            self._full.discard(game_id)
            self._secrets.pop(game_id, None)
            self._clocked.pop(game_id, None)
        with self._cache_lock:
            self._cache[game_id] = (new_version, state)
        return Submitted(new_version, tuple(events), False, request[2] if request else None)

    def _clock_after(
        self, game_id: str, seat: int, state: GameState, running: bool, expired: GameClock | None
    ) -> ClockState | None:
        """The clock once ``seat`` has acted: time beyond the per-move allowance comes out of
        its bank (all of it when ``expired``, the clock that ran out), and the next seat's turn
        begins now."""
        clock = expired or self._competition.clock(game_id)
        if clock is None:
            return None
        now = self._now()
        banks = list(clock.state.banks)
        started = clock.state.turn_started_at
        if expired is not None:
            banks[seat] = 0
        elif started is not None and clock.state.turn_seat == seat:
            used = (now - max(started, self._started_at)) / timedelta(milliseconds=1)
            over = int(used) - clock.control.per_move_ms
            if over > 0:
                banks[seat] = max(0, banks[seat] - over)
        turn = _turn(state) if running else None
        return ClockState(tuple(banks), turn, now if turn is not None else None)

    def embargoed(self, game_id: str) -> bool:
        """Whether a game is a playing of a tournament deal whose playings are not all over:
        its hands (seen by watching it, or in its record) and its result are the other tables'
        secrets until then."""
        if self._public.get(game_id):
            return False
        if self._deal_secret(game_id) is not None and not self._competition.deals_revealed(
            [game_id]
        ):
            return True
        self._public[game_id] = True
        return False

    def check_spectators(self, game_id: str) -> None:
        """Refuse a spectator an embargoed game (watching one would show another table's
        hands)."""
        if self.embargoed(game_id):
            raise PermissionDenied(
                f"game {game_id} plays a tournament deal that is being played at other tables: "
                f"it can be watched when every playing of the deal is over"
            )

    def _has_clock(self, game_id: str) -> bool:
        known = self._clocked.get(game_id)
        if known is None:
            known = self._clocked[game_id] = self._competition.clock(game_id) is not None
        return known

    def _deal_secret(self, game_id: str) -> bytes | None:
        if game_id not in self._secrets:
            self._secrets[game_id] = self._competition.deal_secret(game_id)
        return self._secrets[game_id]

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


def _seat_token() -> str:
    """A new seat token; never one that looks like an account's API key (``byk_...``)."""
    while True:
        token = secrets.token_urlsafe(32)
        if not is_api_key(token):
            return token


def _turn(state: GameState) -> int | None:
    """The seat to act, if anybody is."""
    if state.phase in (Phase.DEAL, Phase.GAME_OVER) or state.hand is None:
        return None
    return state.hand.turn


MAX_PER_MOVE_MS = 24 * 3600 * 1000
MAX_BANK_MS = 7 * 24 * 3600 * 1000
"""A day a move and a week's bank: more is no clock (and the columns are 32-bit)."""


def rules_for(preset: str, options: Mapping[str, Any]) -> engine.Ruleset:
    """The ruleset of a preset with option overrides; ``InvalidArgument`` saying why not."""
    try:
        return engine.ruleset(preset, options)
    except engine.RulesetError as e:
        raise InvalidArgument(str(e)) from None


def check_time_control(control: TimeControl) -> None:
    """Refuse a time control that makes no sense."""
    if control.per_move_ms > MAX_PER_MOVE_MS or control.bank_ms > MAX_BANK_MS:
        raise InvalidArgument(
            f"a time control allows at most {MAX_PER_MOVE_MS} ms a move and a bank of "
            f"{MAX_BANK_MS} ms, not {control.per_move_ms} and {control.bank_ms}"
        )
    if control.per_move_ms <= 0 or control.bank_ms < 0:
        raise InvalidArgument(
            f"a time control needs per_move_ms > 0 and bank_ms >= 0, not {control.per_move_ms} "
            f"and {control.bank_ms}"
        )
    if control.policy not in engine.TIMEOUT_POLICIES:
        raise InvalidArgument(
            f"the timeout policy is one of {', '.join(engine.TIMEOUT_POLICIES)}, not {control.policy!r}"
        )
