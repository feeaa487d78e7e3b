"""The standings of a tournament: individuals and partnerships, with ratings.

Ratings come from OpenSkill (PyPI ``openskill``, 6.x): one ``PlackettLuce`` model with its
default parameters (mu 25, sigma 25/3, beta 25/6, tau 25/300), the Weng-Lin Bayesian
approximation of the Plackett-Luce model, which rates games of any number of teams of any size.
That covers Texas 42 (two teams of two, or three of two and two of three with six players) and
Moon (every player alone) with the same code. Games are rated one by one in the order
given, each by its finishing order: the winner first, then the other teams by their final
scores (equal scores are a tie). The winner comes first even when it has fewer points, which
the rules allow (a bidding team over the target wins; a team that forfeits on time loses while
ahead): the rating follows who won the game, as the players and the wins column do.

Individuals are rated with each team as the list of its members' ratings. A partnership (the
set of players of a team of more than one) is rated as an entrant of its own, in the games
where every team is a partnership, each team being the one rating of its partnership; so for
Moon, where every team is one player, there are no partnerships.

The lists are ordered by the ordinal, ``mu - 3 * sigma``, best first (ties by name): the
conservative estimate of skill, three standard deviations below the mean, that the true skill
is almost surely above. An entrant with one lucky win over a strong player can have a high mu,
but its sigma is still near the prior's, so its ordinal stays low; the ordinal comes up to mu
only as games played shrink sigma. Ordering by mu alone would reward luck in few games.

Pure: no I/O, no clock, no randomness (OpenSkill gives each rating object a random ``id``, which
nothing here reads). The same results give the same standings bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from openskill.models import PlackettLuce, PlackettLuceRating

__all__ = ["GameResult", "Standing", "finishing_order", "standings"]

_PARTNER_JOIN = " & "

_K = TypeVar("_K", str, tuple[str, ...])


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game of the tournament."""

    seats: tuple[str, ...]
    """The entrant's name in each seat, by seat."""
    teams: tuple[tuple[int, ...], ...]
    """The seats of each team: Texas 42 ``((0, 2), (1, 3))``; Moon ``((0,), (1,), (2,))``."""
    scores: tuple[int, ...]
    """The final score of each team, by team: marks or points (may be negative in Moon)."""
    winner: int
    """The index of the winning team in ``teams``."""


@dataclass(frozen=True, slots=True)
class Standing:
    """An entrant's (or a partnership's) line in the standings."""

    name: str
    """The entrant, or a partnership's members' names, sorted, joined by ``" & "``."""
    members: tuple[str, ...]
    """The entrant alone, or the partnership's members, sorted."""
    rating: float
    """The estimate of skill, OpenSkill's mu."""
    uncertainty: float
    """OpenSkill's sigma: how far the true skill may be from ``rating``."""
    ordinal: float
    """``rating - 3 * uncertainty``: what the standings are ordered by, best first."""
    games: int
    wins: int
    score_for: int
    """The sum over its games of its team's score."""
    score_against: int
    """The sum over its games of the other teams' scores."""


@dataclass(slots=True)
class _Tally:
    """The running record of one rated entrant (a player or a partnership)."""

    rating: PlackettLuceRating
    games: int = 0
    wins: int = 0
    score_for: int = 0
    score_against: int = 0

    def count(self, result: GameResult, team: int) -> None:
        mine = result.scores[team]
        self.games += 1
        self.wins += 1 if result.winner == team else 0
        self.score_for += mine
        self.score_against += sum(result.scores) - mine


def standings(results: Iterable[GameResult]) -> tuple[list[Standing], list[Standing]]:
    """``(individuals, partnerships)`` after ``results``, the finished games in the order they
    were played. Only entrants who played appear. Raises ``ValueError`` for a malformed game."""
    model = PlackettLuce()
    players: dict[str, _Tally] = {}
    partnerships: dict[tuple[str, ...], _Tally] = {}
    for number, result in enumerate(results):
        _check(number, result)
        members = [tuple(result.seats[s] for s in team) for team in result.teams]
        ranks = finishing_order(result)

        tallies = [[_tally(players, model, name) for name in team] for team in members]
        rated = model.rate([[t.rating for t in team] for team in tallies], ranks=ranks)
        for t, team in enumerate(tallies):
            for tally, rating in zip(team, rated[t], strict=True):
                tally.rating = rating
                tally.count(result, t)

        if all(len(team) > 1 for team in members):
            pairs = [_tally(partnerships, model, tuple(sorted(team))) for team in members]
            rated = model.rate([[p.rating] for p in pairs], ranks=ranks)
            for t, pair in enumerate(pairs):
                pair.rating = rated[t][0]
                pair.count(result, t)

    individuals = [_standing((name,), tally) for name, tally in players.items()]
    partners = [_standing(key, tally) for key, tally in partnerships.items()]
    return _ranked(individuals), _ranked(partners)


def finishing_order(result: GameResult) -> list[float]:
    """Each team's place (lower is better): the winner 1, the others by score, ties sharing."""
    others = sorted({s for t, s in enumerate(result.scores) if t != result.winner}, reverse=True)
    return [
        1.0 if t == result.winner else 2.0 + others.index(s) for t, s in enumerate(result.scores)
    ]


def _tally(tallies: dict[_K, _Tally], model: PlackettLuce, key: _K) -> _Tally:
    tally = tallies.get(key)
    if tally is None:
        tally = tallies[key] = _Tally(model.rating())
    return tally


def _standing(members: tuple[str, ...], tally: _Tally) -> Standing:
    r = tally.rating
    return Standing(
        name=_PARTNER_JOIN.join(members),
        members=members,
        rating=r.mu,
        uncertainty=r.sigma,
        ordinal=r.ordinal(),
        games=tally.games,
        wins=tally.wins,
        score_for=tally.score_for,
        score_against=tally.score_against,
    )


def _ranked(lines: list[Standing]) -> list[Standing]:
    return sorted(lines, key=lambda s: (-s.ordinal, s.name))


def _check(number: int, result: GameResult) -> None:
    """Raise ``ValueError`` unless ``result`` is a well-formed game: its teams split its seats
    (every seat in exactly one team), one score per team, a winner among the teams, and no
    entrant in two seats."""

    def bad(why: str) -> ValueError:
        return ValueError(f"game {number} of the results: {why}: {result!r}")

    seats, teams, scores = result.seats, result.teams, result.scores
    if len(teams) < 2:
        raise bad(f"a game needs at least two teams, not {len(teams)}")
    if len(scores) != len(teams):
        raise bad(f"{len(scores)} scores for {len(teams)} teams")
    if not 0 <= result.winner < len(teams):
        raise bad(f"winner {result.winner} is not a team (teams 0 to {len(teams) - 1})")
    if any(not team for team in teams):
        raise bad("a team has no seats")
    in_teams = sorted(s for team in teams for s in team)
    if in_teams != list(range(len(seats))):
        raise bad(f"the teams' seats {in_teams} are not the {len(seats)} seats, each in one team")
    if len(set(seats)) != len(seats):
        twice = sorted({name for name in seats if seats.count(name) > 1})
        raise bad(f"{', '.join(map(repr, twice))} in more than one seat")
