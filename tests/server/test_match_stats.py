"""A match's figures (server/competition/match_stats.py) against values worked by hand: the mean
per deal and its interval, the win rate and its Wilson interval, Wald's bounds and the
generalized log-likelihood ratio of the SPRT, and the verdict each side of the bounds."""

from __future__ import annotations

import math

import pytest

from boneyard.server.competition.match_stats import (
    Sprt,
    Tally,
    Verdict,
    llr,
    mean_interval,
    sprt_state,
    wilson,
)

FIGURES = [1, -1, 2, 0]
"""Four deals: mean 0.5, observed variance 1.25, sample variance 5/3."""


def test_a_tally_adds_up_the_deals_figures() -> None:
    tally = Tally.of(FIGURES)
    assert (tally.deals, tally.total, tally.squares) == (4, 2, 6)
    assert (tally.wins, tally.draws, tally.losses) == (2, 1, 1)
    assert tally.mean == 0.5
    assert tally.variance == pytest.approx(1.25)


def test_a_drawn_deal_counts_half_in_the_win_rate() -> None:
    assert Tally.of(FIGURES).win_rate == pytest.approx(2.5 / 4)


def test_the_mean_interval_is_the_normal_one_with_the_sample_deviation() -> None:
    interval = mean_interval(Tally.of(FIGURES))
    half = 1.959964 * math.sqrt((5 / 3) / 4)  # 1.2652
    assert (interval.low, interval.high) == pytest.approx((0.5 - half, 0.5 + half))


def test_the_mean_interval_of_fewer_than_two_deals_is_the_mean_alone() -> None:
    interval = mean_interval(Tally.of([3]))
    assert (interval.low, interval.high) == (3, 3)


def test_the_wilson_interval_of_five_wins_in_ten() -> None:
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)


def test_the_wilson_interval_of_every_deal_won_reaches_one_and_no_further() -> None:
    low, high = wilson(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-4) and high == pytest.approx(1.0)
    assert high <= 1.0


def test_the_wilson_interval_of_no_deal_is_everything() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    assert Tally().win_rate_interval.low == 0.0 and Tally().win_rate_interval.high == 1.0


def test_wald_bounds_of_five_percent_errors_are_plus_and_minus_2_944() -> None:
    sprt = Sprt(0, 0.1)
    assert sprt.lower == pytest.approx(-2.944439, abs=1e-6)
    assert sprt.upper == pytest.approx(2.944439, abs=1e-6)


def test_wald_bounds_of_unequal_errors() -> None:
    sprt = Sprt(0, 0.1, alpha=0.05, beta=0.1)
    assert sprt.lower == pytest.approx(math.log(0.1 / 0.95))  # -2.2513
    assert sprt.upper == pytest.approx(math.log(0.9 / 0.05))  # 2.8904


def test_the_llr_is_the_normal_approximation_with_the_observed_variance() -> None:
    # n (m1 - m0) (2 mean - m0 - m1) / (2 v) = 4 * 0.1 * 0.9 / 2.5
    assert llr(Tally.of(FIGURES), Sprt(0, 0.1)) == pytest.approx(0.144)


def test_the_llr_is_minus_the_same_for_the_mirrored_deals_about_the_midpoint() -> None:
    # Figures mirrored about (m0 + m1) / 2 = 0.05 give the LLR's opposite.
    mirrored = [0.1 - x for x in FIGURES]
    assert llr(Tally.of(mirrored), Sprt(0, 0.1)) == pytest.approx(-0.144)


def test_deals_that_never_vary_leave_the_test_undecided() -> None:
    tied = Tally.of([0] * 500)
    state = sprt_state(tied, Sprt(0, 0.1))
    assert state.llr == 0 and state.verdict is Verdict.UNDECIDED
    assert sprt_state(Tally.of([2]), Sprt(0, 0.1)).llr == 0


def test_an_llr_at_the_upper_bound_says_a_is_stronger() -> None:
    # 100 deals of mean 1 and variance 1 (half 0, half 2): LLR = 100 * 0.1 * 1.9 / 2 = 9.5
    state = sprt_state(Tally.of([0, 2] * 50), Sprt(0, 0.1))
    assert state.llr == pytest.approx(9.5)
    assert state.verdict is Verdict.STRONGER


def test_an_llr_at_the_lower_bound_says_a_is_not_stronger() -> None:
    # 1,000 deals of mean 0 and variance 1: LLR = 1000 * 0.1 * (-0.1) / 2 = -5
    state = sprt_state(Tally.of([-1, 1] * 500), Sprt(0, 0.1))
    assert state.llr == pytest.approx(-5)
    assert state.verdict is Verdict.NOT_STRONGER


def test_the_test_decides_nothing_before_30_deals_whatever_the_llr() -> None:
    # A random player losing by 2 and 3 marks: an LLR far past the bound, from two deals.
    early = sprt_state(Tally.of([-2, -3]), Sprt(0, 0.25))
    assert early.llr < early.lower and early.verdict is Verdict.UNDECIDED
    assert sprt_state(Tally.of([-2, -3] * 15), Sprt(0, 0.25)).verdict is Verdict.NOT_STRONGER


def test_an_llr_between_the_bounds_is_undecided() -> None:
    state = sprt_state(Tally.of(FIGURES), Sprt(0, 0.1))
    assert state.lower < state.llr < state.upper and state.verdict is Verdict.UNDECIDED


@pytest.mark.parametrize(("m0", "m1"), [(0.1, 0.1), (0.2, 0.1), (0, math.inf), (math.nan, 1)])
def test_an_sprt_needs_m0_below_m1(m0: float, m1: float) -> None:
    with pytest.raises(ValueError, match="m0 < m1"):
        Sprt(m0, m1)


@pytest.mark.parametrize(("alpha", "beta"), [(0, 0.05), (0.05, 1), (0.6, 0.5), (-0.1, 0.05)])
def test_an_sprt_needs_error_rates_that_make_a_test(alpha: float, beta: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        Sprt(0, 0.1, alpha, beta)
