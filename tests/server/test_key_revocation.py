"""Revoking and rotating an account's API key with ``boneyard-server admin``, against real
server processes: two ``boneyard-server`` processes on one PostgreSQL database (the
distributed setup), and one on SQLite.

A revoked key is UNAUTHENTICATED on the very next call in every process, though the servers
remember the keys they have seen (``KeyCache``): on SQLite each use is confirmed by a read of
the key's row; on PostgreSQL the command notifies the servers, which forget every key they
remember, and streams opened with the key (WatchSeats here) end UNAUTHENTICATED. On SQLite the operator's
command cannot reach the server: such a stream ends at its next wake-up instead.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from process_helpers import ServerProcess, bearer, fresh_pg_database

from boneyard.api.v1 import (
    competition_pb2,
    competition_pb2_grpc,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
)
from tests.clients.cli_helpers import Finished, run_admin

KEY_LINE = re.compile(r"^key: (byk_\S+)$", re.MULTILINE)
CALL_TIMEOUT = 60.0
"""Seconds any one call may take before the test gives up (a stream that should end and
does not ends DEADLINE_EXCEEDED, which fails the test)."""


@dataclass
class Site:
    """Server processes on one database, and an organiser's key (a player's account, which
    reserves seats for bots)."""

    database_url: str
    servers: list[ServerProcess]
    organiser: str

    def admin(self, *args: str) -> Finished:
        return run_admin(args[0], "--database-url", self.database_url, *args[1:], timeout=120)

    def create(self, kind: str, name: str) -> str:
        """``boneyard-server admin create-KIND NAME``: the key it printed."""
        return _key_of(self.admin(f"create-{kind}", name))

    def games(self, server: ServerProcess) -> game_service_pb2_grpc.GameServiceStub:
        return game_service_pb2_grpc.GameServiceStub(server.channel())

    def lobby(self, server: ServerProcess) -> competition_pb2_grpc.LobbyServiceStub:
        return competition_pb2_grpc.LobbyServiceStub(server.channel())

    def game_for(self, bot: str) -> str:
        """A new Texas 42 game with seat 0 reserved for the account ``bot``."""
        response = self.games(self.servers[0]).CreateGame(
            game_service_pb2.CreateGameRequest(
                rules=rules_pb2.Ruleset(preset="texas42"),
                reservations=[game_service_pb2.SeatReservation(seat=0, account_name=bot)],
            ),
            metadata=bearer(self.organiser),
            timeout=CALL_TIMEOUT,
        )
        return str(response.game_id)

    def seat_of(self, server: ServerProcess, game_id: str, key: str) -> int:
        """The seat ``key`` acts for in the game, by GetView (what a bot asks before each
        move); raises ``grpc.RpcError``."""
        response = self.games(server).GetView(
            game_service_pb2.GetViewRequest(game_id=game_id),
            metadata=bearer(key),
            timeout=CALL_TIMEOUT,
        )
        return int(response.view.seat)

    def create_game_with(self, server: ServerProcess, key: str) -> str:
        """CreateGame with an account's key (counted against the account); raises
        ``grpc.RpcError``."""
        response = self.games(server).CreateGame(
            game_service_pb2.CreateGameRequest(rules=rules_pb2.Ruleset(preset="texas42")),
            metadata=bearer(key),
            timeout=CALL_TIMEOUT,
        )
        return str(response.game_id)


def _key_of(done: Finished) -> str:
    assert done.returncode == 0, done.explain()
    keys = KEY_LINE.findall(done.stdout)
    assert len(keys) == 1, done.explain()
    return str(keys[0])


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _refused(call: Callable[..., object], *args: object) -> grpc.StatusCode:
    """The status ``call(*args)``, which must fail, failed with."""
    with pytest.raises(grpc.RpcError) as refused:
        call(*args)
    return refused.value.code()  # type: ignore[no-any-return, attr-defined]


def _start(tmp: Path, database_url: str, count: int) -> list[ServerProcess]:
    servers: list[ServerProcess] = []
    try:
        for n in range(count):
            servers.append(ServerProcess.start(tmp / f"server-{n}.log", database_url))
    except BaseException:
        for server in servers:
            server.kill()
        raise
    return servers


@pytest.fixture(scope="module")
def postgresql_site(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """Two server processes on one fresh PostgreSQL database."""
    tmp = tmp_path_factory.mktemp("revocation-pg")
    with fresh_pg_database(postgres_url, "boneyard_revoke") as url:
        servers = _start(tmp, url, 2)
        try:
            organiser = _key_of(run_admin("create-player", "--database-url", url, "organiser"))
            yield Site(url, servers, organiser)
        finally:
            for server in servers:
                server.kill()
            for server in servers:
                assert "Traceback" not in server.log_text(), server.log_text()[-5000:]


@pytest.fixture(scope="module")
def sqlite_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One server process on a SQLite file (several processes need PostgreSQL)."""
    tmp = tmp_path_factory.mktemp("revocation-sqlite")
    url = f"sqlite:///{tmp / 'boneyard.db'}"
    servers = _start(tmp, url, 1)
    try:
        organiser = _key_of(run_admin("create-player", "--database-url", url, "organiser"))
        yield Site(url, servers, organiser)
    finally:
        servers[0].kill()
        assert "Traceback" not in servers[0].log_text(), servers[0].log_text()[-5000:]


# --- two processes on PostgreSQL -----------------------------------------------------------


@pytest.mark.postgres
def test_a_revoked_key_is_unauthenticated_at_once_in_both_processes_and_its_streams_end(
    postgresql_site: Site,
) -> None:
    site = postgresql_site
    bot = _unique("bot")
    key = site.create("bot", bot)
    game_id = site.game_for(bot)
    streams = []
    for server in site.servers:
        for _ in range(3):  # the key is remembered by each process from here on
            assert site.seat_of(server, game_id, key) == 0
        stream = site.lobby(server).WatchSeats(
            competition_pb2.WatchSeatsRequest(), metadata=bearer(key), timeout=CALL_TIMEOUT
        )
        first = next(stream)  # open and authenticated: it tells of the reserved seat
        assert first.assignment.game_id == game_id
        streams.append(stream)

    done = site.admin("revoke", key)
    assert done.returncode == 0, done.explain()
    assert f"revoked the key of bot {bot!r}" in done.stdout, done.explain()
    assert key not in done.stdout + done.stderr, "a key is never printed again"

    for server in site.servers:
        assert _refused(site.seat_of, server, game_id, key) == grpc.StatusCode.UNAUTHENTICATED
        assert _refused(site.create_game_with, server, key) == grpc.StatusCode.UNAUTHENTICATED
    for stream in streams:
        assert _refused(next, stream) == grpc.StatusCode.UNAUTHENTICATED
    # Another account's key is untouched.
    assert site.create_game_with(site.servers[1], site.organiser)

    again = site.admin("revoke", key)
    assert again.returncode == 0, again.explain()
    assert f"the key of bot {bot!r} was revoked already at" in again.stdout, again.explain()
    listed = site.admin("accounts")
    assert listed.returncode == 0, listed.explain()
    row = next(line for line in listed.stdout.splitlines() if f" {bot} " in line)
    assert "revoked 20" in row, listed.explain()


@pytest.mark.postgres
def test_rotate_refuses_the_old_key_and_the_new_key_works_at_once_in_both_processes(
    postgresql_site: Site,
) -> None:
    site = postgresql_site
    bot = _unique("bot")
    old = site.create("bot", bot)
    game_id = site.game_for(bot)
    for server in site.servers:
        assert site.seat_of(server, game_id, old) == 0

    done = site.admin("rotate", bot)
    new = _key_of(done)
    assert new != old and done.stdout.count(new) == 1, done.explain()
    assert "the old key is refused from now on" in done.stdout, done.explain()

    for server in site.servers:
        assert _refused(site.seat_of, server, game_id, old) == grpc.StatusCode.UNAUTHENTICATED
        # The account keeps its seat: the new key acts for it.
        assert site.seat_of(server, game_id, new) == 0
    stream = site.lobby(site.servers[1]).WatchSeats(
        competition_pb2.WatchSeatsRequest(), metadata=bearer(new), timeout=CALL_TIMEOUT
    )
    try:
        assert next(stream).assignment.game_id == game_id
    finally:
        stream.cancel()

    gone = site.admin("revoke", old)
    assert gone.returncode == 1, gone.explain()
    assert "no account has the key byk_" in gone.stderr, gone.explain()
    assert old not in gone.stdout + gone.stderr
    listed = site.admin("accounts")
    row = next(line for line in listed.stdout.splitlines() if f" {bot} " in line)
    assert "valid, rotated 20" in row, listed.explain()


@pytest.mark.postgres
def test_revoke_by_name_refuses_the_accounts_key_in_both_processes(postgresql_site: Site) -> None:
    site = postgresql_site
    bot = _unique("bot")
    key = site.create("bot", bot)
    for server in site.servers:
        assert site.create_game_with(server, key)

    done = site.admin("revoke", bot)
    assert done.returncode == 0, done.explain()
    for server in site.servers:
        assert _refused(site.create_game_with, server, key) == grpc.StatusCode.UNAUTHENTICATED

    # A revoked account gets a working key back by rotation.
    new = _key_of(site.admin("rotate", bot))
    for server in site.servers:
        assert site.create_game_with(server, new)
        assert _refused(site.create_game_with, server, key) == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.postgres
def test_revoking_or_rotating_an_unknown_name_or_key_is_an_error_and_changes_nothing(
    postgresql_site: Site,
) -> None:
    site = postgresql_site
    bot = _unique("bot")
    key = site.create("bot", bot)
    before = site.admin("accounts").stdout

    for what, said in (
        ("nobody-" + uuid.uuid4().hex[:8], "no account named 'nobody-"),
        ("byk_" + "x" * 43, "no account has the key byk_xxxxxx..."),
    ):
        done = site.admin("revoke", what)
        assert done.returncode == 1, done.explain()
        assert said in done.stderr and "nothing revoked" in done.stderr, done.explain()
    rotated = site.admin("rotate", "nobody")
    assert rotated.returncode == 1, rotated.explain()
    assert "no account named 'nobody'" in rotated.stderr and "byk_" not in rotated.stdout

    assert site.admin("accounts").stdout == before
    for server in site.servers:
        assert site.create_game_with(server, key)


# --- one process on SQLite -----------------------------------------------------------------


def test_on_sqlite_revoke_and_rotate_hold_at_the_next_call(sqlite_site: Site) -> None:
    site = sqlite_site
    (server,) = site.servers
    bot = _unique("bot")
    key = site.create("bot", bot)
    game_id = site.game_for(bot)
    for _ in range(3):  # remembered from here on
        assert site.seat_of(server, game_id, key) == 0

    assert site.admin("revoke", bot).returncode == 0
    assert _refused(site.seat_of, server, game_id, key) == grpc.StatusCode.UNAUTHENTICATED

    new = _key_of(site.admin("rotate", bot))
    assert site.seat_of(server, game_id, new) == 0
    assert _refused(site.seat_of, server, game_id, key) == grpc.StatusCode.UNAUTHENTICATED


def test_on_sqlite_a_stream_opened_with_a_revoked_key_ends_at_its_next_wake_up(
    sqlite_site: Site,
) -> None:
    """The operator's command cannot tell a server on SQLite (no notifications): a WatchSeats
    stream learns of the revocation when it next looks, here when a seat is reserved for the
    account."""
    site = sqlite_site
    (server,) = site.servers
    bot = _unique("bot")
    key = site.create("bot", bot)
    game_id = site.game_for(bot)
    stream = site.lobby(server).WatchSeats(
        competition_pb2.WatchSeatsRequest(), metadata=bearer(key), timeout=CALL_TIMEOUT
    )
    assert next(stream).assignment.game_id == game_id

    assert site.admin("revoke", key).returncode == 0
    site.game_for(bot)  # wakes the account's streams
    assert _refused(next, stream) == grpc.StatusCode.UNAUTHENTICATED
