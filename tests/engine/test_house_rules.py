"""House rules our peers play, each a ``Ruleset`` option off by default (issue 19): one test per
rule, on a scripted hand that shows what the option changes, beside the default it replaces.

Moon: the auction going round, no widow, the lowest bid 3 or 5, the trump menu of suits and
doubles, a missed moon losing the game, a tie at the target to the earliest seat, the overcall
of 42. Both games: the stuck dealer who may bid higher. Texas 42: the splash capped at 3 marks.
"""

import pytest
from helpers import T, act, auction, deal_hands, deal_seed, plays, run, turn, with_scores

from boneyard.engine import (
    DOUBLES,
    FOLLOW_ME,
    PRESETS,
    AllPassed,
    AuctionWon,
    Bid,
    BidKind,
    BidNotAllowed,
    BidPlaced,
    BidTooLow,
    Contract,
    DeclareContract,
    ExchangeWidow,
    GameWon,
    HandScored,
    IllegalContract,
    MustBid,
    Pass,
    Passed,
    Phase,
    PlaceBid,
    RulesetError,
    decide,
    legal_actions,
    legal_contracts,
    ruleset,
)

SIXES = 6

# Moon (as in test_moon): seat 0 holds six sixes and 5-5; the widow is 0-0.
DEAL_MOON = [
    "6-6 6-5 6-4 6-3 6-2 6-1 5-5",
    "5-4 5-3 5-2 5-1 4-4 4-3 4-2",
    "4-1 3-3 3-2 3-1 2-2 2-1 1-1",
]
# Seat 0 takes the 0-0, lays out the 6-1 and with sixes trump takes all seven tricks.
ALL_SEVEN = [
    "6-6 4-2 2-1",
    "6-5 4-3 1-1",
    "6-4 4-4 2-2",
    "6-3 5-1 3-1",
    "6-2 5-2 3-2",
    "5-5 5-4 4-1",
    "0-0 5-3 3-3",
]
# Seat 0 takes the widow 2-1, lays out the 0-0, names sixes: five tricks, one each to the others.
DEAL_FIVE = [
    "6-6 6-5 6-4 6-3 6-2 3-2 0-0",
    "6-1 5-5 5-4 5-3 5-2 5-1 4-4",
    "4-3 4-2 4-1 3-3 3-1 2-2 1-1",
]
FIVE_ONE_ONE = [
    "6-6 6-1 4-1",
    "6-5 5-5 4-3",
    "6-4 5-4 3-1",
    "6-3 5-3 2-2",
    "6-2 5-2 1-1",
    "3-2 5-1 3-3",
    "4-2 2-1 4-4",
]

# Moon without a widow: the 21 tiles other than 0-0, seven each.
DEAL_NO_WIDOW = [
    "6-6 6-5 6-4 6-3 6-2 6-1 5-5",
    "5-4 5-3 5-2 5-1 4-4 4-3 4-2",
    "4-1 3-3 3-2 3-1 2-2 2-1 1-1",
]


def moon(hands=DEAL_MOON, rest="0-0", dealer=2, **options):
    """A Moon hand dealt as given (``rest``: the widow), dealer seat 2 unless said."""
    return deal_hands(ruleset("moon", **options), hands, rest=rest, dealer=dealer)


def bidding(state, *bids):
    """Each bid (``None`` a pass) by the seat whose turn it is; the state and its events."""
    events = []
    for bid in bids:
        seat = turn(state)
        state, new = act(state, Pass(seat) if bid is None else PlaceBid(seat, bid))
        events.extend(new)
    return state, events


def bids_of(state):
    return [a.bid for a in legal_actions(state, turn(state)) if isinstance(a, PlaceBid)]


def play_tricks(state, tricks):
    events = []
    for trick in tricks:
        state, new = plays(state, trick)
        events.extend(new)
    return state, events


def to_play(state, discard=None, trump=SIXES):
    while state.phase is not Phase.PLAY:
        if state.phase is Phase.WIDOW:
            state = run(state, ExchangeWidow(turn(state), T(discard)))
        else:
            state = run(state, DeclareContract(turn(state), Contract.of_trump(trump)))
    return state


def scored(events):
    (hand,) = [e for e in events if isinstance(e, HandScored)]
    return hand


def game_won(events):
    return [e for e in events if isinstance(e, GameWon)]


# ---------------------------------------------------------------- the auction goes round


def test_auction_goes_round_an_overbid_player_may_bid_again():
    state, _ = bidding(moon(auction_goes_round=True), Bid.tricks(4), Bid.tricks(5), None)
    assert turn(state) == 0 and Bid.tricks(6) in bids_of(state)
    state, events = bidding(state, Bid.tricks(6), None)
    assert events[-1] == AuctionWon(0, Bid.tricks(6), 0)


def test_one_round_auction_an_overbid_player_may_not_bid_again():
    state, events = bidding(moon(), Bid.tricks(4), Bid.tricks(5), None)
    assert events[-1] == AuctionWon(1, Bid.tricks(5), 1)
    assert state.phase is Phase.WIDOW


def test_auction_goes_round_a_player_who_passed_is_out_of_the_auction():
    state, _ = bidding(moon(auction_goes_round=True), None, Bid.tricks(4), Bid.tricks(5))
    assert turn(state) == 1  # seat 0 passed: it is not asked again
    state, events = bidding(state, Bid.tricks(6), None)
    assert events[-1] == AuctionWon(1, Bid.tricks(6), 1)


def test_auction_goes_round_ends_when_all_but_the_high_bidder_have_passed():
    _state, events = bidding(moon(auction_goes_round=True), Bid.tricks(4), None, None)
    assert events[-1] == AuctionWon(0, Bid.tricks(4), 0)


def test_auction_goes_round_everyone_passing_is_an_all_pass():
    _, events = bidding(moon(auction_goes_round=True), None, None, None)
    assert isinstance(events[-1], AllPassed)


def test_auction_goes_round_the_moon_still_ends_it_at_once():
    _, events = bidding(moon(auction_goes_round=True), Bid.tricks(4), Bid.moon())
    assert events[-1] == AuctionWon(1, Bid.moon(), 1)


def test_auction_goes_round_is_off_by_default():
    assert ruleset("moon").auction_goes_round is False


# ---------------------------------------------------------------- no widow


def test_no_widow_deals_21_tiles_seven_each_and_0_0_is_out_too():
    state = deal_seed(ruleset("moon", widow="none"), b"no widow")
    hand = state.hand
    assert hand is not None and hand.rest == 0
    assert [h.bit_count() for h in hand.hands] == [7, 7, 7]
    assert not any(h >> T("0-0") & 1 for h in hand.hands)
    assert ruleset("moon", widow="none").tiles.bit_count() == 21


def test_no_widow_the_bidder_names_trump_at_once_and_leads():
    state, _ = bidding(moon(DEAL_NO_WIDOW, rest="", widow="none"), Bid.tricks(5), None, None)
    assert state.phase is Phase.TRUMP and turn(state) == 0
    state = to_play(state)
    assert state.phase is Phase.PLAY and turn(state) == 0


def test_no_widow_blanks_cannot_be_trump_there_are_none():
    state, _ = bidding(moon(DEAL_NO_WIDOW, rest="", widow="none"), Bid.tricks(5), None, None)
    offered = legal_contracts(state.rules, state.hand)
    assert Contract.of_trump(0) not in offered
    assert offered == [Contract.of_trump(t) for t in (1, 2, 3, 4, 5, 6, DOUBLES, FOLLOW_ME)]
    with pytest.raises(IllegalContract, match="no blanks"):
        decide(state, DeclareContract(0, Contract.of_trump(0)))


def test_no_widow_needs_the_widow_before_trump_option_left_on():
    with pytest.raises(RulesetError, match="no widow"):
        ruleset("moon", widow="none", widow_before_trump=False)


def test_no_widow_seven_tricks_are_still_played_and_scored():
    state, _ = bidding(moon(DEAL_NO_WIDOW, rest="", widow="none"), Bid.tricks(6), None, None)
    state = to_play(state)
    # Seat 0 leads its six sixes, then the 5-5, the highest five: all seven tricks.
    state, events = play_tricks(
        state,
        [
            "6-6 4-2 2-1",
            "6-5 4-3 1-1",
            "6-4 4-4 2-2",
            "6-3 5-1 3-1",
            "6-2 5-2 3-2",
            "6-1 5-3 3-3",
            "5-5 5-4 4-1",
        ],
    )
    hand = scored(events)
    assert hand.made and hand.taken == (7, 0, 0) and hand.changes == (6, 0, 0)


# ---------------------------------------------------------------- the lowest bid


def test_moon_min_bid_3_a_bid_of_three_tricks_is_allowed():
    state = moon(moon_min_bid=3)
    assert bids_of(state)[0] == Bid.tricks(3)
    state, events = bidding(state, Bid.tricks(3))
    assert events == [BidPlaced(0, Bid.tricks(3))]


def test_moon_min_bid_4_by_default_three_is_too_low():
    with pytest.raises(BidTooLow, match="lowest Moon bid is 4"):
        decide(moon(), PlaceBid(0, Bid.tricks(3)))


def test_moon_min_bid_5_four_is_too_low():
    state = moon(moon_min_bid=5)
    assert bids_of(state) == [Bid.tricks(5), Bid.tricks(6), Bid.tricks(7), Bid.moon()]
    with pytest.raises(BidTooLow, match="lowest Moon bid is 5"):
        decide(state, PlaceBid(0, Bid.tricks(4)))


def test_moon_min_bid_is_what_the_forced_dealer_must_bid():
    state, _ = bidding(moon(moon_min_bid=5, all_pass="forced_dealer"), None, None)
    assert bids_of(state) == [Bid.tricks(5)]
    with pytest.raises(MustBid, match="5"):
        decide(state, Pass(turn(state)))


@pytest.mark.parametrize("lowest", [2, 6, 7])
def test_moon_min_bid_is_3_4_or_5(lowest):
    with pytest.raises(RulesetError, match="3, 4 or 5"):
        ruleset("moon", moon_min_bid=lowest)


# ---------------------------------------------------------------- the trump menu


def test_moon_trumps_suits_and_doubles_offers_no_follow_me():
    state, _ = bidding(moon(moon_trumps="suits_and_doubles"), Bid.tricks(5), None, None)
    state = run(state, ExchangeWidow(0, T("6-1")))
    offered = legal_contracts(state.rules, state.hand)
    assert offered == [Contract.of_trump(t) for t in (*range(7), DOUBLES)]
    with pytest.raises(IllegalContract, match="suits and doubles"):
        decide(state, DeclareContract(0, Contract.of_trump(FOLLOW_ME)))


# ---------------------------------------------------------------- a missed moon


def hand_of_five(bid, scores=None, dealer=2, **options):
    """DEAL_FIVE: seat 0 wins the auction with ``bid``, takes the widow 2-1 for the 0-0 and
    names sixes; seat 0 takes five tricks, seats 1 and 2 one each."""
    state = moon(DEAL_FIVE, rest="2-1", dealer=dealer, **options)
    if scores is not None:
        state = with_scores(state, *scores)
    state, _ = auction(state, {0: bid})
    return play_tricks(to_play(state, discard="0-0"), FIVE_ONE_ONE)


def test_missed_moon_loses_game_a_set_moon_ends_the_game_for_the_best_of_the_others():
    state, events = hand_of_five(Bid.moon(), scores=(15, 3, 9), missed_moon_loses_game=True)
    assert scored(events).changes == (-21, 1, 1)
    assert game_won(events) == [GameWon(2, (2,))]
    assert state.phase is Phase.GAME_OVER and state.winner == 2


def test_missed_moon_loses_game_a_tie_among_the_others_goes_clockwise_from_the_bidder():
    _, events = hand_of_five(Bid.moon(), scores=(0, 4, 4), missed_moon_loses_game=True)
    assert game_won(events) == [GameWon(1, (1,))]


def test_without_missed_moon_loses_game_a_set_moon_only_costs_21():
    state, events = hand_of_five(Bid.moon(), scores=(15, 3, 9))
    assert game_won(events) == [] and state.phase is Phase.DEAL
    assert state.scores == (-6, 4, 10)


def test_missed_moon_loses_game_a_set_bid_of_tricks_does_not_end_the_game():
    state, events = hand_of_five(Bid.tricks(7), scores=(15, 3, 9), missed_moon_loses_game=True)
    assert game_won(events) == [] and state.phase is Phase.DEAL


# ---------------------------------------------------------------- a tie at the target


def test_tie_to_earliest_seat_a_tie_on_top_goes_to_the_first_seat_from_the_dealers_left():
    # Dealer 1: the order from its left is seat 2, seat 0, seat 1. Seat 0 bids 7 and is set;
    # seats 1 and 2 reach 21 together.
    state, events = hand_of_five(
        Bid.tricks(7), scores=(0, 20, 20), dealer=1, tie_to_earliest_seat=True
    )
    assert state.scores == (-7, 21, 21)
    assert game_won(events) == [GameWon(2, (2,))]


def test_without_tie_to_earliest_seat_a_tie_on_top_plays_another_hand():
    state, events = hand_of_five(Bid.tricks(7), scores=(0, 20, 20), dealer=1)
    assert state.scores == (-7, 21, 21)
    assert game_won(events) == [] and state.phase is Phase.DEAL


def test_tie_to_earliest_seat_the_bidder_among_them_still_wins():
    _, events = hand_of_five(
        Bid.tricks(5), scores=(16, 20, 20), dealer=1, tie_to_earliest_seat=True
    )
    assert game_won(events) == [GameWon(0, (0,))]


# ---------------------------------------------------------------- the overcall


def test_moon_overcall_the_overcall_may_be_bid_over_the_moon():
    state, events = bidding(moon(moon_overcall=True), None, Bid.moon())
    assert events == [Passed(0), BidPlaced(1, Bid.moon())]
    assert state.phase is Phase.BIDDING, "the moon no longer ends the auction"
    assert bids_of(state) == [Bid.overcall()]
    _, events = bidding(state, Bid.overcall())
    assert events[-1] == AuctionWon(2, Bid.overcall(), 2)


def test_moon_overcall_may_be_bid_only_over_a_moon():
    state, _ = bidding(moon(moon_overcall=True), Bid.tricks(7))
    assert Bid.overcall() not in bids_of(state)
    with pytest.raises(BidNotAllowed, match="only over a moon"):
        decide(state, PlaceBid(1, Bid.overcall()))


def test_without_moon_overcall_the_moon_ends_the_auction_and_nothing_overcalls():
    _state, events = bidding(moon(), None, Bid.moon())
    assert events[-1] == AuctionWon(1, Bid.moon(), 1)
    with pytest.raises(BidNotAllowed, match="overcall is off"):
        decide(moon(), PlaceBid(0, Bid.overcall()))


def test_moon_overcall_made_scores_42():
    # Dealer 0: seat 1 shoots the moon, seat 2 passes, seat 0 overcalls and takes all seven.
    state = moon(dealer=0, moon_overcall=True)
    state, _ = bidding(state, Bid.moon(), None, Bid.overcall())
    state, events = play_tricks(to_play(state, discard="6-1"), ALL_SEVEN)
    hand = scored(events)
    assert hand.bid == Bid.overcall() and hand.made and hand.changes == (42, 0, 0)


def test_moon_overcall_set_scores_minus_42_and_the_others_their_tricks():
    state = moon(DEAL_FIVE, rest="2-1", dealer=0, moon_overcall=True)
    state, _ = bidding(state, Bid.moon(), None, Bid.overcall())
    _, events = play_tricks(to_play(state, discard="0-0"), FIVE_ONE_ONE)
    hand = scored(events)
    assert not hand.made and hand.changes == (-42, 1, 1)


def test_moon_overcall_a_made_overcall_wins_the_game_with_moon_wins_game():
    state = with_scores(moon(dealer=0, moon_overcall=True, moon_wins_game=True), -30, 0, 0)
    state, _ = bidding(state, Bid.moon(), None, Bid.overcall())
    _, events = play_tricks(to_play(state, discard="6-1"), ALL_SEVEN)
    assert game_won(events) == [GameWon(0, (0,))]


# ---------------------------------------------------------------- the stuck dealer


def texas(rules="texas42", **options):
    hands = [
        "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
        "5-5 5-4 5-3 5-2 5-1 5-0 4-4",
        "4-3 4-2 4-1 4-0 3-3 3-2 3-1",
        "3-0 2-2 2-1 2-0 1-1 1-0 0-0",
    ]
    return deal_hands(ruleset(rules, **options), hands, dealer=3)


def test_forced_dealer_any_bid_the_dealer_may_bid_higher_than_the_minimum():
    state, _ = bidding(texas(all_pass="forced_dealer_any_bid"), None, None, None)
    legal = legal_actions(state, 3)
    assert legal[0] == Pass(3) and PlaceBid(3, Bid.points(35)) in legal
    _, events = bidding(state, Bid.points(35))
    assert events[-1] == AuctionWon(3, Bid.points(35), 3)


def test_forced_dealer_any_bid_a_dealer_who_passes_is_given_the_minimum():
    state, events = bidding(texas(all_pass="forced_dealer_any_bid"), None, None, None, None)
    assert events[-2:] == [Passed(3), AuctionWon(3, Bid.points(30), 3)]
    assert state.phase is Phase.TRUMP and turn(state) == 3 and state.hand.high_bid == Bid.points(30)


def test_forced_dealer_the_dealer_must_bid_exactly_the_minimum():
    state, _ = bidding(texas(), None, None, None)
    assert legal_actions(state, 3) == [PlaceBid(3, Bid.points(30))]
    with pytest.raises(BidNotAllowed, match="must bid 30"):
        decide(state, PlaceBid(3, Bid.points(35)))


def test_forced_dealer_any_bid_in_moon_a_passing_dealer_is_given_moon_min_bid():
    state, events = bidding(
        moon(all_pass="forced_dealer_any_bid", moon_min_bid=3), None, None, None
    )
    assert events[-1] == AuctionWon(2, Bid.tricks(3), 2)
    assert state.phase is Phase.WIDOW and turn(state) == 2


def test_forced_dealer_any_bid_in_moon_the_dealer_may_shoot_the_moon():
    state, _ = bidding(moon(all_pass="forced_dealer_any_bid"), None, None)
    assert Bid.moon() in bids_of(state) and Pass(2) in legal_actions(state, 2)


def test_forced_dealer_any_bid_only_binds_when_everyone_else_passed():
    _state, events = bidding(texas(all_pass="forced_dealer_any_bid"), Bid.points(30), None, None, None)
    assert events[-1] == AuctionWon(0, Bid.points(30), 0)


# ---------------------------------------------------------------- the splash capped


SPLASH_HANDS = [
    "6-6 5-5 4-4 6-5 6-4 6-3 6-2",  # seat 0: three doubles, a splash hand
    "3-3 5-4 5-3 5-2 5-1 5-0 6-1",
    "2-2 4-3 4-2 4-1 4-0 3-2 3-1",
    "1-1 0-0 3-0 2-1 2-0 1-0 6-0",
]


def splash_table(**options):
    # Dealer 0: seat 1 bids first, seat 0 last.
    return deal_hands(ruleset("texas42-house", **options), SPLASH_HANDS, dealer=0)


def test_splash_capped_no_splash_over_a_bid_of_3_marks():
    state, _ = bidding(splash_table(splash_capped=True), Bid.marks(2), Bid.marks(3), None)
    assert not [b for b in bids_of(state) if b.kind is BidKind.SPLASH]
    with pytest.raises(BidNotAllowed, match="at most 3 marks"):
        decide(state, PlaceBid(0, Bid.splash(4)))


def test_splash_capped_a_splash_of_3_over_a_bid_of_2_marks():
    state, _ = bidding(splash_table(splash_capped=True), Bid.marks(2), None, None)
    assert Bid.splash(3) in bids_of(state)


def test_without_splash_capped_a_splash_is_one_more_than_any_mark_bid():
    state, _ = bidding(splash_table(), Bid.marks(2), Bid.marks(3), None)
    assert Bid.splash(4) in bids_of(state)


def test_splash_capped_needs_splash_on():
    with pytest.raises(RulesetError, match="splash is off"):
        ruleset("texas42", splash_capped=True)


# ---------------------------------------------------------------- the house presets


def test_moon_no_widow_preset_is_the_21_tile_table():
    rules = PRESETS["moon-no-widow"]
    assert (rules.widow, rules.auction_goes_round, rules.moon_min_bid, rules.all_pass) == (
        "none", True, 3, "forced_dealer_any_bid"
    )
    assert rules.tie_to_earliest_seat and not rules.moon_overcall


def test_moon_overcall_preset_shoots_for_42():
    rules = PRESETS["moon-overcall"]
    assert rules.moon_overcall and rules.moon_wins_game and rules.missed_moon_loses_game
    assert (rules.widow, rules.moon_min_bid, rules.moon_trumps) == (
        "must_exchange", 5, "suits_and_doubles"
    )


@pytest.mark.parametrize(
    "preset",
    ["texas42", "texas42-house", "texas42-redeal", "texas42-points", "moon", "moon-s1", "moon-pagat"],
)
def test_the_older_presets_play_as_before(preset):
    rules = PRESETS[preset]
    assert not (
        rules.auction_goes_round
        or rules.missed_moon_loses_game
        or rules.tie_to_earliest_seat
        or rules.moon_overcall
        or rules.splash_capped
    )
    assert rules.moon_min_bid == 4 and rules.all_pass in ("forced_dealer", "redeal")
    assert rules.widow != "none"
