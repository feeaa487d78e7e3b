"""Clocks (issue 6; RULES.md has no clocks, so these rules are ours, documented in
``engine/decider.py``): the server decides that the seat to act ran out of time and sends the
command ``TimeOut(seat, policy)``. The engine answers ``ClockExpired`` and then

- ``auto_play``: exactly the events of the seat's lowest legal action, the first of
  ``legal_actions`` (a pass when passing is allowed, else the lowest bid; the widow exchange
  laying out the lowest tile; the first legal contract; the lowest-numbered legal tile);
- ``forfeit``: ``GameWon`` for another team (two teams: the other; more: the highest score
  among the others, a tie to the first tied team clockwise from the seat).
"""

import random

import pytest
from helpers import (
    DEAL_A,
    SIXES,
    T,
    act,
    auction,
    deal_hands,
    declare,
    exchange,
    in_play,
    new_game,
    plays,
    run,
    turn,
    with_scores,
)

from boneyard.engine import (
    TIMEOUT_POLICIES,
    AuctionWon,
    Bid,
    BidPlaced,
    ClockExpired,
    Contract,
    ContractDeclared,
    Deal,
    GameOver,
    GameWon,
    HandScored,
    InvalidCommand,
    NotYourTurn,
    Pass,
    Passed,
    Phase,
    PlaceBid,
    TilePlayed,
    TimeOut,
    TrickWon,
    WidowExchanged,
    WrongPhase,
    decide,
    evolve,
    legal_actions,
    preset_names,
    replay,
    ruleset,
    start,
)

UP_TO_THE_LAST_PLAY_OF_TRICK_3 = (  # seat 0 leads its sixes; the team's running total
    "6-6 5-5 4-1 3-0 "  # 16
    "6-5 5-0 3-2 2-2 "  # 27
    "6-4 5-4 4-3"  # and seat 3 to play: 38 whatever it plays, and a bid of 30 is made
)

DEAL_FOLLOW = [  # seat 0 leads the 4-3: seat 1 must follow fours though it holds 0-0
    "6-6 6-5 6-4 6-3 6-2 6-1 4-3",
    "5-5 5-4 5-3 4-4 1-1 1-0 0-0",
    "6-0 5-2 5-1 5-0 4-2 4-1 4-0",
    "3-3 3-2 3-1 3-0 2-2 2-1 2-0",
]

DEAL_MOON = [  # seat 0 holds six sixes and 5-5; the widow is 0-0
    "6-6 6-5 6-4 6-3 6-2 6-1 5-5",
    "5-4 5-3 5-2 5-1 4-4 4-3 4-2",
    "4-1 3-3 3-2 3-1 2-2 2-1 1-1",
]


def timed_out(state, policy="auto_play", seat=None):
    """The seat to act (or ``seat``) runs out of time; the new state and the events."""
    return act(state, TimeOut(turn(state) if seat is None else seat, policy))


def lowest_action_events(state):
    """What the seat to act would cause by sending its lowest legal action itself."""
    return decide(state, legal_actions(state, turn(state))[0])


def bid_and_declare(hands, bid, bidder=0, contract=SIXES, scores=None, **options):
    state = deal_hands(ruleset("texas42", **options), hands, dealer=(bidder - 1) % 4)
    if scores is not None:
        state = with_scores(state, *scores)
    state, _ = auction(state, {bidder: bid})
    return declare(state, contract)


# ---------------------------------------------------------------- the command


def test_the_timeout_policies_are_auto_play_and_forfeit():
    assert TIMEOUT_POLICIES == ("auto_play", "forfeit")


def test_a_timeout_is_a_clock_expired_event_first():
    state = deal_hands("texas42", DEAL_A)
    _, events = timed_out(state)
    assert events[0] == ClockExpired(0, "auto_play")


def test_clock_expired_alone_changes_nothing():
    state = deal_hands("texas42", DEAL_A)
    assert evolve(state, ClockExpired(0, "auto_play")) == state


# ---------------------------------------------------------------- auto_play, phase by phase


def test_auto_play_in_the_auction_passes_when_passing_is_allowed():
    state = deal_hands("texas42", DEAL_A)
    _, events = timed_out(state)
    assert events == [ClockExpired(0, "auto_play"), Passed(0)]


def test_auto_play_by_a_forced_dealer_bids_the_minimum():
    state = deal_hands("texas42", DEAL_A)  # seat 3 deals, and bids last
    state = run(state, Pass(0), Pass(1), Pass(2))
    _, events = timed_out(state)
    assert events == [
        ClockExpired(3, "auto_play"),
        BidPlaced(3, Bid.points(30)),
        AuctionWon(3, Bid.points(30), 3),
    ]


def test_auto_play_of_the_last_bidder_ends_the_auction():
    state = deal_hands("texas42", DEAL_A)
    state = run(state, PlaceBid(0, Bid.points(31)), Pass(1), Pass(2))
    state, events = timed_out(state)
    assert events == [
        ClockExpired(3, "auto_play"),
        Passed(3),
        AuctionWon(0, Bid.points(31), 0),
    ]
    assert state.phase is Phase.TRUMP


def test_auto_play_declares_the_first_legal_contract_blanks():
    state = deal_hands("texas42", DEAL_A)
    state, _ = auction(state, {0: Bid.points(30)})
    state, events = timed_out(state)
    assert events == [ClockExpired(0, "auto_play"), ContractDeclared(0, Contract.of_trump(0), ())]
    assert state.hand.contract == Contract.of_trump(0)


def test_auto_play_of_the_moon_widow_exchange_lays_out_the_lowest_tile():
    state = deal_hands(ruleset("moon"), DEAL_MOON, rest="0-0", dealer=2)
    state, _ = auction(state, {0: Bid.tricks(5)})
    assert state.phase is Phase.WIDOW
    _, events = timed_out(state)
    # 5-5 is tile 20, the lowest-numbered of seat 0's (6-1 is 22).
    assert events == [ClockExpired(0, "auto_play"), WidowExchanged(0, T("0-0"), T("5-5"))]


def test_auto_play_exchanges_with_the_widow_even_when_it_may_be_left():
    state = deal_hands(ruleset("moon", widow="may_exchange"), DEAL_MOON, rest="0-0", dealer=2)
    state, _ = auction(state, {0: Bid.tricks(5)})
    _, events = timed_out(state)
    assert events[1] == WidowExchanged(0, T("0-0"), T("5-5"))


def test_auto_play_leads_the_lowest_tile():
    state = in_play("texas42", DEAL_FOLLOW, SIXES)
    _, events = timed_out(state)
    assert events == [ClockExpired(0, "auto_play"), TilePlayed(0, T("4-3"))]


def test_auto_play_follows_suit_with_the_lowest_tile_of_the_led_suit():
    state = in_play("texas42", DEAL_FOLLOW, SIXES)
    state, _ = plays(state, "4-3")
    _, events = timed_out(state)
    # Seat 1 holds 0-0, its lowest tile, but must follow fours: 4-4 (14) before 5-4 (19).
    assert events == [ClockExpired(1, "auto_play"), TilePlayed(1, T("4-4"))]


def test_auto_play_does_not_follow_with_a_trump():
    state = in_play("texas42", DEAL_FOLLOW, SIXES)
    state, _ = plays(state, "4-3 4-4")
    _, events = timed_out(state)
    # Seat 2's 6-0 is a six (trump), not a four: its fours are 4-2 4-1 4-0.
    assert events == [ClockExpired(2, "auto_play"), TilePlayed(2, T("4-0"))]


def test_auto_play_unable_to_follow_plays_the_lowest_tile_of_the_hand():
    state = in_play("texas42", DEAL_FOLLOW, SIXES)
    state, _ = plays(state, "4-3 4-4 4-0")
    _, events = timed_out(state)
    assert events[:2] == [ClockExpired(3, "auto_play"), TilePlayed(3, T("2-0"))]


# ---------------------------------------------------------------- what the auto-played tile does


def test_a_timeout_that_plays_the_last_tile_of_a_trick_completes_it():
    state = in_play("texas42", DEAL_FOLLOW, SIXES)
    state, _ = plays(state, "4-3 4-4 4-0")
    state, events = timed_out(state)
    assert events == [ClockExpired(3, "auto_play"), TilePlayed(3, T("2-0")), TrickWon(1, 1)]
    assert turn(state) == 1


def test_a_timeout_that_decides_the_hand_scores_it():
    state = bid_and_declare(DEAL_A, Bid.points(30))
    state, _ = plays(state, UP_TO_THE_LAST_PLAY_OF_TRICK_3)
    state, events = timed_out(state)
    # Seat 3 cannot follow sixes and plays its lowest tile, 0-0; the 6-4 wins: 1 + 10.
    assert events == [
        ClockExpired(3, "auto_play"),
        TilePlayed(3, T("0-0")),
        TrickWon(0, 11),
        HandScored(0, Bid.points(30), True, (38, 0), (1, 0), (1, 0)),
    ]
    assert state.phase is Phase.DEAL


def test_a_timeout_that_decides_the_game_ends_it():
    state = bid_and_declare(DEAL_A, Bid.points(30), scores=(6, 5))
    state, _ = plays(state, UP_TO_THE_LAST_PLAY_OF_TRICK_3)
    state, events = timed_out(state)
    assert events[-2:] == [
        HandScored(0, Bid.points(30), True, (38, 0), (1, 0), (7, 5)),
        GameWon(0, (0, 2)),
    ]
    assert state.phase is Phase.GAME_OVER and state.winner == 0


@pytest.mark.parametrize("preset", preset_names())
def test_auto_play_is_the_lowest_legal_action_in_every_position_of_random_games(preset):
    rng = random.Random(preset)
    for _ in range(2):
        state = replay(start(ruleset(preset)))
        while state.phase is not Phase.GAME_OVER and state.deals < 12:
            if state.phase is Phase.DEAL:
                state = run(state, Deal(rng.randbytes(8)))
                continue
            seat = turn(state)
            expected = [ClockExpired(seat, "auto_play"), *lowest_action_events(state)]
            assert decide(state, TimeOut(seat, "auto_play")) == expected
            state = run(state, rng.choice(legal_actions(state, seat)))


# ---------------------------------------------------------------- forfeit


def test_forfeit_in_texas42_the_other_team_wins():
    state = deal_hands("texas42", DEAL_A)
    state = run(state, Pass(0))
    state, events = timed_out(state, "forfeit")
    assert events == [ClockExpired(1, "forfeit"), GameWon(0, (0, 2))]
    assert state.phase is Phase.GAME_OVER and state.winner == 0


def test_forfeit_in_texas42_the_other_team_wins_whatever_the_score():
    state = with_scores(in_play("texas42", DEAL_A, SIXES), 0, 6)
    state, _ = plays(state, "6-6")
    state, events = timed_out(state, "forfeit")
    assert events == [ClockExpired(1, "forfeit"), GameWon(0, (0, 2))]
    assert state.scores == (0, 6)


def moon_to_bid(*scores):
    state = deal_hands(ruleset("moon"), DEAL_MOON, rest="0-0", dealer=2)
    return with_scores(state, *scores)


def test_forfeit_in_moon_the_highest_other_score_wins():
    _, events = timed_out(moon_to_bid(5, 10, 8), "forfeit")
    assert events == [ClockExpired(0, "forfeit"), GameWon(1, (1,))]


def test_forfeit_in_moon_wins_for_the_highest_other_score_even_below_the_forfeiter():
    state = run(moon_to_bid(3, 20, 8), Pass(0))
    _, events = timed_out(state, "forfeit")
    assert events == [ClockExpired(1, "forfeit"), GameWon(2, (2,))]


def test_forfeit_in_moon_a_tie_goes_to_the_first_tied_player_clockwise_from_the_seat():
    state = run(moon_to_bid(7, 3, 7), Pass(0))
    _, events = timed_out(state, "forfeit")
    # Seat 1 forfeits; seats 0 and 2 are tied at 7; clockwise from seat 1, seat 2 comes first.
    assert events == [ClockExpired(1, "forfeit"), GameWon(2, (2,))]


def test_forfeit_with_three_partnerships_a_tie_goes_clockwise_from_the_seat():
    rules = ruleset("texas42", players=6)  # teams 0&3, 1&4, 2&5
    state = deal_hands(
        rules,
        [
            "6-6 6-5 6-4 6-3",
            "6-2 6-1 6-0 5-5",
            "5-4 5-3 5-2 5-1",
            "5-0 4-4 4-3 4-2",
            "4-1 4-0 3-3 3-2",
            "3-1 3-0 2-2 2-1",
        ],
        rest="2-0 1-1 1-0 0-0",
    )
    state = with_scores(run(state, Pass(0), Pass(1)), 2, 2, 0)
    _, events = timed_out(state, "forfeit")
    # Seat 2 (team 2) forfeits; teams 0 and 1 tie; clockwise from 2, seat 3 (team 0) is first.
    assert events == [ClockExpired(2, "forfeit"), GameWon(0, (0, 3))]


# ---------------------------------------------------------------- what is refused


def test_a_timeout_of_a_seat_not_to_act_is_refused():
    state = deal_hands("texas42", DEAL_A)
    with pytest.raises(NotYourTurn, match="seat 0's turn, not seat 2's"):
        decide(state, TimeOut(2, "auto_play"))


def test_a_timeout_while_the_game_waits_for_a_deal_is_refused():
    with pytest.raises(WrongPhase, match="deal of hand 1"):
        decide(new_game(), TimeOut(0, "auto_play"))


def test_a_timeout_after_the_game_is_over_is_refused():
    state, _ = timed_out(deal_hands("texas42", DEAL_A), "forfeit")
    with pytest.raises(GameOver):
        decide(state, TimeOut(1, "auto_play"))


@pytest.mark.parametrize("policy", ["pass", "", "AUTO_PLAY", None])
def test_a_timeout_policy_that_does_not_exist_is_refused(policy):
    with pytest.raises(InvalidCommand, match="timeout policy"):
        decide(deal_hands("texas42", DEAL_A), TimeOut(0, policy))


@pytest.mark.parametrize("seat", [4, -1, "0"])
def test_a_timeout_of_a_seat_not_at_the_table_is_refused(seat):
    with pytest.raises(InvalidCommand, match="no seat"):
        decide(deal_hands("texas42", DEAL_A), TimeOut(seat, "auto_play"))


# ---------------------------------------------------------------- replay


def test_a_log_with_timeouts_replays_to_the_same_state():
    rng = random.Random(6)
    log = list(start(ruleset("texas42")))
    state = replay(log)
    timeouts = 0
    while state.phase is not Phase.GAME_OVER:
        if state.phase is Phase.DEAL:
            command = Deal(rng.randbytes(8))
        elif rng.random() < 0.3:
            command = TimeOut(turn(state), "auto_play")
            timeouts += 1
        else:
            command = rng.choice(legal_actions(state, turn(state)))
        for event in decide(state, command):
            state = evolve(state, event)
            log.append(event)
    assert timeouts and sum(isinstance(e, ClockExpired) for e in log) == timeouts
    assert replay(log) == state


def test_a_widow_timeout_leaves_the_position_of_laying_out_the_lowest_tile_oneself():
    state = deal_hands(ruleset("moon"), DEAL_MOON, rest="0-0", dealer=2)
    state, _ = auction(state, {0: Bid.tricks(5)})
    by_clock, _ = timed_out(state)
    assert by_clock == exchange(state, "5-5")
