"""Who has stopped playing (``engine.absence``, issue 31; ours, not in RULES.md): each seat's
timeouts in a row. A seat played for by its clock (``auto_play``) keeps its count; a seat that
acts itself starts over. The server abandons a game once every seat it does not play itself is
absent a given number of times in a row."""

from helpers import DEAL_A, act, deal_hands, new_game, run, turn

from boneyard.engine import (
    Abandon,
    Absence,
    Deal,
    GameAbandoned,
    Pass,
    Phase,
    PlaceBid,
    TimeOut,
    absence,
    decide,
    evolve,
    legal_actions,
    start,
)


def timed_out(state, times=1):
    """The seat to act runs out of time (``auto_play``) ``times`` times."""
    events = []
    for _ in range(times):
        state, new = act(state, TimeOut(turn(state), "auto_play"))
        events += new
    return state, events


def test_nobody_is_absent_at_the_start():
    state = deal_hands("texas42", DEAL_A)
    assert absence(start(state.rules), 4) == Absence((0, 0, 0, 0))


def test_a_seat_that_runs_out_of_time_counts_one_timeout():
    state = deal_hands("texas42", DEAL_A)
    seat = turn(state)
    _, events = timed_out(state)
    assert absence(events, 4).timeouts[seat] == 1


def test_the_action_played_for_a_timed_out_seat_does_not_start_its_count_over():
    # Seat 0 times out (auto_play passes for it), then each other seat times out in turn:
    # seat 0's count stays 1 although a Passed(0) is in the log.
    state = deal_hands("texas42", DEAL_A)
    _, events = timed_out(state, times=3)
    assert absence(events, 4).timeouts == (1, 1, 1, 0)


def test_a_seat_that_acts_itself_starts_its_count_over():
    state = new_game("moon")
    state, events = act(state, Deal(b"absence"))
    log = list(events)
    for _ in range(2):  # three seats each time out once, the hand is passed out and redealt
        state, new = timed_out(state, times=3)
        log += new
        state, new = act(state, Deal(b"again %d" % state.deals))
        log += new
    seat = turn(state)
    assert absence(log, 3).timeouts == (2, 2, 2)
    state, new = act(state, Pass(seat))
    log += new
    counts = absence(log, 3).timeouts
    assert counts[seat] == 0 and sorted(counts) == [0, 2, 2]


def test_a_seat_acting_after_another_seat_timed_out_is_not_taken_for_the_played_for_action():
    state = deal_hands("texas42", DEAL_A)
    state, events = timed_out(state)  # seat 0's pass, played for it
    seat = turn(state)
    bid = next(a for a in legal_actions(state, seat) if isinstance(a, PlaceBid))
    _, more = act(state, bid)
    counts = absence(events + more, 4).timeouts
    assert counts[0] == 1 and counts[seat] == 0


def test_every_seat_given_is_absent_only_when_each_reached_the_count():
    found = Absence((3, 2, 3, 3))
    assert found.all_absent([0, 2, 3], 3)
    assert not found.all_absent([0, 1], 3)
    assert not found.all_absent([], 3)  # a table of house bots alone is never "absent"


def test_a_game_can_be_abandoned_because_everyone_is_absent():
    state = deal_hands("texas42", DEAL_A)
    events = decide(state, Abandon("absent"))
    assert events == [GameAbandoned("absent")]
    assert evolve(state, events[0]).phase is Phase.GAME_OVER


def test_the_log_of_a_played_game_folds_to_the_same_absence_step_by_step():
    state = run(new_game("texas42"), Deal(b"fold"))
    log = []
    found = Absence((0,) * 4)
    while state.phase is Phase.BIDDING:
        state, events = timed_out(state)
        log += events
        for event in events:
            found = found.after(event)
    assert found == absence(log, 4)
