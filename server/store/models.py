"""The tables, as SQLAlchemy 2 typed declarative classes.

These classes describe the schema for queries (and for checking migrations against); the
schema itself is created only by the Alembic migrations under ``migrations/``.  When a column
changes here, a new migration must change it there: the contract tests compare the two.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Dialect,
    Double,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

__all__ = [
    "GAME_STATUSES",
    "AccountEventRow",
    "AccountRow",
    "Base",
    "ChallengeParticipantRow",
    "ChallengeRow",
    "EventRow",
    "GameClockRow",
    "GameDealRow",
    "GameRow",
    "HandSeedRow",
    "HouseBotRow",
    "MatchDealRow",
    "MatchGameRow",
    "MatchRow",
    "RatedGameRow",
    "RatingChangeRow",
    "RatingRow",
    "RequestRow",
    "SeatAccountRow",
    "SeatRow",
    "SeekRow",
    "SigningKeyRow",
    "TournamentEntrantRow",
    "TournamentGameRow",
    "TournamentRoundRow",
    "TournamentRow",
    "UTCDateTime",
    "table_of",
]

GAME_STATUSES = ("open", "playing", "finished", "abandoned")

# Deterministic constraint names, so migrations can refer to them on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime on every backend.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so the value is stored as
    naive UTC (fixed-width text, which also sorts correctly) and made aware again on the way
    out.  Naive datetimes are refused rather than guessed at.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: the store keeps UTC-aware times")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        if dialect.name == "sqlite":
            return _sqlite_text
        return super().bind_processor(dialect)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _sqlite_text(value: datetime | None) -> str | None:
    """What ``UTCDateTime`` writes on SQLite, in one step: ``process_bind_param`` and then
    SQLAlchemy's SQLite ``DATETIME`` text (``2026-12-05 14:00:00.000000``, naive UTC), which
    took three Python calls and a format of seven fields for every time the writer's thread
    wrote (each action's game row). The same text for every value (tested against the two).
    The text up to the second is made once a second (``_second``): the times a batch writes
    fall in the same second, and only their microseconds are formatted."""
    if value is None:
        return None
    zone = value.tzinfo
    if zone is not UTC:
        if zone is None:
            raise ValueError(f"naive datetime {value!r}: the store keeps UTC-aware times")
        value = value.astimezone(UTC)
    fields = (value.year, value.month, value.day, value.hour, value.minute, value.second)
    second = _second
    if second[0] != fields:
        second = _new_second(fields)
    return second[1] + _MICROSECONDS % value.microsecond


def _new_second(fields: tuple[int, ...]) -> tuple[tuple[int, ...], str]:
    global _second
    _second = (fields, _SECOND % fields)
    return _second


_SECOND = "%04d-%02d-%02d %02d:%02d:%02d."
_MICROSECONDS = "%06d"
_second: tuple[tuple[int, ...], str] = ((), "")
"""The fields of the second last written, and its text (replaced whole: any thread may
write a time)."""


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        bytes: LargeBinary(),
        dict[str, Any]: JSON(),
    }


def table_of(row: type[Base]) -> Table:
    """The ``Table`` a row class maps, for Core statements (``insert``, ``update``).
    SQLAlchemy types ``__table__`` as any ``FromClause``, since a class may map a join or a
    select; each of ours maps one table."""
    table = row.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{row.__name__} maps {table!r}, not a table")
    return table


class GameRow(Base):
    """One game: its settings and a summary of its log (``version`` = number of events)."""

    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    preset: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]]
    name: Mapped[str] = mapped_column(String(200))
    players: Mapped[int] = mapped_column(Integer)
    seats_taken: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("status IN ('open', 'playing', 'finished', 'abandoned')", name="status"),
        CheckConstraint("version >= 0", name="version"),
        CheckConstraint("players >= 1", name="players"),
        CheckConstraint("seats_taken >= 0 AND seats_taken <= players", name="seats_taken"),
        # Keyset pagination of list_games, with and without a status filter.
        Index(None, "created_at", "id"),
        Index(None, "status", "created_at", "id"),
    )


class EventRow(Base):
    """One event of a game's append-only log.

    The primary key ``(game_id, seq)`` is the optimistic concurrency check: of two writers
    appending at the same version, only one can insert ``seq``.  ``hash`` is
    ``sha256(hash of event seq-1 || payload)``, starting from 32 zero bytes.
    """

    __tablename__ = "events"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    payload: Mapped[bytes]
    hash: Mapped[bytes]
    created_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("seq >= 1", name="seq"),
        CheckConstraint("length(hash) = 32", name="hash_size"),
    )


class SeatRow(Base):
    """Who sits where.  Only the sha256 of a seat's token is stored, never the token."""

    __tablename__ = "seats"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]

    __table_args__ = (
        # A token identifies exactly one seat of a game (and is how seat_for_token looks it up).
        UniqueConstraint("game_id", "token_hash"),
        CheckConstraint("seat >= 0", name="seat"),
        CheckConstraint("length(token_hash) = 64", name="token_hash_size"),
    )


CREATE_REQUEST = "\x1ecreate:"
"""The prefix of a CreateGame's request id in the requests table (a control character, so no
client's own id can collide with it)."""

CREATE_REQUESTS = text(
    f"request_id >= '{CREATE_REQUEST}' AND request_id < '{CREATE_REQUEST[:-1]};'"
)
"""The requests that are CreateGame's: the condition of their index, which a look-up names
word for word (SQLite uses a partial index only for a query that repeats its condition)."""


class RequestRow(Base):
    """An applied client request, so a retry is answered, not applied again: the seat that
    sent it and the version it made (an action's answer is made again from the log at that
    version: ``GameHost.submit``; before migration 0014 a copy of it was kept here)."""

    __tablename__ = "requests"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    request_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer)
    result_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime]

    # CreateGame's request ids are looked up before there is a game to look in; only theirs
    # are indexed by themselves (an action's would be a random page more in every commit).
    __table_args__ = (
        Index(
            "ix_requests_create_request_id",
            "request_id",
            sqlite_where=CREATE_REQUESTS,
            postgresql_where=CREATE_REQUESTS,
        ),
    )


class HandSeedRow(Base):
    """The shuffle seed of a hand: its commitment is public, the seed secret until revealed."""

    __tablename__ = "hand_seeds"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    hand_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    commitment: Mapped[bytes]
    seed: Mapped[bytes]
    revealed: Mapped[bool] = mapped_column(server_default=false())
    created_at: Mapped[datetime]

    __table_args__ = (CheckConstraint("length(commitment) = 32", name="commitment_size"),)


# --- competitions (migration 0002) ------------------------------------------------------


class AccountRow(Base):
    """A registered bot or player. Only the sha256 of its API key is stored; a revoked key
    keeps its hash (``key_revoked_at``), a rotated one is replaced."""

    __tablename__ = "accounts"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    key_revoked_at: Mapped[datetime | None]
    """Set while the key is revoked (migration 0007): it then authenticates nothing."""
    key_rotated_at: Mapped[datetime | None]
    """When the account last got a new key (``key_hash`` is the new key's)."""
    event_seq: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    """The number of the account's last event (migration 0008; ``AccountEventRow``)."""

    __table_args__ = (
        CheckConstraint("kind IN ('bot', 'player')", name="kind"),
        CheckConstraint("length(key_hash) = 64", name="key_hash_size"),
    )


class SeatAccountRow(Base):
    """A seat reserved for an account: the account's key acts for it. An account holds one
    seat of a game, or (a match's entrant, migration 0011) its partnership's seats, the key
    then naming the seat it acts for."""

    __tablename__ = "seat_accounts"

    game_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)

    __table_args__ = (ForeignKeyConstraint(["game_id", "seat"], ["seats.game_id", "seats.seat"]),)


class HouseBotRow(Base):
    """A seat the server plays itself with one of its bots (migration 0005): the seat's row
    holds a token nobody is told, and the house bots act for it with ``strategy``."""

    __tablename__ = "house_bots"

    game_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    strategy: Mapped[str] = mapped_column(String(32))

    __table_args__ = (ForeignKeyConstraint(["game_id", "seat"], ["seats.game_id", "seats.seat"]),)


class GameClockRow(Base):
    """A game's time control and where its clock stands: ``banks[seat]`` (ms) is what each
    seat has left; the seat to act (``turn_seat``) has had the turn since ``turn_started_at``
    (``None`` while the clock is not running: a seat is free, or nobody is to act)."""

    __tablename__ = "game_clocks"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    per_move_ms: Mapped[int] = mapped_column(Integer)
    bank_ms: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(String(16))
    banks: Mapped[list[int]] = mapped_column(JSON)
    turn_seat: Mapped[int | None] = mapped_column(Integer)
    turn_version: Mapped[int] = mapped_column(Integer)
    turn_started_at: Mapped[datetime | None]

    __table_args__ = (
        CheckConstraint("policy IN ('auto_play', 'forfeit')", name="policy"),
        CheckConstraint("per_move_ms > 0 AND bank_ms >= 0", name="times"),
    )


class GameDealRow(Base):
    """A game whose deals are not drawn at random: hand ``n`` is shuffled with
    ``sha256(secret || n)`` (a tournament's duplicate deals). The secret is never shown; the
    seeds are revealed like any other when the game ends."""

    __tablename__ = "game_deals"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    secret: Mapped[bytes]


class SeekRow(Base):
    """An account asking for a game. ``table_key`` names the kind of table (rules and clock):
    seekers with the same key meet, if their streams are still there (``seen_at`` recent)."""

    __tablename__ = "seeks"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    table_key: Mapped[str] = mapped_column(String(2000))
    preset: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]]
    time_control: Mapped[dict[str, Any]]
    players: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    game_id: Mapped[str | None] = mapped_column(String(36))
    seat: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime]
    seen_at: Mapped[datetime]
    """When the seeker's stream last showed it is still there (refreshed while it waits)."""

    __table_args__ = (
        CheckConstraint("status IN ('waiting', 'seated', 'cancelled')", name="status"),
        Index(None, "status", "table_key", "created_at"),
    )


class TournamentRow(Base):
    __tablename__ = "tournaments"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    organiser_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    preset: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]]
    deals: Mapped[int] = mapped_column(Integer)
    duplicate: Mapped[bool]
    format: Mapped[str] = mapped_column(String(32))
    time_control: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16))
    secret: Mapped[bytes]
    """Seeds every deal (``sha256(secret || deal)`` is each game's deal secret); never shown."""
    created_at: Mapped[datetime]
    max_games_per_entrant: Mapped[int] = mapped_column(Integer, server_default=text("1"))
    """The most unfinished games of the tournament an entrant may be in at once (migration
    0010; the tournaments made before it play one deal at a time: 1)."""
    rounds: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    """The rounds of a Swiss tournament (migration 0012); 0: a round robin."""

    __table_args__ = (
        CheckConstraint(
            "status IN ('created', 'running', 'finished', 'cancelled')", name="status"
        ),
        CheckConstraint("deals >= 1", name="deals"),
    )


class TournamentEntrantRow(Base):
    __tablename__ = "tournament_entrants"

    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))

    __table_args__ = (UniqueConstraint("tournament_id", "account_id"),)


class TournamentGameRow(Base):
    """One game of a tournament's schedule: ``seating[seat]`` is the entrant's account id. The
    game is made (``game_id`` set) in the same transaction as the game itself."""

    __tablename__ = "tournament_games"

    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    deal: Mapped[int] = mapped_column(Integer)
    rotation: Mapped[int] = mapped_column(Integer)
    seating: Mapped[list[str]] = mapped_column(JSON)
    game_id: Mapped[str | None] = mapped_column(ForeignKey("games.id"), unique=True)
    round: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    """The Swiss round, from 1 (migration 0012); 0: a round robin's game."""


class TournamentRoundRow(Base):
    """A Swiss round paired, with its bye (``None``: nobody sits out), written in the
    transaction that writes the round's games: the key makes pairing a round twice
    impossible (migration 0012)."""

    __tablename__ = "tournament_rounds"

    tournament_id: Mapped[str] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    round: Mapped[int] = mapped_column(Integer, primary_key=True)
    bye_id: Mapped[str | None] = mapped_column(ForeignKey("accounts.id"))
    paired_at: Mapped[datetime]

    __table_args__ = (CheckConstraint("round >= 1", name="round"),)


# --- signed records (migration 0005) ----------------------------------------------------


class SigningKeyRow(Base):
    """The server's key pair for one purpose ("records": signing game records), made by the
    first process to need it. The primary key is what makes that race-safe: several processes
    starting at once each insert their own candidate if absent, and all read back the one
    that is there."""

    __tablename__ = "signing_keys"

    purpose: Mapped[str] = mapped_column(String(32), primary_key=True)
    algorithm: Mapped[str] = mapped_column(String(16))
    private_key: Mapped[bytes]
    public_key: Mapped[bytes]
    created_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("algorithm IN ('ed25519')", name="algorithm"),
        CheckConstraint(
            "length(private_key) = 32 AND length(public_key) = 32", name="key_sizes"
        ),
    )


# --- challenges and account events (migration 0008) ------------------------------------


class ChallengeRow(Base):
    """An account's challenge to named accounts. ``status`` leaves ``open`` once, by a
    conditional update: ``accepted`` (with ``game_id``), ``declined`` (``declined_by``) or
    ``expired`` (at ``expires_at``)."""

    __tablename__ = "challenges"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    challenger_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    preset: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]]
    time_control: Mapped[dict[str, Any]]
    rated: Mapped[bool]
    status: Mapped[str] = mapped_column(String(16))
    game_id: Mapped[str | None] = mapped_column(ForeignKey("games.id"), unique=True)
    declined_by: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("status IN ('open', 'accepted', 'declined', 'expired')", name="status"),
        Index(None, "status", "expires_at"),
        Index(None, "challenger_id", "created_at"),
    )


class ChallengeParticipantRow(Base):
    """An account at a challenge's table: its seat, and a challenged account's answer."""

    __tablename__ = "challenge_participants"

    challenge_id: Mapped[str] = mapped_column(ForeignKey("challenges.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    challenger: Mapped[bool]
    answer: Mapped[str | None] = mapped_column(String(16))

    __table_args__ = (
        UniqueConstraint("challenge_id", "account_id"),
        CheckConstraint("answer IS NULL OR answer IN ('accepted', 'declined')", name="answer"),
    )


class AccountEventRow(Base):
    """One event of an account's stream (WatchAccount): ``payload`` is the bytes of an
    ``AccountEvent`` without its sequence and time (those are ``seq`` and ``created_at``)."""

    __tablename__ = "account_events"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    payload: Mapped[bytes]
    created_at: Mapped[datetime]

    __table_args__ = (CheckConstraint("seq >= 1", name="seq"),)


# --- lasting ratings (migration 0009) ---------------------------------------------------


class RatedGameRow(Base):
    """The mark of a rated game, written in the transaction that makes the game; its
    ``game_type`` (the ruleset's family) is the pool its ratings belong to."""

    __tablename__ = "rated_games"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    game_type: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime]
    rated_at: Mapped[datetime | None] = mapped_column(index=True)
    """When its ratings were applied; ``None``: not yet (or never: the game was abandoned)."""


class RatingRow(Base):
    """An account's OpenSkill rating in one game type; ``ordinal`` is ``mu - 3 * sigma``."""

    __tablename__ = "ratings"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    game_type: Mapped[str] = mapped_column(String(32), primary_key=True)
    mu: Mapped[float] = mapped_column(Double)
    sigma: Mapped[float] = mapped_column(Double)
    ordinal: Mapped[float] = mapped_column(Double)
    games: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("games >= 0", name="games"),
        Index(None, "game_type", "ordinal", "account_id"),
    )


class RatingChangeRow(Base):
    """What one rated game did to one account's rating. ``id`` grows in the order games were
    rated: the order a rebuild replays."""

    __tablename__ = "rating_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"))
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    game_type: Mapped[str] = mapped_column(String(32))
    mu_before: Mapped[float] = mapped_column(Double)
    sigma_before: Mapped[float] = mapped_column(Double)
    mu_after: Mapped[float] = mapped_column(Double)
    sigma_after: Mapped[float] = mapped_column(Double)
    at: Mapped[datetime]

    __table_args__ = (
        UniqueConstraint("game_id", "account_id"),
        Index(None, "account_id", "game_type", "id"),
    )


# --- matches (migration 0011) -------------------------------------------------------------


class MatchRow(Base):
    """A match between two accounts on duplicate deals. ``max_deals`` is the deals asked for,
    or an SPRT match's cap; the ``sprt_*`` columns are set together, for an SPRT match only.
    ``verdict`` is written once (``UPDATE ... WHERE verdict IS NULL``), with the deals and the
    LLR it was reached at."""

    __tablename__ = "matches"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    organiser_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    entrant_a: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    entrant_b: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    preset: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]]
    time_control: Mapped[dict[str, Any]]
    scoring: Mapped[str] = mapped_column(String(8))
    max_deals: Mapped[int] = mapped_column(Integer)
    sprt_m0: Mapped[float | None] = mapped_column(Double)
    sprt_m1: Mapped[float | None] = mapped_column(Double)
    sprt_alpha: Mapped[float | None] = mapped_column(Double)
    sprt_beta: Mapped[float | None] = mapped_column(Double)
    max_in_flight: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), index=True)
    verdict: Mapped[str | None] = mapped_column(String(16))
    deals_at_verdict: Mapped[int | None] = mapped_column(Integer)
    llr_at_verdict: Mapped[float | None] = mapped_column(Double)
    secret: Mapped[bytes]
    """Seeds every deal (``sha256(secret || deal)`` is both its games' deal secret); never
    shown."""
    created_at: Mapped[datetime]

    __table_args__ = (
        CheckConstraint("status IN ('running', 'finished', 'cancelled')", name="status"),
        CheckConstraint("scoring IN ('marks', 'points')", name="scoring"),
        CheckConstraint("verdict IN ('stronger', 'not_stronger')", name="verdict"),
        CheckConstraint("max_deals >= 1", name="max_deals"),
        CheckConstraint("max_in_flight >= 2", name="max_in_flight"),
        CheckConstraint("entrant_a <> entrant_b", name="entrants"),
        Index(None, "created_at", "id"),
    )


class MatchGameRow(Base):
    """One playing of a match's deal (``playing`` 0: A in team 0's seats; 1: B there), written
    in the transaction that makes its game: the key makes each playing's game unique."""

    __tablename__ = "match_games"

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    deal: Mapped[int] = mapped_column(Integer, primary_key=True)
    playing: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), unique=True)

    __table_args__ = (CheckConstraint("playing IN (0, 1)", name="playing"),)


class MatchDealRow(Base):
    """A deal counted: both its playings over, what each entrant scored over them. The key
    makes counting a deal twice impossible, whatever the processes or restarts."""

    __tablename__ = "match_deals"

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    deal: Mapped[int] = mapped_column(Integer, primary_key=True)
    score_a: Mapped[int] = mapped_column(Integer)
    score_b: Mapped[int] = mapped_column(Integer)
    counted_at: Mapped[datetime]
