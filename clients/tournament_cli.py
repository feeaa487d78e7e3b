"""Tournaments from the command line: make one, run it with a progress bar, read its standings.

    boneyard tournament create --name NAME --game PRESET [--option NAME=VALUE ...]
                               --entrant NAME ... [--format round_robin|swiss]
                               [--deals N] [--rounds N] [--duplicate/--no-duplicate]
                               [--max-games-per-entrant N]
                               [--per-move-ms N [--bank-ms N] [--policy auto_play|forfeit]]
                               --key KEY
    boneyard tournament run ID --key KEY [--detach]
    boneyard tournament show ID
    boneyard tournament standings ID [--games]
    boneyard tournament list

A Swiss tournament (``--format swiss --rounds N``, Texas 42) pairs its entrants round by round
by score, each pairing playing ``--deals`` deals (1 unless given) twice with the seats
swapped; ``show`` prints its rounds, pairings and byes and its standings with their
tie-breaks.

The server plays a tournament by itself once it is started: it makes each game and reserves
its seats for the entrants, whose bots (``boneyard bot --key KEY``) play them. ``run`` starts it
and follows it until it is over (through server restarts), then prints the standings; Ctrl-C
stops following, not the tournament.

Every command takes ``--server ADDR`` (env BONEYARD_SERVER); ``--key`` also comes from env
BONEYARD_KEY (an account's API key, made by ``boneyard-server admin create-bot NAME``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import click
import grpc
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import competition_pb2, game_pb2, rules_pb2
from boneyard.clients.api import TIMEOUT_POLICIES, Client
from boneyard.clients.bot import RETRY_CODES
from boneyard.clients.cli_common import (
    console,
    guard,
    key_option,
    parse_options,
    parse_time_control,
    server_option,
    time_control_options,
)
from boneyard.clients.describe import side_text
from boneyard.clients.reach import connect

__all__ = ["MAX_GAMES_PER_ENTRANT", "MAX_ROUNDS", "TOURNAMENT_COMMANDS", "print_standings"]

MAX_ROUNDS = 32
"""The server's bound of ``--rounds`` (CreateTournamentRequest's)."""

MAX_GAMES_PER_ENTRANT = 64
"""The server's bound of ``--max-games-per-entrant`` (CreateTournamentRequest's): checked here
first, so that a mistyped number is a usage error before anything is sent."""

POLL_SECONDS = 0.5
"""How often ``run`` asks the server where the tournament is."""

_OVER = (competition_pb2.TOURNAMENT_STATUS_FINISHED, competition_pb2.TOURNAMENT_STATUS_CANCELLED)

def _wide() -> Console:
    """The console; piped, one that prints whole lines instead of wrapping at 80 columns."""
    return console if console.is_terminal else Console(highlight=False, width=1000)


def _status(status: competition_pb2.TournamentStatus.ValueType) -> str:
    return competition_pb2.TournamentStatus.Name(status).removeprefix("TOURNAMENT_STATUS_").lower()


def _game_status(status: game_pb2.GameStatus.ValueType) -> str:
    if not status:
        return "-"
    return game_pb2.GameStatus.Name(status).removeprefix("GAME_STATUS_").lower()


def _clock_text(tc: game_pb2.TimeControl) -> str:
    if not tc.per_move_ms:
        return "no clock"
    policy = "forfeit" if tc.policy == TIMEOUT_POLICIES["forfeit"] else "auto_play"
    bank = f" + {tc.bank_ms} ms bank" if tc.bank_ms else ""
    return f"{tc.per_move_ms} ms a move{bank}, then {policy}"


def _at_once_text(t: competition_pb2.Tournament) -> str:
    """How many of its games an entrant plays at once ("" from a server that does not say)."""
    n = t.max_games_per_entrant
    if not n:
        return ""
    return f", up to {n} game{'s' if n != 1 else ''} an entrant at once"


def _is_swiss(t: competition_pb2.Tournament) -> bool:
    return t.format == competition_pb2.TOURNAMENT_FORMAT_SWISS


def _describe(t: competition_pb2.Tournament) -> str:
    kind = "duplicate" if t.duplicate else "not duplicate"
    clock = _clock_text(t.time_control) if t.HasField("time_control") else "no clock"
    if _is_swiss(t):
        deals = f"{t.deals} deal{'s' if t.deals != 1 else ''}"
        shape = (
            f"Swiss, {t.rounds} rounds ({t.rounds_paired} paired), {deals} a pairing, each "
            f"played twice"
        )
    else:
        shape = f"{t.deals} deals ({kind})"
    return (
        f"{t.name!r}: {t.rules.preset}, {len(t.entrants)} entrants, {shape}, "
        f"{clock}{_at_once_text(t)}; {t.games_finished}/{t.games_total} games, "
        f"{_status(t.status)}"
    )


# ---------------------------------------------------------------- standings


def _standings_table(title: str, standings: Sequence[competition_pb2.Standing]) -> Table:
    table = Table(
        Column("#", justify="right"),
        Column("name", no_wrap=True),
        Column("rating", justify="right"),
        Column("uncertainty", justify="right"),
        Column("ordinal", justify="right"),
        Column("games", justify="right"),
        Column("wins", justify="right"),
        Column("for", justify="right"),
        Column("against", justify="right"),
        title=title,
        title_justify="left",
    )
    for place, s in enumerate(standings, 1):
        table.add_row(
            str(place),
            s.name,
            f"{s.rating:.2f}",
            f"{s.uncertainty:.2f}",
            f"{s.ordinal:.2f}",
            str(s.games),
            str(s.wins),
            str(s.score_for),
            str(s.score_against),
        )
    return table


def _points_text(points: float) -> str:
    return f"{points:g}" if points != int(points) else str(int(points))


def _swiss_rounds_table(rounds: Sequence[competition_pb2.SwissRound]) -> Table:
    """Each round's pairings (marks once over) and its bye."""
    table = Table(
        Column("round", justify="right"),
        Column("first", no_wrap=True),
        Column("second", no_wrap=True),
        Column("marks", justify="center"),
        "result",
        title="rounds",
        title_justify="left",
    )
    for r in rounds:
        for p in r.pairings:
            if not p.over:
                marks, result = "", "playing"
            else:
                marks = f"{p.first_marks}-{p.second_marks}"
                result = (
                    f"{p.first} won"
                    if p.first_marks > p.second_marks
                    else f"{p.second} won"
                    if p.second_marks > p.first_marks
                    else "drawn"
                )
            table.add_row(str(r.round), p.first, p.second, marks, result)
        if r.bye:
            table.add_row(str(r.round), r.bye, "(bye)", "", "bye: scores as a win")
    return table


def _swiss_standings_table(standings: Sequence[competition_pb2.SwissStanding]) -> Table:
    table = Table(
        Column("#", justify="right"),
        Column("name", no_wrap=True),
        Column("score", justify="right"),
        Column("buchholz", justify="right"),
        Column("marks +/-", justify="right"),
        Column("for", justify="right"),
        Column("against", justify="right"),
        Column("W-D-L", justify="center"),
        Column("byes", justify="right"),
        title="standings (score, then Buchholz, then marks difference, then name)",
        title_justify="left",
    )
    for place, s in enumerate(standings, 1):
        table.add_row(
            str(place),
            s.name,
            _points_text(s.score),
            _points_text(s.buchholz),
            f"{s.marks_for - s.marks_against:+d}",
            str(s.marks_for),
            str(s.marks_against),
            f"{s.wins}-{s.draws}-{s.losses}",
            str(s.byes),
        )
    return table


def _teams(rules: rules_pb2.Ruleset) -> tuple[tuple[int, ...], ...]:
    """The seats of each team at the tournament's tables (none known for rules this client's
    engine cannot read: its winners are then named by team)."""
    try:
        return codec.rules_from_proto(rules).teams
    except (codec.MalformedMessage, engine.RulesetError):
        return ()


def _winner_text(team: int, teams: Sequence[Sequence[int]]) -> str:
    return side_text(team, teams[team]) if team < len(teams) else f"team {team}"


def _games_table(
    games: Sequence[competition_pb2.TournamentGame], teams: Sequence[Sequence[int]] = ()
) -> Table:
    table = Table(
        Column("#", justify="right"),
        *(["round"] if any(g.round for g in games) else []),
        "deal",
        "rotation",
        "seats",
        Column("game", no_wrap=True, min_width=36),
        "status",
        "scores",
        "winner",
        title="games",
        title_justify="left",
    )
    for g in games:
        table.add_row(
            str(g.number),
            *([str(g.round)] if any(g.round for g in games) else []),
            str(g.deal),
            str(g.rotation),
            ", ".join(g.seats),
            g.game_id or "-",
            _game_status(g.status),
            " ".join(map(str, g.scores)),
            _winner_text(g.winner, teams) if g.HasField("winner") else "",
        )
    return table


def print_standings(
    response: competition_pb2.GetTournamentResponse,
    *,
    games: bool = False,
    rounds: bool = False,
    out: Console | None = None,
) -> None:
    """The tournament's line, optionally its rounds (Swiss) and its games, and its standings
    tables."""
    out = out or _wide()
    t = response.tournament
    out.print(f"tournament {t.tournament_id}: {_describe(t)}")
    if rounds and _is_swiss(t):
        if response.rounds:
            out.print(_swiss_rounds_table(response.rounds))
        else:
            out.print("no round paired yet")
    if games and response.games:
        out.print(_games_table(response.games, _teams(t.rules)))
    elif games:
        out.print("no games made yet")
    if _is_swiss(t):
        out.print(_swiss_standings_table(response.swiss_standings))
        return
    out.print(_standings_table("individuals", response.individuals))
    if response.partnerships:
        out.print(_standings_table("partnerships", response.partnerships))


# ---------------------------------------------------------------- commands


@click.group()
def tournament() -> None:
    """Make, run and follow tournaments of bots."""


@tournament.command()
@server_option
@click.option("--name", required=True, help="The tournament's name.")
@click.option("--game", "preset", required=True, metavar="PRESET", help="The preset of its games.")
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="NAME=VALUE",
    help="A ruleset option, e.g. --option marks_to_win=1 (repeatable). Unless set, "
    "hand_limit is 1: each deal is a game of its own.",
)
@click.option(
    "--entrant",
    "entrants",
    multiple=True,
    required=True,
    metavar="NAME",
    help="An entrant's account name (repeatable; at least a table's players).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["round_robin", "swiss"]),
    default="round_robin",
    show_default=True,
    help="round_robin: every seating of the entrants in turn, deal after deal. swiss (Texas "
    "42): rounds paired by score, each pairing a duplicate mini-match of partnerships.",
)
@click.option(
    "--deals",
    type=click.IntRange(min=1),
    default=None,
    help="The number of deals (round_robin: required); swiss: the deals each pairing plays "
    "in a round, each twice (default 1).",
)
@click.option(
    "--rounds",
    type=click.IntRange(1, MAX_ROUNDS),
    default=None,
    metavar="N",
    help=f"swiss: the number of rounds (1..{MAX_ROUNDS}; required).",
)
@click.option(
    "--duplicate/--no-duplicate",
    default=True,
    show_default=True,
    help="Play every deal again with the hands rotated among the teams.",
)
@click.option(
    "--max-games-per-entrant",
    type=click.IntRange(1, MAX_GAMES_PER_ENTRANT),
    default=None,
    metavar="N",
    help=f"The most unfinished games of the tournament an entrant may be in at once "
    f"(1..{MAX_GAMES_PER_ENTRANT}; default: the server's, 8): its bot plays that many at once "
    "(`boneyard bot --concurrency N`). 1: one deal at a time.",
)
@time_control_options
@key_option(help="The organiser's API key (env BONEYARD_KEY).")
@guard
def create(
    server: str,
    name: str,
    preset: str,
    options: tuple[str, ...],
    entrants: tuple[str, ...],
    format_: str,
    deals: int | None,
    rounds: int | None,
    duplicate: bool,
    max_games_per_entrant: int | None,
    per_move_ms: int | None,
    bank_ms: int | None,
    policy: str | None,
    key: str,
) -> None:
    """Make a tournament (not started: see `boneyard tournament run`)."""
    if format_ == "swiss" and rounds is None:
        raise click.UsageError("a Swiss tournament needs --rounds N")
    if format_ != "swiss" and rounds is not None:
        raise click.UsageError("--rounds is for --format swiss")
    if format_ != "swiss" and deals is None:
        raise click.UsageError("a round robin needs --deals N")
    clock = parse_time_control(per_move_ms, bank_ms, policy)
    with connect(server) as client:
        made = client.create_tournament(
            key,
            name,
            preset,
            entrants,
            deals or 1,
            options=parse_options(options),
            duplicate=duplicate,
            time_control=clock,
            max_games_per_entrant=max_games_per_entrant or 0,
            swiss_rounds=rounds or 0,
        )
    print(f"tournament {made.tournament_id}", flush=True)
    print(f"{made.games_total} games: {_describe(made)}", flush=True)


@tournament.command()
@server_option
@click.argument("tournament_id")
@key_option(help="An account's API key, e.g. the organiser's (env BONEYARD_KEY).")
@click.option("--detach", is_flag=True, help="Start it and return; do not follow it.")
@guard
def run(server: str, tournament_id: str, key: str, detach: bool) -> None:
    """Start (or resume) a tournament and follow it to the end, then print the standings."""
    with Client(server) as client:
        started = _retrying(lambda: client.start_tournament(key, tournament_id, timeout=30))
        print(f"tournament {started.tournament_id}: {_describe(started)}", flush=True)
        if detach:
            print(f"follow it with: boneyard tournament run {tournament_id}", flush=True)
            return
        try:
            final = _follow(client, tournament_id, started)
        except KeyboardInterrupt:
            console.print(
                "stopped following; the tournament goes on at the server "
                f"(boneyard tournament standings {tournament_id})"
            )
            sys.exit(130)
        print_standings(final)


def _retrying(call: Callable[[], Any], patience: float = 120.0) -> Any:
    """``call()``, again while the server is unavailable (restarting), for up to ``patience``
    seconds. (The channel's retry policy retries each call a few times over a few seconds;
    a tournament run waits out a restart of minutes, and says so.)"""
    deadline = time.monotonic() + patience
    warned = False
    while True:
        try:
            return call()
        except grpc.RpcError as error:
            code = error.code()
            if code not in RETRY_CODES or time.monotonic() > deadline:
                raise
            if not warned:
                console.print(f"[yellow]server unavailable ({code.name}); retrying[/yellow]")
                warned = True
            time.sleep(POLL_SECONDS)


def _follow(
    client: Client, tournament_id: str, started: competition_pb2.Tournament
) -> competition_pb2.GetTournamentResponse:
    """Poll GetTournament with a progress bar until the tournament is over; an unavailable
    server (restarting) is shown and waited for."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    title = started.name or tournament_id
    with progress:
        task = progress.add_task(title, total=started.games_total, completed=started.games_finished)
        down_since: float | None = None
        while True:
            try:
                response = client.tournament(tournament_id, timeout=10, basic=True)
            except grpc.RpcError as error:
                code = error.code()
                if code not in RETRY_CODES:
                    raise
                if down_since is None:
                    down_since = time.monotonic()
                    progress.console.print(
                        f"[yellow]server unavailable ({code.name}); still polling[/yellow]"
                    )
                waited = time.monotonic() - down_since
                progress.update(
                    task,
                    description=f"{title} [yellow](server unavailable {waited:.0f} s)[/yellow]",
                )
                time.sleep(POLL_SECONDS)
                continue
            if down_since is not None:
                progress.console.print("server back; following the tournament again")
                down_since = None
            t = response.tournament
            progress.update(
                task, description=title, total=t.games_total, completed=t.games_finished
            )
            if t.status in _OVER:
                return _retrying(lambda: client.tournament(tournament_id, timeout=60))
            time.sleep(POLL_SECONDS)


@tournament.command()
@server_option
@click.argument("tournament_id")
@guard
def show(server: str, tournament_id: str) -> None:
    """A tournament whole: its rounds, pairings and byes (Swiss), its games and its
    standings with their tie-breaks."""
    with connect(server) as client:
        print_standings(client.tournament(tournament_id), games=True, rounds=True)


@tournament.command()
@server_option
@click.argument("tournament_id")
@click.option("--games", "show_games", is_flag=True, help="Also list the tournament's games.")
@guard
def standings(server: str, tournament_id: str, show_games: bool) -> None:
    """A tournament's standings: individuals and partnerships (Swiss: its entrants, with their
    tie-breaks)."""
    with connect(server) as client:
        print_standings(client.tournament(tournament_id), games=show_games)


@tournament.command()
@server_option
@click.argument("tournament_id")
@key_option(help="The organiser's API key (env BONEYARD_KEY).")
@guard
def cancel(server: str, tournament_id: str, key: str) -> None:
    """Make no more games of a tournament; the games being played are played to their end."""
    with connect(server) as client:
        cancelled = client.cancel_tournament(key, tournament_id, timeout=30)
    print(f"tournament {cancelled.tournament_id}: {_describe(cancelled)}", flush=True)


@tournament.command("list")
@server_option
@guard
def list_(server: str) -> None:
    """Every tournament, newest first."""
    with connect(server) as client:
        found = client.tournaments()
    if not found:
        console.print("no tournaments yet: `boneyard tournament create` makes one")
        return
    table = Table(
        Column("tournament", no_wrap=True, min_width=36),
        "name",
        "game",
        "entrants",
        "deals",
        "at once",
        "status",
        "games",
        "created",
    )
    for t in found:
        created = (
            t.create_time.ToDatetime().isoformat(timespec="seconds")
            if t.HasField("create_time")
            else ""
        )
        table.add_row(
            t.tournament_id,
            t.name,
            t.rules.preset,
            str(len(t.entrants)),
            f"{t.deals}{' dup' if t.duplicate else ''}"
            + (f", swiss {t.rounds_paired}/{t.rounds} rounds" if _is_swiss(t) else ""),
            str(t.max_games_per_entrant or ""),
            _status(t.status),
            f"{t.games_finished}/{t.games_total}",
            created,
        )
    _wide().print(table)


TOURNAMENT_COMMANDS: list[click.Command] = [tournament]
