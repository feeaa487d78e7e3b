"""Ending a game nobody will finish (issue 13; RULES.md has no such rule, so these are ours,
documented in ``engine/decider.py``):

- ``Resign(seat)``: any seat, in turn or not, at any time before the game is over; its team
  loses at once, the scores as they are (the winner is chosen as for a forfeit on time);
- ``Abandon(reason)``: the server closes a game with no winner (``idle`` or ``unstarted``).
"""

import pytest
from helpers import DEAL_A, SIXES, deal_hands, in_play, new_game, plays, run, with_scores

from boneyard.engine import (
    Abandon,
    Deal,
    GameAbandoned,
    GameOver,
    GameWon,
    InvalidCommand,
    Pass,
    Phase,
    PlayTile,
    Resign,
    Resigned,
    decide,
    evolve,
    replay,
    ruleset,
    start,
    view,
)


def apply(state, command):
    events = decide(state, command)
    for event in events:
        state = evolve(state, event)
    return state, events


def test_a_resigning_seat_loses_for_its_team():
    state = deal_hands("texas42", DEAL_A)
    state, events = apply(state, Resign(2))
    assert events == [Resigned(2), GameWon(1, (1, 3))]
    assert state.phase is Phase.GAME_OVER and state.winner == 1


def test_a_seat_may_resign_out_of_turn():
    state = deal_hands("texas42", DEAL_A)
    assert state.hand is not None and state.hand.turn == 0
    _, events = apply(state, Resign(3))
    assert events == [Resigned(3), GameWon(0, (0, 2))]


def test_resigning_keeps_the_scores_as_they_are():
    state = with_scores(in_play("texas42", DEAL_A, SIXES), 5, 6)
    state, _ = plays(state, "6-6")
    state, _ = apply(state, Resign(1))
    assert state.scores == (5, 6) and state.winner == 0


def test_in_moon_the_highest_other_score_wins_when_a_player_resigns():
    rules = ruleset("moon")
    state = with_scores(run(new_game(rules), Deal(b"moon")), 5, 10, 8)
    _, events = apply(state, Resign(1))
    assert events == [Resigned(1), GameWon(2, (2,))]


def test_a_seat_may_resign_between_hands():
    state = new_game("texas42")
    assert state.phase is Phase.DEAL
    _, events = apply(state, Resign(0))
    assert events == [Resigned(0), GameWon(1, (1, 3))]


def test_no_seat_beyond_the_table_may_resign():
    with pytest.raises(InvalidCommand):
        decide(deal_hands("texas42", DEAL_A), Resign(4))


def test_nobody_resigns_a_game_that_is_over():
    state, _ = apply(deal_hands("texas42", DEAL_A), Resign(0))
    with pytest.raises(GameOver, match="team 1 won"):
        decide(state, Resign(1))


def test_an_abandoned_game_is_over_with_no_winner():
    state = deal_hands("texas42", DEAL_A)
    state, events = apply(state, Abandon("idle"))
    assert events == [GameAbandoned("idle")]
    assert state.phase is Phase.GAME_OVER and state.winner is None
    assert view(state, 0).turn is None and view(state, 0).legal == ()


def test_a_game_abandoned_before_its_first_deal_is_over():
    state, _ = apply(new_game("moon"), Abandon("unstarted"))
    assert state.phase is Phase.GAME_OVER and state.winner is None


def test_an_abandoned_game_takes_no_more_actions():
    state, _ = apply(deal_hands("texas42", DEAL_A), Abandon("idle"))
    with pytest.raises(GameOver, match="abandoned"):
        decide(state, Pass(0))
    with pytest.raises(GameOver):
        decide(state, PlayTile(0, 27))


def test_a_game_is_abandoned_only_for_a_known_reason():
    with pytest.raises(InvalidCommand, match="idle, unstarted"):
        decide(deal_hands("texas42", DEAL_A), Abandon("bored"))


def test_replaying_a_resigned_game_gives_the_same_state():
    state = deal_hands("texas42", DEAL_A)
    log = list(start(state.rules))
    live = replay(log)
    for step in ("deal", "pass", "resign"):
        if step == "deal":
            command = Deal(b"x")
        elif step == "pass":
            assert live.hand is not None and live.hand.turn is not None
            command = Pass(live.hand.turn)
        else:
            command = Resign(1)
        events = decide(live, command)
        log += events
        for event in events:
            live = evolve(live, event)
    assert replay(log) == live and live.winner == 0
