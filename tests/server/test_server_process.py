"""``boneyard-server`` as a real process: kill -9 and restart, several processes on one
PostgreSQL database, health checking and reflection (grpcurl), the command line.

Every server here is a subprocess started from the venv's console script, listening on a
port of its own choosing on 127.0.0.1 (``--listen 127.0.0.1:0``; the port is read from its
"listening" line). The PostgreSQL tests run when BONEYARD_TEST_DATABASE_URL is set, each on a
fresh database of its own.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from process_helpers import (
    GRPCURL,
    SERVER_BIN,
    Ack,
    Move,
    ServerProcess,
    bearer,
    clean_env,
    create_game,
    event_matches_action,
    free_port,
    fresh_pg_database,
    next_move,
    play_one,
    seat_all,
    spectator_view,
    submit,
    watch,
)

from boneyard.api.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc, rules_pb2, view_pb2

SERVICE = "boneyard.v1.GameService"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'boneyard.db'}"


@pytest.fixture
def pg_url(postgres_url: str) -> Iterator[str]:
    with fresh_pg_database(postgres_url) as url:
        yield url


def check_log_against_acks(
    messages: list[game_service_pb2.WatchGameResponse], acks: list[Ack]
) -> None:
    """The stream is the numbered log 1..n and holds every acknowledged action where the
    server said it put it."""
    assert [m.version for m in messages] == list(range(1, len(messages) + 1))
    assert [m.event.seq for m in messages] == [m.version for m in messages]
    for ack in acks:
        assert ack.version <= len(messages), f"acknowledged version {ack.version} is missing"
        event = messages[ack.expected_version].event  # seq expected_version + 1
        assert event_matches_action(event, ack.seat, ack.action), (ack, event)
    for before, after in itertools.pairwise(acks):
        assert after.expected_version == before.version


# --- kill -9 ------------------------------------------------------------------------


def test_acknowledged_actions_survive_kill_9_and_the_game_goes_on(
    tmp_path: Path, sqlite_url: str
) -> None:
    log = tmp_path / "server.log"
    with ServerProcess.start(log, sqlite_url) as server:
        stub = server.stub()
        game_id = create_game(stub, "texas42", name="kill -9")
        tokens = seat_all(stub, game_id)
        acks: list[Ack] = []
        for _ in range(45):  # a hand and a half with first-legal play
            ack = play_one(stub, game_id, tokens)
            assert ack is not None
            acks.append(ack)
        last = acks[-1].version
        before = watch(stub, game_id, 0, last)
        seat2_before = watch(stub, game_id, 0, last, metadata=bearer(tokens[2]))
        server.kill()
    assert server.proc.returncode == -9

    with ServerProcess.start(log, sqlite_url) as server:
        stub = server.stub()
        view = spectator_view(stub, game_id)
        assert view.version >= last
        assert view.version == last  # nobody else acted
        after = watch(stub, game_id, 0, last)
        assert after == before, "WatchGame from 0 replays another log after the restart"
        assert watch(stub, game_id, 0, last, metadata=bearer(tokens[2])) == seat2_before
        check_log_against_acks(after, acks)

        # The request log survived too: a retry of the last action is answered, not applied.
        final = acks[-1]
        again = submit(
            stub,
            game_id,
            tokens,
            Move(final.seat, final.expected_version, final.request_id, final.action),
        )
        assert again == final
        assert spectator_view(stub, game_id).version == last

        # The tokens still act; play to the end.
        while (ack := play_one(stub, game_id, tokens)) is not None:
            acks.append(ack)
        messages = watch(stub, game_id, 0, None, timeout=60)  # ends with the game
        check_log_against_acks(messages, acks)
        assert messages[-1].event.WhichOneof("kind") == "game_won"
        assert messages[-1].view.phase == view_pb2.PHASE_GAME_OVER
        assert messages[-1].view.HasField("winner")
        summary = stub.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=30).game
        assert summary.status == game_pb2.GAME_STATUS_FINISHED
        assert summary.version == messages[-1].version
        assert server.terminate() == 0


def test_kill_9_while_actions_are_in_flight(tmp_path: Path, sqlite_url: str) -> None:
    """SIGKILL lands at a random moment of a stream of actions: every acknowledged one is
    kept, and the action in flight is applied exactly once when retried with its request_id."""
    log = tmp_path / "server.log"
    rng = random.Random(7)
    acks: list[Ack] = []
    with ServerProcess.start(log, sqlite_url) as server:
        stub = server.stub()
        # Random bids of 84 set on the first trick end a game to 7 marks in a few dozen
        # actions: play to 50, so the kill always lands mid-game.
        game_id = create_game(stub, "texas42", marks_to_win=50)
        tokens = seat_all(stub, game_id)
        pending: list[Move] = []
        failure: list[Exception] = []

        def play() -> None:
            try:
                while True:
                    move = next_move(stub, game_id, tokens, lambda v: rng.choice(v.legal_actions))
                    if move is None:
                        return
                    pending[:] = [move]
                    acks.append(submit(stub, game_id, tokens, move))
                    pending.clear()
            except grpc.RpcError as e:
                failure.append(e)
            except ValueError as e:
                # The kill closed the channel between two calls (on a busy machine the thread
                # may not be inside a call when it lands): the same interruption.
                if "closed channel" not in str(e):
                    raise
                failure.append(e)

        player = threading.Thread(target=play)
        player.start()
        # Waits are for hangs only: a slow, busy machine takes longer and still passes.
        deadline = time.monotonic() + 300
        while len(acks) < 20 and player.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.3))
        server.kill()
        player.join(timeout=120)
        assert not player.is_alive()
    assert failure, "the game ended before the kill: play a longer game"
    assert len(acks) >= 20

    with ServerProcess.start(log, sqlite_url) as server:
        stub = server.stub()
        version = spectator_view(stub, game_id).version
        assert version >= acks[-1].version
        check_log_against_acks(watch(stub, game_id, 0, version), acks)
        if pending:
            move = pending[0]
            if move.expected_version == acks[-1].version:  # sent, maybe applied
                acks.append(submit(stub, game_id, tokens, move))
        assert spectator_view(stub, game_id).version == acks[-1].version
        check_log_against_acks(watch(stub, game_id, 0, acks[-1].version), acks)


def test_kill_9_with_many_games_and_batches_in_flight(tmp_path: Path, sqlite_url: str) -> None:
    """Sixteen games played at once, so the writer commits batches of several games' actions,
    and SIGKILL lands in the middle: after a restart each game's log holds every action that
    was acknowledged, and its action in flight, retried with its request_id, applies once."""
    log = tmp_path / "server.log"
    games = 16
    acks: list[list[Ack]] = [[] for _ in range(games)]
    pending: list[list[Move]] = [[] for _ in range(games)]
    with ServerProcess.start(log, sqlite_url) as server:
        stub = server.stub()
        tables = []
        for _ in range(games):
            game_id = create_game(stub, "texas42", marks_to_win=50)
            tables.append((game_id, seat_all(stub, game_id)))

        def play(index: int) -> None:
            rng = random.Random(index)
            game_id, tokens = tables[index]
            try:
                while True:
                    move = next_move(stub, game_id, tokens, lambda v: rng.choice(v.legal_actions))
                    if move is None:
                        return
                    pending[index][:] = [move]
                    acks[index].append(submit(stub, game_id, tokens, move))
                    pending[index].clear()
            except (grpc.RpcError, ValueError):  # ValueError: the kill closed the channel
                return

        players = [threading.Thread(target=play, args=(i,)) for i in range(games)]
        for player in players:
            player.start()
        deadline = time.monotonic() + 60
        while sum(map(len, acks)) < 10 * games and time.monotonic() < deadline:
            time.sleep(0.01)
        server.kill()
        for player in players:
            player.join(timeout=120)
            assert not player.is_alive()
    assert sum(map(len, acks)) >= 10 * games

    with ServerProcess.start(log, sqlite_url) as server:
        stub = server.stub()
        for (game_id, tokens), acked, moves in zip(tables, acks, pending, strict=True):
            if not acked:
                continue
            version = spectator_view(stub, game_id).version
            assert version >= acked[-1].version
            check_log_against_acks(watch(stub, game_id, 0, version), acked)
            if moves and moves[0].expected_version == acked[-1].version:
                acked.append(submit(stub, game_id, tokens, moves[0]))
            assert spectator_view(stub, game_id).version == acked[-1].version
            check_log_against_acks(watch(stub, game_id, 0, acked[-1].version), acked)


def test_kill_9_cycles_with_retried_creates_and_seats_leave_no_stuck_game(
    tmp_path: Path, sqlite_url: str
) -> None:
    """Issue 13, defect 4: a client makes tables (CreateGame, then TakeSeat for every seat),
    retrying each call with its request_id whenever the server is away, while the server is
    killed with SIGKILL again and again. In the end every table has one game, every game has
    all its seats and is being played: none is stuck open, none lost a seat to a retry."""
    log = tmp_path / "server.log"
    listen = f"127.0.0.1:{free_port()}"
    stop = threading.Event()
    tables: list[str] = []

    def retried(call: Any, request: Any) -> Any:
        while True:
            try:
                return call(request, timeout=2, wait_for_ready=True)
            except grpc.RpcError as e:
                if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise
                time.sleep(0.02)

    def make_tables() -> None:
        with grpc.insecure_channel(listen) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            table = 0
            while not stop.is_set():
                game = retried(
                    stub.CreateGame,
                    game_service_pb2.CreateGameRequest(
                        rules=rules_pb2.Ruleset(preset="texas42"), request_id=f"table-{table}"
                    ),
                )
                tables.append(game.game_id)
                for seat in range(4):
                    retried(
                        stub.TakeSeat,
                        game_service_pb2.TakeSeatRequest(
                            game_id=game.game_id,
                            player_name=f"p{seat}",
                            request_id=f"table-{table}-seat-{seat}",
                        ),
                    )
                table += 1

    rng = random.Random(13)
    maker = threading.Thread(target=make_tables)
    for cycle in range(6):
        server = ServerProcess.start(log, sqlite_url, listen=listen)
        if cycle == 0:
            maker.start()
        time.sleep(rng.uniform(0.2, 0.6))
        server.kill()
    with ServerProcess.start(log, sqlite_url, listen=listen) as server:
        # Tables enough to mean something, however few the kill cycles let through on a busy
        # machine (a hang guard, not a bound on speed).
        deadline = time.monotonic() + 120
        while len(tables) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
        maker.join(timeout=60)
        assert not maker.is_alive()
        stub = server.stub()
        # Every page: a fast machine makes more tables than one page holds (CI made 220).
        games: list[Any] = []
        token = ""
        while True:
            page = stub.ListGames(
                game_service_pb2.ListGamesRequest(page_size=200, page_token=token), timeout=30
            )
            games += page.games
            token = page.next_page_token
            if not token:
                break
    assert len(tables) >= 6
    assert len({g.game_id for g in games}) == len(games) == len(set(tables))
    for game in games:
        assert all(s.occupied for s in game.seats), game
        assert game.status == game_pb2.GAME_STATUS_PLAYING, game


def test_sigterm_stops_the_server_with_a_stream_open(tmp_path: Path, sqlite_url: str) -> None:
    # A grace of ten minutes: an open stream that held the drain for it would show whatever the
    # machine's speed (the stream is ended when told, not waited for).
    with ServerProcess.start(
        tmp_path / "server.log", sqlite_url, extra_args=["--shutdown-grace", "600"]
    ) as server:
        stub = server.stub()
        game_id = create_game(stub)
        version = spectator_view(stub, game_id).version
        call = stub.WatchGame(
            game_service_pb2.WatchGameRequest(game_id=game_id, from_version=version), timeout=60
        )
        ended: list[grpc.StatusCode] = []

        def drain() -> None:
            try:
                for _ in call:
                    pass
                ended.append(grpc.StatusCode.OK)
            except grpc.RpcError as e:
                ended.append(e.code())

        reader = threading.Thread(target=drain)
        reader.start()
        time.sleep(0.5)
        assert server.terminate(timeout=300) == 0
        reader.join(timeout=60)
        assert ended and ended[0] is not grpc.StatusCode.DEADLINE_EXCEEDED


# --- several processes on one PostgreSQL database ------------------------------------


def start_pair(tmp_path: Path, url: str) -> tuple[ServerProcess, ServerProcess]:
    """Two servers started at the same moment on one (empty) database: both migrate."""
    a = ServerProcess.start(tmp_path / "a.log", url, wait=False)
    b = ServerProcess.start(tmp_path / "b.log", url, wait=False)
    try:
        a.wait_listening()
        b.wait_listening()
    except BaseException:
        a.kill()
        b.kill()
        raise
    return a, b


@pytest.mark.postgres
def test_a_watcher_on_one_process_sees_moves_made_through_another(
    tmp_path: Path, pg_url: str
) -> None:
    a, b = start_pair(tmp_path, pg_url)
    with a, b:
        stub_a, stub_b = a.stub(), b.stub()
        game_id = create_game(stub_a, "texas42")
        tokens = seat_all(stub_b, game_id)  # seats taken through B, used through A below
        start = spectator_view(stub_a, game_id).version
        moves = 24

        received: list[tuple[float, game_service_pb2.WatchGameResponse]] = []
        errors: list[BaseException] = []
        call = stub_a.WatchGame(
            game_service_pb2.WatchGameRequest(game_id=game_id, from_version=start),
            metadata=bearer(tokens[0]),
            timeout=120,
        )

        def read() -> None:
            try:
                for message in call:
                    received.append((time.monotonic(), message))
            except grpc.RpcError as e:
                if e.code() is not grpc.StatusCode.CANCELLED:
                    errors.append(e)

        reader = threading.Thread(target=read)
        reader.start()
        try:
            acks: list[tuple[float, Ack]] = []
            for _ in range(moves):
                ack = play_one(stub_b, game_id, tokens)
                assert ack is not None
                acks.append((time.monotonic(), ack))
                time.sleep(0.02)
            deadline = time.monotonic() + 60
            last = acks[-1][1].version
            while time.monotonic() < deadline and (not received or received[-1][1].version < last):
                time.sleep(0.02)
        finally:
            call.cancel()
            reader.join(timeout=60)
        assert not errors
        versions = [m.version for _, m in received]
        assert versions == list(range(start + 1, last + 1)), "gaps or repeats in the stream"
        # (How soon each arrived is the machine's speed, not a rule: the 60 s above is a hang
        # guard; A is told of B's commits by PostgreSQL's notifications, not by a poll.)
        # Seat 0's stream shows seat 0's hand, and the same events B serves to seat 0.
        assert [m for _, m in received] == watch(
            stub_b, game_id, start, last - start, metadata=bearer(tokens[0])
        )
        assert all(m.view.seat == 0 for _, m in received)


@pytest.mark.postgres
def test_a_seat_left_through_one_process_is_closed_in_the_other(
    tmp_path: Path, pg_url: str
) -> None:
    """B holds the game in memory with the seat taken; the player leaves through A: B stops
    taking the old token (the change arrives by LISTEN/NOTIFY) and seats somebody else."""
    a, b = start_pair(tmp_path, pg_url)
    with a, b:
        stub_a, stub_b = a.stub(), b.stub()
        game_id = create_game(stub_a, "texas42")
        taken = stub_a.TakeSeat(
            game_service_pb2.TakeSeatRequest(game_id=game_id, player_name="leaver", seat=0),
            timeout=30,
        )
        view = game_service_pb2.GetViewRequest(game_id=game_id)
        assert stub_b.GetView(view, metadata=bearer(taken.seat_token), timeout=30).view.seat == 0
        stub_a.LeaveSeat(
            game_service_pb2.LeaveSeatRequest(game_id=game_id),
            metadata=bearer(taken.seat_token),
            timeout=30,
        )
        deadline = time.monotonic() + 60  # for a hang only
        while True:
            try:
                stub_b.GetView(view, metadata=bearer(taken.seat_token), timeout=30)
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNAUTHENTICATED, e.details()
                break
            assert time.monotonic() < deadline, "process B still takes the token of a seat left"
            time.sleep(0.05)
        again = stub_b.TakeSeat(
            game_service_pb2.TakeSeatRequest(game_id=game_id, player_name="next", seat=0),
            timeout=30,
        )
        assert again.seat == 0 and again.game.seats[0].player_name == "next"


def test_racing_one_version_through_two_processes(tmp_path: Path, pg_url: str) -> None:
    rounds = 60
    rng = random.Random(42)
    a, b = start_pair(tmp_path, pg_url)
    with a, b:
        stubs = [a.stub(), b.stub()]
        raced = 0
        while raced < rounds:
            # The racers' random bids may end a game (its deals are the server's): the races
            # go on at a new table.
            game_id = create_game(stubs[0], "texas42")
            tokens = seat_all(stubs[1], game_id)
            winners: list[Ack] = []
            while raced < rounds:
                # Both sides act for the seat to act, from the same view: one with the first
                # legal action, the other with a random one (often another action, sometimes
                # the same).
                views: list[view_pb2.SeatView] = []

                def first(
                    view: view_pb2.SeatView, views: list[view_pb2.SeatView] = views
                ) -> Any:
                    views.append(view)
                    return view.legal_actions[0]

                seen = next_move(stubs[raced % 2], game_id, tokens, first)
                if seen is None:
                    break
                assert spectator_view(stubs[0], game_id).version == seen.expected_version
                contenders = [
                    Move(seen.seat, seen.expected_version, f"race-{raced}-{side}", action)
                    for side, action in enumerate(
                        [seen.action, rng.choice(list(views[0].legal_actions))]
                    )
                ]
                winners.append(_race(stubs, game_id, tokens, contenders, raced))
                raced += 1
            _check_races(stubs, game_id, winners)


def _race(
    stubs: list[game_service_pb2_grpc.GameServiceStub],
    game_id: str,
    tokens: list[str],
    contenders: list[Move],
    round_: int,
) -> Ack:
    """Send each contender through its own process at once: exactly one wins, the other is
    ABORTED; the winner's answer."""
    barrier = threading.Barrier(2)
    outcome: list[Ack | grpc.StatusCode | None] = [None, None]

    def race(side: int, move: Move) -> None:
        barrier.wait(timeout=60)
        try:
            outcome[side] = submit(stubs[side], game_id, tokens, move)
        except grpc.RpcError as e:
            outcome[side] = e.code()

    threads = [threading.Thread(target=race, args=(side, contenders[side])) for side in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    won = [o for o in outcome if isinstance(o, Ack)]
    lost = [o for o in outcome if not isinstance(o, Ack)]
    assert len(won) == 1, f"round {round_}: {outcome}"
    assert lost == [grpc.StatusCode.ABORTED], f"round {round_}: {outcome}"
    return won[0]


def _check_races(
    stubs: list[game_service_pb2_grpc.GameServiceStub], game_id: str, winners: list[Ack]
) -> None:
    """Both processes show the game at the last winner's version, with every winner's action
    in its log in order, and nothing after it."""
    if not winners:
        return
    final = winners[-1].version
    for stub in stubs:
        public = spectator_view(stub, game_id)
        assert public.version == final
        messages = watch(stub, game_id, 0, final)
        check_log_against_acks(messages, winners)
        if public.phase == view_pb2.PHASE_GAME_OVER:
            assert watch(stub, game_id, final) == []  # the stream of a game over just ends
            continue
        # ...and nothing after the last winner: a stream from there has nothing to say.
        with pytest.raises(grpc.RpcError) as waited:
            watch(stub, game_id, final, 1, timeout=1.0)
        assert waited.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED


@pytest.mark.postgres
def test_one_request_id_through_two_processes_is_applied_once(tmp_path: Path, pg_url: str) -> None:
    a, b = start_pair(tmp_path, pg_url)
    with a, b:
        stubs = [a.stub(), b.stub()]
        game_id = create_game(stubs[0], "texas42")
        tokens = seat_all(stubs[0], game_id)
        for round_ in range(20):
            move = next_move(stubs[0], game_id, tokens)
            assert move is not None
            barrier = threading.Barrier(2)
            answers: list[Ack | grpc.StatusCode | None] = [None, None]

            def send(
                side: int,
                move: Move = move,
                barrier: threading.Barrier = barrier,
                answers: list[Ack | grpc.StatusCode | None] = answers,
            ) -> None:
                barrier.wait(timeout=60)
                try:
                    answers[side] = submit(stubs[side], game_id, tokens, move)
                except grpc.RpcError as e:
                    answers[side] = e.code()

            threads = [threading.Thread(target=send, args=(side,)) for side in (0, 1)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            assert isinstance(answers[0], Ack) and answers[0] == answers[1], (round_, answers)
            assert spectator_view(stubs[1], game_id).version == answers[0].version


# --- health, reflection, grpcurl -----------------------------------------------------


def grpcurl(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GRPCURL), *args],
        cwd=cwd,  # no .proto files here: everything comes from reflection
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )


def test_health_checks_and_grpcurl_work_without_proto_files(
    tmp_path: Path, sqlite_url: str
) -> None:
    with ServerProcess.start(tmp_path / "server.log", sqlite_url) as server:
        serving = health_pb2.HealthCheckResponse.SERVING
        assert server.health("") == serving
        assert server.health(SERVICE) == serving
        with grpc.insecure_channel(server.address) as channel:
            with pytest.raises(grpc.RpcError) as unknown:
                health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10
                )
            assert unknown.value.code() is grpc.StatusCode.NOT_FOUND

        empty = tmp_path / "empty"
        empty.mkdir()
        listed = grpcurl(empty, "-plaintext", server.address, "list")
        assert listed.returncode == 0, listed.stderr
        services = set(listed.stdout.split())
        assert {SERVICE, "grpc.health.v1.Health"} <= services
        assert any(s.startswith("grpc.reflection.") for s in services)

        described = grpcurl(empty, "-plaintext", server.address, "describe", SERVICE)
        assert described.returncode == 0, described.stderr
        for rpc in ("CreateGame", "TakeSeat", "GetView", "SubmitAction", "WatchGame"):
            assert f"rpc {rpc}" in described.stdout

        # Messages from the imported files (rules, view, actions...) resolve as well.
        created = grpcurl(
            empty,
            "-plaintext",
            "-d",
            json.dumps({"rules": {"preset": "texas42"}, "name": "from grpcurl"}),
            server.address,
            f"{SERVICE}/CreateGame",
        )
        assert created.returncode == 0, created.stderr
        answer = json.loads(created.stdout)
        game_id = answer.get("gameId", answer.get("game_id"))  # grpcurl < 1.9: proto names
        assert game_id
        viewed = grpcurl(
            empty,
            "-plaintext",
            "-d",
            json.dumps({"gameId": game_id}),
            server.address,
            f"{SERVICE}/GetView",
        )
        assert viewed.returncode == 0, viewed.stderr
        assert json.loads(viewed.stdout)["view"]["phase"] == "PHASE_BIDDING"

        checked = grpcurl(empty, "-plaintext", server.address, "grpc.health.v1.Health/Check")
        assert checked.returncode == 0, checked.stderr
        assert json.loads(checked.stdout) == {"status": "SERVING"}

        failed = grpcurl(
            empty,
            "-plaintext",
            "-d",
            json.dumps({"gameId": "00000000-0000-0000-0000-000000000000"}),
            server.address,
            f"{SERVICE}/GetGame",
        )
        assert failed.returncode != 0
        assert "NotFound" in failed.stdout + failed.stderr


# --- the command line ----------------------------------------------------------------


def test_help_names_the_options_and_their_environment_variables() -> None:
    result = subprocess.run(
        [str(SERVER_BIN), "--help"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())  # argparse wraps lines anywhere
    for word in ("--database-url", "--listen", "BONEYARD_DATABASE_URL", "BONEYARD_LISTEN"):
        assert word in text


def test_environment_variables_choose_the_address_and_the_database(tmp_path: Path) -> None:
    port = free_port()
    db = tmp_path / "from-env.db"
    env = clean_env(BONEYARD_LISTEN=f"127.0.0.1:{port}", BONEYARD_DATABASE_URL=f"sqlite:///{db}")
    log = tmp_path / "server.log"
    with ServerProcess.start(log, None, None, env=env, cwd=tmp_path) as server:
        assert server.address == f"127.0.0.1:{port}"
        game_id = create_game(server.stub(), name="env")
        assert server.terminate() == 0
    assert db.is_file()
    assert not (tmp_path / "boneyard.db").exists()

    # The options win over the variables; the game is in the file the variable named.
    with ServerProcess.start(
        log, f"sqlite:///{db}", "127.0.0.1:0", env=env, cwd=tmp_path
    ) as server:
        assert server.port != port
        summary = server.stub().GetGame(game_service_pb2.GetGameRequest(game_id=game_id)).game
        assert summary.name == "env"


def test_default_database_is_a_file_in_the_working_directory(tmp_path: Path) -> None:
    with ServerProcess.start(tmp_path / "server.log", None, cwd=tmp_path) as server:
        create_game(server.stub())
        assert server.terminate() == 0
    assert (tmp_path / "boneyard.db").is_file()


@pytest.mark.parametrize(
    "listen", ["nonsense", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:-1", ":50051"]
)
def test_a_malformed_listen_address_is_refused(tmp_path: Path, listen: str) -> None:
    result = subprocess.run(
        [str(SERVER_BIN), "--database-url", f"sqlite:///{tmp_path / 'x.db'}", "--listen", listen],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--listen" in result.stderr and "Traceback" not in result.stderr


def test_a_busy_port_is_an_error_not_a_shared_port(tmp_path: Path, sqlite_url: str) -> None:
    """gRPC sets SO_REUSEPORT by default; the server must not silently share a port."""
    with ServerProcess.start(tmp_path / "a.log", sqlite_url) as first:
        second = subprocess.run(
            [
                str(SERVER_BIN),
                "--database-url",
                f"sqlite:///{tmp_path / 'other.db'}",
                "--listen",
                first.address,
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(),
        )
        assert second.returncode == 1, second.stdout + second.stderr
        assert "listening" not in second.stdout
        assert f"cannot listen on {first.address}" in second.stderr
        assert "Traceback" not in second.stderr


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:////nonexistent-dir/boneyard/x.db",
        "postgresql+psycopg://nobody@127.0.0.1:1/nothing",
        "nosuchdialect://x",
    ],
)
def test_an_unusable_database_is_a_clear_error(tmp_path: Path, url: str) -> None:
    result = subprocess.run(
        [str(SERVER_BIN), "--database-url", url, "--listen", "127.0.0.1:0"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "boneyard-server: cannot start" in result.stderr
    assert "Traceback" not in result.stderr
    assert "listening" not in result.stdout
