"""RULES.md section 1: suits, trump, leading, following and who wins a trick (both games),
and the no-suit rules of the special 42 contracts nello and sevens.

Positions are dealt exactly (see ``helpers.in_play``): the bidder, seat 0 unless said, has
won the auction and declared, and leads. Hands hold only the tiles that matter.
"""

import itertools

import pytest
from helpers import T, in_play, legal_tiles, plays, tiles, trick_winner, turn

from boneyard.engine import (
    DOUBLES,
    FOLLOW_ME,
    Bid,
    Contract,
    MustFollowSuit,
    MustPlayNearestSeven,
    NotYourTurn,
    PlayTile,
    TileNotInHand,
    decide,
    ruleset,
)

BLANKS, ONES, TWOS, THREES, FOURS, FIVES, SIXES = range(7)

HOUSE = "texas42-house"


def winner(contract, hands, order=None, rules="texas42"):
    """Deal ``hands`` (one tile each, or more), let seat 0 declare and lead, play the tiles
    of ``order`` (default: each seat's first tile, seat 0 first) and say who won."""
    state = in_play(rules, hands, contract)
    if order is None:
        order = " ".join(h.split()[0] for h in hands)
    _, events = plays(state, order)
    return trick_winner(events)


def after_lead(contract, hands, lead, rules="texas42", **options):
    r = ruleset(rules, **options)
    state = in_play(r, hands, contract)
    state, _ = plays(state, lead)
    return state


# ---------------------------------------------------------------- rank within a suit

THREES_HIGH_TO_LOW = ["3-3", "6-3", "5-3", "4-3", "3-2", "3-1", "3-0"]


@pytest.mark.parametrize("higher,lower", list(itertools.pairwise(THREES_HIGH_TO_LOW)))
def test_rank_within_a_suit_double_highest_then_other_end_high_to_low(higher, lower):
    # With threes trump every three is a trump; the ranking is the suit's.
    assert winner(THREES, [lower, higher, "6-6", "5-5"]) == 1
    assert winner(THREES, [higher, lower, "6-6", "5-5"]) == 0


def test_in_a_non_trump_suit_6_3_outranks_5_3_and_4_3_when_threes_are_led():
    assert winner(FOLLOW_ME, ["3-0", "5-3", "6-3", "4-3"]) == 2


def test_in_a_non_trump_suit_the_double_outranks_every_other_tile():
    assert winner(FOLLOW_ME, ["3-1", "6-3", "3-3", "3-2"]) == 2


# ---------------------------------------------------------------- trump suit membership


def test_with_sixes_trump_6_3_is_a_six_never_a_three():
    state = after_lead(SIXES, ["3-1", "6-3 3-2", "0-0", "1-1"], "3-1")
    assert legal_tiles(state) == "3-2"
    with pytest.raises(MustFollowSuit):
        decide(state, PlayTile(1, T("6-3")))


def test_with_sixes_trump_a_player_without_threes_may_play_6_3_on_a_threes_lead():
    state = after_lead(SIXES, ["3-1", "6-3 5-1", "0-0", "1-1"], "3-1")
    assert legal_tiles(state) == "6-3 5-1"


def test_with_sixes_trump_6_3_on_a_threes_lead_wins_as_a_trump():
    assert winner(SIXES, ["3-3", "6-3", "3-2", "4-3"]) == 1


def test_with_sixes_trump_leading_6_3_calls_for_trumps():
    state = after_lead(SIXES, ["6-3", "6-1 3-2", "0-0", "1-1"], "6-3")
    assert legal_tiles(state) == "6-1"


def test_every_tile_bearing_the_trump_number_is_a_trump():
    # Fives trump: 5-0, the lowest five, beats the 6-6 on a sixes lead.
    assert winner(FIVES, ["6-4", "6-6", "5-0", "6-1"]) == 2


def test_with_doubles_trump_the_doubles_rank_6_6_high_down_to_0_0():
    assert winner(DOUBLES, ["0-0", "3-3", "6-6", "1-1"]) == 2
    assert winner(DOUBLES, ["4-4", "1-1", "5-5", "0-0"]) == 2


def test_with_doubles_trump_a_led_double_calls_for_doubles():
    state = after_lead(DOUBLES, ["5-5", "2-2 5-1", "0-0", "1-1"], "5-5")
    assert legal_tiles(state) == "2-2"


def test_with_doubles_trump_other_tiles_keep_their_suits():
    # 6-4 leads sixes; 6-6 is a double, a trump, and no longer a six.
    state = after_lead(DOUBLES, ["6-4", "6-6 6-1", "0-0", "1-1"], "6-4")
    assert legal_tiles(state) == "6-1"


def test_with_doubles_trump_0_0_beats_a_non_trump_lead():
    assert winner(DOUBLES, ["6-5", "6-1", "0-0", "5-4"]) == 2


def test_follow_me_has_no_trump():
    # Nothing beats the led suit: the 6-6 and 5-5 played on a fours lead never win.
    assert winner(FOLLOW_ME, ["4-0", "6-6", "5-5", "4-1"]) == 3


def test_follow_me_doubles_are_highest_in_their_own_suit():
    assert winner(FOLLOW_ME, ["5-1", "5-0", "5-5", "6-5"]) == 2


def test_follow_me_a_double_belongs_only_to_its_number():
    # 6-5 leads sixes; 5-5 is a five only, so a player with 5-5 and no six plays anything.
    state = after_lead(FOLLOW_ME, ["6-5", "5-5 4-1", "0-0", "1-1"], "6-5")
    assert legal_tiles(state) == "5-5 4-1"


# ---------------------------------------------------------------- leading


def test_leading_a_trump_leads_trump_whatever_its_higher_end():
    # Fives trump: 6-5 is led as a trump, not as a six.
    state = after_lead(FIVES, ["6-5", "6-2 5-1", "0-0", "1-1"], "6-5")
    assert legal_tiles(state) == "5-1"


def test_a_non_trump_lead_calls_for_its_higher_end():
    state = after_lead(FOLLOW_ME, ["6-2", "6-0 2-1", "0-0", "1-1"], "6-2")
    assert legal_tiles(state) == "6-0"


def test_a_non_trump_lead_does_not_call_for_its_lower_end():
    state = after_lead(FOLLOW_ME, ["6-2", "2-1 4-3", "0-0", "1-1"], "6-2")
    assert legal_tiles(state) == "4-3 2-1"


def test_a_led_double_calls_for_its_number():
    state = after_lead(FOLLOW_ME, ["4-4", "6-6 4-0", "0-0", "1-1"], "4-4")
    assert legal_tiles(state) == "4-0"


def test_with_a_suit_trump_a_led_double_calls_for_its_number():
    state = after_lead(FIVES, ["4-4", "6-6 4-0", "0-0", "1-1"], "4-4")
    assert legal_tiles(state) == "4-0"


# ---------------------------------------------------------------- following


def test_must_follow_the_led_suit_when_able():
    state = after_lead(FOLLOW_ME, ["6-2", "6-0 2-1", "0-0", "1-1"], "6-2")
    with pytest.raises(MustFollowSuit):
        decide(state, PlayTile(1, T("2-1")))


def test_when_trump_is_led_any_trump_follows():
    # Fives trump, 5-5 led: 6-5 is a trump and must be played; 6-6 may not.
    state = after_lead(FIVES, ["5-5", "6-6 6-5", "0-0", "1-1"], "5-5")
    assert legal_tiles(state) == "6-5"


def test_a_trump_of_the_led_number_does_not_follow_a_non_trump_lead():
    # Fives trump, sixes led: 6-5 is a five, so the 6-1 must be played.
    state = after_lead(FIVES, ["6-4", "6-5 6-1", "0-0", "1-1"], "6-4")
    assert legal_tiles(state) == "6-1"
    with pytest.raises(MustFollowSuit):
        decide(state, PlayTile(1, T("6-5")))


def test_a_trump_of_the_led_number_is_free_to_play_when_unable_to_follow():
    state = after_lead(FIVES, ["6-4", "6-5 3-1", "0-0", "1-1"], "6-4")
    assert legal_tiles(state) == "6-5 3-1"


def test_a_player_unable_to_follow_may_play_any_tile_trump_included():
    state = after_lead(FIVES, ["6-4", "5-0 3-1 2-2", "0-0", "1-1"], "6-4")
    assert legal_tiles(state) == "5-0 3-1 2-2"


def test_may_not_trump_when_able_to_follow_by_default():
    state = after_lead(FIVES, ["6-4", "6-1 5-0", "0-0", "1-1"], "6-4")
    assert legal_tiles(state) == "6-1"
    with pytest.raises(MustFollowSuit):
        decide(state, PlayTile(1, T("5-0")))


def test_may_trump_when_able_to_follow_allows_a_trump_instead_of_following():
    state = after_lead(
        FIVES, ["6-4", "6-1 5-0 3-1", "0-0", "1-1"], "6-4", may_trump_when_able_to_follow=True
    )
    assert legal_tiles(state) == "6-1 5-0"


def test_may_trump_when_able_to_follow_still_forbids_other_tiles_off_the_led_suit():
    state = after_lead(
        FIVES, ["6-4", "6-1 5-0 3-1", "0-0", "1-1"], "6-4", may_trump_when_able_to_follow=True
    )
    with pytest.raises(MustFollowSuit):
        decide(state, PlayTile(1, T("3-1")))


def test_may_trump_when_able_to_follow_a_trump_lead_still_calls_for_trumps():
    state = after_lead(
        FIVES, ["5-5", "5-1 6-1", "0-0", "1-1"], "5-5", may_trump_when_able_to_follow=True
    )
    assert legal_tiles(state) == "5-1"


def test_a_player_plays_only_a_tile_it_holds():
    state = in_play("texas42", ["6-2", "6-0 2-1", "0-0", "1-1"], FOLLOW_ME)
    with pytest.raises(TileNotInHand):
        decide(state, PlayTile(0, T("6-6")))


def test_a_player_plays_only_in_turn():
    state = in_play("texas42", ["6-2", "6-0 2-1", "0-0", "1-1"], FOLLOW_ME)
    with pytest.raises(NotYourTurn):
        decide(state, PlayTile(1, T("6-0")))


def test_a_tile_played_leaves_the_hand():
    state = in_play("texas42", ["6-2 1-0", "6-0 2-1", "0-0", "1-1"], FOLLOW_ME)
    state, _ = plays(state, "6-2")
    assert state.hand.hands[0] == tiles("1-0")


# ---------------------------------------------------------------- who wins the trick


def test_highest_trump_wins():
    assert winner(FIVES, ["6-5", "5-5", "5-0", "5-4"]) == 1


def test_trump_beats_double_of_led_suit():
    assert winner(FIVES, ["6-4", "6-6", "5-0", "6-1"]) == 2


def test_without_trump_played_the_highest_of_the_led_suit_wins():
    assert winner(FIVES, ["6-1", "6-2", "6-4", "6-0"]) == 2


def test_a_tile_that_neither_follows_nor_trumps_never_wins():
    assert winner(FOLLOW_ME, ["2-0", "6-6", "5-5", "6-5"]) == 0


def test_a_lower_trump_played_after_a_higher_trump_does_not_win():
    assert winner(FIVES, ["6-4", "5-4", "5-1", "6-6"]) == 1


def test_the_winner_leads_the_next_trick():
    state = in_play("texas42", ["6-1 2-2", "6-5 1-1", "6-2 0-0", "6-0 3-3"], FOLLOW_ME)
    state, events = plays(state, "6-1 6-5 6-2 6-0")
    assert trick_winner(events) == 1
    assert turn(state) == 1
    state, events = plays(state, "1-1 0-0 3-3 2-2")
    assert trick_winner(events) == 1


@pytest.mark.parametrize("seat_of_4_4", [0, 1, 2, 3])
def test_s1_step_5_fours_trump_4_4_beats_6_4_4_3_4_2(seat_of_4_4):
    # [S1] step 5: "if 4 is trump and the tiles played are 4-4, 2-4, 3-4 and 4-6, the 4-4 is
    # the heaviest and wins the trick".
    others = ["4-2", "4-3", "6-4"]
    hands = others[:seat_of_4_4] + ["4-4"] + others[seat_of_4_4:]
    assert winner(FOURS, hands) == seat_of_4_4


def test_blanks_trump_in_moon_0_0_is_the_only_trump():
    assert winner(BLANKS, ["6-6", "0-0", "6-5"], rules="moon") == 1


def test_blanks_trump_in_moon_0_0_does_not_follow_a_number_lead():
    state = after_lead(BLANKS, ["6-6", "0-0 6-1", "5-5"], "6-6", rules="moon")
    assert legal_tiles(state) == "6-1"


def test_blanks_trump_in_moon_leading_0_0_calls_for_trumps_nobody_else_can_hold():
    state = after_lead(BLANKS, ["0-0", "6-6 1-1", "5-5"], "0-0", rules="moon")
    assert legal_tiles(state) == "6-6 1-1"
    _, events = plays(state, "6-6 5-5")
    assert trick_winner(events) == 0


def test_moon_tricks_follow_the_same_rules_with_three_players():
    assert winner(FIVES, ["6-4", "6-6", "5-1"], rules="moon") == 2


# ---------------------------------------------------------------- nello: no trump; doubles


def nello_winner(hands, nello_doubles="high"):
    """Seat 0 bids 42 and declares nello; seat 2 sits out; seats 0, 1, 3 play."""
    r = ruleset(HOUSE, nello_doubles=nello_doubles)
    state = in_play(r, hands, Contract.nello(), bid=Bid.marks(1))
    order = " ".join(hands[s].split()[0] for s in (0, 1, 3))
    _, events = plays(state, order)
    return trick_winner(events)


def nello_after_lead(hands, lead, nello_doubles):
    r = ruleset(HOUSE, nello_doubles=nello_doubles)
    state = in_play(r, hands, Contract.nello(), bid=Bid.marks(1))
    state, _ = plays(state, lead)
    return state


def test_nello_has_no_trump():
    assert nello_winner(["4-1", "6-6", "", "4-0"]) == 0


def test_nello_doubles_high_the_double_is_highest_in_its_suit():
    assert nello_winner(["5-0", "5-5", "", "6-5"], "high") == 1


def test_nello_doubles_low_the_double_is_lowest_in_its_suit():
    assert nello_winner(["5-5", "5-0", "", "1-0"], "low") == 1
    assert nello_winner(["5-1", "5-5", "", "5-0"], "low") == 0


def test_nello_doubles_low_the_double_still_follows_its_number():
    state = nello_after_lead(["5-1", "5-5 3-0", "", "1-1"], "5-1", "low")
    assert legal_tiles(state) == "5-5"


def test_nello_doubles_own_suit_a_led_double_calls_for_doubles():
    state = nello_after_lead(["5-5", "2-2 5-1", "", "1-1"], "5-5", "own_suit")
    assert legal_tiles(state) == "2-2"


def test_nello_doubles_own_suit_6_6_is_the_highest_double():
    assert nello_winner(["2-2", "0-0", "", "6-6"], "own_suit") == 3
    assert nello_winner(["5-5", "4-4", "", "3-3"], "own_suit") == 0


def test_nello_doubles_own_suit_a_double_never_follows_a_number_lead():
    state = nello_after_lead(["5-1", "5-5 5-0", "", "1-1"], "5-1", "own_suit")
    assert legal_tiles(state) == "5-0"
    with pytest.raises(MustFollowSuit):
        decide(state, PlayTile(1, T("5-5")))


def test_nello_doubles_own_suit_a_double_played_on_a_number_lead_never_wins():
    assert nello_winner(["5-1", "5-5", "", "3-0"], "own_suit") == 0


# ---------------------------------------------------------------- sevens: no suits


def sevens(hands):
    return in_play(HOUSE, hands, Contract.sevens(), bid=Bid.marks(1))


def test_sevens_the_leader_must_play_the_tile_nearest_seven():
    state = sevens(["6-6 4-3", "1-0", "2-0", "3-0"])
    assert legal_tiles(state) == "4-3"
    with pytest.raises(MustPlayNearestSeven):
        decide(state, PlayTile(0, T("6-6")))


def test_sevens_every_player_must_play_the_tile_nearest_seven_whatever_was_led():
    # 6-1 led; seat 1's 6-0 would follow sixes, but 5-2 (7 pips) is nearer 7.
    state = sevens(["6-1", "6-0 5-2", "2-0", "3-0"])
    state, _ = plays(state, "6-1")
    assert legal_tiles(state) == "5-2"
    with pytest.raises(MustPlayNearestSeven):
        decide(state, PlayTile(1, T("6-0")))


def test_sevens_with_several_tiles_equally_near_seven_any_of_them():
    # 6-2 has 8 pips and 3-3 has 6: both one from 7; 6-6 is five away.
    state = sevens(["6-2 3-3 6-6", "1-0", "2-0", "3-0"])
    assert legal_tiles(state) == "6-2 3-3"


def test_sevens_the_tile_nearest_seven_wins():
    state = sevens(["6-2", "5-2", "6-6", "1-0"])
    _, events = plays(state, "6-2 5-2 6-6 1-0")
    assert trick_winner(events) == 1


def test_sevens_a_tie_goes_to_the_first_played():
    state = sevens(["6-6", "5-3", "4-2", "2-1"])
    _, events = plays(state, "6-6 5-3 4-2 2-1")
    assert trick_winner(events) == 1  # 5-3 (8) and 4-2 (6) tie; 5-3 came first
