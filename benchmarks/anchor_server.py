"""The anchor of ``bench_server.py``: the smallest server that does what Boneyard's must.

    python benchmarks/anchor_server.py --database FILE --listen 127.0.0.1:0 [--event-loop LOOP]

It serves the ``boneyard.v1.GameService`` RPCs the benchmarks use (CreateGame, TakeSeat,
GetView, SubmitAction; WatchGame for spectators, for ``bench_fanout.py``) and the standard
health check, and prints
``boneyard-server listening on HOST:PORT`` like the real server. Each game's state lives in
a dict in memory; actions are decided with our own engine (``boneyard.engine``) on the event
loop, one at a time per game (an ``asyncio.Lock``); the server deals (``engine.Deal`` from
``secrets``) whenever a game is in the deal phase. One writer thread takes every waiting
write and commits them all in ONE SQLite transaction (WAL, ``synchronous=FULL``), and only
then is each answer sent. A retried ``request_id`` is answered, not applied again; a stale
``expected_version`` is ABORTED; an illegal action is FAILED_PRECONDITION. While a game has
watchers, each event is made into its spectator message once, shared by every stream.

Seats live only in memory (the benchmark never restarts a server). A yardstick, not a product:
no seat streams, no clocks, no lobby, no hash chain, no loading a game back from the file.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import secrets
import signal
import sqlite3
import threading
import uuid
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc
from boneyard.engine import GameState, Phase
from boneyard.server.ops import event_loop

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (id TEXT PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    game_id TEXT NOT NULL, seq INTEGER NOT NULL, payload BLOB NOT NULL,
    PRIMARY KEY (game_id, seq));
CREATE TABLE IF NOT EXISTS requests (
    game_id TEXT NOT NULL, request_id TEXT NOT NULL, response BLOB NOT NULL,
    PRIMARY KEY (game_id, request_id));
"""


@dataclass
class Write:
    """What one answer waits for: events appended after ``base`` (and its request)."""

    game_id: str
    base: int
    payloads: list[bytes]
    future: asyncio.Future[None]
    new_game: bool = False
    request: tuple[str, bytes] | None = None


class Writer(threading.Thread):
    """One thread, one connection: every waiting write in one transaction, then the answers."""

    def __init__(self, path: str, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(name="writer", daemon=True)
        self.queue: queue.SimpleQueue[Write | None] = queue.SimpleQueue()
        self._loop = loop
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def run(self) -> None:
        stopping = False
        while not stopping:
            first = self.queue.get()
            batch = [first] if first is not None else []
            stopping = first is None
            while not stopping:
                try:
                    item = self.queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                else:
                    batch.append(item)
            if batch:
                self._commit(batch)
        self._db.close()

    def _commit(self, batch: list[Write]) -> None:
        db = self._db
        error: BaseException | None = None
        try:
            db.execute("BEGIN")
            for w in batch:
                new_version = w.base + len(w.payloads)
                if w.new_game:
                    db.execute(
                        "INSERT INTO games (id, version) VALUES (?, ?)", (w.game_id, new_version)
                    )
                else:
                    moved = db.execute(
                        "UPDATE games SET version = ? WHERE id = ? AND version = ?",
                        (new_version, w.game_id, w.base),
                    )
                    if moved.rowcount != 1:
                        raise RuntimeError(f"game {w.game_id} is not at version {w.base}")
                db.executemany(
                    "INSERT INTO events (game_id, seq, payload) VALUES (?, ?, ?)",
                    [(w.game_id, w.base + i + 1, p) for i, p in enumerate(w.payloads)],
                )
                if w.request is not None:
                    db.execute(
                        "INSERT INTO requests (game_id, request_id, response) VALUES (?, ?, ?)",
                        (w.game_id, *w.request),
                    )
            db.execute("COMMIT")
        except (sqlite3.Error, RuntimeError) as e:  # one bad write fails its whole batch
            error = e
            if db.in_transaction:
                db.execute("ROLLBACK")
        for w in batch:
            self._loop.call_soon_threadsafe(_resolve, w.future, error)


def _resolve(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


@dataclass
class Game:
    state: GameState
    version: int
    tokens: dict[str, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    requests: dict[str, tuple[int, game_service_pb2.SubmitActionResponse]] = field(
        default_factory=dict
    )
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    events: list[engine.Event] = field(default_factory=list)
    moved: asyncio.Event = field(default_factory=asyncio.Event)
    feed: dict[int, game_service_pb2.WatchGameResponse] = field(default_factory=dict)
    """The spectator message of each version, made when a watcher first needs it."""
    feed_state: GameState | None = None
    """The state after the last version in ``feed``."""

    def message(self, seq: int) -> game_service_pb2.WatchGameResponse:
        while len(self.feed) < seq:
            at = len(self.feed) + 1
            event = self.events[at - 1]
            seen = codec.redact_event(event, self.feed_state, None, at)
            self.feed_state = engine.evolve(self.feed_state, event)
            view = codec.view_to_proto(engine.view(self.feed_state, None), at)
            self.feed[at] = game_service_pb2.WatchGameResponse(event=seen, version=at, view=view)
        return self.feed[seq]


def _deal(state: GameState) -> tuple[GameState, list[engine.Event]]:
    dealt: list[engine.Event] = []
    while state.phase is Phase.DEAL:
        for event in engine.decide(state, engine.Deal(secrets.token_bytes(32))):
            state = engine.evolve(state, event)
            dealt.append(event)
    return state, dealt


def _payloads(events: list[engine.Event]) -> list[bytes]:
    return [codec.encode_event(e)[1] for e in events]


class Anchor(game_service_pb2_grpc.GameServiceServicer):
    def __init__(self, writer: Writer) -> None:
        self._writer = writer
        self._games: dict[str, Game] = {}

    async def _write(self, write: Write) -> None:
        self._writer.queue.put(write)
        await write.future

    def _summary(self, game_id: str, game: Game) -> game_pb2.GameSummary:
        players = game.state.rules.players
        full = len(game.names) == players
        return game_pb2.GameSummary(
            game_id=game_id,
            rules=codec.rules_to_proto(game.state.rules),
            status=game_pb2.GAME_STATUS_PLAYING if full else game_pb2.GAME_STATUS_OPEN,
            seats=[
                game_pb2.SeatSummary(
                    seat=s, occupied=s in game.names, player_name=game.names.get(s, "")
                )
                for s in range(players)
            ],
            version=game.version,
            scores=game.state.scores,
        )

    async def _game(self, game_id: str, context: grpc.aio.ServicerContext) -> Game:
        game = self._games.get(game_id)
        if game is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no game {game_id!r}")
        return game

    async def _seat(self, game: Game, context: grpc.aio.ServicerContext) -> int | None:
        for key, value in context.invocation_metadata() or ():
            if key == "authorization":
                scheme, _, token = str(value).partition(" ")
                seat = game.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
                if seat is None:
                    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "this token opens no seat")
                return seat
        return None

    async def CreateGame(self, request, context):  # type: ignore[no-untyped-def]
        try:
            preset, options = codec.rules_overrides_from_proto(request.rules)
            rules = engine.ruleset(preset, options)
        except (codec.MalformedMessage, engine.RulesetError) as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        events = list(engine.start(rules))
        state, dealt = _deal(engine.replay(events))
        events += dealt
        game_id = str(uuid.uuid4())
        future = asyncio.get_running_loop().create_future()
        await self._write(Write(game_id, 0, _payloads(events), future, new_game=True))
        game = self._games[game_id] = Game(state, len(events), events=events)
        return game_service_pb2.CreateGameResponse(
            game_id=game_id, game=self._summary(game_id, game)
        )

    async def TakeSeat(self, request, context):  # type: ignore[no-untyped-def]
        game = await self._game(request.game_id, context)
        players = game.state.rules.players
        if request.HasField("seat"):
            seat = request.seat
            if seat >= players or seat in game.names:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"seat {seat} is not free")
        else:
            free = [s for s in range(players) if s not in game.names]
            if not free:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "every seat is taken")
            seat = free[0]
        token = secrets.token_urlsafe(32)
        game.tokens[token] = seat
        game.names[seat] = request.player_name
        return game_service_pb2.TakeSeatResponse(
            seat=seat, seat_token=token, game=self._summary(request.game_id, game)
        )

    async def GetView(self, request, context):  # type: ignore[no-untyped-def]
        game = await self._game(request.game_id, context)
        seat = await self._seat(game, context)
        if request.HasField("seat") and request.seat != seat:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, "only a seat's token shows its view"
            )
        view = codec.view_to_proto(engine.view(game.state, seat), game.version)
        return game_service_pb2.GetViewResponse(view=view)

    async def SubmitAction(self, request, context):  # type: ignore[no-untyped-def]
        game = await self._game(request.game_id, context)
        seat = await self._seat(game, context)
        if seat is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "SubmitAction needs a seat token")
        if not request.request_id or request.expected_version == 0:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "request_id and expected_version are required"
            )
        try:
            command = codec.action_from_proto(request.action, seat)
        except codec.MalformedMessage as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        async with game.lock:
            earlier = game.requests.get(request.request_id)
            if earlier is not None:
                if earlier[0] != seat:
                    await context.abort(
                        grpc.StatusCode.INVALID_ARGUMENT, "request_id used by another seat"
                    )
                return earlier[1]
            if request.expected_version != game.version:
                await context.abort(
                    grpc.StatusCode.ABORTED,
                    f"the game is at version {game.version}, not {request.expected_version}",
                )
            try:
                events = engine.decide(game.state, command)
            except engine.IllegalAction as e:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(e))
            state = game.state
            for event in events:
                state = engine.evolve(state, event)
            state, dealt = _deal(state)
            events += dealt
            version = game.version + len(events)
            response = game_service_pb2.SubmitActionResponse(
                version=version, view=codec.view_to_proto(engine.view(state, seat), version)
            )
            stored = response.SerializeToString(deterministic=True)
            future = asyncio.get_running_loop().create_future()
            write = Write(
                request.game_id,
                game.version,
                _payloads(events),
                future,
                request=(request.request_id, stored),
            )
            await self._write(write)
            game.state, game.version = state, version
            game.events += events
            moved, game.moved = game.moved, asyncio.Event()
            moved.set()
            game.requests[request.request_id] = (seat, response)
            return response


    async def WatchGame(self, request, context):  # type: ignore[no-untyped-def]
        game = await self._game(request.game_id, context)
        if request.HasField("seat") or await self._seat(game, context) is not None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "the anchor streams to spectators")
        if request.from_version > game.version:
            await context.abort(grpc.StatusCode.OUT_OF_RANGE, f"the game is at {game.version}")
        position = request.from_version
        while True:
            while position < game.version:
                position += 1
                yield game.message(position)
            if game.state.phase is Phase.GAME_OVER:
                return
            await game.moved.wait()


async def serve(database: str, listen: str) -> None:
    writer = Writer(database, asyncio.get_running_loop())
    writer.start()
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    game_service_pb2_grpc.add_GameServiceServicer_to_server(Anchor(writer), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = server.add_insecure_port(listen)
    await server.start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    print(f"boneyard-server listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(grace=2)
    writer.queue.put(None)
    await asyncio.to_thread(writer.join, 10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True, help="SQLite file (made if missing)")
    parser.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT (default %(default)s)")
    parser.add_argument(
        "--event-loop",
        choices=event_loop.EVENT_LOOPS,
        default="auto",
        help="the loop it runs on, as boneyard-server's option (default %(default)s)",
    )
    args = parser.parse_args()
    event_loop.run(serve(args.database, args.listen), event_loop.chosen(args.event_loop))


if __name__ == "__main__":
    main()
