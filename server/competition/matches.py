"""Matches, run by the server unattended: two accounts on duplicate deals until the deals asked
for are played or the SPRT has decided "is A stronger than B?".

**Seating.** A match is two partnerships: in Texas 42, entrant A's account holds seats 0 and 2
at a deal's first playing and B's seats 1 and 3; at its second playing, the same hands dealt
again (both games' deals come from ``deal_secret(match secret, deal)``), they swap. The entrant
is its partnership: one account, both seats, its bot playing each (``boneyard bot --key``).
Rules that are not two teams of equal size are refused (``MATCH_RULES``): in Moon every
player is alone, so a two-entrant match would either give one entrant two seats that could
play together against a lone opponent, or need a third player whose play would weigh on both
sides' results as much as theirs; a tournament is the fair way to rank Moon players.

**A deal's figure** is A's marks (``points``: the count points A's tricks took) minus B's,
summed over both playings. A playing won by a resignation or a forfeit on time, its hand left
unscored, credits the winner with the hand it did not get to play: a mark (42 points). An
abandoned playing (the sweeper ended it, nobody playing on) scores what each side had.

**Running.** Like the tournament director: stateless, everything in the database, so a restarted
server (or another process on the same PostgreSQL) carries on where it stopped. Each game is
made in the transaction that records it (``MatchStore.link_game``); a deal's two playings are
made together and embargoed until both are over; then the deal is counted, once
(``MatchStore.count_deal``, which reveals its seeds in the same transaction: its records and
results become public and its games are rated). The director keeps up to ``max_in_flight``
games in play (a deal starts only when both its games fit). Once the SPRT's LLR leaves its
bounds the verdict is written, with the deals counted and the LLR at that moment, and no deal
is started any more; the deals then in flight are played out and counted in the match's
figures (its totals, mean and win rate, and the LLR shown), but they do not change the verdict.
When every deal started is counted (the verdict reached, or the deals asked for played), the
match is finished.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from boneyard import engine
from boneyard.api import codec
from boneyard.server.competition.match_stats import (
    Interval,
    Sprt,
    SprtState,
    Tally,
    Verdict,
    mean_interval,
    sprt_state,
)
from boneyard.server.errors import InvalidArgument, NotFound, PermissionDenied, PreconditionFailed
from boneyard.server.games.app import GameApp, check_time_control, rules_for
from boneyard.server.games.live import LiveGame
from boneyard.server.store.competition import Account, TimeControl
from boneyard.server.store.matches import (
    Match,
    MatchGame,
    MatchGameRefused,
    MatchStore,
    MatchTotals,
    Scoring,
    SprtSpec,
)

__all__ = [
    "DEFAULT_IN_FLIGHT",
    "MAX_DEALS",
    "MAX_IN_FLIGHT",
    "MatchDirector",
    "MatchReport",
    "check_match_rules",
    "check_sprt",
    "deal_secret",
    "playing_scores",
]

log = logging.getLogger(__name__)

MAX_DEALS = 10_000
"""The most deals a match plays: the deals asked for, or an SPRT's cap (its default)."""
DEFAULT_IN_FLIGHT = 8
MIN_IN_FLIGHT = 2
"""A deal's two playings start together."""
MAX_IN_FLIGHT = 64
MAX_HYPOTHESIS_GAP = 100.0
"""``m1 - m0`` at most, in marks (or points) a deal: more is no question a match answers."""
MAX_HYPOTHESIS = 1000.0
"""``|m0|`` and ``|m1|`` at most: no deal's figure comes near it."""
MAX_ERROR_RATE = 0.5
DEFAULT_ERROR_RATE = 0.05


def deal_secret(match_secret: bytes, deal: int) -> bytes:
    """The deal secret of both playings of a deal: the same hands at both tables."""
    return hashlib.sha256(match_secret + b"match deal" + deal.to_bytes(4, "big")).digest()


def playing_scores(
    state: engine.GameState, unscored_win: bool, a_team: int, scoring: Scoring
) -> tuple[int, int]:
    """A's and B's scores at one playing (A's partnership is team ``a_team``): the game's
    score (``marks``), or the count points their tricks took (``points``); plus, to the winner
    of a playing won with its hand unscored (``unscored_win``: a resignation or a forfeit on
    time), the hand it did not play: a mark, or 42 points (the hand's whole count)."""
    rules = state.rules
    b_team = 1 - a_team
    if scoring == "points":
        a = sum(r.taken[a_team] for r in state.results)
        b = sum(r.taken[b_team] for r in state.results)
    else:
        a, b = state.scores[a_team], state.scores[b_team]
    if unscored_win and state.winner is not None:
        credit = rules.all_tricks_points if scoring == "points" or rules.points_to_win else 1
        if state.winner == a_team:
            a += credit
        else:
            b += credit
    return a, b


@dataclass(frozen=True, slots=True)
class MatchReport:
    """A match with its figures, as GetMatch shows it."""

    match: Match
    deals_started: int
    totals: MatchTotals
    tally: Tally
    mean: Interval
    sprt: SprtState | None


class MatchDirector:
    def __init__(self, app: GameApp) -> None:
        self._app = app
        self._matches = MatchStore(app.store)
        self._settled: set[str] = set()
        """Cancelled matches whose deals are all counted (by this process)."""
        self._wake = asyncio.Event()
        self.on_published: Callable[[], None] | None = None
        """Told (from the director's thread) when it has counted deals: their games are public
        now, and the lasting ratings rate them."""

    @property
    def store(self) -> MatchStore:
        return self._matches

    # ------------------------------------------------------------ organising

    def create(
        self,
        organiser: Account,
        entrant_a: str,
        entrant_b: str,
        preset: str,
        options: dict[str, Any],
        *,
        scoring: Scoring = "marks",
        deals: int | None = None,
        sprt: Sprt | None = None,
        max_deals: int = MAX_DEALS,
        time_control: TimeControl | None = None,
        max_in_flight: int = DEFAULT_IN_FLIGHT,
    ) -> Match:
        """Make a match and start it: ``deals`` deals, or as many as ``sprt`` needs (at most
        ``max_deals``). Refuses, storing nothing, what cannot be played."""
        options = dict(options)
        # Each playing is a game of one hand unless the organiser says otherwise.
        options.setdefault("hand_limit", 1)
        rules = rules_for(preset, options)
        options["deal_limit"] = rules.deal_limit  # as the games will be made
        check_match_rules(rules)
        if time_control is not None:
            check_time_control(time_control)
        if (deals is None) == (sprt is None):
            raise InvalidArgument("a match has either a number of deals or an SPRT")
        limit = deals if deals is not None else max_deals
        if not 1 <= limit <= MAX_DEALS:
            what = "deals" if deals is not None else "the SPRT's max_deals"
            raise InvalidArgument(f"{what} must be 1..{MAX_DEALS}, not {limit}")
        if not MIN_IN_FLIGHT <= max_in_flight <= MAX_IN_FLIGHT:
            raise InvalidArgument(
                f"max_games_in_flight must be {MIN_IN_FLIGHT}..{MAX_IN_FLIGHT} (a deal's two "
                f"playings start together), not {max_in_flight}"
            )
        if entrant_a == entrant_b:
            raise InvalidArgument(f"a match is between two accounts: {entrant_a!r} twice")
        accounts = []
        for name in (entrant_a, entrant_b):
            account = self._app.competition.account_named(name)
            if account is None:
                raise NotFound(
                    f"no account named {name!r}", reason="ACCOUNT_NOT_FOUND", account=name
                )
            accounts.append(account)
        match = Match(
            id=str(uuid.uuid4()),
            organiser_id=organiser.id,
            entrant_a=accounts[0].id,
            entrant_b=accounts[1].id,
            preset=preset,
            options=options,
            time_control=time_control,
            scoring=scoring,
            max_deals=limit,
            sprt=None if sprt is None else SprtSpec(sprt.m0, sprt.m1, sprt.alpha, sprt.beta),
            max_in_flight=max_in_flight,
            status="running",
            verdict=None,
            deals_at_verdict=None,
            llr_at_verdict=None,
            secret=secrets.token_bytes(32),
            created_at=datetime.now(UTC),
        )
        self._matches.create(match)
        log.info(
            "match %s: %s against %s, %s",
            match.id,
            entrant_a,
            entrant_b,
            f"{deals} deals" if deals is not None else f"SPRT of at most {limit} deals",
        )
        return match

    def cancel(self, match_id: str, caller: Account) -> Match:
        """Start no more deals (its organiser only); the deals in flight are played out."""
        match = self.get(match_id)
        if caller.id != match.organiser_id:
            raise PermissionDenied(
                f"match {match_id} is not {caller.name!r}'s: only its organiser cancels it",
                reason="NOT_YOUR_MATCH",
                match_id=match_id,
            )
        if not self._matches.set_status(match_id, "cancelled", was="running"):
            status = self.get(match_id).status
            raise PreconditionFailed(
                f"match {match_id} is {status} already",
                reason="MATCH_STATUS",
                match_id=match_id,
                status=status,
            )
        log.info("match %s cancelled by %s", match_id, caller.name)
        return self.get(match_id)

    def get(self, match_id: str) -> Match:
        match = self._matches.match(match_id)
        if match is None:
            raise NotFound(f"no match {match_id}", reason="MATCH_NOT_FOUND", match_id=match_id)
        return match

    def reports(self, matches: Sequence[Match]) -> list[MatchReport]:
        """The figures of each match (a few queries for a page of them)."""
        ids = [m.id for m in matches]
        totals = self._matches.totals(ids)
        started = self._matches.started(ids)
        found = []
        for match in matches:
            tally = _tally(totals[match.id])
            state = None if match.sprt is None else sprt_state(tally, _sprt(match.sprt))
            found.append(
                MatchReport(
                    match, started[match.id], totals[match.id], tally, mean_interval(tally), state
                )
            )
        return found

    # ------------------------------------------------------------ running

    def step(self) -> list[str]:
        """Advance every running match (count the deals over, decide, start deals, finish) and
        count the deals of the cancelled ones as they end. Returns the games made."""
        made: list[str] = []
        for match in self._matches.with_status("running"):
            try:
                made += self._advance(match)
            except Exception:  # one match's trouble must not stop the others
                log.exception("match %s could not advance; trying again", match.id)
        for match in self._matches.with_status("cancelled"):
            if match.id in self._settled:
                continue
            try:
                made += self._settle(match)
            except Exception:
                log.exception("cancelled match %s could not settle; trying again", match.id)
        return made

    def _advance(self, match: Match) -> list[str]:
        open_deals = self._count_finished_deals(match)
        match = self._decide(match)
        started = self._matches.deals_started(match.id)
        stopping = match.verdict is not None or started >= match.max_deals
        if stopping and not open_deals:
            if self._matches.set_status(match.id, "finished", was="running"):
                log.info("match %s finished after %d deals", match.id, started)
            return []
        made = self._complete_deals(match, open_deals)
        if stopping:
            return made
        in_flight = sum(
            1 for games in open_deals.values() for g in games if g.status in ("open", "playing")
        ) + len(made)
        deal = started
        while deal < match.max_deals and in_flight + 2 <= match.max_in_flight:
            first = self._make_game(match, deal, 0)
            if first is None:
                break  # another process started it, or the match stopped meanwhile
            made.append(first)
            second = self._make_game(match, deal, 1)
            if second is not None:
                made.append(second)
            in_flight += 2
            deal += 1
        return made

    def _settle(self, match: Match) -> list[str]:
        """A cancelled match: its deals started are completed, played out and counted."""
        open_deals = self._count_finished_deals(match)
        if not open_deals:
            self._settled.add(match.id)
            return []
        return self._complete_deals(match, open_deals)

    def _complete_deals(self, match: Match, open_deals: dict[int, list[MatchGame]]) -> list[str]:
        """Make the second playing of a deal whose first was made by a process that stopped
        before it made the second."""
        made = []
        for deal, games in open_deals.items():
            if len(games) == 1:
                game_id = self._make_game(match, deal, 1)
                if game_id is not None:
                    made.append(game_id)
        return made

    def _count_finished_deals(self, match: Match) -> dict[int, list[MatchGame]]:
        """Count each deal whose two playings are over; the deals left open."""
        by_deal: dict[int, list[MatchGame]] = {}
        for g in self._matches.uncounted_games(match.id):
            by_deal.setdefault(g.deal, []).append(g)
        counted = False
        for deal, games in list(by_deal.items()):
            if len(games) < 2 or any(g.status in ("open", "playing") for g in games):
                continue
            score_a = score_b = 0
            for g in games:
                a, b = self._playing_scores(match, g)
                score_a += a
                score_b += b
            if self._matches.count_deal(
                match.id, deal, score_a, score_b, [g.game_id for g in games]
            ):
                counted = True
                log.info("match %s: deal %d counted, %d to %d", match.id, deal, score_a, score_b)
            del by_deal[deal]
        if counted and self.on_published is not None:
            self.on_published()  # their results are public now: they may be rated
        return by_deal

    def _playing_scores(self, match: Match, game: MatchGame) -> tuple[int, int]:
        events = [codec.decode_event(r.payload) for r in self._app.store.load_events(game.game_id)]
        state = engine.replay(events)
        # Won with the hand unscored: the winning event follows a resignation or a forfeit.
        unscored_win = (
            len(events) >= 2
            and isinstance(events[-1], engine.GameWon)
            and isinstance(events[-2], engine.Resigned | engine.ClockExpired)
        )
        # The first playing seats A in team 0's seats, the second in team 1's.
        return playing_scores(state, unscored_win, game.playing, match.scoring)

    def _decide(self, match: Match) -> Match:
        """Write the SPRT's verdict the first time its LLR leaves the bounds."""
        if match.sprt is None or match.verdict is not None:
            return match
        tally = _tally(self._matches.totals([match.id])[match.id])
        state = sprt_state(tally, _sprt(match.sprt))
        if state.verdict is Verdict.UNDECIDED:
            return match
        if self._matches.decide(match.id, state.verdict.value, tally.deals, state.llr):
            log.info(
                "match %s: %s after %d deals (LLR %.3f)",
                match.id,
                state.verdict.value,
                tally.deals,
                state.llr,
            )
        return self.get(match.id)

    def _make_game(self, match: Match, deal: int, playing: int) -> str | None:
        accounts = self._app.competition.accounts([match.entrant_a, match.entrant_b])
        first, second = accounts[match.entrant_a], accounts[match.entrant_b]
        if playing == 1:
            first, second = second, first
        rules = rules_for(match.preset, match.options)
        seating = [
            (seat, first if rules.team_of[seat] == 0 else second) for seat in range(rules.players)
        ]
        try:
            game_id, _ = self._app.create_game(
                match.preset,
                match.options,
                f"match {match.id[:8]}: deal {deal + 1}, playing {playing + 1}",
                time_control=match.time_control,
                reservations=seating,
                deal_secret=deal_secret(match.secret, deal),
                also=lambda session, game_id: MatchStore.link_game(
                    session, match.id, deal, playing, game_id
                ),
                rated=True,  # as every tournament game
                partnerships=True,
                match_id=match.id,
            )
        except MatchGameRefused as refused:
            log.debug("%s", refused)
            return None
        log.info("match %s: deal %d, playing %d is %s", match.id, deal, playing, game_id)
        return game_id

    def wake(self) -> None:
        """Something a match waits for happened (on the event loop): a game ended, a match
        was made or cancelled."""
        self._wake.set()

    def game_committed(self, game: LiveGame, events: tuple[engine.Event, ...]) -> None:
        """``GameHost.on_game_over``: wake the director if the commit ``concerns`` it."""
        if self.concerns(game, events):
            self._wake.set()

    @staticmethod
    def concerns(game: LiveGame, events: tuple[engine.Event, ...]) -> bool:
        """Whether a commit may let a match go on: the end of a match's game (the others, most
        of a busy server's, do not)."""
        return bool(game.over and events and game.made_for.match_id is not None)

    async def run(self, retry_after: float = 1.0) -> None:
        """Advance the matches whenever something happens (the server's background task): no
        polling, but a failed step is tried again after ``retry_after`` seconds."""
        while True:
            self._wake.clear()
            try:
                await asyncio.to_thread(self.step)
            except Exception:
                log.exception("advancing the matches failed; trying again")
                await asyncio.sleep(retry_after)
                continue
            await self._wake.wait()


def check_match_rules(rules: engine.Ruleset) -> None:
    """Refuse rules a match cannot be played under: two partnerships of equal size."""
    teams = rules.teams
    if len(teams) != 2 or len(teams[0]) != len(teams[1]):
        raise InvalidArgument(
            f"a match is two partnerships, one an entrant's; {rules.name} seats "
            f"{len(teams)} teams of {', '.join(str(len(t)) for t in teams)}: a two-entrant "
            f"match cannot be fair there (a tournament ranks such players)",
            reason="MATCH_RULES",
            preset=rules.name,
        )


def _sprt(spec: SprtSpec) -> Sprt:
    return Sprt(spec.m0, spec.m1, spec.alpha, spec.beta)


def _tally(totals: MatchTotals) -> Tally:
    return Tally(
        totals.deals,
        float(totals.figures),
        float(totals.squares),
        totals.wins,
        totals.draws,
        totals.losses,
    )


def check_sprt(m0: float, m1: float, alpha: float, beta: float) -> Sprt:
    """An SPRT from a request's numbers (0 error rates: the defaults), or ``InvalidArgument``
    saying what is wrong."""
    alpha = alpha or DEFAULT_ERROR_RATE
    beta = beta or DEFAULT_ERROR_RATE
    if not (
        -MAX_HYPOTHESIS <= m0 < m1 <= min(m0 + MAX_HYPOTHESIS_GAP, MAX_HYPOTHESIS)
    ):  # NaN fails every comparison
        raise InvalidArgument(
            f"an SPRT needs m0 < m1 <= m0 + {MAX_HYPOTHESIS_GAP:g}, both in "
            f"-{MAX_HYPOTHESIS:g}..{MAX_HYPOTHESIS:g} (marks or points a deal), not m0={m0}, "
            f"m1={m1}"
        )
    if not (0 < alpha <= MAX_ERROR_RATE and 0 < beta <= MAX_ERROR_RATE):
        raise InvalidArgument(
            f"an SPRT's alpha and beta are in (0, {MAX_ERROR_RATE:g}], not alpha={alpha}, "
            f"beta={beta}"
        )
    return Sprt(m0, m1, alpha, beta)
