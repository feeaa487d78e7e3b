"""Challenges: an account challenges named accounts to a table; each accepts or declines; the
last acceptance makes the game (``GameApp.create_game`` with a seat reserved for each account,
as tournaments and seeks make theirs), a decline or the expiry ends it.

Everything is in the database (``store.challenges``), so several processes on one PostgreSQL
agree: the last two acceptances racing, or an acceptance racing the expiry, leave one winner
(the challenge's game is made in the transaction that closes the challenge, and undone if the
challenge was closed first). Each change tells the accounts (``account_events``) in its
transaction; ``tell`` then wakes their streams.

The expiry is a background loop (``run``): every second it closes the open challenges whose
time is up; with several processes each looks, and the conditional update lets one close it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from boneyard.server.competition import account_events
from boneyard.server.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    PreconditionFailed,
)
from boneyard.server.games.app import GameApp, check_time_control, rules_for
from boneyard.server.quotas import QuotaExceeded, Quotas
from boneyard.server.store.account_events import AccountEvent
from boneyard.server.store.challenges import (
    Challenge,
    ChallengeGone,
    ChallengeStore,
    Refused,
)
from boneyard.server.store.competition import Account, TimeControl
from boneyard.server.store.unit_of_work import Transaction

__all__ = [
    "DEFAULT_EXPIRY",
    "MAX_EXPIRY",
    "MAX_OPEN_CHALLENGES",
    "ChallengeBook",
    "Invitation",
]

log = logging.getLogger(__name__)

DEFAULT_EXPIRY = timedelta(minutes=10)
MAX_EXPIRY = timedelta(days=1)
MAX_OPEN_CHALLENGES = 16
"""Open challenges one account may have made at once."""
EXPIRY_EVERY = 1.0
"""Seconds between looks for expired challenges."""
_BATCH = 100
_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class Invitation:
    """An account challenged, by name, and its seat (``None``: the first free)."""

    name: str
    seat: int | None = None


class ChallengeBook:
    def __init__(
        self,
        app: GameApp,
        tell: Callable[[list[str]], None],
        *,
        max_open: int = MAX_OPEN_CHALLENGES,
        quotas: Quotas | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        """``tell(account_ids)``: wake the streams of accounts told something (any thread).
        ``quotas``: the server's, whose ``challenges_per_minute`` bounds what one account's
        challenges write into the others' streams (two events each at most: received, then
        accepted, declined or expired)."""
        self._app = app
        self._quotas = quotas or Quotas()
        self._store = ChallengeStore(app.store)
        self._tell = tell
        self._max_open = max_open
        self._now = now or (lambda: datetime.now(UTC))

    # ------------------------------------------------------------ making

    def create(
        self,
        challenger: Account,
        preset: str,
        options: Mapping[str, Any],
        time_control: TimeControl | None,
        invited: Sequence[Invitation],
        *,
        challenger_plays: bool,
        challenger_seat: int | None = None,
        rated: bool = False,
        expires_in: timedelta = DEFAULT_EXPIRY,
    ) -> Challenge:
        """Challenge the accounts named; refused (nothing stored) with the reason."""
        rules = rules_for(preset, options)
        if time_control is not None:
            check_time_control(time_control)
        if not timedelta(seconds=1) <= expires_in <= MAX_EXPIRY:
            raise InvalidArgument(
                f"a challenge expires in 1 to {int(MAX_EXPIRY.total_seconds())} seconds, "
                f"not {expires_in.total_seconds():g}"
            )
        if not invited:
            raise InvalidArgument("a challenge names at least one account to challenge")
        names = [i.name for i in invited]
        if challenger.name in names:
            raise InvalidArgument(f"{challenger.name!r} cannot challenge itself")
        if len(set(names)) != len(names):
            raise InvalidArgument(f"an account is challenged twice: {sorted(names)}")
        if challenger_seat is not None and not challenger_plays:
            raise InvalidArgument("a challenger's seat is given only when the challenger plays")
        wanted: list[tuple[str, int | None, bool]] = []
        if challenger_plays:
            wanted.append((challenger.id, challenger_seat, True))
        competition = self._app.competition
        for invitation in invited:
            account = competition.account_named(invitation.name)
            if account is None:
                raise NotFound(
                    f"no account named {invitation.name!r}",
                    reason="ACCOUNT_NOT_FOUND",
                    account=invitation.name,
                )
            wanted.append((account.id, invitation.seat, False))
        if len(wanted) > rules.players:
            raise InvalidArgument(
                f"a {rules.name} table has {rules.players} seats, not {len(wanted)} for the "
                f"accounts of this challenge"
            )
        if rated and len(wanted) != rules.players:
            raise InvalidArgument(
                f"a rated challenge fills every seat: {rules.players} accounts, not {len(wanted)}"
            )
        given = [seat for _, seat, _ in wanted if seat is not None]
        if any(not 0 <= seat < rules.players for seat in given):
            raise InvalidArgument(f"a {rules.name} table has seats 0..{rules.players - 1}, not {given}")
        if len(set(given)) != len(given):
            raise InvalidArgument(f"a seat is given twice: {sorted(given)}")
        free = iter(s for s in range(rules.players) if s not in given)
        seats = [
            (seat if seat is not None else next(free), account_id, is_challenger)
            for account_id, seat, is_challenger in wanted
        ]
        self._quotas.challenging(challenger.id)
        made = self._store.create(
            str(uuid.uuid4()),
            challenger.id,
            preset,
            {**options, "deal_limit": rules.deal_limit},  # as the game will be made
            time_control,
            rated,
            self._now() + expires_in,
            seats,
            account_events.challenge_received,
            self._max_open,
        )
        if made is None:
            raise QuotaExceeded(
                f"{challenger.name!r} has {self._max_open} open challenges already: wait for "
                f"answers, or for them to expire",
                limit=self._max_open,
            )
        challenge, told = made
        self._told(told)
        log.info("challenge %s by %s: %s", challenge.id, challenger.name, ", ".join(names))
        return challenge

    # ------------------------------------------------------------ answers

    def accept(self, challenge_id: str, account: Account) -> Challenge:
        """Accept for the account; the last acceptance makes the game."""
        for _ in range(_ATTEMPTS):
            try:
                recorded = self._store.accept(
                    challenge_id, account.id, account_events.challenge_answered("accepted", account.id)
                )
            except Refused as refused:
                raise _refusal(refused, challenge_id) from None
            if recorded is not None:
                challenge, told = recorded
                self._told(told)
                return challenge
            made = self._make_game(challenge_id, account)
            if made is not None:
                return made
        raise PreconditionFailed(
            f"challenge {challenge_id} kept changing while its game was made: try again",
            reason="CHALLENGE_NOT_OPEN",
            challenge_id=challenge_id,
        )

    def _make_game(self, challenge_id: str, account: Account) -> Challenge | None:
        challenge = self._store.get(challenge_id)
        assert challenge is not None
        accounts = self._app.competition.accounts(challenge.account_ids)
        events = account_events.challenge_answered("accepted", account.id)
        done: list[Challenge] = []

        def complete(session: Transaction, game_id: str) -> None:
            after, _ = self._store.complete(session, challenge_id, account.id, game_id, events)
            done.append(after)

        try:
            self._app.create_game(
                challenge.preset,
                challenge.options,
                "challenge: " + ", ".join(s.name for s in challenge.seats),
                time_control=challenge.time_control,
                reservations=[(s.seat, accounts[s.account_id]) for s in challenge.seats],
                also=complete,
                rated=challenge.rated,
                challenge_id=challenge_id,
            )
        except ChallengeGone:
            log.info("challenge %s changed while its game was made; looking again", challenge_id)
            return None
        finished = done[-1]
        # The accounts seated were told their games by the creation (``on_created``); the
        # challenger, perhaps not at the table, is told the acceptance.
        self._tell(sorted({*finished.account_ids, finished.challenger_id}))
        log.info("challenge %s accepted: game %s", challenge_id, finished.game_id)
        return finished

    def decline(self, challenge_id: str, account: Account) -> Challenge:
        try:
            challenge, told = self._store.decline(
                challenge_id, account.id, account_events.challenge_answered("declined", account.id)
            )
        except Refused as refused:
            raise _refusal(refused, challenge_id) from None
        self._told(told)
        return challenge

    # ------------------------------------------------------------ reading

    def get(self, challenge_id: str, account: Account) -> Challenge:
        """A challenge the account made or is in."""
        challenge = self._store.get(challenge_id)
        if challenge is None or (
            challenge.challenger_id != account.id and challenge.seat_of(account.id) is None
        ):
            raise NotFound(
                f"no challenge {challenge_id} of {account.name!r}",
                reason="CHALLENGE_NOT_FOUND",
                challenge_id=challenge_id,
            )
        return challenge

    def of_account(
        self, account: Account, received: bool, sent: bool, status: str | None, limit: int
    ) -> list[Challenge]:
        return self._store.of_account(account.id, received, sent, status, limit)

    def events_after(self, account_id: str, after: int, limit: int) -> list[AccountEvent]:
        return self._store.events_after(account_id, after, limit)

    def last_sequence(self, account_id: str) -> int:
        return self._store.last_sequence(account_id)

    # ------------------------------------------------------------ expiry

    def expire_due(self) -> int:
        """Close the open challenges whose time is up; how many this call closed."""
        now = self._now()
        closed = 0
        for challenge_id in self._store.due(now, _BATCH):
            expired = self._store.expire(
                challenge_id, now, account_events.challenge_answered("expired", None)
            )
            if expired is not None:
                closed += 1
                self._told(expired[1])
        return closed

    async def run(self) -> None:
        """Expire challenges, forever (a background task)."""
        while True:
            await asyncio.sleep(EXPIRY_EVERY)
            try:
                await asyncio.to_thread(self.expire_due)
            except asyncio.CancelledError:
                raise
            except Exception:  # the next look tries again; a database hiccup is no reason to stop
                log.exception("expiring challenges failed")

    def _told(self, told: Sequence[AccountEvent]) -> None:
        if told:
            self._tell(sorted({e.account_id for e in told}))


def _refusal(refused: Refused, challenge_id: str) -> Exception:
    challenge = refused.challenge
    if refused.why == "not_challenged":
        return PermissionDenied(
            f"challenge {challenge_id} is yours: only the accounts it challenges answer it",
            reason="NOT_CHALLENGED",
            challenge_id=challenge_id,
        )
    if refused.why == "not_open" and challenge is not None:
        status: str = challenge.status
        if status == "open":
            status = "expired" if challenge.expires_at <= datetime.now(UTC) else "answered"
        return PreconditionFailed(
            f"challenge {challenge_id} is {status}: it takes no answer",
            reason="CHALLENGE_NOT_OPEN",
            challenge_id=challenge_id,
            status=status,
        )
    return NotFound(
        f"no challenge {challenge_id} to your account",
        reason="CHALLENGE_NOT_FOUND",
        challenge_id=challenge_id,
    )
