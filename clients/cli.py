"""``boneyard``: play, watch and list games, and run bots, against a Boneyard server.

    boneyard play [--game PRESET] [--option NAME=VALUE ...] [--bots N | --house-bots N]
                  [--strategy S [--move-ms N]] [--join GAME_ID | --resume GAME_ID]
    boneyard watch GAME_ID
    boneyard games [--status open|playing|finished|abandoned]
    boneyard presets
    boneyard bot --game GAME_ID --seat N [--token T] | --new PRESET [--option NAME=VALUE ...]
                 [--strategy S[,S...]] [--move-ms N]
    boneyard bot --key KEY [--seek PRESET [--option NAME=VALUE ...] [--games N]
                            [--per-move-ms N [--bank-ms N] [--policy auto_play|forfeit]]]
                           [--accept PRESET[,PRESET...]] [--concurrency N]
    boneyard challenge NAME[@SEAT] ... --key KEY [--preset P] [--option NAME=VALUE ...]
                       [--seat N] [--play [--move-ms N]] [--rated] [--expires SECONDS] [clock options]
    boneyard tournament create | run | standings | list      (clients/tournament_cli.py)
    boneyard match create | show | list | cancel             (clients/match_cli.py)

Every command takes ``--server ADDR`` (default 127.0.0.1:50051, env BONEYARD_SERVER). An
account's API key (``--key``) also comes from env BONEYARD_KEY; the operator makes accounts
with the server's own ``boneyard-server admin`` (clients speak only the API). A command whose
server does not answer within ``--connect-timeout`` (2 s) says what to do (clients/reach.py):
start one, name another, add or leave out ``--tls``, pass ``--ca``.
"""

from __future__ import annotations

import os

# gRPC's C core writes its own lines to stderr (a failed TLS handshake, at every attempt); a
# person is told what went wrong in words instead (clients/reach.py). It reads the setting
# when grpc is first imported, so before any import below; GRPC_VERBOSITY set by the caller
# wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import contextlib
import logging
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import click
import grpc
from click.core import ParameterSource
from rich.console import Console
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from boneyard.api.v1 import challenges_pb2, competition_pb2, game_pb2, rules_pb2, view_pb2
from boneyard.bots import strategy_names
from boneyard.clients import api
from boneyard.clients.api import Client, ruleset_request
from boneyard.clients.archive_cli import ARCHIVE_COMMANDS
from boneyard.clients.bot import Bot
from boneyard.clients.challenge_cli import CHALLENGE_COMMANDS
from boneyard.clients.choices import HELP_WORDS
from boneyard.clients.cli_common import (
    console,
    guard,
    move_ms_option,
    option_option,
    parse_options,
    parse_time_control,
    server_option,
    time_control_options,
)
from boneyard.clients.competitor import MAX_CONCURRENCY, Competitor, GameResult, SeekPlan
from boneyard.clients.describe import event_text, final_score_text
from boneyard.clients.match_cli import MATCH_COMMANDS
from boneyard.clients.play import TableSession, start_bots
from boneyard.clients.rating_cli import RATING_COMMANDS
from boneyard.clients.reach import connect
from boneyard.clients.render import render_view
from boneyard.clients.seat_store import KeptSeat, SeatStore
from boneyard.clients.strategies import StrategySpecError, is_builtin, load_strategy
from boneyard.clients.table import TableInfo
from boneyard.clients.tournament_cli import TOURNAMENT_COMMANDS

__all__ = ["main"]

_STATUSES = {
    "open": game_pb2.GAME_STATUS_OPEN,
    "playing": game_pb2.GAME_STATUS_PLAYING,
    "finished": game_pb2.GAME_STATUS_FINISHED,
    "abandoned": game_pb2.GAME_STATUS_ABANDONED,
}


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log what the client does.")
@click.option(
    "--tls",
    is_flag=True,
    envvar="BONEYARD_TLS",
    help="Reach the server over TLS (env BONEYARD_TLS=1). Without it, seat tokens and API "
    "keys travel in the clear.",
)
@click.option(
    "--ca",
    type=click.Path(exists=True, dir_okay=False),
    envvar="BONEYARD_CA",
    help="With --tls: the PEM file of the certificate authority (or the self-signed "
    "certificate) the server's certificate must be signed by; default the system's roots "
    "(env BONEYARD_CA).",
)
@click.option(
    "--connect-timeout",
    type=click.FloatRange(min=0.1, max=600),
    default=api.CONNECT_TIMEOUT,
    show_default=True,
    envvar="BONEYARD_CONNECT_TIMEOUT",
    metavar="SECONDS",
    help="How long a command waits for the server's first answer before saying none is there "
    "(env BONEYARD_CONNECT_TIMEOUT). `bot --key` and `tournament run` wait for a server "
    "that is restarting instead.",
)
def main(verbose: bool, tls: bool, ca: str | None, connect_timeout: float) -> None:
    """Play Texas 42 and Moon on a Boneyard server."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
    if ca is not None and not tls:
        raise click.UsageError("--ca is for --tls")
    with open(ca, "rb") if ca else contextlib.nullcontext(None) as pem:
        api.transport = api.Transport(tls, pem.read() if pem else None, connect_timeout)


# ---------------------------------------------------------------- games


@main.command()
@server_option
@click.option("--status", type=click.Choice(sorted(_STATUSES)), help="Only games with this status.")
@guard
def games(server: str, status: str | None) -> None:
    """List the server's games."""
    with connect(server) as client:
        wanted = _STATUSES[status] if status else game_pb2.GAME_STATUS_UNSPECIFIED
        found = list(client.games(status=wanted))
    if not found:
        # Not an empty table: a person reads "nothing", and what to do about it.
        console.print(f"no {status} games" if status else "no games yet: `boneyard play` starts one")
        return
    rows = [
        (
            game.game_id,
            game.name,
            game.rules.preset,
            game_pb2.GameStatus.Name(game.status).removeprefix("GAME_STATUS_").lower(),
            f"{sum(1 for s in game.seats if s.occupied)}/{len(game.seats)}",
            " ".join(map(str, game.scores)),
            str(game.version),
        )
        for game in found
    ]
    # The game id is what `watch` and `play --join` take: never cut it short.
    table = Table(
        Column("game", no_wrap=True, min_width=36),
        "name",
        "rules",
        "status",
        "seats",
        "scores",
        "version",
    )
    for row in rows:
        table.add_row(*row)
    # Piped (`boneyard games | grep ...`): whole lines, not the 80 columns rich assumes
    # when there is no terminal to ask.
    out = console if console.is_terminal else Console(highlight=False, width=1000)
    unbounded = out.options.update_width(10_000)  # (a measure is capped at the width given)
    if Measurement.get(out, unbounded, table).maximum <= out.width:
        out.print(table)
        return
    # A terminal too narrow for the table (80 columns): two lines a game, each whole, rather
    # than cells wrapped mid-word.
    for game_id, name, preset, state, seats, scores, version in rows:
        line = f"{game_id}  {preset}  {state}  {seats} seats  version {version}"
        out.print(Text(line, no_wrap=True, overflow="ellipsis"))
        out.print(Text(f"    {name or '-'} · scores {scores}", no_wrap=True, overflow="ellipsis"))


@main.command()
@server_option
@guard
def presets(server: str) -> None:
    """List the server's presets: what a game may be made from (play --game, bot --new ...)."""
    with connect(server) as client:
        table = Table(Column("preset", no_wrap=True), "game", "players", "what it plays")
        for preset in client.presets():
            game = "Moon" if preset.rules.family == rules_pb2.FAMILY_MOON else "Texas 42"
            table.add_row(preset.name, game, str(preset.rules.players), preset.description)
        out = console if console.is_terminal else Console(highlight=False, width=1000)
        out.print(table)


def _server_presets(client: Client, names: Sequence[str], flag: str) -> dict[str, rules_pb2.Preset]:
    """The server's presets by name (ListPresets); one of ``names`` that the server does not
    have is a usage error naming those it has."""
    presets = {p.name: p for p in client.presets()}
    for name in names:
        if name not in presets:
            raise click.BadParameter(
                f"no preset {name!r} on {client.address}: choose one of {', '.join(presets)}",
                param_hint=flag,
            )
    return presets


# ---------------------------------------------------------------- watch


@main.command()
@server_option
@click.argument("game_id")
@click.option("--from-version", default=0, show_default=True, help="Start after this version.")
@guard
def watch(server: str, game_id: str, from_version: int) -> None:
    """Follow a live game as a spectator."""
    with connect(server) as client:
        summary = client.game(game_id)
        last: view_pb2.SeatView | None = None
        previous = None
        for message in client.watch(game_id, None, from_version):
            line = event_text(message.event, previous)
            if line:
                console.print(f"[dim]{message.version:>5}[/dim] {line}")
            last, previous = message.view, message.event
            if message.event.WhichOneof("kind") in ("hand_scored", "game_won"):
                console.print(render_view(last, summary.name))
        if last is not None and last.phase != view_pb2.PHASE_GAME_OVER:
            console.print(render_view(last, summary.name))


# ---------------------------------------------------------------- play


def _house_seats(mine: int | None, count: int, players: int, strategy_name: str) -> dict[int, str]:
    """The seats the server's house bots take: the first ``count`` but the player's."""
    others = [s for s in range(players) if s != (mine if mine is not None else 0)]
    return dict.fromkeys(others[:count], strategy_name)


def _check_room(free: int, where: str, bots: int, house_bots: int) -> None:
    """Before anything is made: the player and the bots asked for fit the table's free seats."""
    for flag, n in (("--bots", bots), ("--house-bots", house_bots)):
        if n < 0:
            raise click.UsageError(f"{flag} {n}: a number of bots is not negative")
    if 1 + bots + house_bots > free:
        asked = " and ".join(
            f"{flag} {n}" for flag, n in (("--bots", bots), ("--house-bots", house_bots)) if n
        )
        raise click.UsageError(
            f"{asked}: {where} has {free} free seat{'s' if free != 1 else ''}, so at most "
            f"{free - 1} bot{'s' if free != 2 else ''} beside you"
        )


@main.command()
@server_option
@click.option(
    "--game",
    "preset",
    default="texas42",
    show_default=True,
    help="The preset to play (`boneyard presets` lists the server's).",
)
@option_option
@click.option("--bots", default=0, help="Fill this many other seats with bots run here.")
@click.option(
    "--house-bots",
    default=0,
    help="Have the server play this many other seats with its own bots (--strategy) instead.",
)
@click.option("--join", "join", metavar="GAME_ID", help="Join an existing game instead.")
@click.option(
    "--resume",
    metavar="GAME_ID",
    help="Go back to your seat of a game left with Ctrl-C (the token kept in the seat file).",
)
@click.option("--seat", type=int, help="The seat to take (default: the lowest free one).")
@click.option("--name", default="player", show_default=True, help="Your name at the table.")
@click.option(
    "--strategy",
    "bot_strategy",
    default="heuristic",
    show_default=True,
    help=f"The bots' strategy: {', '.join(strategy_names())} (expert: experimental, the sampler reading the auction), an "
    "installed one (entry point group boneyard.strategies), or MODULE:NAME. House bots play "
    "built-in ones only.",
)
@move_ms_option
@click.option(
    "--seats-file",
    type=click.Path(dir_okay=False),
    envvar="BONEYARD_SEATS_FILE",
    help="Where seat tokens are kept for --resume (env BONEYARD_SEATS_FILE; default "
    "$XDG_STATE_HOME/boneyard/seats.json, ~/.local/state/boneyard/seats.json).",
)
@guard
def play(
    server: str,
    preset: str,
    options: tuple[str, ...],
    bots: int,
    house_bots: int,
    join: str | None,
    resume: str | None,
    seat: int | None,
    name: str,
    bot_strategy: str,
    move_ms: int | None,
    seats_file: str | None,
) -> None:
    """Play a game in the terminal, at a table drawn to fit 80x24.

    Type a choice by its number, or as shown (30, 84, 2 marks, pass, 6-4, sixes, follow me);
    'help' or '?' lists what may be typed; 'resign' gives up the game. Ctrl-C asks whether to
    resign or to keep the seat for `boneyard play --resume GAME_ID`.
    """
    store = SeatStore(Path(seats_file) if seats_file else None)
    if sum(1 for mode in (join, resume) if mode) > 1 or (resume and (bots or house_bots)):
        raise click.UsageError("--resume goes back to a seat: no --join, --bots or --house-bots")
    if house_bots and join:
        raise click.UsageError("--house-bots makes a new game: it does not go with --join")
    _check_strategy(bot_strategy, move_ms)
    if move_ms is not None and not bots and not resume:
        raise click.UsageError(
            "--move-ms is the budget of the bots run here (--bots N); the server's house bots "
            "think with their strategy's own budget"
        )
    if house_bots and not is_builtin(bot_strategy):
        raise click.BadParameter(
            f"{bot_strategy!r}: the server's house bots play built-in strategies only "
            f"({', '.join(strategy_names())}); run an outside one here with --bots",
            param_hint="--strategy",
        )
    ctx = click.get_current_context()
    kept = store.get(resume) if resume else None
    if resume and kept is None:
        raise click.UsageError(f"no seat of game {resume} is kept in {store.path}")
    if kept is not None and ctx.get_parameter_source("server") == ParameterSource.DEFAULT:
        server = kept.server
    with connect(server) as client:
        if kept is not None and resume:
            game_id = resume
            budget = move_ms if move_ms is not None else kept.move_ms
            start_bots(client, game_id, kept.bots, kept.strategy, len(game_id), budget)
        else:
            if join:
                game_id = join
                summary = client.game(game_id)
                _check_room(sum(1 for s in summary.seats if not s.occupied), f"game {join}", bots, 0)
            else:
                # The server's preset says the table's size (the options, a players= among
                # them, are the server's to check when the game is made).
                players = _server_presets(client, [preset], "--game")[preset].rules.players
                asked = parse_options(options).get("players", "").strip()
                if asked.isdigit():
                    players = int(asked)
                _check_room(players, f"a {preset} table", bots, house_bots)
                if seat is not None and not 0 <= seat < players:
                    raise click.UsageError(f"--seat {seat}: a {preset} table has seats 0 to {players - 1}")
                house = _house_seats(seat, house_bots, players, bot_strategy)
                summary = client.create_game(
                    preset, parse_options(options), name=f"{name}'s table", house_bots=house
                )
                game_id = summary.game_id
                console.print(f"game {game_id}")
            my_seat, token = client.take_seat(game_id, name, seat)
            console.print(f"you sit in seat {my_seat}")
            kept = KeptSeat(server, my_seat, token, name, strategy=bot_strategy)
            store.put(game_id, kept)
            tokens = dict(
                client.take_seat(game_id, f"{bot_strategy} bot {i + 1}") for i in range(bots)
            )
            if tokens:
                kept = KeptSeat(server, my_seat, token, name, tokens, bot_strategy, move_ms)
                store.put(game_id, kept)
            start_bots(client, game_id, tokens, bot_strategy, len(game_id), move_ms)
        session = TableSession(
            client, console, game_id, kept, store, TableInfo.of(client.game(game_id))
        )
        try:
            session.run()
        except (KeyboardInterrupt, EOFError):
            _leave(session)


def _leave(session: TableSession) -> None:
    """Ctrl-C at the table: resign, or keep the seat and go (the game waits for it). Each line
    whole within 80 columns (a game id is 36 of them); markup off, the brackets are text."""
    console.print()
    loses = session.loss_words()
    come_back = f"come back with: boneyard play --resume {session.game_id}"
    while True:
        console.print(
            f"[r] resign: {loses} now · [k] keep your seat, and come back later", markup=False
        )
        try:
            answer = console.input("leave the table? (r/K)> ", markup=False)
        except (KeyboardInterrupt, EOFError):
            answer = "k"
        if answer.strip().lower() not in HELP_WORDS:
            break
        console.print(f"r or resign: give up the game, and {loses}")
        console.print("k or Enter: keep your seat; the game waits for you")
        console.print(f"  {come_back}")
    if answer.strip().lower() in ("r", "resign"):
        view = session.resign()
        session.draw(view)
        console.print("you resigned")
        return
    console.print("your seat is kept; the game waits for you")
    console.print(come_back)


# ---------------------------------------------------------------- bot


@main.command()
@server_option
@click.option("--game", "game_id", metavar="GAME_ID", help="Play a seat of this game.")
@click.option("--seat", type=int, help="The seat (with --game).")
@click.option("--token", help="The seat's token, if already taken (with --game).")
@click.option("--new", "new_preset", metavar="PRESET", help="Create a game and fill every seat with bots.")
@click.option(
    "--key",
    envvar="BONEYARD_KEY",
    help="An account's API key (env BONEYARD_KEY): play every seat reserved for the account "
    "(tournaments, seeks), until Ctrl-C.",
)
@click.option(
    "--seek", "seek_preset", metavar="PRESET", help="With --key: also seek tables of this preset."
)
@click.option(
    "--accept",
    "accept_presets",
    metavar="PRESET[,PRESET...]",
    help="With --key: accept the challenges of these presets made to the account (and play "
    "them); decline every other challenge.",
)
@option_option
@time_control_options
@click.option(
    "--games",
    "games_limit",
    type=click.IntRange(min=1),
    help="With --key: stop after this many games are over (and seek no more tables than that).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, MAX_CONCURRENCY),
    metavar="N",
    help=f"With --key: learn every turn of every game on one stream and decide up to N turns "
    f"at once (1..{MAX_CONCURRENCY}): as many games at once as the server makes for the account "
    "(a tournament's --max-games-per-entrant). Without it: a stream per game.",
)
@click.option("--strategy", "strategy_names_", default="heuristic", show_default=True,
              help=f"A strategy, or one per seat separated by commas: "
              f"{','.join(strategy_names())} (expert: experimental, the sampler reading the auction), an installed one, or "
              "MODULE:NAME.")
@move_ms_option
@click.option("--seed", default=0, show_default=True, help="Seed of the strategies' choices.")
@click.option("--name", default="", help="The bot's name at the table.")
@guard
def bot(
    server: str,
    game_id: str | None,
    seat: int | None,
    token: str | None,
    new_preset: str | None,
    key: str | None,
    seek_preset: str | None,
    accept_presets: str | None,
    options: tuple[str, ...],
    per_move_ms: int | None,
    bank_ms: int | None,
    policy: str | None,
    games_limit: int | None,
    concurrency: int | None,
    strategy_names_: str,
    move_ms: int | None,
    seed: int,
    name: str,
) -> None:
    """Run bots: for one game (--game, --new), or for an account (--key)."""
    ctx = click.get_current_context()
    from_env = ctx.get_parameter_source("key") == ParameterSource.ENVIRONMENT
    if key and (game_id or new_preset) and from_env:
        key = None  # BONEYARD_KEY in the environment does not turn --game/--new into --key
    if sum(1 for mode in (game_id, new_preset, key) if mode) != 1:
        raise click.UsageError("give one of --game GAME_ID --seat N, --new PRESET, or --key KEY")
    kinds = [s.strip() for s in strategy_names_.split(",") if s.strip()]
    for kind in kinds:
        _check_strategy(kind, move_ms)
    if key:
        if len(kinds) != 1:
            raise click.BadParameter("one strategy with --key", param_hint="--strategy")
        clock = parse_time_control(per_move_ms, bank_ms, policy)
        accept = [p.strip() for p in (accept_presets or "").split(",") if p.strip()]
        _bot_for_account(
            server,
            key,
            kinds[0],
            seed,
            seek_preset,
            options,
            games_limit,
            clock,
            accept,
            move_ms,
            concurrency,
        )
        return
    if (
        seek_preset
        or accept_presets
        or games_limit is not None
        or per_move_ms is not None
        or concurrency is not None
    ):
        raise click.UsageError(
            "--seek, --accept, --games, --concurrency and a clock go with --key KEY"
        )
    with connect(server) as client:
        if new_preset:
            summary = client.create_game(new_preset, parse_options(options), name=name or "bots")
            game_id = summary.game_id
            print(f"game {game_id}", flush=True)
            seats = [
                client.take_seat(game_id, f"{kinds[s % len(kinds)]} bot", s)
                for s in range(len(summary.seats))
            ]
        else:
            assert game_id is not None
            if token is None:
                seats = [client.take_seat(game_id, name or f"{kinds[0]} bot", seat)]
            else:
                if seat is None:
                    raise click.UsageError("--token needs --seat")
                seats = [(seat, token)]
        results: dict[int, view_pb2.SeatView] = {}
        errors: list[Exception] = []

        def run(seat_number: int, seat_token: str) -> None:
            kind = kinds[seat_number % len(kinds)]
            try:
                results[seat_number] = Bot(
                    client, game_id, seat_token, load_strategy(kind, seed + seat_number, move_ms)
                ).run()
            except Exception as error:  # noqa: BLE001 -- re-raised below, after every bot stops
                errors.append(error)

        threads = [threading.Thread(target=run, args=s, daemon=True) for s in seats]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        final = next(iter(results.values()))
        print(f"final score: {final_score_text(final)}", flush=True)


def _check_strategy(spec: str, move_ms: int | None = None) -> None:
    """A ``--strategy`` that names nothing usable is a usage error, before anything is made."""
    try:
        load_strategy(spec, move_ms=move_ms)
    except StrategySpecError as error:
        raise click.BadParameter(str(error), param_hint="--strategy") from None


def _bot_for_account(
    server: str,
    key: str,
    strategy_name: str,
    seed: int,
    seek_preset: str | None,
    options: tuple[str, ...],
    games_limit: int | None,
    clock: game_pb2.TimeControl | None,
    accept: list[str] | None = None,
    move_ms: int | None = None,
    concurrency: int | None = None,
) -> None:
    """``bot --key``: one line when a game starts and one when it ends (and one per challenge
    answered); Ctrl-C stops."""
    seek = SeekPlan(seek_preset, parse_options(options), clock) if seek_preset else None
    if seek is None and (options or clock is not None):
        raise click.UsageError("--option and a clock go with --seek PRESET (with --key)")
    if seek is not None:
        ruleset_request(seek.preset, seek.options)  # a bad option fails here, not in a thread
    lock = threading.Lock()
    last_waiting: dict[str, tuple[int, int]] = {}

    def say(line: str) -> None:
        with lock:
            print(line, flush=True)

    def started(a: competition_pb2.SeatAssignment) -> None:
        where = f" (tournament {a.tournament_id})" if a.tournament_id else ""
        say(f"game {a.game_id} started: seat {a.seat} of {a.game.rules.preset}{where}")

    def ended(result: GameResult) -> None:
        if result.over and result.view is not None:
            say(f"game {result.game_id} over: {final_score_text(result.view)}")
        else:
            error = result.error
            if isinstance(error, grpc.RpcError):
                why = f"{error.code().name}: {error.details()}"
            else:
                why = f"{type(error).__name__}: {error}"
            say(f"game {result.game_id} stopped: {why}")

    def waiting(w: competition_pb2.SeekWaiting) -> None:
        if last_waiting.get("seek") == (w.seekers, w.players):
            return
        last_waiting["seek"] = (w.seekers, w.players)
        say(f"seeking {seek_preset}: {w.seekers} of {w.players} players waiting")

    def answered(challenge: challenges_pb2.Challenge, accepted: bool) -> None:
        what = "accepted" if accepted else "declined"
        say(
            f"challenge {challenge.challenge_id} from {challenge.challenger} "
            f"({challenge.rules.preset}): {what}"
        )

    with Client(server) as client:
        if accept:
            try:
                _server_presets(client, accept, "--accept")
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                # The bot waits for a server not up yet (it lives through restarts): the
                # presets are left unchecked rather than the bot not started.
                say(f"{server} is not answering yet: --accept is not checked against its presets")
        competitor = Competitor(
            client,
            key,
            strategy_name,
            seed,
            seek=seek,
            games=games_limit,
            on_start=started,
            on_end=ended,
            on_seek=waiting,
            accept=accept or (),
            on_challenge=answered,
            move_ms=move_ms,
            concurrency=concurrency,
        )
        try:
            results = competitor.run()
        except KeyboardInterrupt:
            competitor.stop()
            say(f"stopped; {competitor.games_over} games over")
            sys.exit(130)
    over = sum(1 for r in results if r.over)
    say(f"done: {over} games over")


for _command in [
    *ARCHIVE_COMMANDS,
    *TOURNAMENT_COMMANDS,
    *MATCH_COMMANDS,
    *CHALLENGE_COMMANDS,
    *RATING_COMMANDS,
]:
    main.add_command(_command)

if __name__ == "__main__":
    main()
