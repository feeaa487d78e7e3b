"""The gRPC API end to end: a real server on loopback (port 0), real channels, SQLite and
PostgreSQL (tests/server/conftest.py).

Every RPC, every documented status code with a message that says what was wrong, and proof that
a rejected request changes nothing (the game's version, its summary, every seat's view and the
stored log are the same afterwards). Also: retried request ids, racing writers and the live
event stream.
"""

from __future__ import annotations

import sys
import threading
import unicodedata
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from api_helpers import (
    RPC_TIMEOUT,
    Client,
    RunningServer,
    Table,
    bearer,
    log_events,
    rpc_error,
    state_at,
)
from grpc_health.v1 import health_pb2, health_pb2_grpc

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import (
    actions_pb2,
    game_pb2,
    game_service_pb2,
    rules_pb2,
    view_pb2,
)
from boneyard.server.errors import InvalidArgument
from boneyard.server.games.service import check_text

Code = grpc.StatusCode

PASS = actions_pb2.Action(pass_bid=actions_pb2.Pass())


def bid(kind: int, amount: int) -> actions_pb2.Action:
    return actions_pb2.Action(bid=rules_pb2.Bid(kind=kind, amount=amount))


def play(tile: int) -> actions_pb2.Action:
    return actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=tile))


def trump(suit: int) -> actions_pb2.Action:
    return actions_pb2.Action(
        declare_contract=rules_pb2.Contract(kind=rules_pb2.CONTRACT_KIND_TRUMP, trump=suit)
    )


def wire(message: Any) -> bytes:
    return message.SerializeToString(deterministic=True)


# ---------------------------------------------------------------- "nothing changed"


@dataclass(frozen=True)
class Snapshot:
    version: int
    summary: bytes
    views: dict[int | None, bytes]
    log: list[tuple[int, bytes]]


def snapshot(server: RunningServer, client: Client, table: Table) -> Snapshot:
    """Everything a rejected request must leave as it was."""
    summary = client.game(table.game_id)
    views = {}
    for receiver in table.receivers:
        if receiver is None or receiver in table.tokens:
            views[receiver] = wire(client.view(table, receiver))
    log = [(row.seq, bytes(row.payload)) for row in server.store.load_events(table.game_id)]
    return Snapshot(summary.version, wire(summary), views, log)


def assert_unchanged(before: Snapshot, server: RunningServer, client: Client, table: Table) -> None:
    after = snapshot(server, client, table)
    assert after.version == before.version
    assert after.log == before.log
    assert after.summary == before.summary
    assert after.views == before.views


def turn_of(client: Client, table: Table) -> tuple[int, view_pb2.SeatView]:
    spectator = client.view(table, None)
    assert spectator.HasField("turn")
    return spectator.turn, client.view(table, spectator.turn)


def advance_to(client: Client, table: Table, phase: int) -> view_pb2.SeatView:
    """Play first legal actions until the game reaches ``phase``; the view of the seat on turn."""
    for _ in range(200):
        seat, view = turn_of(client, table)
        if view.phase == phase:
            return view
        client.submit(table, seat, view.legal_actions[0], view.version)
    raise AssertionError(f"phase {phase} not reached")


def complete_rules(rules: rules_pb2.Ruleset) -> None:
    """Every option of a ruleset in a response is set (those added after record format v1 may
    be left out when they have their value-when-absent, so that old records encode alike)."""
    for name in engine.option_names():
        if name == "first_hand_opener":
            assert rules.WhichOneof("first_hand_opener") is not None
        elif name in codec.OPTIONS_ADDED_AFTER_V1:
            as_before = codec.OPTIONS_ADDED_AFTER_V1[name]
            assert rules.HasField(name) or codec.rules_from_proto(rules).options()[name] == as_before
        else:
            assert rules.HasField(name), f"option {name} is not set in {rules}"


# ---------------------------------------------------------------- CreateGame and GetGame


def test_create_texas42_from_the_default_preset(server: RunningServer, client: Client) -> None:
    response = client.stub.CreateGame(
        game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(), name="Friday 42"),
        timeout=RPC_TIMEOUT,
    )
    game = response.game
    assert str(uuid.UUID(response.game_id)) == response.game_id == game.game_id
    assert game.name == "Friday 42"
    assert game.status == game_pb2.GAME_STATUS_OPEN
    assert game.rules.preset == "texas42"
    assert game.rules.family == rules_pb2.FAMILY_TEXAS42
    assert game.rules.players == 4
    complete_rules(game.rules)
    assert [(s.seat, s.occupied, s.player_name) for s in game.seats] == [
        (seat, False, "") for seat in range(4)
    ]
    assert list(game.scores) == [0, 0]
    assert not game.HasField("winner")
    assert game.create_time.ToDatetime() <= game.update_time.ToDatetime()
    # The server deals the first hand at once: GameCreated, HandDealt.
    log = log_events(server, response.game_id)
    assert game.version == len(log) == 2
    assert isinstance(log[0][1], engine.GameCreated) and isinstance(log[1][1], engine.HandDealt)
    # The server's deal limit, the one thing it adds to a preset (every game ends).
    assert log[0][1].rules == engine.ruleset("texas42", deal_limit=engine.DEAL_LIMIT)
    assert client.game(response.game_id) == game


def test_create_with_option_overrides(server: RunningServer, client: Client) -> None:
    texas = client.create(
        "texas42-redeal", nello=True, marks_to_win=3, min_bid=31, opener_seat=1
    ).game_id
    rules = client.game(texas).rules
    complete_rules(rules)
    assert rules.preset == "texas42-redeal"
    assert (rules.nello, rules.marks_to_win, rules.min_bid, rules.opener_seat) == (True, 3, 31, 1)
    assert rules.all_pass == rules_pb2.ALL_PASS_REDEAL  # from the preset
    assert rules.plunge is False
    expected = engine.ruleset(
        "texas42-redeal",
        {
            "nello": True,
            "marks_to_win": 3,
            "min_bid": 31,
            "first_hand_opener": "1",
            "deal_limit": engine.DEAL_LIMIT,
        },
    )
    assert log_events(server, texas)[0][1].rules == expected

    moon = client.create(
        "moon", widow=rules_pb2.WIDOW_RULE_MAY_EXCHANGE, points_to_win=15, opener_seat=2
    ).game_id
    rules = client.game(moon).rules
    complete_rules(rules)
    assert rules.family == rules_pb2.FAMILY_MOON and rules.players == 3
    assert (rules.widow, rules.points_to_win, rules.opener_seat) == (
        rules_pb2.WIDOW_RULE_MAY_EXCHANGE,
        15,
        2,
    )
    assert rules.widow_before_trump is True  # from the preset
    # The chosen opener bids first: the dealer sits to its right.
    view = client.view(Table(moon, rules), None)
    assert (view.phase, view.dealer, view.turn) == (view_pb2.PHASE_BIDDING, 1, 2)
    assert list(view.hand_sizes) == [7, 7, 7]


NONSENSE_RULES: list[tuple[str, dict[str, Any], str]] = [
    ("texas43", {}, "no preset 'texas43'"),
    ("moon", {"players": 4}, "Moon is for 3 players"),
    ("texas42", {"players": 9}, "2 to 7 players"),
    ("texas42", {"widow": rules_pb2.WIDOW_RULE_MAY_EXCHANGE}, "Moon options"),
    ("moon", {"nello": True}, "Texas 42 options"),
    ("texas42", {"all_pass": rules_pb2.ALL_PASS_UNSPECIFIED}, "all_pass is unspecified"),
    ("texas42", {"all_pass": 77}, "unknown value 77"),
    ("moon", {"moon_trumps": 12}, "unknown value 12"),
    ("texas42", {"min_bid": 50}, "min_bid=50"),
    ("texas42", {"opener_seat": 4}, "first_hand_opener"),
    ("texas42", {"opener_holds_one_blank": False}, "may only be true"),
    ("texas42", {"plunge": True, "players": 3}, "plunge needs partnerships"),
    ("texas42", {"splash_marks": 3}, "splash is off"),
    ("moon", {"points_to_win": 0}, "points_to_win"),
    ("moon", {"moon_min_bid": 6}, "3, 4 or 5"),
    ("moon", {"widow": rules_pb2.WIDOW_RULE_NONE, "widow_before_trump": False}, "no widow"),
    ("texas42", {"splash_capped": True}, "splash is off"),
    ("texas42", {"moon_overcall": True}, "Moon options"),
]


def test_create_rejects_unknown_presets_and_nonsense_options(fresh_server: RunningServer) -> None:
    client = Client(fresh_server.address)
    try:
        for preset, options, message in NONSENSE_RULES:
            with rpc_error(Code.INVALID_ARGUMENT, message):
                client.create(preset, **options)
        with rpc_error(Code.INVALID_ARGUMENT, "at most 200"):
            client.create("texas42", name="x" * 201)
        # Nothing was made.
        listed = client.stub.ListGames(game_service_pb2.ListGamesRequest(), timeout=RPC_TIMEOUT)
        assert list(listed.games) == []
        assert fresh_server.store.list_games() == ([], None)
    finally:
        client.close()


def test_control_characters_in_kept_texts_are_invalid_argument(
    server: RunningServer, client: Client
) -> None:
    """NUL cannot be stored by PostgreSQL: it must be refused, on every backend, before the
    store sees it (not an UNKNOWN error with SQL in its message)."""
    with rpc_error(Code.INVALID_ARGUMENT, "game name", "control characters"):
        client.create("texas42", name="Friday\x0042")
    table = client.create("texas42")
    before = snapshot(server, client, table)
    for name in ("Ann\x00", "Ann\nBob"):
        with rpc_error(Code.INVALID_ARGUMENT, "player_name", "control characters"):
            client.take_seat(table.game_id, None, name)
    assert_unchanged(before, server, client, table)
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    before = snapshot(server, client, table)
    with rpc_error(Code.INVALID_ARGUMENT, "request_id", "control characters"):
        client.submit(table, seat, PASS, view.version, request_id="id\x00")
    assert_unchanged(before, server, client, table)


def test_a_kept_text_refuses_exactly_unicodes_control_characters() -> None:
    """The check is one search of a character class: it must be Unicode's category Cc, every
    character of it and nothing else (a player's name may be in any script)."""
    for code in range(sys.maxunicode + 1):
        text = f"Ann{chr(code)}"
        if unicodedata.category(text[-1]) == "Cc":
            with pytest.raises(InvalidArgument, match="control characters"):
                check_text(text, "player_name")
        else:
            check_text(text, "player_name")


def test_get_game_errors(client: Client) -> None:
    with rpc_error(Code.NOT_FOUND, "no game"):
        client.game(str(uuid.uuid4()))
    with rpc_error(Code.INVALID_ARGUMENT, "not a game id", "'g-17'"):
        client.game("g-17")
    with rpc_error(Code.INVALID_ARGUMENT, "not a game id"):
        client.game("")


# ---------------------------------------------------------------- ListGames


def test_list_games_pages_and_filters_by_status(fresh_server: RunningServer) -> None:
    client = Client(fresh_server.address)
    try:
        ids = [
            client.create(p, name=f"game {i}").game_id
            for i, p in enumerate(["texas42", "moon", "texas42-house", "moon-s1", "texas42"])
        ]

        def pages(size: int, status: int = 0) -> list[list[str]]:
            found, token = [], ""
            while True:
                page = client.stub.ListGames(
                    game_service_pb2.ListGamesRequest(
                        page_size=size, page_token=token, status=status
                    ),
                    timeout=RPC_TIMEOUT,
                )
                found.append([g.game_id for g in page.games])
                token = page.next_page_token
                if not token:
                    return found

        assert pages(2) == [ids[0:2], ids[2:4], ids[4:5]]
        assert pages(0) == [ids]  # the default page holds them all
        assert pages(5) == [ids]
        assert pages(1) == [[i] for i in ids]

        # Seat everyone at games 1 and 3: PLAYING; finish a game of one mark: FINISHED.
        for game_id in (ids[1], ids[3]):
            for _ in range(3):
                client.take_seat(game_id)
        short = client.seated("texas42", marks_to_win=1)
        client.play_to_end(short)
        ids.append(short.game_id)

        open_, playing, finished = (
            game_pb2.GAME_STATUS_OPEN,
            game_pb2.GAME_STATUS_PLAYING,
            game_pb2.GAME_STATUS_FINISHED,
        )
        assert pages(10, open_) == [[ids[0], ids[2], ids[4]]]
        assert pages(2, open_) == [[ids[0], ids[2]], [ids[4]]]
        assert pages(1, playing) == [[ids[1]], [ids[3]]]
        assert pages(10, finished) == [[ids[5]]]
        assert [game_id for page in pages(2) for game_id in page] == ids

        page = client.stub.ListGames(
            game_service_pb2.ListGamesRequest(status=playing), timeout=RPC_TIMEOUT
        )
        for game in page.games:
            assert game == client.game(game.game_id)
            assert game.status == playing
            assert all(s.occupied for s in game.seats)
        over = client.game(ids[5])
        assert over.status == finished and over.HasField("winner")

        with rpc_error(Code.INVALID_ARGUMENT, "page_size"):
            client.stub.ListGames(game_service_pb2.ListGamesRequest(page_size=-1))
        with rpc_error(Code.INVALID_ARGUMENT, "status"):
            client.stub.ListGames(game_service_pb2.ListGamesRequest(status=9))
        with rpc_error(Code.INVALID_ARGUMENT, "page cursor 'garbage'"):
            client.stub.ListGames(game_service_pb2.ListGamesRequest(page_token="garbage"))
    finally:
        client.close()


# ---------------------------------------------------------------- TakeSeat


def test_take_seat_explicit_lowest_free_and_full(server: RunningServer, client: Client) -> None:
    table = client.create("texas42")
    game_id = table.game_id

    taken = client.take_seat(game_id, 2, "Carla")
    assert taken.seat == 2 and taken.seat_token
    assert taken.game.status == game_pb2.GAME_STATUS_OPEN
    assert [(s.occupied, s.player_name) for s in taken.game.seats] == [
        (False, ""),
        (False, ""),
        (True, "Carla"),
        (False, ""),
    ]
    assert client.take_seat(game_id, None, "Ann").seat == 0
    assert client.take_seat(game_id, None, "  Bob  ").seat == 1
    table.tokens = {2: taken.seat_token}

    before = snapshot(server, client, table)
    with rpc_error(Code.FAILED_PRECONDITION, "seat 1", "taken"):
        client.take_seat(game_id, 1, "Eve")
    assert_unchanged(before, server, client, table)

    last = client.take_seat(game_id, None, "Dan")
    assert last.seat == 3
    assert last.game.status == game_pb2.GAME_STATUS_PLAYING
    assert [s.player_name for s in last.game.seats] == ["Ann", "Bob", "Carla", "Dan"]
    assert client.game(game_id).status == game_pb2.GAME_STATUS_PLAYING

    before = snapshot(server, client, table)
    with rpc_error(Code.FAILED_PRECONDITION, "every seat", "taken"):
        client.take_seat(game_id, None, "Eve")
    with rpc_error(Code.FAILED_PRECONDITION, "seat 0", "taken"):
        client.take_seat(game_id, 0, "Eve")
    with rpc_error(Code.INVALID_ARGUMENT, "seats 0..3", "not 4"):
        client.take_seat(game_id, 4, "Eve")
    with rpc_error(Code.INVALID_ARGUMENT, "player_name"):
        client.take_seat(game_id, None, "   ")
    with rpc_error(Code.INVALID_ARGUMENT, "player_name", "100"):
        client.take_seat(game_id, None, "x" * 101)
    with rpc_error(Code.NOT_FOUND, "no game"):
        client.take_seat(str(uuid.uuid4()), None, "Eve")
    with rpc_error(Code.INVALID_ARGUMENT, "not a game id"):
        client.take_seat("42", None, "Eve")
    assert_unchanged(before, server, client, table)


def test_a_game_with_a_free_seat_stays_open_when_its_players_begin(
    server: RunningServer, client: Client
) -> None:
    table = client.create("texas42")
    turn = client.view(table, None).turn
    table.tokens[turn] = client.take_seat(table.game_id, turn, "early").seat_token
    response = client.submit(table, turn, PASS, client.view(table, turn).version)
    game = client.game(table.game_id)
    assert game.version == response.version
    assert game.status == game_pb2.GAME_STATUS_OPEN  # seats are free: it waits for players
    for _ in range(3):
        client.take_seat(table.game_id)
    assert client.game(table.game_id).status == game_pb2.GAME_STATUS_PLAYING


def test_racing_take_seats_get_distinct_seats(
    server: RunningServer, clients: Callable[[], Client]
) -> None:
    first = clients()
    game_id = first.create("texas42").game_id
    racers = [clients() for _ in range(6)]
    with ThreadPoolExecutor(len(racers)) as pool:
        outcomes = list(
            pool.map(lambda c: _try(lambda: c.take_seat(game_id, None, "racer")), racers)
        )
    seats = sorted(o.seat for o in outcomes if not isinstance(o, grpc.RpcError))
    errors = [o for o in outcomes if isinstance(o, grpc.RpcError)]
    assert seats == [0, 1, 2, 3]
    assert [e.code() for e in errors] == [Code.FAILED_PRECONDITION] * 2
    assert first.game(game_id).status == game_pb2.GAME_STATUS_PLAYING


def _try(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except grpc.RpcError as error:
        return error


# ---------------------------------------------------------------- GetView


def test_get_view_of_a_seat_and_of_a_spectator(server: RunningServer, client: Client) -> None:
    table = client.seated("texas42")
    deal = log_events(server, table.game_id)[1][1]
    assert isinstance(deal, engine.HandDealt)
    spectator = client.view(table, None)
    assert not spectator.HasField("seat")
    assert list(spectator.hand) == [] and list(spectator.legal_actions) == []
    assert spectator.version == 2 and spectator.phase == view_pb2.PHASE_BIDDING
    assert list(spectator.hand_sizes) == [7, 7, 7, 7]
    for seat in range(4):
        view = client.view(table, seat)
        assert view.seat == seat
        assert list(view.hand) == list(engine.iter_tiles(deal.hands[seat]))
        assert (view.version, view.phase, view.turn) == (2, spectator.phase, spectator.turn)
        assert bool(view.legal_actions) == (seat == spectator.turn)
        assert client.view(table, seat, seat=seat) == view  # naming its own seat is fine
    turn = client.view(table, spectator.turn)
    assert turn.legal_actions[0] == PASS
    assert bid(rules_pb2.BID_KIND_POINTS, 30) in turn.legal_actions


def test_get_view_errors(server: RunningServer, client: Client) -> None:
    table = client.seated("texas42")
    other = client.seated("texas42")
    request = game_service_pb2.GetViewRequest(game_id=table.game_id)
    before = snapshot(server, client, table)

    with rpc_error(Code.PERMISSION_DENIED, "seat 0", "not seat 1"):
        client.view(table, 0, seat=1)
    with rpc_error(Code.PERMISSION_DENIED, "seat 3"):
        client.view(table, None, seat=3)  # a spectator asking for a seat's hand
    with rpc_error(Code.UNAUTHENTICATED, "token"):
        client.stub.GetView(request, metadata=bearer("not-a-token"))
    with rpc_error(Code.UNAUTHENTICATED, "token"):
        client.stub.GetView(request, metadata=bearer(other.tokens[0]))  # another game's token
    with rpc_error(Code.UNAUTHENTICATED, "Bearer"):
        client.stub.GetView(request, metadata=(("authorization", "Basic abc"),))
    with rpc_error(Code.UNAUTHENTICATED, "Bearer"):
        client.stub.GetView(request, metadata=(("authorization", "Bearer  "),))
    with rpc_error(Code.NOT_FOUND, "no game"):
        client.stub.GetView(game_service_pb2.GetViewRequest(game_id=str(uuid.uuid4())))
    with rpc_error(Code.NOT_FOUND, "no game"):
        client.stub.GetView(
            game_service_pb2.GetViewRequest(game_id=str(uuid.uuid4())),
            metadata=bearer(table.tokens[0]),
        )
    with rpc_error(Code.INVALID_ARGUMENT, "not a game id"):
        client.stub.GetView(game_service_pb2.GetViewRequest(game_id="nope"))
    assert_unchanged(before, server, client, table)


# ---------------------------------------------------------------- SubmitAction: whole games


def _kinds(server: RunningServer, game_id: str) -> set[str]:
    return {codec.event_kind(event) for _, event in log_events(server, game_id)}


@pytest.mark.parametrize(
    "preset, options, needed",
    [
        ("texas42", {}, {"bid_placed", "passed", "auction_won", "contract_declared"}),
        (
            "moon",
            # Moon redeals when everyone passes, and the first legal action is a pass: the
            # dealer must bid instead, or the first-legal-action game would never end.
            {"all_pass": rules_pb2.ALL_PASS_FORCED_DEALER, "points_to_win": 11},
            {"bid_placed", "passed", "auction_won", "widow_exchanged", "contract_declared"},
        ),
    ],
)
def test_a_whole_game_of_first_legal_actions(
    server: RunningServer, client: Client, preset: str, options: dict[str, Any], needed: set[str]
) -> None:
    table = client.seated(preset, **options)
    spectator = client.view(table, None)
    version, seat = spectator.version, spectator.turn
    for count in range(3000):
        view = client.view(table, seat)
        assert view.version == version and view.turn == seat
        response = client.submit(table, seat, view.legal_actions[0], view.version)
        assert response.version > version
        assert response.view.version == response.version
        assert response.view.seat == seat
        if count % 5 == 0:
            # The answer is the seat's view at the new version (nobody else acted meanwhile).
            assert client.view(table, seat) == response.view
        version = response.version
        if response.view.phase == view_pb2.PHASE_GAME_OVER:
            break
        seat = response.view.turn
    else:
        raise AssertionError("the game did not end")

    summary = client.game(table.game_id)
    assert summary.status == game_pb2.GAME_STATUS_FINISHED
    assert summary.version == version
    assert summary.HasField("winner")
    log = log_events(server, table.game_id)
    assert [seq for seq, _ in log] == list(range(1, version + 1))
    final = engine.replay(event for _, event in log)
    assert final.phase is engine.Phase.GAME_OVER and final.winner == summary.winner
    assert list(summary.scores) == list(final.scores)
    assert needed | {"tile_played", "trick_won", "hand_scored", "game_won"} <= _kinds(
        server, table.game_id
    )
    assert server.store.verify_chain(table.game_id) == version
    for seat in range(table.players):
        view = client.view(table, seat)
        assert view.phase == view_pb2.PHASE_GAME_OVER and view.winner == summary.winner
        assert list(view.legal_actions) == [] and not view.HasField("turn")

    # The game is over: any action is refused with the engine's reason.
    before = snapshot(server, client, table)
    with rpc_error(Code.FAILED_PRECONDITION, "over"):
        client.submit(table, 0, PASS, version)
    assert_unchanged(before, server, client, table)


def test_bids_trump_and_plays_move_the_game(server: RunningServer, client: Client) -> None:
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    response = client.submit(table, seat, bid(rules_pb2.BID_KIND_POINTS, 31), view.version)
    assert response.version == view.version + 1
    assert response.view.bidder == seat
    assert response.view.high_bid == rules_pb2.Bid(kind=rules_pb2.BID_KIND_POINTS, amount=31)
    for _ in range(3):
        seat_, view = turn_of(client, table)
        response = client.submit(table, seat_, PASS, view.version)
    # The auction is won (AuctionWon follows the last pass in the same answer).
    assert response.version == view.version + 2
    declarer, view = turn_of(client, table)
    assert declarer == seat and view.phase == view_pb2.PHASE_TRUMP
    response = client.submit(table, declarer, trump(rules_pb2.TRUMP_SIXES), view.version)
    assert response.view.phase == view_pb2.PHASE_PLAY
    assert response.view.contract == rules_pb2.Contract(
        kind=rules_pb2.CONTRACT_KIND_TRUMP, trump=rules_pb2.TRUMP_SIXES
    )
    leader, view = turn_of(client, table)
    assert leader == declarer
    tile = view.legal_actions[0].play_tile.tile
    response = client.submit(table, leader, play(tile), view.version)
    assert tile not in response.view.hand
    assert [(p.seat, p.tile) for p in response.view.current_trick] == [(leader, tile)]
    assert list(client.view(table, None).current_trick) == list(response.view.current_trick)


# ---------------------------------------------------------------- SubmitAction: errors


def _request(
    table: Table, view: view_pb2.SeatView, **fields: Any
) -> game_service_pb2.SubmitActionRequest:
    values: dict[str, Any] = {
        "game_id": table.game_id,
        "expected_version": view.version,
        "request_id": str(uuid.uuid4()),
        "action": view.legal_actions[0],
    }
    values.update(fields)
    return game_service_pb2.SubmitActionRequest(**values)


MALFORMED: list[tuple[str, dict[str, Any], str]] = [
    ("no action", {"action": actions_pb2.Action()}, "none is set"),
    ("tile 99", {"action": play(99)}, "99 is not a tile"),
    ("tile 28", {"action": play(28)}, "28 is not a tile"),
    ("no tile", {"action": actions_pb2.Action(play_tile=actions_pb2.PlayTile())}, "tile"),
    (
        "widow discard 40",
        {"action": actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=40))},
        "40 is not a tile",
    ),
    (
        "no widow discard",
        {"action": actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow())},
        "discard",
    ),
    ("unknown bid kind", {"action": bid(99, 30)}, "bid kind 99"),
    ("unspecified bid kind", {"action": bid(rules_pb2.BID_KIND_UNSPECIFIED, 30)}, "bid kind"),
    ("bid of nothing", {"action": bid(rules_pb2.BID_KIND_POINTS, 0)}, "amount"),
    (
        "unknown contract kind",
        {"action": actions_pb2.Action(declare_contract=rules_pb2.Contract(kind=12))},
        "contract kind 12",
    ),
    ("unknown trump", {"action": trump(42)}, "trump"),
    ("unspecified trump", {"action": trump(rules_pb2.TRUMP_UNSPECIFIED)}, "trump"),
    (
        "nello with a trump",
        {
            "action": actions_pb2.Action(
                declare_contract=rules_pb2.Contract(
                    kind=rules_pb2.CONTRACT_KIND_NELLO, trump=rules_pb2.TRUMP_SIXES
                )
            )
        },
        "no trump",
    ),
    ("no request_id", {"request_id": ""}, "request_id is required"),
    ("long request_id", {"request_id": "r" * 129}, "at most 128"),
    ("expected_version 0", {"expected_version": 0}, "expected_version is required"),
    ("bad game id", {"game_id": "game-1"}, "not a game id: 'game-1'"),
    ("empty game id", {"game_id": ""}, "not a game id"),
]


@pytest.mark.parametrize(
    "fields, message", [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
)
def test_malformed_actions_are_invalid_argument(
    server: RunningServer, client: Client, fields: dict[str, Any], message: str
) -> None:
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    before = snapshot(server, client, table)
    request = _request(table, view, **fields)
    with rpc_error(Code.INVALID_ARGUMENT, message):
        client.stub.SubmitAction(request, metadata=bearer(table.tokens[seat]), timeout=RPC_TIMEOUT)
    assert_unchanged(before, server, client, table)
    # The rejected request's id was not used up: the same id applies a good action.
    if request.request_id and len(request.request_id) <= 128:
        good = _request(table, view, request_id=request.request_id)
        assert client.stub.SubmitAction(good, metadata=bearer(table.tokens[seat])).version == 3


def _engine_reason(
    server: RunningServer,
    table: Table,
    command: engine.SeatCommand,
    error: type[Exception] = engine.IllegalAction,
) -> str:
    """What the engine says of ``command`` in the game's state now (it must refuse it)."""
    with pytest.raises(error) as refused:
        engine.decide(state_at(server.app, table.game_id), command)
    return str(refused.value)


def test_illegal_moves_are_failed_precondition_with_the_engines_reason(
    server: RunningServer, client: Client
) -> None:
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    other = (seat + 1) % 4
    own_tile = view.hand[0]
    cases: list[tuple[int, actions_pb2.Action, engine.SeatCommand, type[Exception]]] = [
        (
            seat,
            bid(rules_pb2.BID_KIND_POINTS, 10),
            engine.PlaceBid(seat, engine.Bid(engine.BidKind.POINTS, 10)),
            engine.BidTooLow,
        ),
        (
            seat,
            bid(rules_pb2.BID_KIND_POINTS, 42),
            engine.PlaceBid(seat, engine.Bid(engine.BidKind.POINTS, 42)),
            engine.BidNotAllowed,
        ),
        (
            seat,
            bid(rules_pb2.BID_KIND_TRICKS, 5),
            engine.PlaceBid(seat, engine.Bid(engine.BidKind.TRICKS, 5)),
            engine.BidNotAllowed,
        ),
        (other, PASS, engine.Pass(other), engine.NotYourTurn),
        (seat, play(own_tile), engine.PlayTile(seat, own_tile), engine.WrongPhase),
        (
            seat,
            trump(rules_pb2.TRUMP_SIXES),
            engine.DeclareContract(seat, engine.Contract.of_trump(6)),
            engine.WrongPhase,
        ),
        (
            seat,
            actions_pb2.Action(decline_widow=actions_pb2.DeclineWidow()),
            engine.DeclineWidow(seat),
            engine.IllegalAction,
        ),
    ]
    before = snapshot(server, client, table)
    for actor, action, command, error in cases:
        reason = _engine_reason(server, table, command, error)
        with rpc_error(Code.FAILED_PRECONDITION, reason):
            client.submit(table, actor, action, view.version)
    assert_unchanged(before, server, client, table)

    # In the play: a tile of another hand, and not following suit when able.
    view = advance_to(client, table, view_pb2.PHASE_PLAY)
    leader = view.seat
    deal = next(
        e for _, e in reversed(log_events(server, table.game_id)) if isinstance(e, engine.HandDealt)
    )
    elsewhere = next(engine.iter_tiles(deal.hands[(leader + 1) % 4]))
    before = snapshot(server, client, table)
    reason = _engine_reason(server, table, engine.PlayTile(leader, elsewhere))
    with rpc_error(Code.FAILED_PRECONDITION, reason, "does not hold"):
        client.submit(table, leader, play(elsewhere), view.version)
    assert_unchanged(before, server, client, table)

    client.submit(table, leader, view.legal_actions[0], view.version)
    follower, view = turn_of(client, table)
    illegal = [t for t in view.hand if play(t) not in view.legal_actions]
    if illegal:  # the follower can follow suit and holds something else as well
        before = snapshot(server, client, table)
        reason = _engine_reason(server, table, engine.PlayTile(follower, illegal[0]))
        with rpc_error(Code.FAILED_PRECONDITION, reason, "must"):
            client.submit(table, follower, play(illegal[0]), view.version)
        assert_unchanged(before, server, client, table)


def test_moon_widow_actions_out_of_place(server: RunningServer, client: Client) -> None:
    table = client.seated("moon")
    seat, view = turn_of(client, table)
    action = actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=view.hand[0]))
    reason = _engine_reason(server, table, engine.ExchangeWidow(seat, view.hand[0]))
    before = snapshot(server, client, table)
    with rpc_error(Code.FAILED_PRECONDITION, reason):
        client.submit(table, seat, action, view.version)
    assert_unchanged(before, server, client, table)

    # Win the auction: the widow phase. The widow must be taken (moon: must_exchange), and the
    # tile laid out must be one of the bidder's own.
    bidder = seat
    client.submit(table, seat, bid(rules_pb2.BID_KIND_TRICKS, 4), view.version)
    for _ in range(2):
        seat, view = turn_of(client, table)
        client.submit(table, seat, PASS, view.version)
    seat, view = turn_of(client, table)
    assert (seat, view.phase) == (bidder, view_pb2.PHASE_WIDOW)
    before = snapshot(server, client, table)
    reason = _engine_reason(server, table, engine.DeclineWidow(seat), engine.IllegalDiscard)
    with rpc_error(Code.FAILED_PRECONDITION, reason, "must exchange"):
        client.submit(
            table, seat, actions_pb2.Action(decline_widow=actions_pb2.DeclineWidow()), view.version
        )
    foreign = next(t for t in range(28) if t not in view.hand)
    reason = _engine_reason(
        server, table, engine.ExchangeWidow(seat, foreign), engine.IllegalDiscard
    )
    with rpc_error(Code.FAILED_PRECONDITION, reason):
        client.submit(
            table,
            seat,
            actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=foreign)),
            view.version,
        )
    assert_unchanged(before, server, client, table)


def test_a_stale_expected_version_is_aborted(server: RunningServer, client: Client) -> None:
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    before = snapshot(server, client, table)
    for stale in (view.version - 1, view.version + 1, view.version + 1000):
        with rpc_error(Code.ABORTED, f"at version {view.version}", f"not {stale}"):
            client.submit(table, seat, view.legal_actions[0], stale)
    assert_unchanged(before, server, client, table)
    # After someone acted, the version the seat saw is stale.
    client.submit(table, seat, PASS, view.version)
    nxt, fresh = turn_of(client, table)
    before = snapshot(server, client, table)
    with rpc_error(Code.ABORTED, "fetch the view"):
        client.submit(table, nxt, fresh.legal_actions[0], view.version)
    assert_unchanged(before, server, client, table)


def test_tokens_are_required_and_checked(server: RunningServer, client: Client) -> None:
    table = client.seated("texas42")
    other = client.seated("texas42")
    seat, view = turn_of(client, table)
    before = snapshot(server, client, table)
    request = _request(table, view)
    for metadata, message in [
        (None, "Bearer <seat token>"),
        (bearer("forged-token"), "opens no seat"),
        (bearer(other.tokens[seat]), "opens no seat"),
        ((("authorization", table.tokens[seat]),), "Bearer"),
        ((("authorization", "Bearer"),), "Bearer"),
    ]:
        with rpc_error(Code.UNAUTHENTICATED, message):
            client.stub.SubmitAction(request, metadata=metadata, timeout=RPC_TIMEOUT)
    assert_unchanged(before, server, client, table)
    # An unknown game is NOT_FOUND (whatever the token).
    with rpc_error(Code.NOT_FOUND, "no game"):
        client.stub.SubmitAction(
            _request(table, view, game_id=str(uuid.uuid4())), metadata=bearer(table.tokens[seat])
        )
    assert_unchanged(before, server, client, table)
    # The request id of a refused request is still free.
    assert (
        client.stub.SubmitAction(request, metadata=bearer(table.tokens[seat])).version
        > view.version
    )


def test_acting_or_looking_for_another_seat_is_permission_denied(
    server: RunningServer, client: Client
) -> None:
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    other = (seat + 1) % 4
    before = snapshot(server, client, table)
    # The seat on turn's action, sent with another seat's token and naming the seat on turn.
    with rpc_error(Code.PERMISSION_DENIED, f"seat {other}", f"not seat {seat}"):
        client.stub.SubmitAction(
            _request(table, view, seat=seat), metadata=bearer(table.tokens[other])
        )
    # The seat on turn naming another seat.
    with rpc_error(Code.PERMISSION_DENIED, f"not seat {other}"):
        client.stub.SubmitAction(
            _request(table, view, seat=other), metadata=bearer(table.tokens[seat])
        )
    with rpc_error(Code.PERMISSION_DENIED, f"not seat {other}"):
        client.view(table, seat, seat=other)
    with rpc_error(Code.PERMISSION_DENIED, f"not seat {other}"):
        list(_watch_seat(client, table, seat, other))
    assert_unchanged(before, server, client, table)
    # Naming its own seat is allowed.
    response = client.stub.SubmitAction(
        _request(table, view, seat=seat), metadata=bearer(table.tokens[seat])
    )
    assert response.version == view.version + 1


def _watch_seat(
    client: Client, table: Table, token_seat: int | None, seat: int, from_version: int = 0
) -> Any:
    request = game_service_pb2.WatchGameRequest(
        game_id=table.game_id, from_version=from_version, seat=seat
    )
    metadata = bearer(table.tokens[token_seat]) if token_seat is not None else None
    return client.stub.WatchGame(request, metadata=metadata, timeout=RPC_TIMEOUT)


# ---------------------------------------------------------------- retries


def _raw_submit(client: Client) -> Any:
    """SubmitAction whose answers come as they are on the wire, not parsed."""
    return client.channel.unary_unary(
        "/boneyard.v1.GameService/SubmitAction",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=None,
    )


def test_a_retried_request_is_answered_byte_for_byte_and_applied_once(
    server: RunningServer, client: Client
) -> None:
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    request = _request(table, view, action=bid(rules_pb2.BID_KIND_POINTS, 30))
    metadata = bearer(table.tokens[seat])
    raw = _raw_submit(client)
    first = raw(request, metadata=metadata, timeout=RPC_TIMEOUT)
    answer = game_service_pb2.SubmitActionResponse.FromString(first)
    assert answer.version == view.version + 1
    assert answer.view.seat == seat and answer.view.bidder == seat
    assert raw(request, metadata=metadata, timeout=RPC_TIMEOUT) == first
    assert client.game(table.game_id).version == answer.version
    assert len(log_events(server, table.game_id)) == answer.version

    # Others act; the retry still gets the first answer and changes nothing.
    for _ in range(2):
        nxt, nview = turn_of(client, table)
        client.submit(table, nxt, PASS, nview.version)
    before = snapshot(server, client, table)
    assert before.version == answer.version + 2
    assert raw(request, metadata=metadata, timeout=RPC_TIMEOUT) == first
    # Even when the retry's fields no longer fit (the id is what counts).
    changed = game_service_pb2.SubmitActionRequest()
    changed.CopyFrom(request)
    changed.expected_version = before.version
    changed.action.CopyFrom(PASS)
    assert raw(changed, metadata=metadata, timeout=RPC_TIMEOUT) == first
    assert_unchanged(before, server, client, table)
    bids = [e for _, e in log_events(server, table.game_id) if isinstance(e, engine.BidPlaced)]
    assert bids == [engine.BidPlaced(seat, engine.Bid(engine.BidKind.POINTS, 30))]
    call = client.stub.SubmitAction

    # The id is scoped to the game: another game applies it afresh.
    other = client.seated("texas42")
    oseat, oview = turn_of(client, other)
    elsewhere = _request(other, oview, request_id=request.request_id)
    assert call(elsewhere, metadata=bearer(other.tokens[oseat])).version == oview.version + 1


def test_a_retry_long_after_is_answered_byte_for_byte_from_the_log_even_once_reloaded(
    server: RunningServer, client: Client
) -> None:
    """The answer is not kept: a retry's is made again at the version its action made, from
    the latest states, from the whole log once that version is older, and from the store's
    log once the game is read again (as another process would)."""
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    request = _request(table, view)
    metadata = bearer(table.tokens[seat])
    raw = _raw_submit(client)
    first = raw(request, metadata=metadata, timeout=RPC_TIMEOUT)
    answer = game_service_pb2.SubmitActionResponse.FromString(first)
    for _ in range(30):  # past the states a game keeps at hand
        nxt, nview = turn_of(client, table)
        client.submit(table, nxt, nview.legal_actions[0], nview.version)
    assert client.game(table.game_id).version >= answer.version + 30
    assert raw(request, metadata=metadata, timeout=RPC_TIMEOUT) == first

    async def forget() -> None:
        server.app.host.evict(table.game_id)

    server.run(forget())
    before = snapshot(server, client, table)
    assert raw(request, metadata=metadata, timeout=RPC_TIMEOUT) == first
    assert_unchanged(before, server, client, table)


def test_another_seat_reusing_a_request_id_gets_nothing_of_the_first_answer(
    server: RunningServer, client: Client
) -> None:
    """A stored answer holds the acting seat's hand: it is for that seat's retries only."""
    table = client.seated("texas42")
    seat, view = turn_of(client, table)
    request = _request(table, view, request_id="request-1")
    first = client.stub.SubmitAction(request, metadata=bearer(table.tokens[seat]))
    assert list(first.view.hand)
    nxt, nview = turn_of(client, table)
    before = snapshot(server, client, table)
    with rpc_error(Code.INVALID_ARGUMENT, "request-1", "another seat"):
        client.stub.SubmitAction(
            _request(table, nview, request_id="request-1"), metadata=bearer(table.tokens[nxt])
        )
    assert_unchanged(before, server, client, table)
    # A seat that never acted, retrying another's id, is refused the same way.
    idle = next(s for s in range(4) if s not in (seat, nxt))
    with rpc_error(Code.INVALID_ARGUMENT, "another seat"):
        client.stub.SubmitAction(request, metadata=bearer(table.tokens[idle]))
    assert_unchanged(before, server, client, table)


def test_the_same_request_racing_itself_is_applied_once(
    server: RunningServer, clients: Callable[[], Client]
) -> None:
    setup = clients()
    table = setup.seated("texas42")
    for _ in range(3):
        seat, view = turn_of(setup, table)
        request = _request(table, view)
        racers = [clients() for _ in range(4)]
        barrier = threading.Barrier(len(racers))

        def send(
            c: Client, request: Any = request, seat: int = seat, barrier: Any = barrier
        ) -> bytes:
            barrier.wait()
            return wire(
                c.stub.SubmitAction(
                    request, metadata=bearer(table.tokens[seat]), timeout=RPC_TIMEOUT
                )
            )

        with ThreadPoolExecutor(len(racers)) as pool:
            answers = list(pool.map(send, racers))
        assert len(set(answers)) == 1
        version = game_service_pb2.SubmitActionResponse.FromString(answers[0]).version
        assert setup.game(table.game_id).version == version
        seqs = [seq for seq, _ in log_events(server, table.game_id)]
        assert seqs == list(range(1, version + 1))


# ---------------------------------------------------------------- racing writers


def test_two_writers_for_one_version_one_wins_the_other_is_aborted(
    server: RunningServer, clients: Callable[[], Client]
) -> None:
    setup = clients()
    table = setup.seated("texas42")
    a, b = clients(), clients()
    for _ in range(4):  # a few bidding turns: each is a fresh race
        seat, view = turn_of(setup, table)
        # Two different actions where there are (a forced dealer has only the minimum bid).
        one, two = view.legal_actions[0], view.legal_actions[-1]
        barrier = threading.Barrier(2)

        def send(
            c: Client,
            action: actions_pb2.Action,
            seat: int = seat,
            version: int = view.version,
            barrier: Any = barrier,
        ) -> Any:
            barrier.wait()
            return _try(lambda: c.submit(table, seat, action, version))

        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(send, (a, b), (one, two)))
        won = [r for r in results if not isinstance(r, grpc.RpcError)]
        lost = [r for r in results if isinstance(r, grpc.RpcError)]
        assert len(won) == 1 and len(lost) == 1, results
        assert lost[0].code() == Code.ABORTED, lost[0].details()
        assert "version" in lost[0].details()
        winner_action = (one, two)[results.index(won[0])]

        log = log_events(server, table.game_id)
        assert [seq for seq, _ in log] == list(range(1, won[0].version + 1))
        assert setup.game(table.game_id).version == won[0].version
        at_version = [e for seq, e in log if seq == view.version + 1]
        assert len(at_version) == 1
        expected = codec.action_from_proto(winner_action, seat)
        if isinstance(expected, engine.Pass):
            assert at_version[0] == engine.Passed(seat)
        else:
            assert at_version[0] == engine.BidPlaced(seat, expected.bid)


# ---------------------------------------------------------------- WatchGame


def _collect(
    stream: Any, into: list[game_service_pb2.WatchGameResponse], done: threading.Event
) -> None:
    try:
        into.extend(stream)
    finally:
        done.set()


def test_watch_a_whole_game_live_then_resume_from_the_middle(
    server: RunningServer, client: Client, clients: Callable[[], Client]
) -> None:
    table = client.seated("texas42", marks_to_win=1)
    watchers: dict[int | None, tuple[list[Any], threading.Event, threading.Thread]] = {}
    for receiver in (0, None):
        messages: list[Any] = []
        done = threading.Event()
        stream = clients().watch(table, receiver, 0)
        thread = threading.Thread(target=_collect, args=(stream, messages, done), daemon=True)
        thread.start()
        watchers[receiver] = (messages, done, thread)
    client.play_to_end(table)
    version = client.game(table.game_id).version
    log = log_events(server, table.game_id)

    for receiver, (messages, done, thread) in watchers.items():
        # The stream ends by itself after the event that ends the game.
        assert done.wait(RPC_TIMEOUT), "the stream did not end after the game ended"
        thread.join()
        assert [m.version for m in messages] == list(range(1, version + 1))
        assert [m.event.seq for m in messages] == [m.version for m in messages]
        assert [m.view.version for m in messages] == [m.version for m in messages]
        assert messages[0].event.WhichOneof("kind") == "game_created"
        assert messages[-1].event.WhichOneof("kind") == "game_won"
        assert [m.event.WhichOneof("kind") for m in messages] == [
            codec.event_kind(e) for _, e in log
        ]
        for m, (seq, event) in zip(messages, log, strict=True):
            if isinstance(event, engine.HandDealt):
                dealt = m.event.hand_dealt
                assert not dealt.HasField("deal")
                own = list(engine.iter_tiles(event.hands[receiver])) if receiver is not None else []
                assert list(dealt.own_hand) == own
            elif not isinstance(event, engine.WidowExchanged):
                assert m.event == codec.event_to_proto(event, seq)

        # Resume from the middle: exactly from_version + 1 onwards, the same messages.
        for middle in (1, version // 2, version - 1):
            resumed = list(client.watch(table, receiver, middle))
            assert [m.version for m in resumed] == list(range(middle + 1, version + 1))
            assert [wire(m) for m in resumed] == [wire(m) for m in messages[middle:]]
        # From the end: nothing, and the stream ends.
        assert list(client.watch(table, receiver, version)) == []
        with rpc_error(Code.OUT_OF_RANGE, f"version {version}", f"from {version + 1}"):
            list(client.watch(table, receiver, version + 1))


def test_a_watcher_gets_what_happens_after_it_subscribed(
    server: RunningServer, client: Client, clients: Callable[[], Client]
) -> None:
    table = client.seated("texas42")
    start = client.game(table.game_id).version
    streams = {receiver: clients().watch(table, receiver, start - 1) for receiver in (1, None)}
    for stream in streams.values():  # the last event so far: the stream is live
        assert next(stream).version == start
    seat, view = turn_of(client, table)
    response = client.submit(table, seat, bid(rules_pb2.BID_KIND_POINTS, 30), view.version)
    for _ in range(3):
        seat, view = turn_of(client, table)
        response = client.submit(table, seat, PASS, view.version)
    for receiver, stream in streams.items():
        got = [next(stream) for _ in range(response.version - start)]
        assert [m.version for m in got] == list(range(start + 1, response.version + 1))
        assert [m.event.WhichOneof("kind") for m in got] == [
            "bid_placed",
            "passed",
            "passed",
            "passed",
            "auction_won",
        ]
        assert got[-1].view.phase == view_pb2.PHASE_TRUMP
        if receiver is not None:
            assert got[-1].view == client.view(table, receiver)
        stream.cancel()
    # The submitting seat's answer is its view at that version, as the stream has it.
    assert client.view(table, seat) == response.view


def test_watch_game_errors(server: RunningServer, client: Client) -> None:
    table = client.seated("texas42")
    other = client.seated("texas42")
    version = client.game(table.game_id).version
    before = snapshot(server, client, table)
    with rpc_error(Code.OUT_OF_RANGE, f"at version {version}", f"from {version + 1}"):
        list(client.watch(table, None, version + 1))
    with rpc_error(Code.OUT_OF_RANGE, "from 1000"):
        list(client.watch(table, 2, 1000))
    with rpc_error(Code.NOT_FOUND, "no game"):
        list(client.watch(Table(str(uuid.uuid4()), table.rules), None))
    with rpc_error(Code.INVALID_ARGUMENT, "not a game id"):
        list(client.watch(Table("x", table.rules), None))
    with rpc_error(Code.UNAUTHENTICATED, "opens no seat"):
        list(client.watch(Table(table.game_id, table.rules, {0: other.tokens[0]}), 0))
    with rpc_error(Code.PERMISSION_DENIED, "seat 1"):
        list(_watch_seat(client, table, None, 1))
    with rpc_error(Code.PERMISSION_DENIED, "not seat 1"):
        list(_watch_seat(client, table, 0, 1))
    assert_unchanged(before, server, client, table)


def test_an_unexpected_failure_is_internal_and_does_not_leak_its_text(
    server: RunningServer, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = client.seated("texas42")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("SELECT secret FROM seats -- the database went away")

    async def forget() -> None:  # so that GetGame reads the game from the store again
        server.app.host.evict(table.game_id)

    server.run(forget())
    monkeypatch.setattr(server.store, "snapshots", broken)
    with rpc_error(Code.INTERNAL, "internal error") as caught:
        client.game(table.game_id)
    assert "secret" not in caught[0].details()
    monkeypatch.undo()
    assert client.game(table.game_id).game_id == table.game_id


# ---------------------------------------------------------------- health


def test_health_and_the_service_are_served(server: RunningServer, client: Client) -> None:
    health = health_pb2_grpc.HealthStub(client.channel)
    for service in ("", "boneyard.v1.GameService"):
        answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=RPC_TIMEOUT)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
