"""One contract for the store, run unchanged against every backend.

``StoreContract`` holds the tests; each backend is a subclass that says how to get an empty
database (as eventsourcing hands its one suite each recorder): ``TestSQLite`` (a file under
tmp_path) always runs, ``TestPostgreSQL`` when BONEYARD_TEST_DATABASE_URL is set (``.ci/run``
sets it), each test on a freshly created database of its own. A backend's own tests (SQLite's
pragmas, PostgreSQL's notifications) are in its subclass.

Every append goes through the writer's transaction, the one the server runs: ``EventStore.append``
is its batch of one, and the writer's own tests submit to a ``Writer`` and wait for ``done``.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, Engine, make_url

from boneyard.records.hashing import chain_hash, first_chain_break
from boneyard.server.store import (
    GENESIS_HASH,
    ChainBroken,
    DuplicateRequest,
    DuplicateToken,
    EventStore,
    GameExists,
    GameNotFound,
    InvalidCursor,
    SeatTaken,
    SeedConflict,
    VersionConflict,
    create_engine,
    hash_token,
    seed_commitment,
    upgrade,
)
from boneyard.server.store.account_events import (
    NewAccountEvent,
    account_events_after,
    last_sequence,
)
from boneyard.server.store.competition import CompetitionStore
from boneyard.server.store.migrate import alembic_config, current_revision
from boneyard.server.store.models import (
    CREATE_REQUEST,
    CREATE_REQUESTS,
    Base,
    GameRow,
    RequestRow,
    UTCDateTime,
)
from boneyard.server.store.notify import (
    NOTIFY_CHANNEL,
    AsyncPgListener,
    Change,
    PgListener,
    listen_supported,
)
from boneyard.server.store.writer import Append, Writer, write_batch

# --- helpers -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _pg_admin(postgres_url: str) -> Iterator[Engine]:
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    yield admin
    admin.dispose()


def _fresh_pg_database(admin: Engine, base_url: str) -> Iterator[str]:
    name = f"boneyard_store_{uuid.uuid4().hex[:16]}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(base_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _other_store(url: str) -> EventStore:
    """A store on its own engine: separate connections, as another server process has."""
    return EventStore(create_engine(url))


def _request_as_written_before_0014(
    eng: Engine, game_id: str, request_id: str, *, seat: int, version: int
) -> None:
    """An action's request row as the server wrote it before revision 0014: with a copy of its
    answer (the store of today writes none, so it cannot write one into the old schema)."""
    requests_then = sa.table(
        "requests",
        *(sa.column(name) for name in ("game_id", "request_id", "seat", "result_version")),
        sa.column("response", sa.LargeBinary()),
        sa.column("created_at", UTCDateTime()),
    )
    with eng.begin() as conn:
        conn.execute(
            requests_then.insert().values(
                game_id=game_id,
                request_id=request_id,
                seat=seat,
                result_version=version,
                response=b"\x08\x01the answer",
                created_at=datetime(2027, 2, 1, tzinfo=UTC),
            )
        )


def new_game(
    store: EventStore,
    game_id: str | None = None,
    *,
    players: int = 4,
    request_id: str | None = None,
) -> str:
    game_id = game_id or str(uuid.uuid4())
    store.create_game(
        game_id,
        "texas42",
        {"forced_bid": True},
        players,
        "table",
        [("GameCreated", b"created:" + game_id.encode())],
        request_id=request_id,
    )
    return game_id


def events(*payloads: bytes, kind: str = "TilePlayed") -> list[tuple[str, bytes]]:
    return [(kind, p) for p in payloads]


def _every_stored_value(engine: Engine) -> list[object]:
    values: list[object] = []
    with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            for row in conn.execute(sa.select(table)):
                values.extend(row)
    return values


class SteppingClock:
    """Gives each timestamp ``repeat`` times, then moves on a millisecond: forces ties."""

    def __init__(self, repeat: int) -> None:
        self._now = datetime(2024, 1, 1, tzinfo=UTC)
        self._repeat = repeat
        self._calls = 0

    def __call__(self) -> datetime:
        if self._calls and self._calls % self._repeat == 0:
            self._now += timedelta(milliseconds=1)
        self._calls += 1
        return self._now


def _page_through(
    list_page: Callable[[str | None], tuple[list[str], str | None]],
    between_pages: Callable[[], None] = lambda: None,
) -> list[str]:
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page, cursor = list_page(cursor)
        seen.extend(page)
        if cursor is None:
            return seen
        between_pages()


def _chained(head: bytes, payloads: list[bytes]) -> list[tuple[str, bytes, bytes]]:
    """``(kind, payload, chain hash)`` of each payload, chained after ``head``, as the server
    hands them to the writer."""
    chained = []
    for payload in payloads:
        head = chain_hash(head, payload)
        chained.append(("TilePlayed", payload, head))
    return chained


def _submit(store: EventStore, appends: list[dict[str, Any]]) -> list[Any]:
    """Hand the server's writer these appends (``Append``'s fields but ``done``) at once (one
    batch when it is idle) and wait for each one's ``done`` callback: ``None`` (committed) or
    the error it was refused with."""
    writer = Writer(
        store.engine,
        lane=store.lane,  # as the server makes it
        notify_channel=NOTIFY_CHANNEL if listen_supported(store.engine) else None,
    )
    outcomes: list[Any] = [...] * len(appends)
    done = threading.Event()
    left = [len(appends)]
    lock = threading.Lock()

    def finish(index: int) -> Any:
        def callback(error: BaseException | None) -> None:
            outcomes[index] = error
            with lock:
                left[0] -= 1
                if left[0] == 0:
                    done.set()

        return callback

    try:
        for index, fields in enumerate(appends):
            writer.submit(Append(**fields, done=finish(index)))
        assert done.wait(30)
    finally:
        writer.close()
    return outcomes


def _appends(store: EventStore, writes: list[tuple[str, int, list[bytes]]]) -> list[Any]:
    """``_submit`` of ``(game_id, expected_version, payloads)``, each chained on its game's
    last event and remembered as request ``r<index>``."""
    head = {game_id: store.load_events(game_id)[-1].hash for game_id, _, _ in writes}
    return _submit(
        store,
        [
            {
                "game_id": game_id,
                "expected_version": expected,
                "events": _chained(head[game_id], payloads),
                "request": (f"r{index}", 0),
            }
            for index, (game_id, expected, payloads) in enumerate(writes)
        ],
    )


def _hold(writer: Writer) -> tuple[Future[bool], threading.Event]:
    """Hold ``writer`` up on a call of its own until the returned gate is set (what is queued
    meanwhile waits, and goes in one batch); that call's future (``True``: the gate opened in
    time), once it runs."""
    gate, began = threading.Event(), threading.Event()

    def held_up(conn: Connection) -> bool:
        began.set()
        return gate.wait(10)

    held = writer.call(held_up)
    assert began.wait(10)
    return held, gate


# --- the contract --------------------------------------------------------------------


class StoreContract:
    """The store's contract; a subclass per backend provides ``empty_url``."""

    @pytest.fixture
    def empty_url(self) -> str:
        """URL of an empty database (no tables at all): each backend's subclass says how."""
        raise NotImplementedError

    @pytest.fixture
    def url(self, empty_url: str) -> str:
        """URL of a migrated, empty database."""
        upgrade(empty_url)
        return empty_url

    @pytest.fixture
    def engine(self, url: str) -> Iterator[Engine]:
        eng = create_engine(url)
        yield eng
        eng.dispose()

    @pytest.fixture
    def store(self, engine: Engine) -> EventStore:
        return EventStore(engine)

    # --- migrations ----------------------------------------------------------------------

    def test_migrations_apply_to_an_empty_database(self, empty_url: str) -> None:
        eng = create_engine(empty_url)
        try:
            assert sa.inspect(eng).get_table_names() == []
            upgrade(empty_url)
            head = ScriptDirectory.from_config(alembic_config()).get_current_head()
            assert current_revision(eng) == head
            tables = set(sa.inspect(eng).get_table_names())
            assert tables == {
                "alembic_version",
                "games",
                "events",
                "seats",
                "requests",
                "hand_seeds",
                # 0002: competitions
                "accounts",
                "seat_accounts",
                "game_clocks",
                "game_deals",
                "seeks",
                "tournaments",
                "tournament_entrants",
                "tournament_games",
                # 0005: signed records
                "signing_keys",
                # 0006: house bots
                "house_bots",
                # 0008: challenges and account events
                "challenges",
                "challenge_participants",
                "account_events",
                # 0009: lasting ratings
                "rated_games",
                "ratings",
                "rating_changes",
                # 0011: matches
                "matches",
                "match_games",
                "match_deals",
                # 0012: Swiss tournaments
                "tournament_rounds",
            }
            upgrade(empty_url)  # already at head: nothing to do
            assert current_revision(eng) == head
        finally:
            eng.dispose()

    def test_servers_starting_together_migrate_once(self, empty_url: str) -> None:
        errors: list[BaseException] = []
        barrier = threading.Barrier(3)

        def start_server() -> None:
            barrier.wait()
            try:
                EventStore.open(empty_url, migrate=True).close()
            except Exception as exc:  # noqa: BLE001 -- reported below
                errors.append(exc)

        threads = [threading.Thread(target=start_server) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert errors == []
        store = EventStore.open(empty_url)
        try:
            assert store.list_games() == ([], None)
        finally:
            store.close()

    def test_create_games_requests_made_before_0013_are_found_after_it(
        self, empty_url: str
    ) -> None:
        upgrade(empty_url, "0012")
        eng = create_engine(empty_url)
        try:
            before = EventStore(eng)
            game_id = new_game(before)
            made = CREATE_REQUEST + "made-before"
            _request_as_written_before_0014(eng, game_id, made, seat=0, version=1)
            before.append(game_id, 1, events(b"play 6-4"))
            _request_as_written_before_0014(eng, game_id, "acted-before", seat=0, version=2)
            upgrade(empty_url)
            after = EventStore(eng)
            assert after.game_of_request(CREATE_REQUEST + "made-before") == game_id
            assert after.find_request(game_id, "acted-before") is not None
            names = {index["name"] for index in sa.inspect(eng).get_indexes("requests")}
            assert names == {"ix_requests_create_request_id"}
        finally:
            eng.dispose()

    def test_actions_requests_made_before_0014_are_found_after_it_without_their_answers(
        self, empty_url: str
    ) -> None:
        upgrade(empty_url, "0013")
        eng = create_engine(empty_url)
        try:
            game_id = new_game(EventStore(eng))
            _request_as_written_before_0014(eng, game_id, "acted-before", seat=2, version=1)
            upgrade(empty_url)
            found = EventStore(eng).find_request(game_id, "acted-before")
            assert found is not None and (found.seat, found.result_version) == (2, 1)
            columns = {column["name"] for column in sa.inspect(eng).get_columns("requests")}
            assert "response" not in columns
            names = {index["name"] for index in sa.inspect(eng).get_indexes("requests")}
            assert names == {"ix_requests_create_request_id"}
        finally:
            eng.dispose()

    def test_migrated_schema_matches_the_models(self, engine: Engine) -> None:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []

    def test_events_are_unique_per_game_and_seq(self, engine: Engine) -> None:
        keys = {
            tuple(c["constrained_columns"])
            for c in [sa.inspect(engine).get_pk_constraint("events")]
        }
        assert keys == {("game_id", "seq")}

    # --- append and load -----------------------------------------------------------------

    def test_create_game_records_settings_and_first_events(self, store: EventStore) -> None:
        game = store.create_game(
            "g-1",
            "moon",
            {"players": 3},
            3,
            "Moon night",
            [("GameCreated", b"\x00created"), ("HandDealt", b"\xffdeal")],
        )
        assert (game.id, game.preset, game.options, game.players, game.name) == (
            "g-1",
            "moon",
            {"players": 3},
            3,
            "Moon night",
        )
        assert (game.status, game.version, game.seats_taken) == ("open", 2, 0)
        assert game.created_at.tzinfo is not None
        assert store.get_game("g-1") == game
        assert [(e.seq, e.kind, e.payload) for e in store.load_events("g-1")] == [
            (1, "GameCreated", b"\x00created"),
            (2, "HandDealt", b"\xffdeal"),
        ]

    def test_create_game_twice_raises_game_exists(self, store: EventStore) -> None:
        new_game(store, "g-1")
        with pytest.raises(GameExists):
            new_game(store, "g-1")
        assert store.latest_version("g-1") == 1

    def test_append_and_load_round_trip(self, store: EventStore) -> None:
        game_id = new_game(store)
        payloads = [bytes(range(256)), b"", b"\x00" * 10, b"6-4"]
        assert store.append(game_id, 1, events(*payloads[:2])) == 3
        assert store.append(game_id, 3, events(*payloads[2:], kind="BidPlaced")) == 5

        loaded = store.load_events(game_id)
        assert [e.seq for e in loaded] == [1, 2, 3, 4, 5]
        assert [e.payload for e in loaded[1:]] == payloads
        assert [e.kind for e in loaded[1:]] == [
            "TilePlayed",
            "TilePlayed",
            "BidPlaced",
            "BidPlaced",
        ]
        assert all(isinstance(e.payload, bytes) and len(e.hash) == 32 for e in loaded)
        seq, kind, payload, digest = loaded[0]  # plain tuples, too
        assert (seq, kind, payload, digest) == (1, "GameCreated", loaded[0].payload, loaded[0].hash)

        assert store.load_events(game_id, from_seq=3) == loaded[3:]
        assert store.load_events(game_id, from_seq=1, limit=2) == loaded[1:3]
        assert store.load_events(game_id, from_seq=5) == []
        assert store.latest_version(game_id) == 5
        assert store.get_game(game_id).version == 5

    def test_append_updates_status_and_updated_at(self, store: EventStore) -> None:
        game_id = new_game(store)
        before = store.get_game(game_id)
        store.append(game_id, 1, events(b"deal"), status="playing")
        after = store.get_game(game_id)
        assert after.status == "playing"
        assert after.updated_at >= before.updated_at
        assert after.created_at == before.created_at
        store.append(game_id, 2, events(b"won"), status="finished")
        assert store.get_game(game_id).status == "finished"
        with pytest.raises(ValueError):
            store.append(game_id, 3, events(b"x"), status="paused")  # type: ignore[arg-type]

    def test_an_appends_times_are_stored_as_the_games_own(self, engine: Engine) -> None:
        # The writer runs the action's statements on the driver on SQLite: its times must be
        # the text SQLAlchemy writes (fixed width, microseconds even when 0), or they would
        # not sort, nor read back, as the others do.
        at = datetime(2026, 12, 4, 15, 0, 0, tzinfo=UTC)
        store = EventStore(engine, clock=lambda: at)
        game_id = new_game(store)
        store.append(game_id, 1, events(b"deal"), ("req-1", 0), status="playing")
        with engine.connect() as conn:
            stored = {
                table: conn.execute(
                    sa.text(f"SELECT CAST({column} AS TEXT) FROM {table} WHERE game_id = :g")
                    if table != "games"
                    else sa.text(f"SELECT CAST({column} AS TEXT) FROM games WHERE id = :g"),
                    {"g": game_id},
                ).scalars().all()
                for table, column in (
                    ("games", "created_at"),  # written by the ORM
                    ("events", "created_at"),
                    ("requests", "created_at"),
                )
            }
        (game_time,) = stored["games"]
        assert stored["events"] == [game_time, game_time]  # GameCreated and the append
        assert stored["requests"] == [game_time]
        assert store.get_game(game_id).updated_at == at
        assert store.find_request(game_id, "req-1") is not None

    def test_two_appends_at_one_version_one_wins(self, store: EventStore) -> None:
        game_id = new_game(store)
        assert store.append(game_id, 1, events(b"first")) == 2
        with pytest.raises(VersionConflict) as conflict:
            store.append(game_id, 1, events(b"second"))
        assert (conflict.value.expected, conflict.value.actual) == (1, 2)
        assert [e.payload for e in store.load_events(game_id, from_seq=1)] == [b"first"]

    def test_racing_appends_on_separate_connections_one_wins(
        self, url: str, store: EventStore
    ) -> None:
        game_id = new_game(store)
        writers = [_other_store(url) for _ in range(4)]
        try:
            for version in range(1, 11):
                barrier = threading.Barrier(len(writers))
                outcomes: list[object] = [None] * len(writers)

                def write(
                    i: int,
                    writer: EventStore,
                    version: int = version,
                    barrier: threading.Barrier = barrier,
                    outcomes: list[object] = outcomes,
                ) -> None:
                    barrier.wait()
                    try:
                        outcomes[i] = writer.append(game_id, version, events(f"w{i}".encode()))
                    except VersionConflict as exc:
                        outcomes[i] = exc

                threads = [
                    threading.Thread(target=write, args=(i, w)) for i, w in enumerate(writers)
                ]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(timeout=60)
                winners = [o for o in outcomes if o == version + 1]
                losers = [o for o in outcomes if isinstance(o, VersionConflict)]
                assert len(winners) == 1, outcomes
                assert len(losers) == len(writers) - 1, outcomes
        finally:
            for w in writers:
                w.close()
        assert [e.seq for e in store.load_events(game_id)] == list(range(1, 12))
        assert store.verify_chain(game_id) == 11

    def test_existing_seq_row_is_a_version_conflict(
        self, store: EventStore, engine: Engine
    ) -> None:
        """The unique (game_id, seq) key is the last word, even if games.version is behind."""
        game_id = new_game(store)
        store.append(game_id, 1, events(b"a", b"b"))
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE games SET version = 2 WHERE id = :id"), {"id": game_id})
        with pytest.raises(VersionConflict) as conflict:
            store.append(game_id, 2, events(b"c"), ("req-1", 0, b"resp"))
        assert conflict.value.actual is None
        assert store.latest_version(game_id) == 2  # rolled back
        assert [e.payload for e in store.load_events(game_id, from_seq=1)] == [b"a", b"b"]
        assert store.find_request(game_id, "req-1") is None

    def test_append_needs_events_and_a_sane_version(self, store: EventStore) -> None:
        game_id = new_game(store)
        with pytest.raises(ValueError):
            store.append(game_id, 1, [])
        with pytest.raises(ValueError):
            store.append(game_id, -1, events(b"x"))

    # --- hash chain ----------------------------------------------------------------------

    def test_hash_chain_links_every_event_to_the_previous(self, store: EventStore) -> None:
        game_id = new_game(store)
        store.append(game_id, 1, events(b"one", b"two"))
        store.append(game_id, 3, events(b"three"))
        prev = bytes(32)
        assert prev == GENESIS_HASH
        for event in store.load_events(game_id):
            assert event.hash == hashlib.sha256(prev + event.payload).digest()
            prev = event.hash
        assert store.verify_chain(game_id) == 4

    def test_verify_chain_detects_an_edited_payload(
        self, store: EventStore, engine: Engine
    ) -> None:
        game_id = new_game(store)
        store.append(game_id, 1, events(b"bid 30", b"pass", b"pass"))
        assert store.verify_chain(game_id) == 4
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE events SET payload = :p WHERE game_id = :g AND seq = 2"),
                {"p": b"bid 42", "g": game_id},
            )
        with pytest.raises(ChainBroken) as broken:
            store.verify_chain(game_id)
        assert broken.value.seq == 2
        triples = [(e.seq, e.payload, e.hash) for e in store.load_events(game_id)]
        assert first_chain_break(triples) is not None

    def test_verify_chain_detects_a_dropped_last_event(
        self, store: EventStore, engine: Engine
    ) -> None:
        game_id = new_game(store)
        store.append(game_id, 1, events(b"a", b"b"))
        with engine.begin() as conn:
            conn.execute(
                sa.text("DELETE FROM events WHERE game_id = :g AND seq = 3"), {"g": game_id}
            )
        with pytest.raises(ChainBroken) as broken:
            store.verify_chain(game_id)
        assert broken.value.seq == 3

    # --- idempotent requests -------------------------------------------------------------

    def test_applied_request_is_found_with_its_seat_and_version(self, store: EventStore) -> None:
        game_id = new_game(store)
        assert store.find_request(game_id, "req-1") is None
        version = store.append(game_id, 1, events(b"play 6-4"), ("req-1", 2))
        found = store.find_request(game_id, "req-1")
        assert found is not None
        assert (found.request_id, found.seat, found.result_version) == ("req-1", 2, version)
        assert store.find_request("other-game", "req-1") is None

    def test_retried_request_is_not_applied_twice(self, store: EventStore) -> None:
        game_id = new_game(store)
        store.append(game_id, 1, events(b"play 6-4"), ("req-1", 0))
        # A retry at the old version: the version check stops it; the answer is stored.
        with pytest.raises(VersionConflict):
            store.append(game_id, 1, events(b"play 6-4"), ("req-1", 0))
        # A retry at the current version: the request key stops it.
        with pytest.raises(DuplicateRequest):
            store.append(game_id, 2, events(b"play 6-4"), ("req-1", 0))
        assert store.latest_version(game_id) == 2
        found = store.find_request(game_id, "req-1")
        assert found is not None and found.result_version == 2

    def test_a_create_games_request_is_found_by_its_id_alone(self, store: EventStore) -> None:
        game_id = new_game(store, request_id=CREATE_REQUEST + "make-1")
        store.append(game_id, 1, events(b"play 6-4"), ("make-1", 0))
        assert store.game_of_request(CREATE_REQUEST + "make-1") == game_id
        # An action's request is found by its game and its id, never by its id alone.
        assert store.game_of_request("make-1") is None
        assert store.game_of_request(CREATE_REQUEST + "make-2") is None

    def test_only_create_games_requests_are_indexed_by_their_id(self, engine: Engine) -> None:
        # Every action's request in that index was a page more in every commit.
        look_up = sa.select(RequestRow.game_id).where(
            RequestRow.request_id == CREATE_REQUEST + "x", CREATE_REQUESTS
        )
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql("SET enable_seqscan = off")  # (a few rows: a scan is cheaper)
            explain = "EXPLAIN QUERY PLAN" if conn.dialect.name == "sqlite" else "EXPLAIN"
            sql = str(look_up.compile(conn, compile_kwargs={"literal_binds": True}))
            plan = " ".join(str(row) for row in conn.exec_driver_sql(f"{explain} {sql}"))
        assert "ix_requests_create_request_id" in plan
        indexed = {
            tuple(index["column_names"]) for index in sa.inspect(engine).get_indexes("requests")
        }
        assert indexed == {("request_id",)}  # that one, partial: no other on the id

    # --- seats ---------------------------------------------------------------------------

    def test_seat_tokens_are_stored_hashed_only(self, store: EventStore, engine: Engine) -> None:
        game_id = new_game(store)
        tokens = {seat: f"secret-token-{seat}-{uuid.uuid4()}" for seat in range(4)}
        for seat, token in tokens.items():
            assert store.take_seat(game_id, seat, f"player {seat}", hash_token(token)) == seat + 1

        for seat, token in tokens.items():
            assert store.seat_for_token(game_id, hash_token(token)) == seat
            assert store.seat_for_token(game_id, token) is None
        assert store.seat_for_token(game_id, hash_token("wrong")) is None
        assert hash_token(tokens[0]) == hashlib.sha256(tokens[0].encode()).hexdigest()

        stored = _every_stored_value(engine)
        for token in tokens.values():
            assert not any(
                (isinstance(v, str) and token in v)
                or (isinstance(v, bytes | memoryview) and token.encode() in bytes(v))
                for v in stored
            )
        assert hash_token(tokens[1]) in stored
        assert store.get_game(game_id).seats_taken == 4
        assert [s.player_name for s in store.list_seats(game_id)] == [
            f"player {i}" for i in range(4)
        ]

    def test_a_raw_token_is_refused(self, store: EventStore) -> None:
        game_id = new_game(store)
        with pytest.raises(ValueError):
            store.take_seat(game_id, 0, "alice", "raw-token-not-a-hash")
        assert store.list_seats(game_id) == []

    def test_a_seat_is_taken_once(self, store: EventStore) -> None:
        game_id = new_game(store)
        store.take_seat(game_id, 1, "alice", hash_token("a"))
        with pytest.raises(SeatTaken):
            store.take_seat(game_id, 1, "bob", hash_token("b"))
        with pytest.raises(DuplicateToken):
            store.take_seat(game_id, 2, "alice again", hash_token("a"))
        with pytest.raises(ValueError):
            store.take_seat(game_id, 4, "carol", hash_token("c"))
        assert store.get_game(game_id).seats_taken == 1
        assert store.seat_for_token(game_id, hash_token("b")) is None

    def test_racing_seat_takers_one_wins(self, url: str, store: EventStore) -> None:
        game_id = new_game(store)
        takers = [_other_store(url) for _ in range(4)]
        barrier = threading.Barrier(len(takers))
        outcomes: list[object] = [None] * len(takers)

        def take(i: int, taker: EventStore) -> None:
            barrier.wait()
            try:
                outcomes[i] = taker.take_seat(game_id, 0, f"p{i}", hash_token(f"t{i}"))
            except SeatTaken as exc:
                outcomes[i] = exc

        threads = [threading.Thread(target=take, args=(i, t)) for i, t in enumerate(takers)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
        finally:
            for taker in takers:
                taker.close()
        assert sum(1 for o in outcomes if o == 1) == 1, outcomes
        assert sum(1 for o in outcomes if isinstance(o, SeatTaken)) == 3, outcomes
        assert store.get_game(game_id).seats_taken == 1

    # --- listing -------------------------------------------------------------------------

    def test_pagination_is_stable_and_complete(self, engine: Engine) -> None:
        store = EventStore(engine, clock=SteppingClock(repeat=3))  # ties in created_at
        ids = [new_game(store, f"game-{i:02d}-{uuid.uuid4().hex[:6]}") for i in range(23)]
        for game_id in ids[::4]:
            store.append(game_id, 1, events(b"deal"), status="playing")
        records = {g.id: g for g in (store.get_game(i) for i in ids)}
        expected = sorted(ids, key=lambda i: (records[i].created_at, i))

        def page(cursor: str | None) -> tuple[list[str], str | None]:
            games, next_cursor = store.list_games(page_size=5, after_cursor=cursor)
            return [g.id for g in games], next_cursor

        late: list[str] = []
        seen = _page_through(page, lambda: late.append(new_game(store, f"late-{len(late)}")))
        # Every game once, in (created_at, id) order; games created while paging come last.
        assert seen[: len(ids)] == expected
        assert sorted(seen[len(ids) :]) == sorted(late)
        assert len(seen) == len(set(seen))

        def playing(cursor: str | None) -> tuple[list[str], str | None]:
            games, next_cursor = store.list_games("playing", page_size=2, after_cursor=cursor)
            assert all(g.status == "playing" for g in games)
            return [g.id for g in games], next_cursor

        assert _page_through(playing) == [i for i in expected if i in set(ids[::4])]

        everything, cursor = store.list_games(page_size=1000)
        assert cursor is None and len(everything) == len(ids) + len(late)
        assert store.list_games("finished") == ([], None)

    def test_a_bad_cursor_or_page_size_is_refused(self, store: EventStore) -> None:
        new_game(store)
        with pytest.raises(InvalidCursor):
            store.list_games(after_cursor="not a cursor!")
        with pytest.raises(ValueError):
            store.list_games(page_size=0)

    # --- seeds ---------------------------------------------------------------------------

    def test_seeds_are_committed_kept_and_revealed(self, store: EventStore) -> None:
        game_id = new_game(store)
        seed1, seed2 = b"\x01" * 32, b"\x02" * 32
        first = store.record_seed(game_id, 1, seed1, seed_commitment(seed1))
        assert (first.commitment, first.seed, first.revealed) == (
            hashlib.sha256(seed1).digest(),
            seed1,
            False,
        )
        # A second seed for the same hand does not replace the committed one.
        assert store.record_seed(game_id, 1, seed2, seed_commitment(seed2)) == first
        store.record_seed(game_id, 2, seed2, seed_commitment(seed2))
        with pytest.raises(ValueError):
            store.record_seed(game_id, 3, seed1, seed_commitment(seed2))

        assert store.reveal_seeds(game_id, through_hand=1) == 1
        hand1, hand2 = store.get_seed(game_id, 1), store.get_seed(game_id, 2)
        assert hand1 is not None and hand1.revealed
        assert hand2 is not None and not hand2.revealed
        assert store.reveal_seeds(game_id) == 1
        assert store.get_seed(game_id, 3) is None

    def test_seeds_dealt_by_an_append_are_recorded_with_it(self, store: EventStore) -> None:
        seed1, seed2, seed3 = b"\x01" * 32, b"\x02" * 32, b"\x03" * 32
        game_id = "g-seeds"
        store.create_game(
            game_id,
            "texas42",
            {},
            4,
            "t",
            events(b"created", b"dealt 1"),
            seeds=[(1, seed1, seed_commitment(seed1))],
        )
        assert store.get_seed(game_id, 1) is not None

        # An append that loses the race records nothing, seeds included.
        store.append(game_id, 2, events(b"play"))
        with pytest.raises(VersionConflict):
            store.append(game_id, 2, events(b"dealt 2"), seeds=[(2, seed2, seed_commitment(seed2))])
        assert store.get_seed(game_id, 2) is None

        store.append(game_id, 3, events(b"dealt 2"), seeds=[(2, seed2, seed_commitment(seed2))])
        hand2 = store.get_seed(game_id, 2)
        assert hand2 is not None and (hand2.seed, hand2.revealed) == (seed2, False)

        # The same seed again is a no-op; another seed for a committed hand is refused whole.
        store.append(game_id, 4, events(b"x"), seeds=[(2, seed2, seed_commitment(seed2))])
        with pytest.raises(SeedConflict):
            store.append(game_id, 5, events(b"y"), seeds=[(2, seed3, seed_commitment(seed3))])
        with pytest.raises(ValueError):
            store.append(game_id, 5, events(b"y"), seeds=[(3, seed3, seed_commitment(seed1))])
        assert store.latest_version(game_id) == 5
        assert store.get_seed(game_id, 3) is None

    # --- unknown games -------------------------------------------------------------------

    def test_unknown_game_raises_game_not_found(self, store: EventStore) -> None:
        new_game(store)
        missing = str(uuid.uuid4())
        calls: list[Callable[[], object]] = [
            lambda: store.get_game(missing),
            lambda: store.latest_version(missing),
            lambda: store.load_events(missing),
            lambda: store.append(missing, 0, events(b"x")),
            lambda: store.append(missing, 1, events(b"x")),
            lambda: store.verify_chain(missing),
            lambda: store.take_seat(missing, 0, "alice", hash_token("t")),
            lambda: store.list_seats(missing),
            lambda: store.record_seed(missing, 1, b"s", seed_commitment(b"s")),
            lambda: store.reveal_seeds(missing),
        ]
        for call in calls:
            with pytest.raises(GameNotFound) as not_found:
                call()
            assert missing in str(not_found.value)
        assert store.find_request(missing, "r") is None
        assert store.seat_for_token(missing, hash_token("t")) is None
        assert store.get_seed(missing, 1) is None
        assert store.latest_versions([missing]) == {}

    # --- change notification -------------------------------------------------------------

    def test_another_processs_appends_are_read_at_once(self, url: str, store: EventStore) -> None:
        """What one process reads of games is what another committed, many games in one
        query and unknown games left out (on PostgreSQL the other processes are told as well:
        ``TestPostgreSQL``)."""
        a, b = new_game(store), new_game(store)
        assert store.latest_versions([a, b]) == {a: 1, b: 1}
        writer = _other_store(url)
        try:
            writer.append(b, 1, events(b"x", b"y"))
        finally:
            writer.close()
        assert store.latest_versions([a, b, "missing"]) == {a: 1, b: 3}
        assert store.latest_version(b) == 3

    # --- the group-commit writer ----------------------------------------------------------

    def test_the_writer_keeps_the_core_contract(self, store: EventStore) -> None:
        """The writer the server runs, by itself (``submit``, then the ``done`` callback): a
        stale version is a ``VersionConflict``, a request applied already a
        ``DuplicateRequest``, an unknown game ``GameNotFound``, nothing refused is written,
        and every event is chained on the one before."""
        game_id = new_game(store)
        head = store.load_events(game_id)[-1].hash
        first = _chained(head, [b"bid 30", b"pass"])
        applied = {"game_id": game_id, "request": ("req-1", 2)}
        assert _submit(store, [{**applied, "expected_version": 1, "events": first}]) == [None]

        (stale,) = _submit(
            store,
            [
                {
                    "game_id": game_id,
                    "expected_version": 1,
                    "events": _chained(head, [b"late"]),
                    "request": ("req-2", 1, b"late"),
                }
            ],
        )
        assert isinstance(stale, VersionConflict)
        assert (stale.expected, stale.actual) == (1, 3)
        # A retry at the current version: the request key stops it.
        retry = _chained(first[-1][2], [b"bid 30"])
        (again,) = _submit(store, [{**applied, "expected_version": 3, "events": retry}])
        assert isinstance(again, DuplicateRequest)
        missing = str(uuid.uuid4())
        (unknown,) = _submit(
            store,
            [{"game_id": missing, "expected_version": 0, "events": _chained(GENESIS_HASH, [b"x"])}],
        )
        assert isinstance(unknown, GameNotFound)

        assert store.latest_version(game_id) == 3
        assert [e.payload for e in store.load_events(game_id, from_seq=1)] == [b"bid 30", b"pass"]
        assert store.find_request(game_id, "req-2") is None
        found = store.find_request(game_id, "req-1")
        assert found is not None
        assert (found.seat, found.result_version) == (2, 3)
        prev = GENESIS_HASH
        for event in store.load_events(game_id):
            assert event.hash == hashlib.sha256(prev + event.payload).digest()
            prev = event.hash
        assert store.verify_chain(game_id) == 3

    def test_the_writer_commits_many_games_appends_in_one_batch(self, store: EventStore) -> None:
        games = [new_game(store) for _ in range(5)]
        outcomes = _appends(store, [(g, 1, [b"a", b"b"]) for g in games])
        assert outcomes == [None] * 5
        for g in games:
            assert store.latest_version(g) == 3
            assert store.verify_chain(g) == 3
            assert store.find_request(g, f"r{games.index(g)}") is not None

    def test_an_append_alone_and_a_batch_are_one_transaction_each(self, store: EventStore) -> None:
        # Every transaction costs a BEGIN and a COMMIT (round trips on PostgreSQL).
        games = [new_game(store) for _ in range(3)]

        def append(game_id: str, expected: int) -> Append:
            head = store.load_events(game_id)[-1].hash
            return Append(game_id, expected, _chained(head, [b"x"]), lambda error: None)

        begun: list[object] = []
        writing = store.lane.connection() if store.lane else store.engine.connect()
        with writing as lane:
            driver = lane.connection.driver_connection
            on_sqlite = isinstance(driver, sqlite3.Connection)

            def count(conn: Connection) -> None:  # the batches' only (reads begin their own)
                if conn is lane:
                    begun.append(conn)

            def traced(sql: str) -> None:  # SQLite: begun on the driver or by SQLAlchemy
                if sql.upper().startswith("BEGIN"):
                    begun.append(sql)

            if on_sqlite:
                driver.set_trace_callback(traced)
            else:
                sa.event.listen(store.engine, "begin", count)
            try:
                alone = write_batch(lane, [append(games[0], 1)])
                begun_alone = len(begun)
                together = write_batch(lane, [append(g, 1 + (g == games[0])) for g in games])
            finally:
                if on_sqlite:
                    driver.set_trace_callback(None)
                else:
                    sa.event.remove(store.engine, "begin", count)
        assert (alone, together) == ([None], [None] * 3)
        assert (begun_alone, len(begun)) == (1, 2)
        assert [store.latest_version(g) for g in games] == [3, 2, 2]

    def test_a_stale_append_fails_alone_and_its_batch_commits(self, store: EventStore) -> None:
        games = [new_game(store) for _ in range(3)]
        outcomes = _appends(
            store, [(games[0], 1, [b"a"]), (games[1], 5, [b"b"]), (games[2], 1, [b"c"])]
        )
        assert outcomes[0] is None and outcomes[2] is None
        assert isinstance(outcomes[1], VersionConflict)
        assert [store.latest_version(g) for g in games] == [2, 1, 2]
        assert [e.seq for e in store.load_events(games[1])] == [1]  # nothing of it was written

    def test_an_append_colliding_on_the_key_is_a_version_conflict(self, store: EventStore) -> None:
        game_id = new_game(store)
        other = new_game(store)
        store.append(game_id, 1, events(b"first"))
        # games.version says 1 here, yet seq 2 exists: the key is the last word.
        with store.engine.begin() as conn:
            conn.execute(sa.update(GameRow).where(GameRow.id == game_id).values(version=1))
        outcomes = _appends(store, [(game_id, 1, [b"second"]), (other, 1, [b"fine"])])
        assert isinstance(outcomes[0], VersionConflict)
        assert outcomes[1] is None
        assert store.latest_version(other) == 2

    def test_a_call_on_the_writer_runs_on_its_thread_and_tells_its_outcome(
        self, store: EventStore
    ) -> None:
        """A seat taken on the writer's thread, in a batch's transaction: its result, or what
        it raised, reaches the caller; one cancelled before it ran is not run; none is taken
        once the writer is closed."""
        game_id = new_game(store)
        writer = Writer(store.engine, lane=store.lane)
        try:
            threads: list[str] = []

            def seat(number: int, conn: Connection) -> int:
                threads.append(threading.current_thread().name)
                return store.take_seat(
                    game_id, number, f"p{number}", hash_token(f"t{number}"), conn=conn
                )

            assert writer.call(lambda conn: seat(0, conn)).result(10) == 1
            assert threads == ["boneyard-writer"]
            with pytest.raises(SeatTaken):
                writer.call(lambda conn: seat(0, conn)).result(10)
            held, gate = _hold(writer)
            skipped = writer.call(lambda conn: seat(1, conn))
            assert skipped.cancel()
            gate.set()
            assert held.result(10) is True
            assert writer.call(lambda conn: seat(2, conn)).result(10) == 2
            assert sorted(s.seat for s in store.list_seats(game_id)) == [0, 2]
        finally:
            writer.close()
        with pytest.raises(RuntimeError, match="closed"):
            writer.call(lambda conn: seat(3, conn)).result(10)

    def test_a_call_commits_with_the_batch_beside_it_and_its_error_undoes_only_its_own(
        self, store: EventStore
    ) -> None:
        """Calls queued beside appends are written in the appends' transaction, one commit
        for all; a call that raises (a seat already taken) undoes its own writes only: the
        appends and the other calls of its batch are written."""
        games = [new_game(store) for _ in range(3)]
        store.take_seat(games[2], 0, "first", hash_token("first"))
        heads = {g: store.load_events(g)[-1].hash for g in games}
        writer = Writer(store.engine, lane=store.lane)
        commits: list[int] = []

        def taken(game_id: str, seat: int, name: str) -> Any:
            return writer.call(
                lambda conn: store.take_seat(game_id, seat, name, hash_token(name), conn=conn)
            )

        def committed(conn: Connection) -> None:
            commits.append(1)

        try:
            _, gate = _hold(writer)  # what follows waits: one batch
            sa.event.listen(store.engine, "commit", committed)
            appended = []
            for game_id in games[:2]:
                outcome: Future[BaseException | None] = Future()
                writer.submit(
                    Append(
                        game_id,
                        1,
                        _chained(heads[game_id], [b"x"]),
                        outcome.set_result,
                    )
                )
                appended.append(outcome)
            seated = taken(games[0], 1, "second")
            refused = taken(games[2], 0, "third")  # seat 0 is someone else's
            gate.set()
            assert [o.result(10) for o in appended] == [None, None]
            assert seated.result(10) == 1
            with pytest.raises(SeatTaken):
                refused.result(10)
        finally:
            writer.close()
            sa.event.remove(store.engine, "commit", committed)
        assert len(commits) == 2  # the held-up call's, then one for all queued behind it
        assert [store.latest_version(g) for g in games[:2]] == [2, 2]
        assert [s.player_name for s in store.list_seats(games[0])] == ["second"]
        assert [s.player_name for s in store.list_seats(games[2])] == ["first"]


class TestSQLite(StoreContract):
    @pytest.fixture
    def empty_url(self, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
        yield f"sqlite:///{tmp_path_factory.mktemp('store') / 'boneyard.db'}"

    def test_sqlite_connections_use_wal_foreign_keys_and_a_busy_timeout(
        self, engine: Engine
    ) -> None:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert (conn.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0) > 0

    def test_seats_taken_beside_appends_stay_in_the_drivers_transaction(
        self, store: EventStore
    ) -> None:
        """A batch whose calls run prepared statements only (a seat taken) is begun and
        committed on SQLite's driver, not through SQLAlchemy's transaction; a call that says
        so and runs another statement fails alone, with the database's error, and the writer
        goes on."""
        games = [new_game(store) for _ in range(2)]
        heads = {g: store.load_events(g)[-1].hash for g in games}
        writer = Writer(store.engine, lane=store.lane)
        begun: list[int] = []

        def counted(conn: Connection) -> None:
            begun.append(1)

        try:
            _, gate = _hold(writer)  # what follows waits: one batch
            sa.event.listen(store.engine, "begin", counted)
            appended: Future[BaseException | None] = Future()
            writer.submit(
                Append(games[0], 1, _chained(heads[games[0]], [b"x"]), appended.set_result)
            )
            seated = writer.call(
                lambda conn: store.take_seat(games[1], 0, "p", hash_token("p"), conn=conn),
                prepared_only=True,
            )
            gate.set()
            assert appended.result(10) is None
            assert seated.result(10) == 1
            assert begun == []
            wrong = writer.call(lambda conn: conn.execute(sa.text("SELECT 1")), prepared_only=True)
            with pytest.raises(
                (sa.exc.OperationalError, sqlite3.OperationalError), match="within a transaction"
            ):
                wrong.result(10)
            after = writer.call(lambda conn: conn.execute(sa.text("SELECT 2")).scalar())
            assert after.result(10) == 2
        finally:
            writer.close()
            sa.event.remove(store.engine, "begin", counted)
        assert store.latest_version(games[0]) == 2
        assert [s.player_name for s in store.list_seats(games[1])] == ["p"]

    def test_every_write_of_a_process_goes_through_one_connection(self, store: EventStore) -> None:
        """The writer's batches and the store's other writes (a seat taken) share the lane's
        connection: neither waits in SQLite's busy handler for the other, nor finds its page
        cache emptied by the other's commit."""
        lane = store.lane
        assert lane is not None
        with lane.connection() as conn:
            lent = conn.connection.driver_connection
        game_id = new_game(store)
        store.take_seat(game_id, 0, "Ann", hash_token("t0"))
        with store.writing() as session:
            assert session.connection().connection.driver_connection is lent
        (outcome,) = _appends(store, [(game_id, 1, [b"a"])])
        assert outcome is None
        with lane.connection() as conn:
            assert conn.connection.driver_connection is lent

    def test_a_write_waits_for_the_one_before_it_on_the_lane(self, store: EventStore) -> None:
        lane = store.lane
        assert lane is not None
        game_id = new_game(store)
        order: list[str] = []
        holding = threading.Event()

        def seat_ann() -> None:
            holding.wait(5)
            store.take_seat(game_id, 1, "Ann", hash_token("ann"))
            order.append("seat")

        other = threading.Thread(target=seat_ann)
        other.start()
        with lane.connection():
            holding.set()
            other.join(0.3)
            assert other.is_alive()  # waiting for the lane, not writing beside it
            order.append("first")
        other.join(5)
        assert order == ["first", "seat"]
        assert store.get_game(game_id).seats_taken == 1

    def test_a_write_opened_inside_another_is_refused_not_waited_for(
        self, store: EventStore
    ) -> None:
        game_id = new_game(store)
        with store.writing(), pytest.raises(RuntimeError, match="inside another"):
            store.take_seat(game_id, 0, "Ann", hash_token("t0"))
        store.take_seat(game_id, 0, "Ann", hash_token("t0"))  # the lane is free again

    def test_a_connection_the_database_failed_on_is_replaced(self, store: EventStore) -> None:
        lane = store.lane
        assert lane is not None
        with lane.connection() as first:
            pass
        with pytest.raises(sa.exc.OperationalError), lane.connection() as conn:
            conn.begin()
            conn.exec_driver_sql("SELECT * FROM no_such_table")
        game_id = new_game(store)  # (through a connection of its own, back from the pool)
        with lane.connection() as conn:
            assert conn is not first
            assert not conn.in_transaction()
        assert store.get_game(game_id).version == 1

    def test_a_batch_of_appends_alone_is_begun_on_sqlites_driver(self, store: EventStore) -> None:
        # SQLAlchemy's begin and commit cost more than a small batch's statements; a batch
        # with another write beside it (a seat) still runs in SQLAlchemy's transaction.
        game_id = new_game(store)
        head = store.load_events(game_id)[-1].hash
        alone = Append(game_id, 1, _chained(head, [b"x"]), lambda error: None)
        lane = store.lane
        assert lane is not None
        by_sqlalchemy: list[Connection] = []

        def begun(conn: Connection) -> None:
            by_sqlalchemy.append(conn)

        with lane.connection() as conn:
            sa.event.listen(store.engine, "begin", begun)
            try:
                assert write_batch(conn, [alone]) == [None]
                begun_alone = len(by_sqlalchemy)
                write_batch(conn, [], alongside=lambda c: None)
            finally:
                sa.event.remove(store.engine, "begin", begun)
        assert (begun_alone, len(by_sqlalchemy)) == (0, 1)
        assert store.latest_version(game_id) == 2

    def test_a_batch_telling_accounts_a_games_end_is_begun_on_sqlites_driver(
        self, store: EventStore
    ) -> None:
        # A game's end numbers and writes its accounts' events in the batch: on the driver
        # too, the appends queued behind it held up by no SQLAlchemy statement.
        game_id = new_game(store)
        account = str(uuid.uuid4())
        CompetitionStore(store).create_account(account, "Ann", "player", "a" * 64)
        told = [
            NewAccountEvent(account, "game_finished", b"the end"),
            NewAccountEvent(account, "game_finished", b"told twice"),
        ]
        head = store.load_events(game_id)[-1].hash
        ending = Append(game_id, 1, _chained(head, [b"x"]), lambda error: None, account_events=told)
        lane = store.lane
        assert lane is not None
        by_sqlalchemy: list[Connection] = []
        begun = by_sqlalchemy.append  # (one bound method: the one removed is the one listening)
        with lane.connection() as conn:
            sa.event.listen(store.engine, "begin", begun)
            try:
                assert write_batch(conn, [ending]) == [None]
            finally:
                sa.event.remove(store.engine, "begin", begun)
        assert by_sqlalchemy == []
        with store.reading() as session:
            written = account_events_after(session, account, 0, 10)
            assert last_sequence(session, account) == 2
        assert [(e.seq, e.kind, e.payload) for e in written] == [
            (1, "game_finished", b"the end"),
            (2, "game_finished", b"told twice"),
        ]


@pytest.mark.postgres
class TestPostgreSQL(StoreContract):
    @pytest.fixture
    def empty_url(self, _pg_admin: Engine, postgres_url: str) -> Iterator[str]:
        yield from _fresh_pg_database(_pg_admin, postgres_url)

    def test_postgresql_notifies_committed_appends_only(self, url: str, store: EventStore) -> None:
        game_id = new_game(store)
        with PgListener(url) as listener:
            assert listener.wait(timeout=0.05) == []
            store.append(game_id, 1, events(b"a"))
            store.append(game_id, 2, events(b"b", b"c"))
            with pytest.raises(VersionConflict):
                store.append(game_id, 2, events(b"lost"))
            received: list[Change] = []
            for _ in range(120):  # a hang guard of a minute: each wait returns at its first
                received += listener.wait(timeout=0.5)
                if len(received) >= 2:
                    break
            assert received == [Change(game_id, 2), Change(game_id, 4)]
            assert listener.wait(timeout=0.1) == []  # the conflicting append sent nothing

    def test_postgresql_notifies_asyncio_listeners(self, url: str, store: EventStore) -> None:
        game_id = new_game(store)

        async def scenario() -> list[Change]:
            async with await AsyncPgListener.open(url) as listener:
                await asyncio.to_thread(store.append, game_id, 1, events(b"a"))
                return await listener.wait(timeout=60.0)  # (returns at the first)

        assert asyncio.run(scenario()) == [Change(game_id, 2)]

    def test_the_writer_announces_each_batch_on_postgresql(
        self, url: str, store: EventStore
    ) -> None:
        games = [new_game(store) for _ in range(3)]
        with PgListener(url) as listener:
            _appends(store, [(g, 1, [b"a", b"b"]) for g in games])
            received: list[Change] = []
            for _ in range(120):  # a hang guard of a minute: each wait returns at its first
                received += listener.wait(timeout=0.5)
                if len(received) >= 3:
                    break
        assert sorted(received) == sorted(Change(g, 3) for g in games)

    def test_another_processs_appends_are_announced(self, url: str, store: EventStore) -> None:
        """The server's listener is told another process's commit as it happens (it needs no
        polling), of the game that moved only."""
        a, b = new_game(store), new_game(store)

        async def scenario() -> list[Change]:
            async with await AsyncPgListener.open(url) as listener:
                writer = _other_store(url)
                try:
                    await asyncio.to_thread(writer.append, b, 1, events(b"x", b"y"))
                finally:
                    writer.close()
                return await listener.wait(timeout=60.0)  # (returns at the first)

        assert asyncio.run(scenario()) == [Change(b, 3)]
        assert store.latest_versions([a, b]) == {a: 1, b: 3}


def test_notification_payloads_stay_under_postgresqls_limit() -> None:
    from boneyard.server.store.notify import notification_payloads, parse_notifications

    changes = [(str(uuid.uuid4()), n) for n in range(1000)]
    payloads = notification_payloads(changes)
    assert len(payloads) > 1 and all(len(p) < 8000 for p in payloads)
    assert [tuple(c) for p in payloads for c in parse_notifications(p)] == changes
