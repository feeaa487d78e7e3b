"""When a hand is over, what it scores, and who wins the game.

Texas 42 [S2]: the bidding team's points are its tricks plus the count in them; a point bid
is made with points >= bid, a mark bid (and plunge, splash, sevens) only by taking every
trick, nello only by losing every trick. Made: the bidding team scores the bid's marks; set:
every other team does. Moon [S0][S1]: each trick is a point; see ``Ruleset.made_scores`` and
``Ruleset.set_scores``; the moon scores +21 or -21, the overcall (``moon_overcall``) +42 or -42.
"""

from __future__ import annotations

from boneyard.engine.bids import Bid, BidKind
from boneyard.engine.contracts import ContractKind
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.state import HandState
from boneyard.engine.tiles import count_of

__all__ = ["forfeit_winner", "game_winner", "hand_result", "limit_winner", "score_changes"]


def _bid_points(rules: Ruleset, bid: Bid) -> int:
    return bid.amount if bid.kind is BidKind.POINTS else bid.amount * rules.all_tricks_points


_NELLO, _POINTS = ContractKind.NELLO, BidKind.POINTS  # read once a trick: module names are faster


def hand_result(rules: Ruleset, hand: HandState, last_winner: int) -> bool | None:
    """After a trick: ``True`` made, ``False`` set, ``None`` play on.

    Called with the hand's ``taken`` and ``tricks`` already counting the trick just won.
    """
    bidder = hand.bidder
    bid = hand.high_bid
    assert bidder is not None and bid is not None and hand.contract is not None
    over = len(hand.tricks) == rules.hand_size
    if rules.is_moon:
        if not over:
            return None
        team = rules.team_of[bidder]
        return hand.taken[team] >= (rules.hand_size if bid.shoots_the_moon else bid.amount)
    early = rules.end_hand_when_decided
    if hand.contract.kind is _NELLO:
        # RULES.md: "the hand ends, set, as soon as the bidder wins a trick" (whatever the option).
        if last_winner == bidder:
            return False
        return True if over else None
    if not over and not early:
        return None  # without end_hand_when_decided, only the last trick decides
    team = rules.team_of[bidder]
    if bid.kind is _POINTS:
        ours = hand.taken[team]
        theirs = sum(hand.taken) - ours
        if ours >= bid.amount:
            return True
        # Count tiles left out of play (3, 5 or 6 players) can be taken by nobody.
        available = rules.all_tricks_points - count_of(hand.rest)
        if theirs > available - bid.amount:
            return False
        return False if over else None
    # Every trick is needed.
    lost = rules.team_of[last_winner] != team or any(
        rules.team_of[t.winner] != team for t in hand.tricks
    )
    if lost:
        return False
    return True if over else None


def score_changes(rules: Ruleset, hand: HandState, made: bool) -> tuple[int, ...]:
    """What the hand adds to each team's score."""
    bidder, bid = hand.bidder, hand.high_bid
    assert bidder is not None and bid is not None
    team = rules.team_of[bidder]
    taken = hand.taken
    others = [t for t in range(len(rules.teams)) if t != team]
    changes = [0] * len(rules.teams)
    if rules.is_moon:
        for t in others:
            changes[t] = taken[t]
        if bid.shoots_the_moon:
            changes[team] = bid.amount if made else -bid.amount
        elif made:
            changes[team] = bid.amount if rules.made_scores == "bid" else taken[team]
        elif rules.set_scores == "minus_bid":
            changes[team] = -bid.amount
        else:
            for t in others:
                changes[t] += bid.amount
        return tuple(changes)
    if rules.plays_for_marks:
        if made:
            changes[team] = bid.marks_worth
        else:
            for t in others:
                changes[t] = bid.marks_worth
        return tuple(changes)
    value = _bid_points(rules, bid)
    if made:
        changes[team] = max(taken[team], value)
        for t in others:
            changes[t] = taken[t]
    else:
        for t in others:
            changes[t] = value + taken[t]
    return tuple(changes)


def game_winner(
    rules: Ruleset, scores: tuple[int, ...], bidder: int, bid: Bid, made: bool, dealer: int
) -> int | None:
    """The team that has won, or ``None`` to play another hand.

    Several teams over the target on one hand: the bidder's team wins if among them, else the
    highest score; a tie plays another hand [RULES.md 3, applied to 42 too], or in Moon with
    ``tie_to_earliest_seat`` goes to the tied player seated first from the dealer's left. A
    bidding team that was *set* never wins on that hand, even if it stands at the target (with
    three or more teams a tie can leave it there from an earlier hand): being set is losing the
    hand, and the game goes to the best of the others at the target, or plays on. In Moon a
    made moon ends the game with ``moon_wins_game`` and a set one with
    ``missed_moon_loses_game`` (the overcall counts as a moon for both).
    """
    bidder_team = rules.team_of[bidder]
    if bid.shoots_the_moon and made and rules.moon_wins_game:
        return bidder_team
    if bid.shoots_the_moon and not made and rules.missed_moon_loses_game:
        return forfeit_winner(rules, scores, bidder)  # the bidder loses as if it forfeited
    target = rules.points_to_win or rules.marks_to_win
    over = [t for t, s in enumerate(scores) if s >= target and (made or t != bidder_team)]
    if not over:
        return None
    if bidder_team in over:
        return bidder_team
    best = max(scores[t] for t in over)
    leaders = [t for t in over if scores[t] == best]
    if len(leaders) == 1:
        return leaders[0]
    return _first_clockwise(rules, leaders, dealer) if rules.tie_to_earliest_seat else None


def limit_winner(
    rules: Ruleset, scores: tuple[int, ...], bidder: int | None, dealer: int = 0
) -> int:
    """The winner of a game that ends by ``hand_limit`` or ``deal_limit`` with no winner by the
    target: the highest score; among tied teams the bidding team of the last hand, else the
    first tied team clockwise from the last bidder (``bidder=None``: everyone passed the last
    hand; then the first tied team clockwise from its ``dealer``)."""
    best = max(scores)
    leaders = [t for t, s in enumerate(scores) if s == best]
    if bidder is None:
        return _first_clockwise(rules, leaders, dealer)
    team = rules.team_of[bidder]
    if team in leaders:
        return team
    return _first_clockwise(rules, leaders, bidder)


def forfeit_winner(rules: Ruleset, scores: tuple[int, ...], seat: int) -> int:
    """The winner when ``seat`` forfeits (its clock ran out, policy ``forfeit``): its team
    loses. With two teams the other team wins; with more (Moon, 42 for 3, 5, 6 or 7 players)
    the team with the highest score among the others, a tie going to the first tied team
    clockwise from ``seat``. Our choice: RULES.md has no clocks."""
    loser = rules.team_of[seat]
    others = [t for t in range(len(rules.teams)) if t != loser]
    best = max(scores[t] for t in others)
    return _first_clockwise(rules, [t for t in others if scores[t] == best], seat)


def _first_clockwise(rules: Ruleset, teams: list[int], seat: int) -> int:
    """The first of ``teams`` met going clockwise from ``seat`` (``seat`` itself last)."""
    n = rules.players
    for step in range(1, n + 1):
        team = rules.team_of[(seat + step) % n]
        if team in teams:
            return team
    raise AssertionError(f"no seat of teams {teams} at the table")
