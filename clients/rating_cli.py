"""``boneyard leaderboard`` and ``boneyard rating NAME``: the lasting ratings (RatingService).

    boneyard leaderboard [--game texas42|moon] [--limit N]   best ordinal first
    boneyard rating NAME [--history N]                      one account, per game type
"""

from __future__ import annotations

from datetime import UTC

import click
from rich.console import Console
from rich.table import Column, Table

from boneyard.api.v1 import ratings_pb2, rules_pb2
from boneyard.clients.cli_common import console, guard, server_option
from boneyard.clients.reach import connect

__all__ = ["RATING_COMMANDS"]

_GAME_TYPES = {"texas42": rules_pb2.FAMILY_TEXAS42, "moon": rules_pb2.FAMILY_MOON}
_NAMES = {family: name for name, family in _GAME_TYPES.items()}
_PAGE = 200
"""The server's largest page: a longer leaderboard is fetched page by page."""


def _out() -> Console:
    """The console; piped, one that prints whole lines instead of wrapping at 80 columns."""
    return console if console.is_terminal else Console(highlight=False, width=1000)


def _games(rating: ratings_pb2.Rating) -> str:
    return f"{rating.games} (provisional)" if rating.provisional else str(rating.games)


@click.command()
@server_option
@click.option(
    "--game", "game_type", type=click.Choice(sorted(_GAME_TYPES)), default="texas42",
    show_default=True, help="The game type (every variant of it shares one pool).",
)
@click.option(
    "--limit", type=click.IntRange(min=1), default=50, show_default=True,
    help="Show the best this many.",
)
@guard
def leaderboard(server: str, game_type: str, limit: int) -> None:
    """The lasting ratings of one game type, best ordinal (mu - 3 sigma) first."""
    entries: list[ratings_pb2.LeaderboardEntry] = []
    with connect(server) as client:
        token = ""
        while len(entries) < limit:
            page = client.leaderboard(_GAME_TYPES[game_type], min(_PAGE, limit - len(entries)), token)
            entries += page.entries
            token = page.next_page_token
            if not token:
                break
    table = Table(
        Column("#", justify="right"),
        Column("name", no_wrap=True),
        Column("ordinal", justify="right"),
        Column("mu", justify="right"),
        Column("sigma", justify="right"),
        Column("games", justify="right"),
        title=f"{game_type} leaderboard",
        title_justify="left",
    )
    for entry in entries:
        r = entry.rating
        table.add_row(
            str(entry.rank), r.account_name, f"{r.ordinal:.2f}", f"{r.mu:.2f}",
            f"{r.sigma:.2f}", _games(r),
        )
    out = _out()
    if not entries:
        out.print(f"no ratings: no rated {game_type} game has finished yet")
        return
    out.print(table)


@click.command()
@server_option
@click.argument("name")
@click.option(
    "--history", type=click.IntRange(min=1, max=200), default=10, show_default=True,
    help="The last this many rated games per game type.",
)
@guard
def rating(server: str, name: str, history: int) -> None:
    """An account's lasting ratings, per game type, and its last rated games."""
    with connect(server) as client:
        answer = client.rating(name, history)
    out = _out()
    if not answer.ratings:
        out.print(f"{answer.account_name} has no rating yet: no rated game of theirs has finished")
        return
    for typed in answer.ratings:
        r = typed.rating
        out.print(
            f"[bold]{_NAMES.get(r.game_type, '?')}[/bold]: ordinal {r.ordinal:.2f} "
            f"(mu {r.mu:.2f}, sigma {r.sigma:.2f}), {_games(r)} games"
        )
        table = Table(
            Column("rated", no_wrap=True),
            Column("game", no_wrap=True),
            Column("mu", justify="right"),
            Column("change", justify="right"),
            title_justify="left",
        )
        for change in typed.history:
            when = change.rate_time.ToDatetime(tzinfo=UTC).isoformat(timespec="seconds")
            delta = change.mu_after - change.mu_before
            table.add_row(when, change.game_id, f"{change.mu_after:.2f}", f"{delta:+.2f}")
        out.print(table)


RATING_COMMANDS = [leaderboard, rating]
