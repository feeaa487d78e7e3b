"""Swiss pairing and standings (``boneyard.server.competition.swiss``): one test per rule of
the module's doc, on the pure functions."""

from __future__ import annotations

import itertools
import random

import pytest

from boneyard.server.competition.swiss import Bout, Pairing, pair, standings

EIGHT = ["a", "b", "c", "d", "e", "f", "g", "h"]


def flat(pairing: Pairing) -> set[frozenset[str]]:
    return {frozenset(p) for p in pairing.pairs}


def test_round_one_pairs_the_top_half_against_the_bottom_half() -> None:
    pairing = pair(EIGHT, dict.fromkeys(EIGHT, 0.0), [], [])
    assert pairing == Pairing((("a", "e"), ("b", "f"), ("c", "g"), ("d", "h")), None)


def test_entrants_are_paired_within_their_score_group() -> None:
    scores = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 0.0, "f": 0.0, "g": 0.0, "h": 0.0}
    met = [("a", "e"), ("b", "f"), ("c", "g"), ("d", "h")]
    pairing = pair(EIGHT, scores, met, [])
    assert pairing.pairs == (("a", "c"), ("b", "d"), ("e", "g"), ("f", "h"))


def test_the_odd_one_of_a_score_group_floats_down_to_the_highest_of_the_next() -> None:
    ranked = ["a", "b", "c", "d", "e", "f"]
    scores = {"a": 2.0, "b": 2.0, "c": 2.0, "d": 1.0, "e": 1.0, "f": 1.0}
    pairing = pair(ranked, scores, [], [])
    # a-b within the top group; c floats down to d, the highest of the next; e-f.
    assert pairing.pairs == (("a", "b"), ("c", "d"), ("e", "f"))


def test_no_two_entrants_meet_again_where_avoidable() -> None:
    scores = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 0.0, "f": 0.0, "g": 0.0, "h": 0.0}
    # a met c already: within the group, a meets the next it has not met.
    met = [("a", "e"), ("b", "f"), ("c", "g"), ("d", "h"), ("a", "c")]
    pairing = pair(EIGHT, scores, met, [])
    assert frozenset(("a", "c")) not in flat(pairing)
    assert pairing.pairs[:2] == (("a", "d"), ("b", "c"))


def test_a_score_group_that_cannot_avoid_a_rematch_sends_a_floater_down() -> None:
    ranked = ["a", "b", "c", "d"]
    scores = {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0}
    pairing = pair(ranked, scores, [("a", "b"), ("c", "d")], [])
    assert not flat(pairing) & {frozenset("ab"), frozenset("cd")}
    assert pairing.pairs == (("a", "c"), ("b", "d"))


def test_a_rematch_is_allowed_when_unavoidable() -> None:
    assert pair(["a", "b"], {"a": 1.0, "b": 0.0}, [("a", "b")], []).pairs == (("a", "b"),)


def test_the_fewest_rematches_are_made_when_some_are_unavoidable() -> None:
    ranked = ["a", "b", "c", "d"]
    # Everyone has met everyone but c-d twice: one rematch is unavoidable per pair; the pairing
    # repeats the pairs met once rather than c-d a third time.
    met = [("a", "b"), ("c", "d"), ("a", "c"), ("b", "d"), ("a", "d"), ("b", "c"), ("c", "d")]
    pairing = pair(ranked, dict.fromkeys(ranked, 1.0), met, [])
    assert frozenset("cd") not in flat(pairing)
    assert len(pairing.pairs) == 2


def test_the_bye_goes_to_the_lowest_ranked_entrant_without_one() -> None:
    ranked = ["a", "b", "c", "d", "e"]
    scores = {"a": 1.0, "b": 1.0, "c": 0.0, "d": 0.0, "e": 1.0}
    pairing = pair(ranked, scores, [("a", "c"), ("b", "d")], ["e"])
    # e had the bye; d is the lowest-ranked without one.
    assert pairing.bye == "d"
    assert len(pairing.pairs) == 2


def test_no_entrant_gets_a_second_bye_where_avoidable() -> None:
    ranked = ["a", "b", "c"]
    pairing = pair(ranked, {"a": 1.0, "b": 1.0, "c": 1.0}, [("a", "b")], ["c"])
    assert pairing.bye != "c"
    # c would rather meet someone new, but a second bye is worse: a-b is the only other way.
    assert pair(ranked, {"a": 1.0, "b": 1.0, "c": 1.0}, [("a", "c"), ("b", "c")], ["c"]).bye != "c"


def test_the_bye_moves_up_when_the_lowest_ones_bye_would_force_a_rematch() -> None:
    ranked = ["a", "b", "c"]
    # Without c, a and b would meet again; with b's bye, a-c is new.
    pairing = pair(ranked, {"a": 1.0, "b": 0.0, "c": 0.0}, [("a", "b")], [])
    assert pairing == Pairing((("a", "c"),), "b")


def test_a_second_bye_only_once_everyone_has_had_one() -> None:
    ranked = ["a", "b", "c"]
    pairing = pair(ranked, dict.fromkeys(ranked, 1.0), [], ["a", "b", "c"])
    assert pairing.bye == "c"  # all have one: the lowest-ranked again


def test_pairing_is_deterministic() -> None:
    ranked = [f"e{i:02}" for i in range(13)]
    rng = random.Random(7)
    scores = {e: float(rng.randint(0, 3)) for e in ranked}
    met = [tuple(rng.sample(ranked, 2)) for _ in range(20)]
    byes = ["e03", "e11"]
    first = pair(ranked, scores, met, byes)
    for _ in range(5):
        shuffled = met[:]
        rng.shuffle(shuffled)
        assert pair(ranked, scores, shuffled, list(reversed(byes))) == first


def test_an_entrant_named_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        pair(["a", "a"], {}, [], [])


def play_rounds(entrants: list[str], rounds: int, seed: int) -> list[Pairing]:
    """A Swiss event with random results, paired round after round from its standings."""
    rng = random.Random(seed)
    bouts: list[Bout] = []
    byes: list[str] = []
    pairings = []
    for number in range(1, rounds + 1):
        table = standings(entrants, bouts, byes)
        pairing = pair(
            [s.name for s in table],
            {s.name: s.score for s in table},
            [b.entrants for b in bouts],
            byes,
        )
        pairings.append(pairing)
        for first, second in pairing.pairs:
            bouts.append(Bout(number, (first, second), (rng.randint(0, 3), rng.randint(0, 3))))
        if pairing.bye is not None:
            byes.append(pairing.bye)
    return pairings


@pytest.mark.parametrize("size", [7, 16, 64])
def test_a_field_is_paired_without_rematches_for_fewer_rounds_than_it_has_entrants(
    size: int,
) -> None:
    entrants = [f"bot{i:02}" for i in range(size)]
    rounds = min(size - 1, 9)
    pairings = play_rounds(entrants, rounds, seed=size)
    met = [frozenset(p) for pairing in pairings for p in pairing.pairs]
    assert len(met) == len(set(met)), "a pair met twice"
    byes = [p.bye for p in pairings if p.bye is not None]
    assert len(byes) == len(set(byes)), "a second bye"
    for pairing in pairings:
        seated = [e for p in pairing.pairs for e in p] + ([pairing.bye] if pairing.bye else [])
        assert sorted(seated) == entrants


def test_a_bye_scores_as_a_won_bout_without_marks() -> None:
    table = standings(["a", "b", "c"], [Bout(1, ("a", "b"), (2, 1))], ["c"])
    by_name = {s.name: s for s in table}
    assert by_name["c"].score == by_name["a"].score == 1.0
    assert (by_name["c"].byes, by_name["c"].marks_for, by_name["c"].buchholz) == (1, 0, 0.0)


def test_a_drawn_bout_is_half_a_point_each() -> None:
    table = standings(["a", "b"], [Bout(1, ("a", "b"), (2, 2))], [])
    assert [(s.score, s.draws) for s in table] == [(0.5, 1), (0.5, 1)]


def test_standings_break_ties_by_buchholz_then_marks_difference_then_name() -> None:
    bouts = [
        Bout(1, ("a", "b"), (3, 0)),
        Bout(1, ("c", "d"), (1, 0)),
        Bout(2, ("a", "c"), (0, 2)),  # c 2 points, a 1
        Bout(2, ("b", "d"), (2, 0)),  # b 1 point, d 0
    ]
    table = standings(["a", "b", "c", "d"], bouts, [])
    # a and b have 1 point: a met b (1) and c (2): Buchholz 3; b met a and d: 1.
    assert [s.name for s in table] == ["c", "a", "b", "d"]
    assert [s.buchholz for s in table] == [1.0, 3.0, 1.0, 3.0]
    tied = standings(
        ["x", "y", "z", "w"], [Bout(1, ("x", "y"), (3, 1)), Bout(1, ("z", "w"), (1, 0))], []
    )
    # x and z: 1 point, Buchholz 0 each: x's marks difference (+2) beats z's (+1).
    assert [s.name for s in tied][:2] == ["x", "z"]
    named = standings(["q", "p"], [], [])
    assert [s.name for s in named] == ["p", "q"]


def test_every_small_field_pairs_everyone_once_a_round() -> None:
    for size in range(2, 9):
        entrants = [chr(ord("a") + i) for i in range(size)]
        for pairing in play_rounds(entrants, size + 1, seed=size):
            seated = list(itertools.chain.from_iterable(pairing.pairs))
            assert len(seated) == len(set(seated)) == size - (size % 2)
