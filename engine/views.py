"""What one seat, or a spectator, may know (RULES.md section 4).

A seat sees its own tiles, every tile once played (except tricks turned face down on a bid
of 2 marks or more), the bids, the contract, scores and whose turn it is; never another
seat's hand, the widow, the bidder's discard or tiles out of play. The Moon bidder sees the
tile it laid out. A spectator sees what every player has played and nothing hidden. The
server sends only views: never the state itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from boneyard.engine.bids import Bid
from boneyard.engine.commands import SeatCommand
from boneyard.engine.contracts import Contract
from boneyard.engine.decider import legal_actions
from boneyard.engine.events import HandScored
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.state import GameState, Phase, Play
from boneyard.engine.tiles import Tile, TileSet, iter_tiles

__all__ = ["SPECTATOR", "SeatView", "TrickView", "view"]

SPECTATOR = None


@dataclass(frozen=True, slots=True)
class TrickView:
    plays: tuple[Play, ...] | None
    """``None`` when the trick lies face down (a bid of 2 marks or more)."""
    winner: int
    points: int | None


@dataclass(frozen=True, slots=True)
class SeatView:
    rules: Ruleset
    """The game's complete ruleset: every option, so that a bot or a front end never has to
    guess one (Moon or 42, how doubles play in nello, whether a seat may trump instead of
    following ...). Public: every seat and spectator sees the same."""
    seat: int | None
    """``None`` for a spectator."""
    phase: Phase
    players: int
    teams: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    """Per team: marks, or points."""
    hand_number: int
    dealer: int | None
    turn: int | None
    hand: TileSet
    """This seat's tiles (empty for a spectator)."""
    hand_sizes: tuple[int, ...]
    bids: tuple[tuple[int, Bid | None], ...]
    high_bid: Bid | None
    bidder: int | None
    declarer: int | None
    contract: Contract | None
    sitting_out: tuple[int, ...]
    trick: tuple[Play, ...]
    tricks: tuple[TrickView, ...]
    tricks_hidden: bool
    taken: tuple[int, ...] | None
    """Per team: points (Moon: tricks) taken this hand; ``None`` while tricks lie face down."""
    tricks_won: tuple[int, ...]
    """Per team: tricks won this hand."""
    discard: Tile | None
    """The Moon bidder's own view of the tile it laid out."""
    legal: tuple[SeatCommand, ...]
    results: tuple[HandScored, ...]
    winner: int | None

    def hand_tiles(self) -> list[Tile]:
        return list(iter_tiles(self.hand))


def view(state: GameState, seat: int | None) -> SeatView:
    """What ``seat`` may know now; ``seat=None`` is a spectator."""
    rules = state.rules
    if seat is not None and not 0 <= seat < rules.players:
        raise ValueError(f"no seat {seat} at a table of {rules.players}")
    hand = state.hand
    teams = rules.teams
    if hand is None:
        return SeatView(
            rules, seat, state.phase, rules.players, teams, state.scores, state.deals,
            state.next_dealer, None, 0, (0,) * rules.players, (), None, None, None, None, (), (),
            (), False, None, (0,) * len(teams), None, (), state.results, state.winner,
        )
    bid = hand.high_bid
    hidden = (
        not rules.is_moon
        and rules.hide_tricks_on_mark_bids
        and bid is not None
        and bid.is_mark_bid
        and bid.amount >= 2
        and hand.contract is not None
    )
    tricks = tuple(
        TrickView(None if hidden else t.plays, t.winner, None if hidden else t.points)
        for t in hand.tricks
    )
    won = [0] * len(teams)
    for t in hand.tricks:
        won[rules.team_of[t.winner]] += 1
    discard = None
    if seat is not None and seat == hand.bidder and rules.is_moon and hand.widow_settled:
        discard = next(iter_tiles(hand.rest), None) if hand.rest else None
        if discard is not None and hand.dealt[seat] >> discard & 1 == 0:
            discard = None  # the widow was left lying: nothing was laid out
    in_hand = state.phase in (Phase.BIDDING, Phase.WIDOW, Phase.TRUMP, Phase.PLAY)
    return SeatView(
        rules=rules,
        seat=seat,
        phase=state.phase,
        players=rules.players,
        teams=teams,
        scores=state.scores,
        hand_number=hand.number,
        dealer=hand.dealer,
        turn=hand.turn if in_hand else None,
        hand=hand.hands[seat] if seat is not None else 0,
        hand_sizes=tuple(h.bit_count() for h in hand.hands),
        bids=hand.bids,
        high_bid=bid,
        bidder=hand.bidder,
        declarer=hand.declarer,
        contract=hand.contract,
        sitting_out=hand.sitting_out,
        trick=hand.trick,
        tricks=tricks,
        tricks_hidden=hidden,
        taken=None if hidden else hand.taken,
        tricks_won=tuple(won),
        discard=discard,
        legal=tuple(legal_actions(state, seat)) if seat is not None else (),
        results=state.results,
        winner=state.winner,
    )
