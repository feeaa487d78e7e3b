"""Golden hands: for every preset, one hand dealt by the engine's shuffle from a seed, then
every bid, declaration and tile scripted, and the ``HandScored`` event checked against the
result worked out by hand (the arithmetic is in the comments).

Seats play clockwise 0, 1, 2, 3; each trick is written in the order the tiles are played,
starting with the leader.
"""

from helpers import T, act, new_game, plays

from boneyard.engine import (
    AllPassed,
    Bid,
    Contract,
    Deal,
    DeclareContract,
    DeclineWidow,
    ExchangeWidow,
    HandDealt,
    HandScored,
    Pass,
    Phase,
    PlaceBid,
    TrickWon,
    WidowDeclined,
    WidowExchanged,
    format_tiles,
)


def deal(state, seed, expected_hands, expected_rest=""):
    """Deal from ``seed`` and check the deal is the one the script was written for."""
    state, events = act(state, Deal(seed))
    dealt = events[0]
    assert isinstance(dealt, HandDealt)
    assert [format_tiles(h) for h in dealt.hands] == expected_hands
    assert format_tiles(dealt.rest) == expected_rest
    return state, dealt


def play_hand(state, tricks, winners):
    """Play the tricks; check who won each; return the state and the events."""
    events = []
    for trick, winner in zip(tricks, winners, strict=True):
        state, new = plays(state, trick)
        assert [e.seat for e in new if isinstance(e, TrickWon)] == [winner], trick
        events.extend(new)
    return state, events


def test_golden_texas42_a_30_bid_set_as_soon_as_it_cannot_be_made():
    state, dealt = deal(
        new_game("texas42"),
        b"golden-1",
        [
            "6-2 6-1 5-2 4-0 3-2 2-2 0-0",
            "6-5 6-0 5-0 4-1 3-3 2-1 2-0",
            "6-6 6-3 5-5 4-3 4-2 3-0 1-1",
            "6-4 5-4 5-3 5-1 4-4 3-1 1-0",
        ],
    )
    # Seat 3 holds 1-0, so it bids first and seat 2 deals.
    assert dealt.dealer == 2
    state, _ = act(state, PlaceBid(3, Bid.points(30)), Pass(0), Pass(1), Pass(2))
    state, _ = act(state, DeclareContract(3, Contract.of_trump(4)))  # fours
    state, events = play_hand(
        state,
        [
            "4-4 4-0 4-1 4-2",  # seat 3 draws trumps: 1 + 5 (4-1)          seats 1&3: 6
            "6-4 0-0 2-0 4-3",  # 1 + 10 (6-4)                                        17
            "5-4 6-1 2-1 3-0",  # 1                                                   18
            "5-3 5-2 6-5 5-5",  # seat 2's double five wins: 1 + 10        seats 0&2: 11
            "6-6 1-0 6-2 6-0",  # 1                                                   12
            "6-3 3-1 3-2 3-3",  # 1 + 5 (3-2)                                         18
        ],
        winners=[3, 3, 3, 2, 2, 2],
    )
    # 18 + 18 = 36 played. Seats 0&2 hold 18 > 42 - 30 = 12, so seats 1&3 can reach at most
    # 42 - 18 = 24 < 30: the hand stops, set, and seats 0&2 score the mark.
    assert events[-1] == HandScored(3, Bid.points(30), False, (18, 18), (1, 0), (1, 0))
    assert state.phase is Phase.DEAL
    assert state.next_dealer == 3


def test_golden_texas42_house_a_plunge_made():
    state, dealt = deal(
        new_game("texas42-house"),
        b"golden-2",
        [
            "6-3 6-2 5-4 4-4 4-3 4-1 3-0",
            "6-5 6-1 5-3 5-2 4-0 1-1 1-0",
            "6-6 5-5 5-1 4-2 3-1 2-2 0-0",  # four doubles: 6-6 5-5 2-2 0-0
            "6-4 6-0 5-0 3-3 3-2 2-1 2-0",
        ],
    )
    assert dealt.dealer == 0  # seat 1 holds 1-0
    state, events = act(state, Pass(1), PlaceBid(2, Bid.plunge(4)), Pass(3), Pass(0))
    assert events[-1].declarer == 0  # the partner names trump and leads
    state, _ = act(state, DeclareContract(0, Contract.of_trump(4)))  # fours
    state, events = play_hand(
        state,
        [
            "4-4 4-0 4-2 6-4",  # the double four draws both opposing trumps: 1 + 10 = 11
            "6-3 6-5 6-6 6-0",  # seat 2's 6-6 takes the sixes: 1                  -> 12
            "0-0 2-0 3-0 1-0",  # 1                                                -> 13
            "2-2 2-1 6-2 5-2",  # 1                                                -> 14
            "5-1 5-0 4-1 5-3",  # seat 0 has no five and trumps: 1 + 5 + 5 = 11    -> 25
            "4-3 6-1 5-5 3-3",  # 1 + 10                                           -> 36
            "5-4 1-1 3-1 3-2",  # 1 + 5                                            -> 42
        ],
        winners=[0, 2, 2, 2, 0, 0, 0],
    )
    # Every trick: the plunge is made, 4 marks.
    assert events[-1] == HandScored(2, Bid.plunge(4), True, (42, 0), (4, 0), (4, 0))


def test_golden_texas42_points_a_31_bid_set_scores_the_opponents_bid_plus_points():
    state, dealt = deal(
        new_game("texas42-points"),
        b"golden-3",
        [
            "6-6 6-1 5-4 5-3 3-2 3-0 0-0",
            "6-3 5-2 4-4 3-3 3-1 2-1 2-0",
            "5-5 5-0 4-2 4-1 4-0 1-1 1-0",
            "6-5 6-4 6-2 6-0 5-1 4-3 2-2",
        ],
    )
    assert dealt.dealer == 1  # seat 2 holds 1-0
    state, _ = act(state, Pass(2), PlaceBid(3, Bid.points(31)), Pass(0), Pass(1))
    state, _ = act(state, DeclareContract(3, Contract.of_trump(6)))  # sixes
    state, events = play_hand(
        state,
        [
            "6-5 6-6 6-3 1-0",  # seat 0 overtrumps with the double: 1          seats 0&2: 1
            "5-4 5-2 5-5 5-1",  # 1 + 10                                                   12
            "1-1 6-0 0-0 2-1",  # seat 3, out of ones, trumps: 1                seats 1&3: 1
            "6-4 6-1 2-0 4-0",  # 1 + 10                                                   12
            "6-2 3-0 3-1 4-2",  # 1                                                        13
            "4-3 3-2 4-4 4-1",  # seat 1's double four: 1 + 5 + 5                          24
            "3-3 5-0 2-2 5-3",  # 1 + 5                                                    30
        ],
        winners=[0, 2, 3, 3, 3, 1, 1],
    )
    # Every trick is played (end_hand_when_decided off). 12 + 30 = 42. Seats 1&3 took 30 < 31:
    # set. Points game: the bidders score 0; seats 0&2 the bid plus their points, 31 + 12 = 43.
    assert events[-1] == HandScored(3, Bid.points(31), False, (12, 30), (43, 0), (43, 0))


def test_golden_texas42_redeal_everyone_passes_then_the_next_dealer_deals():
    state, dealt = deal(
        new_game("texas42-redeal"),
        b"golden-4",
        [
            "6-6 5-5 4-3 4-1 3-1 2-2 2-0",
            "6-4 6-1 6-0 5-3 4-2 3-3 2-1",
            "6-5 6-3 5-4 5-1 4-4 1-1 0-0",
            "6-2 5-2 5-0 4-0 3-2 3-0 1-0",
        ],
    )
    assert dealt.dealer == 2  # seat 3 holds 1-0
    state, events = act(state, Pass(3), Pass(0), Pass(1), Pass(2))
    assert events[-1] == AllPassed(3)
    state, dealt = deal(
        state,
        b"redeal-31",
        [
            "6-6 6-5 6-4 6-3 6-2 4-2 3-0",
            "5-5 5-2 5-1 5-0 4-4 3-3 3-1",
            "6-1 5-4 5-3 4-0 2-2 1-1 1-0",
            "6-0 4-3 4-1 3-2 2-1 2-0 0-0",
        ],
    )
    assert (dealt.number, dealt.dealer) == (2, 3)
    state, _ = act(state, PlaceBid(0, Bid.points(31)), Pass(1), Pass(2), Pass(3))
    state, _ = act(state, DeclareContract(0, Contract.of_trump(6)))  # sixes
    state, events = play_hand(
        state,
        [
            "6-6 3-1 6-1 6-0",  # 1                                                 seats 0&2: 1
            "6-5 3-3 1-0 2-0",  # 1                                                            2
            "6-4 5-1 5-3 2-1",  # 1 + 10                                                      13
            "6-3 5-2 1-1 4-3",  # 1                                                           14
            "6-2 4-4 2-2 3-2",  # 1 + 5                                                       20
            "4-2 5-0 5-4 4-1",  # seat 2's 5-4 is the highest four: 1 + 5 + 5                 31
        ],
        winners=[0, 0, 0, 0, 0, 2],
    )
    # 31 >= 31 after six tricks: made, and the hand stops there.
    assert events[-1] == HandScored(0, Bid.points(31), True, (31, 0), (1, 0), (1, 0))


def test_golden_moon_a_five_bid_made_scores_five_without_overtricks():
    state, dealt = deal(
        new_game("moon"),
        b"golden-1",
        [
            "6-3 5-4 5-2 5-1 3-3 3-2 2-2",
            "5-3 4-3 4-2 4-1 2-1 1-1 0-0",
            "6-6 6-5 6-4 6-2 6-1 4-4 3-1",
        ],
        expected_rest="5-5",
    )  # the widow
    assert dealt.dealer == 2  # the opener, seat 0, was chosen at creation
    state, _ = act(state, PlaceBid(0, Bid.tricks(4)), Pass(1), PlaceBid(2, Bid.tricks(5)))
    state, events = act(state, ExchangeWidow(2, T("4-4")))  # widow first [S0]
    assert events == [WidowExchanged(2, T("5-5"), T("4-4"))]
    state, _ = act(state, DeclareContract(2, Contract.of_trump(6)))  # sixes
    state, events = play_hand(
        state,
        [
            "6-6 6-3 0-0",  # seat 0 must trump with its only six
            "6-5 2-2 2-1",
            "6-4 3-2 1-1",
            "6-2 5-1 4-1",
            "6-1 5-2 4-2",
            "5-5 5-4 5-3",  # the widow's double five takes the fives
            "3-1 3-3 4-3",  # seat 0's double three wins the last trick
        ],
        winners=[2, 2, 2, 2, 2, 2, 0],
    )
    # Seat 2 bid 5 and took 6: it scores the bid, 5 [S0 "no extra points"]; seat 0 its 1 trick.
    assert events[-1] == HandScored(2, Bid.tricks(5), True, (1, 0, 6), (1, 0, 5), (1, 0, 5))


def test_golden_moon_s1_trump_first_widow_left_trumping_while_able_to_follow():
    state, _ = deal(
        new_game("moon-s1"),
        b"golden-2",
        [
            "6-2 6-1 5-4 4-2 3-2 3-1 0-0",
            "6-6 6-5 6-3 5-3 5-2 4-4 1-1",
            "6-4 5-5 4-3 4-1 3-3 2-2 2-1",
        ],
        expected_rest="5-1",
    )
    state, _ = act(state, Pass(0), PlaceBid(1, Bid.tricks(4)), Pass(2))
    state, _ = act(state, DeclareContract(1, Contract.of_trump(6)))  # trump first [S1 step 4]
    assert state.phase is Phase.WIDOW
    state, events = act(state, DeclineWidow(1))  # the bidder "can take" the widow [S1]
    assert events == [WidowDeclined(1)]
    state, events = play_hand(
        state,
        [
            "6-6 6-4 6-1",  # the first lead must be a trump [S1 step 4]
            "5-3 5-5 6-2",  # seat 0 holds 5-4 yet trumps [S1 step 7]
            "0-0 6-3 3-3",  # seat 1, out of blanks, trumps
            "6-5 2-1 3-1",
            "5-2 4-1 5-4",  # seat 0's 5-4 is the higher five
            "4-2 4-4 4-3",
            "1-1 2-2 3-2",
        ],
        winners=[1, 0, 1, 1, 0, 1, 1],
    )
    # Seat 1 bid 4 and took 5: it scores its tricks, 5 [S1 step 8]; seat 0 its 2, seat 2 none.
    assert events[-1] == HandScored(1, Bid.tricks(4), True, (2, 5, 0), (2, 5, 0), (2, 5, 0))


def test_golden_moon_pagat_a_seven_bid_set_scores_minus_seven():
    state, _ = deal(
        new_game("moon-pagat"),
        b"golden-3",
        [
            "6-3 5-4 4-4 4-2 2-2 2-1 1-1",
            "6-6 6-2 6-1 5-5 3-3 3-1 0-0",
            "6-4 5-3 5-2 5-1 4-3 4-1 3-2",
        ],
        expected_rest="6-5",
    )
    state, _ = act(state, Pass(0), PlaceBid(1, Bid.tricks(7)), Pass(2))
    state, _ = act(state, DeclareContract(1, Contract.of_trump(6)))  # trump before the widow
    state, events = act(state, ExchangeWidow(1, T("0-0")))
    assert events == [WidowExchanged(1, T("6-5"), T("0-0"))]
    state, events = play_hand(
        state,
        [
            "6-6 6-4 6-3",
            "6-5 3-2 2-1",
            "5-5 5-1 5-4",
            "3-3 4-3 1-1",
            "3-1 5-3 2-2",  # seat 2's 5-3 beats the 3-1
            "5-2 4-2 6-2",  # seat 1, out of fives, trumps
            "6-1 4-1 4-4",
        ],
        winners=[1, 1, 1, 1, 2, 1, 1],
    )
    # Seat 1 bid 7 and took 6: set, minus the bid, -7 [S0]; seat 2 scores its trick.
    assert events[-1] == HandScored(1, Bid.tricks(7), False, (0, 6, 1), (0, -7, 1), (0, -7, 1))
