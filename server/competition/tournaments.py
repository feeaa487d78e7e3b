"""Tournaments, run by the server unattended.

A tournament is a schedule of games fixed when it is made: for each deal (a "board"), a
seating of entrants (round robin over every way of seating them: which entrants play and who
partners whom), and with ``duplicate`` the same deal again with the hands rotated among the
teams, so that every side plays every hand. Each game's deals are fixed by a secret drawn for
the tournament (``sha256(secret || deal)``), so the rotated games get the same hands.

The playings of a deal are started together, and nothing of them is public until all are over
(as the two tables of a duplicate bridge match play at once, behind closed doors): their seeds
stay secret and their records and spectator views are closed (``embargoed``) until then. The
entrants are the same at every playing of a deal, so duplicate play still trusts each entrant's
program not to pass what one of its seats sees to another of its seats.

The director starts every game it may, deal after deal in schedule order, as long as no
entrant would be in more than the tournament's ``max_games_per_entrant`` unfinished games of it
(``deal_fits``: the playings of a deal start together, so they count together); 1 is one deal at
a time. With more, an entrant's bot plays several games at once and the tournament goes as fast
as the server and the bots think, not at the pace of one deal's round trips.

The director is stateless: everything is in the database, so a restarted server (or another
process on the same PostgreSQL) carries on where it stopped. A schedule entry's game is
created in the same transaction that records it, and only if no game was recorded for it
yet and the deal still fits its entrants' bound, counted in that transaction under the
tournament row's lock (``CompetitionStore.link_tournament_game``): two processes racing never
put an entrant over it.

**Swiss** (``format="swiss"``, Texas 42 only: ``check_swiss``) is made round by round instead:
its schedule is empty when it is made, and each round's games are written when the round is
paired (``_swiss_round``), which is only once every game of the round before is over. The
pairing is ``swiss.pair`` of the standings after the bouts over (``swiss.standings``; the
rules and tie-breaks are that module's); each pair plays the round's deals, the same hands at
every table, each deal twice with the pair's partnerships swapping seats (``swiss_schedule``),
an entrant's account holding both seats of its team. The round's pairing and games are
written in one transaction under the tournament row's lock (``pair_swiss_round``), so a
restarted server carries on and two processes never pair a round twice; the games are then
made as a round robin's are, deal after deal within ``max_games_per_entrant``.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import math
import secrets
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from boneyard import engine
from boneyard.api import codec
from boneyard.server.competition import swiss
from boneyard.server.competition.matches import playing_scores
from boneyard.server.competition.standings import GameResult, Standing, standings
from boneyard.server.errors import InvalidArgument, NotFound, PermissionDenied, PreconditionFailed
from boneyard.server.games.app import GameApp, check_time_control, rules_for
from boneyard.server.games.live import LiveGame
from boneyard.server.store.competition import (
    Account,
    CompetitionStore,
    GameAlreadyMade,
    TimeControl,
    Tournament,
    TournamentGame,
    deal_fits,
)

__all__ = [
    "DEFAULT_GAMES_PER_ENTRANT",
    "FORMATS",
    "MAX_GAMES_PER_ENTRANT",
    "MAX_ROUNDS",
    "SwissBout",
    "SwissRoundReport",
    "TournamentDirector",
    "check_swiss",
    "schedule",
    "seating_count",
    "seatings",
    "swiss_games",
    "swiss_schedule",
]

log = logging.getLogger(__name__)

FORMATS = ("round_robin", "swiss")
MAX_DEALS = 10_000
MAX_ROUNDS = 32
"""The most rounds of a Swiss tournament (pairing 64 entrants for 32 rounds takes half a
second in all; more rounds than entrants is a round robin's business)."""
_OVER = ("finished", "abandoned")
MAX_GAMES = 100_000
DEFAULT_GAMES_PER_ENTRANT = 8
"""Games of a tournament an entrant may be in at once unless its organiser says: four deals
of duplicate Texas 42, where each entrant plays both playings of every deal."""
MAX_GAMES_PER_ENTRANT = 64
"""The most an organiser may allow: each game in play is held in the server's memory and
needs a thread or a worker of each entrant's bot."""


def seatings(teams: Sequence[Sequence[int]], entrants: Sequence[str]) -> Iterator[tuple[str, ...]]:
    """Every way of seating ``entrants`` at a table whose teams are ``teams`` (seat numbers):
    each choice of who plays, each split of them into teams (teams unordered, members in entry
    order); an entrant's seat is its team's next seat. In the order of the entrants, made as
    they are asked for (there can be very many)."""
    players = sum(len(t) for t in teams)
    size = len(teams[0])
    for chosen in itertools.combinations(entrants, players):
        for split in _splits(list(chosen), size):
            seats = [""] * players
            for team_seats, members in zip(teams, split, strict=True):
                for seat, member in zip(team_seats, members, strict=True):
                    seats[seat] = member
            yield tuple(seats)


def seating_count(teams: Sequence[Sequence[int]], entrants: int) -> int:
    """How many ``seatings`` there are, without making them."""
    players = sum(len(t) for t in teams)
    size, count = len(teams[0]), len(teams)
    splits = math.factorial(players) // (math.factorial(size) ** count * math.factorial(count))
    return math.comb(entrants, players) * splits


def _splits(members: list[str], size: int) -> Iterator[list[tuple[str, ...]]]:
    """The ways to split ``members`` into unordered groups of ``size``."""
    if not members:
        yield []
        return
    first, rest = members[0], members[1:]
    for partners in itertools.combinations(rest, size - 1):
        left = [m for m in rest if m not in partners]
        for split in _splits(left, size):
            yield [(first, *partners), *split]


def schedule(
    rules: engine.Ruleset, entrants: Sequence[str], deals: int, duplicate: bool
) -> list[tuple[int, int, tuple[str, ...]]]:
    """``(deal, rotation, seating)`` of every game, in playing order. Deal ``d`` is played by
    seating ``d mod (number of seatings)``; with ``duplicate``, once for every rotation ``r``
    of the teams: the team seated in team place ``k`` moves to place ``k + r``, so over the
    rotations every side holds every hand."""
    teams = rules.teams
    ways = list(itertools.islice(seatings(teams, entrants), deals))
    games: list[tuple[int, int, tuple[str, ...]]] = []
    for deal in range(deals):
        base = ways[deal % len(ways)]
        for rotation in range(len(teams) if duplicate else 1):
            seats = [""] * rules.players
            for k, team_seats in enumerate(teams):
                moved_to = teams[(k + rotation) % len(teams)]
                for seat, new_seat in zip(team_seats, moved_to, strict=True):
                    seats[new_seat] = base[seat]
            games.append((deal, rotation, tuple(seats)))
    return games


def check_swiss(rules: engine.Ruleset, entrants: int, rounds: int, deals: int) -> None:
    """Refuse a Swiss tournament that cannot be played: its pairings are two partnerships
    (Texas 42), at least two entrants, 1..32 rounds."""
    teams = rules.teams
    if len(teams) != 2 or len(teams[0]) != len(teams[1]):
        raise InvalidArgument(
            f"a Swiss round pairs two entrants, each a partnership; {rules.name} seats "
            f"{len(teams)} teams of {', '.join(str(len(t)) for t in teams)}: in Moon every "
            f"player is alone, so a pairing would need a third entrant whose play weighs on "
            f"both sides' results (a round robin ranks such players)",
            reason="SWISS_RULES",
            preset=rules.name,
        )
    if entrants < 2:
        raise InvalidArgument(f"a Swiss tournament needs at least 2 entrants; {entrants} given")
    if not 1 <= rounds <= MAX_ROUNDS:
        raise InvalidArgument(f"a Swiss tournament's rounds must be 1..{MAX_ROUNDS}, not {rounds}")
    if not 1 <= deals <= MAX_DEALS:
        raise InvalidArgument(f"deals must be 1..{MAX_DEALS}, not {deals}")
    if rounds * (entrants // 2) * deals * 2 > MAX_GAMES:
        raise InvalidArgument(f"that many rounds and deals make more than {MAX_GAMES} games")


def swiss_games(entrants: int, rounds: int, deals: int) -> int:
    """How many games a Swiss tournament plays: each round's pairings, each deal twice."""
    return rounds * (entrants // 2) * deals * 2


def swiss_schedule(
    rules: engine.Ruleset, round: int, deals: int, pairs: Sequence[tuple[str, str]]
) -> list[tuple[int, int, tuple[str, ...]]]:
    """``(deal, rotation, seating)`` of a Swiss round's games, in playing order: deal after
    deal (every pairing plays the round's deals, the same hands at every table), each pair's
    first entrant holding team 0's seats at the deal's first playing (rotation 0) and team 1's
    at its second, the same hands dealt again."""
    games: list[tuple[int, int, tuple[str, ...]]] = []
    for k in range(deals):
        deal = (round - 1) * deals + k
        for first, second in pairs:
            for rotation in (0, 1):
                sides = (first, second) if rotation == 0 else (second, first)
                seating = tuple(sides[rules.team_of[seat]] for seat in range(rules.players))
                games.append((deal, rotation, seating))
    return games


@dataclass(frozen=True, slots=True)
class SwissBout:
    """A pairing of a Swiss round as it stands: its marks so far, and whether it is over."""

    bout: swiss.Bout
    over: bool


@dataclass(frozen=True, slots=True)
class SwissRoundReport:
    """A Swiss round paired: its bouts and its bye (an entrant's name, or ``None``)."""

    round: int
    bouts: tuple[SwissBout, ...]
    bye: str | None


def deal_secret(tournament_secret: bytes, deal: int) -> bytes:
    return hashlib.sha256(tournament_secret + b"deal" + deal.to_bytes(4, "big")).digest()


class TournamentDirector:
    def __init__(self, app: GameApp) -> None:
        self._app = app
        self._competition: CompetitionStore = app.competition
        self._published: set[tuple[str, int]] = set()
        """Deals whose playings are all over and revealed (by this process)."""
        self._settled: set[str] = set()
        """Cancelled tournaments whose games are all over and published."""
        self._wake = asyncio.Event()
        self.on_published: Callable[[], None] | None = None
        """Told (from the director's thread) when it has published deals: the lasting ratings
        rate a tournament game only once its deal is public."""

    # ------------------------------------------------------------ organising

    def create(
        self,
        organiser: Account,
        name: str,
        preset: str,
        options: Mapping[str, Any],
        entrant_names: Sequence[str],
        deals: int,
        duplicate: bool,
        time_control: TimeControl | None,
        format: str = "round_robin",
        max_games_per_entrant: int = DEFAULT_GAMES_PER_ENTRANT,
        rounds: int = 0,
    ) -> Tournament:
        """Make a tournament (not started). ``max_games_per_entrant``: 1..64, the most
        unfinished games of it an entrant may be in at once. A ``swiss`` one plays ``rounds``
        rounds (1..32; 0 for a round robin), each pairing playing ``deals`` deals, each deal
        twice (``duplicate`` is implied)."""
        options = dict(options)
        # Each deal is a game of its own unless the organiser says otherwise.
        options.setdefault("hand_limit", 1)
        rules = rules_for(preset, options)
        options["deal_limit"] = rules.deal_limit  # as the games will be made
        if format not in FORMATS:
            raise InvalidArgument(f"the format is one of {', '.join(FORMATS)}, not {format!r}")
        if time_control is not None:
            check_time_control(time_control)
        if not 1 <= deals <= MAX_DEALS:
            raise InvalidArgument(f"deals must be 1..{MAX_DEALS}, not {deals}")
        if not 1 <= max_games_per_entrant <= MAX_GAMES_PER_ENTRANT:
            raise InvalidArgument(
                f"max_games_per_entrant must be 1..{MAX_GAMES_PER_ENTRANT} (0: "
                f"{DEFAULT_GAMES_PER_ENTRANT}), not {max_games_per_entrant}"
            )
        if len(set(entrant_names)) != len(entrant_names):
            raise InvalidArgument(f"an entrant is named twice: {sorted(entrant_names)}")
        if format == "swiss":
            check_swiss(rules, len(entrant_names), rounds, deals)
            duplicate = True  # each pairing's deals are played twice, the seats swapped
        elif rounds:
            raise InvalidArgument(
                f"rounds are for a Swiss tournament; a {format} one plays its deals ({rounds} "
                f"rounds given)"
            )
        elif len(entrant_names) < rules.players:
            raise InvalidArgument(
                f"a {rules.name} table needs {rules.players} entrants; {len(entrant_names)} given"
            )
        accounts = []
        for entrant in entrant_names:
            account = self._competition.account_named(entrant)
            if account is None:
                raise NotFound(
                    f"no account named {entrant!r}", reason="ACCOUNT_NOT_FOUND", account=entrant
                )
            accounts.append(account)
        ids = [a.id for a in accounts]
        if deals * (len(rules.teams) if duplicate else 1) > MAX_GAMES:
            raise InvalidArgument(f"that many deals make more than {MAX_GAMES} games")
        # A Swiss tournament's games are made round by round, each paired when the one before
        # is over.
        games = schedule(rules, ids, deals, duplicate) if format != "swiss" else []
        tournament = Tournament(
            id=str(uuid.uuid4()),
            name=name,
            organiser_id=organiser.id,
            preset=preset,
            options=options,
            deals=deals,
            duplicate=duplicate,
            format=format,
            time_control=time_control,
            status="created",
            secret=secrets.token_bytes(32),
            entrants=tuple(ids),
            created_at=datetime.now(UTC),
            max_games_per_entrant=max_games_per_entrant,
            rounds=rounds if format == "swiss" else 0,
        )
        self._competition.create_tournament(tournament, games)
        log.info("tournament %s (%s): %d games", tournament.id, name, len(games))
        return tournament

    def start(self, tournament_id: str, caller: Account) -> Tournament:
        """Start a tournament (its organiser only); starting one running or over is a no-op."""
        tournament = self.get(tournament_id)
        if caller.id != tournament.organiser_id:
            raise PermissionDenied(
                f"tournament {tournament_id} is not {caller.name!r}'s: only its organiser starts it",
                reason="NOT_YOUR_TOURNAMENT",
                tournament_id=tournament_id,
            )
        if tournament.status == "created":
            self._competition.set_tournament_status(tournament_id, "running")
        return self.get(tournament_id)

    def cancel(self, tournament_id: str, caller: Account) -> Tournament:
        """Make no more games of a tournament (its organiser only); the games being played
        go on to their end."""
        tournament = self.get(tournament_id)
        if caller.id != tournament.organiser_id:
            raise PermissionDenied(
                f"tournament {tournament_id} is not {caller.name!r}'s: only its organiser "
                f"cancels it",
                reason="NOT_YOUR_TOURNAMENT",
                tournament_id=tournament_id,
            )
        if tournament.status in ("finished", "cancelled"):
            raise PreconditionFailed(
                f"tournament {tournament_id} is {tournament.status} already",
                reason="TOURNAMENT_STATUS",
                tournament_id=tournament_id,
                status=tournament.status,
            )
        self._competition.set_tournament_status(tournament_id, "cancelled")
        log.info("tournament %s cancelled by %s", tournament_id, caller.name)
        return self.get(tournament_id)

    def get(self, tournament_id: str) -> Tournament:
        tournament = self._competition.tournament(tournament_id)
        if tournament is None:
            raise NotFound(
                f"no tournament {tournament_id}",
                reason="TOURNAMENT_NOT_FOUND",
                tournament_id=tournament_id,
            )
        return tournament

    # ------------------------------------------------------------ running

    def step(self) -> list[str]:
        """Advance every running tournament: make the games that can start, finish the
        tournaments whose games are all over. Returns the games made."""
        made: list[str] = []
        for tournament in self._competition.tournaments("running"):
            try:
                made += self._advance(tournament)
            except Exception:  # one tournament's trouble must not stop the others
                log.exception("tournament %s could not advance; trying again", tournament.id)
        for tournament_id in self._competition.tournament_ids("cancelled"):
            if tournament_id in self._settled:
                continue  # (not read again: a server keeps every cancelled tournament)
            try:
                cancelled = self._competition.tournament(tournament_id)
                if cancelled is not None:
                    self._settle(cancelled)
            except Exception:
                log.exception("cancelled tournament %s could not settle; trying again", tournament_id)
        return made

    def _settle(self, tournament: Tournament) -> None:
        """A cancelled tournament: publish each deal once the games made of it are over."""
        games = [g for g in self._competition.tournament_games(tournament.id) if g.game_id]
        by_deal: dict[int, list[TournamentGame]] = {}
        for g in games:
            by_deal.setdefault(g.deal, []).append(g)
        self._publish_finished_deals(tournament, by_deal)
        if all(g.status == "finished" for g in games):
            self._settled.add(tournament.id)

    def _advance(self, tournament: Tournament) -> list[str]:
        games = self._competition.tournament_games(tournament.id)
        swiss_done = False
        if tournament.format == "swiss":
            games, swiss_done = self._swiss_round(tournament, games)
        by_deal: dict[int, list[TournamentGame]] = {}
        for g in games:
            by_deal.setdefault(g.deal, []).append(g)
        self._publish_finished_deals(tournament, by_deal)
        if swiss_done or (
            tournament.format != "swiss" and all(g.status == "finished" for g in games)
        ):
            self._competition.set_tournament_status(tournament.id, "finished")
            log.info("tournament %s finished", tournament.id)
            return []
        limit = tournament.max_games_per_entrant
        # Each entrant's games in play: those made and not over, and the playings not yet made
        # of a deal begun (a crash between them): they are made first, whatever the bound.
        in_play: Counter[str] = Counter()
        for playings in by_deal.values():
            begun = any(g.game_id is not None for g in playings)
            for g in playings:
                if (g.game_id is not None and g.status not in _OVER) or (
                    g.game_id is None and begun
                ):
                    in_play.update(set(g.seating))  # games: a partnership's entrant sits twice
        accounts = self._competition.accounts(tournament.entrants)
        made: list[str] = []
        for playings in by_deal.values():  # in schedule order: deal after deal
            waiting = [g for g in playings if g.game_id is None]
            if not waiting:
                continue
            if not any(g.game_id is not None for g in playings):
                need = Counter(a for g in playings for a in set(g.seating))
                if not deal_fits(need, in_play, limit):
                    continue
                in_play.update(need)
            # All the playings of a deal at once (or the rest of them, after a crash).
            for g in waiting:
                game_id = self.make_game(tournament, g, accounts)
                if game_id is not None:
                    made.append(game_id)
        return made

    # ------------------------------------------------------------ Swiss

    def _swiss_round(
        self, tournament: Tournament, games: list[TournamentGame]
    ) -> tuple[list[TournamentGame], bool]:
        """Pair the next round of a Swiss tournament if the round before is over (every game
        of it made and over; or none paired yet). Returns the tournament's games (with the
        new round's, if paired) and whether the tournament is over: its last round paired and
        played. Two processes racing pair a round once (``pair_swiss_round``)."""
        paired = self._competition.swiss_rounds(tournament.id)
        current = len(paired)
        if current and not any(g.round == current for g in games):
            # ``games`` were read before another process paired the round (every round has
            # games): without them, the round would look over and the next be paired too.
            games = self._competition.tournament_games(tournament.id)
        if current and not all(g.status in _OVER for g in games if g.round == current):
            return games, False
        if current >= tournament.rounds:
            return games, True
        rules = rules_for(tournament.preset, tournament.options)
        names = {a.id: a.name for a in self._competition.accounts(tournament.entrants).values()}
        ids = {name: i for i, name in names.items()}
        bouts = [b for b in self.bouts(tournament, games, rules, names) if b.over]
        byes = [names[r.bye] for r in paired if r.bye is not None]
        entrants = [names[e] for e in tournament.entrants]
        table = swiss.standings(entrants, [b.bout for b in bouts], byes)
        # Ranked as the standings are, but equal lines in entry order (the organiser's
        # seeding) rather than by name: the first round pairs the entrants as entered.
        seed = {name: i for i, name in enumerate(entrants)}
        table.sort(key=lambda s: (-s.score, -s.buchholz, -s.marks_difference, seed[s.name]))
        pairing = swiss.pair(
            [s.name for s in table],
            {s.name: s.score for s in table},
            [b.bout.entrants for b in bouts],
            byes,
        )
        number = current + 1
        schedule = swiss_schedule(
            rules, number, tournament.deals, [(ids[a], ids[b]) for a, b in pairing.pairs]
        )
        bye = None if pairing.bye is None else ids[pairing.bye]
        if self._competition.pair_swiss_round(tournament.id, number, bye, schedule):
            log.info(
                "tournament %s: round %d paired: %s%s",
                tournament.id,
                number,
                ", ".join(f"{a} v {b}" for a, b in pairing.pairs),
                f"; bye {pairing.bye}" if pairing.bye else "",
            )
        return self._competition.tournament_games(tournament.id), False

    def bouts(
        self,
        tournament: Tournament,
        games: Sequence[TournamentGame],
        rules: engine.Ruleset,
        names: Mapping[str, str],
        hidden: Collection[int] = (),
    ) -> list[SwissBout]:
        """Each pairing of each Swiss round (by entrant name), in round order, its marks
        summed over its games over; ``over`` once every game of it is, and none of its deals
        is in ``hidden`` (deals still being played at another table: their results are
        secret)."""
        found: dict[tuple[int, frozenset[str]], SwissBout] = {}
        first_team = rules.teams[0][0]
        for g in games:
            if not g.round:
                continue
            a, b = names[g.seating[first_team]], names[g.seating[rules.teams[1][0]]]
            if g.rotation:
                a, b = b, a  # the second playing seats the pairing's first entrant in team 1
            key = (g.round, frozenset((a, b)))
            bout = found.get(key) or SwissBout(swiss.Bout(g.round, (a, b), (0, 0)), True)
            marks = bout.bout.marks
            over = bout.over and g.status in _OVER and g.game_id is not None
            if over and g.deal not in hidden:
                assert g.game_id is not None
                mine, theirs = self._playing_marks(g.game_id, g.rotation)
                marks = (marks[0] + mine, marks[1] + theirs)
            else:
                over = False
            found[key] = SwissBout(swiss.Bout(g.round, (a, b), marks), over)
        return list(found.values())

    def _playing_marks(self, game_id: str, a_team: int) -> tuple[int, int]:
        """The marks of the pairing's first entrant (in team ``a_team``) and of the second at
        one playing, as a match counts them (a resignation or a forfeit on time credits the
        winner with the hand it did not play)."""
        events = [codec.decode_event(r.payload) for r in self._app.store.load_events(game_id)]
        state = engine.replay(events)
        unscored_win = (
            len(events) >= 2
            and isinstance(events[-1], engine.GameWon)
            and isinstance(events[-2], engine.Resigned | engine.ClockExpired)
        )
        return playing_scores(state, unscored_win, a_team, "marks")

    def swiss_report(
        self, tournament: Tournament, hidden: Collection[int] = ()
    ) -> tuple[list[SwissRoundReport], list[swiss.SwissStanding]]:
        """The rounds paired (their pairings and byes) and the standings after the bouts over
        and public (``hidden``: deals still being played somewhere)."""
        rules = rules_for(tournament.preset, tournament.options)
        names = {a.id: a.name for a in self._competition.accounts(tournament.entrants).values()}
        games = self._competition.tournament_games(tournament.id)
        bouts = self.bouts(tournament, games, rules, names, hidden)
        rounds = []
        for paired in self._competition.swiss_rounds(tournament.id):
            rounds.append(
                SwissRoundReport(
                    paired.round,
                    tuple(b for b in bouts if b.bout.round == paired.round),
                    None if paired.bye is None else names[paired.bye],
                )
            )
        byes = [r.bye for r in rounds if r.bye is not None]
        table = swiss.standings(
            [names[e] for e in tournament.entrants], [b.bout for b in bouts if b.over], byes
        )
        return rounds, table

    def _publish_finished_deals(
        self, tournament: Tournament, by_deal: Mapping[int, list[TournamentGame]]
    ) -> None:
        """Reveal the seeds of every playing of each deal whose playings are all over (the
        game ends keep them secret while another playing of the deal goes on)."""
        for deal, playings in by_deal.items():
            if (tournament.id, deal) in self._published:
                continue
            if not all(g.status == "finished" and g.game_id for g in playings):
                continue
            game_ids = [g.game_id for g in playings if g.game_id is not None]
            if not self._competition.deals_revealed(game_ids):
                for game_id in game_ids:
                    self._app.store.reveal_seeds(game_id)
                if self.on_published is not None:
                    self.on_published()  # their results are public now: they may be rated
            self._published.add((tournament.id, deal))

    def make_game(
        self, tournament: Tournament, game: TournamentGame, accounts: Mapping[str, Account]
    ) -> str | None:
        """Make a schedule entry's game, reserving its seats for the entrants (``accounts``
        by id): its id, or ``None`` if it may not be made now (made already, here or by
        another process, or its deal does not fit an entrant's ``max_games_per_entrant``,
        as counted in the creating transaction)."""
        swiss = tournament.format == "swiss"
        if swiss:
            deal = game.deal - (game.round - 1) * tournament.deals
            label = f"round {game.round}, deal {deal + 1}, playing {game.rotation + 1}"
        else:
            rotation = f", rotation {game.rotation + 1}" if tournament.duplicate else ""
            label = f"deal {game.deal + 1}{rotation}"
        try:
            game_id, _ = self._app.create_game(
                tournament.preset,
                tournament.options,
                f"{tournament.name}: {label}"[:200],
                time_control=tournament.time_control,
                reservations=[(seat, accounts[a]) for seat, a in enumerate(game.seating)],
                # Fixed deals (and the embargo that comes with them) only where a deal is
                # played more than once.
                deal_secret=deal_secret(tournament.secret, game.deal)
                if tournament.duplicate
                else None,
                also=lambda session, game_id: CompetitionStore.link_tournament_game(
                    session, tournament.id, game.number, game.deal, game.seating, game_id
                ),
                rated=True,  # every tournament game is a rated game
                partnerships=swiss,  # a Swiss entrant holds both seats of its partnership
                tournament_id=tournament.id,
            )
        except GameAlreadyMade:
            return None  # another server process made it, or an entrant became busy
        log.info("tournament %s: game %d is %s", tournament.id, game.number, game_id)
        return game_id

    def wake(self) -> None:
        """Something a tournament waits for happened (on the event loop): a game ended, a
        tournament was started or cancelled."""
        self._wake.set()

    def game_committed(self, game: LiveGame, events: tuple[engine.Event, ...]) -> None:
        """``GameHost.on_game_over``: wake the director if the commit ``concerns`` it."""
        if self.concerns(game, events):
            self._wake.set()

    @staticmethod
    def concerns(game: LiveGame, events: tuple[engine.Event, ...]) -> bool:
        """Whether a commit may let a tournament go on: the end of a tournament's game (the
        others', most of a busy server's, do not)."""
        return bool(game.over and events and game.made_for.tournament_id is not None)

    async def run(self, retry_after: float = 1.0) -> None:
        """Advance the running tournaments whenever something happens (the server's
        background task): no polling, but a failed step is tried again after
        ``retry_after`` seconds."""
        while True:
            self._wake.clear()
            try:
                await asyncio.to_thread(self.step)
            except Exception:
                log.exception("advancing the tournaments failed; trying again")
                await asyncio.sleep(retry_after)
                continue
            await self._wake.wait()

    # ------------------------------------------------------------ results

    def results(self, tournament: Tournament) -> list[tuple[TournamentGame, engine.GameState | None]]:
        """Every game of the schedule with its state once it is made."""
        found: list[tuple[TournamentGame, engine.GameState | None]] = []
        for g in self._competition.tournament_games(tournament.id):
            state = self._app.load(g.game_id)[0] if g.game_id is not None else None
            found.append((g, state))
        return found

    def standings(
        self, tournament: Tournament, results: Sequence[tuple[TournamentGame, engine.GameState | None]]
    ) -> tuple[list[Standing], list[Standing]]:
        """Ratings and totals from the finished games, in schedule order."""
        names = {a.id: a.name for a in self._competition.accounts(tournament.entrants).values()}
        finished = []
        for g, state in results:
            if state is None or state.phase is not engine.Phase.GAME_OVER or state.winner is None:
                continue
            finished.append(
                GameResult(
                    seats=tuple(names[a] for a in g.seating),
                    teams=state.rules.teams,
                    scores=state.scores,
                    winner=state.winner,
                )
            )
        return standings(finished)

