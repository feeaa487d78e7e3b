"""RULES.md section 2, Texas 42: naming trump, and the special contracts nello, plunge,
splash and sevens (std) — who may bid or declare them, who declares, who leads, who sits out,
and what each must take."""

import pytest
from helpers import (
    T,
    act,
    auction,
    deal_hands,
    declare,
    plays,
    run,
    scored,
    trick_winner,
    turn,
)

from boneyard.engine import (
    DOUBLES,
    FOLLOW_ME,
    AuctionWon,
    Bid,
    BidNotAllowed,
    Contract,
    ContractDeclared,
    DeclareContract,
    HandScored,
    IllegalContract,
    NotYourTurn,
    Phase,
    PlaceBid,
    PlayTile,
    RulesetError,
    TilePlayed,
    WrongPhase,
    decide,
    legal_actions,
    legal_contracts,
    ruleset,
)

SIXES = 6
HOUSE = "texas42-house"

DEAL_A = [  # seat 0 holds every six
    "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
    "5-5 5-4 5-3 5-2 5-1 5-0 4-4",
    "4-3 4-2 4-1 4-0 3-3 3-2 3-1",
    "3-0 2-2 2-1 2-0 1-1 1-0 0-0",
]

DEAL_PLUNGE = [  # seat 0: four doubles (5-5 4-4 3-3 2-2); its partner seat 2 three doubles
    "5-5 4-4 3-3 2-2 6-3 6-2 5-4",
    "5-3 5-2 5-1 5-0 4-3 4-2 4-1",
    "6-6 6-5 6-4 6-1 6-0 1-1 0-0",
    "4-0 3-2 3-1 3-0 2-1 2-0 1-0",
]
# The team of seats 0 and 2 holds every six and the doubles: with sixes trump it takes every
# trick. Played out (seat 2 leading trumps, then its doubles), the tricks are:
PLUNGE_MADE = [
    "6-6 1-0 6-2 4-1",  # seat 2 leads; 1 + 5 (4-1)
    "6-5 2-0 6-3 4-2",
    "6-4 2-1 5-4 4-3",  # 1 + 10 (6-4)
    "6-1 3-0 2-2 5-1",
    "6-0 3-1 3-3 5-2",
    "1-1 3-2 4-4 5-0",  # 1 + 5 + 5
    "0-0 4-0 5-5 5-3",  # 1 + 10
]

DEAL_NELLO = [  # seat 0 holds only low tiles; its partner, seat 2, will sit out
    "1-0 2-0 2-1 3-0 3-1 4-0 4-1",
    "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
    "5-5 5-4 5-3 5-2 5-1 5-0 4-4",
    "4-3 4-2 3-3 3-2 2-2 1-1 0-0",
]
NELLO_LOST_EVERY_TRICK = [  # seats 0, 1, 3 in turn from the leader; seat 0 never wins
    "1-0 6-1 1-1",  # seat 3 wins with the double
    "2-2 2-0 6-2",
    "3-3 3-0 6-3",
    "0-0 4-0 6-0",
    "4-3 4-1 6-4",  # seat 1 wins: 6-4 is the highest four
    "6-6 4-2 2-1",
    "6-5 3-2 3-1",
]

DEAL_SEVENS = [  # seat 0 holds the three 7-pip tiles and four 1 away from 7
    "6-1 5-2 4-3 6-0 5-1 4-2 3-3",
    "6-2 5-3 4-4 6-6 6-5 6-4 6-3",
    "5-5 5-4 5-0 4-1 4-0 3-2 3-1",
    "3-0 2-2 2-1 2-0 1-1 1-0 0-0",
]
SEVENS_WON_EVERY_TRICK = [  # seat 0 leads each trick and is nearest 7 or tied first
    "6-1 6-2 5-4 2-2",
    "5-2 5-3 5-0 3-0",
    "4-3 4-4 4-1 2-1",
    "6-0 6-3 3-2 2-0",
    "5-1 6-4 5-5 1-1",
    "4-2 6-5 4-0 1-0",
    "3-3 6-6 3-1 0-0",
]


def won_auction(rules, hands, bids, dealer=3):
    state = deal_hands(ruleset(rules) if isinstance(rules, str) else rules, hands, dealer=dealer)
    return auction(state, bids)


def play_tricks(state, tricks):
    events = []
    for trick in tricks:
        state, new = plays(state, trick)
        events.extend(new)
    return state, events


# ---------------------------------------------------------------- naming trump


def test_the_winning_bidder_names_trump():
    state, events = won_auction("texas42", DEAL_A, {1: Bid.points(30)})
    assert events[-1] == AuctionWon(1, Bid.points(30), 1)
    assert state.phase is Phase.TRUMP
    assert turn(state) == 1
    with pytest.raises(NotYourTurn):
        decide(state, DeclareContract(0, Contract.of_trump(SIXES)))


def test_trump_is_a_suit_doubles_or_follow_me():
    state, _ = won_auction("texas42", DEAL_A, {0: Bid.points(30)})
    expected = [Contract.of_trump(t) for t in (0, 1, 2, 3, 4, 5, 6, DOUBLES, FOLLOW_ME)]
    assert legal_contracts(state.rules, state.hand) == expected


def test_the_winning_bidder_leads_the_first_trick():
    state, _ = won_auction("texas42", DEAL_A, {1: Bid.points(30)})
    state, events = act(state, DeclareContract(1, Contract.of_trump(5)))
    assert events == [ContractDeclared(1, Contract.of_trump(5), ())]
    assert state.phase is Phase.PLAY
    assert turn(state) == 1


def test_no_trump_may_be_named_during_the_auction():
    state = deal_hands("texas42", DEAL_A, dealer=3)
    with pytest.raises(WrongPhase):
        decide(state, DeclareContract(0, Contract.of_trump(SIXES)))


def test_the_straight_preset_has_no_special_contracts():
    rules = ruleset("texas42")
    assert not (rules.nello or rules.plunge or rules.splash or rules.sevens)
    state, _ = won_auction(rules, DEAL_PLUNGE, {0: Bid.marks(1)})
    for special in (Contract.nello(), Contract.sevens()):
        with pytest.raises(IllegalContract):
            decide(state, DeclareContract(0, special))


def test_the_straight_preset_refuses_plunge_and_splash_bids():
    state = deal_hands("texas42", DEAL_PLUNGE, dealer=3)  # seat 0 holds four doubles
    for bid in (Bid.plunge(4), Bid.splash(2)):
        with pytest.raises(BidNotAllowed):
            decide(state, PlaceBid(0, bid))


def test_the_house_preset_has_nello_plunge_splash_and_sevens():
    rules = ruleset(HOUSE)
    assert rules.nello and rules.plunge and rules.splash and rules.sevens


# ---------------------------------------------------------------- nello


ONE_MARK = Bid.marks(1)


def nello_hand(bid=ONE_MARK, hands=DEAL_NELLO, **options):
    state, _ = won_auction(ruleset(HOUSE, **options), hands, {0: bid})
    return run(state, DeclareContract(0, Contract.nello()))


def test_nello_needs_a_bid_of_at_least_one_mark():
    state, _ = won_auction(HOUSE, DEAL_NELLO, {0: Bid.points(41)})
    assert Contract.nello() not in legal_contracts(state.rules, state.hand)
    with pytest.raises(IllegalContract):
        decide(state, DeclareContract(0, Contract.nello()))


@pytest.mark.parametrize("marks", [1, 2])
def test_nello_may_be_declared_on_a_mark_bid(marks):
    state, _ = won_auction(HOUSE, DEAL_NELLO, {0: Bid.marks(marks)})
    assert Contract.nello() in legal_contracts(state.rules, state.hand)


def test_nello_the_bidders_partner_sits_out():
    state, _ = won_auction(HOUSE, DEAL_NELLO, {0: Bid.marks(1)})
    state, events = act(state, DeclareContract(0, Contract.nello()))
    assert events == [ContractDeclared(0, Contract.nello(), (2,))]
    assert state.hand.sitting_out == (2,)


def test_nello_the_bidder_leads():
    assert turn(nello_hand()) == 0


def test_nello_the_partner_never_plays_and_a_trick_is_three_tiles():
    state = nello_hand()
    state, events = plays(state, "1-0 6-1")
    assert turn(state) == 3  # seat 2 is skipped
    assert legal_actions(state, 2) == []
    with pytest.raises(NotYourTurn):
        decide(state, PlayTile(2, T("5-5")))
    state, events = plays(state, "1-1")
    assert [type(e).__name__ for e in events] == ["TilePlayed", "TrickWon"]
    assert trick_winner(events) == 3


def test_nello_made_by_losing_every_trick():
    _, events = play_tricks(nello_hand(), NELLO_LOST_EVERY_TRICK)
    # Seat 0's team took nothing; seats 1 and 3 took 7 tricks + 6-4, 4-1, 3-2 = 7 + 20.
    assert scored(events) == HandScored(0, Bid.marks(1), True, (0, 27), (1, 0), (1, 0))


def test_nello_on_84_is_worth_two_marks():
    _, events = play_tricks(nello_hand(Bid.marks(2)), NELLO_LOST_EVERY_TRICK)
    assert scored(events).changes == (2, 0)


DEAL_NELLO_WITH_5_5 = [  # as DEAL_NELLO, but seat 0 holds 5-5 (and seat 2 the 4-1)
    "1-0 2-0 2-1 3-0 3-1 4-0 5-5",
    "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
    "4-1 5-4 5-3 5-2 5-1 5-0 4-4",
    "4-3 4-2 3-3 3-2 2-2 1-1 0-0",
]


def test_nello_the_hand_ends_set_as_soon_as_the_bidder_wins_a_trick():
    state = nello_hand(hands=DEAL_NELLO_WITH_5_5)
    state, events = plays(state, "5-5 6-5 0-0")  # nobody beats the double five
    # Seat 0 won the first trick: 1 + 10 (5-5); the opponents score the bid's mark.
    assert scored(events) == HandScored(0, Bid.marks(1), False, (11, 0), (0, 1), (0, 1))
    assert state.phase is Phase.DEAL


def test_nello_the_hand_ends_set_at_the_bidders_first_trick_even_with_end_hand_when_decided_off():
    state = nello_hand(hands=DEAL_NELLO_WITH_5_5, end_hand_when_decided=False)
    state, events = plays(state, "5-5 6-5 0-0")
    assert scored(events).made is False
    assert state.phase is Phase.DEAL


def test_nello_with_six_players_in_pairs_the_partner_opposite_sits_out():
    rules = ruleset("texas42", players=6, nello=True)
    hands = [
        "6-6 6-5 6-4 6-3",
        "5-5 5-4 5-3 5-2",
        "4-4 4-3 4-2 4-1",
        "3-3 3-2 3-1 3-0",
        "2-2 2-1 2-0 1-1",
        "1-0 0-0 6-2 6-1",
    ]
    state = deal_hands(rules, hands, rest="6-0 5-1 5-0 4-0", dealer=5)
    state, _ = auction(state, {0: Bid.marks(1)})
    _, events = act(state, DeclareContract(0, Contract.nello()))
    assert events[0].sitting_out == (3,)


# ---------------------------------------------------------------- plunge


def test_plunge_needs_four_doubles_in_hand():
    state = deal_hands(HOUSE, DEAL_PLUNGE, dealer=1)  # seat 2 bids first: three doubles
    assert turn(state) == 2
    with pytest.raises(BidNotAllowed):
        decide(state, PlaceBid(2, Bid.plunge(4)))


def test_plunge_with_four_doubles_is_a_four_mark_opening_bid():
    state = deal_hands(HOUSE, DEAL_PLUNGE, dealer=3)
    assert PlaceBid(0, Bid.plunge(4)) in legal_actions(state, 0)
    _, events = act(state, PlaceBid(0, Bid.plunge(4)))
    assert events[0].bid.marks_worth == 4


def test_plunge_is_the_only_opening_bid_above_two_marks():
    state = deal_hands(HOUSE, DEAL_PLUNGE, dealer=3)
    opening_marks = [
        a.bid for a in legal_actions(state, 0) if isinstance(a, PlaceBid) and a.bid.marks_worth > 2
    ]
    assert opening_marks == [Bid.plunge(4)]
    with pytest.raises(BidNotAllowed):
        decide(state, PlaceBid(0, Bid.marks(4)))


def test_plunge_may_be_overbid_by_five_marks():
    state = deal_hands(HOUSE, DEAL_PLUNGE, dealer=3)
    state = run(state, PlaceBid(0, Bid.plunge(4)))
    bids = [a.bid for a in legal_actions(state, 1) if isinstance(a, PlaceBid)]
    assert bids == [Bid.marks(5)]  # seat 1 holds no doubles


def test_plunge_after_a_two_mark_bid_is_still_four_marks():
    state = deal_hands(HOUSE, DEAL_PLUNGE, dealer=2)  # seat 3 bids 84, then seat 0
    state = run(state, PlaceBid(3, Bid.marks(2)))
    assert PlaceBid(0, Bid.plunge(4)) in legal_actions(state, 0)


def test_plunge_the_partner_names_trump():
    state, events = won_auction(HOUSE, DEAL_PLUNGE, {0: Bid.plunge(4)})
    assert events[-1] == AuctionWon(0, Bid.plunge(4), 2)
    assert turn(state) == 2
    with pytest.raises(NotYourTurn):
        decide(state, DeclareContract(0, Contract.of_trump(SIXES)))


def test_plunge_the_partner_leads():
    state, _ = won_auction(HOUSE, DEAL_PLUNGE, {0: Bid.plunge(4)})
    assert turn(declare(state, SIXES)) == 2


def test_plunge_made_by_winning_every_trick():
    state, _ = won_auction(HOUSE, DEAL_PLUNGE, {0: Bid.plunge(4)})
    state, events = play_tricks(declare(state, SIXES), PLUNGE_MADE)
    assert scored(events) == HandScored(0, Bid.plunge(4), True, (42, 0), (4, 0), (4, 0))


DEAL_PLUNGE_SET = [  # as DEAL_PLUNGE with seat 2's 6-0 and seat 3's 1-0 swapped
    "5-5 4-4 3-3 2-2 6-3 6-2 5-4",
    "5-3 5-2 5-1 5-0 4-3 4-2 4-1",
    "6-6 6-5 6-4 6-1 1-0 1-1 0-0",
    "4-0 3-2 3-1 3-0 2-1 2-0 6-0",
]


def test_plunge_set_when_the_team_loses_a_trick():
    state, _ = won_auction(HOUSE, DEAL_PLUNGE_SET, {0: Bid.plunge(4)})
    state, events = plays(declare(state, SIXES), "1-0 3-1 5-4 5-1")  # seat 1's 5-1 wins ones
    assert trick_winner(events) == 1
    assert scored(events) == HandScored(0, Bid.plunge(4), False, (0, 1), (0, 4), (0, 4))


def test_plunge_needs_partnerships_of_two():
    with pytest.raises(RulesetError):
        ruleset(HOUSE, players=3)


# ---------------------------------------------------------------- splash


def test_splash_needs_three_doubles_in_hand():
    state = deal_hands(HOUSE, DEAL_PLUNGE, dealer=0)  # seat 1 bids first: no doubles
    with pytest.raises(BidNotAllowed):
        decide(state, PlaceBid(1, Bid.splash(2)))


def test_splash_with_three_doubles_is_a_two_mark_bid():
    state = deal_hands(HOUSE, DEAL_PLUNGE, dealer=1)  # seat 2 holds 6-6 1-1 0-0
    assert PlaceBid(2, Bid.splash(2)) in legal_actions(state, 2)
    assert Bid.splash(2).marks_worth == 2


def test_splash_marks_option_makes_a_splash_three_marks():
    state = deal_hands(ruleset(HOUSE, splash_marks=3), DEAL_PLUNGE, dealer=1)
    splashes = [
        a.bid
        for a in legal_actions(state, 2)
        if isinstance(a, PlaceBid) and a.bid.kind.value == "splash"
    ]
    assert splashes == [Bid.splash(3)]


@pytest.mark.parametrize("marks", [1, 4])
def test_splash_marks_is_two_or_three(marks):
    with pytest.raises(RulesetError):
        ruleset(HOUSE, splash_marks=marks)


def test_splash_the_partner_names_trump_and_leads():
    state, events = won_auction(HOUSE, DEAL_PLUNGE, {2: Bid.splash(2)}, dealer=1)
    assert events[-1] == AuctionWon(2, Bid.splash(2), 0)
    assert turn(state) == 0
    state = declare(state, SIXES)
    assert turn(state) == 0


SPLASH_MADE = [  # seat 0 (partner of the splasher, seat 2) leads
    "6-2 4-1 6-6 1-0",  # 1 + 5
    "6-5 2-0 6-3 4-2",  # seat 2 leads from here
    "6-4 2-1 5-4 4-3",  # 1 + 10
    "6-1 3-0 2-2 5-1",
    "6-0 3-1 3-3 5-2",
    "1-1 3-2 4-4 5-0",  # 1 + 5 + 5
    "0-0 4-0 5-5 5-3",  # 1 + 10
]


@pytest.mark.parametrize("splash_marks", [2, 3])
def test_splash_made_by_winning_every_trick(splash_marks):
    rules = ruleset(HOUSE, splash_marks=splash_marks)
    bid = Bid.splash(splash_marks)
    state, _ = won_auction(rules, DEAL_PLUNGE, {2: bid}, dealer=1)
    state, events = play_tricks(declare(state, SIXES), SPLASH_MADE)
    made = HandScored(2, bid, True, (42, 0), (splash_marks, 0), (splash_marks, 0))
    assert scored(events) == made


def test_splash_set_when_the_team_loses_a_trick():
    state, _ = won_auction(HOUSE, DEAL_PLUNGE_SET, {2: Bid.splash(2)}, dealer=1)
    # Seat 0 leads 5-4; seat 3, out of fives, trumps with the 6-0 and wins.
    state, events = plays(declare(state, SIXES), "5-4 5-3 1-0 6-0")
    assert trick_winner(events) == 3
    assert scored(events) == HandScored(2, Bid.splash(2), False, (0, 1), (0, 2), (0, 2))


def test_splash_may_overbid_a_two_mark_bid_with_three_marks():
    state = deal_hands(HOUSE, DEAL_PLUNGE, dealer=0)  # seat 1 bids 84, then seat 2
    state = run(state, PlaceBid(1, Bid.marks(2)))
    splashes = [
        a.bid
        for a in legal_actions(state, 2)
        if isinstance(a, PlaceBid) and a.bid.kind.value == "splash"
    ]
    assert splashes == [Bid.splash(3)]


def test_splash_needs_partnerships_of_two():
    with pytest.raises(RulesetError):
        ruleset("texas42", players=5, splash=True)


# ---------------------------------------------------------------- sevens


def sevens_hand(hands=DEAL_SEVENS, bid=ONE_MARK):
    state, _ = won_auction(HOUSE, hands, {0: bid})
    return run(state, DeclareContract(0, Contract.sevens()))


def test_sevens_needs_a_mark_bid():
    state, _ = won_auction(HOUSE, DEAL_SEVENS, {0: Bid.points(41)})
    with pytest.raises(IllegalContract):
        decide(state, DeclareContract(0, Contract.sevens()))


def test_sevens_the_bidder_leads_and_everyone_plays():
    state = sevens_hand()
    assert turn(state) == 0
    assert state.hand.sitting_out == ()
    state, events = plays(state, "6-1 6-2 5-4 2-2")
    assert sum(isinstance(e, TilePlayed) for e in events) == 4


def test_sevens_made_by_winning_every_trick():
    _, events = play_tricks(sevens_hand(), SEVENS_WON_EVERY_TRICK)
    assert scored(events) == HandScored(0, Bid.marks(1), True, (42, 0), (1, 0), (1, 0))


def test_sevens_set_when_the_team_loses_a_trick():
    hands = [DEAL_SEVENS[1], DEAL_SEVENS[0], DEAL_SEVENS[2], DEAL_SEVENS[3]]
    _, events = plays(sevens_hand(hands), "6-2 6-1 5-4 2-2")  # 6-1 is 7 pips exactly
    assert trick_winner(events) == 1
    assert scored(events) == HandScored(0, Bid.marks(1), False, (0, 1), (0, 1), (0, 1))
