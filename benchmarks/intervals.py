"""Confidence intervals the bot benchmarks report (bench_bots.py, bench_sampler.py,
bench_duplicate.py, bench_match.py): the very ones a match reports
(``boneyard.server.competition.match_stats``), so that a benchmark and the server never
disagree by a copy drifting."""

from __future__ import annotations

from boneyard.server.competition.match_stats import Z95, wilson

__all__ = ["Z95", "wilson"]
