"""The decider: ``decide(state, command) -> events``, ``evolve(state, event) -> state``.

``decide`` validates a command against the rules and returns the events it causes, or raises
an ``IllegalAction`` that says why; it never changes anything. ``evolve`` applies one event
and never fails on a log that ``decide`` produced. A game is ``start(rules)`` and then, for
every command, the events of ``decide`` folded with ``evolve``; ``replay`` folds a whole log.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, Literal

from boneyard.engine import bidding, play, scoring
from boneyard.engine.bids import Bid, BidKind
from boneyard.engine.commands import (
    ABANDON_REASONS,
    TIMEOUT_POLICIES,
    Abandon,
    Command,
    Deal,
    DeclareContract,
    DeclineWidow,
    ExchangeWidow,
    Pass,
    PlaceBid,
    PlayTile,
    Resign,
    SeatCommand,
    TimeOut,
)
from boneyard.engine.contracts import (
    DOUBLES,
    FOLLOW_ME,
    Contract,
    ContractKind,
    SuitTable,
    nello_table,
    suit_table,
)
from boneyard.engine.deal import deal
from boneyard.engine.errors import (
    GameOver,
    IllegalContract,
    IllegalDiscard,
    InvalidCommand,
    NotYourTurn,
    TileNotInHand,
    WrongPhase,
)
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
from boneyard.engine.state import (
    GameState,
    HandState,
    Phase,
    Trick,
    completed_trick,
    replace,
    with_fields,
)

_new = object.__new__
from boneyard.engine.tiles import COUNT, DOUBLE_TILES, TileSet, iter_tiles, tile_name

__all__ = [
    "decide",
    "evolve",
    "legal_actions",
    "legal_contracts",
    "replay",
    "start",
    "trump_menu",
]

_PIP_TRUMPS = tuple(range(7))
# Enum members read through the class cost ten times a module name: the hot paths use these.
_DEAL, _BIDDING, _WIDOW, _TRUMP, _PLAY, _GAME_OVER = (
    Phase.DEAL, Phase.BIDDING, Phase.WIDOW, Phase.TRUMP, Phase.PLAY, Phase.GAME_OVER
)


def start(rules: Ruleset) -> list[Event]:
    """The first event of every game."""
    return [GameCreated(rules)]


def replay(events: Iterable[Event]) -> GameState:
    """Fold a whole log (starting with ``GameCreated``) into the game's state."""
    state: GameState | None = None
    for event in events:
        state = evolve(state, event)
    if state is None:
        raise ValueError("an empty log: a game starts with GameCreated")
    return state


# ---------------------------------------------------------------- decide


def decide(state: GameState, command: Command) -> list[Event]:
    """The events ``command`` causes, or an ``IllegalAction`` saying why it may not happen."""
    if type(command) is PlayTile:
        # Most commands are plays: when it is a well-formed play of the seat on turn in the
        # play phase, every check below would pass, so go straight to the rules of play.
        hand = state.hand
        seat, tile = command.seat, command.tile
        if (
            state.phase is _PLAY
            and type(seat) is int
            and hand is not None
            and hand.turn == seat
            and type(tile) is int
            and 0 <= tile < 28
        ):
            rules = state.rules
            if _legal_tiles(rules, hand, seat) >> tile & 1:
                if len(hand.trick) + 1 < rules.players - len(hand.sitting_out):
                    return [_TILE_PLAYED[seat][tile]]
                return _trick_ends(state, rules, hand, seat, tile)
            return _decide_play(state, hand, command)
    elif type(command) is PlaceBid or type(command) is Pass:
        # The other common command, in the auction: as for a play, when it is well formed and
        # the seat's turn in the bidding phase, every check below would pass.
        hand = state.hand
        seat = command.seat
        if (
            state.phase is _BIDDING
            and type(seat) is int
            and hand is not None
            and hand.turn == seat
            and (type(command) is Pass or isinstance(command.bid, Bid))  # type: ignore[union-attr]
        ):
            if type(command) is Pass:
                return _decide_pass(state, hand, command)
            return _decide_bid(state, hand, command)  # type: ignore[arg-type]
    elif type(command) is DeclareContract:
        # Once a hand, as the widow's exchange below: the same shortcut, since Moon's hands
        # are short enough for the checks below to weigh.
        hand = state.hand
        seat = command.seat
        if (
            state.phase is _TRUMP
            and type(seat) is int
            and hand is not None
            and hand.turn == seat
            and isinstance(command.contract, Contract)
        ):
            return _decide_declare(state, hand, command)
    elif type(command) is ExchangeWidow:
        hand = state.hand
        seat, tile = command.seat, command.discard
        if (
            state.phase is _WIDOW
            and type(seat) is int
            and hand is not None
            and hand.turn == seat
            and type(tile) is int
            and 0 <= tile < 28
        ):
            return _decide_exchange(state, hand, command)
    if state.phase is _GAME_OVER:
        how = "was abandoned" if state.winner is None else f"is over (team {state.winner} won)"
        raise GameOver(f"the game {how}; no more {_what(command)}")
    if type(command) is Deal:
        return _decide_deal(state, command)
    if type(command) is TimeOut:
        return _decide_timeout(state, command)
    if type(command) is Resign:
        return _decide_resign(state, command)
    if type(command) is Abandon:
        return _decide_abandon(command)
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise InvalidCommand(f"not a command: {command!r}")
    seat = command.seat  # type: ignore[union-attr]
    rules = state.rules
    if type(seat) is not int or not 0 <= seat < rules.players:
        raise InvalidCommand(f"no seat {seat!r} at a table of {rules.players}")
    _check_well_formed(command)
    phase, expected = _PHASE_OF[type(command)]
    if state.phase is not phase:
        raise WrongPhase(
            f"{_what(command)} is for the {expected}, but the game is in the "
            f"{state.phase.value} phase (hand {state.deals})",
            phase=state.phase.value,
        )
    hand = state.hand
    assert hand is not None
    if hand.turn != seat:
        raise NotYourTurn(
            f"it is seat {hand.turn}'s turn, not seat {seat}'s ({_what(command)}, "
            f"hand {hand.number}, {state.phase.value})",
            seat=seat,
            turn=hand.turn,
        )
    return handler(state, hand, command)


def _check_well_formed(command: Command) -> None:
    """Bad syntax, told apart from bad rules before anything else is looked at."""
    if isinstance(command, (PlayTile, ExchangeWidow)):
        t = command.tile if isinstance(command, PlayTile) else command.discard
        if type(t) is not int or not 0 <= t < 28:
            raise InvalidCommand(f"not a tile: {t!r} (tiles are 0..27, 0-0 to 6-6)")
    elif isinstance(command, PlaceBid) and not isinstance(command.bid, Bid):
        raise InvalidCommand(f"not a bid: {command.bid!r}")
    elif isinstance(command, DeclareContract) and not isinstance(command.contract, Contract):
        raise InvalidCommand(f"not a contract: {command.contract!r}")


def _what(command: object) -> str:
    return str(command) if not isinstance(command, Deal) else "deal"


def _decide_deal(state: GameState, command: Deal) -> list[Event]:
    if state.phase is not Phase.DEAL:
        raise WrongPhase(f"the hand is already dealt (hand {state.deals}, {state.phase.value})")
    if not isinstance(command.seed, bytes) or not command.seed:
        raise InvalidCommand(f"a deal needs a non-empty seed of bytes, not {command.seed!r}")
    rules = state.rules
    hands, rest = deal(command.seed, rules.tiles, rules.players, rules.hand_size)
    dealer = state.next_dealer
    if dealer is None:
        dealer = (_holder_of_lowest(hands) - 1) % rules.players
    return [HandDealt(state.deals + 1, dealer, command.seed, hands, rest)]


_OPENING_ORDER = tuple(range(1, 28)) + (0,)
"""1-0, 1-1, 2-0 ... 6-6, then 0-0: who bids first on the first hand (``holds_1_0``)."""


def _holder_of_lowest(hands: tuple[TileSet, ...]) -> int:
    for t in _OPENING_ORDER:
        for seat, held in enumerate(hands):
            if held >> t & 1:
                return seat
    raise AssertionError("no tile dealt")


def _decide_bid(state: GameState, hand: HandState, command: PlaceBid) -> list[Event]:
    rules = state.rules
    if command.bid not in _auction_choices(rules, hand, command.seat)[1]:
        bidding.check_bid(rules, hand, command.seat, command.bid)
    events: list[Event] = [BidPlaced(command.seat, command.bid)]
    if bidding.auction_over(rules, hand.bids + ((command.seat, command.bid),)):
        events.append(_auction_won(rules, command.seat, command))
    return events


_PHASES_TO_ACT = (Phase.BIDDING, Phase.WIDOW, Phase.TRUMP, Phase.PLAY)


def _decide_timeout(state: GameState, command: TimeOut) -> list[Event]:
    """The seat to act ran out of time: ``ClockExpired``, then what its policy makes of it.

    - ``auto_play``: the events of the seat's lowest legal action, the first of
      ``legal_actions`` (so a timeout can complete a trick, score a hand, end the game);
    - ``forfeit``: ``GameWon`` for another team (``scoring.forfeit_winner``: with two teams the
      other one; with more, the highest score among the others, a tie going to the first tied
      team clockwise from the seat). The scores stay as they are.
    """
    rules = state.rules
    seat, policy = command.seat, command.policy
    if type(seat) is not int or not 0 <= seat < rules.players:
        raise InvalidCommand(f"no seat {seat!r} at a table of {rules.players}")
    if policy not in TIMEOUT_POLICIES:
        raise InvalidCommand(
            f"no timeout policy {policy!r}: choose one of {', '.join(TIMEOUT_POLICIES)}"
        )
    if state.phase not in _PHASES_TO_ACT:
        raise WrongPhase(
            f"{_what(command)}: no seat is to act while the game waits for the deal of hand "
            f"{state.deals + 1}"
        )
    hand = state.hand
    assert hand is not None
    if hand.turn != seat:
        raise NotYourTurn(
            f"it is seat {hand.turn}'s turn, not seat {seat}'s ({_what(command)}, "
            f"hand {hand.number}, {state.phase.value})",
            seat=seat,
            turn=hand.turn,
        )
    expired = ClockExpired(seat, policy)
    if policy == "forfeit":
        team = scoring.forfeit_winner(rules, state.scores, seat)
        return [expired, GameWon(team, rules.teams[team])]
    lowest = legal_actions(state, seat)[0]
    return [expired, *decide(state, lowest)]


def _decide_resign(state: GameState, command: Resign) -> list[Event]:
    """``Resigned``, then ``GameWon`` for another team, chosen as for a forfeit on time."""
    rules = state.rules
    seat = command.seat
    if type(seat) is not int or not 0 <= seat < rules.players:
        raise InvalidCommand(f"no seat {seat!r} at a table of {rules.players}")
    team = scoring.forfeit_winner(rules, state.scores, seat)
    return [Resigned(seat), GameWon(team, rules.teams[team])]


def _decide_abandon(command: Abandon) -> list[Event]:
    if command.reason not in ABANDON_REASONS:
        raise InvalidCommand(
            f"no reason to abandon {command.reason!r}: choose one of {', '.join(ABANDON_REASONS)}"
        )
    return [GameAbandoned(command.reason)]


def _auction_won(rules: Ruleset, seat: int, command: PlaceBid) -> AuctionWon:
    return AuctionWon(seat, command.bid, bidding.declarer_for(rules, seat, command.bid))


def _decide_pass(state: GameState, hand: HandState, command: Pass) -> list[Event]:
    rules = state.rules
    bidding.check_pass(rules, hand, command.seat)
    events: list[Event] = [Passed(command.seat)]
    if bidding.auction_over(rules, hand.bids + ((command.seat, None),)):
        if bidding.is_stuck(rules, hand):
            # The stuck dealer passed: it is given the lowest bid.
            bid = bidding.forced_bid(rules)
            declarer = bidding.declarer_for(rules, command.seat, bid)
            events.append(AuctionWon(command.seat, bid, declarer))
        elif hand.high_bid is None or hand.bidder is None:
            events.append(AllPassed((hand.dealer + 1) % rules.players))
            if rules.deal_limit and state.deals >= rules.deal_limit:
                # No more deals: the game ends on the scores as they stand.
                champion = scoring.limit_winner(rules, state.scores, None, hand.dealer)
                events.append(GameWon(champion, rules.teams[champion]))
        else:
            bid = hand.high_bid
            events.append(AuctionWon(hand.bidder, bid, bidding.declarer_for(rules, hand.bidder, bid)))
    return events


def _decide_exchange(state: GameState, hand: HandState, command: ExchangeWidow) -> list[Event]:
    discard = command.discard
    if not hand.hands[command.seat] >> discard & 1:
        raise IllegalDiscard(
            f"seat {command.seat} can lay out only a tile of the hand it was dealt, and does "
            f"not hold {tile_name(discard)} (hand {hand.number})"
        )
    widow = next(iter_tiles(hand.rest))
    return [WidowExchanged(command.seat, widow, discard)]


def _decide_decline(state: GameState, hand: HandState, command: DeclineWidow) -> list[Event]:
    if state.rules.widow != "may_exchange":
        raise IllegalDiscard(
            f"seat {command.seat} must exchange with the widow (widow=must_exchange [S0]) "
            f"(hand {hand.number})"
        )
    return [WidowDeclined(command.seat)]


_MOON_TRUMPS_BEYOND_SUITS: dict[str, tuple[int, ...]] = {
    "all": (DOUBLES, FOLLOW_ME),
    "suits_and_follow_me": (FOLLOW_ME,),
    "suits": (),
    "suits_and_doubles": (DOUBLES,),
}


def trump_menu(rules: Ruleset) -> tuple[int, ...]:
    """The trumps a declarer may name at this table, blanks .. sixes, then doubles and
    follow-me: any in Texas 42; in Moon what ``moon_trumps`` allows, and without a widow no
    blanks (``0-0`` is out of the game, so no tile is a blank)."""
    if not rules.is_moon:
        return _PIP_TRUMPS + (DOUBLES, FOLLOW_ME)
    pips = _PIP_TRUMPS if rules.has_widow else _PIP_TRUMPS[1:]
    return pips + _MOON_TRUMPS_BEYOND_SUITS[rules.moon_trumps]


def legal_contracts(rules: Ruleset, hand: HandState) -> list[Contract]:
    """What the declarer may declare in this hand, in this order: the trumps of
    ``trump_menu`` (blanks .. sixes, doubles, follow-me), then nello and sevens."""
    return list(_declarations(rules, hand)[0])


def _contracts(rules: Ruleset, specials: bool) -> list[Contract]:
    contracts = [Contract.of_trump(t) for t in trump_menu(rules)]
    if specials and not rules.is_moon:
        if rules.nello:
            contracts.append(Contract.nello())
        if rules.sevens:
            contracts.append(Contract.sevens())
    return contracts


def _declarations(
    rules: Ruleset, hand: HandState
) -> tuple[tuple[Contract, ...], frozenset[Contract], tuple[tuple[DeclareContract, ...], ...]]:
    """The legal contracts in order, as a set, and as each seat's commands: they depend on the
    ruleset and on whether a mark bid was won by its declarer (nello and sevens), so they are
    made once for each."""
    bid = hand.high_bid
    specials = bid is not None and bid.kind is BidKind.MARKS and hand.declarer == hand.bidder
    table = _per_ruleset(rules)
    key = ("declare", specials)
    found = table.get(key)
    if found is None:
        contracts = _contracts(rules, specials)
        found = table[key] = (
            tuple(contracts),
            frozenset(contracts),
            tuple(tuple(DeclareContract(s, c) for c in contracts) for s in range(rules.players)),
        )
    return found


_PER_RULESET_MOST = 256
_tables_by_value: dict[Ruleset, dict[Any, Any]] = {}
_tables_by_identity: dict[int, tuple[Ruleset, dict[Any, Any]]] = {}
"""Answers that depend on the ruleset and a few facts of the hand, made once for each ruleset
(by value: every game, and every record verified, has a ruleset object of its own). Found by
the object's identity, holding the object so that the identity stays its own, since hashing a
ruleset reads its 40 fields. At most ``_PER_RULESET_MOST`` rulesets, and four times as many
objects; then each starts again."""


def _per_ruleset(rules: Ruleset) -> dict[Any, Any]:
    entry = _tables_by_identity.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    table = _tables_by_value.get(rules)
    if table is None:
        if len(_tables_by_value) >= _PER_RULESET_MOST:
            _tables_by_value.clear()
        table = _tables_by_value[rules] = {}
    if len(_tables_by_identity) >= 4 * _PER_RULESET_MOST:
        _tables_by_identity.clear()
    _tables_by_identity[id(rules)] = (rules, table)
    return table


def _auction_choices(
    rules: Ruleset, hand: HandState, seat: int
) -> tuple[tuple[SeatCommand, ...], frozenset[Bid]]:
    """``seat``'s legal actions in the auction, and its legal bids as a set. They depend on
    the ruleset, the high bid, whether the seat is a forced dealer and (with plunge or splash)
    its doubles: made once for each."""
    global _auction_memo
    memo = _auction_memo
    if memo[1] is hand and memo[2] is seat and memo[0] is rules:
        return memo[3]  # type: ignore[no-any-return]
    doubles = (hand.hands[seat] & DOUBLE_TILES).bit_count() if rules.plunge or rules.splash else 0
    forced = bidding.is_forced(rules, hand)
    table = _per_ruleset(rules)
    key = (seat, hand.high_bid, forced, doubles)
    found = table.get(key)
    if found is None:
        bids = bidding.legal_bids(rules, hand, seat)
        actions: list[SeatCommand] = [] if forced else [Pass(seat)]
        actions.extend(PlaceBid(seat, b) for b in bids)
        found = table[key] = (tuple(actions), frozenset(bids))
    _auction_memo = (rules, hand, seat, found)
    return found


_AUCTION_NONE: tuple[Any, Any, int, Any] = (None, None, -1, None)
_auction_memo = _AUCTION_NONE
"""The last auction choices found: (rules, hand, seat, choices), as ``_legal_memo`` for plays."""


def _decide_declare(state: GameState, hand: HandState, command: DeclareContract) -> list[Event]:
    rules = state.rules
    contract = command.contract
    if contract not in _declarations(rules, hand)[1]:
        bid = hand.high_bid
        if contract.kind is not ContractKind.TRUMP:
            enabled = rules.nello if contract.kind is ContractKind.NELLO else rules.sevens
            reason = (
                f"{contract.kind.value} is off in this ruleset"
                if not enabled
                else f"{contract.kind.value} needs a mark bid (42, 84 ...) won by the declarer, "
                f"and the bid is {bid}"
            )
        elif rules.is_moon and not rules.has_widow and contract.trump == 0:
            reason = "there are no blanks without a widow (widow=none: 0-0 is out of the game)"
        else:
            reason = f"the Moon bidder may name only {rules.moon_trumps.replace('_', ' ')} (moon_trumps)"
        raise IllegalContract(f"seat {command.seat} may not declare {contract}: {reason} (hand {hand.number})")
    sitting_out: tuple[int, ...] = ()
    if contract.kind is ContractKind.NELLO:
        bidder = hand.bidder
        assert bidder is not None
        sitting_out = tuple(s for s in rules.teams[rules.team_of[bidder]] if s != bidder)
    return [ContractDeclared(command.seat, contract, sitting_out)]


def _decide_play(state: GameState, hand: HandState, command: PlayTile) -> list[Event]:
    rules = state.rules
    seat, tile = command.seat, command.tile
    if not _legal_tiles(rules, hand, seat) >> tile & 1:
        if not hand.hands[seat] >> tile & 1:
            raise TileNotInHand(
                f"seat {seat} does not hold {tile_name(tile)} (hand {hand.number}, "
                f"trick {len(hand.tricks) + 1})",
                seat=seat,
                tile=tile_name(tile),
            )
        play.check_play(rules, hand, seat, tile)
    if len(hand.trick) + 1 < rules.players - len(hand.sitting_out):
        return [_TILE_PLAYED[seat][tile]]
    return _trick_ends(state, rules, hand, seat, tile)


def _trick_ends(state: GameState, rules: Ruleset, hand: HandState, seat: int, tile: int) -> list[Event]:
    """The events of a legal play that completes the trick: the play, who won the trick, and
    whether that ends the hand (and the game)."""
    global _prepared
    # Deciding whether the hand is over needs the state after the trick, which evolve will be
    # asked for next, so make it now and hand it over (``_prepared``).
    played = _TILE_PLAYED[seat][tile]
    full = _tile_played(rules, hand, seat, tile)
    trick = full.trick
    table = hand.table
    if table is None:  # sevens
        winner = play.trick_winner(full, trick)
        points = 1
        for _, t in trick:
            points += COUNT[t]
    else:  # play.trick_winner, inlined with the count: once a trick
        winner, lead = trick[0]
        power = table.power[table.lead_suit[lead]]
        best = power[lead]
        points = 1 + COUNT[lead]
        for s, t in trick[1:]:
            points += COUNT[t]
            if power[t] > best:
                winner, best = s, power[t]
    if rules.is_moon:
        points = 1
    won = _TRICK_WON[winner][points]
    after = _trick_won(rules, full, winner, points)
    played_state = _with_hand(state, full)
    _prepared = (state, played, played_state, won, _with_hand(played_state, after))
    if (
        len(after.tricks) < rules.hand_size
        and (rules.is_moon or not rules.end_hand_when_decided)
        and hand.contract.kind is not _NELLO  # type: ignore[union-attr]
    ):
        return [played, won]  # what scoring.hand_result says before the last trick then
    return _hand_may_end(state, rules, hand, after, winner, played, won)


def _hand_may_end(
    state: GameState,
    rules: Ruleset,
    hand: HandState,
    after: HandState,
    winner: int,
    played: TilePlayed,
    won: TrickWon,
) -> list[Event]:
    """The events of a trick's end that may end the hand (``after``: the hand with the trick
    won): the play, the trick, and the score and the game's winner when it does. The compiled
    core, which finds the winner and makes the states itself, leaves this to Python too."""
    made = scoring.hand_result(rules, after, winner)
    if made is None:
        return [played, won]
    events: list[Event] = [played, won]
    bidder, bid = after.bidder, after.high_bid
    assert bidder is not None and bid is not None
    changes = scoring.score_changes(rules, after, made)
    scores = tuple(s + c for s, c in zip(state.scores, changes, strict=True))
    events.append(HandScored(bidder, bid, made, after.taken, changes, scores))
    champion = scoring.game_winner(rules, scores, bidder, bid, made, hand.dealer)
    if champion is None and (
        (rules.hand_limit and len(state.results) + 1 >= rules.hand_limit)
        or (rules.deal_limit and state.deals >= rules.deal_limit)
    ):
        champion = scoring.limit_winner(rules, scores, bidder)
    if champion is not None:
        events.append(GameWon(champion, rules.teams[champion]))
    return events


_NELLO = ContractKind.NELLO


_NEW_HAND: dict[str, Any] = {
    f.name: f.default for f in dataclasses.fields(HandState) if f.default is not dataclasses.MISSING
}
"""A new hand's fields that start at their defaults (the auction, the contract, the tricks)."""

_Prepared = tuple[Any, Any, Any, Any, Any]
_prepared: _Prepared = (None, None, None, None, None)
"""The states ``decide`` made for the events it returned at a trick's end: (state, the last
play, the state after it, the ``TrickWon``, the state after that). ``evolve`` hands them back
when asked for exactly those events of exactly that state (by identity: states and events are
immutable, so a hit is the same answer it would compute). One entry; it holds its states."""


_LEGAL_NONE: tuple[Any, Any, int, int] = (None, None, -1, 0)
_legal_memo = _LEGAL_NONE
"""The last legal plays found: (rules, hand, seat, tiles). A bot or a client asks for the legal
actions and then decides one of them on the same state: the second look is free. The seat is
matched by identity too, so that one equal to it but of another type (``2.0``, ``True``) is
looked at afresh and answered as it always was."""


def _legal_tiles(rules: Ruleset, hand: HandState, seat: int) -> TileSet:
    global _legal_memo
    memo = _legal_memo
    if memo[1] is hand and memo[2] is seat and memo[0] is rules:
        return memo[3]
    tiles = play.legal_plays(rules, hand, seat)
    _legal_memo = (rules, hand, seat, tiles)
    return tiles


_Handler = Callable[[GameState, HandState, Any], list[Event]]
_HANDLERS: dict[type, _Handler] = {
    PlaceBid: _decide_bid,
    Pass: _decide_pass,
    ExchangeWidow: _decide_exchange,
    DeclineWidow: _decide_decline,
    DeclareContract: _decide_declare,
    PlayTile: _decide_play,
}
_PHASE_OF = {
    PlaceBid: (Phase.BIDDING, "auction"),
    Pass: (Phase.BIDDING, "auction"),
    ExchangeWidow: (Phase.WIDOW, "widow exchange"),
    DeclineWidow: (Phase.WIDOW, "widow exchange"),
    DeclareContract: (Phase.TRUMP, "declaration of trump"),
    PlayTile: (Phase.PLAY, "play of the tricks"),
}


# ---------------------------------------------------------------- legal actions

_MOST_SEATS = 7
_PLAYS: tuple[tuple[PlayTile, ...], ...] = tuple(
    tuple(PlayTile(seat, t) for t in range(28)) for seat in range(_MOST_SEATS)
)
"""Every play there is, made once: commands are values, so the same one serves every game."""
_TILE_PLAYED: tuple[tuple[TilePlayed, ...], ...] = tuple(
    tuple(TilePlayed(seat, t) for t in range(28)) for seat in range(_MOST_SEATS)
)
_EXCHANGES: tuple[tuple[ExchangeWidow, ...], ...] = tuple(
    tuple(ExchangeWidow(seat, t) for t in range(28)) for seat in range(_MOST_SEATS)
)


def _by_parts(commands: tuple[Any, ...]) -> tuple[tuple[tuple[Any, ...], ...], ...]:
    """``[part][bits]``: the commands of the tiles of a set's seven bits ``7 * part`` ..
    ``7 * part + 6``, lowest first: a set's commands in four look-ups."""
    return tuple(
        tuple(
            tuple(commands[7 * part + t] for t in range(7) if bits >> t & 1) for bits in range(128)
        )
        for part in range(4)
    )


_PLAYS_OF: tuple[tuple[tuple[tuple[PlayTile, ...], ...], ...], ...] = tuple(
    _by_parts(plays) for plays in _PLAYS
)
"""``_PLAYS_OF[seat][part][bits]``: each seat's plays of a set of tiles, by ``_by_parts``."""
_EXCHANGES_OF: tuple[tuple[tuple[tuple[ExchangeWidow, ...], ...], ...], ...] = tuple(
    _by_parts(exchanges) for exchanges in _EXCHANGES
)
_DECLINES = tuple(DeclineWidow(seat) for seat in range(_MOST_SEATS))
_PAIRS: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    tuple((seat, t) for t in range(28)) for seat in range(_MOST_SEATS)
)
"""``(seat, tile)`` of every play in a trick, made once."""
_WITHOUT: tuple[int, ...] = tuple(~(1 << t) for t in range(28))
_TRICK_WON: tuple[tuple[TrickWon, ...], ...] = tuple(
    tuple(TrickWon(seat, points) for points in range(1 + sum(COUNT) + 1))
    for seat in range(_MOST_SEATS)
)
"""``TrickWon(seat, points)`` for every seat and every trick's worth (1 and all the count at
most), made once."""
_PLAY_LISTS: dict[int, tuple[PlayTile, ...]] = {}
"""The plays of a seat's legal tiles, by ``seat << 28 | tiles``: a seat holds one of a few
thousand sets in practice, so most lists are a look-up. At most ``_PLAY_LISTS_MOST``."""
_PLAY_LISTS_MOST = 1 << 16


def legal_actions(state: GameState, seat: int) -> list[SeatCommand]:
    """Every command ``seat`` may send now; empty when it is not that seat's turn.

    The order is a rule, since a timeout with ``auto_play`` plays the first of them (the
    seat's "lowest legal action"): in the auction a pass when passing is allowed, then the
    bids from the lowest up (so a forced dealer's first is the minimum bid); in the widow
    exchange laying out each tile of the hand, lowest tile first, then leaving the widow
    (``may_exchange``); in the declaration the trumps blanks .. sixes, doubles, follow-me,
    then nello and sevens (``legal_contracts``' order); in play the legal tiles, lowest-numbered
    first (tile numbers as in ``boneyard.engine.tiles``: ``0-0`` is 0 ... ``6-6`` is 27).
    """
    hand = state.hand
    if hand is None or hand.turn != seat:
        return []
    phase = state.phase
    rules = state.rules
    if phase is _PLAY:
        legal = _legal_tiles(rules, hand, seat)
        key = seat << 28 | legal
        found = _PLAY_LISTS.get(key)
        if found is None:
            plays = _PLAYS_OF[seat]
            found = (
                plays[0][legal & 127]
                + plays[1][legal >> 7 & 127]
                + plays[2][legal >> 14 & 127]
                + plays[3][legal >> 21]
            )
            if len(_PLAY_LISTS) >= _PLAY_LISTS_MOST:
                _PLAY_LISTS.clear()
            _PLAY_LISTS[key] = found
        return list(found)
    if phase is _DEAL or phase is _GAME_OVER:
        return []
    if phase is _BIDDING:
        return list(_auction_choices(rules, hand, seat)[0])
    if phase is _TRUMP:
        return list(_declarations(rules, hand)[2][seat])
    held = hand.hands[seat]
    exchanges = _EXCHANGES_OF[seat]
    widow: list[SeatCommand] = list(
        exchanges[0][held & 127]
        + exchanges[1][held >> 7 & 127]
        + exchanges[2][held >> 14 & 127]
        + exchanges[3][held >> 21]
    )
    if rules.widow == "may_exchange":
        widow.append(_DECLINES[seat])
    return widow


# ---------------------------------------------------------------- evolve


def _next_seat(rules: Ruleset, hand: HandState, seat: int) -> int:
    n = rules.players
    seat = (seat + 1) % n
    while seat in hand.sitting_out:
        seat = (seat + 1) % n
    return seat


def _tile_played(rules: Ruleset, hand: HandState, seat: int, tile: int) -> HandState:
    """The hand after ``seat`` plays ``tile``: the hottest lines of the engine.

    Each builder of the play path fills a new object's own dict from the old one's (one call,
    where copying a dict and then setting it as the ``__dict__`` of a frozen object took two
    and half as long again), then changes what the event changes."""
    new = _new(HandState)
    fields = new.__dict__
    fields.update(hand.__dict__)
    hands = list(fields["hands"])
    hands[seat] &= _WITHOUT[tile]
    fields["hands"] = tuple(hands)
    trick = fields["trick"] = fields["trick"] + (_PAIRS[seat][tile],)
    sitting_out = fields["sitting_out"]
    players = rules.players
    # A full trick waits for its TrickWon: nobody is to play until the winner leads.
    if len(trick) == players - len(sitting_out):
        fields["turn"] = None
    elif sitting_out:
        fields["turn"] = _next_seat(rules, hand, seat)
    else:
        fields["turn"] = seat + 1 if seat + 1 < players else 0
    return new


def _trick_won(rules: Ruleset, hand: HandState, seat: int, points: int) -> HandState:
    new = _new(HandState)
    fields = new.__dict__
    fields.update(hand.__dict__)
    taken = list(fields["taken"])
    taken[rules.team_of[seat]] += points
    fields["taken"] = tuple(taken)
    fields["tricks"] = fields["tricks"] + (completed_trick(fields["trick"], seat, points),)
    fields["trick"] = ()
    fields["turn"] = seat
    return new


def _with_hand(state: GameState, hand: HandState) -> GameState:
    """``replace(state, hand=hand)``, as the builders of the play path make it."""
    new = _new(GameState)
    fields = new.__dict__
    fields.update(state.__dict__)
    fields["hand"] = hand
    return new


def _after_widow_or_trump(
    rules: Ruleset, hand: HandState, changes: dict[str, Any]
) -> tuple[Phase, HandState]:
    """The hand with ``changes``, and the phase and turn that follow from them: Moon exchanges
    with the widow before or after trump; then the declarer leads."""
    fields = hand.__dict__ | changes
    if rules.has_widow and not fields["widow_settled"]:
        phase, fields["turn"] = Phase.WIDOW, fields["bidder"]
    elif fields["contract"] is None:
        phase, fields["turn"] = Phase.TRUMP, fields["declarer"]
    else:
        phase, fields["turn"] = _PLAY, fields["declarer"]
    return phase, with_fields(HandState, fields)


def _table_for(rules: Ruleset, contract: Contract) -> SuitTable | None:
    if contract.kind is ContractKind.TRUMP:
        return suit_table(contract.trump)
    if contract.kind is ContractKind.NELLO:
        return nello_table(rules.nello_doubles)
    return None


def evolve(state: GameState | None, event: Event) -> GameState:
    """The state after ``event``."""
    kind = type(event)
    if kind is TilePlayed or kind is TrickWon:  # most events: first
        prepared = _prepared
        if prepared[0] is state and prepared[1] is event:
            return prepared[2]  # type: ignore[no-any-return]
        if prepared[2] is state and prepared[3] is event:
            return prepared[4]  # type: ignore[no-any-return]
        if state is None:
            raise ValueError(f"a log must start with GameCreated, not {event!r}")
        hand = state.hand
        assert hand is not None
        after = _new(GameState)
        fields = after.__dict__
        fields.update(state.__dict__)
        if kind is TilePlayed:
            fields["hand"] = _tile_played(state.rules, hand, event.seat, event.tile)  # type: ignore[union-attr]
        else:
            fields["hand"] = _trick_won(state.rules, hand, event.seat, event.points)  # type: ignore[union-attr]
        return after
    if kind is GameCreated:
        rules = event.rules  # type: ignore[union-attr]
        opener = rules.first_hand_opener
        dealer = None if opener == "holds_1_0" else (int(opener) - 1) % rules.players
        return GameState(rules, Phase.DEAL, (0,) * len(rules.teams), next_dealer=dealer)
    if state is None:
        raise ValueError(f"a log must start with GameCreated, not {event!r}")
    rules = state.rules
    hand = state.hand
    if kind is Resigned:
        return state  # the GameWon that follows ends the game
    if kind is GameWon:
        assert isinstance(event, GameWon)
        return replace(state, phase=Phase.GAME_OVER, winner=event.team, next_dealer=None)
    if kind is GameAbandoned:
        turn_over = replace(hand, turn=None) if hand is not None else None
        return replace(state, phase=Phase.GAME_OVER, hand=turn_over, winner=None, next_dealer=None)
    if kind is HandDealt:
        assert isinstance(event, HandDealt)
        new_hand = with_fields(
            HandState,
            _NEW_HAND
            | {
                "number": event.number,
                "dealer": event.dealer,
                "seed": event.seed,
                "dealt": event.hands,
                "hands": event.hands,
                "rest": event.rest,
                "taken": (0,) * len(rules.teams),
                "turn": (event.dealer + 1) % rules.players,
            },
        )
        return replace(state, phase=Phase.BIDDING, hand=new_hand, deals=event.number, next_dealer=None)
    assert hand is not None
    if kind is BidPlaced or kind is Passed:
        new_hand = _new(HandState)
        fields = new_hand.__dict__
        fields.update(hand.__dict__)
        seat = event.seat  # type: ignore[union-attr]
        if kind is BidPlaced:
            bid = event.bid  # type: ignore[union-attr]
            bids = fields["bids"] = fields["bids"] + ((seat, bid),)
            fields["high_bid"] = bid
            fields["bidder"] = seat
        else:
            bids = fields["bids"] = fields["bids"] + ((seat, None),)
        fields["turn"] = bidding.next_bidder(rules, bids)
        return _with_hand(state, new_hand)
    if kind is AuctionWon:
        assert isinstance(event, AuctionWon)
        phase = _WIDOW if rules.has_widow and rules.widow_before_trump else _TRUMP
        turn = event.seat if phase is _WIDOW else event.declarer
        won = replace(
            hand, bidder=event.seat, high_bid=event.bid, declarer=event.declarer, turn=turn
        )
        return replace(state, phase=phase, hand=won)
    if kind is AllPassed:
        assert isinstance(event, AllPassed)
        return replace(state, phase=Phase.DEAL, hand=replace(hand, turn=None), next_dealer=event.next_dealer)
    if kind is WidowExchanged or kind is WidowDeclined:
        changes: dict[str, Any] = {"widow_settled": True}
        if isinstance(event, WidowExchanged):
            hands = list(hand.hands)
            hands[event.seat] = hands[event.seat] & ~(1 << event.discard) | 1 << event.taken
            changes.update(hands=tuple(hands), rest=1 << event.discard)
        phase, settled = _after_widow_or_trump(rules, hand, changes)
        return replace(state, phase=phase, hand=settled)
    if kind is ContractDeclared:
        assert isinstance(event, ContractDeclared)
        phase, declared = _after_widow_or_trump(
            rules,
            hand,
            {
                "contract": event.contract,
                "table": _table_for(rules, event.contract),
                "sitting_out": event.sitting_out,
            },
        )
        return replace(state, phase=phase, hand=declared)
    if kind is HandScored:
        assert isinstance(event, HandScored)
        return replace(
            state,
            phase=Phase.DEAL,
            scores=event.scores,
            results=state.results + (event,),
            hand=replace(hand, turn=None),
            next_dealer=(hand.dealer + 1) % rules.players,
        )
    if kind is ClockExpired:
        return state  # what the policy makes of it follows as events of their own
    raise ValueError(f"not an event: {event!r}")


# ---------------------------------------------------------------- the compiled core

pure_decide, pure_evolve, pure_legal_actions = decide, evolve, legal_actions
"""The pure-Python engine, always here: the reference of the compiled core (which falls back
to these for all but the play path) and the core in use without it."""


def _compiled_core() -> ModuleType | None:
    """The compiled play path, ``boneyard.engine._decider_c``, when the install built it
    (optional, as the solver's core): found by name, since it has no stub for mypy."""
    try:
        return importlib.import_module("boneyard.engine._decider_c")
    except ImportError:  # pragma: no cover - depends on the build
        return None


def _init_compiled_core(core: ModuleType) -> bool:
    """Hand the compiled core what it needs; whether it is to be used. Everything the C code
    reads or returns comes from here, so that it holds no copy of a rule: the classes it builds
    and checks exactly, the cached commands and events it hands out (the very objects the Python
    paths return), and the Python functions for the rest."""
    wanted: bool = core.init(
        namespace=globals(),  # `_prepared` is shared through it with _trick_ends and evolve
        GameState=GameState,
        HandState=HandState,
        PlayTile=PlayTile,
        TilePlayed=TilePlayed,
        TrickWon=TrickWon,
        Contract=Contract,
        SuitTable=SuitTable,
        Ruleset=Ruleset,
        Trick=Trick,
        play_phase=_PLAY,
        sevens=ContractKind.SEVENS,
        nello=_NELLO,
        decide=pure_decide,
        evolve=pure_evolve,
        legal_actions=pure_legal_actions,
        trick_ends=_trick_ends,
        hand_may_end=_hand_may_end,
        plays=_PLAYS,
        tile_played=_TILE_PLAYED,
        trick_won=_TRICK_WON,
        pairs=_PAIRS,
        without=_WITHOUT,
        count=COUNT,
        distance=play._DISTANCE,
    )
    return wanted


_C = _compiled_core()
_C_WANTED = False
if _C is not None:
    try:
        _C_WANTED = _init_compiled_core(_C)
    except RuntimeError:  # initialised by an earlier import of this module (a reload)
        _C = None

CoreName = Literal["c", "python"]
CORES: tuple[CoreName, ...] = ("c", "python") if _C is not None else ("python",)
"""The cores of the decider this install has, fastest first."""
CORE: CoreName = "c" if _C_WANTED else "python"
"""The core behind ``decide``, ``evolve`` and ``legal_actions``: the compiled one when built,
unless the environment says ``BONEYARD_ENGINE_CORE=python`` (read by the extension)."""

c_decide: Callable[[GameState, Command], list[Event]] | None = None
c_evolve: Callable[[GameState | None, Event], GameState] | None = None
c_legal_actions: Callable[[GameState, int], list[SeatCommand]] | None = None
if _C is not None:
    c_decide, c_evolve, c_legal_actions = _C.decide, _C.evolve, _C.legal_actions
if CORE == "c":
    # Rebound before engine/__init__.py and views.py import these names, and read through this
    # module's globals by its own callers (replay, timeouts): every caller gets the same core.
    decide, evolve, legal_actions = _C.decide, _C.evolve, _C.legal_actions  # type: ignore[union-attr]
