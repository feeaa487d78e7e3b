"""The house bots under the house rules (issue 19): every strategy plays whole games of every
new option to the end, and over random rulesets drawn from all the options (both games, the new
ones and their combinations) and every preset, the heuristic, the sampler and the expert always
choose one of the view's legal actions, the same one for two states a seat cannot tell apart.

The engine refuses any command that is not legal (``engine.decide``), so a game that ends
shows that every choice was legal.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from boneyard import engine
from boneyard.bots import Strategy, strategy
from boneyard.bots.expert import ExpertStrategy
from boneyard.bots.heuristic import HeuristicStrategy
from boneyard.bots.sampler import SamplerStrategy
from boneyard.engine import Deal, GameState, Phase, Ruleset, RulesetError
from tests.bots.test_sampler import hidden_reshuffle

TINY = {"time_budget": 0.002, "samples": 3}
"""A tiny sampler budget: these tests are about legal and repeatable choices, not strength."""
TINY_EXPERT = {"move_ms": 2, "samples": 3, "most_samples": 6}

HOUSE_TABLES: list[tuple[str, dict[str, Any]]] = [
    ("moon-no-widow", {}),
    ("moon-overcall", {}),
    ("texas42-house", {"splash_capped": True, "all_pass": "forced_dealer_any_bid"}),
    ("moon", {"auction_goes_round": True}),
    ("moon", {"widow": "none"}),
    ("moon", {"moon_min_bid": 3}),
    ("moon", {"moon_min_bid": 5}),
    ("moon", {"moon_trumps": "suits_and_doubles"}),
    ("moon", {"missed_moon_loses_game": True}),
    ("moon", {"tie_to_earliest_seat": True}),
    ("moon", {"moon_overcall": True}),
    ("moon", {"all_pass": "forced_dealer_any_bid"}),
]


def _bots(name: str, players: int) -> list[Strategy]:
    if name == "sampler":  # one sampler among heuristics keeps the games short
        return [SamplerStrategy(s, **TINY) if s == 0 else strategy("heuristic", s)
                for s in range(players)]  # fmt: skip
    if name == "expert":
        return [ExpertStrategy(s, **TINY_EXPERT) if s == 0 else strategy("heuristic", s)
                for s in range(players)]  # fmt: skip
    return [strategy(name, s) for s in range(players)]


@pytest.mark.parametrize("name", ["random", "heuristic", "sampler", "expert"])
@pytest.mark.parametrize(("preset", "options"), HOUSE_TABLES)
def test_every_strategy_plays_whole_games_of_the_house_rules(
    name: str, preset: str, options: dict[str, Any]
) -> None:
    if name == "random":
        # Random Moon play can stay under the target for ever (a random moon is set, and set
        # again): a hand limit ends its games all the same.
        options = {**options, "hand_limit": 6}
    rules = engine.ruleset(preset, **options)
    bots = _bots(name, rules.players)
    state = engine.replay(engine.start(rules))
    for step in range(5_000):
        if state.phase is Phase.GAME_OVER:
            break
        if state.phase is Phase.DEAL:
            command: engine.Command = Deal(f"{preset}-{name}-{step}".encode())
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            command = bots[seat].choose(engine.view(state, seat))
        for event in engine.decide(state, command):  # refuses an illegal command
            state = engine.evolve(state, event)
    assert state.phase is Phase.GAME_OVER


# ---------------------------------------------------------------- random rulesets


@st.composite
def moon_rulesets(draw: st.DrawFn) -> Ruleset:
    """Any Moon ruleset the engine accepts, every option drawn (the house ones too)."""
    options: dict[str, Any] = {
        "points_to_win": draw(st.sampled_from([21, 7])),
        "all_pass": draw(st.sampled_from(["redeal", "forced_dealer", "forced_dealer_any_bid"])),
        "widow": draw(st.sampled_from(["must_exchange", "may_exchange", "none"])),
        "moon_trumps": draw(
            st.sampled_from(["all", "suits_and_follow_me", "suits", "suits_and_doubles"])
        ),
        "made_scores": draw(st.sampled_from(["bid", "tricks"])),
        "set_scores": draw(st.sampled_from(["minus_bid", "opponents_get_bid"])),
        "moon_min_bid": draw(st.sampled_from([3, 4, 5])),
    }
    for flag in (
        "may_trump_when_able_to_follow",
        "moon_only_over_seven",
        "widow_before_trump",
        "bidder_leads_trump",
        "moon_wins_game",
        "auction_goes_round",
        "missed_moon_loses_game",
        "tie_to_earliest_seat",
        "moon_overcall",
    ):
        options[flag] = draw(st.booleans())
    try:
        return engine.ruleset("moon", **options)
    except RulesetError:
        reject()


@st.composite
def texas42_rulesets(draw: st.DrawFn) -> Ruleset:
    """Any Texas 42 ruleset the engine accepts, the special contracts and house rules drawn."""
    players = draw(st.sampled_from([4, 4, 3, 6]))
    options: dict[str, Any] = {
        "players": players,
        "marks_to_win": draw(st.sampled_from([7, 2])),
        "all_pass": draw(st.sampled_from(["redeal", "forced_dealer", "forced_dealer_any_bid"])),
        "splash_marks": draw(st.sampled_from([2, 3])),
    }
    for flag in (
        "nello",
        "plunge",
        "splash",
        "splash_capped",
        "sevens",
        "may_trump_when_able_to_follow",
        "end_hand_when_decided",
        "hide_tricks_on_mark_bids",
    ):
        options[flag] = draw(st.booleans())
    if not options["splash"]:
        del options["splash_marks"]
    try:
        return engine.ruleset("texas42", **options)
    except RulesetError:
        reject()


rulesets = st.one_of(
    moon_rulesets(), texas42_rulesets(), st.sampled_from(list(engine.PRESETS.values()))
)


def _decision_points(rules: Ruleset, rng: random.Random) -> list[tuple[GameState, int]]:
    """A few states of a random game (random legal play, two deals at most) where a seat has
    a choice: the first decision of each hand and some later ones."""
    state = engine.replay(engine.start(rules))
    points: list[tuple[GameState, int]] = []
    while state.phase is not Phase.GAME_OVER and len(points) < 4:
        if state.phase is Phase.DEAL:
            if state.deals >= 2:
                break
            command: engine.Command = Deal(rng.randbytes(8))
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            legal = engine.legal_actions(state, seat)
            if len(legal) > 1 and (not points or rng.random() < 0.08):
                points.append((state, seat))
            command = rng.choice(list(legal))
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
    return points


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(rules=rulesets, seed=st.integers(0, 2**32 - 1))
def test_house_bots_choose_a_legal_action_that_depends_on_the_view_alone(
    rules: Ruleset, seed: int
) -> None:
    rng = random.Random(seed)
    for state, seat in _decision_points(rules, rng):
        view = engine.view(state, seat)
        other = engine.view(hidden_reshuffle(state, seat, rng), seat)
        assert other == view  # the seat cannot tell the two states apart ...
        for bot in (
            lambda: HeuristicStrategy(7),
            lambda: SamplerStrategy(7, **TINY),
            lambda: ExpertStrategy(7, **TINY_EXPERT),
        ):
            chosen = bot().choose(view)
            assert chosen in view.legal
            assert bot().choose(other) == chosen  # ... nor can the bot
