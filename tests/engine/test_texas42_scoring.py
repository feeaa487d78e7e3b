"""RULES.md section 2, Texas 42: the result of a hand (made or set, by points or by taking
every trick), ``end_hand_when_decided``, marks and ``marks_to_win``, and ``points_to_win``
scoring as ``engine/rulesets.py`` documents it (made: the points taken, or the bid's value if
higher, a mark being 42 points; set: nothing, and every other team the bid's value plus what
it took)."""

import pytest
from helpers import (
    DEAL_A,
    SIXES,
    act,
    auction,
    deal_hands,
    declare,
    plays,
    scored,
    trick_winner,
    with_scores,
)

from boneyard.engine import (
    Bid,
    Deal,
    GameOver,
    GameWon,
    HandScored,
    Phase,
    decide,
    ruleset,
)

LAYDOWN_A = [  # seat 0 leads its sixes; running total of seat 0's team on the right
    "6-6 5-5 4-1 3-0",  # 1 + 10 + 5 = 16
    "6-5 5-0 3-2 2-2",  # 1 + 5 + 5 = 11 -> 27
    "6-4 5-4 4-3 2-1",  # 1 + 10 = 11     -> 38
    "6-3 5-3 4-2 2-0",  # 1               -> 39
    "6-2 5-2 4-0 1-1",  # 1               -> 40
    "6-1 5-1 3-3 1-0",  # 1               -> 41
    "6-0 4-4 3-1 0-0",  # 1               -> 42
]

DEAL_F = [  # as DEAL_A but seat 0 holds 1-0 for the 6-0, which seat 3 holds
    "6-6 6-5 6-4 6-3 6-2 6-1 1-0",
    "5-5 5-4 5-3 5-2 5-1 5-0 4-4",
    "4-3 4-2 4-1 4-0 3-3 3-2 3-1",
    "6-0 3-0 2-2 2-1 2-0 1-1 0-0",
]
TRICKS_F = [  # sixes trump, seat 0 leads; seat 0's team's running total on the right
    "6-6 4-4 4-3 6-0",  # 1                    -> 1
    "6-5 5-5 4-2 3-0",  # 1 + 10 = 11          -> 12
    "6-4 5-4 4-1 2-2",  # 1 + 10 + 5 = 16      -> 28
    "6-3 5-3 4-0 2-1",  # 1                    -> 29
    "6-2 5-2 3-3 2-0",  # 1                    -> 30
    "6-1 5-0 3-1 1-1",  # 1 + 5 = 6            -> 36
    "1-0 5-1 3-2 0-0",  # seat 1's 5-1 wins the ones: 1 + 5 = 6 to seats 1 and 3
]


def bid_and_declare(rules, hands, bid, bidder=0, contract=SIXES, scores=None):
    state = deal_hands(
        ruleset(rules) if isinstance(rules, str) else rules, hands, dealer=(bidder - 1) % 4
    )
    if scores is not None:
        state = with_scores(state, *scores)
    state, _ = auction(state, {bidder: bid})
    return declare(state, contract)


def play_tricks(state, tricks):
    """Play the tricks until the hand is scored; the state and all events."""
    events = []
    for trick in tricks:
        if state.phase is not Phase.PLAY:
            break
        state, new = plays(state, trick)
        events.extend(new)
    return state, events


def result(rules, hands, tricks, bid, **kwargs):
    _, events = play_tricks(bid_and_declare(rules, hands, bid, **kwargs), tricks)
    return scored(events)


def every_trick(**options):
    return ruleset("texas42", end_hand_when_decided=False, **options)


# ---------------------------------------------------------------- points, made and set


def test_a_trick_is_worth_one_point_plus_the_count_in_it():
    state = bid_and_declare("texas42", DEAL_A, Bid.points(30))
    _, events = plays(state, "6-6 5-5 4-1 3-0")
    assert [(e.seat, e.points) for e in events if type(e).__name__ == "TrickWon"] == [(0, 16)]


def test_the_bidding_team_points_are_its_tricks_plus_the_count_in_them():
    # Seats 0 and 2: six tricks and 5-5, 6-4, 4-1, 5-0 = 6 + 30 = 36.
    # Seats 1 and 3: the last trick and its 3-2 = 1 + 5 = 6.
    assert result(every_trick(), DEAL_F, TRICKS_F, Bid.points(30)).taken == (36, 6)


def test_a_point_bid_is_made_with_points_equal_to_the_bid():
    scored_ = result("texas42", DEAL_F, TRICKS_F, Bid.points(36))
    assert scored_ == HandScored(0, Bid.points(36), True, (36, 0), (1, 0), (1, 0))


def test_a_point_bid_is_made_with_points_over_the_bid():
    scored_ = result(every_trick(), DEAL_F, TRICKS_F, Bid.points(30))
    assert scored_ == HandScored(0, Bid.points(30), True, (36, 6), (1, 0), (1, 0))


def test_a_point_bid_is_set_one_point_short():
    scored_ = result("texas42", DEAL_F, TRICKS_F, Bid.points(37))
    assert scored_ == HandScored(0, Bid.points(37), False, (36, 6), (0, 1), (0, 1))


@pytest.mark.parametrize("points", [30, 35, 41])
def test_a_made_point_bid_is_worth_one_mark(points):
    assert result("texas42", DEAL_A, LAYDOWN_A, Bid.points(points)).changes == (1, 0)


def test_a_set_point_bid_gives_the_opposing_team_one_mark():
    assert result("texas42", DEAL_F, TRICKS_F, Bid.points(41)).changes == (0, 1)


def test_42_is_made_only_by_winning_every_trick():
    scored_ = result("texas42", DEAL_A, LAYDOWN_A, Bid.marks(1))
    assert scored_ == HandScored(0, Bid.marks(1), True, (42, 0), (1, 0), (1, 0))


def test_42_is_set_by_losing_one_trick_even_with_36_points():
    scored_ = result("texas42", DEAL_F, TRICKS_F, Bid.marks(1))
    assert scored_ == HandScored(0, Bid.marks(1), False, (36, 6), (0, 1), (0, 1))


def test_84_made_scores_two_marks():
    scored_ = result("texas42", DEAL_A, LAYDOWN_A, Bid.marks(2))
    assert scored_ == HandScored(0, Bid.marks(2), True, (42, 0), (2, 0), (2, 0))


def test_84_set_gives_the_opposing_team_two_marks():
    scored_ = result("texas42", DEAL_F, TRICKS_F, Bid.marks(2))
    assert scored_.made is False
    assert scored_.changes == (0, 2)


def test_126_made_scores_three_marks():
    # Seat 0 bids 84, seat 1 126 and names fives: it holds six of them and leads them all.
    state = deal_hands("texas42", DEAL_A, dealer=3)
    state, _ = auction(state, {0: Bid.marks(2), 1: Bid.marks(3)})
    state = declare(state, 5)
    _, events = play_tricks(
        state,
        [
            "5-5 4-3 3-0 6-5",  # seat 0 must trump with its only five: 1 + 10
            "5-4 4-2 2-2 6-6",  # 1
            "5-3 4-1 2-1 6-3",  # 1 + 5
            "5-2 4-0 2-0 6-2",  # 1
            "5-1 3-3 1-1 6-1",  # 1
            "5-0 3-2 1-0 6-0",  # 1 + 5 + 5
            "4-4 3-1 0-0 6-4",  # the double four is the highest four: 1 + 10
        ],
    )
    assert scored(events) == HandScored(1, Bid.marks(3), True, (0, 42), (0, 3), (0, 3))


def test_a_partners_tricks_count_for_the_bidding_team():
    # DEAL_F with seat 1's 5-1 and seat 2's 3-2 swapped: seat 2 wins the last trick.
    hands = [DEAL_F[0], DEAL_F[1].replace("5-1", "3-2"), DEAL_F[2].replace("3-2", "5-1"), DEAL_F[3]]
    tricks = TRICKS_F[:-1] + ["1-0 3-2 5-1 0-0"]
    scored_ = result("texas42", hands, tricks, Bid.marks(1))
    # 36 + 1 + 5 (seat 1's 3-2) = 42
    assert scored_ == HandScored(0, Bid.marks(1), True, (42, 0), (1, 0), (1, 0))


# ---------------------------------------------------------------- end_hand_when_decided


def test_end_hand_when_decided_is_on_by_default():
    assert ruleset("texas42").end_hand_when_decided is True


def test_end_hand_when_decided_play_stops_as_soon_as_the_bid_is_made():
    state = bid_and_declare("texas42", DEAL_F, Bid.points(30))
    state, events = play_tricks(state, TRICKS_F[:5])
    # 1 + 11 + 16 + 1 + 1 = 30 after five tricks.
    assert scored(events) == HandScored(0, Bid.points(30), True, (30, 0), (1, 0), (1, 0))
    assert state.phase is Phase.DEAL
    assert len(state.hand.tricks) == 5


def test_end_hand_when_decided_play_stops_as_soon_as_the_bid_cannot_be_made():
    # Seat 1 bids 30 on DEAL_A and names sixes, which seat 0 holds. After the first trick
    # seats 0 and 2 hold 16 points: at most 42 - 16 = 26 are left for seats 1 and 3.
    state = bid_and_declare("texas42", DEAL_A, Bid.points(30), bidder=1)
    state, events = plays(state, "5-5 4-1 1-0 6-6")
    assert trick_winner(events) == 0
    assert scored(events) == HandScored(1, Bid.points(30), False, (16, 0), (1, 0), (1, 0))
    assert state.phase is Phase.DEAL


def test_end_hand_when_decided_an_all_tricks_bid_stops_at_the_first_trick_lost():
    state = bid_and_declare("texas42", DEAL_F, Bid.marks(1))
    state, events = plays(state, "1-0 5-1 3-1 1-1")  # seat 3's 1-1 wins the ones
    assert scored(events) == HandScored(0, Bid.marks(1), False, (0, 1), (0, 1), (0, 1))


def test_end_hand_when_decided_off_every_trick_is_played():
    state = bid_and_declare(every_trick(), DEAL_F, Bid.points(30))
    state, events = play_tricks(state, TRICKS_F)
    assert len(state.hand.tricks) == 7
    assert scored(events).taken == (36, 6)


def test_end_hand_when_decided_off_an_all_tricks_bid_lost_early_is_played_out():
    state = bid_and_declare(every_trick(), DEAL_F, Bid.marks(1))
    tricks = [
        "1-0 5-1 3-1 1-1",  # seat 3 wins: 1
        "6-0 6-6 5-5 4-3",  # seat 3 leads a trump, seat 0 overtrumps: 1 + 10
        "6-5 5-4 4-2 3-0",  # 1
        "6-4 5-3 4-1 2-2",  # 1 + 10 + 5
        "6-3 5-2 4-0 2-1",  # 1
        "6-2 5-0 3-3 2-0",  # 1 + 5
        "6-1 4-4 3-2 0-0",  # 1 + 5
    ]
    state, events = play_tricks(state, tricks)
    assert len(state.hand.tricks) == 7
    # Seats 0 and 2: 11 + 1 + 16 + 1 + 6 + 6 = 41 points, and still set.
    assert scored(events) == HandScored(0, Bid.marks(1), False, (41, 1), (0, 1), (0, 1))


# ---------------------------------------------------------------- 3 players: everyone alone

DEAL_3 = [  # three players, nine tiles each; the 6-4 lies out of play
    "6-6 6-5 6-3 6-2 6-1 6-0 5-5 4-4 3-3",
    "5-4 5-3 5-2 5-1 5-0 4-3 4-2 4-1 4-0",
    "3-2 3-1 3-0 2-2 2-1 2-0 1-1 1-0 0-0",
]
LAYDOWN_3 = [  # seat 0 takes every trick
    "6-6 5-4 2-2",
    "6-5 5-3 2-1",
    "6-3 5-2 2-0",
    "6-2 5-1 1-1",
    "6-1 4-3 1-0",
    "6-0 4-2 0-0",
    "5-5 5-0 3-2",  # 1 + 10 + 5 + 5
    "4-4 4-1 3-1",  # 1 + 5
    "3-3 4-0 3-0",
]


def three_players(bid, **options):
    rules = ruleset("texas42", players=3, **options)
    state = deal_hands(rules, DEAL_3, rest="6-4", dealer=2)
    state, _ = auction(state, {0: bid})
    return declare(state, SIXES)


def test_a_bid_the_deal_cannot_reach_is_set():
    # 9 tricks + 35 count - the 6-4 out of play = 34 points at most: a 40 bid is set even
    # though seat 0 takes every trick. Each other player scores the mark.
    _, events = play_tricks(three_players(Bid.points(40), end_hand_when_decided=False), LAYDOWN_3)
    assert scored(events) == HandScored(0, Bid.points(40), False, (34, 0, 0), (0, 1, 1), (0, 1, 1))


def test_end_hand_when_decided_a_bid_the_deal_cannot_reach_is_set_at_the_first_trick():
    _, events = plays(three_players(Bid.points(40)), LAYDOWN_3[0])
    assert scored(events) == HandScored(0, Bid.points(40), False, (1, 0, 0), (0, 1, 1), (0, 1, 1))


def test_playing_alone_a_made_bid_scores_for_the_bidder_only():
    _, events = play_tricks(three_players(Bid.points(30)), LAYDOWN_3)
    # 6 tricks (6) + 5-5 trick (21) + 4-4 trick (6) = 33 >= 30 after the eighth trick.
    assert scored(events) == HandScored(0, Bid.points(30), True, (33, 0, 0), (1, 0, 0), (1, 0, 0))


def test_playing_alone_the_all_tricks_bid_is_worth_one_mark_whatever_the_count():
    # Three players: 9 tricks, and the 6-4 out of play; taking all 9 makes the "42".
    _, events = play_tricks(three_players(Bid.marks(1)), LAYDOWN_3)
    assert scored(events) == HandScored(0, Bid.marks(1), True, (34, 0, 0), (1, 0, 0), (1, 0, 0))


# ---------------------------------------------------------------- marks to win


def test_a_game_is_won_by_the_first_team_to_seven_marks():
    state = bid_and_declare("texas42", DEAL_A, Bid.points(30), scores=(6, 5))
    state, events = play_tricks(state, LAYDOWN_A)
    assert scored(events).scores == (7, 5)
    assert events[-1] == GameWon(0, (0, 2))
    assert state.phase is Phase.GAME_OVER
    assert state.winner == 0


def test_six_marks_do_not_win():
    state = bid_and_declare("texas42", DEAL_A, Bid.points(30), scores=(5, 6))
    state, events = play_tricks(state, LAYDOWN_A)
    assert scored(events).scores == (6, 6)
    assert not any(isinstance(e, GameWon) for e in events)
    assert state.phase is Phase.DEAL


def test_a_set_can_win_the_game_for_the_opponents():
    state = bid_and_declare("texas42", DEAL_A, Bid.points(30), bidder=1, scores=(6, 0))
    state, events = plays(state, "5-5 4-1 1-0 6-6")
    assert events[-1] == GameWon(0, (0, 2))


def test_marks_to_win_option():
    rules = ruleset("texas42", marks_to_win=2)
    state = bid_and_declare(rules, DEAL_A, Bid.marks(2))
    _, events = play_tricks(state, LAYDOWN_A)
    assert events[-1] == GameWon(0, (0, 2))


def test_marks_to_win_is_seven_by_default():
    assert ruleset("texas42").marks_to_win == 7


def test_nothing_more_is_played_once_the_game_is_won():
    state = bid_and_declare("texas42", DEAL_A, Bid.points(30), scores=(6, 0))
    state, _ = play_tricks(state, LAYDOWN_A)
    with pytest.raises(GameOver):
        decide(state, Deal(b"again"))


def test_several_teams_over_the_target_on_one_hand_tie_plays_another_hand():
    # engine/scoring.game_winner applies RULES.md 3's rule to 42: the bidder's team wins if
    # among them, else the highest score; a tie plays on.
    rules = ruleset("texas42", players=3)
    state = deal_hands(rules, DEAL_3, rest="6-4", dealer=2)
    state = with_scores(state, 0, 6, 6)
    state, _ = auction(state, {0: Bid.points(40)})
    state, events = plays(declare(state, SIXES), LAYDOWN_3[0])
    assert scored(events).scores == (0, 7, 7)
    assert not any(isinstance(e, GameWon) for e in events)


def test_several_teams_over_the_target_the_highest_score_wins():
    rules = ruleset("texas42", players=3)
    state = deal_hands(rules, DEAL_3, rest="6-4", dealer=2)
    state = with_scores(state, 0, 6, 7)
    state, _ = auction(state, {0: Bid.points(40)})
    _, events = plays(declare(state, SIXES), LAYDOWN_3[0])
    assert events[-1] == GameWon(2, (2,))


def test_a_set_bidder_at_the_target_never_wins_the_game():
    # Three players, each a team: a tie at 7 played on; seat 0 bids 40 and is set, so the
    # others score a mark. Seat 0 still stands at 7, but being set loses: seat 1 (8) wins.
    rules = ruleset("texas42", players=3)
    state = deal_hands(rules, DEAL_3, rest="6-4", dealer=2)
    state = with_scores(state, 7, 7, 0)
    state, _ = auction(state, {0: Bid.points(40)})
    _, events = plays(declare(state, SIXES), LAYDOWN_3[0])
    assert scored(events).made is False
    assert scored(events).scores == (7, 8, 1)
    assert events[-1] == GameWon(1, (1,))


# ---------------------------------------------------------------- points to win (house rule)

POINTS = "texas42-points"


def test_texas42_points_preset_plays_to_250_with_every_trick_played():
    rules = ruleset(POINTS)
    assert rules.points_to_win == 250
    assert rules.end_hand_when_decided is False


def test_points_made_each_team_scores_the_points_it_took():
    scored_ = result(POINTS, DEAL_F, TRICKS_F, Bid.points(30))
    assert scored_ == HandScored(0, Bid.points(30), True, (36, 6), (36, 6), (36, 6))


def test_points_set_bidding_team_scores_nothing_opponents_the_bid_plus_what_they_took():
    scored_ = result(POINTS, DEAL_F, TRICKS_F, Bid.points(37))
    # 37 + 6 = 43
    assert scored_ == HandScored(0, Bid.points(37), False, (36, 6), (0, 43), (0, 43))


def test_points_a_made_mark_bid_scores_its_value_42_points_a_mark():
    scored_ = result(POINTS, DEAL_A, LAYDOWN_A, Bid.marks(2))
    # taken 42, but a made 84 is worth max(42, 2 * 42) = 84
    assert scored_ == HandScored(0, Bid.marks(2), True, (42, 0), (84, 0), (84, 0))


def test_points_a_set_mark_bid_gives_the_opponents_its_value_plus_what_they_took():
    scored_ = result(POINTS, DEAL_F, TRICKS_F, Bid.marks(1))
    # 42 + 6 = 48
    assert scored_ == HandScored(0, Bid.marks(1), False, (36, 6), (0, 48), (0, 48))


def test_points_the_first_team_to_points_to_win_wins():
    state = bid_and_declare(POINTS, DEAL_F, Bid.points(30), scores=(220, 0))
    _, events = play_tricks(state, TRICKS_F)
    assert scored(events).scores == (256, 6)
    assert events[-1] == GameWon(0, (0, 2))


def test_points_with_end_hand_when_decided_tiles_left_unplayed_count_for_nobody():
    rules = ruleset(POINTS, end_hand_when_decided=True)
    scored_ = result(rules, DEAL_F, TRICKS_F, Bid.points(30))
    assert scored_ == HandScored(0, Bid.points(30), True, (30, 0), (30, 0), (30, 0))


def test_after_a_hand_is_scored_the_next_hand_is_dealt():
    state = bid_and_declare("texas42", DEAL_F, Bid.points(30))
    state, _ = play_tricks(state, TRICKS_F)
    assert state.phase is Phase.DEAL
    state, events = act(state, Deal(b"next"))
    assert events[0].number == 2
    assert events[0].dealer == 0  # DEAL_F was dealt by seat 3
