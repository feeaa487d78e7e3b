"""Confidence intervals the bot benchmarks report (bench_bots.py, bench_sampler.py,
bench_duplicate.py)."""

from __future__ import annotations

import math

__all__ = ["Z95", "wilson"]

Z95 = 1.959964
"""The normal quantile of a two-sided 95% interval."""


def wilson(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``wins / n``."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
