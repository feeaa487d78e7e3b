"""What a match's deals say: the mean per deal with its interval, the win rate with its Wilson
interval, and a sequential probability ratio test (SPRT) of "is A stronger than B?".

A match plays *paired duplicate deals*: each deal twice, the entrants swapping seats, so the
luck of the tiles cancels. A deal's figure ``x`` is entrant A's marks (or points) minus B's,
summed over both playings. The figures of the deals are taken as independent draws of one
distribution of mean ``mu``: how much better A is, per deal.

**Mean.** ``x̄ = S / n`` with a two-sided 95% normal interval ``x̄ ± 1.96 s / sqrt(n)``, ``s``
the sample standard deviation (``n - 1`` in the denominator).

**Win rate.** A deal is won (``x > 0``), drawn (``x = 0``) or lost by A; the win rate counts a
draw half, ``(wins + draws / 2) / n``, with the Wilson score interval (E. B. Wilson, 1927),
which stays inside [0, 1] and is honest for small ``n`` and rates near 0 or 1.

**SPRT.** Two hypotheses the organiser states, in the figure's unit (marks or points a deal):
H0 "A is no better", ``mu = m0``, and H1 "A is better by m1", ``mu = m1`` (``m1 > m0``). With
error rates ``alpha`` (H1 accepted while H0 holds) and ``beta`` (H0 accepted while H1 holds),
Wald's bounds are ``lower = ln(beta / (1 - alpha))`` and ``upper = ln((1 - beta) / alpha)``;
after each deal the log-likelihood ratio ``LLR`` is compared with them: at or above ``upper``
the test accepts H1 ("A is stronger"), at or below ``lower`` it accepts H0 ("A is not stronger
by m1"), in between it wants more deals.

The distribution of ``x`` is not known, so the LLR is the *generalized* one with the normal
approximation fishtest uses (Michel Van den Bergh, "A Practical Introduction to the GSPRT",
https://www.cantate.be/Fishtest/GSPRT_approximation.pdf; fishtest's
``server/fishtest/stats/LLRcalc.py``, ``LLR_alt2``): the deals' figures as a normal sample
of the observed variance ``v = sum((x - x̄)^2) / n``, the likelihood of each hypothesis' mean
against it::

    LLR = n * (m1 - m0) * (2 * x̄ - m0 - m1) / (2 * v)

(the log of ``exp(-n (x̄ - m1)^2 / 2v) / exp(-n (x̄ - m0)^2 / 2v)``). It grows as ``x̄`` sits
nearer ``m1`` than ``m0``, and the faster the less the deals vary: duplicate play, which
takes the tiles' luck out of ``v``, is what makes the test short. While ``v`` is 0 (no deal
yet, one deal, or every deal the same figure: two copies of one deterministic program tie
every deal) there is no spread to weigh the mean against, and the LLR is 0: undecided.

The approximation stands on ``v`` being the spread of the deals, and the spread of a handful
of deals is no measure of it: two deals a random player lost by 2 and 3 marks give ``v`` =
0.25 and an LLR past any bound. So the test decides nothing before ``MIN_DEALS`` (30) deals
(the LLR is shown all along): a sample the normal approximation is commonly trusted with, and
few beside the hundreds a real difference of a tenth of a mark needs.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

__all__ = [
    "MIN_DEALS",
    "Z95",
    "Interval",
    "Sprt",
    "SprtState",
    "Tally",
    "Verdict",
    "llr",
    "mean_interval",
    "sprt_state",
    "wilson",
]

Z95 = 1.959964
"""The normal quantile of a two-sided 95% interval."""
MIN_DEALS = 30
"""Deals before the SPRT may decide (the module's doc says why)."""


def wilson(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``wins / n`` (``(0, 1)`` with no trial)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float


class Verdict(Enum):
    """What an SPRT says."""

    UNDECIDED = "undecided"
    STRONGER = "stronger"
    """H1 accepted: A is stronger (by m1, at the test's error rates)."""
    NOT_STRONGER = "not_stronger"
    """H0 accepted: A is not stronger by m1."""


@dataclass(frozen=True, slots=True)
class Tally:
    """The deals counted so far, as sums: enough for every figure here, and what a database
    adds up (``SUM``, ``COUNT``) without reading each deal."""

    deals: int = 0
    total: float = 0.0
    """The sum of the deals' figures (A minus B)."""
    squares: float = 0.0
    """The sum of their squares."""
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @classmethod
    def of(cls, figures: Iterable[float]) -> Tally:
        tally = cls()
        for x in figures:
            tally = tally.add(x)
        return tally

    def add(self, x: float) -> Tally:
        """This tally and one more deal of figure ``x``."""
        return Tally(
            self.deals + 1,
            self.total + x,
            self.squares + x * x,
            self.wins + (x > 0),
            self.draws + (x == 0),
            self.losses + (x < 0),
        )

    @property
    def mean(self) -> float:
        return self.total / self.deals if self.deals else 0.0

    @property
    def variance(self) -> float:
        """The observed (population) variance, ``sum((x - mean)^2) / n``: the SPRT's."""
        if not self.deals:
            return 0.0
        # Rounding can leave a hair below 0 when every figure is the same.
        return max(0.0, self.squares / self.deals - self.mean**2)

    @property
    def win_rate(self) -> float:
        """A draw counts half."""
        return (self.wins + self.draws / 2) / self.deals if self.deals else 0.0

    @property
    def win_rate_interval(self) -> Interval:
        return Interval(*wilson(self.wins + self.draws / 2, self.deals))


def mean_interval(tally: Tally, z: float = Z95) -> Interval:
    """The two-sided interval of the mean per deal (95% by default): ``mean ± z s / sqrt(n)``
    with the sample standard deviation; the mean alone while fewer than two deals."""
    n = tally.deals
    if n < 2:
        return Interval(tally.mean, tally.mean)
    sample_variance = tally.variance * n / (n - 1)
    half = z * math.sqrt(sample_variance / n)
    return Interval(tally.mean - half, tally.mean + half)


@dataclass(frozen=True, slots=True)
class Sprt:
    """An SPRT's hypotheses and error rates (see the module's doc)."""

    m0: float
    """H0: A's mean figure per deal is this (0: no better)."""
    m1: float
    """H1: it is this (more than ``m0``)."""
    alpha: float = 0.05
    """The chance of accepting H1 when H0 holds."""
    beta: float = 0.05
    """The chance of accepting H0 when H1 holds."""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.m0) and math.isfinite(self.m1) and self.m1 > self.m0):
            raise ValueError(f"an SPRT needs finite m0 < m1, not m0={self.m0}, m1={self.m1}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise ValueError(
                f"an SPRT needs 0 < alpha, beta and alpha + beta < 1, not "
                f"alpha={self.alpha}, beta={self.beta}"
            )

    @property
    def lower(self) -> float:
        """``ln(beta / (1 - alpha))``: at or below it, H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """``ln((1 - beta) / alpha)``: at or above it, H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)


def llr(tally: Tally, sprt: Sprt) -> float:
    """The generalized log-likelihood ratio of H1 against H0 (the module's doc): 0 while the
    deals do not vary."""
    variance = tally.variance
    if variance <= 0:
        return 0.0
    return tally.deals * (sprt.m1 - sprt.m0) * (2 * tally.mean - sprt.m0 - sprt.m1) / (2 * variance)


@dataclass(frozen=True, slots=True)
class SprtState:
    llr: float
    lower: float
    upper: float
    verdict: Verdict


def sprt_state(tally: Tally, sprt: Sprt) -> SprtState:
    """The LLR of the deals counted, the bounds, and what the test says of them (nothing
    before ``MIN_DEALS`` deals)."""
    value = llr(tally, sprt)
    if tally.deals < MIN_DEALS:
        verdict = Verdict.UNDECIDED
    elif value >= sprt.upper:
        verdict = Verdict.STRONGER
    elif value <= sprt.lower:
        verdict = Verdict.NOT_STRONGER
    else:
        verdict = Verdict.UNDECIDED
    return SprtState(value, sprt.lower, sprt.upper, verdict)
