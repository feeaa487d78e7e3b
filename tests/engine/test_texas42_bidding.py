"""RULES.md section 2, Texas 42 [S2]: players and teams, the deal, the dealer and the opener,
the auction (point bids, 42 and mark bids), and what happens when everyone passes."""

import pytest
from helpers import act, auction, deal_hands, deal_seed, new_game, play_out, run, turn

from boneyard.engine import (
    AllPassed,
    AuctionWon,
    Bid,
    BidNotAllowed,
    BidPlaced,
    BidTooLow,
    Deal,
    HandDealt,
    IllegalAction,
    MustBid,
    NotYourTurn,
    Pass,
    Passed,
    Phase,
    PlaceBid,
    RulesetError,
    TilePlayed,
    TrickWon,
    decide,
    legal_actions,
    parse_bid,
    parse_tile,
    ruleset,
)

DEAL_A = [  # a full deal; seat 0 holds every six
    "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
    "5-5 5-4 5-3 5-2 5-1 5-0 4-4",
    "4-3 4-2 4-1 4-0 3-3 3-2 3-1",
    "3-0 2-2 2-1 2-0 1-1 1-0 0-0",
]


def dealt(rules="texas42", dealer=3, **options):
    return deal_hands(ruleset(rules, **options), DEAL_A, dealer=dealer)


def bids_after(state, *bids):
    """Seats bid (a ``Bid``) or pass (``None``) in turn."""
    for bid in bids:
        seat = turn(state)
        state = run(state, Pass(seat) if bid is None else PlaceBid(seat, bid))
    return state


def legal_bids(state):
    return [a.bid for a in legal_actions(state, turn(state)) if isinstance(a, PlaceBid)]


def refused(state, bid):
    """The error a bid by the seat to bid is refused with."""
    with pytest.raises(IllegalAction) as caught:
        decide(state, PlaceBid(turn(state), bid))
    return caught.type


# ---------------------------------------------------------------- presets and defaults

TEXAS42_DEFAULTS = {
    "players": 4,
    "min_bid": 30,
    "max_opening_marks": 2,
    "all_pass": "forced_dealer",
    "first_hand_opener": "holds_1_0",
    "six_player_teams": "pairs",
    "end_hand_when_decided": True,
    "hide_tricks_on_mark_bids": True,
    "marks_to_win": 7,
    "points_to_win": 0,
    "may_trump_when_able_to_follow": False,
    "nello": False,
    "nello_doubles": "high",
    "plunge": False,
    "splash": False,
    "splash_marks": 2,
    "sevens": False,
}


@pytest.mark.parametrize("option,default", sorted(TEXAS42_DEFAULTS.items()))
def test_texas42_option_defaults_are_the_rules_defaults(option, default):
    assert getattr(ruleset("texas42"), option) == default


def test_texas42_house_preset_turns_on_nello_plunge_splash_and_sevens_only():
    house = ruleset("texas42-house").options()
    straight = ruleset("texas42").options()
    changed = {name for name in house if house[name] != straight[name]}
    assert changed == {"nello", "plunge", "splash", "sevens"}


def test_texas42_redeal_preset_redeals_when_all_pass():
    assert ruleset("texas42-redeal").all_pass == "redeal"


# ---------------------------------------------------------------- players, teams, the deal


def test_four_players_in_two_partnerships_partners_opposite():
    rules = ruleset("texas42")
    assert rules.players == 4
    assert rules.teams == ((0, 2), (1, 3))


@pytest.mark.parametrize(
    "players,hand_size,left_over",
    [(2, 14, 0), (3, 9, 1), (4, 7, 0), (5, 5, 3), (6, 4, 4), (7, 4, 0)],
)
def test_each_player_gets_floor_28_over_players_tiles_the_rest_out_of_play(
    players, hand_size, left_over
):
    state = deal_seed(ruleset("texas42", players=players), b"players")
    assert [h.bit_count() for h in state.hand.hands] == [hand_size] * players
    assert state.hand.rest.bit_count() == left_over


@pytest.mark.parametrize("players", [1, 8])
def test_texas42_is_for_two_to_seven_players(players):
    with pytest.raises(RulesetError):
        ruleset("texas42", players=players)


@pytest.mark.parametrize("players", [2, 3, 5, 7])
def test_with_two_three_five_or_seven_players_everyone_plays_alone(players):
    assert ruleset("texas42", players=players).teams == tuple((s,) for s in range(players))


def test_six_players_default_to_three_pairs_partners_opposite():
    assert ruleset("texas42", players=6).teams == ((0, 3), (1, 4), (2, 5))


def test_six_player_teams_threes_are_two_teams_of_alternate_seats():
    rules = ruleset("texas42", players=6, six_player_teams="threes")
    assert rules.teams == ((0, 2, 4), (1, 3, 5))


def test_six_player_teams_is_only_for_six_players():
    with pytest.raises(RulesetError):
        ruleset("texas42", six_player_teams="threes")


@pytest.mark.parametrize("players,tricks", [(2, 14), (3, 9), (5, 5), (6, 4), (7, 4)])
def test_tricks_per_hand_equal_tiles_per_player(players, tricks):
    state = deal_seed(ruleset("texas42", players=players, end_hand_when_decided=False), b"t")
    state, _ = auction(state, {turn(state): Bid.points(30)})
    state = run(state, legal_actions(state, turn(state))[0])  # declares blanks
    state, events = play_out(state)
    assert sum(isinstance(e, TrickWon) for e in events) == tricks
    assert sum(isinstance(e, TilePlayed) for e in events) == tricks * players


@pytest.mark.parametrize("players,top", [(2, 48), (3, 43), (4, 41), (5, 39), (6, 38), (7, 38)])
def test_point_bids_run_from_min_bid_to_one_less_than_tricks_plus_35(players, top):
    state = deal_seed(ruleset("texas42", players=players), b"bids")
    points = [b.amount for b in legal_bids(state) if b == Bid.points(b.amount)]
    assert points == list(range(30, top + 1))
    assert refused(state, Bid.points(top + 1)) is BidNotAllowed


@pytest.mark.parametrize("players", [2, 3, 5, 6, 7])
def test_the_all_tricks_bid_is_worth_one_mark_whatever_the_number_of_players(players):
    state = deal_seed(ruleset("texas42", players=players), b"bids")
    assert Bid.marks(1) in legal_bids(state)
    assert Bid.marks(1).marks_worth == 1


def test_the_deal_is_reproducible_from_its_seed():
    a = decide(new_game(), Deal(b"same"))
    b = decide(new_game(), Deal(b"same"))
    assert a == b


# ---------------------------------------------------------------- opener and dealer


@pytest.mark.parametrize("seed", [b"a", b"b", b"c", b"d", b"e", b"f"])
def test_first_hand_the_holder_of_1_0_bids_first(seed):
    state = deal_seed("texas42", seed)
    holder = next(s for s, h in enumerate(state.hand.hands) if h >> parse_tile("1-0") & 1)
    assert turn(state) == holder
    assert state.hand.dealer == (holder - 1) % 4  # the dealer sits to the opener's right


def test_with_1_0_out_of_play_the_holder_of_the_next_tile_bids_first():
    # Three players, seed b"out46": 1-0 lies out of play; seat 1 holds 1-1 (next in order).
    state = deal_seed(ruleset("texas42", players=3), b"out46")
    assert state.hand.rest == 1 << parse_tile("1-0")
    assert state.hand.hands[1] >> parse_tile("1-1") & 1
    assert turn(state) == 1
    assert state.hand.dealer == 0


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_first_hand_opener_may_be_a_seat_chosen_when_the_game_is_created(seat):
    state = deal_seed(ruleset("texas42", first_hand_opener=str(seat)), b"a")
    assert turn(state) == seat
    assert state.hand.dealer == (seat - 1) % 4


def test_first_hand_opener_must_be_holds_1_0_or_a_seat_at_the_table():
    with pytest.raises(RulesetError):
        ruleset("texas42", first_hand_opener="4")


def test_bidding_starts_left_of_the_dealer():
    for dealer in range(4):
        assert turn(dealt(dealer=dealer)) == (dealer + 1) % 4


def test_the_dealer_moves_one_seat_clockwise_each_hand():
    state = deal_seed(ruleset("texas42", first_hand_opener="0"), b"h1")
    dealers = []
    for n in range(5):
        dealers.append(state.hand.dealer)
        state, _ = auction(state, {turn(state): Bid.points(30)})
        state = run(state, legal_actions(state, turn(state))[0])
        state, _ = play_out(state)
        assert state.phase is Phase.DEAL
        state = run(state, Deal(b"next %d" % n))
    assert dealers == [3, 0, 1, 2, 3]


# ---------------------------------------------------------------- the auction


def test_each_player_bids_once_clockwise_then_the_high_bidder_wins_the_auction():
    state = dealt(dealer=3)
    state, events = auction(state, {1: Bid.points(31), 2: Bid.points(34)})
    assert [(type(e).__name__, getattr(e, "seat", None)) for e in events] == [
        ("Passed", 0),
        ("BidPlaced", 1),
        ("BidPlaced", 2),
        ("Passed", 3),
        ("AuctionWon", 2),
    ]
    assert events[-1] == AuctionWon(2, Bid.points(34), 2)


def test_a_bid_out_of_turn_is_refused():
    state = dealt(dealer=3)
    with pytest.raises(NotYourTurn):
        decide(state, PlaceBid(2, Bid.points(30)))


def test_a_player_may_pass():
    state = dealt(dealer=3)
    _, events = act(state, Pass(0))
    assert events == [Passed(0)]


def test_min_bid_is_30():
    state = dealt()
    assert min(b.amount for b in legal_bids(state) if b.kind.value == "points") == 30
    refused(state, Bid.points(29))


def test_a_bid_under_the_minimum_is_refused_as_too_low():
    # errors.BidTooLow: "A bid that does not beat the high bid (or is under the minimum)."
    assert refused(dealt(), Bid.points(29)) is BidTooLow


def test_min_bid_option_sets_the_lowest_point_bid():
    state = dealt(min_bid=34)
    refused(state, Bid.points(33))
    _, events = act(state, PlaceBid(0, Bid.points(34)))
    assert events == [BidPlaced(0, Bid.points(34))]


def test_point_bids_run_30_to_41():
    points = [b.amount for b in legal_bids(dealt()) if b.kind.value == "points"]
    assert points == list(range(30, 42))


def test_42_is_the_bid_to_take_every_trick_worth_one_mark():
    assert parse_bid("42") == Bid.marks(1)
    assert Bid.marks(1).marks_worth == 1
    assert str(Bid.marks(1)) == "42"


@pytest.mark.parametrize("text,marks", [("84", 2), ("126", 3), ("168", 4)])
def test_mark_bids_are_multiples_of_42(text, marks):
    assert parse_bid(text) == Bid.marks(marks)
    assert Bid.marks(marks).marks_worth == marks
    assert str(Bid.marks(marks)) == text


def test_a_bid_must_be_higher_than_the_high_bid():
    state = bids_after(dealt(), Bid.points(31))
    assert refused(state, Bid.points(31)) is BidTooLow
    assert refused(state, Bid.points(30)) is BidTooLow
    _, events = act(state, PlaceBid(1, Bid.points(32)))
    assert events == [BidPlaced(1, Bid.points(32))]


def test_42_beats_41():
    state = bids_after(dealt(), Bid.points(41))
    assert Bid.marks(1) in legal_bids(state)
    assert all(b.kind.value != "points" for b in legal_bids(state))


def test_a_point_bid_never_beats_a_mark_bid():
    state = bids_after(dealt(), Bid.marks(1))
    assert refused(state, Bid.points(41)) is BidTooLow


def test_the_first_mark_bid_may_be_one_or_two_marks():
    state = dealt()
    assert {Bid.marks(1), Bid.marks(2)} <= set(legal_bids(state))
    assert refused(state, Bid.marks(3)) is BidNotAllowed


def test_the_first_mark_bid_after_point_bids_may_be_two_marks():
    state = bids_after(dealt(), Bid.points(35))
    assert Bid.marks(2) in legal_bids(state)
    assert refused(state, Bid.marks(3)) is BidNotAllowed


def test_after_a_mark_bid_each_mark_bid_is_exactly_one_mark_more():
    state = bids_after(dealt(), Bid.marks(1))
    assert [b for b in legal_bids(state)] == [Bid.marks(2)]
    assert refused(state, Bid.marks(3)) is BidNotAllowed
    state = bids_after(state, Bid.marks(2))
    assert legal_bids(state) == [Bid.marks(3)]
    assert refused(state, Bid.marks(4)) is BidNotAllowed
    assert refused(state, Bid.marks(2)) is BidTooLow


def test_mark_bids_climb_one_at_a_time_through_the_auction():
    state = bids_after(dealt(), Bid.marks(2), Bid.marks(3), Bid.marks(4))
    _, events = act(state, PlaceBid(3, Bid.marks(5)))
    assert events[-1] == AuctionWon(3, Bid.marks(5), 3)


def test_max_opening_marks_option_raises_the_first_mark_bid():
    state = dealt(max_opening_marks=3)
    assert {Bid.marks(1), Bid.marks(2), Bid.marks(3)} <= set(legal_bids(state))
    assert refused(state, Bid.marks(4)) is BidNotAllowed


def test_max_opening_marks_one_allows_only_42_to_open():
    state = dealt(max_opening_marks=1)
    assert refused(state, Bid.marks(2)) is BidNotAllowed
    state = bids_after(state, Bid.marks(1))
    assert legal_bids(state) == [Bid.marks(2)]


def test_max_opening_marks_applies_to_the_first_mark_bid_only():
    state = bids_after(dealt(max_opening_marks=3), Bid.marks(1))
    assert legal_bids(state) == [Bid.marks(2)]


# ---------------------------------------------------------------- all pass


def test_all_pass_forced_dealer_the_dealer_may_not_pass():
    state = bids_after(dealt(dealer=3), None, None, None)
    assert turn(state) == 3
    with pytest.raises(MustBid):
        decide(state, Pass(3))


def test_all_pass_forced_dealer_the_dealer_must_bid_min_bid():
    state = bids_after(dealt(dealer=3), None, None, None)
    assert legal_actions(state, 3) == [PlaceBid(3, Bid.points(30))]
    assert refused(state, Bid.points(31)) is BidNotAllowed
    assert refused(state, Bid.marks(1)) is BidNotAllowed
    _, events = act(state, PlaceBid(3, Bid.points(30)))
    assert events == [BidPlaced(3, Bid.points(30)), AuctionWon(3, Bid.points(30), 3)]


def test_all_pass_forced_dealer_bids_the_min_bid_option():
    state = bids_after(dealt(dealer=3, min_bid=32), None, None, None)
    assert legal_actions(state, 3) == [PlaceBid(3, Bid.points(32))]


def test_forced_dealer_is_the_default():
    assert ruleset("texas42").all_pass == "forced_dealer"


def test_the_dealer_may_pass_when_someone_has_bid():
    state = bids_after(dealt(dealer=3), None, Bid.points(30), None)
    _, events = act(state, Pass(3))
    assert events == [Passed(3), AuctionWon(1, Bid.points(30), 1)]


def test_all_pass_redeal_reshuffles_and_the_next_dealer_deals():
    state = deal_seed(ruleset("texas42-redeal", first_hand_opener="0"), b"first")
    assert state.hand.dealer == 3
    state, events = auction(state, {})
    assert events[-1] == AllPassed(0)
    assert state.phase is Phase.DEAL
    state, events = act(state, Deal(b"second"))
    assert isinstance(events[0], HandDealt)
    assert events[0].dealer == 0
    assert events[0].number == 2
    assert turn(state) == 1


def test_all_pass_redeal_the_dealer_may_pass():
    state = bids_after(dealt("texas42-redeal", dealer=3), None, None, None)
    assert Pass(3) in legal_actions(state, 3)
