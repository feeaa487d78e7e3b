"""The application layer's cold paths: making games, accounts and their keys, embargoes.

The hot paths (seeing, acting, watching) are the games in memory (``boneyard.server.games.host``);
this module makes the games they load. Nothing here knows gRPC, and everything may be called
from a worker thread. The server deals: a new game's first hand is dealt in its first
append, from a seed drawn with ``secrets`` (or fixed by a deal secret); the seed's SHA-256
commitment is recorded when the hand is dealt and the seed stays secret until the game ends.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from boneyard import engine
from boneyard.api import codec
from boneyard.bots import strategy_names
from boneyard.engine import Event, GameState
from boneyard.records.hashing import chain_head, hash_token
from boneyard.server.competition import account_events
from boneyard.server.competition.accounts import is_api_key, key_hash
from boneyard.server.competition.key_cache import KeyCache, bad_key, missing_key
from boneyard.server.competition.ratings import game_type_of
from boneyard.server.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from boneyard.server.games.dealing import deal_hands
from boneyard.server.games.live import LiveGame, account_seats, turn_of
from boneyard.server.games.seat_tokens import SeatTokens
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
from boneyard.server.store.game_setup import HouseSeat, MadeFor
from boneyard.server.store.keys import KeyStore
from boneyard.server.store.models import CREATE_REQUEST
from boneyard.server.store.repository import EventStore
from boneyard.server.store.unit_of_work import Transaction

__all__ = ["GameApp", "check_house_bots", "check_time_control", "new_seat_token", "rules_for"]

log = logging.getLogger(__name__)

_CACHE_SIZE = 1024


_V = TypeVar("_V")


class _Memo(OrderedDict[str, _V]):
    """What the app remembers of a game (its deal secret, whether it has a clock ...), for the
    games used last: a long-running server must not keep something for every game it saw."""

    def __setitem__(self, game_id: str, value: _V) -> None:
        super().__setitem__(game_id, value)
        self.move_to_end(game_id)
        while len(self) > _CACHE_SIZE * 4:
            self.popitem(last=False)


class GameApp:
    def __init__(
        self,
        store: EventStore,
        seeds: Callable[[], bytes] | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._store = store
        self._competition = CompetitionStore(store)
        self.draw_seed = seeds or (lambda: secrets.token_bytes(32))
        self._now = now or (lambda: datetime.now(UTC))
        self._started_at = self._now()
        """Clocks do not count the time the server was down: a turn begun before this
        process started is timed from its start."""
        self.keys = KeyCache(self._competition, store)
        """The accounts of API keys, for calls on the event loop (``await keys.account(key)``)."""
        self.seat_tokens = SeatTokens(KeyStore(store))
        """The tokens of seats taken with a request id (the same for every retry)."""
        self._secrets: _Memo[bytes | None] = _Memo()
        self._public: _Memo[bool] = _Memo()
        """Games spectators may watch (checked once: an embargo is only ever lifted)."""
        self.on_created: Callable[[LiveGame], None] | None = None
        """Told of each new game (from the creating thread): its copy for memory (with the
        accounts it reserved seats for)."""

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
        house_bots: Sequence[tuple[int, str]] = (),
        deal_secret: bytes | None = None,
        also: Callable[[Transaction, str], None] | None = None,
        request_id: str = "",
        rated: bool = False,
        partnerships: bool = False,
        tournament_id: str | None = None,
        challenge_id: str | None = None,
        match_id: str | None = None,
    ) -> tuple[str, bool]:
        """Make a game and deal its first hand; its id, and whether it is new (``False``: the
        game an earlier attempt with this ``request_id`` made). ``reservations`` keep seats
        for accounts; ``house_bots`` (seat, strategy) are seats the server takes for its own
        bots, in the same transaction as the game; ``deal_secret`` fixes the deals
        (``deal_seed``); ``also`` writes more in the same transaction (a seek's or
        tournament's bookkeeping); ``rated`` marks it rated (``boneyard.server.competition.ratings``), in
        that transaction too: only a table whose every seat is reserved for an account.
        ``partnerships``: an account may hold every seat of one team (a match's entrant is its
        partnership); otherwise an account holds one seat of a game. ``tournament_id``,
        ``challenge_id``, ``match_id``: what the game is made for (linked to it by ``also``),
        named in what the accounts seated are told (a tournament or a challenge) and known to
        the game's copy in memory, whose end wakes only what it concerns."""
        if request_id:
            made = self._store.game_of_request(CREATE_REQUEST + request_id)
            if made is not None:
                return made, False
        rules = rules_for(preset, options)
        if time_control is not None:
            check_time_control(time_control)
        seats = [seat for seat, _ in reservations]
        if any(not 0 <= seat < rules.players for seat in seats):
            raise InvalidArgument(f"a {rules.name} table has seats 0..{rules.players - 1}, not {seats}")
        if len(set(seats)) != len(seats):
            raise InvalidArgument(f"a seat is reserved twice: {sorted(seats)}")
        check_house_bots(rules, house_bots, seats)
        _check_holders(rules, reservations, partnerships)
        if rated and len(reservations) != rules.players:
            raise InvalidArgument(
                f"only accounts have ratings: a rated {rules.name} game reserves all "
                f"{rules.players} seats for accounts, not {len(reservations)}"
            )
        game_id = str(uuid.uuid4())
        events: list[Event] = list(engine.start(rules))
        state = engine.replay(events)
        dealt, seeds = deal_hands(state, self.draw_seed, deal_secret)
        events += dealt
        for event in events[1:]:
            state = engine.evolve(state, event)
        full = len(reservations) + len(house_bots) == rules.players
        clock = None
        # One instant for the game's creation and its clock's start: a turn never starts
        # before the game it belongs to exists.
        created = self._now()
        if time_control is not None:
            turn = turn_of(state) if full else None
            clock = (
                time_control,
                ClockState(
                    (time_control.bank_ms,) * rules.players,
                    turn,
                    created if turn is not None else None,
                ),
            )
        reserved = [(seat, account.id) for seat, account in reservations]
        setup = GameSetup(
            reservations=[
                Reservation(seat, account.id, account.name, hash_token(secrets.token_urlsafe(32)))
                for seat, account in reservations
            ],
            house_bots=[
                HouseSeat(seat, name, f"{name} bot {seat}", hash_token(secrets.token_urlsafe(32)))
                for seat, name in house_bots
            ],
            clock=clock,
            deal_secret=deal_secret,
            rated_as=game_type_of(rules) if rated else None,
            also=also,
            told=account_events.game_started(game_id, preset, reserved, tournament_id, challenge_id),
        )
        encoded = [codec.encode_event(e) for e in events]
        record = self._store.create_game(
            game_id,
            preset,
            rules.options(),
            rules.players,
            name,
            encoded,
            seeds=seeds,
            status="playing" if full else "open",
            setup=setup,
            request_id=CREATE_REQUEST + request_id if request_id else None,
            now=created,
        )
        self._secrets[game_id] = deal_secret
        if self.on_created is not None:
            # The copy in memory, made from what was just written: the first to look at the
            # game (its seated players, say) need not read it back.
            game = LiveGame(
                id=game_id,
                name=name,
                created_at=record.created_at,
                updated_at=record.updated_at,
                status=record.status,
                state=state,
                version=len(events),
                last_hash=chain_head(payload for _, payload in encoded),
                events=events,
                seats={r.seat: r.player_name for r in setup.seats},
                tokens={r.token_hash: r.seat for r in setup.seats},
                accounts=account_seats((r.account_id, r.seat) for r in setup.reservations),
                requests={},
                clock=None
                if clock is None
                else GameClock(game_id, clock[0], clock[1], len(events), len(events)),
                deal_secret=deal_secret,
                house={h.seat: h.strategy for h in setup.house_bots},
                made_for=MadeFor(tournament_id, match_id, rated),
            )
            self.on_created(game)
        return game_id, True

    def account_for(self, key: str | None) -> Account:
        """The account an API key belongs to, asked of the database now (for worker threads;
        a call on the event loop asks ``keys``, which remembers)."""
        if key is None:
            raise missing_key()
        account = self._competition.account_for_key(key_hash(key)) if is_api_key(key) else None
        if account is None:
            raise bad_key()
        return account

    # ------------------------------------------------------------ reading

    def load(self, game_id: str) -> tuple[GameState, int]:
        """A game's state and version folded from its log (for cold paths: results and
        standings; the servicers read the copy in memory)."""
        try:
            rows = self._store.load_events(game_id)
        except store_errors.GameNotFound:
            raise NotFound(f"no game {game_id}", game_id=game_id) from None
        state = engine.replay(codec.decode_event(row.payload) for row in rows)
        return state, len(rows)

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

    def embargoed_among(self, game_ids: list[str]) -> set[str]:
        """The embargoed games among ``game_ids`` (``embargoed``, for a page of them)."""
        return {game_id for game_id in game_ids if self.embargoed(game_id)}

    def check_spectators(self, game_id: str) -> None:
        """Refuse a spectator an embargoed game (watching one would show another table's
        hands)."""
        if self.embargoed(game_id):
            raise PermissionDenied(
                f"game {game_id} plays a tournament deal that is being played at other tables: "
                f"it can be watched when every playing of the deal is over",
                reason="EMBARGOED",
                game_id=game_id,
            )

    def _deal_secret(self, game_id: str) -> bytes | None:
        if game_id not in self._secrets:
            self._secrets[game_id] = self._competition.deal_secret(game_id)
        return self._secrets[game_id]


def _check_holders(
    rules: engine.Ruleset, reservations: Sequence[tuple[int, Account]], partnerships: bool
) -> None:
    """An account holds one seat of a game; with ``partnerships``, the seats of one team."""
    seats_of: dict[str, list[int]] = {}
    for seat, account in reservations:
        seats_of.setdefault(account.id, []).append(seat)
    for seats in seats_of.values():
        if len(seats) == 1:
            continue
        if not partnerships:
            raise InvalidArgument("an account may hold only one seat of a game")
        if len({rules.team_of[seat] for seat in seats}) != 1:
            raise InvalidArgument(
                f"an account may hold several seats only of one team, not seats {sorted(seats)}"
            )


def new_seat_token() -> str:
    """A new seat token; never one that looks like an account's API key (``byk_...``)."""
    while True:
        token = secrets.token_urlsafe(32)
        if not is_api_key(token):
            return token


MAX_PER_MOVE_MS = 24 * 3600 * 1000
MAX_BANK_MS = 7 * 24 * 3600 * 1000
"""A day a move and a week's bank: more is no clock (and the columns are 32-bit)."""
MIN_PER_MOVE_MS = 100
"""The shortest time a move: a tenth of a second, enough for a bot on the same continent to
answer, while a clock the server runs out for nobody plays at most ten actions a second."""


def rules_for(preset: str, options: Mapping[str, Any]) -> engine.Ruleset:
    """The ruleset of a preset with option overrides; ``InvalidArgument`` saying why not.
    Every game this server plays ends: without a ``deal_limit`` it gets ``engine.DEAL_LIMIT``,
    and ``deal_limit=0`` is refused."""
    if "deal_limit" not in options:
        options = {**options, "deal_limit": engine.DEAL_LIMIT}
    try:
        rules = engine.ruleset(preset, options)
    except engine.RulesetError as e:
        raise InvalidArgument(str(e), reason=e.reason) from None
    if not rules.deal_limit:
        raise InvalidArgument(
            f"deal_limit=0 would let the game go on for ever: give a number of deals from 1 to "
            f"{engine.MAX_HAND_LIMIT} (or none for {engine.DEAL_LIMIT})",
            reason=engine.RulesetError.reason,
        )
    return rules


def check_house_bots(
    rules: engine.Ruleset, house_bots: Sequence[tuple[int, str]], reserved: Sequence[int] = ()
) -> None:
    """Refuse house bots that cannot be seated: an unknown strategy, a seat out of range, a
    seat named twice (or also reserved for an account), or every seat of the table.

    A table of house bots alone is refused on purpose: nobody would be there to see it, and
    every game created would cost the server's workers a whole game of decisions (the quota
    counts games, not their work). Bots playing bots run in clients (``boneyard bot --new``)."""
    known = strategy_names()
    for seat, name in house_bots:
        if name not in known:
            raise InvalidArgument(
                f"house bot of seat {seat}: no strategy {name[:40]!r} (choose one of "
                f"{', '.join(known)})"
            )
        if not 0 <= seat < rules.players:
            raise InvalidArgument(
                f"house bot of seat {seat}: a {rules.name} table has seats 0..{rules.players - 1}"
            )
    seats = [seat for seat, _ in house_bots]
    if len(set(seats)) != len(seats):
        raise InvalidArgument(f"a seat is given two house bots: {sorted(seats)}")
    both = sorted(set(seats) & set(reserved))
    if both:
        raise InvalidArgument(f"seat {both[0]} is both reserved for an account and a house bot's")
    if len(seats) >= rules.players:
        raise InvalidArgument(
            f"house bots may take at most {rules.players - 1} of the {rules.players} seats: "
            f"leave a seat for a person"
        )


def check_time_control(control: TimeControl) -> None:
    """Refuse a time control that makes no sense."""
    if control.per_move_ms > MAX_PER_MOVE_MS or control.bank_ms > MAX_BANK_MS:
        raise InvalidArgument(
            f"a time control allows at most {MAX_PER_MOVE_MS} ms a move and a bank of "
            f"{MAX_BANK_MS} ms, not {control.per_move_ms} and {control.bank_ms}"
        )
    if control.per_move_ms < MIN_PER_MOVE_MS or control.bank_ms < 0:
        raise InvalidArgument(
            f"a time control needs per_move_ms of at least {MIN_PER_MOVE_MS} and bank_ms >= 0, "
            f"not {control.per_move_ms} and {control.bank_ms}"
        )
    if control.policy not in engine.TIMEOUT_POLICIES:
        raise InvalidArgument(
            f"the timeout policy is one of {', '.join(engine.TIMEOUT_POLICIES)}, not {control.policy!r}"
        )
