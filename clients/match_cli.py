"""Matches from the command line: "is my bot stronger?", answered by the server on duplicate
deals.

    boneyard match create A B --key KEY [--game PRESET] [--option NAME=VALUE ...]
                          (--deals N | --sprt [--m0 X] [--m1 Y] [--alpha P] [--beta P]
                                              [--max-deals N])
                          [--points] [--in-flight N] [clock options] [--follow]
    boneyard match show ID [--follow] [--deals]
    boneyard match list [--limit N]
    boneyard match cancel ID --key KEY

A match starts when it is made: the server makes each deal's two games and reserves their
seats for the entrants, whose bots (``boneyard bot --key KEY``) play them. ``show --follow``
redraws the match as its deals are counted, the SPRT's log-likelihood ratio between its
bounds, until the match is over (through server restarts); Ctrl-C stops following, not the
match.

Every command takes ``--server ADDR`` (env BONEYARD_SERVER); ``--key`` also comes from env
BONEYARD_KEY (a player's account: the organiser).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TypeVar

import click
import grpc
from rich.console import Console
from rich.live import Live
from rich.table import Column, Table
from rich.text import Text

from boneyard.api.v1 import game_pb2, matches_pb2
from boneyard.clients.api import Client
from boneyard.clients.bot import RETRY_CODES
from boneyard.clients.cli_common import (
    console,
    guard,
    key_option,
    option_option,
    parse_options,
    parse_time_control,
    server_option,
    time_control_options,
)
from boneyard.clients.reach import connect

__all__ = ["MATCH_COMMANDS", "llr_bar", "match_lines"]

POLL_SECONDS = 0.5
"""How often ``show --follow`` asks the server where the match is."""
PATIENCE = 120.0
"""Seconds ``--follow`` waits for a server that went away (a restart) before giving up."""
_OVER = (matches_pb2.MATCH_STATUS_FINISHED, matches_pb2.MATCH_STATUS_CANCELLED)
_VERDICT = {
    matches_pb2.MATCH_VERDICT_UNDECIDED: "undecided",
    matches_pb2.MATCH_VERDICT_A_STRONGER: "{a} is stronger than {b}",
    matches_pb2.MATCH_VERDICT_A_NOT_STRONGER: "{a} is not stronger than {b} by {m1:g}",
}

_T = TypeVar("_T")


def _status(status: matches_pb2.MatchStatus.ValueType) -> str:
    return matches_pb2.MatchStatus.Name(status).removeprefix("MATCH_STATUS_").lower()


def _unit(m: matches_pb2.Match) -> str:
    if m.scoring == matches_pb2.MATCH_SCORING_POINTS or m.rules.points_to_win:
        return "points"
    return "marks"


def llr_bar(llr: float, lower: float, upper: float, width: int = 31) -> str:
    """The LLR between its bounds, as a line: ``-2.94 [·······|···●···] +2.94``; the mark sits
    at a bound once the LLR reaches it (``◀`` / ``▶`` beyond)."""
    cells = ["·"] * width
    span = upper - lower
    if span > 0 and lower < 0 < upper:
        cells[round(-lower / span * (width - 1))] = "|"  # where the LLR is 0
    where = (llr - lower) / span if span > 0 else 0.5
    if where < 0:
        cells[0] = "◀"
    elif where > 1:
        cells[-1] = "▶"
    else:
        cells[round(where * (width - 1))] = "●"
    return f"{lower:+.2f} [{''.join(cells)}] {upper:+.2f}"


def match_lines(m: matches_pb2.Match) -> list[str]:
    """The match as lines for people: who, how long, where, and its figures."""
    unit = _unit(m)
    length = (
        f"{m.deals} deals"
        if not m.HasField("sprt")
        else (
            f"SPRT H0 {m.sprt.m0:g} vs H1 {m.sprt.m1:g} {unit}/deal, alpha {m.sprt.alpha:g}, "
            f"beta {m.sprt.beta:g}, at most {m.sprt.max_deals} deals"
        )
    )
    lines = [
        (
            f"match {m.match_id}: {m.entrant_a} (A) vs {m.entrant_b} (B), {m.rules.preset}, "
            f"{length}; {_status(m.status)}"
        ),
        (
            f"deals: {m.deals_finished} counted, {m.deals_started} started "
            f"(at most {m.max_games_in_flight} games at once)"
        ),
    ]
    if m.deals_finished:
        lines += [
            (
                f"{unit}: A {m.total_a}, B {m.total_b}; A minus B a deal {m.mean:+.3f}, "
                f"95% interval [{m.mean_interval.low:+.3f}, {m.mean_interval.high:+.3f}]"
            ),
            (
                f"deals A won {m.wins}, drawn {m.draws}, lost {m.losses}: win rate "
                f"{m.win_rate:.1%}, 95% Wilson interval [{m.win_rate_interval.low:.1%}, "
                f"{m.win_rate_interval.high:.1%}]"
            ),
        ]
    if m.HasField("sprt"):
        lines.append(f"LLR {m.llr:+.3f}  {llr_bar(m.llr, m.llr_lower_bound, m.llr_upper_bound)}")
        verdict = _VERDICT.get(m.verdict, "undecided").format(
            a=m.entrant_a, b=m.entrant_b, m1=m.sprt.m1 - m.sprt.m0
        )
        if m.verdict != matches_pb2.MATCH_VERDICT_UNDECIDED:
            verdict += f" (after {m.deals_at_verdict} deals, LLR {m.llr_at_verdict:+.3f})"
        lines.append(f"verdict: {verdict}")
    return lines


def _retrying(call: Callable[[], _T]) -> _T:
    """``call()``, again while the server is unavailable (restarting), for ``PATIENCE`` s."""
    deadline = time.monotonic() + PATIENCE
    warned = False
    while True:
        try:
            return call()
        except grpc.RpcError as error:
            if error.code() not in RETRY_CODES or time.monotonic() > deadline:
                raise
            if not warned:
                console.print(f"[yellow]server unavailable ({error.code().name}); retrying[/]")
                warned = True
            time.sleep(POLL_SECONDS)


def _follow(client: Client, match_id: str) -> matches_pb2.Match:
    """Redraw the match until it is over (piped: a line each time deals are counted, then the
    match as it ended)."""
    current = _retrying(lambda: client.match(match_id, timeout=10))
    if not console.is_terminal:
        told = -1
        while current.status not in _OVER:
            if current.deals_finished != told:
                told = current.deals_finished
                print(_progress(current), flush=True)
            time.sleep(POLL_SECONDS)
            current = _retrying(lambda: client.match(match_id, timeout=10))
        for line in match_lines(current):
            print(line, flush=True)
        return current
    with Live(Text("\n".join(match_lines(current))), console=console, auto_refresh=False) as live:
        while current.status not in _OVER:
            time.sleep(POLL_SECONDS)
            current = _retrying(lambda: client.match(match_id, timeout=10))
            live.update(Text("\n".join(match_lines(current))), refresh=True)
    return current


def _progress(m: matches_pb2.Match) -> str:
    """One line of a match being played."""
    line = f"{m.deals_finished} deals counted, {m.deals_started} started"
    if m.deals_finished:
        line += f"; A minus B a deal {m.mean:+.3f} {_unit(m)}"
    if m.HasField("sprt"):
        line += f"; LLR {m.llr:+.3f} in [{m.llr_lower_bound:+.2f}, {m.llr_upper_bound:+.2f}]"
    return line


def _deals_table(client: Client, match_id: str) -> Table:
    table = Table(
        Column("deal", justify="right"),
        Column("games", no_wrap=True),
        "counted",
        Column("A", justify="right"),
        Column("B", justify="right"),
        title="deals",
        title_justify="left",
    )
    token = ""
    while True:
        page = client.match_deals(match_id, 200, token, timeout=30)
        for d in page.deals:
            statuses = ", ".join(
                game_pb2.GameStatus.Name(s).removeprefix("GAME_STATUS_").lower() for s in d.statuses
            )
            table.add_row(
                str(d.deal),
                f"{' '.join(d.game_ids)} ({statuses})",
                "yes" if d.counted else "no",
                str(d.score_a) if d.counted else "",
                str(d.score_b) if d.counted else "",
            )
        token = page.next_page_token
        if not token:
            return table


def _wide() -> Console:
    return console if console.is_terminal else Console(highlight=False, width=1000)


# ---------------------------------------------------------------- commands


@click.group()
def match() -> None:
    """Matches between two accounts' bots on duplicate deals: is A stronger than B?"""


@match.command()
@server_option
@click.argument("entrant_a", metavar="A")
@click.argument("entrant_b", metavar="B")
@click.option("--game", "preset", default="texas42", show_default=True, metavar="PRESET")
@option_option
@click.option("--deals", type=click.IntRange(1, 10_000), help="Play this many deals.")
@click.option("--sprt", is_flag=True, help="Play until the SPRT decides (see --m0 ...).")
@click.option("--m0", type=float, default=0.0, show_default=True, help="H0: A's edge a deal.")
@click.option("--m1", type=float, default=0.1, show_default=True, help="H1: A's edge a deal.")
@click.option(
    "--alpha", type=click.FloatRange(0, 0.5, min_open=True), default=0.05, show_default=True
)
@click.option(
    "--beta", type=click.FloatRange(0, 0.5, min_open=True), default=0.05, show_default=True
)
@click.option(
    "--max-deals",
    type=click.IntRange(1, 10_000),
    default=10_000,
    show_default=True,
    help="With --sprt: the most deals, if it never decides.",
)
@click.option("--points", is_flag=True, help="Count the points tricks took, not marks.")
@click.option(
    "--in-flight",
    type=click.IntRange(2, 64),
    default=8,
    show_default=True,
    help="Games in play at once, at most.",
)
@time_control_options
@key_option(help="The organiser's API key, a player's account (env BONEYARD_KEY).")
@click.option(
    "--follow", is_flag=True, help="Then follow it to its end (as `match show --follow`)."
)
@guard
def create(
    server: str,
    entrant_a: str,
    entrant_b: str,
    preset: str,
    options: tuple[str, ...],
    deals: int | None,
    sprt: bool,
    m0: float,
    m1: float,
    alpha: float,
    beta: float,
    max_deals: int,
    points: bool,
    in_flight: int,
    per_move_ms: int | None,
    bank_ms: int | None,
    policy: str | None,
    key: str,
    follow: bool,
) -> None:
    """Make a match of A against B and start it; its bots play it (`boneyard bot --key`)."""
    if (deals is None) == (not sprt):
        raise click.UsageError("give --deals N or --sprt (one of them)")
    clock = parse_time_control(per_move_ms, bank_ms, policy)
    with connect(server) as client:
        made = client.create_match(
            key,
            entrant_a,
            entrant_b,
            preset,
            options=parse_options(options),
            deals=deals,
            sprt=matches_pb2.MatchSprt(m0=m0, m1=m1, alpha=alpha, beta=beta, max_deals=max_deals)
            if sprt
            else None,
            scoring=matches_pb2.MATCH_SCORING_POINTS if points else matches_pb2.MATCH_SCORING_MARKS,
            time_control=clock,
            max_games_in_flight=in_flight,
            timeout=30,
        )
    print(f"match {made.match_id}", flush=True)
    if not follow:
        for line in match_lines(made)[1:]:
            print(line, flush=True)
        print(f"follow it with: boneyard match show {made.match_id} --follow", flush=True)
        return
    _show_following(server, made.match_id)


@match.command()
@server_option
@click.argument("match_id")
@click.option("--follow", is_flag=True, help="Redraw it as deals are counted, to its end.")
@click.option("--deals", "show_deals", is_flag=True, help="Also list its deals and their games.")
@guard
def show(server: str, match_id: str, follow: bool, show_deals: bool) -> None:
    """A match and its figures: the mean a deal, the win rate, the SPRT's LLR."""
    if follow:
        final = _show_following(server, match_id)
    else:
        with connect(server) as client:
            final = client.match(match_id, timeout=30)
        for line in match_lines(final):
            print(line, flush=True)
    if show_deals:
        with connect(server) as client:
            _wide().print(_deals_table(client, match_id))


def _show_following(server: str, match_id: str) -> matches_pb2.Match:
    with Client(server) as client:
        try:
            return _follow(client, match_id)
        except KeyboardInterrupt:
            console.print(
                f"stopped following; the match goes on at the server (boneyard match show "
                f"{match_id})"
            )
            sys.exit(130)


@match.command("list")
@server_option
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@guard
def list_(server: str, limit: int) -> None:
    """Matches, newest first."""
    found: list[matches_pb2.Match] = []
    with connect(server) as client:
        token = ""
        while len(found) < limit:
            page = client.matches(min(200, limit - len(found)), token, timeout=30)
            found += page.matches
            token = page.next_page_token
            if not token:
                break
    if not found:
        console.print("no matches yet: `boneyard match create` makes one")
        return
    table = Table(
        Column("match", no_wrap=True, min_width=36),
        "A",
        "B",
        "game",
        "status",
        Column("deals", justify="right"),
        Column("A - B a deal", justify="right"),
        "verdict",
    )
    for m in found:
        verdict = ""
        if m.HasField("sprt"):
            verdict = {
                matches_pb2.MATCH_VERDICT_A_STRONGER: "A stronger",
                matches_pb2.MATCH_VERDICT_A_NOT_STRONGER: "A not stronger",
            }.get(m.verdict, f"LLR {m.llr:+.2f}")
        table.add_row(
            m.match_id,
            m.entrant_a,
            m.entrant_b,
            m.rules.preset,
            _status(m.status),
            f"{m.deals_finished}/{m.deals or m.sprt.max_deals}",
            f"{m.mean:+.3f}" if m.deals_finished else "",
            verdict,
        )
    _wide().print(table)


@match.command()
@server_option
@click.argument("match_id")
@key_option(help="The organiser's API key (env BONEYARD_KEY).")
@guard
def cancel(server: str, match_id: str, key: str) -> None:
    """Start no more deals; the deals being played are played out and counted."""
    with connect(server) as client:
        cancelled = client.cancel_match(key, match_id, timeout=30)
    for line in match_lines(cancelled):
        print(line, flush=True)


MATCH_COMMANDS: list[click.Command] = [match]
