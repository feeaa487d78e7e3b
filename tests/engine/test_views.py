"""RULES.md section 4: what a seat may see, and a spectator; ``hide_tricks_on_mark_bids``.

The strongest way to say "a seat never sees X" is that its view does not change when X does:
the same game with other hands (or another widow, or another discard) gives that seat the same
view, field for field.
"""

import pytest
from helpers import (
    T,
    auction,
    deal_hands,
    declare,
    exchange,
    plays,
    run,
    tiles,
)

from boneyard.engine import (
    SPECTATOR,
    Bid,
    Contract,
    PlaceBid,
    PlayTile,
    legal_actions,
    ruleset,
    view,
)

SIXES = 6

DEAL_A = [
    "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
    "5-5 5-4 5-3 5-2 5-1 5-0 4-4",
    "4-3 4-2 4-1 4-0 3-3 3-2 3-1",
    "3-0 2-2 2-1 2-0 1-1 1-0 0-0",
]
# DEAL_A with seats 1, 2 and 3's hands passed round: seat 0's hand is the same.
DEAL_A_OTHERS_ROTATED = [DEAL_A[0], DEAL_A[3], DEAL_A[1], DEAL_A[2]]
# DEAL_A with seat 1's 5-4 and seat 3's 2-2 swapped (tiles not played in the first trick).
DEAL_A_ONE_SWAP = [
    DEAL_A[0],
    DEAL_A[1].replace("5-4", "2-2"),
    DEAL_A[2],
    DEAL_A[3].replace("2-2", "5-4"),
]

DEAL_MOON = [
    "6-6 6-5 6-4 6-3 6-2 6-1 5-5",
    "5-4 5-3 5-2 5-1 4-4 4-3 4-2",
    "4-1 3-3 3-2 3-1 2-2 2-1 1-1",
]


def through(state, bids, contract=SIXES, play=""):
    state, _ = auction(state, bids)
    state = declare(state, contract)
    state, _ = plays(state, play)
    return state


def every_view(state):
    return [view(state, seat) for seat in range(state.rules.players)] + [view(state, SPECTATOR)]


# ---------------------------------------------------------------- a seat


def test_a_seat_sees_its_own_tiles():
    state = deal_hands("texas42", DEAL_A, dealer=3)
    for seat in range(4):
        assert view(state, seat).hand == tiles(DEAL_A[seat])


@pytest.mark.parametrize("phase", ["bidding", "trump", "play"])
def test_a_seat_never_sees_another_players_hand(phase):
    a = deal_hands("texas42", DEAL_A, dealer=3)
    b = deal_hands("texas42", DEAL_A_OTHERS_ROTATED, dealer=3)
    if phase != "bidding":
        a, _ = auction(a, {0: Bid.points(30)})
        b, _ = auction(b, {0: Bid.points(30)})
    if phase == "play":
        a = declare(a, SIXES)
        b = declare(b, SIXES)
    assert view(a, 0) == view(b, 0)


def test_a_seat_never_sees_another_players_unplayed_tiles_during_play():
    a = through(
        deal_hands("texas42", DEAL_A, dealer=3), {0: Bid.points(30)}, play="6-6 5-5 4-1 3-0 6-5"
    )
    b = through(
        deal_hands("texas42", DEAL_A_ONE_SWAP, dealer=3),
        {0: Bid.points(30)},
        play="6-6 5-5 4-1 3-0 6-5",
    )
    for seat in (0, 2):
        assert view(a, seat) == view(b, seat)


def test_a_seat_sees_every_tile_once_played():
    state = through(
        deal_hands("texas42", DEAL_A, dealer=3), {0: Bid.points(30)}, play="6-6 5-5 4-1 3-0 6-5 5-0"
    )
    for v in every_view(state):
        assert v.tricks[0].plays == ((0, T("6-6")), (1, T("5-5")), (2, T("4-1")), (3, T("3-0")))
        assert v.tricks[0].winner == 0
        assert v.trick == ((0, T("6-5")), (1, T("5-0")))


def test_a_seat_sees_the_bids_trump_scores_and_whose_turn():
    state = through(
        deal_hands("texas42", DEAL_A, dealer=3), {0: Bid.points(31), 1: Bid.points(32)}, contract=5
    )
    for v in every_view(state):
        assert v.bids == ((0, Bid.points(31)), (1, Bid.points(32)), (2, None), (3, None))
        assert v.high_bid == Bid.points(32) and v.bidder == 1
        assert v.contract == Contract.of_trump(5)
        assert v.scores == (0, 0)
        assert v.turn == 1


def test_only_the_seat_to_act_is_offered_actions():
    state = deal_hands("texas42", DEAL_A, dealer=3)
    assert view(state, 0).legal == tuple(legal_actions(state, 0))
    assert PlaceBid(0, Bid.points(30)) in view(state, 0).legal
    assert all(view(state, seat).legal == () for seat in (1, 2, 3))


def test_no_seat_sees_tiles_out_of_play():
    rules = ruleset("texas42", players=3)
    hands = [
        "6-6 6-5 6-3 6-2 6-1 6-0 5-5 4-4 3-3",
        "5-4 5-3 5-2 5-1 5-0 4-3 4-2 4-1 4-0",
        "3-2 3-1 3-0 2-2 2-1 2-0 1-1 1-0 0-0",
    ]
    a = deal_hands(rules, hands, rest="6-4", dealer=2)
    b = deal_hands(
        rules, [hands[0], hands[1].replace("5-4", "6-4"), hands[2]], rest="5-4", dealer=2
    )
    assert view(a, 0) == view(b, 0)
    assert view(a, 2) == view(b, 2)
    assert view(a, SPECTATOR) == view(b, SPECTATOR)


def test_a_view_is_for_a_seat_at_the_table():
    state = deal_hands("texas42", DEAL_A, dealer=3)
    with pytest.raises(ValueError):
        view(state, 4)


# ---------------------------------------------------------------- Moon: widow and discard


def moon(hands=DEAL_MOON, widow="0-0"):
    return deal_hands("moon", hands, rest=widow, dealer=2)


def test_no_seat_sees_the_widow():
    a = moon()
    b = moon([DEAL_MOON[0], DEAL_MOON[1].replace("4-2", "0-0"), DEAL_MOON[2]], widow="4-2")
    assert view(a, 0) == view(b, 0)
    assert view(a, 2) == view(b, 2)
    a, _ = auction(a, {0: Bid.tricks(5)})
    b, _ = auction(b, {0: Bid.tricks(5)})
    assert view(a, 0) == view(b, 0)  # the bidder, about to take the widow
    assert view(a, 2) == view(b, 2)


def test_no_other_seat_sees_the_bidders_discard():
    state, _ = auction(moon(), {0: Bid.tricks(5)})
    a = exchange(state, "6-1")
    b = exchange(state, "5-5")
    for seat in (1, 2, SPECTATOR):
        assert view(a, seat) == view(b, seat)
        assert view(a, seat).discard is None


def test_the_bidder_sees_the_tile_it_laid_out_and_the_widow_now_in_its_hand():
    state, _ = auction(moon(), {0: Bid.tricks(5)})
    v = view(exchange(state, "6-1"), 0)
    assert v.discard == T("6-1")
    assert v.hand == tiles("6-6 6-5 6-4 6-3 6-2 5-5 0-0")


def test_a_widow_left_lying_is_not_shown_as_a_discard():
    state, _ = auction(
        deal_hands(ruleset("moon", widow="may_exchange"), DEAL_MOON, rest="0-0", dealer=2),
        {0: Bid.tricks(5)},
    )
    state = run(state, *[a for a in legal_actions(state, 0) if type(a).__name__ == "DeclineWidow"])
    assert view(state, 0).discard is None


# ---------------------------------------------------------------- spectator


def test_a_spectator_sees_no_hand_and_has_no_actions():
    v = view(deal_hands("texas42", DEAL_A, dealer=3), SPECTATOR)
    assert v.seat is None
    assert v.hand == 0
    assert v.legal == ()


def test_a_spectator_sees_nothing_hidden():
    a = deal_hands("texas42", DEAL_A, dealer=3)
    b = deal_hands("texas42", [DEAL_A[2], DEAL_A[3], DEAL_A[0], DEAL_A[1]], dealer=3)
    assert view(a, SPECTATOR) == view(b, SPECTATOR)


def test_a_spectator_sees_what_every_player_has_played():
    state = through(
        deal_hands("texas42", DEAL_A, dealer=3), {0: Bid.points(30)}, play="6-6 5-5 4-1 3-0 6-5"
    )
    v = view(state, SPECTATOR)
    assert v.tricks[0].plays == ((0, T("6-6")), (1, T("5-5")), (2, T("4-1")), (3, T("3-0")))
    assert v.trick == ((0, T("6-5")),)


# ---------------------------------------------------------------- nello partner

DEAL_NELLO = [
    "1-0 2-0 2-1 3-0 3-1 4-0 4-1",
    "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
    "5-5 5-4 5-3 5-2 5-1 5-0 4-4",
    "4-3 4-2 3-3 3-2 2-2 1-1 0-0",
]


def test_a_nello_partner_sitting_out_sees_only_its_own_hand():
    def nello(hands):
        state = deal_hands("texas42-house", hands, dealer=3)
        state, _ = auction(state, {0: Bid.marks(1)})
        state = declare(state, Contract.nello())
        state, _ = plays(state, "1-0 6-1")
        return state

    a = nello(DEAL_NELLO)
    v = view(a, 2)
    assert v.sitting_out == (2,)
    assert v.hand == tiles(DEAL_NELLO[2])
    assert v.legal == ()
    # Seat 0's and seat 3's unplayed tiles swapped: seat 2 sees no difference.
    c = nello(
        [
            DEAL_NELLO[0].replace("4-1", "4-2"),
            DEAL_NELLO[1],
            DEAL_NELLO[2],
            DEAL_NELLO[3].replace("4-2", "4-1"),
        ]
    )
    assert view(a, 2) == view(c, 2)


# ---------------------------------------------------------------- hide_tricks_on_mark_bids


def bid_and_play(bid, play="6-6 5-5 4-1 3-0 6-5", **options):
    rules = ruleset("texas42", **options)
    return through(deal_hands(rules, DEAL_A, dealer=3), {0: bid}, play=play)


def test_hide_tricks_on_mark_bids_on_84_tricks_won_are_turned_face_down():
    state = bid_and_play(Bid.marks(2))
    for v in every_view(state):
        assert v.tricks_hidden is True
        assert v.tricks[0].plays is None
        assert v.tricks[0].points is None
        assert v.taken is None


def test_hide_tricks_on_mark_bids_the_trick_in_progress_is_shown():
    state = bid_and_play(Bid.marks(2))
    for v in every_view(state):
        assert v.trick == ((0, T("6-5")),)


def test_hide_tricks_on_mark_bids_not_on_42():
    state = bid_and_play(Bid.marks(1))
    for v in every_view(state):
        assert v.tricks_hidden is False
        assert v.tricks[0].plays is not None
        assert v.taken == (16, 0)


def test_hide_tricks_on_mark_bids_not_on_a_point_bid():
    state = bid_and_play(Bid.points(41))
    assert view(state, 1).tricks[0].plays is not None


def test_hide_tricks_on_mark_bids_off_tricks_stay_face_up_on_84():
    state = bid_and_play(Bid.marks(2), hide_tricks_on_mark_bids=False)
    for v in every_view(state):
        assert v.tricks_hidden is False
        assert v.tricks[0].plays == ((0, T("6-6")), (1, T("5-5")), (2, T("4-1")), (3, T("3-0")))


def test_hide_tricks_on_mark_bids_is_on_by_default():
    assert ruleset("texas42").hide_tricks_on_mark_bids is True


def test_hide_tricks_on_a_plunge():
    hands = [
        "5-5 4-4 3-3 2-2 6-3 6-2 5-4",
        "5-3 5-2 5-1 5-0 4-3 4-2 4-1",
        "6-6 6-5 6-4 6-1 6-0 1-1 0-0",
        "4-0 3-2 3-1 3-0 2-1 2-0 1-0",
    ]
    state = through(
        deal_hands("texas42-house", hands, dealer=3), {0: Bid.plunge(4)}, play="6-6 1-0 6-2 4-1"
    )
    assert view(state, 1).tricks[0].plays is None


def test_a_seat_still_sees_its_own_hand_when_tricks_are_hidden():
    state = bid_and_play(Bid.marks(2))
    assert view(state, 1).hand == tiles("5-4 5-3 5-2 5-1 5-0 4-4")
    assert PlayTile(1, T("5-4")) in view(state, 1).legal
