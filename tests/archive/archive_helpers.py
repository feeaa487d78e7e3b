"""Helpers of the archive tests: games played in-process (with the engine alone, or through the
server's application layer on a real SQLite store), games played over gRPC against a real
server process, and mutations of records (as a careless editor and as a forger makes them).

Imported as ``archive_helpers`` (the test directory is on ``sys.path`` under pytest).
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import (
    actions_pb2,
    archive_pb2,
    archive_pb2_grpc,
    events_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    view_pb2,
)
from boneyard.engine import Deal, Event, Pass, Phase, PlaceBid
from boneyard.records.record import (
    GENESIS_HASH,
    build_record,
    canonical_bytes,
    chain_hash,
    stored_log,
)
from boneyard.server.archive.archive import Archive
from boneyard.server.archive.signing import signer_from_database
from boneyard.server.games.app import GameApp, new_seat_token
from boneyard.server.games.host import GameHost
from boneyard.server.store import EventStore
from boneyard.server.store.writer import Writer
from tests.server.process_helpers import ServerProcess

NAMES = {
    "texas42": ["Alice", "Bob", "Carol", "Dave"],
    "moon": ["Erin", "Frank", "Grace"],
}
"""Who plays the games of the ``finished`` fixture."""


@dataclass
class ArchiveServer:
    process: ServerProcess
    database_url: str
    games: game_service_pb2_grpc.GameServiceStub
    archive: archive_pb2_grpc.ArchiveServiceStub

    @property
    def address(self) -> str:
        return self.process.address


# ---------------------------------------------------------------- choosing moves


def choose_command(state: engine.GameState, rng: random.Random) -> engine.SeatCommand:
    """A random legal action of the seat to act; in the auction a random pass, or the lowest
    bid allowed (uniformly random bids make most hands 84s, and random Moon bidding drives the
    scores down for ever)."""
    assert state.hand is not None and state.hand.turn is not None
    legal = engine.legal_actions(state, state.hand.turn)
    if state.phase is Phase.BIDDING:
        bids = [a for a in legal if isinstance(a, PlaceBid)]
        passes = [a for a in legal if isinstance(a, Pass)]
        if passes and (not bids or rng.random() < 0.6):
            return passes[0]
        return bids[0] if rng.random() < 0.9 else rng.choice(bids)
    return rng.choice(legal)


def choose_action(rng: random.Random) -> Callable[[view_pb2.SeatView], actions_pb2.Action]:
    """``choose_command`` for a seat's view over the API (legal actions: passes, then the bids
    lowest first, as the engine lists them)."""

    def choose(view: view_pb2.SeatView) -> actions_pb2.Action:
        legal = list(view.legal_actions)
        if view.phase == view_pb2.PHASE_BIDDING:
            bids = [a for a in legal if a.WhichOneof("kind") == "bid"]
            passes = [a for a in legal if a.WhichOneof("kind") == "pass_bid"]
            if passes and (not bids or rng.random() < 0.6):
                return passes[0]
            return bids[0]
        return rng.choice(legal)

    return choose


# ---------------------------------------------------------------- games in-process


def random_game(
    preset: str,
    seed: int,
    *,
    timeouts: float = 0.0,
    forfeit_at: int | None = None,
    options: dict[str, object] | None = None,
) -> list[Event]:
    """A whole game's log, played with the engine alone. With ``timeouts``, that share of the
    turns are a ``TimeOut`` (auto_play) of the seat to act instead of its choice; with
    ``forfeit_at`` = n, the seat to act at the n-th turn (from 0) forfeits by timeout. The
    same seed plays the same choices with or without them, as long as the positions agree."""
    rng = random.Random(seed)
    clock = random.Random(-seed)
    events: list[Event] = list(engine.start(engine.ruleset(preset, options)))
    state = engine.replay(events)
    turns = 0
    while state.phase is not Phase.GAME_OVER:
        command: engine.Command
        if state.phase is Phase.DEAL:
            command = Deal(rng.randbytes(32))
        else:
            command = choose_command(state, rng)
            if turns == forfeit_at:
                command = engine.TimeOut(command.seat, "forfeit")
            elif timeouts and clock.random() < timeouts:
                command = engine.TimeOut(command.seat, "auto_play")
            turns += 1
        for event in engine.decide(state, command):
            state = engine.evolve(state, event)
            events.append(event)
    return events


def record_of(events: list[Event], game_id: str | None = None) -> archive_pb2.GameRecord:
    """The record of an in-process game, by the server's record builder."""
    rules = engine.replay(events[:1]).rules
    return build_record(
        game_id or str(uuid.uuid4()),
        stored_log(events),
        name="in-process",
        players={s: f"player {s}" for s in range(rules.players)},
    )


@contextmanager
def application(
    tmp_path: Path, seed: int = 0, url: str | None = None
) -> Iterator[tuple[GameApp, Archive]]:
    """The server's application layer and archive on a fresh SQLite file (or the database at
    ``url``), seeds drawn from a seeded ``random`` so that a failure can be replayed; records
    signed with the database's key, as the server signs them."""
    rng = random.Random(seed)
    store = EventStore.open(url or f"sqlite:///{tmp_path / 'archive.db'}", migrate=True)
    try:
        archive = Archive(store, signer=signer_from_database(store))
        yield GameApp(store, seeds=lambda: rng.randbytes(32)), archive
    finally:
        store.close()


def play_in_app(app: GameApp, preset: str, seed: int, *, moves: int | None = None) -> str:
    """Create a game, seat everybody and play it (to the end, or ``moves`` actions), through
    the server's games in memory and its writer, on an event loop of its own."""
    return asyncio.run(_play_in_app(app, preset, seed, moves))


async def _play_in_app(app: GameApp, preset: str, seed: int, moves: int | None) -> str:
    rng = random.Random(seed)
    writer = Writer(app.store.engine)
    host = GameHost(app.store, writer, publish=lambda game_id, to_act=None: None, seeds=app.draw_seed)
    try:
        game_id, _ = await asyncio.to_thread(app.create_game, preset, {}, f"{preset} in-process")
        game = await host.get(game_id)
        for seat in range(game.players):
            await host.take_seat(game_id, seat, f"Player {seat}", new_seat_token())
        played = 0
        while moves is None or played < moves:
            game = await host.get(game_id)
            if game.state.phase is Phase.GAME_OVER:
                break
            command = choose_command(game.state, rng)
            await host.submit(
                game_id, command.seat, game.version, str(uuid.uuid4()), command, lambda v, s: b""
            )
            played += 1
        return game_id
    finally:
        writer.close()


# ---------------------------------------------------------------- games over gRPC


def play_over_grpc(
    stub: object, preset: str, seed: int, names: list[str] | None = None, name: str = ""
) -> tuple[str, list[str]]:
    """A whole game played through a real server's GameService, every seat taken (under
    ``names``, or p0, p1 ...); its id and the seat tokens."""
    from tests.server.process_helpers import create_game, play_one, seat_all

    game_id = create_game(stub, preset, name=name or f"{preset} over gRPC")  # type: ignore[arg-type]
    if names is None:
        tokens = seat_all(stub, game_id)  # type: ignore[arg-type]
    else:
        tokens = name_seats(stub, game_id, names)
    choose = choose_action(random.Random(seed))
    while play_one(stub, game_id, tokens, choose) is not None:  # type: ignore[arg-type]
        pass
    return game_id, tokens


def name_seats(stub: object, game_id: str, names: list[str]) -> list[str]:
    """Take every seat of a game under the given names; the tokens."""
    tokens = []
    for seat, player in enumerate(names):
        response = stub.TakeSeat(  # type: ignore[attr-defined]
            game_service_pb2.TakeSeatRequest(game_id=game_id, seat=seat, player_name=player),
            timeout=30,
        )
        tokens.append(response.seat_token)
    return tokens


# ---------------------------------------------------------------- mutations


def copy(record: archive_pb2.GameRecord) -> archive_pb2.GameRecord:
    out = archive_pb2.GameRecord()
    out.CopyFrom(record)
    return out


def rechain(record: archive_pb2.GameRecord) -> archive_pb2.GameRecord:
    """What a forger does after an edit: number the events 1..n again and recompute every
    hash, so the chain holds."""
    prev = GENESIS_HASH
    for position, recorded in enumerate(record.events, start=1):
        recorded.event.seq = position
        prev = chain_hash(prev, canonical_bytes(recorded.event))
        recorded.hash = prev
    return record


def engine_event(record: archive_pb2.GameRecord, position: int) -> Event:
    return codec.event_from_proto(record.events[position - 1].event)


def positions(record: archive_pb2.GameRecord, kind: str) -> list[int]:
    """The numbers of the events of one kind (``"tile_played"``)."""
    return [
        i
        for i, recorded in enumerate(record.events, start=1)
        if recorded.event.WhichOneof("kind") == kind
    ]


def set_event(record: archive_pb2.GameRecord, position: int, event: Event) -> None:
    """Replace event ``position`` by ``event`` (log form), keeping its seq and hash."""
    message = codec.event_to_proto(event, position)
    record.events[position - 1].event.CopyFrom(message)


def event_message(record: archive_pb2.GameRecord, position: int) -> events_pb2.Event:
    return record.events[position - 1].event
