"""The gRPC servicers of competitions: LobbyService (seeking, an account's seats and turns)
and TournamentService. Thin, like server.api: decode, authenticate with the account's key, call
the lobby or the director, map errors."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import grpc

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import competition_pb2, competition_pb2_grpc, game_pb2, view_pb2
from boneyard.server.competition.lobby import Lobby
from boneyard.server.competition.seat_watch import SeatWatch
from boneyard.server.competition.standings import Standing
from boneyard.server.competition.swiss import SwissStanding
from boneyard.server.competition.tournaments import (
    DEFAULT_GAMES_PER_ENTRANT,
    SwissRoundReport,
    TournamentDirector,
    swiss_games,
)
from boneyard.server.competition.turns import MAX_GAME_IDS, SeatTurn, TurnWatch, answering
from boneyard.server.errors import InvalidArgument, Unauthenticated
from boneyard.server.games.app import GameApp
from boneyard.server.games.service import (
    GAME_STATUS_TO_PROTO,
    MAX_NAME,
    GameServicer,
    check_account_name_given,
    check_game_id,
    check_text,
)
from boneyard.server.games.time_controls import time_control_from_proto, time_control_to_proto
from boneyard.server.ops import logs
from boneyard.server.quotas import Quotas
from boneyard.server.store.competition import Account, Seek
from boneyard.server.transport.pipeline import credentials, refusal_for
from boneyard.server.transport.refusals import Refusal

__all__ = ["LobbyServicer", "TournamentServicer"]

log = logging.getLogger(__name__)

_TOURNAMENT_STATUS = {
    "created": competition_pb2.TOURNAMENT_STATUS_CREATED,
    "running": competition_pb2.TOURNAMENT_STATUS_RUNNING,
    "finished": competition_pb2.TOURNAMENT_STATUS_FINISHED,
    "cancelled": competition_pb2.TOURNAMENT_STATUS_CANCELLED,
}
_VIEWS = frozenset(competition_pb2.TournamentView.values())
_FORMATS = {
    competition_pb2.TOURNAMENT_FORMAT_UNSPECIFIED: "round_robin",
    competition_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN: "round_robin",
    competition_pb2.TOURNAMENT_FORMAT_SWISS: "swiss",
}
_FORMAT_TO_PROTO = {
    "round_robin": competition_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
    "swiss": competition_pb2.TOURNAMENT_FORMAT_SWISS,
}
MAX_ENTRANTS = 64
_PLAY_TURNS = "/boneyard.v1.LobbyService/PlayTurns"
MAX_ECHOED = 64
"""Characters of an answer's game id a refusal says back (a valid id is far shorter; an
invalid one is refused, and need not be echoed whole)."""


class LobbyServicer(competition_pb2_grpc.LobbyServiceServicer):
    def __init__(
        self,
        app: GameApp,
        lobby: Lobby,
        seats: SeatWatch,
        games: GameServicer,
        quotas: Quotas,
        turns: TurnWatch,
        answered: Callable[[str], None] = lambda code: None,
    ) -> None:
        """``answered(code)``: a turn answered on a PlayTurns stream got ``code`` (the
        metrics' ``turn_answered``)."""
        self._quotas = quotas
        self._turns = turns
        self._answered = answered
        self._app = app
        self._lobby = lobby
        self._seats = seats
        self._games = games

    async def _account(self, context: grpc.aio.ServicerContext) -> Account:
        account = await self._app.keys.account(credentials())
        logs.known(account=account.name)
        return account

    async def _still_valid(self, key: str | None) -> None:
        """Raise ``Unauthenticated`` if the key a stream was opened with has been revoked or
        rotated since: a stream looks again whenever it is woken, and a revocation wakes
        the account's streams in every process on PostgreSQL (``"r:"`` notifications). On
        SQLite the operator's command cannot wake them: they end at their next wake-up."""
        await self._app.keys.account(key)

    async def _assignment(self, game_id: str, seat: int) -> competition_pb2.SeatAssignment:
        game = await self._games.game(game_id)
        return competition_pb2.SeatAssignment(
            game_id=game_id,
            seat=seat,
            game=await self._games.summary_of(game),
            tournament_id=game.made_for.tournament_id or "",
        )

    async def Seek(
        self, request: competition_pb2.SeekRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[competition_pb2.SeekResponse]:
        key = credentials()
        account = await self._account(context)
        preset, options = codec.rules_overrides_from_proto(request.rules)
        control = time_control_from_proto(request.time_control, request.HasField("time_control"))
        with self._quotas.seek(account.id):
            async for message in self._seek(context, key, account, preset, options, control):
                yield message

    async def _seek(
        self,
        context: grpc.aio.ServicerContext,
        key: str | None,
        account: Account,
        preset: str,
        options: dict[str, Any],
        control: Any,
    ) -> AsyncIterator[competition_pb2.SeekResponse]:
        seek_id = str(uuid.uuid4())
        seated = False
        seek = None
        try:
            seek = await asyncio.to_thread(
                self._lobby.seek, seek_id, account, preset, options, control
            )
            wake = self._lobby.follow(seek)
            told = -1
            current: Seek | None = seek  # as the lobby left it: perhaps seated already
            while True:
                wake.clear()
                if current is None:
                    current = await asyncio.to_thread(self._app.competition.seek, seek.id)
                assert current is not None
                if current.status == "seated":
                    assert current.game_id is not None and current.seat is not None
                    seated = True
                    yield competition_pb2.SeekResponse(
                        seated=await self._assignment(current.game_id, current.seat)
                    )
                    return
                if current.status == "cancelled":
                    cancelled = Refusal(
                        grpc.StatusCode.CANCELLED, "the seek was cancelled", "SEEK_CANCELLED"
                    )
                    await context.abort_with_status(cancelled.status())
                    return
                waiting = await asyncio.to_thread(self._lobby.waiting, seek.table_key)
                if waiting != told:
                    told = waiting
                    yield competition_pb2.SeekResponse(
                        waiting=competition_pb2.SeekWaiting(seekers=waiting, players=seek.players)
                    )
                await wake.wait()  # until the seeks of this kind change
                await self._still_valid(key)
                current = None
        finally:
            if seek is not None:
                self._lobby.unfollow(seek)
            if not seated:
                # The client went away (or the server is stopping), perhaps while the seek was
                # being registered: stop seeking for it (nothing happens if there is none).
                # A plain call: an await here could be cancelled again.
                self._lobby.cancel(seek if seek is not None else seek_id)

    async def WatchSeats(
        self, request: competition_pb2.WatchSeatsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[competition_pb2.WatchSeatsResponse]:
        key = credentials()
        account = await self._account(context)
        wake = self._seats.follow(account.id)
        try:
            told: set[tuple[str, int]] = set()
            while True:
                seats = await wake.seats(lambda: self._app.competition.open_seats_of(account.id))
                for game_id, seat in seats:
                    # Each seat: a match's entrant holds both seats of its partnership.
                    if (game_id, seat) in told:
                        continue
                    told.add((game_id, seat))
                    yield competition_pb2.WatchSeatsResponse(
                        assignment=await self._assignment(game_id, seat)
                    )
                await wake.wait()  # until a game reserves a seat for the account
                await self._still_valid(key)
        finally:
            self._seats.unfollow(account.id, wake)

    async def WatchTurns(
        self, request: competition_pb2.WatchTurnsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[competition_pb2.WatchTurnsResponse]:
        key = credentials()
        account = await self._account(context)
        async with contextlib.aclosing(self._turns_of(account, key, request)) as turns:
            async for turn in turns:
                yield _turn_message(turn)

    async def PlayTurns(  # type: ignore[override]
        self,
        requests: AsyncIterator[competition_pb2.PlayTurnsRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[competition_pb2.PlayTurnsResponse]:
        # The opening read first: a message the door cannot read (over its limit ...) is
        # refused as any method's request is, before the key is looked at.
        opening = await anext(aiter(requests), None)
        key = credentials()
        account = await self._account(context)
        if opening is None:
            return  # the client closed its side before opening
        if opening.WhichOneof("kind") != "open":
            raise InvalidArgument(
                "the first message of PlayTurns opens the stream: PlayTurnsRequest.open (empty "
                "on a first opening), then an answer for each turn"
            )
        metadata = context.invocation_metadata()

        async def told() -> AsyncGenerator[competition_pb2.PlayTurnsResponse, None]:
            async with contextlib.aclosing(self._turns_of(account, key, opening.open)) as turns:
                async for turn in turns:
                    yield competition_pb2.PlayTurnsResponse(turn=_turn_message(turn))

        async def answer(
            request: competition_pb2.PlayTurnsRequest,
        ) -> competition_pb2.PlayTurnsResponse | None:
            if request.WhichOneof("kind") != "answer":
                # Ends the stream: a client that opens twice has lost its way.
                raise InvalidArgument(
                    "after the first message, PlayTurns takes answers (PlayTurnsRequest.answer)"
                )
            given = request.answer
            try:
                await self._games.answer_turn(
                    given.game_id, given.seat, given.version, given.action
                )
            except Unauthenticated:
                self._answered("UNAUTHENTICATED")
                raise  # the key was revoked: the stream ends
            except Exception as error:  # noqa: BLE001 - told as SubmitAction would answer it
                # Told, and the stream goes on (a bug, INTERNAL, is logged with a request id):
                # one game's trouble must not stop the account's others.
                refusal = refusal_for(error, _PLAY_TURNS, metadata)
                self._answered(refusal.code.name)
                log.info(
                    "PlayTurns: game %s seat %d version %d refused %s: %s",
                    given.game_id[:MAX_ECHOED],
                    given.seat,
                    given.version,
                    refusal.code.name,
                    refusal.message,
                )
                return competition_pb2.PlayTurnsResponse(
                    refused=competition_pb2.TurnRefused(
                        game_id=given.game_id[:MAX_ECHOED],
                        seat=given.seat,
                        version=given.version,
                        code=refusal.code.value[0],
                        reason=refusal.reason,
                        message=refusal.message,
                        metadata=refusal.metadata,
                    )
                )
            self._answered("OK")
            return None

        async with contextlib.aclosing(answering(told(), requests, answer)) as messages:
            async for message in messages:
                yield message

    async def _turns_of(
        self, account: Account, key: str | None, request: competition_pb2.WatchTurnsRequest
    ) -> AsyncGenerator[SeatTurn, None]:
        """The account's turns for WatchTurns and PlayTurns: the games ``request`` names
        checked, one of the account's turn streams held while they are told."""
        game_ids = [check_game_id(g) for g in request.game_ids[: MAX_GAME_IDS + 1]]
        with self._quotas.turn_stream(account.id):
            playing = await self._turns.seats_in(account, game_ids)
            async with contextlib.aclosing(
                self._turns.follow(account, playing, lambda: self._still_valid(key))
            ) as turns:
                async for turn in turns:
                    yield turn


def _turn_message(turn: SeatTurn) -> competition_pb2.WatchTurnsResponse:
    return competition_pb2.WatchTurnsResponse(
        game_id=turn.game_id,
        seat=turn.seat,
        version=turn.version,
        view=codec.view_to_proto(turn.view, turn.version),
        game_over=turn.over,
    )


class TournamentServicer(competition_pb2_grpc.TournamentServiceServicer):
    def __init__(self, app: GameApp, director: TournamentDirector) -> None:
        self._app = app
        self._director = director

    async def CreateTournament(
        self, request: competition_pb2.CreateTournamentRequest, context: grpc.aio.ServicerContext
    ) -> competition_pb2.CreateTournamentResponse:
        organiser = await self._app.keys.organiser(credentials())
        name = request.name.strip()
        if not name or len(name) > MAX_NAME:
            raise InvalidArgument(f"a tournament needs a name of at most {MAX_NAME} characters")
        check_text(name, "a tournament name")
        if len(request.entrants) > MAX_ENTRANTS:
            raise InvalidArgument(f"at most {MAX_ENTRANTS} entrants")
        for entrant in request.entrants:
            check_account_name_given(entrant, "an entrant")
        preset, options = codec.rules_overrides_from_proto(request.rules)
        control = time_control_from_proto(request.time_control, request.HasField("time_control"))
        format = _FORMATS.get(request.format)
        if format is None:
            raise InvalidArgument(f"unknown tournament format {request.format}")
        tournament = await asyncio.to_thread(
            self._director.create,
            organiser,
            name,
            preset,
            options,
            list(request.entrants),
            request.deals,
            request.duplicate,
            control,
            format=format,
            max_games_per_entrant=request.max_games_per_entrant or DEFAULT_GAMES_PER_ENTRANT,
            rounds=request.rounds,
        )
        described = await asyncio.to_thread(self._describe, tournament.id, False)
        return competition_pb2.CreateTournamentResponse(tournament=described.tournament)

    async def StartTournament(
        self, request: competition_pb2.StartTournamentRequest, context: grpc.aio.ServicerContext
    ) -> competition_pb2.StartTournamentResponse:
        caller = await self._app.keys.organiser(credentials())
        tournament_id = _check_tournament_id(request.tournament_id)
        await asyncio.to_thread(self._director.start, tournament_id, caller)
        self._director.wake()
        described = await asyncio.to_thread(self._describe, tournament_id, False)
        return competition_pb2.StartTournamentResponse(tournament=described.tournament)

    async def CancelTournament(
        self, request: competition_pb2.CancelTournamentRequest, context: grpc.aio.ServicerContext
    ) -> competition_pb2.CancelTournamentResponse:
        caller = await self._app.keys.organiser(credentials())
        tournament_id = _check_tournament_id(request.tournament_id)
        await asyncio.to_thread(self._director.cancel, tournament_id, caller)
        self._director.wake()
        described = await asyncio.to_thread(self._describe, tournament_id, False)
        return competition_pb2.CancelTournamentResponse(tournament=described.tournament)

    async def GetTournament(
        self, request: competition_pb2.GetTournamentRequest, context: grpc.aio.ServicerContext
    ) -> competition_pb2.GetTournamentResponse:
        tournament_id = _check_tournament_id(request.tournament_id)
        if request.view not in _VIEWS:
            raise InvalidArgument(f"unknown tournament view {request.view}")
        return await asyncio.to_thread(
            self._describe, tournament_id, request.view != competition_pb2.TOURNAMENT_VIEW_BASIC
        )

    async def ListTournaments(
        self, request: competition_pb2.ListTournamentsRequest, context: grpc.aio.ServicerContext
    ) -> competition_pb2.ListTournamentsResponse:
        tournaments = await asyncio.to_thread(self._app.competition.tournaments)
        messages = []
        for t in tournaments:
            described = await asyncio.to_thread(self._describe, t.id, False)
            messages.append(described.tournament)
        return competition_pb2.ListTournamentsResponse(tournaments=messages)

    def _describe(self, tournament_id: str, full: bool) -> competition_pb2.GetTournamentResponse:
        """GetTournament's answer: the tournament alone, or (``full``) with its games, its
        standings and, Swiss, its rounds."""
        tournament = self._director.get(tournament_id)
        swiss = tournament.format == "swiss"
        competition = self._app.competition
        names = {
            a.id: a.name
            for a in competition.accounts([*tournament.entrants, tournament.organiser_id]).values()
        }
        if full:
            schedule = competition.tournament_games(tournament_id)
            scheduled = len(schedule)
            finished = sum(1 for g in schedule if g.status == "finished")
        else:  # counted in the database: pollers of the BASIC view ask many times a second
            scheduled, finished = competition.tournament_progress(tournament_id)
        rules = engine.ruleset(tournament.preset, tournament.options)
        message = competition_pb2.Tournament(
            tournament_id=tournament.id,
            name=tournament.name,
            rules=codec.rules_to_proto(rules),
            entrants=[names[a] for a in tournament.entrants],
            deals=tournament.deals,
            duplicate=tournament.duplicate,
            format=_FORMAT_TO_PROTO[tournament.format],
            status=_TOURNAMENT_STATUS[tournament.status],
            games_total=swiss_games(len(tournament.entrants), tournament.rounds, tournament.deals)
            if swiss
            else scheduled,
            games_finished=finished,
            organiser=names.get(tournament.organiser_id, ""),
            teams=[view_pb2.Team(seats=team) for team in rules.teams],
            max_games_per_entrant=tournament.max_games_per_entrant,
            rounds=tournament.rounds,
            rounds_paired=len(competition.swiss_rounds(tournament_id)) if swiss else 0,
        )
        if tournament.time_control is not None:
            message.time_control.CopyFrom(time_control_to_proto(tournament.time_control))
        message.create_time.FromDatetime(tournament.created_at)
        if not full:
            return competition_pb2.GetTournamentResponse(tournament=message)
        results = self._director.results(tournament)
        # Only the deals whose playings are all over count: the others' results are the other
        # tables' secrets.
        cancelled = tournament.status == "cancelled"
        open_deals = {
            g.deal
            for g, _ in results
            if g.status != "finished" and (g.game_id is not None or not cancelled)
        }
        results = [
            (g, state if g.deal not in open_deals else None) for g, state in results
        ]
        games = []
        for g, state in results:
            entry = competition_pb2.TournamentGame(
                number=g.number,
                deal=g.deal,
                rotation=g.rotation,
                round=g.round,
                seats=[names[a] for a in g.seating],
                game_id=g.game_id or "",
                status=GAME_STATUS_TO_PROTO.get(g.status or "", game_pb2.GAME_STATUS_UNSPECIFIED),
            )
            if state is not None and g.status == "finished":
                entry.scores.extend(state.scores)
                if state.winner is not None:
                    entry.winner = state.winner
            games.append(entry)
        response = competition_pb2.GetTournamentResponse(tournament=message, games=games)
        if swiss:
            # A deal is secret until every table's playings of it are over (abandoned ones too).
            hidden = {g.deal for g, _ in results if g.status not in ("finished", "abandoned")}
            rounds, table = self._director.swiss_report(tournament, hidden)
            response.rounds.extend(_swiss_round(r) for r in rounds)
            response.swiss_standings.extend(_swiss_standing(s) for s in table)
            return response
        individuals, partnerships = self._director.standings(tournament, results)
        response.individuals.extend(_standing(s) for s in individuals)
        response.partnerships.extend(_standing(s) for s in partnerships)
        return response


def _check_tournament_id(tournament_id: str) -> str:
    try:
        return str(uuid.UUID(tournament_id))
    except ValueError:
        raise InvalidArgument(f"not a tournament id: {tournament_id[:40]!r}") from None


def _swiss_round(r: SwissRoundReport) -> competition_pb2.SwissRound:
    return competition_pb2.SwissRound(
        round=r.round,
        bye=r.bye or "",
        pairings=[
            competition_pb2.SwissPairing(
                first=b.bout.entrants[0],
                second=b.bout.entrants[1],
                over=b.over,
                first_marks=b.bout.marks[0] if b.over else 0,
                second_marks=b.bout.marks[1] if b.over else 0,
            )
            for b in r.bouts
        ],
    )


def _swiss_standing(s: SwissStanding) -> competition_pb2.SwissStanding:
    return competition_pb2.SwissStanding(
        name=s.name,
        score=s.score,
        buchholz=s.buchholz,
        marks_for=s.marks_for,
        marks_against=s.marks_against,
        wins=s.wins,
        draws=s.draws,
        losses=s.losses,
        byes=s.byes,
    )


def _standing(s: Standing) -> competition_pb2.Standing:
    return competition_pb2.Standing(
        name=s.name,
        members=s.members,
        rating=s.rating,
        uncertainty=s.uncertainty,
        ordinal=s.ordinal,
        games=s.games,
        wins=s.wins,
        score_for=s.score_for,
        score_against=s.score_against,
    )
