"""Lasting ratings: every rated game moves its accounts' OpenSkill ratings, per game type.

**Which games.** A game is rated when the transaction that made it marked it so
(``rated_games``): the tables formed by seeking, every tournament game, and a challenge made
rated. Only accounts have ratings, so only tables whose every seat is an account's are marked:
a house bot or a seat taken by name without an account makes a game unrated (the seeks and
tournaments never have either). A game's **type** is its ruleset's family (``texas42`` or
``moon``); every variant of a family shares its pool.

**Which results.** A game rated is one that *finished* (it has a winner): a team that resigns,
or forfeits on time, has lost, and the game is rated like any other. An *abandoned* game (the
sweeper ended it: nobody played on) has no winner and is not rated: nobody can say who was the
better side, and rating it would let a losing player drag a game out until it is abandoned to
leave everyone's rating as it was anyway. A tournament game whose deal is still being played
at other tables is rated when its deal is published (its result is their secret until then).

**The arithmetic** is the tournament standings' (``boneyard.server.competition.standings``): one
``PlackettLuce`` model with OpenSkill's defaults, the teams ranked by ``finishing_order`` (the
winner first, the others by score), each team the list of its members' ratings, so both
Texas 42 partners are credited (or debited) together, and each Moon player is a team alone.
A match's entrant holds both seats of its partnership: its team is two copies of its
rating, and the account is rated once, as one member of it. The ordinal (``mu - 3 * sigma``)
orders the leaderboard. An account is **provisional** until
``PROVISIONAL_GAMES`` rated games of a type: its sigma is still wide, and the leaderboard says
so.

**When.** Right after the finishing commit: the commit wakes the ``Rater`` (a background task
of every server process), which rates each finished, unrated game in its own transaction
(``RatingStore.apply``: locked, idempotent per game, so several processes and restarts never
rate a game twice). A process that stops between the two leaves the game unrated until a
``Rater`` next wakes (every process wakes its own at start), which then rates it.

**Rebuilt from the archive.** ``rebuild`` forgets every rating and replays every finished rated
game's record (its events, replayed by the engine, and its seats' accounts) in the order the
games were rated, with the same code on the same floats: the numbers come out equal to the
last bit (``rebuild`` says which differ, if any do).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from openskill.models import PlackettLuce

from boneyard import engine
from boneyard.api import codec
from boneyard.server.competition import account_events
from boneyard.server.competition.standings import GameResult, finishing_order
from boneyard.server.games.live import LiveGame
from boneyard.server.store.account_events import append_account_events
from boneyard.server.store.ratings import (
    Mu,
    Rate,
    Rated,
    RatingStore,
    Sigma,
    StoredRating,
)
from boneyard.server.store.repository import EventStore
from boneyard.server.store.unit_of_work import Transaction

__all__ = [
    "PROVISIONAL_GAMES",
    "GameOutcome",
    "Rater",
    "Rebuilt",
    "game_type_of",
    "outcome_of",
    "rate_outcome",
    "rebuild",
]

log = logging.getLogger(__name__)

MAX_FINALS = 10_000
"""Final states of games ended here kept for their rating at most (those another process
rates are never taken: the oldest go first)."""

PROVISIONAL_GAMES = 10
"""An account's rating in a game type is provisional until this many rated games of it."""

_MODEL = PlackettLuce()
"""The standings' model: OpenSkill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300)."""


def game_type_of(rules: engine.Ruleset) -> str:
    """The rating pool of a ruleset: its family."""
    return rules.family


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """A finished game as the ratings see it."""

    teams: tuple[tuple[str, ...], ...]
    """The account ids of each team's seats, by team."""
    ranks: tuple[float, ...]
    """Each team's place (``finishing_order``): 1 the winner."""


def outcome_of(state: engine.GameState, accounts: Mapping[int, str]) -> GameOutcome | None:
    """The outcome of a game from its final state and its seats' accounts; ``None`` if it
    has none to rate (not over, no winner, or a seat without an account)."""
    if state.phase is not engine.Phase.GAME_OVER or state.winner is None:
        return None
    teams = state.rules.teams
    if any(seat not in accounts for team in teams for seat in team):
        return None
    seats = tuple(accounts[seat] for seat in range(state.rules.players))
    ranks = finishing_order(GameResult(seats, teams, state.scores, state.winner))
    return GameOutcome(
        teams=tuple(tuple(accounts[seat] for seat in team) for team in teams),
        ranks=tuple(ranks),
    )


def rate_outcome(outcome: GameOutcome) -> Rate:
    """The arithmetic of one game, for ``RatingStore``: each account's rating in, before and
    after out."""

    def rate(current: dict[str, tuple[Mu, Sigma] | None]) -> dict[str, Rated]:
        teams = [
            [
                _MODEL.rating() if (held := current[a]) is None else _MODEL.rating(*held)
                for a in team
            ]
            for team in outcome.teams
        ]
        before = [[(r.mu, r.sigma) for r in team] for team in teams]
        after = _MODEL.rate(teams, ranks=list(outcome.ranks))
        rated: dict[str, Rated] = {}
        for t, team in enumerate(outcome.teams):
            for m, account in enumerate(team):
                new = after[t][m]
                rated[account] = Rated(before[t][m], (new.mu, new.sigma), new.ordinal())
        return rated

    return rate


def is_provisional(rating: StoredRating) -> bool:
    return rating.games < PROVISIONAL_GAMES


def _outcome(
    store: EventStore,
    seats: Mapping[int, str],
    game_id: str,
    final: engine.GameState | None = None,
) -> GameOutcome | None:
    """A game's outcome from its final state (``final``, if this process saw it end) or its
    record (``seats``: its ``seat_accounts``)."""
    if final is None:
        rows = store.load_events(game_id)
        final = engine.replay(codec.decode_event(row.payload) for row in rows)
    return outcome_of(final, seats)


def rate_pending(
    store: EventStore,
    ratings: RatingStore,
    told: list[str] | None = None,
    finals: MutableMapping[str, engine.GameState] | None = None,
) -> list[str]:
    """Rate every finished rated game not rated yet (oldest first); the games rated here.
    Each game's accounts are told their change (a ``game_rated`` account event, in the
    ratings' transaction); ``told`` collects those accounts, to wake their streams.
    ``finals``: the final states of games seen ending here (taken out as they are rated),
    so that those are not read back from their logs."""
    done: list[str] = []
    for game_id, game_type in ratings.pending():
        seats = ratings.seat_accounts(game_id)
        final = finals.pop(game_id, None) if finals is not None else None
        outcome = _outcome(store, seats, game_id, final)
        if outcome is None:
            log.warning("game %s is marked rated but has no result to rate", game_id)
            continue

        def tell(
            session: Transaction,
            rated: Mapping[str, Rated],
            game_id: str = game_id,
            game_type: str = game_type,
        ) -> None:
            events = account_events.game_rated(game_id, game_type, rated)
            append_account_events(session, events, datetime.now(UTC))
            if told is not None:
                told.extend(rated)

        if ratings.apply(game_id, game_type, rate_outcome(outcome), tell, seats):
            log.info("game %s: rated (%s)", game_id, game_type)
            done.append(game_id)
    return done


@dataclass(frozen=True, slots=True)
class Rebuilt:
    games: int
    """The rated games replayed."""
    ratings: int
    """The ratings made."""
    differing: tuple[str, ...]
    """``account/game type`` of every rating that came out other than it was before."""


def rebuild(store: EventStore) -> Rebuilt:
    """Recompute every rating from the finished rated games' records, in the order they were
    rated; say what (if anything) came out different from the stored numbers."""
    ratings = RatingStore(store)
    old = {(r.account_id, r.game_type): (r.mu, r.sigma, r.games) for r in ratings.all_ratings()}
    games: list[tuple[str, str, datetime | None, Sequence[str], Rate]] = []
    for game_id, game_type, rated_at in ratings.rated_in_order():
        outcome = _outcome(store, ratings.seat_accounts(game_id), game_id)
        if outcome is None:
            continue
        accounts = [a for team in outcome.teams for a in team]
        games.append((game_id, game_type, rated_at, accounts, rate_outcome(outcome)))
    ratings.replace_all(games)
    new = {(r.account_id, r.game_type): (r.mu, r.sigma, r.games) for r in ratings.all_ratings()}
    differing = sorted(
        f"{account}/{game_type}"
        for account, game_type in old.keys() | new.keys()
        if old.get((account, game_type)) != new.get((account, game_type))
    )
    return Rebuilt(len(games), len(new), tuple(differing))


class Rater:
    """The background task that rates games as they finish (one per server process)."""

    def __init__(
        self,
        store: EventStore,
        retry_after: float = 1.0,
        on_rated: Callable[[list[str]], None] = lambda accounts: None,
    ) -> None:
        """``on_rated``: told the accounts whose ratings moved (their streams have news)."""
        self._on_rated = on_rated
        self._store = store
        self._ratings = RatingStore(store)
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retry_after = retry_after
        self._finals: OrderedDict[str, engine.GameState] = OrderedDict()
        """The final states of the rated games seen ending here and not rated yet (written on
        the event loop, taken by the rating thread: one dict operation at a time)."""

    def game_committed(self, game: LiveGame, events: tuple[engine.Event, ...]) -> None:
        """``GameHost.on_game_over``: a game that ends may be rated (``concerns``)."""
        if self.concerns(game, events):
            self._finals[game.id] = game.state
            while len(self._finals) > MAX_FINALS:
                self._finals.popitem(last=False)  # rated by another process, perhaps
            self._wake.set()

    @staticmethod
    def concerns(game: LiveGame, events: tuple[engine.Event, ...]) -> bool:
        """Whether a commit may need rating: a rated game won."""
        return bool(
            events and game.made_for.rated and any(isinstance(e, engine.GameWon) for e in events)
        )

    def wake(self) -> None:
        """On the event loop."""
        self._wake.set()

    def wake_threadsafe(self) -> None:
        """From any thread (the director, once it published a deal)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake.set)

    async def run(self) -> None:
        """Rate whatever finished, whenever a game finishes (and once at start: a game that
        finished while no process could rate it)."""
        self._loop = asyncio.get_running_loop()
        self._wake.set()
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                told: list[str] = []
                await asyncio.to_thread(
                    rate_pending, self._store, self._ratings, told, self._finals
                )
                if told:
                    self._on_rated(sorted(set(told)))
            except Exception:
                log.exception("rating the finished games failed; trying again")
                await asyncio.sleep(self._retry_after)
                self._wake.set()
