"""What the ``boneyard`` commands share: the --server, --option, --key and clock options, and
turning a server's refusal into its message and exit 1 instead of a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import click
import grpc
from rich.console import Console
from rich.markup import escape

from boneyard.api.v1 import game_pb2
from boneyard.bots import MOVE_MS_MAX
from boneyard.clients.api import (
    DEFAULT_SERVER,
    TIMEOUT_POLICIES,
    OptionError,
    refusal,
    time_control,
)

__all__ = [
    "console",
    "fail",
    "guard",
    "key_option",
    "move_ms_option",
    "option_option",
    "parse_options",
    "parse_time_control",
    "server_option",
    "time_control_options",
]

console = Console(highlight=False)

server_option = click.option(
    "--server",
    default=DEFAULT_SERVER,
    envvar="BONEYARD_SERVER",
    show_default=True,
    help="The server's HOST:PORT (env BONEYARD_SERVER).",
)
option_option = click.option(
    "--option",
    "options",
    multiple=True,
    metavar="NAME=VALUE",
    help="A ruleset option, e.g. --option nello=true --option marks_to_win=5 (repeatable).",
)

move_ms_option = click.option(
    "--move-ms",
    type=click.IntRange(1, MOVE_MS_MAX),
    help=f"Each decision's budget, in ms of solver nodes (1..{MOVE_MS_MAX}), for the searching "
    "strategies run here: default the strategy's own (expert 1000 ms; sampler 200 ms a play "
    "and 1 s an auction decision; with --move-ms N the sampler takes N/5 ms a play and N ms an "
    "auction decision). random and heuristic, and outside strategies, ignore it.",
)
"""The budget is counted in solver nodes, not time: a bot's choices stay a function of its
view, its seed and this number, on any machine."""


def key_option(
    required: bool = True, help: str = "The account's API key (env BONEYARD_KEY)."
) -> Any:
    return click.option("--key", envvar="BONEYARD_KEY", required=required, help=help)


def time_control_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--per-move-ms``, ``--bank-ms`` and ``--policy``: a table's clock."""
    fn = click.option(
        "--policy",
        type=click.Choice(sorted(TIMEOUT_POLICIES)),
        help="Out of time: the lowest legal action is played (auto_play, the default with a "
        "clock), or the seat's team loses (forfeit).",
    )(fn)
    fn = click.option(
        "--bank-ms",
        type=click.IntRange(min=0),
        help="Each seat's bank for the whole game, in ms (with --per-move-ms).",
    )(fn)
    fn = click.option(
        "--per-move-ms",
        type=click.IntRange(min=1),
        help="A clock: the time each action may take, in ms.",
    )(fn)
    return fn


def parse_time_control(
    per_move_ms: int | None, bank_ms: int | None, policy: str | None
) -> game_pb2.TimeControl | None:
    """The clock the options ask for; ``None`` without ``--per-move-ms``."""
    if per_move_ms is None:
        if bank_ms is not None or policy is not None:
            raise click.UsageError("--bank-ms and --policy need --per-move-ms (a clock)")
        return None
    return time_control(per_move_ms, bank_ms or 0, policy or "auto_play")


def parse_options(options: Sequence[str]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for item in options:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise click.BadParameter(f"{item!r}: write NAME=VALUE", param_hint="--option")
        parsed[name.strip()] = value
    return parsed


_UNKNOWN_CREDENTIALS = {"BAD_API_KEY", "BAD_TOKEN", "API_KEY_REQUIRED", "TOKEN_REQUIRED"}
"""The reasons after which the command line tells where keys come from."""


def fail(error: grpc.RpcError) -> None:
    answer = refusal(error)
    console.print(f"[red]{answer.code.name}[/red]: {escape(answer.message)}")
    if answer.reason in _UNKNOWN_CREDENTIALS:
        console.print(
            "the server does not know this key or token; an account's API key is made on the "
            "server's machine with `boneyard-server admin create-bot NAME`"
        )
    sys.exit(1)


def guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Answer a server's refusal or absence with its message, not a traceback."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except grpc.RpcError as error:
            fail(error)
        except OptionError as error:
            raise click.BadParameter(str(error), param_hint="--option") from None

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper
