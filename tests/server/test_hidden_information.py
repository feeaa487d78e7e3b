"""No seat learns a hidden tile before the rules reveal it, by any RPC or stream (DESIGN.md
quality bars; RULES.md section 4).

Whole games are played through the real API (tests/server/conftest.py). At every step every
seat and a spectator ask for their view, the acting seat keeps its SubmitAction answer, and
every seat and a spectator follow the game on a WatchGame stream from version 0 to its end, so
that each receiver gets a view at every version. Everything received is then walked
generically, field by field, and checked against what the receiver may know at that version,
worked out from the server's own log (the log form, with the whole deal: the store holds it).

What a receiver may know at version v (its own model, not ``engine.view``):
- a seat: the tiles it holds now, and (Moon) the tile it laid out if it is the bidder;
- everyone: the tiles of the trick in progress, and of the tricks of this hand already won,
  unless those lie face down (Texas 42, bid of 84 or more, hide_tricks_on_mark_bids).
Never another seat's unplayed tiles, the widow, another's discard, the tiles out of play, nor
any deal's seed.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from api_helpers import RPC_TIMEOUT, Client, RunningServer, Table, log_events, rpc_error
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import actions_pb2, competition_pb2, game_service_pb2, rules_pb2, view_pb2
from boneyard.engine import BidKind, ContractKind

# ---------------------------------------------------------------- walking messages

TILE_NAMES = frozenset({"tile", "tiles", "hand", "own_hand", "discard", "taken", "rest", "widow"})
"""uint32 fields with these names hold tiles, whatever message they are in..."""

COUNTS_NAMED_LIKE_TILES = frozenset(
    {("boneyard.v1.SeatView", "taken"), ("boneyard.v1.HandScored", "taken")}
)
"""...except these, which are per-team points (or Moon tricks)."""

NOT_TILES = frozenset(
    {
        "seat",
        "seats",
        "number",
        "dealer",
        "hand_sizes",
        "rest_size",
        "amount",
        "next_dealer",
        "declarer",
        "sitting_out",
        "points",
        "team",
        "bidder",
        "winner",
        "players",
        "turn",
        "hand_number",
        "tricks_won",
        "min_bid",
        "moon_min_bid",
        "max_opening_marks",
        "marks_to_win",
        "points_to_win",
        "splash_marks",
        "opener_seat",
        "hand_limit",
        "deal_limit",
        "per_move_ms",
        "bank_ms",
        "bank_remaining_ms",
        "seekers",
        "deals",
        "rotation",
        "deal",
        "games_total",
        "games_finished",
        "games",
        "wins",
        "max_games_per_entrant",
        "rounds",
        "rounds_paired",
        "round",
        "draws",
        "losses",
        "byes",
        "code",
    }
)
"""Every other uint32 field the API sends (a new one fails the guard test below until it is
sorted into tiles or not)."""


def _is_tile_field(message: Descriptor, fd: FieldDescriptor) -> bool:
    return (
        fd.type == FieldDescriptor.TYPE_UINT32
        and (fd.name in TILE_NAMES or fd.name.endswith("_tile") or fd.name.endswith("_tiles"))
        and (message.full_name, fd.name) not in COUNTS_NAMED_LIKE_TILES
    )


@dataclass
class Found:
    tiles: dict[int, list[str]] = field(default_factory=dict)
    """Each tile mentioned, and the paths of the fields it was found in."""
    blobs: list[tuple[str, bytes]] = field(default_factory=list)
    """Every bytes field, and every string field (encoded)."""


def walk(message: Message, path: str = "", found: Found | None = None) -> Found:
    """Every tile and every bytes or string value in a message, wherever it sits."""
    found = found if found is not None else Found()
    for fd, value in message.ListFields():
        values = list(value) if fd.is_repeated else [value]
        where = f"{path}.{fd.name}" if path else fd.name
        if fd.message_type is not None:
            for i, sub in enumerate(values):
                walk(sub, f"{where}[{i}]" if fd.is_repeated else where, found)
        elif _is_tile_field(message.DESCRIPTOR, fd):
            for tile in values:
                found.tiles.setdefault(tile, []).append(where)
        elif fd.type == FieldDescriptor.TYPE_BYTES:
            found.blobs.extend((where, v) for v in values)
        elif fd.type == FieldDescriptor.TYPE_STRING:
            found.blobs.extend((where, v.encode()) for v in values)
    return found


def _uint32_fields(
    descriptor: Descriptor, seen: set[str]
) -> Iterator[tuple[Descriptor, FieldDescriptor]]:
    if descriptor.full_name in seen:
        return
    seen.add(descriptor.full_name)
    for fd in descriptor.fields:
        if fd.message_type is not None:
            yield from _uint32_fields(fd.message_type, seen)
        elif fd.type == FieldDescriptor.TYPE_UINT32:
            yield descriptor, fd


def test_every_uint32_field_the_api_sends_is_known_as_a_tile_or_not() -> None:
    seen: set[str] = set()
    unsorted = []
    tile_fields = set()
    methods = [
        *game_service_pb2.DESCRIPTOR.services_by_name["GameService"].methods,
        *competition_pb2.DESCRIPTOR.services_by_name["LobbyService"].methods,
        *competition_pb2.DESCRIPTOR.services_by_name["TournamentService"].methods,
    ]
    for method in methods:
        for message, fd in _uint32_fields(method.output_type, seen):
            if _is_tile_field(message, fd):
                tile_fields.add((message.name, fd.name))
            elif (
                fd.name not in NOT_TILES
                and (message.full_name, fd.name) not in COUNTS_NAMED_LIKE_TILES
            ):
                unsorted.append(f"{message.full_name}.{fd.name}")
    assert unsorted == [], f"sort these into TILE_NAMES or NOT_TILES: {unsorted}"
    assert {
        ("Play", "tile"),
        ("SeatView", "hand"),
        ("SeatView", "discard"),
        ("HandDealt", "own_hand"),
        ("TileList", "tiles"),
        ("Deal", "rest"),
        ("WidowExchanged", "taken"),
        ("WidowExchanged", "discard"),
        ("TilePlayed", "tile"),
        ("PlayTile", "tile"),
        ("ExchangeWidow", "discard"),
    } <= tile_fields


def test_the_walker_finds_tiles_anywhere() -> None:
    response = game_service_pb2.WatchGameResponse(
        view=view_pb2.SeatView(
            hand=[1, 2],
            current_trick=[view_pb2.Play(seat=3, tile=27)],
            taken=[30, 12],
            legal_actions=[actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=0))],
        )
    )
    response.event.hand_dealt.deal.hands.add(tiles=[5])
    response.event.hand_dealt.deal.seed = b"secret"
    found = walk(response)
    assert set(found.tiles) == {0, 1, 2, 5, 27}
    assert found.tiles[27] == ["view.current_trick[0].tile"]
    assert ("event.hand_dealt.deal.seed", b"secret") in found.blobs


# ---------------------------------------------------------------- what each may know


@dataclass
class Knowledge:
    """What each receiver may know at one version, and where every tile is (for messages)."""

    allowed: dict[int | None, int]
    where: dict[int, str]
    tricks_hidden: bool


def knowledge_by_version(
    log: list[tuple[int, engine.Event]],
) -> tuple[dict[int, Knowledge], set[bytes]]:
    """From the log form: what each seat and the spectator may know after each event, and every
    deal's seed."""
    rules: engine.Ruleset | None = None
    hold: list[int] = []
    rest = 0
    bid: engine.Bid | None = None
    declared = False
    laid_out: tuple[int, int] | None = None  # (bidder, discard)
    trick: list[int] = []
    won: list[int] = []
    seeds: set[bytes] = set()
    result: dict[int, Knowledge] = {}
    for seq, event in log:
        if isinstance(event, engine.GameCreated):
            rules = event.rules
        elif isinstance(event, engine.HandDealt):
            hold, rest = list(event.hands), event.rest
            bid, declared, laid_out, trick, won = None, False, None, [], []
            seeds.add(event.seed)
        elif isinstance(event, engine.AuctionWon):
            bid = event.bid
        elif isinstance(event, engine.WidowExchanged):
            hold[event.seat] = hold[event.seat] & ~(1 << event.discard) | 1 << event.taken
            rest = 1 << event.discard
            laid_out = (event.seat, event.discard)
        elif isinstance(event, engine.ContractDeclared):
            declared = True
        elif isinstance(event, engine.TilePlayed):
            assert hold[event.seat] >> event.tile & 1
            hold[event.seat] &= ~(1 << event.tile)
            trick.append(event.tile)
        elif isinstance(event, engine.TrickWon):
            won += trick
            trick = []
        assert rules is not None
        hidden = (
            not rules.is_moon
            and rules.hide_tricks_on_mark_bids
            and bid is not None
            and bid.kind in (BidKind.MARKS, BidKind.PLUNGE, BidKind.SPLASH)
            and bid.amount >= 2
            and declared
        )
        public = _mask(trick) | (0 if hidden else _mask(won))
        allowed: dict[int | None, int] = {None: public}
        for seat in range(rules.players):
            allowed[seat] = public | (hold[seat] if hold else 0)
        if laid_out is not None:
            allowed[laid_out[0]] |= 1 << laid_out[1]
        where: dict[int, str] = {}
        for seat, tiles in enumerate(hold):
            for tile in engine.iter_tiles(tiles):
                where[tile] = f"in seat {seat}'s hand"
        for tile in engine.iter_tiles(rest):
            where[tile] = "the bidder's discard" if laid_out else "the widow / out of play"
        for tile in won:
            where.setdefault(tile, "in a trick won face down")
        result[seq] = Knowledge(allowed, where, hidden)
    return result, seeds


def _mask(tiles: list[int]) -> int:
    return sum(1 << t for t in set(tiles))


# ---------------------------------------------------------------- playing


def _pips(tile: int) -> tuple[int, int]:
    high = 0
    while (high + 1) * (high + 2) // 2 <= tile:
        high += 1
    return high, tile - high * (high + 1) // 2


def _best_suit(hand: list[int]) -> tuple[int, int]:
    counts = [sum(1 for t in hand if suit in _pips(t)) for suit in range(7)]
    suit = max(range(7), key=lambda s: counts[s])
    return suit, counts[suit]


@dataclass
class Strategy:
    """Random legal play, steered so that the hidden cases come up: in Texas 42 a bid of 84 on
    every other hand (tricks face down) and the special bids and contracts; in Moon a bidder
    who bids on a long suit, names it trump and plays its trumps (so that games end), and,
    where the rules allow, leaves the widow once."""

    rng: random.Random
    declined: bool = False

    def choose(self, view: view_pb2.SeatView, moon: bool) -> actions_pb2.Action:
        seat = view.seat
        commands = [(codec.action_from_proto(a, seat), a) for a in view.legal_actions]
        hand = list(view.hand)
        if not moon:
            marks_bid = any(
                entry.HasField("bid") and entry.bid.kind != rules_pb2.BID_KIND_POINTS
                for entry in view.bids
            )
            if view.phase == view_pb2.PHASE_BIDDING and view.hand_number % 2 == 1 and not marks_bid:
                big = [
                    a
                    for c, a in commands
                    if isinstance(c, engine.PlaceBid)
                    and c.bid.kind is BidKind.MARKS
                    and c.bid.amount >= 2
                ]
                if big:
                    return big[0]
            rare = [
                a
                for c, a in commands
                if (
                    isinstance(c, engine.PlaceBid)
                    and c.bid.kind in (BidKind.PLUNGE, BidKind.SPLASH)
                )
                or (
                    isinstance(c, engine.DeclareContract)
                    and c.contract.kind is not ContractKind.TRUMP
                )
            ]
            if rare and self.rng.random() < 0.5:
                return self.rng.choice(rare)
            return self.rng.choice([a for _, a in commands])
        suit, length = _best_suit(hand)
        if view.phase == view_pb2.PHASE_BIDDING:
            bids = [a for c, a in commands if isinstance(c, engine.PlaceBid)]
            passes = [a for c, a in commands if isinstance(c, engine.Pass)]
            return bids[0] if bids and (length >= 4 or not passes) else passes[0]
        if view.phase == view_pb2.PHASE_TRUMP:
            for c, a in commands:
                if isinstance(c, engine.DeclareContract) and c.contract.trump == suit:
                    return a
        if view.phase == view_pb2.PHASE_WIDOW:
            decline = [a for c, a in commands if isinstance(c, engine.DeclineWidow)]
            if decline and not self.declined:
                self.declined = True
                return decline[0]
        if (
            view.phase == view_pb2.PHASE_PLAY
            and view.bidder == seat
            and view.contract.trump
            and view.contract.trump <= 7
        ):
            trump = view.contract.trump - 1
            return max(
                (a for _, a in commands),
                key=lambda a: (trump in _pips(a.play_tile.tile), sum(_pips(a.play_tile.tile))),
            )
        return self.rng.choice([a for _, a in commands])


@dataclass
class Received:
    receiver: int | None
    version: int
    rpc: str
    message: Message


def _watch(
    client: Client, table: Table, receiver: int | None, into: list[Any], errors: list[Any]
) -> None:
    try:
        into.extend(client.watch(table, receiver, 0, timeout=120))
    except grpc.RpcError as error:  # reported by the test
        errors.append(error)


def _probe_errors(
    client: Client, table: Table, view: view_pb2.SeatView, make: Any, received: list[Received]
) -> None:
    """Try every tile the seat does not hold: the refusals must all read the same (the reason
    may not tell where a tile is), and change nothing."""
    held = set(view.hand)
    reasons = set()
    for tile in range(28):
        if tile in held:
            continue
        with rpc_error(grpc.StatusCode.FAILED_PRECONDITION) as caught:
            client.submit(table, view.seat, make(tile), view.version)
        reason = caught[0].details().replace(table.game_id, "<game>")
        reasons.add(reason.replace(engine.tile_name(tile), "<tile>"))
    assert len(reasons) == 1, reasons
    after = client.view(table, view.seat)
    assert after == view
    received.append(Received(view.seat, after.version, "GetView", after))


def play_game(client: Client, table: Table, strategy: Strategy) -> list[Received]:
    """Play the game to its end with every receiver watching; return everything received."""
    moon = table.rules.family == rules_pb2.FAMILY_MOON
    streams: dict[int | None, list[Any]] = {}
    errors: list[Any] = []
    threads = []
    for receiver in table.receivers:
        streams[receiver] = []
        thread = threading.Thread(
            target=_watch, args=(client, table, receiver, streams[receiver], errors), daemon=True
        )
        thread.start()
        threads.append(thread)

    received: list[Received] = []
    probed_play = probed_widow = False
    for _ in range(5000):
        # Every receiver's view, asked for all at once.
        asked = {receiver: client.view_future(table, receiver) for receiver in table.receivers}
        views = {receiver: future.result().view for receiver, future in asked.items()}
        received.extend(Received(r, view.version, "GetView", view) for r, view in views.items())
        if views[None].phase == view_pb2.PHASE_GAME_OVER:
            break
        seat = views[None].turn
        view = views[seat]
        if view.phase == view_pb2.PHASE_PLAY and not probed_play:
            probed_play = True
            _probe_errors(
                client,
                table,
                view,
                lambda t: actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=t)),
                received,
            )
        if view.phase == view_pb2.PHASE_WIDOW and not probed_widow:
            probed_widow = True
            _probe_errors(
                client,
                table,
                view,
                lambda t: actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=t)),
                received,
            )
        response = client.submit(table, seat, strategy.choose(view, moon), view.version)
        received.append(Received(seat, response.version, "SubmitAction", response))
    else:
        raise AssertionError("the game did not end")

    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), "a WatchGame stream did not end with the game"
    assert errors == []
    final = views[None].version
    for receiver, messages in streams.items():
        # A view at every version, for every receiver.
        assert [m.version for m in messages] == list(range(1, final + 1))
        received.extend(Received(receiver, m.version, "WatchGame", m) for m in messages)
        # A stream resumed in the middle is redacted the same way.
        resumed = list(client.watch(table, receiver, final // 2))
        assert [m.version for m in resumed] == list(range(final // 2 + 1, final + 1))
        received.extend(Received(receiver, m.version, "WatchGame (resumed)", m) for m in resumed)
    return received


# ---------------------------------------------------------------- the tests

PG = pytest.mark.postgres
GAMES = [
    pytest.param("sqlite", "texas42", {}, id="sqlite-texas42"),
    pytest.param("sqlite", "texas42-house", {}, id="sqlite-texas42-house"),
    pytest.param("sqlite", "texas42", {"players": 3}, id="sqlite-texas42-3-players"),  # out of play
    pytest.param("sqlite", "moon", {}, id="sqlite-moon"),
    pytest.param("sqlite", "moon-s1", {}, id="sqlite-moon-s1"),
    # What a receiver gets does not depend on the store; PostgreSQL plays the shorter games.
    pytest.param("postgresql", "texas42-house", {}, marks=PG, id="postgresql-texas42-house"),
    pytest.param("postgresql", "moon-s1", {}, marks=PG, id="postgresql-moon-s1"),
]


@pytest.mark.parametrize("backend_server, preset, options", GAMES, indirect=["backend_server"])
def test_nobody_receives_a_tile_it_may_not_know(
    backend_server: RunningServer, preset: str, options: dict[str, Any]
) -> None:
    server = backend_server
    client = Client(server.address)
    try:
        check_a_whole_game(server, client, preset, options)
    finally:
        client.close()


def check_a_whole_game(
    server: RunningServer, client: Client, preset: str, options: dict[str, Any]
) -> None:
    table = client.seated(preset, **options)
    rng_seed = random.randrange(1 << 32)
    received = play_game(client, table, Strategy(random.Random(rng_seed)))
    log = log_events(server, table.game_id)
    known, seeds = knowledge_by_version(log)
    kinds = {codec.event_kind(e) for _, e in log}
    assert "game_won" in kinds

    leaks = []
    for item in received:
        k = known[item.version]
        found = walk(item.message)
        allowed = k.allowed[item.receiver]
        for tile, paths in sorted(found.tiles.items()):
            if not allowed >> tile & 1:
                leaks.append(
                    f"{item.rpc} to {'the spectator' if item.receiver is None else f'seat {item.receiver}'} "
                    f"at version {item.version}: {engine.tile_name(tile)} ({k.where.get(tile, '?')}) "
                    f"in {', '.join(paths)}"
                )
        for path, blob in found.blobs:
            for seed in seeds:
                if seed in blob or seed.hex().encode() in blob.lower():
                    leaks.append(f"{item.rpc} at version {item.version}: a deal's seed in {path}")
            if path.endswith("seed_commitment"):
                assert blob in {hashlib.sha256(s).digest() for s in seeds}
        views = (
            [item.message] if isinstance(item.message, view_pb2.SeatView) else [item.message.view]
        )
        for view in views:
            assert view.version == item.version
            face_down = (
                view.tricks_hidden
                and not view.taken
                and all(
                    t.hidden and not t.plays and not t.HasField("points")
                    for t in view.completed_tricks
                )
            )
            if k.tricks_hidden and not face_down:
                # Face down: neither the tiles nor what they were worth.
                leaks.append(f"{item.rpc} at version {item.version}: tricks not face down")
    assert leaks == [], f"(strategy seed {rng_seed}, game {table.game_id})\n" + "\n".join(
        leaks[:20]
    )

    # The cases this test is here for did come up.
    if preset.startswith("texas42"):
        assert any(k.tricks_hidden for k in known.values()), "no hand of 84+ was played"
    if preset == "moon":
        assert "widow_exchanged" in kinds
    if preset == "moon-s1":
        assert "widow_declined" in kinds
    # Summaries show no tile at all.
    assert walk(client.game(table.game_id)).tiles == {}
    listed = client.stub.ListGames(game_service_pb2.ListGamesRequest(), timeout=RPC_TIMEOUT)
    assert walk(listed).tiles == {}


# ---------------------------------------------------------------- streams resumed


def _act(client: Client, table: Table, pick: Any) -> None:
    """The seat on turn takes the first of its legal actions ``pick`` accepts (else the first)."""
    seat = client.view(table, None).turn
    view = client.view(table, seat)
    chosen = next((a for a in view.legal_actions if pick(a)), view.legal_actions[0])
    client.submit(table, seat, chosen, view.version)


def test_face_down_tricks_stay_face_down_in_a_resumed_stream(server: RunningServer) -> None:
    """A seat's WatchGame from an earlier version re-sent the tiles of tricks its views
    already showed face down (bid of 84, hide_tricks_on_mark_bids): they come without their
    tiles or worth, as the views show them; the trick in progress and live plays keep theirs."""
    client = Client(server.address)
    try:
        # (every trick played: a set on the first trick must not end the hand)
        table = client.seated("texas42", end_hand_when_decided=False)
        live = client.watch(table, 1)  # follows from the start: sees every play as it happens
        def marks(action: actions_pb2.Action) -> bool:
            bid = action.bid
            return action.WhichOneof("kind") == "bid" and (bid.kind, bid.amount) == (
                rules_pb2.BID_KIND_MARKS,
                2,
            )

        _act(client, table, marks)  # the opening bid: 2 marks (84)
        while client.view(table, None).phase == view_pb2.PHASE_BIDDING:
            _act(client, table, lambda a: a.WhichOneof("kind") == "pass_bid")
        _act(client, table, lambda a: a.WhichOneof("kind") == "declare_contract")
        for _ in range(5):  # a trick and the lead of the next
            _act(client, table, lambda a: True)
        now = client.view(table, 1)
        assert now.tricks_hidden and len(now.completed_tricks) == 1 and len(now.current_trick) == 1
        log = log_events(server, table.game_id)
        won_at = next(seq for seq, e in log if isinstance(e, engine.TrickWon))

        stream = client.watch(table, 1)
        again = [next(stream) for _ in range(now.version)]
        stream.cancel()
        for message in again:
            kind = message.event.WhichOneof("kind")
            if message.version <= won_at and kind == "tile_played":
                assert message.event.tile_played.face_down, message
                assert message.event.tile_played.tile == 0
            if message.version <= won_at and kind == "trick_won":
                assert message.event.trick_won.face_down and message.event.trick_won.points == 0
            if message.version < won_at:
                assert all(p.face_down and p.tile == 0 for p in message.view.current_trick)
        last = again[-1]
        assert last.event.WhichOneof("kind") == "tile_played"
        assert not last.event.tile_played.face_down
        assert [p.face_down for p in last.view.current_trick] == [False]

        seen_live = [next(live) for _ in range(now.version)]
        live.cancel()
        plays = [m.event.tile_played for m in seen_live if m.event.WhichOneof("kind") == "tile_played"]
        assert len(plays) == 5 and not any(p.face_down for p in plays)
        assert {p.tile for p in plays} == {
            e.tile for _, e in log if isinstance(e, engine.TilePlayed)
        }
    finally:
        client.close()
