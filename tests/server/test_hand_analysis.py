"""Hand analysis of finished games (issue 33): ``ArchiveService.AnalyzeHand`` gives every play
of a finished hand with the exact value of each legal tile (every hand known), as the solver
run here on the same positions says; refuses a game not finished, an unknown game or hand and
bad input; is bounded per client address; and is served through both doors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import pytest
from api_helpers import Client, RunningServer, Table, log_events
from connectrpc.protocol import ProtocolType
from google.rpc.error_details_pb2 import ErrorInfo
from grpc_status import rpc_status

from boneyard import engine
from boneyard.api.v1 import actions_pb2, archive_connect, archive_pb2, archive_pb2_grpc, view_pb2
from boneyard.engine import ContractKind, HandDealt, TilePlayed
from boneyard.engine.solver import Game, Position, Solver
from boneyard.engine.tiles import COUNT
from boneyard.server.quotas import Quotas


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('analysis') / 'boneyard.db'}"
    running = RunningServer(url, Quotas(analyses_per_minute=1000), http=True)
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="module")
def client(server: RunningServer) -> Iterator[Client]:
    made = Client(server.address)
    yield made
    made.close()


@pytest.fixture(scope="module")
def archive(client: Client) -> archive_pb2_grpc.ArchiveServiceStub:
    return archive_pb2_grpc.ArchiveServiceStub(client.channel)


@pytest.fixture(scope="module")
def finished(client: Client) -> dict[str, str]:
    """A finished game of each family, played with the first legal action."""
    games = {}
    for preset in ("texas42", "moon"):
        table = client.seated(preset, marks_to_win=1) if preset == "texas42" else client.seated(preset, points_to_win=7)
        _play_to_end(client, table)
        games[preset] = table.game_id
    return games


def _play_to_end(client: Client, table: Table) -> None:
    """The first legal action of the seat on turn, a bid rather than a pass (so that hands are
    played, not passed out), until the game is over."""
    for _ in range(5000):
        spectator = client.view(table, None)
        if spectator.phase == view_pb2.PHASE_GAME_OVER:
            return
        view = client.view(table, spectator.turn)
        bids = [a for a in view.legal_actions if a.WhichOneof("kind") == "bid"]
        client.submit(table, spectator.turn, (bids or list(view.legal_actions))[0], view.version)
    raise AssertionError(f"game {table.game_id} not over")


def _analyse(archive: archive_pb2_grpc.ArchiveServiceStub, game_id: str, hand: int) -> archive_pb2.AnalyzeHandResponse:
    return archive.AnalyzeHand(archive_pb2.AnalyzeHandRequest(game_id=game_id, hand_number=hand), timeout=60)


def _reason(error: grpc.RpcError) -> str:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None
    info = ErrorInfo()
    status.details[0].Unpack(info)
    return info.reason


def _solver_values(events: list[engine.Event], number: int) -> list[tuple[int, int, dict[int, int]]]:
    """The solver, run here: for each play of hand ``number``, (seat, tile, {legal tile: value
    for the bidding side over the whole hand})."""
    start = next(i for i, e in enumerate(events) if isinstance(e, HandDealt) and e.number == number)
    state = engine.replay(events[:start])
    out = []
    solver: Solver | None = None
    bidders: tuple[int, ...] = ()
    for event in events[start:]:
        if isinstance(event, HandDealt) and event.number != number:
            break
        if isinstance(event, TilePlayed):
            hand = state.hand
            assert hand is not None and hand.contract is not None and hand.bidder is not None
            rules = state.rules
            if solver is None:
                nello = hand.contract.kind is ContractKind.NELLO
                tricks = rules.is_moon or nello
                bidders = (hand.bidder,) if tricks else rules.teams[rules.team_of[hand.bidder]]
                game = Game(hand.table, rules.players, rules.teams, tuple(sorted(hand.sitting_out)),
                            (0,) * 28 if tricks else COUNT, 1, rules.may_trump_when_able_to_follow)
                if nello:
                    others = [s for s in range(rules.players) if s not in hand.sitting_out and s != hand.bidder]
                    solver = Solver(game, others, scorers=bidders)
                else:
                    solver = Solver(game, bidders)
            legal = 0
            for action in engine.legal_actions(state, event.seat):
                if isinstance(action, engine.PlayTile):
                    legal |= 1 << action.tile
            leader = hand.trick[0][0] if hand.trick else event.seat
            taken = sum(
                1 + sum(solver.game.points[t] for _, t in trick.plays)
                for trick in hand.tricks
                if trick.winner in bidders
            )
            values = solver.move_values(Position(hand.hands, leader, hand.trick), legal)
            out.append((event.seat, event.tile, {t: taken + v for t, v in values.items()}))
        state = engine.evolve(state, event)
    return out


@pytest.mark.parametrize("preset", ["texas42", "moon"])
def test_analysis_of_a_played_hand_agrees_with_the_solver_run_here(
    server: RunningServer, archive: archive_pb2_grpc.ArchiveServiceStub, finished: dict[str, str], preset: str
) -> None:
    game_id = finished[preset]
    events = [e for _, e in log_events(server, game_id)]
    hands = [e.number for e in events if isinstance(e, HandDealt)]
    checked = 0
    for number in hands[:12]:
        answer = _analyse(archive, game_id, number)
        expected = _solver_values(events, number)
        assert (answer.game_id, answer.hand_number) == (game_id, number)
        assert [(p.seat, p.tile) for p in answer.plays] == [(s, t) for s, t, _ in expected]
        for play, (seat, tile, values) in zip(answer.plays, expected, strict=True):
            assert {o.tile: o.value for o in play.options} == values
            assert play.played_value == values[tile]
            mine = (seat in answer.bidding_side) == answer.bidding_side_wants_more
            best = max(values.values()) if mine else min(values.values())
            assert (play.best_value, play.cost) == (best, abs(best - values[tile]))
        if answer.plays:
            checked += 1
            assert answer.measure == (
                archive_pb2.ANALYSIS_MEASURE_TRICKS if preset == "moon" else archive_pb2.ANALYSIS_MEASURE_POINTS
            ) or answer.bidding_side_wants_more is False
    assert checked, "no hand of the game was played out"


def test_a_hand_nobody_played_answers_with_no_plays(
    client: Client, archive: archive_pb2_grpc.ArchiveServiceStub
) -> None:
    table = client.seated("texas42")
    view = client.view(table, 0)
    client.submit(table, 0, actions_pb2.Action(resign=actions_pb2.Resign()), view.version)
    answer = _analyse(archive, table.game_id, 1)
    assert list(answer.plays) == [] and answer.measure == archive_pb2.ANALYSIS_MEASURE_UNSPECIFIED


def test_analysis_of_a_game_not_finished_is_refused(client: Client, archive: archive_pb2_grpc.ArchiveServiceStub) -> None:
    table = client.seated("texas42")
    with pytest.raises(grpc.RpcError) as refused:
        _analyse(archive, table.game_id, 1)
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert _reason(refused.value) == "GAME_NOT_OVER"


def test_analysis_of_an_unknown_hand_is_not_found(archive: archive_pb2_grpc.ArchiveServiceStub, finished: dict[str, str]) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        _analyse(archive, finished["texas42"], 9999)
    assert refused.value.code() is grpc.StatusCode.NOT_FOUND
    assert _reason(refused.value) == "HAND_NOT_FOUND"


def test_analysis_of_an_unknown_game_is_not_found(archive: archive_pb2_grpc.ArchiveServiceStub) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        _analyse(archive, "00000000-0000-0000-0000-000000000000", 1)
    assert refused.value.code() is grpc.StatusCode.NOT_FOUND
    assert _reason(refused.value) == "GAME_NOT_FOUND"


@pytest.mark.parametrize(("game_id", "hand"), [("not an id", 1), ("00000000-0000-0000-0000-000000000000", 0)])
def test_analysis_of_bad_input_is_an_invalid_argument(
    archive: archive_pb2_grpc.ArchiveServiceStub, game_id: str, hand: int
) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        _analyse(archive, game_id, hand)
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_analysis_over_connect_is_the_same_as_over_grpc(
    server: RunningServer, archive: archive_pb2_grpc.ArchiveServiceStub, finished: dict[str, str]
) -> None:
    over_grpc = _analyse(archive, finished["moon"], 1)

    async def ask() -> archive_pb2.AnalyzeHandResponse:
        async with archive_connect.ArchiveServiceClient(server.http_address, protocol=ProtocolType.CONNECT) as c:
            return await c.analyze_hand(archive_pb2.AnalyzeHandRequest(game_id=finished["moon"], hand_number=1))

    assert asyncio.run(ask()) == over_grpc


def test_the_analyses_a_client_asks_for_are_bounded(tmp_path_factory: pytest.TempPathFactory) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('analysis-quota') / 'boneyard.db'}"
    running = RunningServer(url, Quotas(analyses_per_minute=2))
    client = Client(running.address)
    try:
        stub = archive_pb2_grpc.ArchiveServiceStub(client.channel)
        table = client.seated("texas42", marks_to_win=2)
        _play_to_end(client, table)
        hands = [e.number for _, e in log_events(running, table.game_id) if isinstance(e, HandDealt)]
        assert len(hands) >= 2
        _analyse(stub, table.game_id, hands[0])
        _analyse(stub, table.game_id, hands[1])
        _analyse(stub, table.game_id, hands[0])  # kept: not counted again
        with pytest.raises(grpc.RpcError) as refused:
            _analyse(stub, table.game_id, 999)
        assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert _reason(refused.value) == "QUOTA_EXCEEDED"
        assert "analyses_per_minute" in str(rpc_status.from_call(refused.value))  # type: ignore[arg-type]
    finally:
        client.close()
        running.close()
