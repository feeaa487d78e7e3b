"""Seeded matches in process (the engine and the strategies directly, as
benchmarks/bench_duplicate.py plays them): duplicate Texas 42 deals, each deal's figure A's
marks minus B's over both playings, weighed after each deal by the SPRT a match on the server
runs (boneyard.server.competition.match_stats), stopping the moment it decides.

- A strong strategy against a weak one: the test stops early and names the strong one.
- A strategy against itself: the test never says "stronger" within 2,000 deals.
"""

from __future__ import annotations

from collections.abc import Callable

from boneyard import engine
from boneyard.bots import Strategy, strategy
from boneyard.bots.duplicate import play_duplicate_deal
from boneyard.server.competition.match_stats import Sprt, SprtState, Tally, Verdict, sprt_state

RULES = engine.ruleset("texas42", {"hand_limit": 1})
SPRT = Sprt(m0=0.0, m1=0.1)
"""H0 "A is no better" against H1 "A is better by a tenth of a mark a deal", 5% errors."""
MAX_DEALS = 2_000


def side(name: str) -> Callable[[int], Strategy]:
    return lambda seed: strategy(name, seed)


def sprt_match(a: str, b: str, seed: int) -> tuple[Tally, SprtState]:
    """Deals of A against B until the SPRT decides (or ``MAX_DEALS``)."""
    tally = Tally()
    state = sprt_state(tally, SPRT)
    for deal in range(MAX_DEALS):
        played = play_duplicate_deal(RULES, side(a), side(b), seed * 1_000_003 + deal)
        tally = tally.add(played.figure)
        state = sprt_state(tally, SPRT)
        if state.verdict is not Verdict.UNDECIDED:
            break
    return tally, state


def test_an_sprt_match_of_the_heuristic_against_random_stops_early_naming_the_heuristic() -> None:
    tally, state = sprt_match("heuristic", "random", seed=1)
    assert state.verdict is Verdict.STRONGER
    assert tally.deals < 200, f"took {tally.deals} deals"
    assert tally.mean > SPRT.m1 and state.llr >= state.upper


def test_the_same_match_the_other_way_round_says_random_is_not_stronger() -> None:
    tally, state = sprt_match("random", "heuristic", seed=1)
    assert state.verdict is Verdict.NOT_STRONGER
    assert tally.deals < 200, f"took {tally.deals} deals"


def test_a_strategy_against_itself_does_not_stop_on_stronger_within_2000_deals() -> None:
    # Random play: the two sides draw on different seeds, so the deals do vary.
    tally, state = sprt_match("random", "random", seed=1)
    assert state.verdict is not Verdict.STRONGER
    assert tally.variance > 0
    assert tally.deals == MAX_DEALS or state.verdict is Verdict.NOT_STRONGER


def test_two_copies_of_a_deterministic_strategy_tie_every_deal_and_decide_nothing() -> None:
    # The heuristic decides the same in the same seat with the same hand: the second playing
    # mirrors the first, and duplicate play leaves nothing to weigh.
    tally = Tally.of(
        play_duplicate_deal(RULES, side("heuristic"), side("heuristic"), deal).figure
        for deal in range(100)
    )
    assert tally.draws == 100
    assert sprt_state(tally, SPRT).verdict is Verdict.UNDECIDED


def test_counting_points_each_playing_splits_its_hands_42_points_between_the_sides() -> None:
    # Every trick played (end_hand_when_decided off): no tile is left to count for nobody.
    rules = engine.ruleset("texas42", {"hand_limit": 1, "end_hand_when_decided": False})
    for deal in range(5):
        played = play_duplicate_deal(rules, side("heuristic"), side("random"), deal, points=True)
        assert played.a + played.b == 2 * 42
