"""What each account is told (``AccountService.WatchAccount``): the ``AccountEvent`` messages
written, numbered, in the transactions of what they report (``store.account_events``).

- a seat reserved for the account: ``game_started``, written by ``GameApp.create_game`` in the
  game's creating transaction (challenges, seeks, tournaments, an organiser's CreateGame);
- the end of a game in which the account held a seat: ``game_finished``, written by the writer
  with the game's last append (``GameHost``);
- a challenge made, answered or expired: ``challenge_received`` / ``challenge_answered``,
  written by the challenge store with the change.

After the commit the accounts' streams are woken (``SeatWatch.reserved``: here at once, and on
PostgreSQL the other processes through the lobby channel's ``a:<account id>``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from google.protobuf.timestamp_pb2 import Timestamp

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import challenges_pb2
from boneyard.engine import GameState
from boneyard.server.games.time_controls import time_control_to_proto
from boneyard.server.store.account_events import AccountEvent, NewAccountEvent
from boneyard.server.store.challenges import Challenge
from boneyard.server.store.ratings import Rated

__all__ = [
    "challenge_answered",
    "challenge_received",
    "challenge_to_proto",
    "game_finished",
    "game_started",
    "to_proto",
]

_STATUS = {
    "open": challenges_pb2.CHALLENGE_STATUS_OPEN,
    "accepted": challenges_pb2.CHALLENGE_STATUS_ACCEPTED,
    "declined": challenges_pb2.CHALLENGE_STATUS_DECLINED,
    "expired": challenges_pb2.CHALLENGE_STATUS_EXPIRED,
}
_ANSWER = {
    None: challenges_pb2.CHALLENGE_ANSWER_UNSPECIFIED,
    "accepted": challenges_pb2.CHALLENGE_ANSWER_ACCEPTED,
    "declined": challenges_pb2.CHALLENGE_ANSWER_DECLINED,
}
_OUTCOME = {
    "accepted": challenges_pb2.CHALLENGE_OUTCOME_ACCEPTED,
    "declined": challenges_pb2.CHALLENGE_OUTCOME_DECLINED,
    "expired": challenges_pb2.CHALLENGE_OUTCOME_EXPIRED,
}


def challenge_to_proto(challenge: Challenge) -> challenges_pb2.Challenge:
    message = challenges_pb2.Challenge(
        challenge_id=challenge.id,
        challenger=challenge.challenger_name,
        rules=codec.rules_to_proto(engine.ruleset(challenge.preset, challenge.options)),
        participants=[
            challenges_pb2.ChallengeParticipant(
                account=s.name, seat=s.seat, challenger=s.challenger, answer=_ANSWER[s.answer]
            )
            for s in challenge.seats
        ],
        rated=challenge.rated,
        status=_STATUS[challenge.status],
        game_id=challenge.game_id or "",
        declined_by=challenge.declined_by or "",
    )
    if challenge.time_control is not None:
        message.time_control.CopyFrom(time_control_to_proto(challenge.time_control))
    message.create_time.FromDatetime(challenge.created_at)
    message.expire_time.FromDatetime(challenge.expires_at)
    return message


def challenge_received(challenge: Challenge) -> list[NewAccountEvent]:
    """A new challenge, told to each challenged account."""
    payload = challenges_pb2.AccountEvent(
        challenge_received=challenges_pb2.ChallengeReceived(challenge=challenge_to_proto(challenge))
    ).SerializeToString()
    return [
        NewAccountEvent(s.account_id, "challenge_received", payload)
        for s in challenge.seats
        if not s.challenger
    ]


def challenge_answered(
    outcome: str, by_account: str | None
) -> Callable[[Challenge], list[NewAccountEvent]]:
    """An answer (``accepted``, ``declined``; ``expired`` with nobody), told to everybody
    at the table and to the challenger."""

    def events(challenge: Challenge) -> list[NewAccountEvent]:
        name = "" if by_account is None else next(
            (s.name for s in challenge.seats if s.account_id == by_account), ""
        )
        payload = challenges_pb2.AccountEvent(
            challenge_answered=challenges_pb2.ChallengeAnswered(
                challenge=challenge_to_proto(challenge), outcome=_OUTCOME[outcome], account=name
            )
        ).SerializeToString()
        told = {s.account_id for s in challenge.seats} | {challenge.challenger_id}
        return [NewAccountEvent(a, "challenge_answered", payload) for a in sorted(told)]

    return events


def game_started(
    game_id: str,
    preset: str,
    seats: Sequence[tuple[int, str]],
    tournament: str | None,
    challenge: str | None,
) -> list[NewAccountEvent]:
    """Seats reserved at a game's creation (``(seat, account_id)``), and the tournament or
    challenge it was made for."""
    return [
        NewAccountEvent(
            account_id,
            "game_started",
            challenges_pb2.AccountEvent(
                game_started=challenges_pb2.GameStarted(
                    game_id=game_id,
                    seat=seat,
                    preset=preset,
                    tournament_id=tournament or "",
                    challenge_id=challenge or "",
                )
            ).SerializeToString(),
        )
        for seat, account_id in seats
    ]


def game_finished(
    game_id: str, state: GameState, accounts: Mapping[str, tuple[int, ...]]
) -> list[NewAccountEvent]:
    """A game over, told once to each account that held seats of it (``account id -> seats``,
    lowest first: an account holding a partnership's seats is told of its lowest, the team
    being the same)."""
    events = []
    for account_id, seats in sorted(accounts.items()):
        seat = seats[0]
        team = state.rules.team_of[seat]
        if state.winner is None:
            outcome = challenges_pb2.GAME_OUTCOME_ABANDONED
        elif state.winner == team:
            outcome = challenges_pb2.GAME_OUTCOME_WON
        else:
            outcome = challenges_pb2.GAME_OUTCOME_LOST
        finished = challenges_pb2.GameFinished(
            game_id=game_id, seat=seat, scores=list(state.scores), team=team, outcome=outcome
        )
        if state.winner is not None:
            finished.winner = state.winner
        payload = challenges_pb2.AccountEvent(game_finished=finished).SerializeToString()
        events.append(NewAccountEvent(account_id, "game_finished", payload))
    return events


def game_rated(game_id: str, game_type: str, rated: Mapping[str, Rated]) -> list[NewAccountEvent]:
    """A rated game's rating change, told to each of its accounts."""
    events = []
    for account_id, change in sorted(rated.items()):
        (mu0, sigma0), (mu1, sigma1) = change.before, change.after
        message = challenges_pb2.GameRated(
            game_id=game_id,
            rating=challenges_pb2.RatingChange(
                game_type=game_type,
                before=challenges_pb2.RatingSnapshot(
                    mu=mu0, sigma=sigma0, ordinal=mu0 - 3 * sigma0
                ),
                after=challenges_pb2.RatingSnapshot(mu=mu1, sigma=sigma1, ordinal=change.ordinal),
            ),
        )
        payload = challenges_pb2.AccountEvent(game_rated=message).SerializeToString()
        events.append(NewAccountEvent(account_id, "game_rated", payload))
    return events


def to_proto(event: AccountEvent) -> challenges_pb2.AccountEvent:
    """A stored event as sent: its payload with its number and time."""
    message = challenges_pb2.AccountEvent.FromString(event.payload)
    message.sequence = event.seq
    time = Timestamp()
    time.FromDatetime(event.created_at)
    message.time.CopyFrom(time)
    return message
