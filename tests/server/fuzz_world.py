"""The world the RPC fuzzer (``fuzz_rpc.py``) works in: accounts made with the operator's
command, and real games in every state (open, partly seated, reserved for an account, in play,
finished) with their seat tokens, a tournament, and real encoded messages (records, rulesets,
legal actions, requests) for the fuzzer to mutate. ``snapshot`` is what a game looks like from
outside (its summary and a spectator's view), to show that rejected requests changed nothing.
"""

from __future__ import annotations

import re
import uuid
from collections import defaultdict
from dataclasses import dataclass

import grpc
from google.protobuf.message import Message

from boneyard.api.v1 import (
    actions_pb2,
    archive_pb2,
    archive_pb2_grpc,
    competition_pb2,
    competition_pb2_grpc,
    game_service_pb2,
    game_service_pb2_grpc,
    rules_pb2,
    view_pb2,
)
from tests.clients.cli_helpers import run_admin
from tests.server.fuzz_inputs import Pools
from tests.server.process_helpers import bearer, next_move, play_one, seat_all

__all__ = ["Snapshot", "World", "build_world", "snapshot"]

TIMEOUT = 30.0
KEY_LINE = re.compile(r"^key: (\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class World:
    pools: Pools
    games: dict[str, str]
    """Every real game made before the run, by id: what state it was left in."""


@dataclass(frozen=True)
class Snapshot:
    game: game_service_pb2.GetGameResponse
    view: game_service_pb2.GetViewResponse


def snapshot(channel: grpc.Channel, game_id: str) -> Snapshot:
    stub = game_service_pb2_grpc.GameServiceStub(channel)
    return Snapshot(
        stub.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=TIMEOUT),
        stub.GetView(game_service_pb2.GetViewRequest(game_id=game_id), timeout=TIMEOUT),
    )


def _account(database_url: str, kind: str, name: str) -> str:
    """``boneyard-server admin create-KIND NAME``: the key it printed."""
    done = run_admin(f"create-{kind}", "--database-url", database_url, name, timeout=120)
    keys = KEY_LINE.findall(done.stdout)
    if done.returncode != 0 or len(keys) != 1:
        raise RuntimeError(f"cannot make an account:\n{done.explain()}")
    return str(keys[0])


def _bid_rather_than_pass(view: view_pb2.SeatView) -> actions_pb2.Action:
    """The first legal action that is not a pass: when everybody passes Moon deals again,
    and a game of first legal actions would never end."""
    actions = view.legal_actions
    return next((a for a in actions if a.WhichOneof("kind") != "pass_bid"), actions[0])


class _Corpus:
    def __init__(self) -> None:
        self.by_type: defaultdict[str, list[bytes]] = defaultdict(list)

    def add(self, *messages: Message) -> None:
        for m in messages:
            self.by_type[m.DESCRIPTOR.full_name].append(m.SerializeToString())


def build_world(channel: grpc.Channel, database_url: str) -> World:
    """Make the accounts and games of a run on the server behind ``channel``, whose database
    is ``database_url`` (the operator's command writes the accounts there)."""
    tag = uuid.uuid4().hex[:6]
    organiser_name, bot_names = f"fuzz-organiser-{tag}", [f"fuzz-bot{i}-{tag}" for i in range(3)]
    organiser = _account(database_url, "player", organiser_name)
    bots = [_account(database_url, "bot", name) for name in bot_names]

    stub = game_service_pb2_grpc.GameServiceStub(channel)
    corpus = _Corpus()
    games: dict[str, str] = {}
    tokens: list[str] = []

    def create(
        preset: str, state: str, metadata: tuple[tuple[str, str], ...] = (), **kw: object
    ) -> str:
        rules = rules_pb2.Ruleset(preset=preset, **kw)  # type: ignore[arg-type]
        request = game_service_pb2.CreateGameRequest(rules=rules, name=f"fuzz {state}")
        if state == "reserved":
            request.reservations.add(seat=0, account_name=bot_names[0])
        response = stub.CreateGame(request, metadata=metadata, timeout=TIMEOUT)
        corpus.add(request, response.game.rules)
        games[response.game_id] = state
        return response.game_id

    for preset in ("texas42", "moon"):
        create(preset, "open")
        seated = create(preset, "seated")
        taken = stub.TakeSeat(
            game_service_pb2.TakeSeatRequest(game_id=seated, player_name="early"), timeout=TIMEOUT
        )
        tokens.append(taken.seat_token)
        corpus.add(game_service_pb2.TakeSeatRequest(game_id=seated, seat=1, player_name="late"))
    create("texas42", "reserved", metadata=bearer(organiser))

    for preset, moves in (("texas42", 6), ("moon", 4), ("texas42", 1)):
        game_id = create(preset, "playing")
        seat_tokens = seat_all(stub, game_id)
        tokens.extend(seat_tokens)
        for _ in range(moves):
            play_one(stub, game_id, seat_tokens)
        move = next_move(stub, game_id, seat_tokens)
        assert move is not None
        corpus.add(
            move.action,
            game_service_pb2.SubmitActionRequest(
                game_id=game_id,
                expected_version=move.expected_version,
                request_id=move.request_id,
                action=move.action,
            ),
            game_service_pb2.WatchGameRequest(game_id=game_id, from_version=2),
            game_service_pb2.GetViewRequest(game_id=game_id, seat=move.seat),
        )

    archive = archive_pb2_grpc.ArchiveServiceStub(channel)
    for preset in ("texas42", "moon"):
        game_id = create(preset, "finished", hand_limit=1)
        seat_tokens = seat_all(stub, game_id)
        tokens.extend(seat_tokens)
        last = None
        while (ack := play_one(stub, game_id, seat_tokens, _bid_rather_than_pass)) is not None:
            last = ack
        assert last is not None
        record = archive.GetRecord(archive_pb2.GetRecordRequest(game_id=game_id), timeout=TIMEOUT)
        corpus.add(
            record.record,
            archive_pb2.VerifyRecordRequest(record=record.record),
            archive_pb2.GetRecordRequest(game_id=game_id),
            archive_pb2.ListArchivedGamesRequest(preset=preset, player_name="p0"),
        )
        # A retry of the game's last action: answered again, applied once.
        move_again = game_service_pb2.SubmitActionRequest(
            game_id=game_id,
            expected_version=last.expected_version,
            request_id=last.request_id,
            action=last.action,
        )
        corpus.add(move_again)

    tournaments = competition_pb2_grpc.TournamentServiceStub(channel)
    entrants = [organiser_name, *bot_names]
    made = tournaments.CreateTournament(
        competition_pb2.CreateTournamentRequest(
            name="fuzz cup", rules=rules_pb2.Ruleset(preset="texas42"), entrants=entrants, deals=1
        ),
        metadata=bearer(organiser),
        timeout=TIMEOUT,
    )
    tournament_id = made.tournament.tournament_id
    corpus.add(
        competition_pb2.CreateTournamentRequest(
            name="fuzz cup 2",
            rules=rules_pb2.Ruleset(preset="moon"),
            entrants=entrants[1:],
            deals=2,
        ),
        competition_pb2.GetTournamentRequest(tournament_id=tournament_id),
        competition_pb2.SeekRequest(rules=rules_pb2.Ruleset(preset="moon")),
    )

    versions = sorted(
        {
            stub.GetGame(game_service_pb2.GetGameRequest(game_id=g), timeout=TIMEOUT).game.version
            for g in games
        }
    )
    pools = Pools(
        game_ids=tuple(games),
        tournament_ids=(tournament_id,),
        account_names=tuple(entrants),
        seat_tokens=tuple(tokens),
        account_keys=(organiser, *bots),
        versions=tuple(sorted({v + d for v in versions for d in (-1, 0, 1)} - {-1})),
        corpus={name: tuple(items) for name, items in corpus.by_type.items()},
    )
    return World(pools, games)
