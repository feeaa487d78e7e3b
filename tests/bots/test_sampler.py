"""The sampling bot: it never uses what its seat cannot see, deals only what the view allows,
and plays legal actions in every preset.

The no-peeking tests build, for a view of a real game, a second state that gives the seat the
very same view but deals the tiles it cannot see differently (the other hands, the widow, the
tiles out of play); the sampler must choose the same action in both."""

from __future__ import annotations

import dataclasses
import random

import pytest

from boneyard import engine
from boneyard.bots import strategy
from boneyard.bots.sampler import SamplerStrategy, _Bin, _deal, _Knowledge, _sample_hands
from boneyard.engine import Deal, GameState, Phase
from boneyard.engine.contracts import nello_table
from boneyard.engine.tiles import iter_tiles, parse_tile

FAST = {"time_budget": 0.01, "samples": 6}
"""A tiny budget: the tests are about what the sampler may know, not how well it plays."""


def hidden_reshuffle(state: GameState, seat: int, rng: random.Random) -> GameState:
    """The same game for ``seat``'s eyes, with every tile it cannot see dealt again among the
    places it cannot see (the other hands in play, keeping their sizes, and the tiles out of
    play), so that some other seat's hand differs."""
    hand = state.hand
    assert hand is not None
    rules = state.rules
    own_discard = rules.is_moon and seat == hand.bidder and hand.widow_settled
    places = [s for s in range(rules.players) if s != seat]
    tiles = [t for s in places for t in iter_tiles(hand.hands[s])]
    if not own_discard:
        tiles += list(iter_tiles(hand.rest))
    for _ in range(20):
        rng.shuffle(tiles)
        hands = list(hand.hands)
        start = 0
        for s in places:
            n = hand.hands[s].bit_count()
            hands[s] = sum(1 << t for t in tiles[start : start + n])
            start += n
        rest = sum(1 << t for t in tiles[start:]) if not own_discard else hand.rest
        if tuple(hands) != hand.hands:
            break
    new_hand = dataclasses.replace(hand, hands=tuple(hands), rest=rest)
    return dataclasses.replace(state, hand=new_hand)


def decisions(
    preset: str, names: tuple[str, ...], seed: int, hands: int = 1, options: dict | None = None
):
    """Every state of a game (``hands`` hands) where a seat has a choice, with its seat."""
    rng = random.Random(seed)
    rules = engine.ruleset(preset, **(options or {}))
    bots = [strategy(n, rng.randrange(1000)) if n != "sampler" else SamplerStrategy(1, **FAST)
            for n in names]
    state = engine.replay(engine.start(rules))
    dealt = 0
    while state.phase is not Phase.GAME_OVER:
        if state.phase is Phase.DEAL:
            if dealt == hands:
                return
            command: engine.Command = Deal(rng.randbytes(8))
            dealt += 1
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            view = engine.view(state, seat)
            if len(view.legal) > 1:
                yield state, seat
            command = bots[seat].choose(view)
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)


@pytest.mark.parametrize(
    ("preset", "names"),
    [
        ("texas42", ("sampler", "heuristic", "sampler", "heuristic")),
        ("moon", ("sampler", "heuristic", "heuristic")),
        ("moon", ("heuristic", "sampler", "sampler")),
        ("moon-pagat", ("sampler", "sampler", "heuristic")),
        ("moon-no-widow", ("sampler", "heuristic", "sampler")),
        ("moon-overcall", ("sampler", "sampler", "heuristic")),
    ],
)
def test_the_same_view_gets_the_same_action_whatever_the_hidden_tiles(
    preset: str, names: tuple[str, ...]
) -> None:
    rng = random.Random(preset)
    checked = 0
    for state, seat in decisions(preset, names, seed=5):
        if names[seat] != "sampler":
            continue
        other = hidden_reshuffle(state, seat, rng)
        assert other.hand is not None and state.hand is not None
        mine = engine.view(state, seat)
        theirs = engine.view(other, seat)
        assert mine == theirs  # the seat cannot tell the two games apart ...
        if other.hand.hands == state.hand.hands and other.hand.rest == state.hand.rest:
            continue  # nothing hidden left to move
        bot = SamplerStrategy(3, **FAST)
        assert bot.choose(mine) == SamplerStrategy(3, **FAST).choose(theirs)  # ... nor can it
        checked += 1
    assert checked >= 5


def test_the_same_view_always_gets_the_same_action() -> None:
    for state, seat in decisions("texas42", ("sampler",) * 4, seed=8):
        view = engine.view(state, seat)
        assert SamplerStrategy(4, **FAST).choose(view) == SamplerStrategy(4, **FAST).choose(view)
        if state.phase is Phase.PLAY and len(state.hand.tricks) >= 2:  # type: ignore[union-attr]
            break


def test_sampled_deals_agree_with_everything_the_view_shows() -> None:
    """Sizes, tiles seen, and suits a seat showed out of (it did not follow: it holds none)."""
    checked = 0
    for state, seat in decisions("texas42", ("sampler",) * 4, seed=11, hands=4):
        if state.phase is not Phase.PLAY:
            continue
        k = _Knowledge(engine.view(state, seat), seat)
        hand = state.hand
        assert hand is not None
        rng = random.Random(checked)
        for _ in range(30):
            hands = _sample_hands(rng, k)
            assert hands is not None
            assert hands[seat] == hand.hands[seat]
            for s in range(4):
                assert hands[s].bit_count() == hand.hands[s].bit_count()
                assert not hands[s] & k.played
                assert not hands[s] & k.voids[s]  # never a tile of a suit it showed out of
            assert len({t for h in hands for t in iter_tiles(h)}) == sum(h.bit_count() for h in hands)
        # and the true deal is among those allowed: the voids are real
        for s in range(4):
            assert not hand.hands[s] & k.voids[s]
        checked += 1
    assert checked >= 10


def test_dealing_with_voids_fills_every_hand_or_says_it_cannot() -> None:
    rng = random.Random(1)
    pool = (1 << 9) - 1  # tiles 0..8
    bins = [_Bin(1, 3, 0b111), _Bin(2, 3, 0b111000), _Bin(3, 3, 0)]
    for _ in range(50):
        hands = _deal(rng, pool, bins)
        assert hands is not None
        assert hands[0] & 0b111 == 0 and hands[1] & 0b111000 == 0
        assert sum(hands) == pool and all(h.bit_count() == 3 for h in hands)
    impossible = [_Bin(1, 3, 0b1111), _Bin(2, 3, 0b1111), _Bin(3, 3, 0)]
    assert _deal(rng, pool, impossible) is None


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("texas42", {}),
        ("texas42-house", {}),
        ("moon", {}),
        ("moon-s1", {}),
        ("moon-pagat", {}),
        ("moon-no-widow", {}),
        ("moon-overcall", {}),
        ("texas42-house", {"splash_capped": True, "all_pass": "forced_dealer_any_bid"}),
    ],
)
def test_the_sampler_plays_whole_hands_of_every_preset(preset: str, options: dict) -> None:
    """Every action it takes is legal (``engine.decide`` would refuse it otherwise)."""
    players = engine.ruleset(preset, **options).players
    names = tuple("sampler" if s % 2 == 0 else "heuristic" for s in range(players))
    count = sum(1 for _ in decisions(preset, names, seed=2, hands=2, options=options))
    assert count > 0


# ---------------------------------------------------------------- house rules in the auction


def _bidding_view(rules: engine.Ruleset, hand: str, passes: int) -> engine.SeatView:
    """The view of the seat to bid after ``passes`` passes in a real first hand, its hand
    replaced by ``hand`` (the other tiles stay unseen, so the view is one a seat could get)."""
    state = engine.replay(engine.start(rules))
    for event in engine.decide(state, Deal(b"house rules")):
        state = engine.evolve(state, event)
    for _ in range(passes):
        assert state.hand is not None and state.hand.turn is not None
        for event in engine.decide(state, engine.Pass(state.hand.turn)):
            state = engine.evolve(state, event)
    assert state.hand is not None and state.hand.turn is not None
    view = engine.view(state, state.hand.turn)
    mine = engine.tileset([parse_tile(t) for t in hand.split()])
    assert mine & rules.tiles == mine and mine.bit_count() == view.hand.bit_count()
    return dataclasses.replace(view, hand=mine)


STRONG = "6-6 6-5 6-4 6-3 6-2 5-5 4-4"
WEAK = "6-2 5-1 4-1 3-1 2-1 4-3 3-2"
SURE = {"time_budget": 0.02, "samples": 12}


def test_without_a_widow_the_sampler_bids_a_strong_hand() -> None:
    """With no widow to deal it simulates the hand as it is (it used to find no deal at all,
    and pass every hand)."""
    view = _bidding_view(engine.ruleset("moon-no-widow"), STRONG, passes=0)
    action = SamplerStrategy(1, **SURE).choose(view)
    assert isinstance(action, engine.PlaceBid)
    assert action.bid.rank >= 6


@pytest.mark.parametrize(("hand", "passes_for_it"), [(WEAK, True), (STRONG, False)])
def test_a_stuck_sampler_dealer_passes_for_the_lowest_bid_or_bids_higher(
    hand: str, passes_for_it: bool
) -> None:
    rules = engine.ruleset("moon", all_pass="forced_dealer_any_bid")
    view = _bidding_view(rules, hand, passes=2)
    assert engine.Pass(view.seat) in view.legal  # type: ignore[arg-type]
    action = SamplerStrategy(1, **SURE).choose(view)
    if passes_for_it:
        assert action == engine.Pass(view.seat)  # type: ignore[arg-type]
    else:
        assert isinstance(action, engine.PlaceBid) and action.bid.rank > rules.moon_min_bid


def test_the_sampler_overcalls_only_with_every_trick_in_hand() -> None:
    rules = engine.ruleset("moon", moon_overcall=True)
    state = engine.replay(engine.start(rules))
    for event in engine.decide(state, Deal(b"house rules")):
        state = engine.evolve(state, event)
    assert state.hand is not None and state.hand.turn is not None
    for event in engine.decide(state, engine.PlaceBid(state.hand.turn, engine.Bid.moon())):
        state = engine.evolve(state, event)
    assert state.hand is not None and state.hand.turn is not None
    view = engine.view(state, state.hand.turn)
    overcall = engine.PlaceBid(view.seat, engine.Bid.overcall())  # type: ignore[arg-type]
    assert overcall in view.legal
    chosen = {}
    for hand in (WEAK, "6-6 6-5 6-4 6-3 6-2 6-1 5-5"):
        mine = engine.tileset([parse_tile(t) for t in hand.split()])
        chosen[hand] = SamplerStrategy(1, **SURE).choose(dataclasses.replace(view, hand=mine))
    assert chosen[WEAK] == engine.Pass(view.seat)  # type: ignore[arg-type]
    assert chosen["6-6 6-5 6-4 6-3 6-2 6-1 5-5"] == overcall


def test_with_next_to_no_budget_it_still_plays_legal_actions() -> None:
    """No deal can be solved in a budget of a few nodes: it falls back on a rule of thumb."""
    rng = random.Random(9)
    rules = engine.ruleset("texas42")
    bots = [SamplerStrategy(s, time_budget=1e-9, auction_budget=1e-9) for s in range(4)]
    state = engine.replay(engine.start(rules))
    while state.phase is not Phase.GAME_OVER and state.deals <= 2:
        if state.phase is Phase.DEAL:
            command: engine.Command = Deal(rng.randbytes(8))
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            command = bots[seat].choose(engine.view(state, seat))
        for event in engine.decide(state, command):  # refuses an illegal action
            state = engine.evolve(state, event)


# ---------------------------------------------------------------- what the ruleset says


def _must_follow(view: engine.SeatView) -> engine.SeatView:
    """The same view under rules where a player must follow when able (the old guess)."""
    rules = dataclasses.replace(view.rules, may_trump_when_able_to_follow=False)
    return dataclasses.replace(view, rules=rules)


def test_a_seat_that_may_trump_instead_of_following_is_not_taken_for_void() -> None:
    """Moon [S1] lets a player trump a plain lead it could follow: playing a trump there shows
    nothing, and the sampler, reading the ruleset, deals that seat the led suit still. Read as
    a must-follow table, the same plays would rule out the very hands the seats hold."""
    contradicted = 0
    for state, seat in decisions("moon-s1", ("random",) * 3, seed=3, hands=6):
        if state.phase is not Phase.PLAY:
            continue
        hand = state.hand
        assert hand is not None
        view = engine.view(state, seat)
        k = _Knowledge(view, seat)
        assert k.may_trump
        for s in range(3):
            assert not hand.hands[s] & k.voids[s]  # the true deal is always allowed
        guessed = _Knowledge(_must_follow(view), seat)
        contradicted += any(hand.hands[s] & guessed.voids[s] for s in range(3))
        rng = random.Random(seat)
        dealt = _sample_hands(rng, k)
        assert dealt is not None and dealt[seat] == hand.hands[seat]
    assert contradicted, "no seat trumped a suit it could follow: the test shows nothing"


def _nello_play(nello_doubles: str) -> tuple[GameState, int]:
    """A Texas 42 hand in play under nello (the first bidder bids a mark and declares it),
    at the first decision of a defender with a choice."""
    rules = engine.ruleset("texas42-house", nello_doubles=nello_doubles)
    state = engine.replay(engine.start(rules))
    rng = random.Random(nello_doubles)
    while True:
        if state.phase is Phase.DEAL:
            command: engine.Command = Deal(rng.randbytes(8))
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            legal = engine.legal_actions(state, seat)
            if state.phase is Phase.PLAY and seat != state.hand.bidder and len(legal) > 1:
                return state, seat
            nello = [a for a in legal if a == engine.DeclareContract(seat, engine.Contract.nello())]
            one_mark = [a for a in legal if a == engine.PlaceBid(seat, engine.Bid.marks(1))]
            passes = [a for a in legal if isinstance(a, engine.Pass)]
            command = (nello or one_mark or passes or legal)[0]
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)


@pytest.mark.parametrize("nello_doubles", ["high", "low", "own_suit"])
def test_nello_is_solved_with_the_doubles_the_ruleset_names(nello_doubles: str) -> None:
    state, seat = _nello_play(nello_doubles)
    view = engine.view(state, seat)
    k = _Knowledge(view, seat)
    assert k.table == nello_table(nello_doubles)
    assert SamplerStrategy(2, **FAST).choose(view) in view.legal
