"""Tournament standings (server/standings.py): totals by hand, ratings by OpenSkill's
Plackett-Luce, partnerships only where teams have partners, and bad games refused."""

from __future__ import annotations

import itertools

import pytest

from boneyard.server.competition.standings import GameResult, Standing, standings

FORTY_TWO = ((0, 2), (1, 3))
MOON = ((0,), (1,), (2,))
PRIOR_MU = 25.0


def forty_two(seats: str, scores: tuple[int, int], winner: int | None = None) -> GameResult:
    """A game of Texas 42; ``seats`` are one-letter names, seat by seat."""
    if winner is None:
        winner = 0 if scores[0] > scores[1] else 1
    return GameResult(tuple(seats), FORTY_TWO, scores, winner)


def moon(seats: str, scores: tuple[int, int, int], winner: int | None = None) -> GameResult:
    """A game of Moon; the winner is the highest score unless given."""
    if winner is None:
        winner = scores.index(max(scores))
    return GameResult(tuple(seats), MOON, scores, winner)


def by_name(lines: list[Standing]) -> dict[str, Standing]:
    return {s.name: s for s in lines}


def totals(lines: list[Standing]) -> dict[str, tuple[int, int, int, int]]:
    return {s.name: (s.games, s.wins, s.score_for, s.score_against) for s in lines}


# Seats A B C D: A & C against B & D, then A & B against C & D.
TEXAS_42_GAMES = [
    forty_two("ABCD", (7, 3)),
    forty_two("ABCD", (5, 7)),
    forty_two("ACBD", (7, 6)),
]
MOON_GAMES = [
    moon("ABC", (21, 7, -3)),
    moon("BCA", (21, 14, 4)),
]


def test_no_games_no_standings() -> None:
    assert standings([]) == ([], [])


def test_entrant_who_wins_every_game_ranks_first_above_the_prior_and_loser_below() -> None:
    games = [moon("ABC", (21, 10, -5)), moon("CAB", (2, 21, 9)), moon("BCA", (12, -4, 21))]
    individuals, _ = standings(games)
    assert [s.name for s in individuals] == ["A", "B", "C"]
    a, b, c = individuals
    assert a.wins == 3 and a.rating > PRIOR_MU
    assert c.wins == 0 and c.rating < PRIOR_MU
    assert a.ordinal > b.ordinal > c.ordinal


def test_partnership_that_wins_every_game_ranks_first() -> None:
    games = [forty_two("ABCD", (7, 2)), forty_two("BCDA", (4, 7)), forty_two("ABCD", (7, 0))]
    individuals, partnerships = standings(games)
    assert [s.name for s in partnerships] == ["A & C", "B & D"]
    winners, losers = partnerships
    assert winners.members == ("A", "C") and winners.wins == 3
    assert winners.rating > PRIOR_MU > losers.rating
    assert {s.name for s in individuals[:2]} == {"A", "C"}
    assert all(s.rating > PRIOR_MU for s in individuals[:2])
    assert all(s.rating < PRIOR_MU for s in individuals[2:])


def test_totals_are_the_sums_by_hand_for_texas_42() -> None:
    individuals, partnerships = standings(TEXAS_42_GAMES)
    #                games wins for against
    assert totals(individuals) == {
        "A": (3, 2, 7 + 5 + 7, 3 + 7 + 6),
        "B": (3, 2, 3 + 7 + 7, 7 + 5 + 6),
        "C": (3, 1, 7 + 5 + 6, 3 + 7 + 7),
        "D": (3, 1, 3 + 7 + 6, 7 + 5 + 7),
    }
    assert totals(partnerships) == {
        "A & C": (2, 1, 7 + 5, 3 + 7),
        "B & D": (2, 1, 3 + 7, 7 + 5),
        "A & B": (1, 1, 7, 6),
        "C & D": (1, 0, 6, 7),
    }


def test_totals_are_the_sums_by_hand_for_moon_with_negative_scores() -> None:
    individuals, _ = standings(MOON_GAMES)
    assert totals(individuals) == {
        "A": (2, 1, 21 + 4, (7 - 3) + (21 + 14)),
        "B": (2, 1, 7 + 21, (21 - 3) + (14 + 4)),
        "C": (2, 0, -3 + 14, (21 + 7) + (21 + 4)),
    }


def test_partnerships_appear_for_texas_42_not_for_moon() -> None:
    _, partnerships = standings(TEXAS_42_GAMES)
    assert {s.members for s in partnerships} == {("A", "C"), ("B", "D"), ("A", "B"), ("C", "D")}
    _, partnerships = standings(MOON_GAMES)
    assert partnerships == []


def test_partnership_is_named_by_its_members_sorted_whatever_the_seats() -> None:
    # D sits before B: still "B & D".
    _, partnerships = standings([forty_two("ADCB", (7, 1)), forty_two("CBAD", (7, 1))])
    assert by_name(partnerships)["B & D"].members == ("B", "D")
    assert by_name(partnerships)["B & D"].games == 2
    assert by_name(partnerships)["A & C"].games == 2


def test_individual_line_is_its_own_name_alone() -> None:
    individuals, _ = standings(MOON_GAMES)
    assert [(s.name, s.members) for s in sorted(individuals, key=lambda s: s.name)] == [
        ("A", ("A",)),
        ("B", ("B",)),
        ("C", ("C",)),
    ]


def test_uncertainty_shrinks_with_each_game_played() -> None:
    games = [moon("ABC", (21, 10, 3)), moon("ABC", (5, 21, 9)), moon("ABC", (8, 1, 21))] * 2
    sigmas = []
    for played in range(1, len(games) + 1):
        individuals, _ = standings(games[:played])
        sigmas.append(by_name(individuals)["A"].uncertainty)
    assert sigmas[0] < PRIOR_MU / 3
    assert all(later < earlier for earlier, later in itertools.pairwise(sigmas))


def test_ordinal_is_rating_less_three_uncertainties_and_orders_the_list() -> None:
    individuals, partnerships = standings(TEXAS_42_GAMES)
    for s in individuals + partnerships:
        assert s.ordinal == pytest.approx(s.rating - 3 * s.uncertainty)
    for lines in (individuals, partnerships):
        assert lines == sorted(lines, key=lambda s: (-s.ordinal, s.name))


def test_one_lucky_win_ranks_below_an_even_record_over_many_games() -> None:
    def duel(first: str, second: str, first_wins: bool) -> GameResult:
        return GameResult(
            (first, second), ((0,), (1,)), (1, 0) if first_wins else (0, 1), 0 if first_wins else 1
        )

    # X beats Z in its only game; Y and W split ten games.
    games = [duel("X", "Z", True)] + [duel("Y", "W", i % 2 == 0) for i in range(10)]
    individuals, _ = standings(games)
    lines = by_name(individuals)
    assert lines["X"].rating > lines["Y"].rating  # the higher mean...
    assert lines["X"].ordinal < lines["Y"].ordinal  # ...but far less sure
    assert [s.name for s in individuals] == ["W", "Y", "X", "Z"]


def test_order_of_games_matters() -> None:
    forward, _ = standings(TEXAS_42_GAMES)
    backward, _ = standings(list(reversed(TEXAS_42_GAMES)))
    assert totals(forward) == totals(backward)
    assert by_name(forward)["A"].rating != by_name(backward)["A"].rating


def test_same_input_gives_identical_output_bit_for_bit() -> None:
    games = TEXAS_42_GAMES + [forty_two("DCBA", (7, 7 - 1))]
    first = standings(games)
    again = standings(iter(list(games)))  # any iterable, consumed once
    assert first == again
    assert repr(first) == repr(again)
    floats = [(s.rating.hex(), s.uncertainty.hex()) for s in first[0] + first[1]]
    assert floats == [(s.rating.hex(), s.uncertainty.hex()) for s in again[0] + again[1]]


def test_the_winner_ranks_first_even_with_fewer_points() -> None:
    # A team that forfeits on time while ahead, or a bidding team over the target with fewer
    # points than another: the game is the winner's, and so is the rating.
    individuals, _ = standings([forty_two("ABCD", (3, 5), winner=0)])
    rated = by_name(individuals)
    assert rated["A"].rating > PRIOR_MU > rated["B"].rating
    assert rated["A"].wins == 1 and rated["B"].wins == 0


def test_losers_tied_on_score_stay_equal() -> None:
    individuals, _ = standings([moon("ABC", (21, 4, 4), winner=0)])
    a, b, c = by_name(individuals)["A"], by_name(individuals)["B"], by_name(individuals)["C"]
    assert (b.rating, b.uncertainty) == (c.rating, c.uncertainty)
    assert a.rating > PRIOR_MU > b.rating


def test_losers_are_ordered_by_score() -> None:
    individuals, _ = standings([moon("ABC", (21, 9, 3), winner=0)])
    rated = by_name(individuals)
    assert rated["A"].rating > rated["B"].rating > rated["C"].rating


def test_entrants_who_never_played_do_not_appear() -> None:
    individuals, _ = standings(MOON_GAMES)
    assert {s.name for s in individuals} == {"A", "B", "C"}


@pytest.mark.parametrize(
    ("game", "message"),
    [
        (GameResult(("A", "B", "C", "D"), FORTY_TWO, (7, 3), 2), "winner 2 is not a team"),
        (GameResult(("A", "B", "C", "D"), FORTY_TWO, (7, 3), -1), "winner -1 is not a team"),
        (GameResult(("A", "B", "C", "D"), FORTY_TWO, (7, 3, 0), 0), "3 scores for 2 teams"),
        (GameResult(("A", "B", "C"), MOON, (21, 3), 0), "2 scores for 3 teams"),
        (GameResult(("A", "B", "C"), FORTY_TWO, (7, 3), 0), "not the 3 seats"),
        (GameResult(("A", "B", "C", "D", "E"), FORTY_TWO, (7, 3), 0), "not the 5 seats"),
        (GameResult(("A", "B", "C", "D"), ((0, 2), (1, 2)), (7, 3), 0), "not the 4 seats"),
        (GameResult(("A", "B", "C", "D"), ((0, 1, 2, 3),), (7,), 0), "at least two teams"),
        (GameResult(("A", "B", "C"), ((0, 1, 2), ()), (7, 3), 0), "a team has no seats"),
        (GameResult(("A", "B", "A"), MOON, (21, 3, 0), 0), "'A' in more than one seat"),
    ],
)
def test_malformed_game_raises_value_error_naming_it(game: GameResult, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        standings([*MOON_GAMES, game])
    assert str(raised.value).startswith("game 2 of the results: ")
    assert repr(game) in str(raised.value)
