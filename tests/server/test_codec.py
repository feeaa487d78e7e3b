"""The codec between the engine and the API's protobuf messages (boneyard/codec.py).

Real games: random legal play of every preset (and a few table sizes), with now and then a
seat's clock running out (``TimeOut``, auto_play), produces the events and the actions; every
event must survive the log form exactly, every action its protobuf form, and no seat's form of
an event, nor a seat's view, may show a tile that seat may not know.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message

from boneyard import engine
from boneyard.api import codec
from boneyard.api.codec import MalformedAction, MalformedEvent, MalformedRules
from boneyard.api.v1 import actions_pb2, events_pb2, rules_pb2, view_pb2
from boneyard.engine import (
    Bid,
    BidKind,
    ClockExpired,
    Contract,
    ContractKind,
    Deal,
    DeclareContract,
    DeclineWidow,
    Event,
    GameCreated,
    GameState,
    HandDealt,
    Phase,
    PlaceBid,
    PlayTile,
    Ruleset,
    SeatCommand,
    TilePlayed,
    TimeOut,
    WidowExchanged,
)

ROOT = Path(__file__).resolve().parents[2]

TABLES: list[Ruleset] = [engine.ruleset(name) for name in engine.preset_names()] + [
    engine.ruleset("texas42", players=2),
    engine.ruleset("texas42", players=3),
    engine.ruleset("texas42", players=5),
    engine.ruleset("texas42-house", players=6),
    engine.ruleset("texas42", players=6, six_player_teams="threes"),
    engine.ruleset("texas42", players=7, end_hand_when_decided=False),
    engine.ruleset("moon", widow="may_exchange", moon_wins_game=True),
    engine.ruleset("moon-s1", all_pass="forced_dealer"),
]
SEEDS = (1, 2, 3)
MAX_DEALS = 30
TIMEOUTS = 0.03
"""How often the seat to act runs out of time instead of acting (auto_play)."""
ENDINGS = {2: engine.Resign(1), 3: engine.Abandon("idle")}
"""Games of these seeds still going after ``ENDING_AT`` events are resigned or abandoned."""
ENDING_AT = 400


# ---------------------------------------------------------------- random play


@dataclass
class Step:
    """One event of a game, with the state before it and its number in the log."""

    seq: int
    before: GameState | None
    event: Event
    after: GameState


@dataclass
class Game:
    rules: Ruleset
    steps: list[Step] = field(default_factory=list)
    decisions: list[tuple[GameState, int, list[SeatCommand]]] = field(default_factory=list)
    """Each position where a seat acted: the state, the seat, its legal actions."""


def _choose(rng: random.Random, actions: list[SeatCommand]) -> SeatCommand:
    """A random legal action, leaning towards the rare ones so that every kind shows up."""
    rare = [
        a
        for a in actions
        if (
            isinstance(a, PlaceBid) and a.bid.kind in (BidKind.PLUNGE, BidKind.SPLASH, BidKind.MOON)
        )
        or (isinstance(a, DeclareContract) and a.contract.kind is not ContractKind.TRUMP)
        or isinstance(a, DeclineWidow)
    ]
    if rare and rng.random() < 0.5:
        return rng.choice(rare)
    marks = [a for a in actions if isinstance(a, PlaceBid) and a.bid.is_mark_bid]
    if marks and rng.random() < 0.3:
        return rng.choice(marks)
    return rng.choice(actions)


def play(rules: Ruleset, seed: int) -> Game:
    rng = random.Random(seed)
    clock = random.Random(-seed)  # apart, so that the timeouts leave the choices as they were
    game = Game(rules)
    state: GameState | None = None
    log: list[Event] = list(engine.start(rules))
    pending = list(log)
    while True:
        for event in pending:
            before = state
            state = engine.evolve(state, event)
            game.steps.append(Step(len(game.steps) + 1, before, event, state))
        assert state is not None
        if state.phase is Phase.GAME_OVER or state.deals >= MAX_DEALS and state.phase is Phase.DEAL:
            return game
        if len(game.steps) >= ENDING_AT and seed in ENDINGS:
            command: engine.Command = ENDINGS[seed]
        elif state.phase is Phase.DEAL:
            command = Deal(rng.randbytes(16))
        else:
            assert state.hand is not None and state.hand.turn is not None
            seat = state.hand.turn
            actions = engine.legal_actions(state, seat)
            game.decisions.append((state, seat, actions))
            command = _choose(rng, actions)
            if clock.random() < TIMEOUTS:
                command = TimeOut(seat, "auto_play")
        pending = engine.decide(state, command)


@pytest.fixture(scope="module")
def games() -> list[Game]:
    return [play(rules, seed) for rules in TABLES for seed in SEEDS]


def test_random_play_covers_every_event_and_action_kind(games: list[Game]) -> None:
    events = {type(s.event).__name__ for g in games for s in g.steps}
    assert events == {type_.__name__ for type_ in codec._EVENT_KINDS}
    actions = {
        codec.action_to_proto(a).WhichOneof("kind")
        for g in games
        for _, _, legal in g.decisions
        for a in legal
    }
    # Resigning is never among the legal actions: any seat may resign at any time.
    every = {f.name for f in actions_pb2.Action.DESCRIPTOR.oneofs_by_name["kind"].fields}
    assert actions == every - {"resign"}
    bids = {
        a.bid.kind
        for g in games
        for _, _, legal in g.decisions
        for a in legal
        if isinstance(a, PlaceBid)
    }
    assert bids == set(BidKind)
    contracts = {
        a.contract
        for g in games
        for _, _, legal in g.decisions
        for a in legal
        if isinstance(a, DeclareContract)
    }
    assert {c.kind for c in contracts} == set(ContractKind)
    assert {c.trump for c in contracts if c.kind is ContractKind.TRUMP} == set(range(9))


# ---------------------------------------------------------------- events: the log form


def test_every_event_of_every_preset_round_trips_through_the_log_form(games: list[Game]) -> None:
    for game in games:
        for step in game.steps:
            msg = codec.event_to_proto(step.event, step.seq)
            assert msg.seq == step.seq
            assert msg.WhichOneof("kind") == codec.event_kind(step.event)
            assert codec.event_from_proto(msg) == step.event
            again = events_pb2.Event.FromString(msg.SerializeToString())
            assert codec.event_from_proto(again) == step.event


def test_stored_payloads_replay_every_game_exactly(games: list[Game]) -> None:
    for game in games:
        stored = [codec.encode_event(s.event) for s in game.steps]
        assert [kind for kind, _ in stored] == [codec.event_kind(s.event) for s in game.steps]
        replayed = engine.replay(codec.decode_event(payload) for _, payload in stored)
        assert replayed == game.steps[-1].after


def test_stored_payload_is_deterministic() -> None:
    game = play(engine.ruleset("moon"), 7)
    for step in game.steps:
        assert codec.encode_event(step.event) == codec.encode_event(step.event)


def test_hand_dealt_log_form_keeps_the_seed_and_every_hand() -> None:
    rules = engine.ruleset("moon")
    state = engine.replay(engine.start(rules))
    (dealt,) = engine.decide(state, Deal(b"\x00seed\xff"))
    assert isinstance(dealt, HandDealt)
    msg = codec.event_to_proto(dealt).hand_dealt
    assert msg.deal.seed == b"\x00seed\xff"
    assert [list(h.tiles) for h in msg.deal.hands] == [
        list(engine.iter_tiles(h)) for h in dealt.hands
    ]
    assert list(msg.deal.rest) == list(engine.iter_tiles(dealt.rest))
    assert list(msg.hand_sizes) == [7, 7, 7] and msg.rest_size == 1
    assert not msg.own_hand


def test_game_created_keeps_the_whole_ruleset_whatever_its_preset_means_later() -> None:
    rules = engine.ruleset("texas42-house", players=6, marks_to_win=3)
    msg = codec.event_to_proto(GameCreated(rules))
    msg.game_created.rules.preset = "a-preset-since-removed"
    decoded = codec.event_from_proto(msg)
    assert isinstance(decoded, GameCreated)
    assert decoded.rules.options() == rules.options()
    assert decoded.rules.name == "a-preset-since-removed"


OLD_GAME_CREATED = {
    "texas42": "124c0a4a0a07746578617334321001180420002801300140004801501e58026001680170077800800101"
    "880100900100980102a00100a80100b00101b80101c00101c80100d00101d80101e00100",
    "moon": "12490a470a046d6f6f6e1002180320002802380040154801501e58026001680170077800800101880100"
    "900100980102a00100a80100b00101b80101c00101c80100d00101d80101e00100",
}
"""Payloads of ``GameCreated`` as the store kept them before ``hand_limit`` existed (made by
``encode_event`` at commit 408e4c5): records and databases hold such bytes for ever."""


@pytest.mark.parametrize("preset", sorted(OLD_GAME_CREATED))
def test_a_game_created_stored_before_hand_limit_reads_as_no_limit_and_keeps_its_bytes(
    preset: str,
) -> None:
    payload = bytes.fromhex(OLD_GAME_CREATED[preset])
    event = codec.decode_event(payload)
    assert isinstance(event, GameCreated)
    assert event.rules == engine.ruleset(preset)
    assert event.rules.hand_limit == 0 and event.rules.deal_limit == 0
    assert codec.encode_event(event) == ("game_created", payload)


def test_a_ruleset_with_hand_limit_round_trips() -> None:
    rules = engine.ruleset("texas42", hand_limit=1)
    msg = codec.rules_to_proto(rules)
    assert msg.HasField("hand_limit") and msg.hand_limit == 1
    assert codec.rules_from_proto(msg) == rules
    (created,) = engine.start(rules)
    assert codec.decode_event(codec.encode_event(created)[1]) == created


def test_a_deal_limit_is_set_in_its_ruleset_and_round_trips() -> None:
    rules = engine.ruleset("moon", deal_limit=engine.DEAL_LIMIT)
    msg = codec.rules_to_proto(rules)
    assert msg.HasField("deal_limit") and msg.deal_limit == engine.DEAL_LIMIT
    assert codec.rules_from_proto(msg) == rules
    (created,) = engine.start(rules)
    assert codec.decode_event(codec.encode_event(created)[1]) == created


def test_deal_limit_0_is_left_unset_as_in_rulesets_made_before_it() -> None:
    msg = codec.rules_to_proto(engine.ruleset("moon", deal_limit=0))
    assert not msg.HasField("deal_limit")
    assert codec.OPTIONS_ADDED_AFTER_V1["deal_limit"] == 0


def test_hand_limit_0_is_left_unset_as_in_rulesets_made_before_it() -> None:
    msg = codec.rules_to_proto(engine.ruleset("moon", hand_limit=0))
    assert not msg.HasField("hand_limit")
    assert codec.OPTIONS_ADDED_AFTER_V1["hand_limit"] == 0


# Every field added to Ruleset after the first version (29 on), with its value "as before".
AS_BEFORE = {
    "hand_limit": 0,
    "splash_capped": False,
    "auction_goes_round": False,
    "moon_min_bid": 4,
    "missed_moon_loses_game": False,
    "tie_to_earliest_seat": False,
    "moon_overcall": False,
    "deal_limit": 0,
}


def test_every_ruleset_field_after_the_first_version_has_a_value_meaning_as_before() -> None:
    added = {f.name for f in rules_pb2.Ruleset.DESCRIPTOR.fields if f.number >= 29}
    assert added == set(AS_BEFORE)
    assert codec.OPTIONS_ADDED_AFTER_V1 == AS_BEFORE
    assert all(getattr(engine.Ruleset(), name) == value for name, value in AS_BEFORE.items())


@pytest.mark.parametrize("preset", engine.preset_names())
def test_options_added_later_are_unset_in_every_preset_that_plays_as_before(preset: str) -> None:
    rules = engine.ruleset(preset)
    msg = codec.rules_to_proto(rules)
    for name, value in AS_BEFORE.items():
        assert msg.HasField(name) == (getattr(rules, name) != value), name
    assert codec.rules_from_proto(msg) == rules
    (created,) = engine.start(rules)
    assert codec.decode_event(codec.encode_event(created)[1]) == created


def test_hand_limit_is_an_override_like_any_option() -> None:
    msg = rules_pb2.Ruleset(preset="moon", hand_limit=1)
    assert codec.rules_overrides_from_proto(msg) == ("moon", {"hand_limit": 1})
    assert codec.rules_from_proto(msg) == engine.ruleset("moon", hand_limit=1)


def test_a_stored_ruleset_with_an_option_missing_is_refused() -> None:
    msg = codec.event_to_proto(GameCreated(engine.ruleset("texas42")))
    msg.game_created.rules.ClearField("min_bid")
    with pytest.raises(MalformedEvent, match="min_bid"):
        codec.event_from_proto(msg)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: events_pb2.Event(seq=3), "no kind"),
        (lambda: events_pb2.Event(hand_dealt=events_pb2.HandDealt(number=1)), "no deal"),
        (
            lambda: events_pb2.Event(widow_exchanged=events_pb2.WidowExchanged(seat=1)),
            "seat's form",
        ),
        (
            lambda: events_pb2.Event(tile_played=events_pb2.TilePlayed(seat=0, tile=28)),
            "not a tile",
        ),
        (
            lambda: events_pb2.Event(
                hand_dealt=events_pb2.HandDealt(
                    deal=events_pb2.Deal(seed=b"s", hands=[events_pb2.TileList(tiles=[3, 3])])
                )
            ),
            "twice",
        ),
        (lambda: events_pb2.Event(bid_placed=events_pb2.BidPlaced(seat=0)), "bid kind"),
        (lambda: events_pb2.Event(game_created=events_pb2.GameCreated()), "leaves out"),
    ],
)
def test_what_is_not_a_log_event_is_refused(make: Any, match: str) -> None:
    with pytest.raises(MalformedEvent, match=match):
        codec.event_from_proto(make())


def test_a_seat_form_hand_dealt_is_not_a_log_event() -> None:
    state = engine.replay(engine.start(engine.ruleset("moon")))
    (dealt,) = engine.decide(state, Deal(b"x"))
    msg = codec.redact_event(dealt, state, 0)
    with pytest.raises(MalformedEvent, match="seat's form"):
        codec.event_from_proto(msg)


def test_a_payload_that_is_not_an_event_is_refused() -> None:
    with pytest.raises(MalformedEvent):
        codec.decode_event(b"\xff\xff\xff")


@pytest.mark.parametrize(
    ("policy", "number"),
    [
        ("auto_play", events_pb2.TIMEOUT_POLICY_AUTO_PLAY),
        ("forfeit", events_pb2.TIMEOUT_POLICY_FORFEIT),
    ],
)
def test_clock_expired_round_trips_with_its_policy(policy: str, number: int) -> None:
    event = ClockExpired(2, policy)
    msg = codec.event_to_proto(event, 17)
    assert msg.WhichOneof("kind") == "clock_expired" == codec.event_kind(event)
    assert (msg.clock_expired.seat, msg.clock_expired.policy) == (2, number)
    assert codec.decode_event(codec.encode_event(event)[1]) == event
    assert codec.event_from_proto(msg) == event


@pytest.mark.parametrize(
    ("policy", "match"),
    [(0, "ClockExpired.policy is unspecified"), (7, "ClockExpired.policy is unknown value 7")],
)
def test_a_clock_expired_without_a_known_policy_is_refused(policy: int, match: str) -> None:
    msg = events_pb2.Event(
        clock_expired=events_pb2.ClockExpired(seat=1, policy=policy)  # type: ignore[arg-type]
    )
    with pytest.raises(MalformedEvent, match=match):
        codec.event_from_proto(msg)


def test_clock_expired_is_public_the_same_for_every_seat() -> None:
    state = engine.replay(engine.start(engine.ruleset("moon")))
    state = engine.evolve(state, engine.decide(state, Deal(b"x"))[0])
    event = ClockExpired(0, "forfeit")
    for seat in _seats(state.rules):
        assert codec.redact_event(event, state, seat, 5) == codec.event_to_proto(event, 5)


def test_every_timeout_policy_is_an_enum_value_and_back() -> None:
    enum = events_pb2.TimeoutPolicy.DESCRIPTOR
    named = {
        codec._choice_from_proto(enum, v.number, "policy", MalformedEvent)
        for v in enum.values
        if v.number
    }
    assert named == set(engine.TIMEOUT_POLICIES)


# ---------------------------------------------------------------- events: the seat form


TILE_FIELDS = {
    ("HandDealt", "own_hand"),
    ("TileList", "tiles"),
    ("Deal", "rest"),
    ("WidowExchanged", "taken"),
    ("WidowExchanged", "discard"),
    ("TilePlayed", "tile"),
    ("SeatView", "hand"),
    ("SeatView", "discard"),
    ("Play", "tile"),
    ("ExchangeWidow", "discard"),
    ("PlayTile", "tile"),
}
"""Every field that holds tiles, as (message, field)."""


def _tiles_in(msg: Message) -> set[int]:
    """Every tile a message of any kind mentions, wherever it sits."""
    found: set[int] = set()
    for fd, value in msg.ListFields():
        values = list(value) if fd.is_repeated else [value]
        if fd.message_type is not None:
            for sub in values:
                found |= _tiles_in(sub)
        elif (msg.DESCRIPTOR.name, fd.name) in TILE_FIELDS:
            found |= set(values)
    return found


def test_the_tile_walker_knows_every_tile_field() -> None:
    # Every uint32 field whose comment speaks of tiles is in TILE_FIELDS: a new tile field
    # must be added there, or the leak tests below would not look at it.
    documented = set()
    for name in ("actions", "events", "view"):
        source = (ROOT / "proto" / "boneyard" / "v1" / f"{name}.proto").read_text()
        for message, body in re.findall(
            r"^message (\w+) \{\n(.*?)^\}", source, re.DOTALL | re.MULTILINE
        ):
            fields = re.findall(
                r"((?:[ \t]*//[^\n]*\n)+)\s*(?:optional |repeated )?uint32 (\w+) =", body
            )
            for comment, field_name in fields:
                if re.search(r"\btiles?\b", comment, re.IGNORECASE) and "number of" not in comment:
                    documented.add((message, field_name))
    assert documented == TILE_FIELDS


def _played_so_far(state: GameState | None) -> int:
    """Tiles played in the current hand (public when played)."""
    if state is None or state.hand is None:
        return 0
    hand = state.hand
    played = engine.tileset(t for _, t in hand.trick)
    for trick in hand.tricks:
        played |= engine.tileset(t for _, t in trick.plays)
    return played


def _may_know(step: Step, seat: int | None) -> int:
    """Tiles ``seat`` may know once the event has happened: its own tiles (before and after
    the event, so a widow exchange counts) and every tile played this hand."""
    known = _played_so_far(step.before) | _played_so_far(step.after)
    if isinstance(step.event, TilePlayed):
        known |= 1 << step.event.tile
    if seat is not None:
        for state in (step.before, step.after):
            if state is not None and state.hand is not None:
                known |= state.hand.hands[seat] | state.hand.dealt[seat]
    return known


def _seats(rules: Ruleset) -> list[int | None]:
    return [*range(rules.players), None]


def test_no_seat_form_shows_a_tile_the_seat_may_not_know(games: list[Game]) -> None:
    for game in games:
        for step in game.steps:
            for seat in _seats(game.rules):
                msg = codec.redact_event(step.event, step.before, seat, step.seq)
                assert msg.seq == step.seq
                assert msg.WhichOneof("kind") == codec.event_kind(step.event)
                shown = engine.tileset(_tiles_in(msg))
                leaked = shown & ~_may_know(step, seat)
                assert not leaked, (
                    f"{game.rules.name} seat {seat} sees {engine.format_tiles(leaked)} "
                    f"in {step.event}"
                )


def test_the_seat_form_of_a_deal_is_the_own_hand_and_the_sizes(games: list[Game]) -> None:
    for game in games:
        for step in game.steps:
            event = step.event
            if not isinstance(event, HandDealt):
                continue
            for seat in _seats(game.rules):
                msg = codec.redact_event(event, step.before, seat)
                dealt = msg.hand_dealt
                assert not dealt.HasField("deal")
                assert event.seed not in msg.SerializeToString()
                own = event.hands[seat] if seat is not None else 0
                assert list(dealt.own_hand) == list(engine.iter_tiles(own))
                assert list(dealt.hand_sizes) == [h.bit_count() for h in event.hands]
                assert dealt.rest_size == event.rest.bit_count()
                assert (dealt.number, dealt.dealer) == (event.number, event.dealer)


def test_only_the_bidder_sees_what_it_took_from_the_widow_and_laid_out(games: list[Game]) -> None:
    exchanges = [(g, s) for g in games for s in g.steps if isinstance(s.event, WidowExchanged)]
    assert exchanges
    for game, step in exchanges:
        event = step.event
        assert isinstance(event, WidowExchanged)
        for seat in _seats(game.rules):
            seen = codec.redact_event(event, step.before, seat).widow_exchanged
            assert seen.seat == event.seat
            if seat == event.seat:
                assert (seen.taken, seen.discard) == (event.taken, event.discard)
            else:
                assert not seen.HasField("taken") and not seen.HasField("discard")


def test_public_events_are_the_same_for_every_seat(games: list[Game]) -> None:
    for game in games:
        for step in game.steps:
            if isinstance(step.event, (HandDealt, WidowExchanged)):
                continue
            log_form = codec.event_to_proto(step.event, step.seq)
            for seat in _seats(game.rules):
                assert codec.redact_event(step.event, step.before, seat, step.seq) == log_form


def test_plays_on_a_hidden_trick_bid_stay_public_when_played(games: list[Game]) -> None:
    hidden = [
        (g, s)
        for g in games
        for s in g.steps
        if isinstance(s.event, TilePlayed) and engine.view(s.after, None).tricks_hidden
    ]
    assert hidden, "no 84+ hand with face-down tricks was played"
    for game, step in hidden:
        assert isinstance(step.event, TilePlayed)
        for seat in _seats(game.rules):
            seen = codec.redact_event(step.event, step.before, seat).tile_played
            assert (seen.seat, seen.tile) == (step.event.seat, step.event.tile)


def test_redact_refuses_a_seat_not_at_the_table() -> None:
    state = engine.replay(engine.start(engine.ruleset("moon")))
    (dealt,) = engine.decide(state, Deal(b"x"))
    with pytest.raises(ValueError, match="no seat 3"):
        codec.redact_event(dealt, state, 3)


def test_redact_refuses_an_event_it_does_not_know() -> None:
    @dataclass(frozen=True)
    class SecretRevealed:
        tiles: int

    state = engine.replay(engine.start(engine.ruleset("moon")))
    with pytest.raises(TypeError, match="no seat form"):
        codec.redact_event(SecretRevealed(5), state, 0)  # type: ignore[arg-type]


# ---------------------------------------------------------------- views


def test_no_view_shows_a_tile_the_seat_may_not_know(games: list[Game]) -> None:
    for game in games:
        for step in game.steps[:: max(1, len(game.steps) // 200)]:
            state = step.after
            for seat in _seats(game.rules):
                msg = codec.view_to_proto(engine.view(state, seat), step.seq)
                shown = engine.tileset(_tiles_in(msg))
                known = _may_know(step, seat)
                assert not shown & ~known, f"{game.rules.name} seat {seat}: {msg}"


def test_the_view_carries_the_engine_view(games: list[Game]) -> None:
    for game in games[:: len(SEEDS)]:
        for step in game.steps:
            for seat in _seats(game.rules):
                view = engine.view(step.after, seat)
                msg = codec.view_to_proto(view, step.seq)
                assert msg.version == step.seq
                assert view_pb2.Phase.Name(msg.phase) == f"PHASE_{view.phase.value.upper()}"
                assert (msg.seat if msg.HasField("seat") else None) == view.seat
                assert (msg.turn if msg.HasField("turn") else None) == view.turn
                assert (msg.winner if msg.HasField("winner") else None) == view.winner
                assert (msg.discard if msg.HasField("discard") else None) == view.discard
                assert list(msg.hand) == view.hand_tiles()
                assert tuple(msg.hand_sizes) == view.hand_sizes
                assert tuple(msg.scores) == view.scores
                assert [tuple(t.seats) for t in msg.teams] == list(view.teams)
                assert [
                    (b.seat, codec.bid_from_proto(b.bid) if b.HasField("bid") else None)
                    for b in msg.bids
                ] == list(view.bids)
                assert [(p.seat, p.tile) for p in msg.current_trick] == list(view.trick)
                assert len(msg.completed_tricks) == len(view.tricks)
                for shown, trick in zip(msg.completed_tricks, view.tricks, strict=True):
                    assert shown.hidden == (trick.plays is None) == view.tricks_hidden
                    assert [(p.seat, p.tile) for p in shown.plays] == list(trick.plays or ())
                    assert (shown.points if shown.HasField("points") else None) == trick.points
                assert tuple(msg.taken) == (view.taken or ())
                if view.contract is not None:
                    assert codec.contract_from_proto(msg.contract) == view.contract
                else:
                    assert not msg.HasField("contract")
                legal = (
                    [codec.action_from_proto(a, seat) for a in msg.legal_actions]
                    if seat is not None
                    else []
                )
                assert legal == list(view.legal)
                assert [
                    codec.event_from_proto(events_pb2.Event(hand_scored=r)) for r in msg.results
                ] == list(view.results)
                assert msg.rules == codec.rules_to_proto(game.rules)


def test_every_view_of_every_preset_decodes_to_the_engine_view_it_was_made_from(
    games: list[Game],
) -> None:
    """``view_from_proto`` is the inverse of ``view_to_proto``: a client's bot reasons on the
    very engine view the server made (the ruleset included), whatever the seat and moment."""
    for game in games:
        for step in game.steps:
            for seat in _seats(game.rules):
                view = engine.view(step.after, seat)
                wire = codec.view_to_proto(view, step.seq).SerializeToString()
                assert codec.view_from_proto(view_pb2.SeatView.FromString(wire)) == view


def test_a_view_carries_options_its_preset_does_not_say() -> None:
    rules = engine.ruleset("texas42-house", nello_doubles="own_suit", min_bid=32)
    msg = codec.view_to_proto(engine.view(engine.replay(engine.start(rules)), 0), 1)
    assert msg.rules.nello_doubles == rules_pb2.NELLO_DOUBLES_OWN_SUIT
    assert msg.rules.min_bid == 32
    assert codec.view_from_proto(msg).rules == rules


def _a_view() -> view_pb2.SeatView:
    state = engine.replay(engine.start(engine.ruleset("texas42")))
    for event in engine.decide(state, Deal(b"view")):
        state = engine.evolve(state, event)
    return codec.view_to_proto(engine.view(state, state.hand.turn), 2)  # type: ignore[union-attr]


def test_a_view_without_its_ruleset_is_refused() -> None:
    msg = _a_view()
    msg.ClearField("rules")
    with pytest.raises(codec.MalformedView, match="ruleset"):
        codec.view_from_proto(msg)


def test_a_view_with_a_tile_out_of_range_is_refused() -> None:
    msg = _a_view()
    msg.hand.append(28)
    with pytest.raises(codec.MalformedView, match="not a tile"):
        codec.view_from_proto(msg)


def test_a_view_with_plays_face_down_has_no_engine_form() -> None:
    msg = _a_view()
    msg.current_trick.add(seat=1, tile=0, face_down=True)
    with pytest.raises(codec.MalformedView, match="face down"):
        codec.view_from_proto(msg)


def test_a_view_whose_seat_is_not_at_the_table_is_refused() -> None:
    msg = _a_view()
    msg.seat = 4
    with pytest.raises(codec.MalformedView, match="seat 4"):
        codec.view_from_proto(msg)


# ---------------------------------------------------------------- actions


def test_every_legal_action_round_trips(games: list[Game]) -> None:
    for game in games:
        for _, seat, legal in game.decisions:
            for command in legal:
                msg = codec.action_to_proto(command)
                wire = actions_pb2.Action.FromString(msg.SerializeToString())
                assert codec.action_from_proto(wire, seat) == command


def test_the_seat_of_an_action_is_the_callers() -> None:
    msg = codec.action_to_proto(engine.Resign(3))
    assert codec.action_from_proto(msg, 3) == engine.Resign(3)
    msg = codec.action_to_proto(PlayTile(0, engine.parse_tile("6-4")))
    assert codec.action_from_proto(msg, 2) == PlayTile(2, engine.parse_tile("6-4"))


def test_a_moon_bid_may_leave_out_its_amount() -> None:
    msg = actions_pb2.Action(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_MOON))
    assert codec.action_from_proto(msg, 1) == PlaceBid(1, Bid.moon())


def test_tile_zero_is_the_double_blank_when_given() -> None:
    msg = actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=0))
    assert codec.action_from_proto(msg, 0) == PlayTile(0, engine.parse_tile("0-0"))


A = actions_pb2.Action
MALFORMED_ACTIONS: list[tuple[str, actions_pb2.Action, str]] = [
    ("no kind set", A(), "none is set"),
    ("play with no tile", A(play_tile=actions_pb2.PlayTile()), "needs the tile"),
    ("tile 28", A(play_tile=actions_pb2.PlayTile(tile=28)), "28 is not a tile"),
    ("tile 2**32-1", A(play_tile=actions_pb2.PlayTile(tile=2**32 - 1)), "not a tile"),
    (
        "exchange with no discard",
        A(exchange_widow=actions_pb2.ExchangeWidow()),
        "needs the discard",
    ),
    ("discard 99", A(exchange_widow=actions_pb2.ExchangeWidow(discard=99)), "99 is not a tile"),
    ("bid kind unspecified", A(bid=rules_pb2.Bid(amount=30)), "BID_KIND_UNSPECIFIED"),
    (
        "bid kind unknown",
        A(bid=rules_pb2.Bid(kind=99, amount=30)),  # type: ignore[arg-type]
        "99 \\(unknown\\)",
    ),
    (
        "points bid without amount",
        A(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_POINTS)),
        "needs an amount",
    ),
    ("moon worth 5", A(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_MOON, amount=5)), "worth 21"),
    (
        "contract kind unspecified",
        A(declare_contract=rules_pb2.Contract()),
        "CONTRACT_KIND_UNSPECIFIED",
    ),
    (
        "contract kind unknown",
        A(declare_contract=rules_pb2.Contract(kind=42)),  # type: ignore[arg-type]
        "42 \\(unknown\\)",
    ),
    (
        "trump contract without trump",
        A(declare_contract=rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_TRUMP)),
        "needs a trump",
    ),
    (
        "trump unknown",
        A(
            declare_contract=rules_pb2.Contract(
                kind=rules_pb2.CONTRACT_KIND_TRUMP,
                trump=10,  # type: ignore[arg-type]
            )
        ),
        "10 \\(unknown\\)",
    ),
    (
        "nello with a trump",
        A(
            declare_contract=rules_pb2.Contract(
                kind=rules_pb2.CONTRACT_KIND_NELLO, trump=rules_pb2.TRUMP_SIXES
            )
        ),
        "nello has no trump",
    ),
]


@pytest.mark.parametrize(
    ("action", "match"),
    [(a, m) for _, a, m in MALFORMED_ACTIONS],
    ids=[i for i, _, _ in MALFORMED_ACTIONS],
)
def test_a_malformed_action_is_refused_with_a_reason(
    action: actions_pb2.Action, match: str
) -> None:
    with pytest.raises(MalformedAction, match=match):
        codec.action_from_proto(action, 0)


def test_malformed_is_a_value_error_apart_from_the_engines_illegal_action() -> None:
    assert issubclass(MalformedAction, ValueError)
    assert not issubclass(MalformedAction, engine.IllegalAction)


def test_a_well_formed_action_the_rules_refuse_is_left_to_the_engine() -> None:
    # Tricks are not a Texas 42 bid, but that is the engine's call (FAILED_PRECONDITION).
    msg = A(bid=rules_pb2.Bid(kind=rules_pb2.BID_KIND_TRICKS, amount=5))
    assert codec.action_from_proto(msg, 0) == PlaceBid(0, Bid.tricks(5))
    msg = A(declare_contract=rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_SEVENS))
    assert codec.action_from_proto(msg, 0) == DeclareContract(0, Contract.sevens())


def test_every_trump_maps_to_the_engines() -> None:
    for trump in range(9):
        msg = codec.contract_to_proto(Contract.of_trump(trump))
        assert codec.contract_from_proto(msg) == Contract.of_trump(trump)
    assert codec.contract_to_proto(Contract.of_trump(6)).trump == rules_pb2.TRUMP_SIXES
    assert (
        codec.contract_to_proto(Contract.of_trump(engine.DOUBLES)).trump == rules_pb2.TRUMP_DOUBLES
    )
    assert (
        codec.contract_to_proto(Contract.of_trump(engine.FOLLOW_ME)).trump
        == rules_pb2.TRUMP_FOLLOW_ME
    )


# ---------------------------------------------------------------- rulesets


@pytest.mark.parametrize("preset", engine.preset_names())
def test_every_preset_round_trips(preset: str) -> None:
    rules = engine.ruleset(preset)
    msg = codec.rules_to_proto(rules)
    assert msg.preset == preset
    assert codec.rules_from_proto(msg) == rules
    assert codec.rules_from_proto(rules_pb2.Ruleset(preset=preset)) == rules


def test_every_engine_option_has_a_field_and_every_field_an_option() -> None:
    fields = set(rules_pb2.Ruleset.DESCRIPTOR.fields_by_name) - {"preset"}
    opener = {
        f.name for f in rules_pb2.Ruleset.DESCRIPTOR.oneofs_by_name["first_hand_opener"].fields
    }
    options = set(engine.option_names())
    assert fields - opener == options - {"first_hand_opener"}
    assert "first_hand_opener" in options


def test_every_option_enum_value_names_an_engine_choice() -> None:
    choices: dict[str, tuple[str, ...]] = engine.rulesets._CHOICES
    for name, allowed in choices.items():
        enum = rules_pb2.Ruleset.DESCRIPTOR.fields_by_name[name].enum_type
        assert enum is not None, f"option {name} is not an enum field"
        named = {
            codec._choice_from_proto(enum, v.number, name, MalformedRules)
            for v in enum.values
            if v.number
        }
        assert named == set(allowed), name


def test_only_the_options_set_override_the_preset() -> None:
    msg = rules_pb2.Ruleset(preset="moon", widow=rules_pb2.WIDOW_RULE_MAY_EXCHANGE, opener_seat=2)
    assert codec.rules_overrides_from_proto(msg) == (
        "moon",
        {"widow": "may_exchange", "first_hand_opener": "2"},
    )
    assert codec.rules_from_proto(msg) == engine.ruleset(
        "moon", widow="may_exchange", first_hand_opener="2"
    )


def test_an_option_set_to_its_default_value_is_still_an_override() -> None:
    msg = rules_pb2.Ruleset(preset="texas42-house", nello=False, min_bid=30)
    assert codec.rules_overrides_from_proto(msg)[1] == {"min_bid": 30, "nello": False}


def test_an_empty_preset_is_texas42() -> None:
    assert codec.rules_from_proto(rules_pb2.Ruleset()) == engine.ruleset("texas42")


def test_the_holder_of_one_blank_opens_when_asked() -> None:
    msg = rules_pb2.Ruleset(preset="texas42-redeal", opener_holds_one_blank=True)
    assert codec.rules_from_proto(msg).first_hand_opener == "holds_1_0"


@pytest.mark.parametrize(
    ("msg", "match"),
    [
        (rules_pb2.Ruleset(all_pass=rules_pb2.ALL_PASS_UNSPECIFIED), "all_pass is unspecified"),
        (
            rules_pb2.Ruleset(preset="moon", widow=7),  # type: ignore[arg-type]
            "widow is unknown value 7",
        ),
        (rules_pb2.Ruleset(opener_holds_one_blank=False), "may only be true"),
    ],
)
def test_an_option_value_no_ruleset_has_is_malformed(msg: rules_pb2.Ruleset, match: str) -> None:
    with pytest.raises(MalformedRules, match=match):
        codec.rules_from_proto(msg)


@pytest.mark.parametrize(
    ("msg", "match"),
    [
        (rules_pb2.Ruleset(preset="checkers"), "no preset 'checkers'"),
        (rules_pb2.Ruleset(preset="moon", players=4), "Moon is for 3 players"),
        (rules_pb2.Ruleset(preset="moon", nello=True), "Texas 42 options"),
        (rules_pb2.Ruleset(opener_seat=9), "first_hand_opener='9'"),
    ],
)
def test_a_nonsense_ruleset_is_the_engines_ruleset_error(
    msg: rules_pb2.Ruleset, match: str
) -> None:
    with pytest.raises(engine.RulesetError, match=match):
        codec.rules_from_proto(msg)


# ---------------------------------------------------------------- the tile table


def test_the_tile_table_in_rules_proto_is_the_engines() -> None:
    source = (ROOT / "proto" / "boneyard" / "v1" / "rules.proto").read_text()
    table = dict(re.findall(r"(\d-\d) = (\d+)", source))
    assert len(table) == 28
    for name, number in table.items():
        assert engine.parse_tile(name) == int(number)
        assert engine.tile_name(int(number)) == name
