"""The gRPC servicers of challenges and of the account stream: ChallengeService and
AccountService. Thin, like server.api: decode, authenticate with the account's key, call the
challenge book, encode."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import grpc

from boneyard.api import codec
from boneyard.api.v1 import challenges_pb2, challenges_pb2_grpc
from boneyard.server.competition.account_events import challenge_to_proto, to_proto
from boneyard.server.competition.challenges import DEFAULT_EXPIRY, ChallengeBook, Invitation
from boneyard.server.competition.seat_watch import SeatWatch
from boneyard.server.errors import InvalidArgument, OutOfRange
from boneyard.server.games.app import GameApp
from boneyard.server.games.service import check_account_name_given
from boneyard.server.games.time_controls import time_control_from_proto
from boneyard.server.ops import logs
from boneyard.server.store.competition import Account
from boneyard.server.transport.pipeline import credentials

__all__ = ["AccountServicer", "ChallengeServicer"]

_STATUSES = {
    challenges_pb2.CHALLENGE_STATUS_UNSPECIFIED: None,
    challenges_pb2.CHALLENGE_STATUS_OPEN: "open",
    challenges_pb2.CHALLENGE_STATUS_ACCEPTED: "accepted",
    challenges_pb2.CHALLENGE_STATUS_DECLINED: "declined",
    challenges_pb2.CHALLENGE_STATUS_EXPIRED: "expired",
}
_ROLES = {
    challenges_pb2.CHALLENGE_ROLE_UNSPECIFIED: (True, True),
    challenges_pb2.CHALLENGE_ROLE_RECEIVED: (True, False),
    challenges_pb2.CHALLENGE_ROLE_SENT: (False, True),
}
_KINDS = {"bot": challenges_pb2.ACCOUNT_KIND_BOT, "player": challenges_pb2.ACCOUNT_KIND_PLAYER}
MAX_LIST = 100
DEFAULT_LIST = 50
MAX_INVITED = 16
"""More accounts than any table seats: refused before any is looked up."""
_PAGE = 100
"""Account events read at a time."""


async def _account(app: GameApp) -> Account:
    account = await app.keys.account(credentials())
    logs.known(account=account.name)
    return account


def _challenge_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise InvalidArgument(f"not a challenge id: {text[:40]!r}") from None


class ChallengeServicer(challenges_pb2_grpc.ChallengeServiceServicer):
    def __init__(self, app: GameApp, book: ChallengeBook) -> None:
        self._app = app
        self._book = book

    async def CreateChallenge(
        self, request: challenges_pb2.CreateChallengeRequest, context: grpc.aio.ServicerContext
    ) -> challenges_pb2.CreateChallengeResponse:
        account = await _account(self._app)
        if len(request.challenged) > MAX_INVITED:
            raise InvalidArgument(f"at most {MAX_INVITED} accounts in a challenge")
        for invited in request.challenged:
            check_account_name_given(invited.account, "a challenged account")
        preset, options = codec.rules_overrides_from_proto(request.rules)
        control = time_control_from_proto(request.time_control, request.HasField("time_control"))
        expires = (
            timedelta(seconds=request.expires_in_seconds)
            if request.expires_in_seconds
            else DEFAULT_EXPIRY
        )
        challenge = await asyncio.to_thread(
            self._book.create,
            account,
            preset,
            options,
            control,
            [
                Invitation(i.account, i.seat if i.HasField("seat") else None)
                for i in request.challenged
            ],
            challenger_plays=request.challenger_plays,
            challenger_seat=request.challenger_seat if request.HasField("challenger_seat") else None,
            rated=request.rated,
            expires_in=expires,
        )
        return challenges_pb2.CreateChallengeResponse(challenge=challenge_to_proto(challenge))

    async def AcceptChallenge(
        self, request: challenges_pb2.AcceptChallengeRequest, context: grpc.aio.ServicerContext
    ) -> challenges_pb2.AcceptChallengeResponse:
        account = await _account(self._app)
        challenge_id = _challenge_id(request.challenge_id)
        challenge = await asyncio.to_thread(self._book.accept, challenge_id, account)
        return challenges_pb2.AcceptChallengeResponse(challenge=challenge_to_proto(challenge))

    async def DeclineChallenge(
        self, request: challenges_pb2.DeclineChallengeRequest, context: grpc.aio.ServicerContext
    ) -> challenges_pb2.DeclineChallengeResponse:
        account = await _account(self._app)
        challenge_id = _challenge_id(request.challenge_id)
        challenge = await asyncio.to_thread(self._book.decline, challenge_id, account)
        return challenges_pb2.DeclineChallengeResponse(challenge=challenge_to_proto(challenge))

    async def GetChallenge(
        self, request: challenges_pb2.GetChallengeRequest, context: grpc.aio.ServicerContext
    ) -> challenges_pb2.GetChallengeResponse:
        account = await _account(self._app)
        challenge_id = _challenge_id(request.challenge_id)
        challenge = await asyncio.to_thread(self._book.get, challenge_id, account)
        return challenges_pb2.GetChallengeResponse(challenge=challenge_to_proto(challenge))

    async def ListChallenges(
        self, request: challenges_pb2.ListChallengesRequest, context: grpc.aio.ServicerContext
    ) -> challenges_pb2.ListChallengesResponse:
        account = await _account(self._app)
        if request.role not in _ROLES:
            raise InvalidArgument(f"unknown challenge role {request.role}")
        if request.status not in _STATUSES:
            raise InvalidArgument(f"unknown challenge status {request.status}")
        if request.limit > MAX_LIST:
            raise InvalidArgument(f"at most {MAX_LIST} challenges at a time, not {request.limit}")
        received, sent = _ROLES[request.role]
        challenges = await asyncio.to_thread(
            self._book.of_account,
            account,
            received,
            sent,
            _STATUSES[request.status],
            request.limit or DEFAULT_LIST,
        )
        return challenges_pb2.ListChallengesResponse(
            challenges=[challenge_to_proto(c) for c in challenges]
        )


class AccountServicer(challenges_pb2_grpc.AccountServiceServicer):
    def __init__(self, app: GameApp, book: ChallengeBook, seats: SeatWatch) -> None:
        self._app = app
        self._book = book
        self._seats = seats

    async def WatchAccount(
        self, request: challenges_pb2.WatchAccountRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[challenges_pb2.WatchAccountResponse]:
        key = credentials()
        account = await _account(self._app)
        after = request.from_sequence
        last = await asyncio.to_thread(self._book.last_sequence, account.id)
        if after > last:
            raise OutOfRange(
                f"{account.name!r} has {last} events: there is nothing after {after} yet",
                reason="SEQUENCE_OUT_OF_RANGE",
                current_sequence=last,
            )
        wake = self._seats.follow(account.id, events=True)
        try:
            while True:
                wake.take()  # before reading: what is written meanwhile wakes it again
                events = await asyncio.to_thread(self._book.events_after, account.id, after, _PAGE)
                for event in events:
                    yield challenges_pb2.WatchAccountResponse(event=to_proto(event))
                    after = event.seq
                if len(events) == _PAGE:
                    continue
                await wake.wait()  # until something is written for the account
                # A key revoked or rotated since the stream opened ends it (as WatchSeats).
                await self._app.keys.account(key)
        finally:
            self._seats.unfollow(account.id, wake)

    async def GetAccount(
        self, request: challenges_pb2.GetAccountRequest, context: grpc.aio.ServicerContext
    ) -> challenges_pb2.GetAccountResponse:
        account = await _account(self._app)
        last = await asyncio.to_thread(self._book.last_sequence, account.id)
        answer = challenges_pb2.GetAccountResponse(
            name=account.name, kind=_KINDS[account.kind], last_sequence=last
        )
        answer.create_time.FromDatetime(account.created_at)
        return answer
