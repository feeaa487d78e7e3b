"""Challenges and the account stream against real ``boneyard-server`` processes: every bad
request refused with its reason and nothing stored; WatchAccount resumed from a sequence number
after a server restart (events before it replayed, new ones live), on SQLite and on PostgreSQL;
and two processes on one PostgreSQL agreeing on a challenge answered through both."""

from __future__ import annotations

import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from process_helpers import ServerProcess, bearer, fresh_pg_database

from boneyard.api.v1 import challenges_pb2 as pb
from boneyard.api.v1 import challenges_pb2_grpc, game_service_pb2, rules_pb2
from boneyard.clients.api import refusal
from boneyard.server.competition.accounts import key_hash, new_api_key
from boneyard.server.store import EventStore
from boneyard.server.store.competition import CompetitionStore

TIMEOUT = 30
PER_MINUTE = 20


def _accounts(url: str, n: int) -> list[tuple[str, str]]:
    store = EventStore.open(url, migrate=True)
    made = []
    try:
        for _ in range(n):
            name, key = f"bot-{uuid.uuid4().hex[:8]}", new_api_key()
            CompetitionStore(store).create_account(str(uuid.uuid4()), name, "bot", key_hash(key))
            made.append((name, key))
    finally:
        store.close()
    return made


def _challenges(server: ServerProcess) -> challenges_pb2_grpc.ChallengeServiceStub:
    return challenges_pb2_grpc.ChallengeServiceStub(server.channel())


def _challenge(
    stub: challenges_pb2_grpc.ChallengeServiceStub,
    key: str,
    names: list[str],
    preset: str = "texas42",
    players: int | None = None,
    **fields: Any,
) -> pb.Challenge:
    request = pb.CreateChallengeRequest(
        rules=rules_pb2.Ruleset(preset=preset, players=players),
        challenged=[pb.ChallengeInvitation(account=n) for n in names],
        **fields,
    )
    return stub.CreateChallenge(request, metadata=bearer(key), timeout=TIMEOUT).challenge  # type: ignore[no-any-return]


def _refused(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    answer = refusal(caught.value)
    return answer.code, answer.reason


class _Follower:
    """A WatchAccount stream read on a thread, its events queued."""

    def __init__(self, server: ServerProcess, key: str, from_sequence: int = 0) -> None:
        stub = challenges_pb2_grpc.AccountServiceStub(server.channel())
        self.call = stub.WatchAccount(
            pb.WatchAccountRequest(from_sequence=from_sequence), metadata=bearer(key)
        )
        self.events: queue.Queue[pb.AccountEvent] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for message in self.call:
                self.events.put(message.event)
        except grpc.RpcError:
            pass

    def next(self) -> pb.AccountEvent:
        return self.events.get(timeout=TIMEOUT)

    def close(self) -> None:
        self.call.cancel()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    path = tmp_path_factory.mktemp("challenges")
    url = f"sqlite:///{path / 'boneyard.db'}"
    # More challenges a minute than the default 10, so that the tests below can reach the
    # open challenges' bound (16) and the rate's alike.
    with ServerProcess.start(
        path / "server.log", url, extra_args=["--max-challenges-per-minute", str(PER_MINUTE)]
    ) as process:
        process.database_url = url  # type: ignore[attr-defined]
        yield process


# --- bad requests ------------------------------------------------------------------------


def test_bad_challenges_are_refused_with_their_reasons_and_store_nothing(
    server: ServerProcess,
) -> None:
    (me, key), (other, _), (third, _) = _accounts(server.database_url, 3)  # type: ignore[attr-defined]
    stub = _challenges(server)
    bad_argument = (grpc.StatusCode.INVALID_ARGUMENT, "BAD_ARGUMENT")
    cases: list[tuple[Callable[[], Any], tuple[grpc.StatusCode, str]]] = [
        (lambda: _challenge(stub, key, ["nobody-here"]), (grpc.StatusCode.NOT_FOUND, "ACCOUNT_NOT_FOUND")),
        (lambda: _challenge(stub, key, [me]), bad_argument),
        (lambda: _challenge(stub, key, []), bad_argument),
        (lambda: _challenge(stub, key, [other, other]), bad_argument),
        (lambda: _challenge(stub, key, [other], "no-such-game"), (grpc.StatusCode.INVALID_ARGUMENT, "BAD_RULESET")),
        (lambda: _challenge(stub, key, [other], rated=True), bad_argument),  # seats left free
        (lambda: _challenge(stub, key, [other], expires_in_seconds=86401), bad_argument),
        (
            lambda: stub.CreateChallenge(
                pb.CreateChallengeRequest(
                    challenged=[pb.ChallengeInvitation(account=other, seat=4)]
                ),
                metadata=bearer(key),
                timeout=TIMEOUT,
            ),
            bad_argument,
        ),
        (
            lambda: stub.CreateChallenge(
                pb.CreateChallengeRequest(
                    challenged=[
                        pb.ChallengeInvitation(account=other, seat=1),
                        pb.ChallengeInvitation(account=third, seat=1),
                    ]
                ),
                metadata=bearer(key),
                timeout=TIMEOUT,
            ),
            bad_argument,
        ),
        (
            lambda: stub.CreateChallenge(pb.CreateChallengeRequest(), timeout=TIMEOUT),
            (grpc.StatusCode.UNAUTHENTICATED, "API_KEY_REQUIRED"),
        ),
    ]
    for call, expected in cases:
        assert _refused(call) == expected
    listed = stub.ListChallenges(pb.ListChallengesRequest(), metadata=bearer(key), timeout=TIMEOUT)
    assert list(listed.challenges) == []


def test_answers_the_challenge_cannot_take_are_refused_with_their_reasons(
    server: ServerProcess,
) -> None:
    (_, key), (other, other_key), (_, stranger_key) = _accounts(server.database_url, 3)  # type: ignore[attr-defined]
    stub = _challenges(server)
    made = _challenge(stub, key, [other], challenger_plays=True)
    ask = pb.AcceptChallengeRequest(challenge_id=made.challenge_id)
    assert _refused(lambda: stub.AcceptChallenge(ask, metadata=bearer(key), timeout=TIMEOUT)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_CHALLENGED",
    )
    assert _refused(
        lambda: stub.AcceptChallenge(ask, metadata=bearer(stranger_key), timeout=TIMEOUT)
    ) == (grpc.StatusCode.NOT_FOUND, "CHALLENGE_NOT_FOUND")
    assert _refused(
        lambda: stub.GetChallenge(
            pb.GetChallengeRequest(challenge_id=made.challenge_id),
            metadata=bearer(stranger_key),
            timeout=TIMEOUT,
        )
    ) == (grpc.StatusCode.NOT_FOUND, "CHALLENGE_NOT_FOUND")
    unknown = pb.AcceptChallengeRequest(challenge_id=str(uuid.uuid4()))
    assert _refused(
        lambda: stub.AcceptChallenge(unknown, metadata=bearer(other_key), timeout=TIMEOUT)
    ) == (grpc.StatusCode.NOT_FOUND, "CHALLENGE_NOT_FOUND")
    declined = stub.DeclineChallenge(
        pb.DeclineChallengeRequest(challenge_id=made.challenge_id),
        metadata=bearer(other_key),
        timeout=TIMEOUT,
    ).challenge
    assert (declined.status, declined.declined_by) == (pb.CHALLENGE_STATUS_DECLINED, other)
    assert not declined.game_id
    with pytest.raises(grpc.RpcError) as caught:
        stub.AcceptChallenge(ask, metadata=bearer(other_key), timeout=TIMEOUT)
    answer = refusal(caught.value)
    assert (answer.code, answer.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "CHALLENGE_NOT_OPEN")
    assert answer.metadata["status"] == "declined"


def test_an_account_may_hold_only_so_many_open_challenges(server: ServerProcess) -> None:
    (_, key), (other, _) = _accounts(server.database_url, 2)  # type: ignore[attr-defined]
    stub = _challenges(server)
    for _ in range(16):
        _challenge(stub, key, [other])
    assert _refused(lambda: _challenge(stub, key, [other])) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "QUOTA_EXCEEDED",
    )
    sent = stub.ListChallenges(
        pb.ListChallengesRequest(role=pb.CHALLENGE_ROLE_SENT, status=pb.CHALLENGE_STATUS_OPEN),
        metadata=bearer(key),
        timeout=TIMEOUT,
    )
    assert len(sent.challenges) == 16


def test_challenges_are_rate_limited_per_account(tmp_path: Path) -> None:
    # An outside run wrote some 1,270 events a minute into one account's stream with
    # challenges that expired after a second (issue 31, defect 7): only the open ones were
    # bounded. Now an account makes at most 10 challenges a minute (the default), expired or
    # not, and so writes at most 20 events a minute into another account's stream.
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    with ServerProcess.start(tmp_path / "server.log", url) as process:
        accounts = _accounts(url, 3)
        (_, key), (victim, victim_key) = accounts[0], accounts[1]
        stub = _challenges(process)
        follower = _Follower(process, victim_key)
        try:
            for _ in range(10):
                _challenge(stub, key, [victim], expires_in_seconds=1)
            with pytest.raises(grpc.RpcError) as caught:
                _challenge(stub, key, [accounts[2][0]])
            answer = refusal(caught.value)
            assert (answer.code, answer.reason) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "QUOTA_EXCEEDED",
            )
            assert "10 challenges made a minute" in answer.message
            assert answer.metadata["limit"] == "challenges_per_minute"
            # The victim was told of 10 challenges, then of their ends; nothing more came.
            told = [follower.next() for _ in range(20)]
            assert sum(e.HasField("challenge_received") for e in told) == 10
            with pytest.raises(queue.Empty):
                follower.events.get(timeout=1.5)
        finally:
            follower.close()


def test_watching_an_account_past_its_last_event_is_out_of_range(server: ServerProcess) -> None:
    ((_, key),) = _accounts(server.database_url, 1)  # type: ignore[attr-defined]
    stub = challenges_pb2_grpc.AccountServiceStub(server.channel())
    with pytest.raises(grpc.RpcError) as caught:
        next(stub.WatchAccount(pb.WatchAccountRequest(from_sequence=5), metadata=bearer(key), timeout=TIMEOUT))
    answer = refusal(caught.value)
    assert (answer.code, answer.reason) == (grpc.StatusCode.OUT_OF_RANGE, "SEQUENCE_OUT_OF_RANGE")
    assert answer.metadata["current_sequence"] == "0"


def test_an_account_key_tells_its_own_name_kind_and_last_event(server: ServerProcess) -> None:
    """AccountService.GetAccount: what a browser signing in with a key shows (the name the key
    belongs to) and where its account stream starts; an unknown or revoked key is refused."""
    url = server.database_url  # type: ignore[attr-defined]
    (me, key), (other, other_key) = _accounts(url, 2)
    player_name, player_key = f"alice-{uuid.uuid4().hex[:8]}", new_api_key()
    store = EventStore.open(url, migrate=True)
    try:
        competition = CompetitionStore(store)
        player = competition.create_account(str(uuid.uuid4()), player_name, "player", key_hash(player_key))
    finally:
        store.close()
    accounts = challenges_pb2_grpc.AccountServiceStub(server.channel())

    def whose(k: str) -> pb.GetAccountResponse:
        return accounts.GetAccount(pb.GetAccountRequest(), metadata=bearer(k), timeout=TIMEOUT)  # type: ignore[no-any-return]

    mine = whose(key)
    assert (mine.name, mine.kind, mine.last_sequence) == (me, pb.ACCOUNT_KIND_BOT, 0)
    made = whose(player_key)
    assert (made.name, made.kind) == (player_name, pb.ACCOUNT_KIND_PLAYER)
    assert made.create_time.ToDatetime() == player.created_at.replace(tzinfo=None)
    # A challenge received is the other account's first event: its last sequence is 1, and
    # the stream from there sends only what comes next.
    _challenge(_challenges(server), key, [other], players=2, challenger_plays=True)
    assert whose(other_key).last_sequence == 1 and whose(key).last_sequence == 0

    def refused_key(k: str | None) -> tuple[grpc.StatusCode, str]:
        return _refused(
            lambda: accounts.GetAccount(
                pb.GetAccountRequest(), metadata=bearer(k) if k else None, timeout=TIMEOUT
            )
        )

    assert refused_key(None) == (grpc.StatusCode.UNAUTHENTICATED, "API_KEY_REQUIRED")
    assert refused_key(new_api_key()) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_API_KEY")
    store = EventStore.open(url, migrate=True)
    try:
        CompetitionStore(store).revoke_key(player.id)
    finally:
        store.close()
    assert refused_key(player_key) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_API_KEY")


# --- the stream across a restart -----------------------------------------------------------


def _resume_after_restart(tmp_path: Path, url: str) -> None:
    log = tmp_path / "server.log"
    challenger, bot = _accounts(url, 2)
    with ServerProcess.start(log, url) as first:
        stub = _challenges(first)
        made = _challenge(stub, challenger[1], [bot[0]], "texas42", 2, challenger_plays=True)
        follower = _Follower(first, bot[1])
        received = follower.next()
        assert received.sequence == 1
        assert received.challenge_received.challenge.challenge_id == made.challenge_id
        follower.close()
        first.terminate()
    with ServerProcess.start(log, url) as second:
        # Everything after sequence 1 is replayed, then what happens next comes live.
        stub = _challenges(second)
        stub.AcceptChallenge(
            pb.AcceptChallengeRequest(challenge_id=made.challenge_id),
            metadata=bearer(bot[1]),
            timeout=TIMEOUT,
        )
        follower = _Follower(second, bot[1], from_sequence=1)
        try:
            answered = follower.next()
            assert answered.sequence == 2
            assert answered.challenge_answered.outcome == pb.CHALLENGE_OUTCOME_ACCEPTED
            assert answered.challenge_answered.account == bot[0]
            started = follower.next()
            assert started.sequence == 3
            game_id = started.game_started.game_id
            assert started.game_started.challenge_id == made.challenge_id
            assert answered.challenge_answered.challenge.game_id == game_id
            # Live: the game ends (the challenger resigns) and the bot is told its result.
            from boneyard.api.v1 import actions_pb2, game_service_pb2_grpc

            games = game_service_pb2_grpc.GameServiceStub(second.channel())
            view = games.GetView(
                game_service_pb2.GetViewRequest(game_id=game_id), metadata=bearer(challenger[1]), timeout=TIMEOUT
            ).view
            games.SubmitAction(
                game_service_pb2.SubmitActionRequest(
                    game_id=game_id,
                    expected_version=view.version,
                    request_id="resign",
                    action=actions_pb2.Action(resign=actions_pb2.Resign()),
                ),
                metadata=bearer(challenger[1]),
                timeout=TIMEOUT,
            )
            finished = follower.next()
            assert finished.sequence == 4
            assert finished.game_finished.game_id == game_id
            assert finished.game_finished.outcome in (pb.GAME_OUTCOME_WON, pb.GAME_OUTCOME_LOST)
            assert not finished.game_finished.HasField("rating")
        finally:
            follower.close()


def test_the_account_stream_resumes_after_a_restart_on_sqlite(tmp_path: Path) -> None:
    _resume_after_restart(tmp_path, f"sqlite:///{tmp_path / 'boneyard.db'}")


def test_the_account_stream_resumes_after_a_restart_on_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    with fresh_pg_database(postgres_url, "boneyard_challenges") as url:
        _resume_after_restart(tmp_path, url)


def test_two_processes_on_postgresql_agree_on_a_challenge(tmp_path: Path, postgres_url: str) -> None:
    """Challenged through one process, accepted through both: the game is made once, and a
    stream open on the first process hears what the second wrote."""
    with fresh_pg_database(postgres_url, "boneyard_challenges") as url:
        challenger, a, b = _accounts(url, 3)
        with (
            ServerProcess.start(tmp_path / "one.log", url) as one,
            ServerProcess.start(tmp_path / "two.log", url) as two,
        ):
            made = _challenge(_challenges(one), challenger[1], [a[0], b[0]], "moon", challenger_plays=True)
            follower = _Follower(one, challenger[1])
            try:
                _challenges(one).AcceptChallenge(
                    pb.AcceptChallengeRequest(challenge_id=made.challenge_id),
                    metadata=bearer(a[1]),
                    timeout=TIMEOUT,
                )
                last = _challenges(two).AcceptChallenge(
                    pb.AcceptChallengeRequest(challenge_id=made.challenge_id),
                    metadata=bearer(b[1]),
                    timeout=TIMEOUT,
                ).challenge
                assert last.status == pb.CHALLENGE_STATUS_ACCEPTED and last.game_id
                kinds = [follower.next() for _ in range(3)]
                assert [e.WhichOneof("kind") for e in kinds] == [
                    "challenge_answered",
                    "challenge_answered",
                    "game_started",
                ]
                assert kinds[2].game_started.game_id == last.game_id
                assert [e.sequence for e in kinds] == [1, 2, 3]
            finally:
                follower.close()
