"""What one seat, or a spectator, may know (RULES.md section 4).

A seat sees its own tiles, every tile once played (except tricks turned face down on a bid
of 2 marks or more), the bids, the contract, scores and whose turn it is; never another
seat's hand, the widow, the bidder's discard or tiles out of play. The Moon bidder sees the
tile it laid out. A spectator sees what every player has played and nothing hidden. The
server sends only views: never the state itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from boneyard.engine.bids import Bid
from boneyard.engine.commands import SeatCommand
from boneyard.engine.contracts import Contract
from boneyard.engine.decider import legal_actions
from boneyard.engine.events import (
    AllPassed,
    AuctionWon,
    BidPlaced,
    ClockExpired,
    ContractDeclared,
    Event,
    GameAbandoned,
    GameCreated,
    GameWon,
    HandDealt,
    HandScored,
    Passed,
    Resigned,
    TilePlayed,
    TrickWon,
    WidowDeclined,
    WidowExchanged,
)
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.state import GameState, Phase, Play
from boneyard.engine.tiles import Tile, TileSet, iter_tiles

__all__ = [
    "SPECTATOR",
    "SeatView",
    "SeenEvent",
    "TrickView",
    "face_down_through",
    "view",
    "view_event",
]

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
    trick_face_down: bool = field(default=False, repr=False)
    """The trick in progress is shown face down (``trick`` holds its seats, its tiles are not
    to be shown): a stream re-sending an earlier version of a hand whose tricks lie face down
    (``view(..., behind=True)``). Not in the text of the view (``repr``), which bots draw their
    deals from: a view they are given never has it."""

    def hand_tiles(self) -> list[Tile]:
        return list(iter_tiles(self.hand))


@dataclass(frozen=True, slots=True)
class SeenEvent:
    """What one seat, or a spectator, may see of an event when it happens: the event, and which
    of its hidden parts may be shown. The API encodes exactly this (the codec decides nothing)."""

    event: Event
    own_hand: TileSet | None = None
    """``HandDealt``: the receiver's own hand; ``None`` for a spectator, who sees none. The
    other hands, the rest and the seed are never shown."""
    exchange_shown: bool = False
    """``WidowExchanged``: the tiles taken and laid out are shown (to the exchanging seat only;
    the others see that the widow was exchanged)."""
    face_down: bool = False
    """``TilePlayed``, ``TrickWon``: shown face down, without the tile or the trick's points."""


_PUBLIC: tuple[type[object], ...] = (
    GameCreated,
    BidPlaced,
    Passed,
    AuctionWon,
    AllPassed,
    WidowDeclined,
    ContractDeclared,
    TilePlayed,
    TrickWon,
    HandScored,
    GameWon,
    ClockExpired,
    Resigned,
    GameAbandoned,
)
"""The events every seat and spectator sees whole when they happen. A new kind of event is
refused by ``view_event`` until it is sorted here or given a seat form of its own."""


def view_event(
    event: Event,
    before: GameState | None,
    seat: int | None,
    *,
    after: GameState | None = None,
    behind: bool = False,
) -> SeenEvent:
    """What ``seat`` (``None``: a spectator) may see of ``event`` in the game whose state before
    it is ``before`` (``None`` before ``GameCreated``). ``behind``: the event is re-sent to a
    stream that began after its trick lay face down (``face_down_through``): a play or trick
    of a hand whose tricks lie face down in ``after`` is seen face down, as the views show it."""
    if before is not None:
        players = before.rules.players
    elif isinstance(event, GameCreated):
        players = event.rules.players
    else:
        raise ValueError(f"no game before {event!r}: only GameCreated starts one")
    if seat is not None and not 0 <= seat < players:
        raise ValueError(f"no seat {seat} at a table of {players}")
    if isinstance(event, HandDealt):
        return SeenEvent(event, own_hand=event.hands[seat] if seat is not None else None)
    if isinstance(event, WidowExchanged):
        return SeenEvent(event, exchange_shown=seat == event.seat)
    if isinstance(event, TilePlayed | TrickWon):
        face_down = behind and after is not None and _tricks_hidden(after)
        return SeenEvent(event, face_down=face_down)
    if isinstance(event, _PUBLIC):
        return SeenEvent(event)
    raise TypeError(f"no seat form for {event!r}: decide what each seat may see of it")


def face_down_through(events: Sequence[Event], state: GameState) -> int:
    """The version of the last trick won so far, if the game's tricks may lie face down and it
    is not over (once over, its record shows everything): a stream starting now shows the
    tricks won up to it face down (``view_event(..., behind=True)``). 0 otherwise."""
    rules = state.rules
    if rules.is_moon or not rules.hide_tricks_on_mark_bids or state.phase is Phase.GAME_OVER:
        return 0
    for seq in range(len(events), 0, -1):
        if type(events[seq - 1]) is TrickWon:
            return seq
    return 0


def _tricks_hidden(state: GameState) -> bool:
    """Whether the hand in play turned its tricks face down (a bid of 2 marks or more)."""
    hand = state.hand
    if hand is None:
        return False
    rules, bid = state.rules, hand.high_bid
    return (
        not rules.is_moon
        and rules.hide_tricks_on_mark_bids
        and bid is not None
        and bid.is_mark_bid
        and bid.amount >= 2
        and hand.contract is not None
    )


def view(state: GameState, seat: int | None, *, behind: bool = False) -> SeatView:
    """What ``seat`` may know now; ``seat=None`` is a spectator. ``behind``: the view is re-sent
    to a stream that began later (``view_event``): a trick in progress of a hand whose tricks lie
    face down is shown face down."""
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
    hidden = _tricks_hidden(state)
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
        trick_face_down=behind and hidden,
    )
