"""The expert bot: what the auction tells it (beliefs), sevens played out, how it bids, how it
settles close plays, and that it plays legal actions that depend on the view alone."""

from __future__ import annotations

import random

import pytest

from boneyard import engine
from boneyard.bots import MOVE_MS_MAX, expert, strategy
from boneyard.bots.beliefs import FLOOR, Beliefs, Claim, claims
from boneyard.bots.expert import (
    ExpertStrategy,
    _opponents_to_bid,
    _Reading,
    _still_close,
)
from boneyard.bots.heuristic import hand_value
from boneyard.bots.sevens import sevens_tricks
from boneyard.engine import (
    Bid,
    Contract,
    DeclareContract,
    HandDealt,
    Pass,
    Phase,
    PlaceBid,
    PlayTile,
    decide,
    evolve,
    legal_actions,
)
from boneyard.engine.tiles import parse_tile, parse_tiles
from tests.bots.test_sampler import hidden_reshuffle

QUICK = {"move_ms": 20, "samples": 8, "most_samples": 16}
"""A small budget: enough deals for the chances these tests look at to be clear."""

STRONG = "6-6 6-5 6-4 6-3 6-2 6-1 6-0"
WEAK = "2-0 3-0 1-0 2-1 3-1 0-0 4-0"


def dealt(hands: list[str], preset: str = "texas42", dealer: int = 3, **options):
    rules = engine.ruleset(preset, **options)
    state = engine.replay(engine.start(rules))
    event = HandDealt(1, dealer, b"chosen", tuple(parse_tiles(h) for h in hands), 0)
    return evolve(state, event)


def after(state, *bids):
    for bid in bids:
        seat = state.hand.turn
        command = Pass(seat) if bid is None else PlaceBid(seat, bid)
        for event in decide(state, command):
            state = evolve(state, event)
    return state


FOUR = [
    "6-6 6-5 6-4 5-5 4-4 3-3 2-2",
    "6-3 6-2 5-4 5-3 5-2 4-3 4-2",
    "6-1 6-0 5-1 5-0 4-1 4-0 3-2",
    "3-1 3-0 2-1 2-0 1-1 1-0 0-0",
]


# ---------------------------------------------------------------- beliefs


def test_a_pass_claims_the_hand_does_not_make_the_cheapest_bid():
    state = after(dealt(FOUR), None)
    assert claims(engine.view(state, 1)) == (Claim(0, False, 30),)


def test_a_point_bid_claims_the_hand_makes_it():
    state = after(dealt(FOUR), Bid.points(34))
    assert claims(engine.view(state, 1)) == (Claim(0, True, 34),)


def test_a_pass_after_the_partners_bid_claims_nothing():
    state = after(dealt(FOUR), Bid.points(31), None, None)
    assert claims(engine.view(state, 3)) == (Claim(0, True, 31), Claim(1, False, 32))


def test_a_seat_own_actions_and_mark_bids_claim_nothing():
    state = after(dealt(FOUR), Bid.marks(1), None)
    assert claims(engine.view(state, 0)) == ()
    assert claims(engine.view(state, 2)) == ()  # a pass over a mark bid says little


def test_a_forced_bid_claims_nothing():
    state = after(dealt(FOUR), None, None, None, Bid.points(30))
    assert claims(engine.view(state, 0)) == (Claim(1, False, 30), Claim(2, False, 30))


def test_moon_bids_and_passes_claim_tricks():
    hands = ["6-6 6-5 6-4 6-3 6-2 6-1 5-5", "5-4 5-3 5-2 5-1 4-4 4-3 4-2", "4-1 3-3 3-2 3-1 2-2 2-1 1-1"]
    state = after(dealt(hands, "moon", dealer=2), Bid.tricks(5), None)
    assert claims(engine.view(state, 2)) == (Claim(0, True, 5), Claim(1, False, 6))


def test_a_deal_that_fits_the_auction_weighs_more_than_one_that_does_not():
    state = after(dealt(FOUR), Bid.points(35))
    beliefs = Beliefs(engine.view(state, 1))
    strong = [parse_tiles(FOUR[0]), 0, 0, 0]
    weak = [parse_tiles(WEAK), 0, 0, 0]
    assert beliefs.weight(strong) > 0.5 > beliefs.weight(weak) >= FLOOR


def test_the_auction_is_not_weighed_while_tricks_lie_face_down():
    state = after(dealt(FOUR), Bid.marks(2), None, None, None)
    for event in decide(state, DeclareContract(0, Contract.of_trump(6))):
        state = evolve(state, event)
    for event in decide(state, PlayTile(0, parse_tiles("6-6").bit_length() - 1)):
        state = evolve(state, event)
    assert Beliefs(engine.view(state, 1)).claims == ()


def test_sampled_deals_lean_towards_what_a_pass_says():
    # Seat 0 passed: the expert's deals should give it weaker hands than plain deals do.
    state = after(dealt(FOUR), None)
    view = engine.view(state, 1)
    expert = ExpertStrategy(1, **QUICK)
    reading = _Reading(view, 1)
    rng = random.Random(3)
    sampler_deal = super(ExpertStrategy, expert)._deal_hands
    plain = [hand_value(sampler_deal(rng, reading)[0], view.rules) for _ in range(300)]
    leaning = [hand_value(expert._deal_hands(rng, reading)[0], view.rules) for _ in range(300)]
    assert sum(leaning) / 300 < sum(plain) / 300 - 1.0


@pytest.mark.parametrize("families", [frozenset({"texas42"}), frozenset({"moon"})])
def test_the_auction_weighs_the_deals_only_in_the_families_beliefs_are_kept_for(
    monkeypatch, families
):
    monkeypatch.setattr(expert, "BELIEFS_IN", families)
    view = engine.view(after(dealt(FOUR), None), 1)
    reading = ExpertStrategy(1, **QUICK)._read(view, 1)
    assert isinstance(reading, _Reading) == ("texas42" in families)


# ---------------------------------------------------------------- sevens


def _engine_sevens(hands, leader, team):
    """Sevens played through the engine, each seat laying a random one of its legal tiles."""
    rng = random.Random(sum(hands))
    rules = engine.ruleset("texas42-house", end_hand_when_decided=False)
    state = engine.replay(engine.start(rules))
    state = evolve(state, HandDealt(1, (leader - 1) % 4, b"s", tuple(hands), 0))
    state = after(state, *([Bid.marks(1)] if state.hand.turn == leader else []))
    while state.phase is Phase.BIDDING:
        state = after(state, None if state.hand.turn != leader else Bid.marks(1))
    for event in decide(state, DeclareContract(leader, Contract.sevens())):
        state = evolve(state, event)
    while state.phase is Phase.PLAY:
        seat = state.hand.turn
        for event in decide(state, rng.choice(legal_actions(state, seat))):
            state = evolve(state, event)
    return sum(1 for t in state.hand.tricks if t.winner in team)


@pytest.mark.parametrize("deal", range(30))
def test_sevens_played_out_agrees_with_the_engine_whatever_tile_of_a_tie_is_laid(deal):
    rng = random.Random(deal)
    tiles = list(range(28))
    rng.shuffle(tiles)
    hands = [sum(1 << t for t in tiles[7 * s : 7 * s + 7]) for s in range(4)]
    leader = deal % 4
    team = (leader, (leader + 2) % 4)
    assert sevens_tricks(hands, leader, team) == _engine_sevens(hands, leader, team)


# ---------------------------------------------------------------- the auction


def test_with_opponents_to_bid_after_it_a_sure_hand_bids_marks():
    hands = [STRONG, "5-5 5-4 5-3 5-2 5-1 5-0 4-4", "4-3 4-2 4-1 4-0 3-3 3-2 3-1", "3-0 2-2 2-1 2-0 1-1 1-0 0-0"]
    view = engine.view(dealt(hands), 0)
    assert _opponents_to_bid(_Reading(view, 0))
    chosen = ExpertStrategy(2, **QUICK).choose(view)
    assert isinstance(chosen, PlaceBid) and chosen.bid.is_mark_bid


def _priced(monkeypatch, makes_up_to, chance=1.0):
    """An expert whose chances are given: every point bid up to ``makes_up_to`` is made with
    ``chance`` (sure by default), none above, and no trick-taking contract."""
    bot = ExpertStrategy(2, **QUICK)
    monkeypatch.setattr(
        bot,
        "_chances",
        lambda k, bids, rng: (lambda b: chance if b <= makes_up_to else 0.0, 0.0, 0.0),
    )
    return bot


def test_the_dealer_with_nobody_left_to_bid_bids_the_cheapest_it_makes(monkeypatch):
    hands = ["5-5 5-4 5-3 5-2 5-1 5-0 4-4", "4-3 4-2 4-1 4-0 3-3 3-2 3-1", "3-0 2-2 2-1 2-0 1-1 1-0 0-0", WEAK]
    state = after(dealt(hands), None, None, Bid.points(31))  # seat 2, an opponent, bid 31
    view = engine.view(state, 3)
    assert not _opponents_to_bid(_Reading(view, 3))
    assert _priced(monkeypatch, 35).choose(view) == PlaceBid(3, Bid.points(32))


def test_with_opponents_to_bid_after_it_it_bids_the_highest_it_makes_surely(monkeypatch):
    view = engine.view(dealt(FOUR, dealer=2), 3)  # seat 3 bids first, a hand of no marks
    assert _opponents_to_bid(_Reading(view, 3))
    assert _priced(monkeypatch, 35).choose(view) == PlaceBid(3, Bid.points(35))


@pytest.mark.parametrize(("opponent_bid", "chosen"), [(30, Bid.points(31)), (31, None)])
def test_over_an_opponents_31_it_wants_a_surer_hand_than_over_30(
    monkeypatch, opponent_bid, chosen
):
    hands = ["5-5 5-4 5-3 5-2 5-1 5-0 4-4", "4-3 4-2 4-1 4-0 3-3 3-2 3-1", "3-0 2-2 2-1 2-0 1-1 1-0 0-0", WEAK]
    state = after(dealt(hands), None, None, Bid.points(opponent_bid))  # seat 2, an opponent
    view = engine.view(state, 3)
    assert expert.MAKE <= 0.8 < expert.CONTESTED
    expected = Pass(3) if chosen is None else PlaceBid(3, chosen)
    assert _priced(monkeypatch, 35, chance=0.8).choose(view) == expected


def test_over_an_opponents_bid_it_bids_the_cheapest_it_makes_even_with_opponents_to_come(
    monkeypatch,
):
    state = after(dealt(FOUR), Bid.points(30))  # seat 0 bid 30; seat 2 bids after seat 1
    view = engine.view(state, 1)
    assert _opponents_to_bid(_Reading(view, 1))
    assert _priced(monkeypatch, 35).choose(view) == PlaceBid(1, Bid.points(31))


def test_it_does_not_bid_over_its_partner():
    hands = ["5-5 5-4 5-3 5-2 5-1 5-0 4-4", "4-3 4-2 4-1 4-0 3-3 3-2 3-1", STRONG, "3-0 2-2 2-1 2-0 1-1 1-0 0-0"]
    state = after(dealt(hands), Bid.points(30), None)
    assert ExpertStrategy(2, **QUICK).choose(engine.view(state, 2)) == Pass(2)


def test_a_weak_hand_passes():
    view = engine.view(dealt(FOUR, dealer=2), 3)  # seat 3: 3-1 3-0 2-1 2-0 1-1 1-0 0-0
    assert view.turn == 3 and ExpertStrategy(2, **QUICK).choose(view) == Pass(3)


@pytest.mark.parametrize(
    ("strategy_name", "chosen"), [("sampler", Bid.moon()), ("expert", Bid.tricks(6))]
)
def test_a_moon_is_priced_on_the_deals_that_take_all_seven_not_six(
    monkeypatch, strategy_name, chosen
):
    # Half the deals take seven tricks, half six: the sampler counts a six as half a moon
    # (a moon at 75%, worth 10.5 points), the expert a quarter (62.5%, worth 5.25), and
    # bids the six it always takes (worth 6).
    hands = ["6-6 6-5 6-4 6-3 6-2 6-1 5-5", "5-4 5-3 5-2 5-1 4-4 4-3 4-2", "4-1 3-3 3-2 3-1 2-2 2-1 1-1"]
    view = engine.view(dealt(hands, "moon", dealer=2), 0)
    bot = strategy(strategy_name, 2)
    monkeypatch.setattr(bot, "_moon_hand_tricks", lambda k, rng: [6, 7] * 12)
    assert bot.choose(view) == PlaceBid(0, chosen)


@pytest.mark.parametrize(
    ("p_sevens", "p_trump", "declared"),
    [(0.85, 0.3, Contract.sevens()), (0.3, 0.85, Contract.of_trump(6)), (0.6, 0.6, Contract.sevens())],
)
def test_a_mark_bid_is_declared_sevens_when_sevens_takes_every_trick_as_often_or_more(
    monkeypatch, p_sevens, p_trump, declared
):
    # Seat 3 opened a mark and everyone passed: its chance of sevens, played out on fresh
    # deals, may fall short of the one it bid on, and is still the better declaration.
    state = after(dealt(FOUR, "texas42-house", dealer=2), Bid.marks(1), None, None, None)
    view = engine.view(state, 3)
    assert view.phase is Phase.TRUMP
    bot = ExpertStrategy(2, **QUICK)
    monkeypatch.setattr(bot, "_p_sevens", lambda k, rng: p_sevens)
    monkeypatch.setattr(bot, "_p_every_trick", lambda k, contract, rng: p_trump)
    monkeypatch.setattr(
        expert.SamplerStrategy, "_declare",
        lambda self, k, legal, rng: DeclareContract(3, Contract.of_trump(6)),
    )
    assert bot.choose(view) == DeclareContract(3, declared)


def test_the_chance_of_every_trick_is_solved_for_the_declaration_named():
    # Seat 0 holds the six highest sixes and the 5-5: sixes take every trick, blanks seldom.
    hands = [STRONG.replace("6-0", "5-5"), "5-4 5-3 5-2 5-1 5-0 4-4 4-3", "4-2 4-1 4-0 3-3 3-2 3-1 3-0", "6-0 2-2 2-1 2-0 1-1 1-0 0-0"]
    state = after(dealt(hands, "texas42-house"), Bid.marks(1), None, None, None)
    view = engine.view(state, 0)
    bot = ExpertStrategy(2, **QUICK)
    k = bot._read(view, 0)
    rng = random.Random(0)
    assert bot._p_every_trick(k, Contract.of_trump(6), rng) == 1.0
    assert bot._p_every_trick(k, Contract.of_trump(0), rng) < 0.1
    assert bot._p_every_trick(k, Contract.nello(), rng) == 0.0


# ---------------------------------------------------------------- play and budget


def test_plays_too_close_to_tell_are_kept_and_clearly_worse_ones_dropped():
    values = {1: [1.0, 1.0, 0.0, 1.0] * 4, 2: [1.0, 0.0, 1.0, 1.0] * 4, 3: [0.0] * 16}
    assert _still_close([1, 2, 3], values) == [1, 2]


def test_one_play_clearly_best_is_all_that_is_kept():
    values = {1: [1.0] * 16, 2: [0.0] * 16}
    assert _still_close([1, 2], values) == [1]


def test_a_moon_defender_takes_a_trick_for_itself_when_the_bid_is_set_whatever_it_plays(
    monkeypatch,
):
    # Seat 0 bid 7 with fives trump; seat 2 holds 5-5, so the bid is set whatever it plays. On
    # 2-1 led and 4-2 from seat 1, its 6-2 takes the trick for itself and 3-2 leaves it to
    # seat 1: both keep the trick from the bidder, but only the first scores for seat 2.
    hands = [
        "6-6 6-5 6-4 6-3 5-4 5-3 2-1",
        "6-1 5-2 4-4 4-3 4-2 3-3 2-2",
        "6-2 5-5 5-1 4-1 3-2 3-1 1-1",
    ]
    state = after(dealt(hands, "moon-no-widow", dealer=2), Bid.tricks(7), None, None)
    for command in (
        DeclareContract(0, Contract.of_trump(5)),
        PlayTile(0, parse_tile("2-1")),
        PlayTile(1, parse_tile("4-2")),
    ):
        for event in decide(state, command):
            state = evolve(state, event)
    view = engine.view(state, 2)
    assert ExpertStrategy(1, **QUICK).choose(view) == PlayTile(2, parse_tile("6-2"))
    # Counting only the bidder's tricks, as the sampler does, the two plays are worth the same.
    monkeypatch.setattr(expert, "OWN_TRICK", 0.0)
    assert ExpertStrategy(1, **QUICK).choose(view) == PlayTile(2, parse_tile("3-2"))


@pytest.mark.parametrize("move_ms", [0, -5, MOVE_MS_MAX + 1])
def test_a_budget_out_of_bounds_is_refused(move_ms):
    with pytest.raises(ValueError, match="move_ms"):
        strategy("expert", 1, move_ms=move_ms)


def test_the_same_view_gets_the_same_action_whatever_the_hidden_tiles():
    rng = random.Random(4)
    rules = engine.ruleset("texas42-house")
    bots = [ExpertStrategy(s, **QUICK) for s in range(4)]
    state = engine.replay(engine.start(rules))
    checked = 0
    while state.phase is not Phase.GAME_OVER and checked < 12:
        if state.phase is Phase.DEAL:
            if state.deals >= 2:
                break
            command: engine.Command = engine.Deal(rng.randbytes(8))
        else:
            seat = state.hand.turn
            view = engine.view(state, seat)
            command = bots[seat].choose(view)
            if len(view.legal) > 1:
                other = engine.view(hidden_reshuffle(state, seat, rng), seat)
                assert other == view
                assert ExpertStrategy(seat, **QUICK).choose(other) == command
                checked += 1
        for event in decide(state, command):
            state = evolve(state, event)
    assert checked >= 6


def test_going_round_only_a_seats_last_bid_is_a_claim():
    hands = ["6-6 6-5 6-4 6-3 6-2 6-1 5-5", "5-4 5-3 5-2 5-1 4-4 4-3 4-2", "4-1 3-3 3-2 3-1 2-2 2-1 1-1"]
    state = dealt(hands, "moon", dealer=2, auction_goes_round=True)
    state = after(state, Bid.tricks(4), Bid.tricks(5), None, Bid.tricks(6))
    assert claims(engine.view(state, 1)) == (Claim(2, False, 6), Claim(0, True, 6))


def test_an_overcall_claims_every_trick():
    hands = ["6-6 6-5 6-4 6-3 6-2 6-1 5-5", "5-4 5-3 5-2 5-1 4-4 4-3 4-2", "4-1 3-3 3-2 3-1 2-2 2-1 1-1"]
    state = after(dealt(hands, "moon", dealer=2, moon_overcall=True), Bid.moon(), Bid.overcall())
    assert claims(engine.view(state, 2)) == (Claim(0, True, 7), Claim(1, True, 7))


def test_plays_worth_the_same_on_every_deal_are_not_solved_again():
    values = {1: [1.0, 0.0] * 8, 2: [1.0, 0.0] * 8}
    assert _still_close([1, 2], values) == [1]


def test_a_dealer_holding_every_trick_bids_the_most_marks_it_may():
    hands = ["5-5 5-4 5-3 5-2 5-1 5-0 4-4", "4-3 4-2 4-1 4-0 3-3 3-2 3-1", "3-0 2-2 2-1 2-0 1-1 1-0 0-0", STRONG]
    state = after(dealt(hands), None, None, Bid.points(31))
    assert ExpertStrategy(2, **QUICK).choose(engine.view(state, 3)) == PlaceBid(3, Bid.marks(2))


def _three_players_count_out():
    """Three players hold nine tiles each; the 28th, the 5-0 (5 count), lies out of play.
    Seat 0 takes every trick whatever the others hold: 44 points less what lies out."""
    hands = [
        STRONG + " 5-5 4-4",
        "5-4 5-3 5-2 5-1 4-3 4-2 4-1 4-0 3-3",
        "3-2 3-1 3-0 2-2 2-1 2-0 1-1 1-0 0-0",
    ]
    state = engine.replay(engine.start(engine.ruleset("texas42", players=3)))
    rest = 1 << parse_tile("5-0")
    return evolve(state, HandDealt(1, 2, b"chosen", tuple(parse_tiles(h) for h in hands), rest))


def test_each_deal_solved_says_what_every_trick_is_worth_on_it():
    state = _three_players_count_out()
    bot = ExpertStrategy(2, move_ms=100)  # nine tricks a hand: a bigger search than QUICK's
    k = bot._read(engine.view(state, 0), 0)
    every_trick: list[int] = []
    results = bot._simulate(k, random.Random(0), [6], moon=False, every_trick=every_trick)
    assert every_trick and len(every_trick) == len(results[6, -1])
    # Seat 0 holds 15 of the 35 count; the tile out of play is one of the 19 it cannot see.
    assert all(e in (44, 39) for e in every_trick)
    assert results[6, -1] == every_trick


def test_a_deal_taking_every_trick_counts_whatever_count_lies_out_of_play(monkeypatch):
    state = _three_players_count_out()
    bot = ExpertStrategy(2, **QUICK)
    k = bot._read(engine.view(state, 0), 0)

    def simulate(k, rng, trumps, moon, nello=False, floor=-1, every_trick=None, **_):
        every_trick.extend([44, 39, 39, 44])  # on two deals a 5-count tile lay out
        return {(t, -1): [44, 39, 38, 40] for t in trumps}

    monkeypatch.setattr(bot, "_simulate", simulate)
    bids = [a for a in legal_actions(state, 0) if isinstance(a, PlaceBid)]
    chances = bot._chances(k, bids, random.Random(0))
    assert chances is not None and chances[1] == 0.5
    assert bot._p_every_trick(k, Contract.of_trump(6), random.Random(0)) == 0.5


@pytest.mark.parametrize(("solved", "confirmed", "p_all"), [(1.0, 0.35, 0.35), (0.95, 0.97, 0.97), (0.8, None, 0.8)])
def test_a_chance_of_every_trick_worth_a_mark_is_solved_again_on_fresh_deals(
    monkeypatch, solved, confirmed, p_all
):
    # The auction solves every declaration on the same few deals; the best of them, when it
    # looks worth a mark (90%), is solved again alone, and that chance is the one bid on.
    state = after(dealt(FOUR, "texas42-house"), None)  # seat 1 to bid, marks legal
    bot = ExpertStrategy(2, **QUICK)
    k = bot._read(engine.view(state, 1), 1)
    asked = []

    def simulate(k, rng, trumps, moon, nello=False, floor=-1, every_trick=None, **_):
        every_trick.extend([42] * 20)
        return {(t, -1): [42 if i < solved * 20 else 30 for i in range(20)] for t in trumps[:1]}

    def again(k, contract, rng):
        asked.append(contract)
        return confirmed

    monkeypatch.setattr(bot, "_simulate", simulate)
    monkeypatch.setattr(bot, "_p_every_trick", again)
    monkeypatch.setattr(bot, "_p_sevens", lambda k, rng: 0.0)
    bids = [a for a in legal_actions(state, 1) if isinstance(a, PlaceBid)]
    chances = bot._chances(k, bids, random.Random(0))
    assert chances is not None and chances[1] == p_all
    assert len(asked) == (confirmed is not None)
