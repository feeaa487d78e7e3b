"""The engine keeps a few answers for speed (the last legal plays and auction choices, the plays
of a set of tiles, the states ``decide`` made at a trick's end, the auction's and the
declaration's choices per ruleset): none of them may ever change an answer. Each test plays
random games twice, once as usual and once with every cache emptied before each call, and asks
for the same decisions, events and states."""

from __future__ import annotations

import dataclasses
import random

import pytest

from boneyard import engine
from boneyard.engine import Deal, GameState, Phase, decider


def _forget() -> None:
    decider._legal_memo = decider._LEGAL_NONE
    decider._auction_memo = decider._AUCTION_NONE
    decider._PLAY_LISTS.clear()
    decider._prepared = (None, None, None, None, None)
    decider._tables_by_identity.clear()
    decider._tables_by_value.clear()


def _play(preset: str, seed: int, forget: bool, options: dict[str, object]) -> list[object]:
    """Every legal-action list, event and state of one random game (a copy of the ruleset
    for each hand, as separate games and verified records have)."""
    rng = random.Random(seed)
    state: GameState = engine.replay(engine.start(engine.ruleset(preset, options)))
    seen: list[object] = []
    while state.phase is not Phase.GAME_OVER and len(seen) < 4000:
        if state.phase is Phase.DEAL:
            command: engine.Command = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            if forget:
                _forget()
            legal = engine.legal_actions(state, state.hand.turn)
            seen.append(legal)
            passes = [a for a in legal if isinstance(a, engine.Pass)]
            # Mostly passes, so that dealers are often forced (or stuck) after three passes.
            command = passes[0] if passes and rng.random() < 0.7 else rng.choice(legal)
        if forget:
            _forget()
        events = engine.decide(state, command)
        seen.append(events)
        for event in events:
            if forget:
                _forget()
            state = engine.evolve(state, event)
            seen.append(state)
    return seen


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("texas42", {}),
        ("texas42", {"end_hand_when_decided": False}),
        ("texas42-house", {}),
        ("texas42", {"nello": True, "sevens": True, "plunge": True, "splash": True}),
        ("texas42-points", {}),
        ("moon-no-widow", {}),
        ("moon", {}),
        ("moon-s1", {}),
        ("moon-overcall", {}),
        ("moon", {"all_pass": "forced_dealer_any_bid"}),
    ],
)
def test_the_engines_caches_never_change_an_answer(preset: str, options: dict[str, object]) -> None:
    for seed in range(3):
        assert _play(preset, seed, False, options) == _play(preset, seed, True, options)


def test_equal_rulesets_share_their_tables_and_different_ones_do_not() -> None:
    plunge = engine.ruleset("texas42", {"plunge": True})
    same = dataclasses.replace(plunge)  # (equal, another object: as made outside ``ruleset``)
    assert same is not plunge
    assert decider._per_ruleset(plunge) is decider._per_ruleset(same)
    assert decider._per_ruleset(plunge) is not decider._per_ruleset(engine.ruleset("texas42"))


def test_a_ruleset_asked_for_twice_is_one_object() -> None:
    plunge = engine.ruleset("texas42", {"plunge": True})
    assert engine.ruleset("texas42", {"plunge": True}) is plunge
    assert engine.canonical_ruleset(dataclasses.replace(plunge)) is plunge
    assert engine.ruleset("texas42", {"plunge": True, "sevens": True}) is not plunge


def test_a_play_is_refused_for_its_reason_after_the_legal_plays_were_asked() -> None:
    # The legal plays remembered for one seat are not another seat's, nor another state's.
    rng = random.Random(7)
    state = engine.replay(engine.start(engine.ruleset("texas42")))
    while state.phase is not Phase.PLAY or not state.hand or not state.hand.trick:
        if state.phase is Phase.DEAL:
            command: engine.Command = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            command = rng.choice(engine.legal_actions(state, state.hand.turn))
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
    hand = state.hand
    turn = hand.turn
    assert turn is not None
    engine.legal_actions(state, turn)
    other = (turn + 1) % 4
    with pytest.raises(engine.NotYourTurn):
        engine.decide(state, engine.PlayTile(other, next(engine.iter_tiles(hand.hands[other]))))
    not_held = next(t for t in range(28) if not hand.hands[turn] >> t & 1)
    with pytest.raises(engine.TileNotInHand):
        engine.decide(state, engine.PlayTile(turn, not_held))


def test_a_trick_won_other_than_the_one_decided_is_folded_as_it_says() -> None:
    # evolve knows the states decide made for a trick's end only for exactly its events.
    rng = random.Random(11)
    state = engine.replay(engine.start(engine.ruleset("texas42")))
    while True:
        if state.phase is Phase.DEAL:
            command: engine.Command = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            command = rng.choice(engine.legal_actions(state, state.hand.turn))
        events = engine.decide(state, command)
        if isinstance(events[-1], engine.TrickWon) and len(events) == 2:
            break
        for event in events:
            state = engine.evolve(state, event)
    played, won = events
    after_play = engine.evolve(state, played)
    other = engine.TrickWon((won.seat + 1) % 4, won.points)
    assert engine.evolve(after_play, other).hand.turn == other.seat
    assert engine.evolve(after_play, won).hand.turn == won.seat
