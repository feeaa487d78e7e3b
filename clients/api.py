"""A thin client of Boneyard's gRPC API: what a front end or a bot author would write.

Only the generated API code (``boneyard.v1``) and the standard library are used here.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, TypeVar

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from boneyard.api.v1 import (
    actions_pb2,
    archive_pb2,
    challenges_pb2,
    challenges_pb2_grpc,
    competition_pb2,
    competition_pb2_grpc,
    events_pb2,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    matches_pb2,
    matches_pb2_grpc,
    ratings_pb2,
    ratings_pb2_grpc,
    rules_pb2,
    view_pb2,
)

__all__ = [
    "CHANNEL_OPTIONS",
    "CONNECT_TIMEOUT",
    "DEFAULT_SERVER",
    "GAME_HEADER",
    "RETRY_SERVICE_CONFIG",
    "TIMEOUT_POLICIES",
    "Client",
    "OptionError",
    "Refusal",
    "Stream",
    "Transport",
    "open_channel",
    "refusal",
    "ruleset_request",
    "time_control",
    "transport",
]

DEFAULT_SERVER = "127.0.0.1:50051"
GAME_HEADER = "boneyard-game"
"""The metadata every call about one game carries, its value the game's id: where a load
balancer in front of several server processes can hash on it without reading protobuf, so one
game's calls go to the process that holds it fresh (docs/scaling.md). A routing hint only: the
server does not read it, and a missing or wrong one costs a reload, never a wrong answer."""
_OPENER = "first_hand_opener"

TIMEOUT_POLICIES = {
    "auto_play": events_pb2.TIMEOUT_POLICY_AUTO_PLAY,
    "forfeit": events_pb2.TIMEOUT_POLICY_FORFEIT,
}
"""What happens to a seat out of time, by the name the command line uses."""


_M_co = TypeVar("_M_co", covariant=True)


class Stream(Protocol[_M_co]):
    """The answer of a server-streaming call (``watch``, ``seek`` ...): its messages as they
    come, until the server ends the stream or its caller calls ``cancel()``."""

    def __iter__(self) -> Iterator[_M_co]: ...

    def __next__(self) -> _M_co: ...

    def cancel(self) -> bool: ...


class OptionError(ValueError):
    """A ``NAME=VALUE`` option that does not fit the API's Ruleset message."""


def ruleset_request(preset: str, options: Mapping[str, str]) -> rules_pb2.Ruleset:
    """The ``Ruleset`` message for a preset and ``NAME=VALUE`` overrides as typed on a
    command line (``widow=may_exchange``, ``nello=true``, ``marks_to_win=5``)."""
    msg = rules_pb2.Ruleset(preset=preset)
    fields = rules_pb2.Ruleset.DESCRIPTOR.fields_by_name
    for name, text in options.items():
        value = text.strip()
        if name == _OPENER:
            if value == "holds_1_0":
                msg.opener_holds_one_blank = True
            elif value.isdigit():
                msg.opener_seat = int(value)
            else:
                raise OptionError(f"{name}={text!r}: holds_1_0 or a seat number")
            continue
        field = fields.get(name)
        if field is None or name == "preset":
            known = sorted(n for n in fields if n not in ("preset", "opener_holds_one_blank", "opener_seat"))
            raise OptionError(f"no option {name!r}; options are {', '.join(known + [_OPENER])}")
        if field.enum_type is not None:
            wanted = value.upper().replace("-", "_")
            match = [v for v in field.enum_type.values if v.number and v.name.endswith("_" + wanted)]
            if not match:
                # The values' names less the enum's prefix (ALL_PASS_, WIDOW_RULE_ ...).
                prefix = field.enum_type.values[0].name.removesuffix("UNSPECIFIED")
                choices = [
                    v.name.removeprefix(prefix).lower() for v in field.enum_type.values if v.number
                ]
                raise OptionError(f"{name}={text!r}: choose one of {', '.join(choices)}")
            setattr(msg, name, match[0].number)
        elif field.type == field.TYPE_BOOL:
            if value.lower() not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
                raise OptionError(f"{name}={text!r}: say true or false")
            setattr(msg, name, value.lower() in ("true", "on", "yes", "1"))
        else:
            try:
                setattr(msg, name, int(value))
            except ValueError:
                raise OptionError(f"{name}={text!r}: a whole number is needed") from None
    return msg


def time_control(
    per_move_ms: int,
    bank_ms: int = 0,
    policy: str | events_pb2.TimeoutPolicy.ValueType = "auto_play",
) -> game_pb2.TimeControl:
    """The ``TimeControl`` message: ``per_move_ms`` for each action, then a bank of ``bank_ms``
    for the whole game; ``policy`` (``auto_play``, ``forfeit`` or the enum's number) when both
    are spent."""
    if per_move_ms < 0 or bank_ms < 0:
        raise ValueError(f"per_move_ms={per_move_ms}, bank_ms={bank_ms}: times are not negative")
    if isinstance(policy, str):
        try:
            number = TIMEOUT_POLICIES[policy.strip().lower().replace("-", "_")]
        except KeyError:
            raise ValueError(
                f"policy {policy!r}: choose one of {', '.join(TIMEOUT_POLICIES)}"
            ) from None
    else:
        number = policy
    return game_pb2.TimeControl(per_move_ms=per_move_ms, bank_ms=bank_ms, policy=number)


CONNECT_TIMEOUT = 2.0
"""Seconds a ``boneyard`` command waits for a server's first answer before saying none is
there (``--connect-timeout``)."""


@dataclass(frozen=True, slots=True)
class Transport:
    """How the clients reach a server: in the clear (the default), or over TLS, checking the
    server's certificate against ``ca`` (PEM bytes; ``None``: the system's roots); and how long
    a command waits for a server's first answer (``connect_timeout`` seconds, see
    clients/reach.py; a bot or a competitor waits for a server as long as it takes)."""

    tls: bool = False
    ca: bytes | None = None
    connect_timeout: float = CONNECT_TIMEOUT


transport = Transport()
"""The transport of every channel this process opens (``boneyard --tls [--ca FILE]`` sets
it; a program using ``Client`` may too)."""


ERROR_DOMAIN = "boneyard.v1"
"""The ``ErrorInfo.domain`` of the server's refusals."""


@dataclass(frozen=True)
class Refusal:
    """A refused call as a program reads it: the status code, the message (prose for people),
    and the ``ErrorInfo``'s stable ``reason`` (``NOT_YOUR_TURN`` ..., the ``ErrorReason``
    values of boneyard/v1/errors.proto without their prefix; "" when the answer carried none,
    e.g. a connection that failed before reaching the server) and ``metadata``."""

    code: grpc.StatusCode
    message: str
    reason: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"

    def for_people(self) -> str:
        """The message without the game and version it starts with when it names them (the
        server quotes both for logs and programs; a person at the table knows which game)."""
        game, version = self.metadata.get("game_id"), self.metadata.get("version")
        if game is None or version is None:
            return self.message
        return self.message.removeprefix(f"game {game} version {version}: ")


def refusal(error: grpc.RpcError) -> Refusal:
    """What the server said in refusing a call (``rpc_status.from_call``: the
    ``google.rpc.Status`` of its trailers)."""
    code: grpc.StatusCode = error.code()
    message: str = error.details() or ""
    try:
        # grpc raises a call's error as the call itself (its code, its trailers); the stubs
        # keep RpcError and Call apart.
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
    except ValueError:  # a status that contradicts the call's code: not the server's
        status = None
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            if info.domain == ERROR_DOMAIN:
                return Refusal(code, message, info.reason, dict(info.metadata))
    return Refusal(code, message)


def _unary_methods() -> list[dict[str, str]]:
    """Every unary method of the API's services (streams are left out: see below)."""
    return [
        {"service": service.full_name, "method": method.name}
        for module in (
            game_service_pb2,
            competition_pb2,
            archive_pb2,
            challenges_pb2,
            ratings_pb2,
            matches_pb2,
        )
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
        if not method.server_streaming
    ]


RETRY_SERVICE_CONFIG = {
    "methodConfig": [
        {
            "name": _unary_methods(),
            "retryPolicy": {
                "maxAttempts": 5,
                "initialBackoff": "0.2s",
                "maxBackoff": "2s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE"],
            },
        }
    ]
}
"""gRPC's own retries (a service config, not a loop of ours): a call answered UNAVAILABLE (the
server restarting, a connection that dropped) is tried again up to 5 times, 0.2 s to 2 s
apart. Safe because every call that changes something carries a request id the server
answers a retry of without applying it twice (CreateGame, TakeSeat, SubmitAction). Unary
calls only: gRPC would retry a stream that has had no message yet behind its caller's back,
and a bot waiting on a WatchGame opened at the game's current version would then wait on the
restarted server without reading its view again, and never act on a turn it already had."""

CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.enable_retries", 1),
    ("grpc.service_config", json.dumps(RETRY_SERVICE_CONFIG)),
    # Ping a quiet connection every 60 s (the server accepts one every 30 s, see
    # boneyard.server.transport.grpc.keepalive), also with no data moving: a WatchGame stream waiting for the
    # next move stays open through NATs that forget idle connections.
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]
"""The options of every channel ``open_channel`` makes (its caller's are added after)."""


def open_channel(
    address: str, options: list[tuple[str, Any]] | None = None
) -> grpc.Channel:
    """A channel to ``address`` over ``transport``, with ``CHANNEL_OPTIONS`` (retries on
    UNAVAILABLE, keepalive) and ``options``. Without TLS, seat tokens and API keys travel in
    the clear."""
    options = CHANNEL_OPTIONS + list(options or [])
    if transport.tls:
        credentials = grpc.ssl_channel_credentials(root_certificates=transport.ca)
        return grpc.secure_channel(address, credentials, options=options)
    return grpc.insecure_channel(address, options=options)


class Client:
    """One channel to a server; seat tokens and account keys are passed per call."""

    def __init__(self, address: str = DEFAULT_SERVER) -> None:
        self.address = address
        # Bots and competitors live through server restarts: after an outage the channel
        # retries the connection at least every 5 s (gRPC's default backoff grows to 120 s).
        self._channel = open_channel(address, [("grpc.max_reconnect_backoff_ms", 5000)])
        self._stub = game_service_pb2_grpc.GameServiceStub(self._channel)
        self._lobby = competition_pb2_grpc.LobbyServiceStub(self._channel)
        self._tournaments = competition_pb2_grpc.TournamentServiceStub(self._channel)
        self._challenges = challenges_pb2_grpc.ChallengeServiceStub(self._channel)
        self._account = challenges_pb2_grpc.AccountServiceStub(self._channel)
        self._ratings = ratings_pb2_grpc.RatingServiceStub(self._channel)
        self._matches = matches_pb2_grpc.MatchServiceStub(self._channel)

    @property
    def channel(self) -> grpc.Channel:
        """The client's one channel (for services of its own: health checks ...)."""
        return self._channel

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _auth(token: str | None, game_id: str = "") -> tuple[tuple[str, str], ...]:
        """The call's metadata: the bearer ``token``, and ``GAME_HEADER`` for a call about
        game ``game_id``."""
        auth = (("authorization", f"Bearer {token}"),) if token else ()
        return auth + ((GAME_HEADER, game_id),) if game_id else auth

    def create_game(
        self,
        preset: str,
        options: Mapping[str, str] | None = None,
        name: str = "",
        *,
        time_control: game_pb2.TimeControl | None = None,
        reservations: Mapping[int, str] | None = None,
        house_bots: Mapping[int, str] | None = None,
        key: str | None = None,
    ) -> game_pb2.GameSummary:
        """Create a game; ``reservations`` keeps seats for accounts (seat -> account name),
        which needs an organiser's API key (``key``: a player's account's); ``house_bots``
        has the server play seats with its own bots (seat -> strategy name)."""
        request = game_service_pb2.CreateGameRequest(
            rules=ruleset_request(preset, options or {}),
            name=name,
            reservations=[
                game_service_pb2.SeatReservation(seat=seat, account_name=account)
                for seat, account in sorted((reservations or {}).items())
            ],
            house_bots=[
                game_service_pb2.HouseBot(seat=seat, strategy=strategy)
                for seat, strategy in sorted((house_bots or {}).items())
            ],
        )
        if time_control is not None:
            request.time_control.CopyFrom(time_control)
        # The id makes the channel's retry of a lost answer get this game, not a second one.
        request.request_id = str(uuid.uuid4())
        return self._stub.CreateGame(request, metadata=self._auth(key)).game

    def presets(self) -> list[rules_pb2.Preset]:
        """The presets a game may be made from on this server (ListPresets), the standard
        Texas 42 first, each with its description and complete ruleset."""
        return list(self._stub.ListPresets(game_service_pb2.ListPresetsRequest()).presets)

    def game(self, game_id: str) -> game_pb2.GameSummary:
        request = game_service_pb2.GetGameRequest(game_id=game_id)
        return self._stub.GetGame(request, metadata=self._auth(None, game_id)).game

    def games(
        self,
        status: game_pb2.GameStatus.ValueType = game_pb2.GAME_STATUS_UNSPECIFIED,
        page_size: int = 50,
    ) -> Iterator[game_pb2.GameSummary]:
        token = ""
        while True:
            page = self._stub.ListGames(
                game_service_pb2.ListGamesRequest(page_size=page_size, page_token=token, status=status)
            )
            yield from page.games
            token = page.next_page_token
            if not token:
                return

    def take_seat(self, game_id: str, player_name: str, seat: int | None = None) -> tuple[int, str]:
        request = game_service_pb2.TakeSeatRequest(
            game_id=game_id, player_name=player_name, request_id=str(uuid.uuid4())
        )
        if seat is not None:
            request.seat = seat
        response = self._stub.TakeSeat(request, metadata=self._auth(None, game_id))
        return response.seat, response.seat_token

    def leave_seat(self, game_id: str, token: str) -> game_pb2.GameSummary:
        """Leave the token's seat of a game not yet started (the token stops working)."""
        request = game_service_pb2.LeaveSeatRequest(game_id=game_id)
        return self._stub.LeaveSeat(request, metadata=self._auth(token, game_id)).game

    def resign(
        self, game_id: str, token: str, expected_version: int, request_id: str | None = None
    ) -> game_service_pb2.SubmitActionResponse:
        """Give up a game in play: the token's team loses at once."""
        resign = actions_pb2.Action(resign=actions_pb2.Resign())
        return self.submit(game_id, token, expected_version, resign, request_id)

    def view(
        self,
        game_id: str,
        token: str | None = None,
        timeout: float | None = None,
        seat: int | None = None,
    ) -> view_pb2.SeatView:
        """The seat's view (``seat``: which, for a key that holds several seats of the game)."""
        request = game_service_pb2.GetViewRequest(game_id=game_id, seat=seat)
        metadata = self._auth(token, game_id)
        return self._stub.GetView(request, metadata=metadata, timeout=timeout).view

    def submit(
        self,
        game_id: str,
        token: str,
        expected_version: int,
        action: actions_pb2.Action,
        request_id: str | None = None,
        timeout: float | None = None,
        seat: int | None = None,
    ) -> game_service_pb2.SubmitActionResponse:
        request = game_service_pb2.SubmitActionRequest(
            game_id=game_id,
            expected_version=expected_version,
            request_id=request_id or str(uuid.uuid4()),
            action=action,
            seat=seat,
        )
        metadata = self._auth(token, game_id)
        return self._stub.SubmitAction(request, metadata=metadata, timeout=timeout)

    def watch(
        self,
        game_id: str,
        token: str | None = None,
        from_version: int = 0,
        seat: int | None = None,
    ) -> Stream[game_service_pb2.WatchGameResponse]:
        """The game's events after ``from_version`` and then live ones; cancel by closing the
        returned iterator (``.cancel()``)."""
        request = game_service_pb2.WatchGameRequest(
            game_id=game_id, from_version=from_version, seat=seat
        )
        return self._stub.WatchGame(request, metadata=self._auth(token, game_id))

    # --- the lobby (account key) -------------------------------------------------------

    def seek(
        self,
        key: str,
        preset: str,
        options: Mapping[str, str] | None = None,
        time_control: game_pb2.TimeControl | None = None,
    ) -> Stream[competition_pb2.SeekResponse]:
        """Seek a table: ``waiting`` messages, then one ``seated`` and the end. Cancel the
        returned call (``.cancel()``) to stop seeking."""
        request = competition_pb2.SeekRequest(rules=ruleset_request(preset, options or {}))
        if time_control is not None:
            request.time_control.CopyFrom(time_control)
        return self._lobby.Seek(request, metadata=self._auth(key))

    def watch_seats(self, key: str) -> Stream[competition_pb2.WatchSeatsResponse]:
        """The account's seats in unfinished games, then each new one; cancel the returned
        call (``.cancel()``) to stop."""
        request = competition_pb2.WatchSeatsRequest()
        return self._lobby.WatchSeats(request, metadata=self._auth(key))

    def watch_turns(
        self, key: str, game_ids: Sequence[str] = ()
    ) -> Stream[competition_pb2.WatchTurnsResponse]:
        """Every turn of the account's seats across its games, each with the seat's view, and
        each game's end; ``game_ids``: the games the client was playing when its last stream
        was lost (their ends meanwhile are told at once). Cancel the returned call
        (``.cancel()``) to stop."""
        request = competition_pb2.WatchTurnsRequest(game_ids=list(game_ids))
        return self._lobby.WatchTurns(request, metadata=self._auth(key))

    def play_turns(
        self, key: str, requests: Iterator[competition_pb2.PlayTurnsRequest]
    ) -> Stream[competition_pb2.PlayTurnsResponse]:
        """WatchTurns and its answers on one call: ``requests`` is the opening
        (``PlayTurnsRequest.open``) then an answer for each turn, sent as the iterator yields
        them (ending it ends the stream). Cancel the returned call (``.cancel()``) to stop."""
        return self._lobby.PlayTurns(requests, metadata=self._auth(key))

    # --- challenges and the account stream (account key) -----------------------------

    def challenge(
        self,
        key: str,
        challenged: Mapping[str, int | None],
        preset: str,
        options: Mapping[str, str] | None = None,
        *,
        time_control: game_pb2.TimeControl | None = None,
        challenger_seat: int | None = None,
        challenger_plays: bool = False,
        rated: bool = False,
        expires_in_seconds: int = 0,
    ) -> challenges_pb2.Challenge:
        """Challenge accounts (name -> seat, ``None``: the first free) to a table; the
        challenger plays when ``challenger_plays`` (in ``challenger_seat``, or the first
        free)."""
        request = challenges_pb2.CreateChallengeRequest(
            rules=ruleset_request(preset, options or {}),
            challenged=[
                challenges_pb2.ChallengeInvitation(account=name, seat=seat)
                for name, seat in challenged.items()
            ],
            challenger_plays=challenger_plays or challenger_seat is not None,
            challenger_seat=challenger_seat,
            rated=rated,
            expires_in_seconds=expires_in_seconds,
        )
        if time_control is not None:
            request.time_control.CopyFrom(time_control)
        answer = self._challenges.CreateChallenge(request, metadata=self._auth(key))
        return answer.challenge

    def accept_challenge(self, key: str, challenge_id: str) -> challenges_pb2.Challenge:
        request = challenges_pb2.AcceptChallengeRequest(challenge_id=challenge_id)
        return self._challenges.AcceptChallenge(request, metadata=self._auth(key)).challenge

    def decline_challenge(self, key: str, challenge_id: str) -> challenges_pb2.Challenge:
        request = challenges_pb2.DeclineChallengeRequest(challenge_id=challenge_id)
        return self._challenges.DeclineChallenge(request, metadata=self._auth(key)).challenge

    def get_challenge(self, key: str, challenge_id: str) -> challenges_pb2.Challenge:
        request = challenges_pb2.GetChallengeRequest(challenge_id=challenge_id)
        return self._challenges.GetChallenge(request, metadata=self._auth(key)).challenge

    def challenges(
        self,
        key: str,
        role: challenges_pb2.ChallengeRole.ValueType = challenges_pb2.CHALLENGE_ROLE_UNSPECIFIED,
        status: challenges_pb2.ChallengeStatus.ValueType = (
            challenges_pb2.CHALLENGE_STATUS_UNSPECIFIED
        ),
        limit: int = 0,
    ) -> list[challenges_pb2.Challenge]:
        request = challenges_pb2.ListChallengesRequest(role=role, status=status, limit=limit)
        return list(self._challenges.ListChallenges(request, metadata=self._auth(key)).challenges)

    def watch_account(
        self, key: str, from_sequence: int = 0
    ) -> Stream[challenges_pb2.WatchAccountResponse]:
        """The account's events after ``from_sequence``, then each new one; cancel the
        returned call (``.cancel()``) to stop."""
        request = challenges_pb2.WatchAccountRequest(from_sequence=from_sequence)
        return self._account.WatchAccount(request, metadata=self._auth(key))

    # --- tournaments -------------------------------------------------------------------

    def create_tournament(
        self,
        key: str,
        name: str,
        preset: str,
        entrants: Sequence[str],
        deals: int,
        *,
        options: Mapping[str, str] | None = None,
        duplicate: bool = True,
        time_control: game_pb2.TimeControl | None = None,
        max_games_per_entrant: int = 0,
        swiss_rounds: int = 0,
    ) -> competition_pb2.Tournament:
        """Make a tournament (the organiser's key); ``max_games_per_entrant``: the most
        unfinished games of it an entrant may be in at once (0: the server's default, 8).
        ``swiss_rounds``: a Swiss tournament of that many rounds, each pairing playing
        ``deals`` deals twice (0: a round robin)."""
        request = competition_pb2.CreateTournamentRequest(
            name=name,
            rules=ruleset_request(preset, options or {}),
            entrants=list(entrants),
            deals=deals,
            duplicate=duplicate,
            format=competition_pb2.TOURNAMENT_FORMAT_SWISS
            if swiss_rounds
            else competition_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
            max_games_per_entrant=max_games_per_entrant,
            rounds=swiss_rounds,
        )
        if time_control is not None:
            request.time_control.CopyFrom(time_control)
        response = self._tournaments.CreateTournament(request, metadata=self._auth(key))
        return response.tournament

    def cancel_tournament(
        self, key: str, tournament_id: str, timeout: float | None = None
    ) -> competition_pb2.Tournament:
        """Make no more games of the tournament (its organiser's key)."""
        request = competition_pb2.CancelTournamentRequest(tournament_id=tournament_id)
        response = self._tournaments.CancelTournament(
            request, metadata=self._auth(key), timeout=timeout
        )
        return response.tournament

    def start_tournament(
        self, key: str, tournament_id: str, timeout: float | None = None
    ) -> competition_pb2.Tournament:
        request = competition_pb2.StartTournamentRequest(tournament_id=tournament_id)
        response = self._tournaments.StartTournament(
            request, metadata=self._auth(key), timeout=timeout
        )
        return response.tournament

    def tournament(
        self, tournament_id: str, timeout: float | None = None, *, basic: bool = False
    ) -> competition_pb2.GetTournamentResponse:
        """The tournament, its games and its standings (``basic``: the tournament only, cheap
        to poll)."""
        request = competition_pb2.GetTournamentRequest(
            tournament_id=tournament_id,
            view=competition_pb2.TOURNAMENT_VIEW_BASIC if basic else competition_pb2.TOURNAMENT_VIEW_FULL,
        )
        return self._tournaments.GetTournament(request, timeout=timeout)

    def tournaments(self) -> list[competition_pb2.Tournament]:
        """Every tournament, newest first."""
        response = self._tournaments.ListTournaments(competition_pb2.ListTournamentsRequest())
        return list(response.tournaments)

    # --- matches -------------------------------------------------------------------------

    def create_match(
        self,
        key: str,
        entrant_a: str,
        entrant_b: str,
        preset: str,
        *,
        options: Mapping[str, str] | None = None,
        deals: int | None = None,
        sprt: matches_pb2.MatchSprt | None = None,
        scoring: matches_pb2.MatchScoring.ValueType = matches_pb2.MATCH_SCORING_MARKS,
        time_control: game_pb2.TimeControl | None = None,
        max_games_in_flight: int = 0,
        timeout: float | None = None,
    ) -> matches_pb2.Match:
        """Make and start a match (the organiser's key): ``deals`` deals, or an ``sprt``."""
        request = matches_pb2.CreateMatchRequest(
            entrant_a=entrant_a,
            entrant_b=entrant_b,
            rules=ruleset_request(preset, options or {}),
            scoring=scoring,
            max_games_in_flight=max_games_in_flight,
        )
        if deals is not None:
            request.deals = deals
        if sprt is not None:
            request.sprt.CopyFrom(sprt)
        if time_control is not None:
            request.time_control.CopyFrom(time_control)
        return self._matches.CreateMatch(request, metadata=self._auth(key), timeout=timeout).match

    def match(self, match_id: str, timeout: float | None = None) -> matches_pb2.Match:
        request = matches_pb2.GetMatchRequest(match_id=match_id)
        return self._matches.GetMatch(request, timeout=timeout).match

    def matches(
        self, page_size: int = 0, page_token: str = "", timeout: float | None = None
    ) -> matches_pb2.ListMatchesResponse:
        """One page of the matches, newest first."""
        request = matches_pb2.ListMatchesRequest(page_size=page_size, page_token=page_token)
        return self._matches.ListMatches(request, timeout=timeout)

    def match_deals(
        self, match_id: str, page_size: int = 0, page_token: str = "", timeout: float | None = None
    ) -> matches_pb2.ListMatchDealsResponse:
        """One page of a match's deals, by deal number."""
        request = matches_pb2.ListMatchDealsRequest(
            match_id=match_id, page_size=page_size, page_token=page_token
        )
        return self._matches.ListMatchDeals(request, timeout=timeout)

    def cancel_match(
        self, key: str, match_id: str, timeout: float | None = None
    ) -> matches_pb2.Match:
        """Start no more deals of the match (its organiser's key)."""
        request = matches_pb2.CancelMatchRequest(match_id=match_id)
        return self._matches.CancelMatch(request, metadata=self._auth(key), timeout=timeout).match

    # ------------------------------------------------------------ ratings

    def leaderboard(
        self, game_type: rules_pb2.Family.ValueType, page_size: int = 0, page_token: str = ""
    ) -> ratings_pb2.GetLeaderboardResponse:
        """One page of a game type's leaderboard (``game_type``: ``rules_pb2.FAMILY_...``)."""
        return self._ratings.GetLeaderboard(
            ratings_pb2.GetLeaderboardRequest(
                game_type=game_type,
                page_size=page_size,
                page_token=page_token,
            ),
            timeout=30,
        )

    def rating(self, account_name: str, history_size: int = 0) -> ratings_pb2.GetRatingResponse:
        """An account's ratings per game type, with their recent history."""
        return self._ratings.GetRating(
            ratings_pb2.GetRatingRequest(account_name=account_name, history_size=history_size),
            timeout=30,
        )
