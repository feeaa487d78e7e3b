"""Option ``hand_limit`` (issue 6; not in the seed texts: duplicate tournaments play each deal
as a "board" of its own, as in duplicate bridge). 0 plays to the target as before; N > 0 also
ends the game once N hands have been scored, redeals not counting. A winner by the target in
that hand wins as usual; otherwise the highest score, a tie going to the last bidder's team if
tied, else to the first tied team clockwise from the last bidder."""

import pytest
from helpers import (
    DEAL_A,
    SIXES,
    act,
    auction,
    deal_hands,
    declare,
    exchange,
    new_game,
    plays,
    run,
    turn,
    with_scores,
)

from boneyard.engine import (
    AllPassed,
    Bid,
    Deal,
    GameOver,
    GameWon,
    HandScored,
    Pass,
    Phase,
    RulesetError,
    decide,
    option_names,
    ruleset,
)

LAYDOWN_A = "6-6 5-5 4-1 3-0 6-5 5-0 3-2 2-2 6-4 5-4 4-3 2-1"  # 38 points to seats 0 and 2

DEAL_3 = [  # three players, nine tiles each; the 6-4 lies out of play
    "6-6 6-5 6-3 6-2 6-1 6-0 5-5 4-4 3-3",
    "5-4 5-3 5-2 5-1 5-0 4-3 4-2 4-1 4-0",
    "3-2 3-1 3-0 2-2 2-1 2-0 1-1 1-0 0-0",
]

# Moon, as in test_moon.py: the strong hand takes the widow's 2-1, lays out the 0-0, names
# sixes, and takes five tricks; the two others take one each.
STRONG, SECOND, THIRD = (
    "6-6 6-5 6-4 6-3 6-2 3-2 0-0",
    "6-1 5-5 5-4 5-3 5-2 5-1 4-4",
    "4-3 4-2 4-1 3-3 3-1 2-2 1-1",
)
FIVE_ONE_ONE = "6-6 6-1 4-1 6-5 5-5 4-3 6-4 5-4 3-1 6-3 5-3 2-2 6-2 5-2 1-1 3-2 5-1 3-3 4-2 2-1 4-4"
DEAL_MOON = [  # seat 0 holds six sixes and 5-5; the widow is 0-0
    "6-6 6-5 6-4 6-3 6-2 6-1 5-5",
    "5-4 5-3 5-2 5-1 4-4 4-3 4-2",
    "4-1 3-3 3-2 3-1 2-2 2-1 1-1",
]
ALL_SEVEN = (  # seat 0 takes the 0-0, lays out the 6-1, names sixes and takes every trick
    "6-6 4-2 2-1 6-5 4-3 1-1 6-4 4-4 2-2 6-3 5-1 3-1 6-2 5-2 3-2 5-5 5-4 4-1 0-0 5-3 3-3"
)


def texas42_hand(game, bidder=0, scores=None):
    """DEAL_A with the sixes in ``bidder``'s hand: it bids 30, names sixes and makes it with 38
    points, a mark for its team. ``game``: a ruleset, or the game so far."""
    hands = [DEAL_A[(seat - bidder) % 4] for seat in range(4)]
    state = deal_hands(game, hands, dealer=(bidder - 1) % 4)
    if scores is not None:
        state = with_scores(state, *scores)
    state, _ = auction(state, {bidder: Bid.points(30)})
    return plays(declare(state, SIXES), LAYDOWN_A)


def texas42_set_hand(rules):
    """DEAL_A: seat 1 bids 30 and names sixes, which seat 0 holds: set on the first trick (16
    points to seats 0 and 2, more than the 12 a 30 leaves them), a
    mark for seats 0 and 2."""
    state = deal_hands(rules, DEAL_A, dealer=0)
    state, _ = auction(state, {1: Bid.points(30)})
    return plays(declare(state, SIXES), "5-5 4-1 1-0 6-6")


def moon_hand(bidder, bid, scores, **options):
    """The strong Moon hand in ``bidder``'s seat: it bids ``bid`` (the others pass) and takes
    five tricks, the others one each."""
    hands = [""] * 3
    for offset, held in enumerate((STRONG, SECOND, THIRD)):
        hands[(bidder + offset) % 3] = held
    rules = ruleset("moon", hand_limit=1, **options)
    state = with_scores(deal_hands(rules, hands, rest="2-1", dealer=(bidder - 1) % 3), *scores)
    state, _ = auction(state, {bidder: bid})
    return plays(declare(exchange(state, "0-0"), SIXES), FIVE_ONE_ONE)


# ---------------------------------------------------------------- the option


def test_hand_limit_is_0_no_limit_by_default():
    for preset in ("texas42", "texas42-house", "texas42-points", "moon", "moon-s1"):
        assert ruleset(preset).hand_limit == 0


def test_hand_limit_is_an_option_of_both_games():
    assert "hand_limit" in option_names()
    assert ruleset("texas42", {"hand_limit": 1}).hand_limit == 1
    assert ruleset("moon", {"hand_limit": "2"}).hand_limit == 2
    assert ruleset("texas42", hand_limit=3).options()["hand_limit"] == 3


def test_a_negative_hand_limit_is_refused():
    with pytest.raises(RulesetError, match="hand_limit=-1"):
        ruleset("texas42", hand_limit=-1)


# ---------------------------------------------------------------- Texas 42


def test_a_one_hand_game_ends_after_the_hand():
    state, events = texas42_hand(ruleset("texas42", hand_limit=1))
    assert events[-2:] == [
        HandScored(0, Bid.points(30), True, (38, 0), (1, 0), (1, 0)),
        GameWon(0, (0, 2)),
    ]
    assert state.phase is Phase.GAME_OVER and state.winner == 0


def test_a_one_hand_game_is_won_by_the_team_with_more_marks_the_setting_team_too():
    _, events = texas42_set_hand(ruleset("texas42", hand_limit=1))
    assert events[-2:] == [
        HandScored(1, Bid.points(30), False, (16, 0), (1, 0), (1, 0)),
        GameWon(0, (0, 2)),
    ]


def test_nothing_more_is_dealt_once_the_hand_limit_is_reached():
    state, _ = texas42_hand(ruleset("texas42", hand_limit=1))
    with pytest.raises(GameOver):
        decide(state, Deal(b"board 2"))


def test_without_hand_limit_the_game_goes_on_after_the_hand():
    state, events = texas42_hand(ruleset("texas42"))
    assert not any(isinstance(e, GameWon) for e in events)
    assert state.phase is Phase.DEAL


def test_the_game_ends_only_when_the_limit_of_hands_is_scored():
    rules = ruleset("texas42", hand_limit=2)
    state, events = texas42_hand(rules)
    assert not any(isinstance(e, GameWon) for e in events)
    state, events = texas42_hand(state, bidder=1)
    # A mark each after two hands: the tie goes to the last hand's bidding team.
    assert scored_scores(events) == (1, 1)
    assert events[-1] == GameWon(1, (1, 3))


def scored_scores(events):
    return next(e.scores for e in events if isinstance(e, HandScored))


def test_a_redeal_does_not_count_as_a_hand():
    state = run(new_game("texas42-redeal", hand_limit=1), Deal(b"board 1"))
    while state.phase is Phase.BIDDING:
        state, events = act(state, Pass(turn(state)))
    assert isinstance(events[-1], AllPassed)
    assert state.phase is Phase.DEAL and not state.results
    state, events = texas42_hand(state, bidder=(state.next_dealer + 1) % 4)
    assert isinstance(events[-1], GameWon)
    assert len(state.results) == 1 and state.deals == 2


def test_a_winner_by_marks_to_win_in_the_last_hand_wins_as_usual():
    rules = ruleset("texas42", hand_limit=1, marks_to_win=1)
    _, events = texas42_hand(rules)
    assert events[-1] == GameWon(0, (0, 2))
    assert sum(isinstance(e, GameWon) for e in events) == 1


def test_a_tie_over_the_target_is_decided_by_the_hand_limit():
    # Three players alone, 7 marks to win: seat 0's 40 is set on the first trick and seats 1
    # and 2 both reach 7. Without a limit the tie plays another hand (RULES.md 3); with the
    # limit reached, the tie goes clockwise from the bidder: seat 1.
    rules = ruleset("texas42", players=3, hand_limit=1)
    state = with_scores(deal_hands(rules, DEAL_3, rest="6-4", dealer=2), 0, 6, 6)
    state, _ = auction(state, {0: Bid.points(40)})
    _, events = plays(declare(state, SIXES), "6-6 5-4 2-2")
    assert scored_scores(events) == (0, 7, 7)
    assert events[-1] == GameWon(1, (1,))


# ---------------------------------------------------------------- Moon


def test_moon_one_hand_game_the_highest_score_wins():
    _, events = moon_hand(0, Bid.tricks(5), (0, 0, 0))
    assert scored_scores(events) == (5, 1, 1)
    assert events[-1] == GameWon(0, (0,))


def test_moon_one_hand_game_a_tie_with_the_bidder_goes_to_the_bidder():
    _, events = moon_hand(0, Bid.tricks(5), (0, 4, 3))
    assert scored_scores(events) == (5, 5, 4)
    assert events[-1] == GameWon(0, (0,))


def test_moon_one_hand_game_a_tie_without_the_bidder_goes_clockwise_from_the_bidder():
    # Seat 1 bids 6 and is set (-6); seats 0 and 2 tie at 5: seat 2 comes first after seat 1.
    _, events = moon_hand(1, Bid.tricks(6), (4, 0, 4))
    assert scored_scores(events) == (5, -6, 5)
    assert events[-1] == GameWon(2, (2,))


def test_moon_one_hand_game_a_made_moon_wins_as_usual_with_moon_wins_game():
    # Seat 0 shoots the moon and takes all seven tricks: +21 makes 11, under the others' 15,
    # but moon_wins_game [S1] wins the game by the rules, before the limit is looked at.
    rules = ruleset("moon", hand_limit=1, moon_wins_game=True)
    state = with_scores(deal_hands(rules, DEAL_MOON, rest="0-0", dealer=2), -10, 15, 15)
    state, _ = auction(state, {0: Bid.moon()})
    _, events = plays(declare(exchange(state, "6-1"), SIXES), ALL_SEVEN)
    assert scored_scores(events) == (11, 15, 15)
    assert events[-1] == GameWon(0, (0,))


# ---------------------------------------------------------------- deal_limit (issue 31)
# No game goes on for ever: ``deal_limit`` counts every deal, redeals included, and a server
# gives every game one. Reaching it ends the game as ``hand_limit`` does.


def test_a_preset_alone_has_no_deal_limit():
    # A game written down before the limit existed names its preset and the options that
    # differ from it: it reads as it was played. A server gives every game it makes one.
    from boneyard.engine.rulesets import DEAL_LIMIT, PRESETS

    assert DEAL_LIMIT > 0
    for preset in PRESETS:
        assert ruleset(preset).deal_limit == 0, preset


def test_a_ruleset_without_a_deal_limit_reads_as_it_did_before_the_option_existed():
    # Bots draw their deals from a view's text: a view without a limit must not change.
    assert "deal_limit" not in repr(ruleset("moon"))
    assert "deal_limit=12" in repr(ruleset("moon", deal_limit=12))
    assert repr(ruleset("texas42")).startswith("Ruleset(name='texas42', family='texas42', ")


def test_deal_limit_is_an_option_of_both_games():
    assert "deal_limit" in option_names()
    assert ruleset("texas42", {"deal_limit": "100"}).deal_limit == 100
    assert ruleset("moon", deal_limit=7).options()["deal_limit"] == 7


def test_a_deal_limit_out_of_bounds_is_refused():
    with pytest.raises(RulesetError, match="deal_limit=-1"):
        ruleset("moon", deal_limit=-1)
    with pytest.raises(RulesetError, match="deal_limit=10001"):
        ruleset("moon", deal_limit=10_001)


def pass_out(state):
    """Deal and let every seat pass."""
    state = run(state, Deal(b"deal %d" % state.deals))
    events = []
    while state.phase is Phase.BIDDING:
        state, events = act(state, Pass(turn(state)))
    return state, events


def test_moon_passed_out_hand_after_hand_ends_at_the_deal_limit():
    state = new_game("moon", deal_limit=3)
    for _ in range(2):
        state, events = pass_out(state)
        assert isinstance(events[-1], AllPassed) and state.phase is Phase.DEAL
    state, events = pass_out(state)
    # Three deals, no hand scored, 0 / 0 / 0: the first seat clockwise from the last dealer.
    dealer = state.hand.dealer
    assert state.deals == 3 and not state.results
    assert isinstance(events[-2], AllPassed)
    assert events[-1] == GameWon((dealer + 1) % 3, ((dealer + 1) % 3,))
    assert state.phase is Phase.GAME_OVER
    with pytest.raises(GameOver):
        decide(state, Deal(b"one more"))


def test_the_deal_limit_counts_a_redeal_as_a_deal():
    state, _ = pass_out(new_game("texas42-redeal", deal_limit=2))
    bidder = (state.next_dealer + 1) % 4
    state, events = texas42_hand(state, bidder=bidder)
    # The second deal is the last: the bidder's team made its mark and has the most.
    assert state.deals == 2 and len(state.results) == 1
    assert events[-1] == GameWon(bidder % 2, (bidder % 2, bidder % 2 + 2))


def test_a_scored_hand_at_the_deal_limit_ends_the_game_on_the_scores():
    rules = ruleset("texas42", deal_limit=2)
    state, events = texas42_hand(rules)
    assert not any(isinstance(e, GameWon) for e in events)
    state, events = texas42_hand(state, bidder=1)
    # A mark each after two deals: the tie goes to the last hand's bidding team, as by
    # hand_limit.
    assert scored_scores(events) == (1, 1)
    assert events[-1] == GameWon(1, (1, 3))
