"""House bots: a person plays the server's own bots over gRPC, on a real server of each backend
(SQLite; PostgreSQL when BONEYARD_TEST_DATABASE_URL is set).

The person is a client that plays the first legal action on its turn; the house bots play in
the server's worker processes. Their actions go through the same path as anybody's: each is
in the log where the version it was decided at says, with its request id, and the finished
record verifies. Waits are for progress (a version reached, a game over), with generous
bounds that only catch a hang.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import grpc
import pytest
from api_helpers import (
    RPC_TIMEOUT,
    Client,
    RunningServer,
    bearer,
    fresh_database,
    log_events,
    rpc_error,
)
from process_helpers import ServerProcess

from boneyard import engine
from boneyard.api.v1 import (
    archive_pb2,
    archive_pb2_grpc,
    events_pb2,
    game_pb2,
    game_service_pb2,
    rules_pb2,
    view_pb2,
)
from boneyard.records.verify import verify_record
from boneyard.server.archive.archive import Archive
from boneyard.server.competition.house_bots import HOUSE_REQUEST, house_seed

GAME_TIMEOUT = 300.0
"""A whole game, bots and person, must end within this (a hang, not a slow machine)."""
ACTIONS = (
    engine.BidPlaced,
    engine.Passed,
    engine.WidowExchanged,
    engine.WidowDeclined,
    engine.ContractDeclared,
    engine.TilePlayed,
)
"""The events a seat's own action makes first."""


def create(
    client: Client,
    house: dict[int, str],
    preset: str = "texas42",
    **options: object,
) -> game_service_pb2.CreateGameResponse:
    return client.stub.CreateGame(
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset=preset, **options),  # type: ignore[arg-type]
            house_bots=[
                game_service_pb2.HouseBot(seat=s, strategy=name) for s, name in house.items()
            ],
        ),
        timeout=RPC_TIMEOUT,
    )


def seat_person(client: Client, game_id: str) -> tuple[int, str]:
    taken = client.stub.TakeSeat(
        game_service_pb2.TakeSeatRequest(game_id=game_id, player_name="person"),
        timeout=RPC_TIMEOUT,
    )
    return taken.seat, taken.seat_token


def view_of(client: Client, game_id: str, token: str | None = None) -> view_pb2.SeatView:
    return client.stub.GetView(
        game_service_pb2.GetViewRequest(game_id=game_id),
        metadata=bearer(token) if token else None,
        timeout=RPC_TIMEOUT,
    ).view


def act_first_legal(client: Client, game_id: str, token: str, view: view_pb2.SeatView) -> None:
    try:
        client.stub.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                game_id=game_id,
                expected_version=view.version,
                request_id=f"person:{view.version}",
                action=view.legal_actions[0],
            ),
            metadata=bearer(token),
            timeout=RPC_TIMEOUT,
        )
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.ABORTED:  # the stream is behind: its next view
            raise


def play_as_person(client: Client, game_id: str, token: str) -> tuple[view_pb2.SeatView, int]:
    """Follow the game's stream as the person's seat and play the first legal action on its
    turn, until the game is over: the last view, and how many actions the person took."""
    acted = 0
    stream = client.stub.WatchGame(
        game_service_pb2.WatchGameRequest(game_id=game_id),
        metadata=bearer(token),
        timeout=GAME_TIMEOUT,
    )
    try:
        for message in stream:
            view = message.view
            if view.phase == view_pb2.PHASE_GAME_OVER:
                return view, acted
            if message.version != view.version:
                continue
            if view.HasField("turn") and view.turn == view.seat and view.legal_actions:
                latest = view_of(client, game_id, token)
                if latest.version == view.version:  # act on the game as it is now
                    act_first_legal(client, game_id, token, view)
                    acted += 1
    finally:
        stream.cancel()
    raise AssertionError(f"the stream of game {game_id} ended before the game did")


def person_acts(client: Client, game_id: str, token: str) -> bool:
    """The person's first legal action if it is its turn now; whether it was."""
    mine = view_of(client, game_id, token)
    if not (mine.HasField("turn") and mine.turn == mine.seat and mine.legal_actions):
        return False
    act_first_legal(client, game_id, token, mine)
    return True


def wait_for(what: str, test: Callable[[], bool], timeout: float = GAME_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {timeout} s: {what}")
        time.sleep(0.02)


def check_house_actions(server: RunningServer, game_id: str, house: dict[int, str]) -> int:
    """Every action of a house seat in the log was submitted as a seat's action is: at the
    version before it, with the house bot's request id for that version. Their number."""
    found = 0
    for seq, event in log_events(server, game_id):
        if not isinstance(event, ACTIONS) or event.seat not in house:
            continue
        request = server.store.find_request(game_id, f"{HOUSE_REQUEST}{event.seat}:{seq - 1}")
        assert request is not None, f"seat {event.seat}'s action {seq} has no house request"
        assert request.seat == event.seat and request.result_version >= seq
        found += 1
    return found


def verified(server: RunningServer, game_id: str) -> bool:
    return verify_record(Archive(server.store).record(game_id)).valid


# ---------------------------------------------------------------- whole games


def test_a_person_plays_a_whole_texas42_game_against_three_house_bots(
    server: RunningServer, client: Client
) -> None:
    house = {1: "heuristic", 2: "random", 3: "heuristic"}
    created = create(client, house)
    game_id = created.game_id
    assert created.game.status == game_pb2.GAME_STATUS_OPEN  # seat 0 waits for its person
    seat, token = seat_person(client, game_id)
    assert seat == 0
    final, acted = play_as_person(client, game_id, token)
    assert final.HasField("winner") and acted > 0
    summary = client.game(game_id)
    assert summary.status == game_pb2.GAME_STATUS_FINISHED
    assert [(s.player_name, s.house_bot) for s in summary.seats] == [
        ("person", ""),
        ("heuristic bot 1", "heuristic"),
        ("random bot 2", "random"),
        ("heuristic bot 3", "heuristic"),
    ]
    assert check_house_actions(server, game_id, house) > acted  # three bots, one person
    assert verified(server, game_id)


def test_a_person_plays_moon_against_a_sampler_and_a_heuristic_house_bot(
    server: RunningServer, client: Client
) -> None:
    house = {0: "sampler", 2: "heuristic"}
    created = create(client, house, "moon", hand_limit=2)
    game_id = created.game_id
    seat, token = seat_person(client, game_id)
    assert seat == 1  # the one seat left
    final, _ = play_as_person(client, game_id, token)
    assert final.HasField("winner")
    sampler_moves = [
        e for _, e in log_events(server, game_id) if isinstance(e, ACTIONS) and e.seat == 0
    ]
    assert sampler_moves, "the sampler never acted"
    assert check_house_actions(server, game_id, house) >= len(sampler_moves)
    assert verified(server, game_id)


def test_a_person_plays_a_hand_of_texas42_against_an_expert_a_sampler_and_a_heuristic_house_bot(
    server: RunningServer, client: Client
) -> None:
    """The expert is a house bot like any other: it decides in the worker processes with its
    own default budget, and the hand plays to the end."""
    house = {0: "expert", 1: "sampler", 3: "heuristic"}
    created = create(client, house, "texas42", hand_limit=1)
    game_id = created.game_id
    seat, token = seat_person(client, game_id)
    assert seat == 2  # the one seat left
    final, _ = play_as_person(client, game_id, token)
    assert final.phase == view_pb2.PHASE_GAME_OVER
    summary = client.game(game_id)
    assert summary.status == game_pb2.GAME_STATUS_FINISHED
    assert summary.seats[0].house_bot == "expert"
    expert_moves = [
        e for _, e in log_events(server, game_id) if isinstance(e, ACTIONS) and e.seat == 0
    ]
    assert expert_moves, "the expert never acted"
    assert check_house_actions(server, game_id, house) >= len(expert_moves)
    assert verified(server, game_id)


def test_a_person_plays_a_two_player_table_against_one_house_bot(
    server: RunningServer, client: Client
) -> None:
    created = create(client, {1: "random"}, "texas42", players=2)
    game_id = created.game_id
    _, token = seat_person(client, game_id)
    final, _ = play_as_person(client, game_id, token)
    assert final.HasField("winner")


def test_house_bots_act_on_a_clocked_table_well_within_its_time(
    server: RunningServer, client: Client
) -> None:
    """A house bot's turn is timed like anybody's; it acts at once, so it never runs out
    (a minute a move, no bank: a hang, not a slow machine, would run it out)."""
    request = game_service_pb2.CreateGameRequest(
        rules=rules_pb2.Ruleset(preset="texas42", marks_to_win=1),
        time_control=game_pb2.TimeControl(
            per_move_ms=60_000, bank_ms=0, policy=events_pb2.TIMEOUT_POLICY_FORFEIT
        ),
        house_bots=[game_service_pb2.HouseBot(seat=s, strategy="heuristic") for s in (1, 3)],
    )
    game_id = client.stub.CreateGame(request, timeout=RPC_TIMEOUT).game_id
    _, first = seat_person(client, game_id)
    _, second = seat_person(client, game_id)

    def over() -> bool:
        for token in (first, second):
            person_acts(client, game_id, token)
        return client.game(game_id).status == game_pb2.GAME_STATUS_FINISHED

    wait_for("the game's end", over)
    events = [e for _, e in log_events(server, game_id)]
    assert not any(isinstance(e, engine.ClockExpired) for e in events)
    assert isinstance(events[-1], engine.GameWon)


# ---------------------------------------------------------------- bad requests


@pytest.mark.parametrize(
    ("house", "preset", "message"),
    [
        ({1: "clever"}, "texas42", "no strategy 'clever'"),
        ({4: "random"}, "texas42", "seats 0..3"),
        ({3: "random"}, "moon", "seats 0..2"),
        ({0: "random", 1: "heuristic", 2: "sampler", 3: "random"}, "texas42", "leave a seat"),
        ({0: "random", 1: "heuristic", 2: "sampler"}, "moon", "leave a seat"),
    ],
)
def test_a_house_bot_that_cannot_be_seated_is_invalid_and_makes_no_game(
    server: RunningServer, client: Client, house: dict[int, str], preset: str, message: str
) -> None:
    before = server.store.list_games(page_size=1000)[0]
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, message):
        create(client, house, preset)
    assert server.store.list_games(page_size=1000)[0] == before


def test_a_seat_given_two_house_bots_is_invalid_and_makes_no_game(
    server: RunningServer, client: Client
) -> None:
    before = server.store.list_games(page_size=1000)[0]
    request = game_service_pb2.CreateGameRequest(
        rules=rules_pb2.Ruleset(preset="texas42"),
        house_bots=[
            game_service_pb2.HouseBot(seat=2, strategy="random"),
            game_service_pb2.HouseBot(seat=2, strategy="heuristic"),
        ],
    )
    with rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "two house bots"):
        client.stub.CreateGame(request, timeout=RPC_TIMEOUT)
    assert server.store.list_games(page_size=1000)[0] == before


def test_a_house_seat_cannot_be_taken(server: RunningServer, client: Client) -> None:
    game_id = create(client, {2: "random"}).game_id
    with rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "seat 2", "taken"):
        client.take_seat(game_id, 2)
    assert client.take_seat(game_id).seat == 0  # the lowest free seat is a person's


def test_house_bots_wait_for_every_seat_to_be_taken(
    server: RunningServer, client: Client
) -> None:
    """An open table does not play: the bots act once the last person sits down."""
    game_id = create(client, {0: "random", 2: "random"}).game_id
    version = client.game(game_id).version
    _, first = seat_person(client, game_id)
    assert client.game(game_id).version == version  # one seat is still free
    _, second = seat_person(client, game_id)

    def over() -> bool:
        for token in (first, second):
            person_acts(client, game_id, token)
        return client.game(game_id).status == game_pb2.GAME_STATUS_FINISHED

    wait_for("the game's end", over)


def test_house_seeds_are_fixed_by_the_game_and_the_seat() -> None:
    game = "7a0c4c61-2d5e-4f0e-9d59-5b2d3c1e9f00"
    assert house_seed(game, 1) == house_seed(game, 1)
    assert len({house_seed(game, s) for s in range(4)}) == 4
    assert all(-(2**63) <= house_seed(game, s) < 2**63 for s in range(4))


# ---------------------------------------------------------------- the event loop


class Held:
    """Worker processes stopped (SIGSTOP) until ``let_go``: decisions given them wait."""

    def __init__(self) -> None:
        self.pids: list[int] = []

    def hold(self, pids: Sequence[int]) -> None:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
            self.pids.append(pid)

    def let_go(self) -> None:
        for pid in self.pids:
            os.kill(pid, signal.SIGCONT)
        self.pids.clear()


def hand_over_held(
    client: Client,
    game_id: str,
    token: str,
    workers: Callable[[], list[int]],
    held: Held,
    seats: Sequence[int],
) -> bool:
    """On the person's turn, when no house bot is deciding: stop the workers, then act. True
    when that gave the turn to one of ``seats`` (whose decision now surely waits in a stopped
    worker); otherwise the workers go on and False (call again)."""
    mine = view_of(client, game_id, token)
    if not (mine.turn == mine.seat and mine.legal_actions):
        return False
    running = workers()
    if not running:  # none started yet (no house bot has had a turn): just play
        act_first_legal(client, game_id, token, mine)
        return False
    held.hold(running)
    act_first_legal(client, game_id, token, mine)
    if view_of(client, game_id).turn in seats:
        return True
    held.let_go()  # the turn went elsewhere (a trick or an auction won): play on
    return False


def test_the_server_answers_while_a_sampler_decides(
    fresh_server: RunningServer,
) -> None:
    """The sampler decides in a worker process. The worker is stopped (SIGSTOP) before the
    person's action that gives the sampler its turn, so that its decision is surely still to
    be made: the server answers GetGame and GetView meanwhile, again and again (from the event
    loop, which a decision made on it would block), the game waits at the version the sampler
    decides at, and the sampler's action comes as soon as the worker goes on."""
    server = fresh_server
    client = Client(server.address)
    bots = server.app.house
    held = Held()
    try:
        house = {1: "sampler", 2: "random", 3: "random"}
        game_id = create(client, house).game_id
        _, token = seat_person(client, game_id)

        async def deciding() -> bool:
            return game_id in bots._acting

        wait_for(
            "the person's action giving the sampler its turn",
            lambda: hand_over_held(client, game_id, token, bots.workers.pids, held, [1]),
        )
        wait_for("the sampler's decision in its worker", lambda: server.run(deciding()))
        waiting = client.game(game_id).version
        for _ in range(20):  # the loop answers, again and again, while the sampler is held
            assert client.game(game_id).version == waiting
            assert view_of(client, game_id, token).version == waiting
            assert view_of(client, game_id).turn == 1
        assert server.run(deciding())  # and the decision is still to be made
        held.let_go()
        wait_for("the sampler's action", lambda: client.game(game_id).version > waiting)
        seq, event = log_events(server, game_id)[waiting]
        assert seq == waiting + 1 and isinstance(event, ACTIONS) and event.seat == 1
    finally:
        held.let_go()
        client.close()


# ---------------------------------------------------------------- shutting down


def test_stopping_the_server_stops_its_bot_workers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with fresh_database("sqlite", request, tmp_path_factory) as url:
        server = RunningServer(url)
        client = Client(server.address)
        try:
            game_id = create(client, {1: "random", 2: "random", 3: "random"}).game_id
            _, token = seat_person(client, game_id)

            def working() -> bool:
                person_acts(client, game_id, token)
                return bool(server.app.house.workers.pids())

            wait_for("a worker", working)
            pids = server.app.house.workers.pids()
        finally:
            client.close()
            server.close()
        for pid in pids:
            wait_for(f"worker {pid} to exit", lambda pid=pid: not _alive(pid), timeout=60)


def _alive(pid: int) -> bool:
    """Whether a process (not a zombie) is there."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# ---------------------------------------------------------------- several processes


@pytest.fixture
def two_processes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Two servers on one PostgreSQL database, as two processes would be."""
    with fresh_database("postgresql", request, tmp_path_factory) as url:
        first = RunningServer(url)
        try:
            second = RunningServer(url)
            try:
                yield first, second
            finally:
                second.close()
        finally:
            first.close()


@pytest.mark.postgres
def test_two_processes_deciding_one_turn_commit_one_action(
    two_processes: tuple[RunningServer, RunningServer],
) -> None:
    """A house bot's turn decided by both processes: the version check lets one action in,
    and the other process's decision is answered as already made (or refused), and goes on."""
    first, second = two_processes
    one, other = Client(first.address), Client(second.address)
    try:
        house = {1: "random", 2: "random", 3: "random"}
        game_id = create(one, house).game_id
        _, token = seat_person(one, game_id)
        held = Held()
        try:
            # The first process's house bot gets a turn its stopped worker cannot decide ...
            wait_for(
                "a house bot's turn held in the first process",
                lambda: hand_over_held(
                    one, game_id, token, first.app.house.workers.pids, held, list(house)
                ),
            )
            waiting = one.game(game_id).version
            # ... so the second process, asked to look, decides and acts first.
            second.run(_look(second, game_id))
            wait_for(
                "the second process's bot to act", lambda: other.game(game_id).version > waiting
            )
        finally:
            held.let_go()
        final, _ = play_as_person(one, game_id, token)
        assert final.HasField("winner")
        wait_for("the first process's late decision", lambda: first.app.house.late >= 1)
        assert second.app.house.decisions >= 1
        actions = check_house_actions(first, game_id, house)
        assert first.app.house.decisions + second.app.house.decisions == actions
        assert verified(first, game_id)
    finally:
        one.close()
        other.close()


@pytest.mark.postgres
def test_a_house_bot_goes_on_when_the_process_that_should_act_is_gone(
    two_processes: tuple[RunningServer, RunningServer],
) -> None:
    """The person acts through the first process, whose house bots are stopped (as if it had
    died); the second process, which has played the game, hears of the change and, when no
    house bot has acted in ``takeover_after`` seconds, acts itself."""
    first, second = two_processes
    one, other = Client(first.address), Client(second.address)
    try:
        house = {1: "random", 2: "random", 3: "random"}
        game_id = create(other, house).game_id
        _, token = seat_person(other, game_id)  # the second process follows the game
        second.app.house.takeover_after = 0.2
        first.run(first.app.house.stop())  # the first process's bots are gone
        final, acted = play_as_person(one, game_id, token)  # the person talks to the first
        assert final.HasField("winner") and acted > 0
        assert first.app.house.decisions == 0
        assert second.app.house.decisions == check_house_actions(second, game_id, house)
    finally:
        one.close()
        other.close()


async def _look(server: RunningServer, game_id: str) -> None:
    server.app.house.look(game_id)



# ---------------------------------------------------------------- kill -9


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the server's bot workers and their helpers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return found


def test_house_bots_finish_a_game_after_kill_9_of_the_server(tmp_path: Path) -> None:
    """The server is killed (SIGKILL) right after the person's action gave a house bot the
    turn, its workers held so that the bot had not acted: the action survives, the orphaned
    workers exit, and the restarted server's house bots take their turn with nobody asking,
    then play the game out with the person."""
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    log = tmp_path / "server.log"
    house = {1: "heuristic", 2: "random", 3: "heuristic"}
    orphans: list[int] = []
    with ServerProcess.start(log, url) as server:
        client = Client(server.address)
        try:
            game_id = create(client, house).game_id
            _, token = seat_person(client, game_id)

            held = Held()
            try:
                wait_for(
                    "a house bot's turn after the person's action, its workers held",
                    lambda: hand_over_held(
                        client, game_id, token, lambda: children_of(server.proc.pid), held,
                        list(house),
                    ),
                )
                orphans.extend(held.pids)
                server.kill()
            finally:
                held.let_go()  # the server is gone: they go on only to see it and leave
        finally:
            client.close()
    assert server.proc.returncode == -9
    for pid in orphans:  # they see the server gone and leave
        wait_for(f"orphaned worker {pid} to exit", lambda pid=pid: not _alive(pid), 60)

    with ServerProcess.start(log, url) as server:
        client = Client(server.address)
        try:
            killed_at = client.game(game_id).version
            assert view_of(client, game_id).turn in house  # as the kill left it
            wait_for(
                "the house bot to act after the restart, unasked",
                lambda: client.game(game_id).version > killed_at,
            )
            final, _ = play_as_person(client, game_id, token)
            assert final.HasField("winner")
            archive = archive_pb2_grpc.ArchiveServiceStub(client.channel)
            record = archive.GetRecord(
                archive_pb2.GetRecordRequest(game_id=game_id), timeout=RPC_TIMEOUT
            ).record
            assert verify_record(record).valid
        finally:
            client.close()
        assert server.terminate() == 0
