"""A seat's retry cannot be used by anyone else (issue 31, defect 3).

An outside run took a seat over, also in a game already in play, by replaying its TakeSeat
``request_id``: the replay got the seat with a new token and the owner's stopped working. Now a
TakeSeat with a request id gets a token derived from the request and a server secret
(``boneyard.server.games.seat_tokens``): every retry gets the same token back, nothing is revoked,
and the owner plays on."""

from __future__ import annotations

import uuid

import grpc
from api_helpers import RPC_TIMEOUT, Client, RunningServer, bearer, rpc_error

from boneyard.api.v1 import game_service_pb2
from boneyard.server.games.seat_tokens import SeatTokens
from boneyard.server.store.keys import KeyStore

Code = grpc.StatusCode


def take(client: Client, game_id: str, request_id: str, seat: int | None = None, name: str = "p"):
    request = game_service_pb2.TakeSeatRequest(
        game_id=game_id, player_name=name, request_id=request_id
    )
    if seat is not None:
        request.seat = seat
    return client.stub.TakeSeat(request, timeout=RPC_TIMEOUT)


def view(client: Client, game_id: str, token: str):
    return client.stub.GetView(
        game_service_pb2.GetViewRequest(game_id=game_id),
        metadata=bearer(token),
        timeout=RPC_TIMEOUT,
    ).view


def test_a_replayed_take_seat_request_id_does_not_take_the_seat_over_in_a_game_in_play(
    client: Client,
) -> None:
    table = client.create("moon")
    request_id = str(uuid.uuid4())
    owner = take(client, table.game_id, request_id, 1, "owner")
    table.tokens[1] = owner.seat_token
    for seat in (0, 2):
        table.tokens[seat] = take(client, table.game_id, str(uuid.uuid4()), seat).seat_token
    assert client.view(table, 1).phase != 0  # in play
    # Somebody replays the request that took seat 1 (its id seen on the way, say).
    replayed = take(client, table.game_id, request_id, None, "thief")
    # Answered with the seat the request took and the very same token: nothing new is
    # issued, so the owner's token still opens the seat, and the seat keeps its name.
    assert replayed.seat == 1 and replayed.seat_token == owner.seat_token
    assert client.view(table, 1).seat == 1
    assert client.game(table.game_id).seats[1].player_name == "owner"
    # And the owner plays on with it: the seats act in turn until seat 1 has acted.
    for _ in range(10):
        turn = client.view(table, None).turn
        seen = client.view(table, turn)
        client.submit(table, turn, seen.legal_actions[0], seen.version)
        if turn == 1:
            break
    else:
        raise AssertionError("seat 1 never came to act")


def test_a_retry_with_another_token_is_refused_and_the_seat_stays_its_owners(
    server: RunningServer, client: Client
) -> None:
    # A seat taken by a request whose stored token is not the one the request derives (taken
    # by an older server, which drew tokens at random) is not handed out again: refused.
    game_id = client.create("texas42").game_id
    request_id = str(uuid.uuid4())
    owner = take(client, game_id, request_id, 2)
    secret = server.run(_swap_secret(server))
    try:
        with rpc_error(Code.FAILED_PRECONDITION, "with another token"):
            take(client, game_id, request_id, 2)
    finally:
        server.run(_restore_secret(server, secret))
    assert view(client, game_id, owner.seat_token).seat == 2


async def _swap_secret(server: RunningServer) -> bytes | None:
    tokens = server.app.app.seat_tokens
    old = tokens._secret
    tokens._secret = b"another server's secret, 32 bytes"
    return old


async def _restore_secret(server: RunningServer, secret: bytes | None) -> None:
    server.app.app.seat_tokens._secret = secret


def test_the_tokens_of_one_request_are_the_same_from_every_process_on_a_database(
    server: RunningServer,
) -> None:
    first = SeatTokens(KeyStore(server.store))
    second = SeatTokens(KeyStore(server.store))
    assert first.token("g", "r") == second.token("g", "r")
    assert first.token("g", "r") != first.token("g", "r2") != first.token("h", "r")
    assert not first.token("g", "r").startswith("byk_")
