"""Conversions between the engine's values and the API's protobuf messages (``boneyard.v1``).

Pure functions: no I/O, no gRPC. The servicers decode requests with the ``*_from_proto``
functions and encode answers with the ``*_to_proto`` ones; the store keeps every event as the
bytes of ``encode_event`` and rebuilds it with ``decode_event``.

Events have two forms (``events.proto``):

- the *log form* (``event_to_proto``): every field, the whole deal and the widow exchange
  included. It is what is stored; ``event_from_proto`` turns it back into the very same engine
  event, so a stored log replays exactly.
- the *seat form* (``seen_event_to_proto``): what one seat (or a spectator) may know when the
  event happens, as the engine's ``view_event`` says (``SeenEvent``); this module only encodes
  it. A ``HandDealt`` carries that seat's own hand and the hand sizes (never the seed, another
  hand, the widow or the tiles out of play), a ``WidowExchanged`` the tiles to the bidder only,
  a play or trick re-sent behind a face-down hand no tile or points.

Input from clients that cannot mean anything (no action set, a tile out of 0..27, an enum value
this server does not know, a missing required field) raises ``MalformedAction`` or
``MalformedRules``, which the servicer maps to ``INVALID_ARGUMENT``. Whether a well-formed
action is allowed now is the engine's business (``engine.IllegalAction``), not the codec's.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor

from boneyard import engine
from boneyard.api.v1 import actions_pb2, events_pb2, rules_pb2, view_pb2
from boneyard.engine import (
    AllPassed,
    AuctionWon,
    Bid,
    BidKind,
    BidPlaced,
    ClockExpired,
    Contract,
    ContractDeclared,
    ContractKind,
    DeclareContract,
    DeclineWidow,
    Event,
    ExchangeWidow,
    GameAbandoned,
    GameCreated,
    GameState,
    GameWon,
    HandDealt,
    HandScored,
    Pass,
    Passed,
    Phase,
    PlaceBid,
    PlayTile,
    Resign,
    Resigned,
    Ruleset,
    SeatCommand,
    SeatView,
    SeenEvent,
    TilePlayed,
    TileSet,
    TrickView,
    TrickWon,
    WidowDeclined,
    WidowExchanged,
)
from boneyard.records.hashing import seed_commitment

__all__ = [
    "OPTIONS_ADDED_AFTER_V1",
    "MalformedAction",
    "MalformedEvent",
    "MalformedMessage",
    "MalformedRules",
    "MalformedView",
    "action_from_proto",
    "action_to_proto",
    "bid_from_proto",
    "bid_to_proto",
    "contract_from_proto",
    "contract_to_proto",
    "decode_event",
    "encode_event",
    "event_from_proto",
    "event_kind",
    "event_to_proto",
    "redact_event",
    "rules_from_proto",
    "rules_overrides_from_proto",
    "rules_to_proto",
    "seen_event_to_proto",
    "view_from_proto",
    "view_to_proto",
]

TILES = 28
"""Tiles are 0..27 (``boneyard.engine.tiles``: ``high * (high + 1) // 2 + low``)."""
DEFAULT_PRESET = "texas42"
"""The preset of a ``Ruleset`` message whose ``preset`` is empty."""


class MalformedMessage(ValueError):
    """A protobuf message that cannot mean anything to the engine."""


class MalformedAction(MalformedMessage):
    """An ``Action`` with no kind set, a tile out of 0..27, an unknown enum value, a missing
    field (``INVALID_ARGUMENT``)."""


class MalformedRules(MalformedMessage):
    """A ``Ruleset`` with an option value no ruleset has (``INVALID_ARGUMENT``). Nonsense
    combinations of valid values are the engine's ``RulesetError``."""


class MalformedEvent(MalformedMessage):
    """A payload that is not an event in the log form: a corrupt or foreign store."""


class MalformedView(MalformedMessage):
    """A ``SeatView`` that is not what ``view_to_proto`` makes of an engine view: a ruleset
    left out, a tile out of range, plays shown face down (which only a ``WatchGame`` re-sending
    earlier versions does: the seat no longer knows those tiles)."""


# ---------------------------------------------------------------- tiles


def _tiles_to_proto(tiles: TileSet) -> list[int]:
    return list(
        _TILES_OF[0][tiles & 127]
        + _TILES_OF[1][tiles >> 7 & 127]
        + _TILES_OF[2][tiles >> 14 & 127]
        + _TILES_OF[3][tiles >> 21 & 127]
    )


_TILES_OF: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(7 * part + t for t in range(7) if bits >> t & 1) for bits in range(128))
    for part in range(4)
)
"""``_TILES_OF[part][bits]``: the tiles of a set's seven bits ``7 * part`` .. ``7 * part + 6``,
lowest first: a set's tiles in four look-ups (every deal, view and hand is a list of tiles)."""


def _tile_from_proto(value: int, what: str, error: type[MalformedMessage]) -> int:
    if not 0 <= value < TILES:
        raise error(f"{what}: {value} is not a tile (tiles are 0..27: high * (high + 1) / 2 + low)")
    return value


def _tileset_from_proto(values: Iterable[int], what: str, error: type[MalformedMessage]) -> TileSet:
    tiles = 0
    for value in values:
        bit = 1 << _tile_from_proto(value, what, error)
        if tiles & bit:
            raise error(f"{what}: tile {engine.tile_name(value)} ({value}) is listed twice")
        tiles |= bit
    return tiles


# ---------------------------------------------------------------- enums


def _prefix(enum: EnumDescriptor) -> str:
    """``ALL_PASS_`` for ``AllPass``: the zero value's name without ``UNSPECIFIED``."""
    return enum.values_by_number[0].name.removesuffix("UNSPECIFIED")


def _choice_to_proto(enum: EnumDescriptor, value: str) -> int:
    """The enum value named after an engine choice: ``"forced_dealer"`` is
    ``ALL_PASS_FORCED_DEALER``."""
    name = _prefix(enum) + value.upper()
    try:
        return enum.values_by_name[name].number
    except KeyError:
        raise ValueError(
            f"{enum.full_name} has no value {name} for the engine's {value!r}"
        ) from None


def _choice_from_proto(
    enum: EnumDescriptor, number: int, what: str, error: type[MalformedMessage]
) -> str:
    """The engine choice an enum value names: ``ALL_PASS_FORCED_DEALER`` is ``"forced_dealer"``."""
    value = enum.values_by_number.get(number)
    if value is None or number == 0:
        known = ", ".join(v.name for v in enum.values if v.number)
        shown = "unspecified" if number == 0 else f"unknown value {number}"
        raise error(f"{what} is {shown}: choose one of {known}")
    return value.name.removeprefix(_prefix(enum)).lower()


# ---------------------------------------------------------------- bids and contracts

_BID_KINDS: dict[BidKind, rules_pb2.BidKind.ValueType] = {
    BidKind.POINTS: rules_pb2.BID_KIND_POINTS,
    BidKind.MARKS: rules_pb2.BID_KIND_MARKS,
    BidKind.PLUNGE: rules_pb2.BID_KIND_PLUNGE,
    BidKind.SPLASH: rules_pb2.BID_KIND_SPLASH,
    BidKind.TRICKS: rules_pb2.BID_KIND_TRICKS,
    BidKind.MOON: rules_pb2.BID_KIND_MOON,
    BidKind.OVERCALL: rules_pb2.BID_KIND_OVERCALL,
}
_BID_KINDS_BACK = {number: kind for kind, number in _BID_KINDS.items()}

_CONTRACT_KINDS: dict[ContractKind, rules_pb2.ContractKind.ValueType] = {
    ContractKind.TRUMP: rules_pb2.CONTRACT_KIND_TRUMP,
    ContractKind.NELLO: rules_pb2.CONTRACT_KIND_NELLO,
    ContractKind.SEVENS: rules_pb2.CONTRACT_KIND_SEVENS,
}
_CONTRACT_KINDS_BACK = {number: kind for kind, number in _CONTRACT_KINDS.items()}


def bid_to_proto(bid: Bid) -> rules_pb2.Bid:
    return rules_pb2.Bid(kind=_BID_KINDS[bid.kind], amount=bid.amount)


def bid_from_proto(msg: rules_pb2.Bid, error: type[MalformedMessage] = MalformedAction) -> Bid:
    """A ``Bid``; the moon's amount may be 21 or 0 (the overcall's 42 or 0), every other
    bid's must be given."""
    kind = _BID_KINDS_BACK.get(msg.kind)
    if kind is None:
        raise error(
            f"bid kind {_enum_label(rules_pb2.BidKind.DESCRIPTOR, msg.kind)}: choose one "
            f"of {', '.join(rules_pb2.BidKind.Name(n) for n in _BID_KINDS.values())}"
        )
    if kind is BidKind.MOON or kind is BidKind.OVERCALL:
        shot = Bid.moon() if kind is BidKind.MOON else Bid.overcall()
        if msg.amount not in (0, shot.amount):
            raise error(f"a {kind.value} bid is worth {shot.amount}, not {msg.amount}")
        return shot
    if msg.amount == 0:
        raise error(f"a {kind.value} bid needs an amount (it is 0)")
    return Bid(kind, msg.amount)


def _enum_label(enum: EnumDescriptor, number: int) -> str:
    value = enum.values_by_number.get(number)
    return value.name if value is not None else f"{number} (unknown)"


def contract_to_proto(contract: Contract) -> rules_pb2.Contract:
    msg = rules_pb2.Contract(kind=_CONTRACT_KINDS[contract.kind])
    if contract.kind is ContractKind.TRUMP:
        # TRUMP_BLANKS = 1 is the engine's suit 0 ... TRUMP_SIXES = 7 is 6, TRUMP_DOUBLES = 8 is
        # DOUBLES (7), TRUMP_FOLLOW_ME = 9 is FOLLOW_ME (8).
        msg.trump = rules_pb2.Trump.ValueType(contract.trump + 1)
    return msg


def contract_from_proto(
    msg: rules_pb2.Contract, error: type[MalformedMessage] = MalformedAction
) -> Contract:
    kind = _CONTRACT_KINDS_BACK.get(msg.kind)
    if kind is None:
        raise error(
            f"contract kind {_enum_label(rules_pb2.ContractKind.DESCRIPTOR, msg.kind)}: choose one "
            f"of {', '.join(rules_pb2.ContractKind.Name(n) for n in _CONTRACT_KINDS.values())}"
        )
    trump = _enum_label(rules_pb2.Trump.DESCRIPTOR, msg.trump)
    if kind is not ContractKind.TRUMP:
        if msg.trump != rules_pb2.TRUMP_UNSPECIFIED:
            raise error(f"{kind.value} has no trump (trump is {trump})")
        return Contract.nello() if kind is ContractKind.NELLO else Contract.sevens()
    if not rules_pb2.TRUMP_BLANKS <= msg.trump <= rules_pb2.TRUMP_FOLLOW_ME:
        raise error(
            f"a trump contract needs a trump, not {trump} "
            f"(TRUMP_BLANKS .. TRUMP_SIXES, TRUMP_DOUBLES, TRUMP_FOLLOW_ME)"
        )
    return Contract.of_trump(msg.trump - 1)


# ---------------------------------------------------------------- rulesets

_OPENER = "first_hand_opener"
_HOLDS_1_0 = "holds_1_0"


def _option_field(name: str) -> FieldDescriptor:
    try:
        return rules_pb2.Ruleset.DESCRIPTOR.fields_by_name[name]
    except KeyError:
        raise ValueError(
            f"boneyard.v1.Ruleset has no field for the engine's option {name!r}"
        ) from None


OPTIONS_ADDED_AFTER_V1: dict[str, Any] = {
    "hand_limit": 0,
    "splash_capped": False,
    "auction_goes_round": False,
    "moon_min_bid": 4,
    "missed_moon_loses_game": False,
    "tie_to_earliest_seat": False,
    "moon_overcall": False,
    "deal_limit": 0,
}
"""Options added to ``Ruleset`` after the first version of the API, each with the value that
means "play as before it existed". A complete ruleset leaves such an option unset when it has
that value, and a stored one that does not set it has that value: so a ``GameCreated`` stored
before the option existed decodes, and re-encodes to the very bytes it was stored as (the
record's hash chain covers them)."""


def rules_to_proto(rules: Ruleset) -> rules_pb2.Ruleset:
    """The complete ruleset: its preset name and every option set (but those of
    ``OPTIONS_ADDED_AFTER_V1`` that have their value when absent)."""
    msg = rules_pb2.Ruleset(preset=rules.name)
    for name, value in rules.options().items():
        if name in OPTIONS_ADDED_AFTER_V1 and value == OPTIONS_ADDED_AFTER_V1[name]:
            continue
        if name == _OPENER:
            if value == _HOLDS_1_0:
                msg.opener_holds_one_blank = True
            else:
                msg.opener_seat = int(value)
            continue
        field = _option_field(name)
        setattr(msg, name, _choice_to_proto(field.enum_type, value) if field.enum_type else value)
    return msg


def rules_overrides_from_proto(msg: rules_pb2.Ruleset) -> tuple[str, dict[str, Any]]:
    """The preset (``texas42`` when empty) and the options the message sets, as the engine's
    values: ``("moon", {"widow": "may_exchange"})``. Raises ``MalformedRules`` for an enum
    option that is unspecified or unknown, or ``opener_holds_one_blank = false``."""
    overrides: dict[str, Any] = {}
    for name in engine.option_names():
        if name == _OPENER:
            which = msg.WhichOneof("first_hand_opener")
            if which == "opener_holds_one_blank":
                if not msg.opener_holds_one_blank:
                    raise MalformedRules(
                        "opener_holds_one_blank may only be true "
                        "(to choose a seat, set opener_seat)"
                    )
                overrides[name] = _HOLDS_1_0
            elif which == "opener_seat":
                overrides[name] = str(msg.opener_seat)
            continue
        if not msg.HasField(name):  # type: ignore[arg-type]  # a name the stubs cannot check
            continue
        field = _option_field(name)
        value = getattr(msg, name)
        if field.enum_type:
            value = _choice_from_proto(field.enum_type, value, f"option {name}", MalformedRules)
        overrides[name] = value
    return msg.preset or DEFAULT_PRESET, overrides


def rules_from_proto(msg: rules_pb2.Ruleset) -> Ruleset:
    """The preset with the overrides the message sets (``engine.ruleset``). Raises
    ``MalformedRules``, or the engine's ``RulesetError`` for an unknown preset or a nonsense
    combination."""
    preset, overrides = rules_overrides_from_proto(msg)
    return engine.ruleset(preset, overrides)


def _complete_rules_from_proto(
    msg: rules_pb2.Ruleset, what: str, error: type[MalformedMessage]
) -> Ruleset:
    """A complete ruleset exactly as sent (a stored ``GameCreated``'s, a view's), independent
    of what its preset means today. An option of ``OPTIONS_ADDED_AFTER_V1`` left unset has its
    value when absent."""
    try:
        _, options = rules_overrides_from_proto(msg)
        options = {**OPTIONS_ADDED_AFTER_V1, **options}
        missing = [n for n in engine.option_names() if n not in options]
        if missing:
            raise error(f"{what}: the ruleset leaves out {', '.join(missing)}")
        return engine.canonical_ruleset(Ruleset(name=msg.preset, **options))
    except (MalformedRules, engine.RulesetError) as e:
        raise error(f"{what}: {e}") from e


@lru_cache(maxsize=256)
def _rules_message(rules: Ruleset) -> rules_pb2.Ruleset:
    """``rules_to_proto`` once per ruleset: every view carries its game's ruleset, and a game's
    views are made many times. Callers copy it (messages are mutable)."""
    return rules_to_proto(rules)


# ---------------------------------------------------------------- actions


def action_to_proto(command: SeatCommand | Resign) -> actions_pb2.Action:
    """The action of a seat command (the seat is left out: it is the token's)."""
    kind = type(command)
    if kind is PlaceBid:
        assert isinstance(command, PlaceBid)
        return actions_pb2.Action(bid=bid_to_proto(command.bid))
    if kind is Pass:
        return actions_pb2.Action(pass_bid=actions_pb2.Pass())
    if kind is ExchangeWidow:
        assert isinstance(command, ExchangeWidow)
        return actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=command.discard))
    if kind is DeclineWidow:
        return actions_pb2.Action(decline_widow=actions_pb2.DeclineWidow())
    if kind is DeclareContract:
        assert isinstance(command, DeclareContract)
        return actions_pb2.Action(declare_contract=contract_to_proto(command.contract))
    if kind is PlayTile:
        assert isinstance(command, PlayTile)
        return actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=command.tile))
    if kind is Resign:
        return actions_pb2.Action(resign=actions_pb2.Resign())
    raise TypeError(f"not a seat command: {command!r}")


def action_from_proto(msg: actions_pb2.Action, seat: int) -> SeatCommand | Resign:
    """The engine command for ``seat`` (the seat of the request's token). Raises
    ``MalformedAction`` for an action that cannot mean anything; legality is the engine's."""
    which = msg.WhichOneof("kind")
    if which is None:
        raise MalformedAction(
            "an Action must set one of bid, pass_bid, exchange_widow, decline_widow, "
            "declare_contract, play_tile, resign (none is set)"
        )
    if which == "bid":
        return PlaceBid(seat, bid_from_proto(msg.bid))
    if which == "pass_bid":
        return Pass(seat)
    if which == "exchange_widow":
        if not msg.exchange_widow.HasField("discard"):
            raise MalformedAction("exchange_widow needs the discard: the tile to lay out")
        return ExchangeWidow(
            seat,
            _tile_from_proto(msg.exchange_widow.discard, "exchange_widow.discard", MalformedAction),
        )
    if which == "decline_widow":
        return DeclineWidow(seat)
    if which == "declare_contract":
        return DeclareContract(seat, contract_from_proto(msg.declare_contract))
    if which == "play_tile":
        if not msg.play_tile.HasField("tile"):
            raise MalformedAction("play_tile needs the tile to play")
        return PlayTile(
            seat, _tile_from_proto(msg.play_tile.tile, "play_tile.tile", MalformedAction)
        )
    if which == "resign":
        return Resign(seat)
    raise MalformedAction(f"unknown action {which!r}")  # a field added to the proto, not here


# ---------------------------------------------------------------- views

_PHASES: dict[Phase, view_pb2.Phase.ValueType] = {
    phase: view_pb2.Phase.ValueType(_choice_to_proto(view_pb2.Phase.DESCRIPTOR, phase.value))
    for phase in Phase
}


def view_to_proto(view: SeatView, version: int) -> view_pb2.SeatView:
    """A seat's (or a spectator's) view at ``version``."""
    msg = view_pb2.SeatView(
        version=version,
        phase=_PHASES[view.phase],
        players=view.players,
        teams=_teams(view.teams),
        scores=view.scores,
        hand_number=view.hand_number,
        hand=_tiles_to_proto(view.hand),
        hand_sizes=view.hand_sizes,
        bids=[_auction_entry(seat, bid) for seat, bid in view.bids],
        sitting_out=view.sitting_out,
        current_trick=[
            view_pb2.Play(seat=seat, face_down=True)
            if view.trick_face_down
            else view_pb2.Play(seat=seat, tile=tile)
            for seat, tile in view.trick
        ],
        completed_tricks=[_completed_trick(trick) for trick in view.tricks],
        tricks_hidden=view.tricks_hidden,
        taken=view.taken or (),
        tricks_won=view.tricks_won,
        legal_actions=[_action_message(a) for a in view.legal],
        results=[_hand_scored_to_proto(r) for r in view.results],
    )
    for name in ("seat", "dealer", "turn", "bidder", "declarer", "discard", "winner"):
        value = getattr(view, name)
        if value is not None:
            setattr(msg, name, value)
    if view.high_bid is not None:
        msg.high_bid.CopyFrom(bid_to_proto(view.high_bid))
    if view.contract is not None:
        msg.contract.CopyFrom(contract_to_proto(view.contract))
    msg.rules.CopyFrom(_rules_message(view.rules))
    return msg


# The parts of a view every seat of every game sees again and again, made once (values, not
# objects: the engine makes new ones for each view); a message given to a repeated field is
# copied, so the remembered ones are never changed.
@lru_cache(maxsize=4096)
def _completed_trick(trick: TrickView) -> view_pb2.CompletedTrick:
    return view_pb2.CompletedTrick(
        plays=[view_pb2.Play(seat=s, tile=t) for s, t in trick.plays or ()],
        winner=trick.winner,
        points=trick.points,
        hidden=trick.plays is None,
    )


@lru_cache(maxsize=4096)
def _action_message(command: SeatCommand | Resign) -> actions_pb2.Action:
    return action_to_proto(command)


@lru_cache(maxsize=1024)
def _auction_entry(seat: int, bid: Bid | None) -> view_pb2.AuctionEntry:
    return view_pb2.AuctionEntry(seat=seat, bid=bid_to_proto(bid) if bid is not None else None)


@lru_cache(maxsize=64)
def _teams(teams: tuple[tuple[int, ...], ...]) -> list[view_pb2.Team]:
    return [view_pb2.Team(seats=team) for team in teams]


_PHASES_BACK = {number: phase for phase, number in _PHASES.items()}


def _optional(msg: view_pb2.SeatView, name: str) -> int | None:
    # A field named at run time: the stubs take only literal names.
    return int(getattr(msg, name)) if msg.HasField(name) else None  # type: ignore[arg-type]


def view_from_proto(msg: view_pb2.SeatView) -> SeatView:
    """The engine view a ``SeatView`` message was made from (the inverse of
    ``view_to_proto``, without the version): for clients, whose bots reason on the engine's
    values. Raises ``MalformedView`` for a message no engine view makes."""
    bad = MalformedView
    if not msg.HasField("rules"):
        raise bad("a SeatView without its ruleset (rules): this server is older than the client")
    rules = _complete_rules_from_proto(msg.rules, "SeatView.rules", bad)
    phase = _PHASES_BACK.get(msg.phase)
    if phase is None:
        raise bad(f"SeatView.phase is {_enum_label(view_pb2.Phase.DESCRIPTOR, msg.phase)}")
    if any(p.face_down for p in msg.current_trick):
        raise bad(
            "the view shows plays face down (a WatchGame re-sending an earlier version): the "
            "seat no longer knows those tiles; ask GetView for the view now"
        )
    seat = _optional(msg, "seat")
    players = int(msg.players)
    if players != rules.players or (seat is not None and not 0 <= seat < players):
        raise bad(f"SeatView: seat {seat} of {players} players, the ruleset has {rules.players}")

    def tile(value: int, what: str) -> int:
        return _tile_from_proto(value, f"SeatView.{what}", bad)

    def bid(entry: rules_pb2.Bid) -> Bid:
        return bid_from_proto(entry, bad)

    legal: tuple[SeatCommand, ...] = ()
    if msg.legal_actions:
        if seat is None:
            raise bad("a spectator's view with legal actions")
        commands = [action_from_proto(a, seat) for a in msg.legal_actions]
        if any(isinstance(c, Resign) for c in commands):
            raise bad("SeatView.legal_actions lists resign: it is always allowed, never listed")
        legal = tuple(c for c in commands if not isinstance(c, Resign))
    return SeatView(
        rules=rules,
        seat=seat,
        phase=phase,
        players=players,
        teams=tuple(tuple(int(s) for s in team.seats) for team in msg.teams),
        scores=tuple(int(s) for s in msg.scores),
        hand_number=int(msg.hand_number),
        dealer=_optional(msg, "dealer"),
        turn=_optional(msg, "turn"),
        hand=_tileset_from_proto(msg.hand, "SeatView.hand", bad),
        hand_sizes=tuple(int(n) for n in msg.hand_sizes),
        bids=tuple(
            (int(e.seat), bid(e.bid) if e.HasField("bid") else None) for e in msg.bids
        ),
        high_bid=bid(msg.high_bid) if msg.HasField("high_bid") else None,
        bidder=_optional(msg, "bidder"),
        declarer=_optional(msg, "declarer"),
        contract=contract_from_proto(msg.contract, bad) if msg.HasField("contract") else None,
        sitting_out=tuple(int(s) for s in msg.sitting_out),
        trick=tuple((int(p.seat), tile(p.tile, "current_trick")) for p in msg.current_trick),
        tricks=tuple(
            TrickView(
                None
                if t.hidden
                else tuple((int(p.seat), tile(p.tile, "completed_tricks")) for p in t.plays),
                int(t.winner),
                int(t.points) if t.HasField("points") else None,
            )
            for t in msg.completed_tricks
        ),
        tricks_hidden=msg.tricks_hidden,
        # Empty on the wire both before the first deal and while the tricks lie face down:
        # the engine says None for both (a dealt hand's taken has one entry per team).
        taken=tuple(int(n) for n in msg.taken) if msg.taken else None,
        tricks_won=tuple(int(n) for n in msg.tricks_won),
        discard=tile(msg.discard, "discard") if msg.HasField("discard") else None,
        legal=legal,
        results=tuple(_hand_scored_from_proto(r, bad) for r in msg.results),
        winner=_optional(msg, "winner"),
    )


# ---------------------------------------------------------------- events (log form)

_EVENT_KINDS: dict[type[Any], str] = {
    GameCreated: "game_created",
    HandDealt: "hand_dealt",
    BidPlaced: "bid_placed",
    Passed: "passed",
    AuctionWon: "auction_won",
    AllPassed: "all_passed",
    WidowExchanged: "widow_exchanged",
    WidowDeclined: "widow_declined",
    ContractDeclared: "contract_declared",
    TilePlayed: "tile_played",
    TrickWon: "trick_won",
    HandScored: "hand_scored",
    GameWon: "game_won",
    ClockExpired: "clock_expired",
    Resigned: "resigned",
    GameAbandoned: "game_abandoned",
}
"""Each engine event and the ``Event.kind`` field that carries it."""


def event_kind(event: Event) -> str:
    """The ``Event.kind`` field of an event: ``"hand_dealt"``."""
    try:
        return _EVENT_KINDS[type(event)]
    except KeyError:
        raise TypeError(f"not an engine event: {event!r}") from None


def _hand_scored_to_proto(event: HandScored) -> events_pb2.HandScored:
    return events_pb2.HandScored(
        bidder=event.bidder,
        bid=bid_to_proto(event.bid),
        made=event.made,
        taken=event.taken,
        changes=event.changes,
        scores=event.scores,
    )


def _hand_scored_from_proto(
    h: events_pb2.HandScored, error: type[MalformedMessage]
) -> HandScored:
    return HandScored(
        h.bidder,
        bid_from_proto(h.bid, error),
        h.made,
        tuple(h.taken),
        tuple(h.changes),
        tuple(h.scores),
    )


def _fill_hand_dealt(message: events_pb2.HandDealt, event: HandDealt) -> events_pb2.HandDealt:
    """``message`` (empty) made the log form of ``event``, in place: a deal is the largest
    event and every hand has one, and building its parts as messages of their own to copy them
    in took half as long again."""
    message.number = event.number
    message.dealer = event.dealer
    message.hand_sizes.extend([h.bit_count() for h in event.hands])
    message.rest_size = event.rest.bit_count()
    message.seed_commitment = seed_commitment(event.seed)
    deal = message.deal
    deal.seed = event.seed
    for held in event.hands:
        deal.hands.add().tiles.extend(_tiles_to_proto(held))
    deal.rest.extend(_tiles_to_proto(event.rest))
    return message


def _payload_to_proto(event: Event) -> Any:
    """The message of one event in the log form."""
    if isinstance(event, GameCreated):
        return events_pb2.GameCreated(rules=rules_to_proto(event.rules))
    if isinstance(event, HandDealt):
        return _fill_hand_dealt(events_pb2.HandDealt(), event)
    if isinstance(event, BidPlaced):
        return events_pb2.BidPlaced(seat=event.seat, bid=bid_to_proto(event.bid))
    if isinstance(event, Passed):
        return events_pb2.Passed(seat=event.seat)
    if isinstance(event, AuctionWon):
        return events_pb2.AuctionWon(
            seat=event.seat, bid=bid_to_proto(event.bid), declarer=event.declarer
        )
    if isinstance(event, AllPassed):
        return events_pb2.AllPassed(next_dealer=event.next_dealer)
    if isinstance(event, WidowExchanged):
        return events_pb2.WidowExchanged(seat=event.seat, taken=event.taken, discard=event.discard)
    if isinstance(event, WidowDeclined):
        return events_pb2.WidowDeclined(seat=event.seat)
    if isinstance(event, ContractDeclared):
        return events_pb2.ContractDeclared(
            seat=event.seat,
            contract=contract_to_proto(event.contract),
            sitting_out=event.sitting_out,
        )
    if isinstance(event, TilePlayed):
        return events_pb2.TilePlayed(seat=event.seat, tile=event.tile)
    if isinstance(event, TrickWon):
        return events_pb2.TrickWon(seat=event.seat, points=event.points)
    if isinstance(event, HandScored):
        return _hand_scored_to_proto(event)
    if isinstance(event, GameWon):
        return events_pb2.GameWon(team=event.team, seats=event.seats)
    if isinstance(event, ClockExpired):
        return events_pb2.ClockExpired(
            seat=event.seat,
            policy=events_pb2.TimeoutPolicy.ValueType(
                _choice_to_proto(events_pb2.TimeoutPolicy.DESCRIPTOR, event.policy)
            ),
        )
    if isinstance(event, Resigned):
        return events_pb2.Resigned(seat=event.seat)
    if isinstance(event, GameAbandoned):
        return events_pb2.GameAbandoned(
            reason=events_pb2.AbandonReason.ValueType(
                _choice_to_proto(events_pb2.AbandonReason.DESCRIPTOR, event.reason)
            )
        )
    raise TypeError(f"not an engine event: {event!r}")


def _wrap(kind: str, payload: Any, seq: int) -> events_pb2.Event:
    msg = events_pb2.Event(seq=seq)
    getattr(msg, kind).CopyFrom(payload)
    return msg


def event_to_proto(event: Event, seq: int = 0) -> events_pb2.Event:
    """The event in the log form (everything, the deal included): for the store and the
    archive, never for a live stream (see ``redact_event``)."""
    if type(event) is HandDealt:
        message = events_pb2.Event(seq=seq)
        _fill_hand_dealt(message.hand_dealt, event)
        return message
    return _wrap(event_kind(event), _payload_to_proto(event), seq)


def event_from_proto(msg: events_pb2.Event) -> Event:
    """The engine event of a log-form message: ``event_from_proto(event_to_proto(e)) == e``.
    Raises ``MalformedEvent`` for anything else (a seat-form event included)."""
    which = msg.WhichOneof("kind")
    bad = MalformedEvent
    if which is None:
        raise bad("an Event with no kind set")
    if which == "game_created":
        return GameCreated(
            _complete_rules_from_proto(msg.game_created.rules, "GameCreated", MalformedEvent)
        )
    if which == "hand_dealt":
        e = msg.hand_dealt
        if not e.HasField("deal"):
            raise bad(
                f"HandDealt {e.number} has no deal: a seat's form of the event, not the log's"
            )
        hands = tuple(
            _tileset_from_proto(h.tiles, f"HandDealt {e.number} hand {seat}", bad)
            for seat, h in enumerate(e.deal.hands)
        )
        rest = _tileset_from_proto(e.deal.rest, f"HandDealt {e.number} rest", bad)
        return HandDealt(e.number, e.dealer, e.deal.seed, hands, rest)
    if which == "bid_placed":
        return BidPlaced(msg.bid_placed.seat, bid_from_proto(msg.bid_placed.bid, bad))
    if which == "passed":
        return Passed(msg.passed.seat)
    if which == "auction_won":
        a = msg.auction_won
        return AuctionWon(a.seat, bid_from_proto(a.bid, bad), a.declarer)
    if which == "all_passed":
        return AllPassed(msg.all_passed.next_dealer)
    if which == "widow_exchanged":
        w = msg.widow_exchanged
        if not (w.HasField("taken") and w.HasField("discard")):
            raise bad("WidowExchanged without the taken tile and the discard: a seat's form")
        return WidowExchanged(
            w.seat,
            _tile_from_proto(w.taken, "WidowExchanged.taken", bad),
            _tile_from_proto(w.discard, "WidowExchanged.discard", bad),
        )
    if which == "widow_declined":
        return WidowDeclined(msg.widow_declined.seat)
    if which == "contract_declared":
        c = msg.contract_declared
        return ContractDeclared(c.seat, contract_from_proto(c.contract, bad), tuple(c.sitting_out))
    if which == "tile_played":
        t = msg.tile_played
        return TilePlayed(t.seat, _tile_from_proto(t.tile, "TilePlayed.tile", bad))
    if which == "trick_won":
        return TrickWon(msg.trick_won.seat, msg.trick_won.points)
    if which == "hand_scored":
        return _hand_scored_from_proto(msg.hand_scored, bad)
    if which == "game_won":
        return GameWon(msg.game_won.team, tuple(msg.game_won.seats))
    if which == "clock_expired":
        expired = msg.clock_expired
        policy = _choice_from_proto(
            events_pb2.TimeoutPolicy.DESCRIPTOR, expired.policy, "ClockExpired.policy", bad
        )
        return ClockExpired(expired.seat, policy)
    if which == "resigned":
        return Resigned(msg.resigned.seat)
    if which == "game_abandoned":
        reason = _choice_from_proto(
            events_pb2.AbandonReason.DESCRIPTOR,
            msg.game_abandoned.reason,
            "GameAbandoned.reason",
            bad,
        )
        return GameAbandoned(reason)
    raise bad(f"unknown event kind {which!r}")


def encode_event(event: Event) -> tuple[str, bytes]:
    """What the store appends for an event: ``(kind, payload)``, the payload being the bytes
    of the log form (without ``seq``: the row's key holds it)."""
    return event_kind(event), event_to_proto(event).SerializeToString(deterministic=True)


def decode_event(payload: bytes) -> Event:
    """The engine event of a stored payload (``encode_event``). Raises ``MalformedEvent``."""
    msg = events_pb2.Event()
    try:
        msg.ParseFromString(payload)
    except Exception as e:  # protobuf raises DecodeError, or others on some backends
        raise MalformedEvent(f"not an Event payload ({len(payload)} bytes): {e}") from e
    return event_from_proto(msg)


# ---------------------------------------------------------------- events (seat form)

def seen_event_to_proto(seen: SeenEvent, seq: int = 0) -> events_pb2.Event:
    """The seat form of an event: exactly what the engine's ``view_event`` says the seat may
    see of it, encoded (the codec decides nothing)."""
    event = seen.event
    if isinstance(event, HandDealt):
        return _wrap(
            "hand_dealt",
            events_pb2.HandDealt(
                number=event.number,
                dealer=event.dealer,
                own_hand=_tiles_to_proto(seen.own_hand) if seen.own_hand is not None else (),
                hand_sizes=[h.bit_count() for h in event.hands],
                rest_size=event.rest.bit_count(),
                seed_commitment=seed_commitment(event.seed),
            ),
            seq,
        )
    if isinstance(event, WidowExchanged):
        exchanged = events_pb2.WidowExchanged(seat=event.seat)
        if seen.exchange_shown:
            exchanged.taken = event.taken
            exchanged.discard = event.discard
        return _wrap("widow_exchanged", exchanged, seq)
    if seen.face_down and isinstance(event, TilePlayed):
        return _wrap("tile_played", events_pb2.TilePlayed(seat=event.seat, face_down=True), seq)
    if seen.face_down and isinstance(event, TrickWon):
        won = event_to_proto(event, seq)
        won.trick_won.points = 0
        won.trick_won.face_down = True
        return won
    return event_to_proto(event, seq)


def redact_event(
    event: Event, state_before: GameState | None, seat: int | None, seq: int = 0
) -> events_pb2.Event:
    """The event as ``seat`` (``None``: a spectator) may see it when it happens, in the game
    whose state before the event is ``state_before`` (``None`` before ``GameCreated``): the
    engine's ``view_event``, encoded."""
    return seen_event_to_proto(engine.view_event(event, state_before, seat), seq)
