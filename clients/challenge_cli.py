"""``boneyard challenge``: challenge named accounts to a table and wait for the outcome.

    boneyard challenge NAME[@SEAT] ... --key KEY [--preset P] [--option NAME=VALUE ...]
                       [--seat N] [--play [--strategy S] [--move-ms N]] [--rated]
                       [--expires SECONDS] [clock options]

It prints the challenge's id, a line for each answer, then the outcome: the game and each
account's seat (exit 0), or who declined, or that it expired (exit 1). With ``--seat`` the
challenger plays that seat; ``--play`` then plays it with a bot (``--strategy``) to the end.
The outcome comes from the account's stream (AccountService.WatchAccount), resumed after a
dropped connection.
"""

from __future__ import annotations

import sys
import time

import click
import grpc

from boneyard.api.v1 import challenges_pb2
from boneyard.bots import strategy, strategy_names
from boneyard.clients.api import Client
from boneyard.clients.bot import RETRY_CODES, Bot
from boneyard.clients.cli_common import (
    guard,
    key_option,
    move_ms_option,
    option_option,
    parse_options,
    parse_time_control,
    server_option,
    time_control_options,
)
from boneyard.clients.describe import final_score_text
from boneyard.clients.reach import connect

__all__ = ["CHALLENGE_COMMANDS", "challenge"]

_OVER = {
    challenges_pb2.CHALLENGE_STATUS_ACCEPTED,
    challenges_pb2.CHALLENGE_STATUS_DECLINED,
    challenges_pb2.CHALLENGE_STATUS_EXPIRED,
}
_PATIENCE = 60.0


def _invitation(text: str) -> tuple[str, int | None]:
    name, at, seat = text.rpartition("@")
    if not at:
        return text, None
    if not seat.isdigit() or not name:
        raise click.BadParameter(f"{text!r}: write NAME or NAME@SEAT", param_hint="NAME")
    return name, int(seat)


@click.command()
@click.argument("names", nargs=-1, required=True, metavar="NAME[@SEAT]...")
@server_option
@key_option(help="The challenger's API key (env BONEYARD_KEY).")
@click.option("--preset", default="texas42", show_default=True, help="The game's preset.")
@option_option
@time_control_options
@click.option("--seat", type=click.IntRange(min=0), help="The challenger plays this seat.")
@click.option("--play", is_flag=True, help="With --seat: play the seat with a bot once accepted.")
@click.option("--strategy", "strategy_name", default="heuristic", show_default=True,
              help=f"The bot of --play: {', '.join(strategy_names())} (expert: "
              "experimental, the sampler reading the auction).")
@move_ms_option
@click.option("--rated", is_flag=True, help="The game counts for ratings (every seat filled).")
@click.option(
    "--expires",
    type=click.IntRange(min=1, max=86400),
    default=600,
    show_default=True,
    help="Seconds the challenged accounts have to answer.",
)
@guard
def challenge(
    names: tuple[str, ...],
    server: str,
    key: str,
    preset: str,
    options: tuple[str, ...],
    per_move_ms: int | None,
    bank_ms: int | None,
    policy: str | None,
    seat: int | None,
    play: bool,
    strategy_name: str,
    move_ms: int | None,
    rated: bool,
    expires: int,
) -> None:
    """Challenge accounts to a game; wait for their answers."""
    if play and seat is None:
        raise click.UsageError("--play needs --seat (the challenger's seat)")
    if strategy_name not in strategy_names():
        raise click.BadParameter(f"one of {', '.join(strategy_names())}", param_hint="--strategy")
    if move_ms is not None and not play:
        raise click.UsageError("--move-ms is the budget of the bot of --play")
    invited = dict(_invitation(n) for n in names)
    clock = parse_time_control(per_move_ms, bank_ms, policy)
    with connect(server) as client:
        made = client.challenge(
            key,
            invited,
            preset,
            parse_options(options),
            time_control=clock,
            challenger_seat=seat,
            rated=rated,
            expires_in_seconds=expires,
        )
        print(f"challenge {made.challenge_id}", flush=True)
        outcome = _wait(client, key, made.challenge_id)
        if outcome.status != challenges_pb2.CHALLENGE_STATUS_ACCEPTED:
            sys.exit(1)
        if play:
            assert seat is not None
            view = Bot(client, outcome.game_id, key, strategy(strategy_name, 0, move_ms)).run()
            print(f"game {outcome.game_id} over: {final_score_text(view)}", flush=True)


def _wait(client: Client, key: str, challenge_id: str) -> challenges_pb2.Challenge:
    """Follow the account's events until the challenge is over; print each answer."""
    after = 0
    down_since: float | None = None
    while True:
        call = client.watch_account(key, after)
        try:
            for message in call:
                down_since = None
                after = message.event.sequence
                if message.event.WhichOneof("kind") != "challenge_answered":
                    continue
                answered = message.event.challenge_answered
                if answered.challenge.challenge_id != challenge_id:
                    continue
                state = answered.challenge
                if answered.outcome == challenges_pb2.CHALLENGE_OUTCOME_ACCEPTED:
                    print(f"accepted by {answered.account}", flush=True)
                if state.status == challenges_pb2.CHALLENGE_STATUS_ACCEPTED:
                    seats = ", ".join(f"{p.account} seat {p.seat}" for p in state.participants)
                    print(f"game {state.game_id}: {seats}", flush=True)
                elif state.status == challenges_pb2.CHALLENGE_STATUS_DECLINED:
                    print(f"declined by {state.declined_by}", flush=True)
                elif state.status == challenges_pb2.CHALLENGE_STATUS_EXPIRED:
                    print("expired: not every account accepted in time", flush=True)
                if state.status in _OVER:
                    return state
        except grpc.RpcError as error:
            if error.code() not in RETRY_CODES:
                raise
            down_since = down_since or time.monotonic()
            if time.monotonic() - down_since > _PATIENCE:
                raise
            time.sleep(0.5)
        finally:
            call.cancel()


CHALLENGE_COMMANDS = [challenge]
