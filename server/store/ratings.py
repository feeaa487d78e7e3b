"""The lasting ratings' tables (migration 0009): which games are rated, each account's rating
per game type, and what every rated game did to it.

The arithmetic is not here (``boneyard.server.competition.ratings`` does it); this module reads and writes
in the ways that keep the numbers right with several processes on one PostgreSQL database:
``apply`` locks the game's accounts (``FOR NO KEY UPDATE``, in id order so two games cannot
deadlock) before it reads their ratings, so two games sharing an account are rated one after
the other, and the second inserts its ``rating_changes`` rows (whose ``id`` is the order a
rebuild replays) after the first committed. A game already rated is found after the locks and
left alone; the unique ``(game_id, account_id)`` is the last word.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, delete, func, insert, select, text, update

from boneyard.server.store.db import is_postgresql
from boneyard.server.store.models import (
    AccountRow,
    GameRow,
    HandSeedRow,
    RatedGameRow,
    RatingChangeRow,
    RatingRow,
    SeatAccountRow,
    table_of,
)
from boneyard.server.store.repository import EventStore
from boneyard.server.store.unit_of_work import Transaction

__all__ = ["Rate", "Rated", "RatingHistory", "RatingStore", "StoredRating", "Tell"]

_RATINGS = table_of(RatingRow)
_RATINGS_OF = select(_RATINGS.c.account_id, _RATINGS.c.mu, _RATINGS.c.sigma).where(
    _RATINGS.c.game_type == bindparam("game_type"),
    _RATINGS.c.account_id.in_(bindparam("accounts", expanding=True)),
)
_INSERT_RATING = insert(_RATINGS).values(
    account_id=bindparam("a_id"),
    game_type=bindparam("g_type"),
    mu=bindparam("r_mu"),
    sigma=bindparam("r_sigma"),
    ordinal=bindparam("r_ordinal"),
    games=1,
    updated_at=bindparam("r_updated_at"),
)
_UPDATE_RATING = (
    update(_RATINGS)
    .where(_RATINGS.c.account_id == bindparam("a_id"), _RATINGS.c.game_type == bindparam("g_type"))
    .values(
        mu=bindparam("r_mu"),
        sigma=bindparam("r_sigma"),
        ordinal=bindparam("r_ordinal"),
        games=_RATINGS.c.games + 1,
        updated_at=bindparam("r_updated_at"),
    )
)
_INSERT_CHANGE = insert(table_of(RatingChangeRow))
_RATED_GAMES = table_of(RatedGameRow)
_SEEDS = table_of(HandSeedRow)
_GAMES = table_of(GameRow)
_PENDING = (
    select(_RATED_GAMES.c.game_id, _RATED_GAMES.c.game_type)
    .join(_GAMES, _GAMES.c.id == _RATED_GAMES.c.game_id)
    .where(
        _RATED_GAMES.c.rated_at.is_(None),
        _GAMES.c.status == "finished",
        ~select(_SEEDS.c.game_id)
        .where(
            _SEEDS.c.game_id == _RATED_GAMES.c.game_id,
            _SEEDS.c.revealed.is_(False),
        )
        .exists(),
    )
    .order_by(_GAMES.c.updated_at, _GAMES.c.id)
)
"""The rated games over and not rated yet whose deals are public, oldest first (built once:
the rater asks at every game's end)."""
_MARK_RATED = (
    update(_RATED_GAMES)
    .where(_RATED_GAMES.c.game_id == bindparam("g_id"))
    .values(rated_at=bindparam("rated_at"))
)

Mu = float
Sigma = float


@dataclass(frozen=True, slots=True)
class StoredRating:
    account_id: str
    name: str
    game_type: str
    mu: float
    sigma: float
    ordinal: float
    games: int


@dataclass(frozen=True, slots=True)
class RatingHistory:
    """What one rated game did to one account's rating."""

    game_id: str
    game_type: str
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    at: datetime


@dataclass(frozen=True, slots=True)
class Rated:
    """One account's rating before and after a game."""

    before: tuple[Mu, Sigma]
    """The rating the game started from (the model's prior for a first game)."""
    after: tuple[Mu, Sigma]
    ordinal: float
    """Of ``after``."""


Rate = Callable[[dict[str, tuple[Mu, Sigma] | None]], dict[str, Rated]]
"""Given each account's rating (``None``: it has none yet), what the game makes of each."""

Tell = Callable[[Transaction, dict[str, Rated]], None]
"""Written with a game's ratings, in their transaction: what each account's rating became."""


class RatingStore:
    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._postgresql = is_postgresql(store.engine.url)

    # --- rating ------------------------------------------------------------------------

    def pending(self) -> list[tuple[str, str]]:
        """The rated games that finished and are not rated yet, oldest first, each with its
        game type; a game whose deal is still secret (a tournament deal played at other
        tables) waits for it."""
        with self._store.reading_rows() as conn:
            return [(game_id, game_type) for game_id, game_type in conn.execute(_PENDING)]

    def seat_accounts(self, game_id: str) -> dict[int, str]:
        """Seat -> account id of the seats held by accounts."""
        with self._store.reading() as session:
            rows = session.execute(
                select(SeatAccountRow.seat, SeatAccountRow.account_id).where(
                    SeatAccountRow.game_id == game_id
                )
            )
            return {seat: account for seat, account in rows}

    def apply(
        self,
        game_id: str,
        game_type: str,
        rate: Rate,
        tell: Tell | None = None,
        seats: Mapping[int, str] | None = None,
    ) -> bool:
        """Rate one game: lock its accounts, and unless it was rated meanwhile, write what
        ``rate`` makes of their ratings (and ``tell`` what else goes with it, in the same
        transaction: the accounts' events). Whether this call rated it. ``seats``: the
        game's ``seat_accounts`` if the caller read them already."""
        if seats is None:
            seats = self.seat_accounts(game_id)
        accounts = sorted(seats.values())
        now = self._store.now()
        with self._store.writing() as session:
            session.execute(
                select(AccountRow.id)
                .where(AccountRow.id.in_(accounts))
                .order_by(AccountRow.id)
                .with_for_update(key_share=True)
            ).all()
            mark = session.execute(
                select(RatedGameRow.rated_at).where(RatedGameRow.game_id == game_id)
            ).one_or_none()
            if mark is None or mark.rated_at is not None:
                return False
            rated = self._rate(session, game_id, game_type, accounts, rate, now, now)
            if tell is not None:
                tell(session, rated)
            return True

    def _rate(
        self,
        session: Transaction,
        game_id: str,
        game_type: str,
        accounts: Sequence[str],
        rate: Rate,
        rated_at: datetime,
        now: datetime,
    ) -> dict[str, Rated]:
        # An account holding a partnership's seats (a match's entrant) is rated once.
        accounts = sorted(set(accounts))
        # Core statements built once (every finished game is rated here), not ORM objects.
        conn = session.connection()
        rows = {
            row.account_id: row
            for row in conn.execute(_RATINGS_OF, {"game_type": game_type, "accounts": accounts})
        }
        before = {a: (rows[a].mu, rows[a].sigma) if a in rows else None for a in accounts}
        after = rate(before)
        changes = []
        for account in accounts:
            rated = after[account]
            mu, sigma = rated.after
            values = {
                "a_id": account,
                "g_type": game_type,
                "r_mu": mu,
                "r_sigma": sigma,
                "r_ordinal": rated.ordinal,
                "r_updated_at": now,
            }
            if account in rows:
                conn.execute(_UPDATE_RATING, values)
            else:
                conn.execute(_INSERT_RATING, values)
            start = rated.before
            changes.append(
                {
                    "game_id": game_id,
                    "account_id": account,
                    "game_type": game_type,
                    "mu_before": start[0],
                    "sigma_before": start[1],
                    "mu_after": mu,
                    "sigma_after": sigma,
                    "at": rated_at,
                }
            )
        for change in changes:  # one row at a time: ids in the order written
            conn.execute(_INSERT_CHANGE, change)
        conn.execute(_MARK_RATED, {"g_id": game_id, "rated_at": rated_at})
        return after

    # --- rebuilding --------------------------------------------------------------------

    def rated_in_order(self) -> list[tuple[str, str, datetime | None]]:
        """Every finished rated game whose deal is public, with its type and when it was
        rated, in the order the ratings took them: those rated by the order of their first
        ``rating_changes`` row, then those not rated yet by when they finished."""
        first = (
            select(RatingChangeRow.game_id, func.min(RatingChangeRow.id).label("first"))
            .group_by(RatingChangeRow.game_id)
            .subquery()
        )
        hidden = (
            select(HandSeedRow.game_id)
            .where(HandSeedRow.game_id == RatedGameRow.game_id, HandSeedRow.revealed.is_(False))
            .exists()
        )
        with self._store.reading() as session:
            rows = list(session.execute(
                select(
                    RatedGameRow.game_id,
                    RatedGameRow.game_type,
                    RatedGameRow.rated_at,
                    first.c.first,
                    GameRow.updated_at,
                )
                .join(GameRow, GameRow.id == RatedGameRow.game_id)
                .outerjoin(first, first.c.game_id == RatedGameRow.game_id)
                .where(GameRow.status == "finished", ~hidden)
            ).all())
        rows.sort(
            key=lambda r: (r.first is None, r.first or 0, r.updated_at, r.game_id)
        )
        return [(r.game_id, r.game_type, r.rated_at if r.first is not None else None) for r in rows]

    def replace_all(
        self, games: Sequence[tuple[str, str, datetime | None, Sequence[str], Rate]]
    ) -> None:
        """Forget every rating and change, and rate ``games`` (id, type, when it was rated,
        its accounts, its arithmetic) in order, in one transaction."""
        now = self._store.now()
        with self._store.writing() as session:
            if self._postgresql:
                # Live rating waits until the rebuild is over (and the rebuild until the
                # games being rated now are).
                session.execute(text("LOCK TABLE ratings, rating_changes IN EXCLUSIVE MODE"))
            session.execute(delete(RatingChangeRow))
            session.execute(delete(RatingRow))
            session.execute(update(RatedGameRow).values(rated_at=None))
            for game_id, game_type, rated_at, accounts, rate in games:
                self._rate(
                    session, game_id, game_type, sorted(accounts), rate, rated_at or now, now
                )

    # --- reading -----------------------------------------------------------------------

    def ratings_of(self, account_id: str) -> list[StoredRating]:
        with self._store.reading() as session:
            rows = session.execute(
                select(RatingRow, AccountRow.name)
                .join(AccountRow, AccountRow.id == RatingRow.account_id)
                .where(RatingRow.account_id == account_id)
                .order_by(RatingRow.game_type)
            ).all()
        return [_stored(row, name) for row, name in rows]

    def history(self, account_id: str, game_type: str, limit: int) -> list[RatingHistory]:
        """The account's last ``limit`` rated games of a type, newest first."""
        with self._store.reading() as session:
            rows = session.scalars(
                select(RatingChangeRow)
                .where(
                    RatingChangeRow.account_id == account_id,
                    RatingChangeRow.game_type == game_type,
                )
                .order_by(RatingChangeRow.id.desc())
                .limit(limit)
            ).all()
        return [
            RatingHistory(
                r.game_id, r.game_type, r.mu_before, r.sigma_before, r.mu_after, r.sigma_after, r.at
            )
            for r in rows
        ]

    def leaderboard(
        self, game_type: str, limit: int, after: tuple[float, str] | None
    ) -> list[StoredRating]:
        """One game type's ratings, best ordinal first (ties by account id), after the
        ``(ordinal, account_id)`` a previous page ended with."""
        query = (
            select(RatingRow, AccountRow.name)
            .join(AccountRow, AccountRow.id == RatingRow.account_id)
            .where(RatingRow.game_type == game_type)
            .order_by(RatingRow.ordinal.desc(), RatingRow.account_id)
            .limit(limit)
        )
        if after is not None:
            ordinal, account_id = after
            query = query.where(
                (RatingRow.ordinal < ordinal)
                | ((RatingRow.ordinal == ordinal) & (RatingRow.account_id > account_id))
            )
        with self._store.reading() as session:
            rows = session.execute(query).all()
        return [_stored(row, name) for row, name in rows]

    def all_ratings(self) -> list[StoredRating]:
        """Every rating (for comparing a rebuild with what it replaced)."""
        with self._store.reading() as session:
            rows = session.execute(
                select(RatingRow, AccountRow.name)
                .join(AccountRow, AccountRow.id == RatingRow.account_id)
                .order_by(RatingRow.game_type, RatingRow.account_id)
            ).all()
        return [_stored(row, name) for row, name in rows]

    def all_changes(self) -> list[tuple[str, str, float, float, float, float]]:
        """Every change, in order: (game, account, mu/sigma before, mu/sigma after)."""
        with self._store.reading() as session:
            rows = session.scalars(select(RatingChangeRow).order_by(RatingChangeRow.id)).all()
        return [
            (r.game_id, r.account_id, r.mu_before, r.sigma_before, r.mu_after, r.sigma_after)
            for r in rows
        ]


def _stored(row: RatingRow, name: str) -> StoredRating:
    return StoredRating(
        row.account_id, name, row.game_type, row.mu, row.sigma, row.ordinal, row.games
    )
