"""RULES.md section 3, Moon [S0][S1]: three players alone, 22 tiles and a widow; bidding 4..7
tricks or the moon; the widow exchange; trump; the first lead; scoring every option; the game
to 21."""

import pytest
from helpers import (
    T,
    act,
    auction,
    deal_hands,
    deal_seed,
    declare,
    exchange,
    legal_tiles,
    new_game,
    play_out,
    plays,
    run,
    scored,
    tiles,
    turn,
    with_scores,
)

from boneyard.engine import (
    DOUBLES,
    FOLLOW_ME,
    AllPassed,
    AuctionWon,
    Bid,
    BidNotAllowed,
    BidPlaced,
    BidTooLow,
    Contract,
    Deal,
    DeclareContract,
    DeclineWidow,
    ExchangeWidow,
    GameWon,
    HandScored,
    IllegalAction,
    IllegalContract,
    IllegalDiscard,
    MustBid,
    MustLeadTrump,
    NotYourTurn,
    Pass,
    Phase,
    PlaceBid,
    PlayTile,
    RulesetError,
    WidowDeclined,
    WidowExchanged,
    decide,
    legal_actions,
    legal_contracts,
    parse_bid,
    ruleset,
)

SIXES = 6

DEAL_MOON = [  # seat 0 holds six sixes and 5-5; the widow is 0-0
    "6-6 6-5 6-4 6-3 6-2 6-1 5-5",
    "5-4 5-3 5-2 5-1 4-4 4-3 4-2",
    "4-1 3-3 3-2 3-1 2-2 2-1 1-1",
]
WIDOW_MOON = "0-0"
# Seat 0 takes the 0-0 and lays out the 6-1; with sixes trump it takes all seven tricks:
ALL_SEVEN = [
    "6-6 4-2 2-1",
    "6-5 4-3 1-1",
    "6-4 4-4 2-2",
    "6-3 5-1 3-1",
    "6-2 5-2 3-2",
    "5-5 5-4 4-1",  # seat 1 must follow fives
    "0-0 5-3 3-3",  # nobody else holds a blank
]

DEAL_FIVE = [  # seat 0 can take five tricks; the widow is 2-1
    "6-6 6-5 6-4 6-3 6-2 3-2 0-0",
    "6-1 5-5 5-4 5-3 5-2 5-1 4-4",
    "4-3 4-2 4-1 3-3 3-1 2-2 1-1",
]
WIDOW_FIVE = "2-1"
# Seat 0 takes the 2-1, lays out the 0-0, names sixes: five tricks to seat 0, one each to the
# others.
FIVE_ONE_ONE = [
    "6-6 6-1 4-1",  # seat 1 must trump with its 6-1
    "6-5 5-5 4-3",
    "6-4 5-4 3-1",
    "6-3 5-3 2-2",
    "6-2 5-2 1-1",
    "3-2 5-1 3-3",  # seat 2 wins the threes with the double
    "4-2 2-1 4-4",  # seat 2 leads 4-2, seat 1's 4-4 wins
]


def moon_rules(**options):
    return ruleset("moon", **options)


def dealt(hands=DEAL_MOON, widow_tile=WIDOW_MOON, dealer=2, **options):
    return deal_hands(moon_rules(**options), hands, rest=widow_tile, dealer=dealer)


def bids_after(state, *bids):
    for bid in bids:
        seat = turn(state)
        state = run(state, Pass(seat) if bid is None else PlaceBid(seat, bid))
    return state


def legal_bids(state):
    return [a.bid for a in legal_actions(state, turn(state)) if isinstance(a, PlaceBid)]


def refused(state, bid):
    with pytest.raises(IllegalAction) as caught:
        decide(state, PlaceBid(turn(state), bid))
    return caught.type


def hand_of_five(bid, scores=None, **options):
    """DEAL_FIVE: seat 0 wins the auction with ``bid``, exchanges and names sixes; played out:
    seat 0 five tricks, seats 1 and 2 one each."""
    state = dealt(DEAL_FIVE, WIDOW_FIVE, **options)
    if scores is not None:
        state = with_scores(state, *scores)
    state, _ = auction(state, {0: bid})
    state = _widow_and_trump(state, "0-0")
    return play_tricks(state, FIVE_ONE_ONE)


def hand_of_seven(bid, scores=None, **options):
    state = dealt(**options)
    if scores is not None:
        state = with_scores(state, *scores)
    state, _ = auction(state, {0: bid})
    state = _widow_and_trump(state, "6-1")
    return play_tricks(state, ALL_SEVEN)


def _widow_and_trump(state, discard):
    while state.phase is not Phase.PLAY:
        if state.phase is Phase.WIDOW:
            state = exchange(state, discard)
        else:
            state = declare(state, SIXES)
    return state


def play_tricks(state, tricks):
    events = []
    for trick in tricks:
        state, new = plays(state, trick)
        events.extend(new)
    return state, events


# ---------------------------------------------------------------- presets and defaults

MOON_DEFAULTS = {
    "players": 3,
    "points_to_win": 21,
    "all_pass": "redeal",
    "moon_only_over_seven": False,
    "widow": "must_exchange",
    "widow_before_trump": True,
    "moon_trumps": "all",
    "bidder_leads_trump": False,
    "made_scores": "bid",
    "set_scores": "minus_bid",
    "moon_wins_game": False,
    "may_trump_when_able_to_follow": False,
}


@pytest.mark.parametrize("option,default", sorted(MOON_DEFAULTS.items()))
def test_moon_option_defaults_are_the_rules_defaults(option, default):
    assert getattr(ruleset("moon"), option) == default


def test_moon_s1_preset_reads_moon_as_s1_does():
    s1 = ruleset("moon-s1")
    assert s1.may_trump_when_able_to_follow is True  # step 7
    assert s1.moon_only_over_seven is True  # step 3
    assert s1.widow == "may_exchange"  # step 2, 4: "can take"
    assert s1.widow_before_trump is False  # step 4: trump, then the widow
    assert s1.moon_trumps == "suits"  # step 4: "a trump suit (zero to six)"
    assert s1.bidder_leads_trump is True  # step 4
    assert s1.made_scores == "tricks"  # step 8
    assert s1.set_scores == "opponents_get_bid"  # step 8
    assert s1.moon_wins_game is True  # step 8


def test_moon_pagat_preset_names_trump_before_the_widow_and_has_no_doubles_trump():
    pagat = ruleset("moon-pagat")
    assert pagat.widow_before_trump is False
    assert pagat.moon_trumps == "suits_and_follow_me"


def test_texas42_options_are_not_for_moon():
    with pytest.raises(RulesetError):
        ruleset("moon", nello=True)
    with pytest.raises(RulesetError):
        ruleset("texas42", widow="may_exchange")


# ---------------------------------------------------------------- players, tiles, deal


def test_moon_is_for_three_players_each_for_themselves():
    rules = moon_rules()
    assert rules.players == 3
    assert rules.teams == ((0,), (1,), (2,))
    with pytest.raises(RulesetError):
        moon_rules(players=4)


def test_moon_deals_seven_tiles_each_and_the_22nd_tile_is_the_widow():
    state = deal_seed("moon", b"moon deal")
    assert [h.bit_count() for h in state.hand.hands] == [7, 7, 7]
    assert state.hand.rest.bit_count() == 1
    everything = state.hand.rest
    for h in state.hand.hands:
        everything |= h
    assert everything == moon_rules().tiles


def test_moon_deal_never_holds_a_blank_other_than_0_0():
    for seed in (b"1", b"2", b"3", b"4"):
        state = deal_seed("moon", seed)
        for h in (*state.hand.hands, state.hand.rest):
            assert h & tiles("1-0 2-0 3-0 4-0 5-0 6-0") == 0


# ---------------------------------------------------------------- bidding


def test_moon_bids_are_four_to_seven_tricks_or_the_moon():
    assert legal_bids(dealt()) == [
        Bid.tricks(4),
        Bid.tricks(5),
        Bid.tricks(6),
        Bid.tricks(7),
        Bid.moon(),
    ]


@pytest.mark.parametrize("tricks", [8, 21])
def test_moon_bids_over_seven_tricks_are_refused(tricks):
    assert refused(dealt(), Bid.tricks(tricks)) is BidNotAllowed


@pytest.mark.parametrize("tricks", [0, 3])
def test_a_moon_bid_under_four_is_refused_as_too_low(tricks):
    # errors.BidTooLow: "A bid that does not beat the high bid (or is under the minimum)",
    # as a 42 bid under min_bid is.
    assert refused(dealt(), Bid.tricks(tricks)) is BidTooLow


def test_shooting_the_moon_is_bidding_21():
    assert parse_bid("moon", ruleset("moon")) == Bid.moon()
    assert parse_bid("21", ruleset("moon")) == Bid.moon()
    assert Bid.moon().amount == 21


def test_moon_bidding_is_one_round_clockwise_each_player_once():
    state = dealt(dealer=2)
    state, events = auction(state, {0: Bid.tricks(4), 1: Bid.tricks(5), 2: Bid.tricks(6)})
    assert [e.seat for e in events if isinstance(e, BidPlaced)] == [0, 1, 2]
    assert events[-1] == AuctionWon(2, Bid.tricks(6), 2)


def test_a_moon_bid_must_beat_the_high_bid():
    state = bids_after(dealt(), Bid.tricks(5))
    assert refused(state, Bid.tricks(5)) is BidTooLow
    assert refused(state, Bid.tricks(4)) is BidTooLow
    assert legal_bids(state) == [Bid.tricks(6), Bid.tricks(7), Bid.moon()]


def test_the_moon_is_the_only_bid_over_seven():
    state = bids_after(dealt(), Bid.tricks(7))
    assert legal_bids(state) == [Bid.moon()]


def test_the_moon_ends_the_bidding_at_once():
    state = dealt(dealer=2)
    state, events = act(state, PlaceBid(0, Bid.moon()))
    assert events == [BidPlaced(0, Bid.moon()), AuctionWon(0, Bid.moon(), 0)]
    assert state.phase is not Phase.BIDDING


def test_the_moon_may_be_bid_over_any_bid_by_default():
    state = bids_after(dealt(), Bid.tricks(4))
    assert Bid.moon() in legal_bids(state)
    assert Bid.moon() in legal_bids(dealt())


def test_moon_only_over_seven_no_moon_before_a_seven():
    state = dealt(moon_only_over_seven=True)
    assert Bid.moon() not in legal_bids(state)
    assert refused(state, Bid.moon()) is BidNotAllowed
    state = bids_after(state, Bid.tricks(6))
    assert refused(state, Bid.moon()) is BidNotAllowed


def test_moon_only_over_seven_the_moon_may_be_bid_over_a_seven():
    state = bids_after(dealt(moon_only_over_seven=True), Bid.tricks(7))
    assert legal_bids(state) == [Bid.moon()]


def test_moon_only_over_seven_is_off_by_default():
    assert moon_rules().moon_only_over_seven is False


def test_moon_first_hand_opener_is_chosen_when_the_game_is_created():
    for seat in range(3):
        state = deal_seed(moon_rules(first_hand_opener=str(seat)), b"x")
        assert turn(state) == seat


def test_moon_has_no_1_0_opener_rule():
    with pytest.raises(RulesetError):
        moon_rules(first_hand_opener="holds_1_0")


def test_moon_the_opener_moves_one_seat_clockwise_each_hand():
    state = new_game(moon_rules(first_hand_opener="1"))
    openers = []
    for n in range(4):
        state = run(state, Deal(b"hand %d" % n))
        openers.append(turn(state))
        state, _ = auction(state, {turn(state): Bid.tricks(4)})
        while state.phase is not Phase.PLAY:
            state = run(state, legal_actions(state, turn(state))[0])
        state, _ = play_out(state)
    assert openers == [1, 2, 0, 1]


def test_moon_all_pass_redeal_is_the_default():
    state = dealt(dealer=2)
    assert moon_rules().all_pass == "redeal"
    state, events = auction(state, {})
    assert events[-1] == AllPassed(0)
    assert state.phase is Phase.DEAL
    state, events = act(state, Deal(b"again"))
    assert events[0].dealer == 0 and events[0].number == 2
    assert turn(state) == 1


def test_moon_all_pass_forced_dealer_the_last_player_must_bid_four():
    state = bids_after(dealt(dealer=2, all_pass="forced_dealer"), None, None)
    assert turn(state) == 2
    with pytest.raises(MustBid):
        decide(state, Pass(2))
    assert legal_actions(state, 2) == [PlaceBid(2, Bid.tricks(4))]
    assert refused(state, Bid.tricks(5)) is BidNotAllowed
    _, events = act(state, PlaceBid(2, Bid.tricks(4)))
    assert events[-1] == AuctionWon(2, Bid.tricks(4), 2)


# ---------------------------------------------------------------- the widow


def won(bid=None, bidder=0, **options):
    state = dealt(**options)
    state, _ = auction(state, {bidder: bid or Bid.tricks(5)})
    return state


def test_the_winning_bidder_takes_the_widow_and_lays_out_one_tile():
    state = won()
    assert state.phase is Phase.WIDOW
    assert turn(state) == 0
    state, events = act(state, ExchangeWidow(0, T("6-1")))
    assert events == [WidowExchanged(0, T("0-0"), T("6-1"))]
    assert state.hand.hands[0] == tiles("6-6 6-5 6-4 6-3 6-2 5-5 0-0")
    assert state.hand.rest == tiles("6-1")  # face down, out of play


def test_only_the_winning_bidder_exchanges_with_the_widow():
    with pytest.raises(NotYourTurn):
        decide(won(), ExchangeWidow(1, T("5-4")))


def test_the_bidder_lays_out_a_tile_of_its_own_hand():
    with pytest.raises(IllegalDiscard):
        decide(won(), ExchangeWidow(0, T("5-4")))  # seat 1's tile


def test_widow_must_exchange_is_the_default():
    assert moon_rules().widow == "must_exchange"


def test_widow_must_exchange_the_bidder_may_not_leave_the_widow():
    state = won()
    with pytest.raises(IllegalDiscard):
        decide(state, DeclineWidow(0))
    assert not any(isinstance(a, DeclineWidow) for a in legal_actions(state, 0))


def test_widow_may_exchange_the_bidder_may_leave_the_widow():
    state = won(widow="may_exchange")
    assert DeclineWidow(0) in legal_actions(state, 0)
    state, events = act(state, DeclineWidow(0))
    assert events == [WidowDeclined(0)]
    assert state.hand.hands[0] == tiles(DEAL_MOON[0])
    assert state.phase is Phase.TRUMP


def test_widow_may_exchange_the_bidder_may_still_exchange():
    state = won(widow="may_exchange")
    _, events = act(state, ExchangeWidow(0, T("6-1")))
    assert events == [WidowExchanged(0, T("0-0"), T("6-1"))]


def test_widow_before_trump_the_bidder_exchanges_then_names_trump():
    state = won()
    assert moon_rules().widow_before_trump is True
    assert state.phase is Phase.WIDOW
    with pytest.raises(IllegalAction):
        decide(state, DeclareContract(0, Contract.of_trump(SIXES)))
    state = exchange(state, "6-1")
    assert state.phase is Phase.TRUMP and turn(state) == 0
    state = declare(state, SIXES)
    assert state.phase is Phase.PLAY and turn(state) == 0


def test_widow_before_trump_off_the_bidder_names_trump_then_exchanges():
    state = won(widow_before_trump=False)
    assert state.phase is Phase.TRUMP and turn(state) == 0
    with pytest.raises(IllegalAction):
        decide(state, ExchangeWidow(0, T("6-1")))
    state = declare(state, SIXES)
    assert state.phase is Phase.WIDOW and turn(state) == 0
    state = exchange(state, "6-1")
    assert state.phase is Phase.PLAY and turn(state) == 0


# ---------------------------------------------------------------- trump and the first lead


def test_moon_trump_may_be_a_suit_doubles_or_follow_me():
    state = exchange(won(), "6-1")
    options = legal_contracts(state.rules, state.hand)
    assert options == [Contract.of_trump(t) for t in (0, 1, 2, 3, 4, 5, 6, DOUBLES, FOLLOW_ME)]


def test_moon_trumps_suits_and_follow_me_as_pagat():
    state = exchange(won(moon_trumps="suits_and_follow_me"), "6-1")
    assert Contract.of_trump(FOLLOW_ME) in legal_contracts(state.rules, state.hand)
    with pytest.raises(IllegalContract):
        decide(state, DeclareContract(0, Contract.of_trump(DOUBLES)))


def test_moon_trumps_suits_only_as_s1():
    state = exchange(won(moon_trumps="suits"), "6-1")
    for trump in (DOUBLES, FOLLOW_ME):
        with pytest.raises(IllegalContract):
            decide(state, DeclareContract(0, Contract.of_trump(trump)))


def test_moon_has_no_nello_or_sevens():
    state = exchange(won(), "6-1")
    for special in (Contract.nello(), Contract.sevens()):
        with pytest.raises(IllegalContract):
            decide(state, DeclareContract(0, special))


def test_the_bidder_leads_any_tile_to_the_first_trick():
    state = declare(exchange(won(), "6-1"), SIXES)
    assert legal_tiles(state) == "6-6 6-5 6-4 6-3 6-2 5-5 0-0"


def test_bidder_leads_trump_the_first_lead_must_be_a_trump_if_the_bidder_holds_one():
    state = declare(exchange(won(bidder_leads_trump=True), "6-1"), SIXES)
    assert legal_tiles(state) == "6-6 6-5 6-4 6-3 6-2"
    with pytest.raises(MustLeadTrump):
        decide(state, PlayTile(0, T("5-5")))


def test_bidder_leads_trump_a_bidder_without_trumps_leads_anything():
    state = declare(exchange(won(bidder_leads_trump=True), "6-1"), 1)  # ones: seat 0 has none
    assert legal_tiles(state) == "6-6 6-5 6-4 6-3 6-2 5-5 0-0"


def test_bidder_leads_trump_binds_only_the_first_lead():
    state = declare(exchange(won(bidder_leads_trump=True), "6-1"), SIXES)
    state, _ = plays(state, "6-6 4-2 2-1")
    assert turn(state) == 0
    assert "5-5" in legal_tiles(state).split()


def test_bidder_leads_trump_is_off_by_default():
    assert moon_rules().bidder_leads_trump is False


# ---------------------------------------------------------------- scoring


def test_each_trick_is_one_point():
    _, events = hand_of_five(Bid.tricks(5))
    assert scored(events).taken == (5, 1, 1)


def test_made_scores_bid_the_bidder_scores_the_bid_and_no_overtricks():
    _, events = hand_of_five(Bid.tricks(4))
    # made 4 with 5 tricks: +4; the others score their tricks
    assert scored(events) == HandScored(0, Bid.tricks(4), True, (5, 1, 1), (4, 1, 1), (4, 1, 1))


def test_made_scores_bid_is_the_default():
    assert moon_rules().made_scores == "bid"


def test_made_exactly():
    _, events = hand_of_five(Bid.tricks(5))
    assert scored(events) == HandScored(0, Bid.tricks(5), True, (5, 1, 1), (5, 1, 1), (5, 1, 1))


def test_made_scores_tricks_the_bidder_scores_the_tricks_taken():
    _, events = hand_of_five(Bid.tricks(4), made_scores="tricks")
    assert scored(events) == HandScored(0, Bid.tricks(4), True, (5, 1, 1), (5, 1, 1), (5, 1, 1))


def test_set_scores_minus_bid_the_bidder_scores_minus_the_bid():
    _, events = hand_of_five(Bid.tricks(6))
    assert scored(events) == HandScored(0, Bid.tricks(6), False, (5, 1, 1), (-6, 1, 1), (-6, 1, 1))


def test_set_scores_minus_bid_is_the_default():
    assert moon_rules().set_scores == "minus_bid"


def test_set_scores_opponents_get_bid_bidder_zero_others_their_tricks_plus_the_bid():
    _, events = hand_of_five(Bid.tricks(6), set_scores="opponents_get_bid")
    # 1 + 6 = 7 each
    assert scored(events) == HandScored(0, Bid.tricks(6), False, (5, 1, 1), (0, 7, 7), (0, 7, 7))


def test_the_moon_made_scores_21():
    _, events = hand_of_seven(Bid.moon())
    assert scored(events) == HandScored(0, Bid.moon(), True, (7, 0, 0), (21, 0, 0), (21, 0, 0))


def test_the_moon_made_scores_21_whatever_made_scores_says():
    _, events = hand_of_seven(Bid.moon(), made_scores="tricks")
    assert scored(events).changes == (21, 0, 0)


def test_the_moon_set_scores_minus_21_and_the_others_their_tricks():
    _, events = hand_of_five(Bid.moon())
    assert scored(events) == HandScored(0, Bid.moon(), False, (5, 1, 1), (-21, 1, 1), (-21, 1, 1))


def test_the_moon_set_scores_minus_21_whatever_set_scores_says():
    _, events = hand_of_five(Bid.moon(), set_scores="opponents_get_bid")
    assert scored(events).changes == (-21, 1, 1)


def test_seven_made_scores_seven_not_21():
    _, events = hand_of_seven(Bid.tricks(7))
    assert scored(events).changes == (7, 0, 0)


def test_moon_plays_every_trick():
    state, _ = hand_of_five(Bid.tricks(4))
    assert len(state.hand.tricks) == 7


# ---------------------------------------------------------------- the game


def test_moon_game_is_won_by_the_first_to_21():
    assert moon_rules().points_to_win == 21
    _, events = hand_of_five(Bid.tricks(5), scores=(16, 0, 0))
    assert scored(events).scores == (21, 1, 1)
    assert events[-1] == GameWon(0, (0,))


def test_moon_20_points_do_not_win():
    state, events = hand_of_five(Bid.tricks(5), scores=(15, 0, 0))
    assert not any(isinstance(e, GameWon) for e in events)
    assert state.phase is Phase.DEAL


def test_moon_points_to_win_option():
    _, events = hand_of_five(Bid.tricks(5), points_to_win=11, scores=(6, 0, 0))
    assert events[-1] == GameWon(0, (0,))


def test_several_over_21_on_one_hand_the_bidder_wins_if_among_them():
    _, events = hand_of_five(Bid.tricks(5), scores=(16, 20, 20))
    assert scored(events).scores == (21, 21, 21)
    assert events[-1] == GameWon(0, (0,))


def test_several_over_21_on_one_hand_without_the_bidder_the_highest_score_wins():
    _, events = hand_of_five(Bid.tricks(6), scores=(0, 15, 16), set_scores="opponents_get_bid")
    assert scored(events).scores == (0, 22, 23)
    assert events[-1] == GameWon(2, (2,))


def test_several_over_21_on_one_hand_a_tie_plays_another_hand():
    state, events = hand_of_five(Bid.tricks(6), scores=(0, 20, 20))
    assert scored(events).scores == (-6, 21, 21)
    assert not any(isinstance(e, GameWon) for e in events)
    assert state.phase is Phase.DEAL


def test_moon_wins_game_a_made_moon_wins_at_once():
    _, events = hand_of_seven(Bid.moon(), scores=(-10, 5, 5), moon_wins_game=True)
    assert scored(events).scores == (11, 5, 5)
    assert events[-1] == GameWon(0, (0,))


def test_without_moon_wins_game_a_made_moon_only_adds_21():
    state, events = hand_of_seven(Bid.moon(), scores=(-10, 5, 5))
    assert not any(isinstance(e, GameWon) for e in events)
    assert state.phase is Phase.DEAL


def test_moon_wins_game_is_off_by_default():
    assert moon_rules().moon_wins_game is False


def test_a_set_moon_does_not_win_the_game_with_moon_wins_game():
    _, events = hand_of_five(Bid.moon(), moon_wins_game=True)
    assert not any(isinstance(e, GameWon) for e in events)
