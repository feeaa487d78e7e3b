"""The archive from the command line: export a finished game, verify a record offline, replay
a game move by move, list finished games.

    boneyard export GAME_ID [-o FILE] [--binary | --format text]
                                                     the record: JSON (default), protobuf, text
    boneyard export --player NAME | --tournament ID [--format text|jsonl]
                                                     all their finished games, one stream
    boneyard import FILE.txt [-o record.json]        a text game back into a record
    boneyard verify FILE... [--public-key KEY]       offline: exit 0 valid, 1 not
    boneyard replay GAME_ID|FILE [--all]             step through it: n p t h q
    boneyard archive [--preset P] [--player NAME] [--since DATE] [--until DATE]
    boneyard public-key                              the key the server signs records with

``export``, ``replay GAME_ID``, ``archive`` and ``public-key`` take ``--server ADDR`` like every
other command; ``verify`` and ``replay FILE`` need no server. ``verify --public-key KEY``
requires each record to be signed by KEY (base64 or hex, or a file holding it). The record
format is docs/record-format.md; the verifier is ``boneyard.records.verify``, the same function the
server's VerifyRecord runs.
"""

from __future__ import annotations

import base64
import json
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Self

import click
import grpc
from google.protobuf import json_format

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import archive_pb2, archive_pb2_grpc, events_pb2
from boneyard.clients.api import DEFAULT_SERVER, GAME_HEADER, open_channel
from boneyard.clients.choices import HELP_WORDS
from boneyard.clients.cli_common import server_option
from boneyard.clients.describe import event_text, side_text
from boneyard.clients.reach import check
from boneyard.engine import Event, GameState, HandDealt, TilePlayed, TrickWon, WidowExchanged
from boneyard.engine.tiles import format_tiles, tile_name
from boneyard.records.notation import NotationError, record_to_text, split_games, text_to_record
from boneyard.records.record import (
    MAX_RECORD_BYTES,
    MAX_RECORD_FILE_BYTES,
    MalformedRecord,
    RecordTooLarge,
    dump_record,
    load_record,
)
from boneyard.records.signing import BadKey, key_fingerprint, parse_public_key
from boneyard.records.verify import Discrepancy, Verdict, command_of, verify_record

__all__ = ["ARCHIVE_COMMANDS", "ArchiveClient", "Step", "replay_steps"]



class ArchiveClient:
    """One channel to a server's ArchiveService."""

    def __init__(self, address: str = DEFAULT_SERVER) -> None:
        # A record may take MAX_RECORD_BYTES, and its answer a little more: past gRPC's default.
        self._channel = open_channel(
            address, [("grpc.max_receive_message_length", 2 * MAX_RECORD_BYTES)]
        )
        self._stub = archive_pb2_grpc.ArchiveServiceStub(self._channel)

    @property
    def channel(self) -> grpc.Channel:
        return self._channel

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record(self, game_id: str, timeout: float | None = 60.0) -> archive_pb2.GameRecord:
        request = archive_pb2.GetRecordRequest(game_id=game_id)
        metadata = ((GAME_HEADER, game_id),)  # a load balancer's hint, as on every game call
        return self._stub.GetRecord(request, metadata=metadata, timeout=timeout).record

    def verify(
        self, record: archive_pb2.GameRecord, timeout: float | None = 60.0
    ) -> archive_pb2.VerifyRecordResponse:
        request = archive_pb2.VerifyRecordRequest(record=record)
        return self._stub.VerifyRecord(request, timeout=timeout)

    def signing_key(self, timeout: float | None = 60.0) -> archive_pb2.GetSigningKeyResponse:
        request = archive_pb2.GetSigningKeyRequest()
        return self._stub.GetSigningKey(request, timeout=timeout)

    def games(
        self,
        preset: str = "",
        player_name: str = "",
        finished_after: datetime | None = None,
        finished_before: datetime | None = None,
        page_size: int = 50,
        tournament_id: str = "",
    ) -> Iterator[archive_pb2.ArchivedGame]:
        request = archive_pb2.ListArchivedGamesRequest(
            page_size=page_size,
            preset=preset,
            player_name=player_name,
            tournament_id=tournament_id,
        )
        if finished_after is not None:
            request.finished_after.FromDatetime(finished_after)
        if finished_before is not None:
            request.finished_before.FromDatetime(finished_before)
        while True:
            page = self._stub.ListArchivedGames(request, timeout=60.0)
            yield from page.games
            if not page.next_page_token:
                return
            request.page_token = page.next_page_token


def _guard(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A server's refusal or absence as its message and exit 1, not a traceback."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except grpc.RpcError as error:
            code = error.code()
            click.echo(f"{code.name}: {error.details()}", err=True)
            sys.exit(1)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _read_bounded(path: str, what: str) -> bytes:
    """A file's bytes (``-``: stdin), read no further than one byte past the bound of a record
    file: a huge file is refused (``RecordTooLarge``, saying it is no ``what``) without being
    read whole."""
    if path == "-":
        data = sys.stdin.buffer.read(MAX_RECORD_FILE_BYTES + 1)
    else:
        with open(path, "rb") as file:
            data = file.read(MAX_RECORD_FILE_BYTES + 1)
    if len(data) > MAX_RECORD_FILE_BYTES:
        raise RecordTooLarge(
            f"a file of more than {MAX_RECORD_FILE_BYTES} bytes; a {what} is at most "
            f"{MAX_RECORD_FILE_BYTES // (1024 * 1024)} MiB"
        )
    return data


def _read_record(path: str) -> archive_pb2.GameRecord:
    """The record in a file (``-``: stdin), bounded as ``_read_bounded`` reads."""
    return load_record(_read_bounded(path, "record file"))


# ---------------------------------------------------------------- export


_FORMATS = ("json", "binary", "text", "jsonl")
_LABELS = {"json": "JSON", "binary": "protobuf", "text": "text", "jsonl": "JSON lines"}


@contextmanager
def _output(output: str) -> Iterator[IO[bytes]]:
    """Where to write (``-``: stdout, left open), closed after."""
    if output == "-":
        yield sys.stdout.buffer
        return
    try:
        target = open(output, "wb")  # noqa: SIM115 - closed below
    except OSError as e:
        raise click.FileError(output, hint=e.strerror or str(e)) from None
    with target:
        yield target


def _record_bytes(record: archive_pb2.GameRecord, form: str, site: str) -> bytes:
    if form == "text":
        return record_to_text(record, site=site).encode("utf-8")
    if form == "jsonl":
        tree = json_format.MessageToDict(record, always_print_fields_with_no_presence=True)
        return (json.dumps(tree, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    return dump_record(record, binary=form == "binary")


@click.command()
@server_option
@click.argument("game_id", required=False)
@click.option(
    "-o",
    "--output",
    default="-",
    show_default=True,
    metavar="FILE",
    help="Where to write ('-': stdout).",
)
@click.option(
    "--format",
    "form",
    type=click.Choice(_FORMATS),
    default=None,
    help="json (the default for one game), binary (protobuf), text (the notation of "
    "docs/notation.md; the default for --player and --tournament), or jsonl (one JSON record a "
    "line).",
)
@click.option("--binary", is_flag=True, help="Write the protobuf bytes (same as --format binary).")
@click.option("--player", default="", help="Every finished game where a seat was taken under "
              "this name (an account's games), in one stream.")
@click.option("--tournament", default="", metavar="ID",
              help="Every finished game of this tournament, in one stream.")
@_guard
def export(
    server: str,
    game_id: str | None,
    output: str,
    form: str | None,
    binary: bool,
    player: str,
    tournament: str,
) -> None:
    """Write the record of a finished game (JSON, --binary protobuf, or --format text), or
    with --player NAME / --tournament ID every finished game of an account or a tournament, one
    after the other (text games separated by a blank line, or JSON lines), the most recently
    finished first, each fetched and written in turn."""
    bulk = bool(player or tournament)
    if bulk == (game_id is not None) or (player and tournament):
        raise click.UsageError("give a GAME_ID, or --player NAME, or --tournament ID (one of them)")
    if binary:
        if form not in (None, "binary"):
            raise click.UsageError(f"--binary and --format {form} disagree")
        form = "binary"
    form = form or ("text" if bulk else "json")
    if bulk and form in ("json", "binary"):
        raise click.UsageError(
            f"--format {form} holds one game; several are written as text or jsonl"
        )
    with ArchiveClient(server) as client:
        check(client.channel, server)
        if not bulk:
            assert game_id is not None
            record = client.record(game_id)
            data = _record_bytes(record, form, server)
            with _output(output) as target:
                target.write(data)
                target.flush()
            if output != "-":
                click.echo(
                    f"wrote {output}: game {record.game_id}, {len(record.events)} events "
                    f"({_LABELS[form]})",
                    err=True,
                )
            return
        count = 0
        with _output(output) as target:
            for game in client.games(player_name=player, tournament_id=tournament):
                record = client.record(game.game_id)
                if count and form == "text":
                    target.write(b"\n")
                target.write(_record_bytes(record, form, server))
                target.flush()
                count += 1
    whose = f"player {player}" if player else f"tournament {tournament}"
    where = "" if output == "-" else f"wrote {output}: "
    click.echo(f"{where}{count} finished games of {whose} ({_LABELS[form]})", err=True)


# ---------------------------------------------------------------- import


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "-o",
    "--output",
    default="-",
    show_default=True,
    metavar="FILE",
    help="Where to write the record ('-': stdout).",
)
def import_text(file: str, output: str) -> None:
    """Turn a game in the text notation (docs/notation.md) back into a record, as JSON like
    `boneyard export` writes it, for `boneyard verify` and `boneyard replay`.

    The moves are replayed by the rules: an illegal move, or a written result the moves do not
    give, is an error with its line and column (exit 1). A file of several games (`boneyard
    export --player`) gives one record per game, as JSON lines. The record is unsigned unless
    the text carries the server's [SignedBy] and [Signature] tags."""
    try:
        data = _read_bounded(file, "text game file")
    except OSError as e:
        raise click.FileError(file, hint=e.strerror or str(e)) from None
    except RecordTooLarge as e:
        raise click.ClickException(f"{file}: {e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise click.ClickException(f"{file}: not UTF-8 text ({e})") from None
    records: list[archive_pb2.GameRecord] = []
    try:
        for first_line, game in split_games(text):
            records.append(text_to_record(game, first_line=first_line))
    except NotationError as e:
        click.echo(f"{file}: {e}", err=True)
        sys.exit(1)
    if not records:
        click.echo(f"{file}: line 1, column 1: no game in the file", err=True)
        sys.exit(1)
    if len(records) == 1:
        data = dump_record(records[0])
    else:
        data = b"".join(_record_bytes(r, "jsonl", "") for r in records)
    with _output(output) as target:
        target.write(data)
        target.flush()
    if output != "-":
        for record in records:
            signed = "signed" if record.HasField("signature") else "unsigned"
            click.echo(
                f"wrote {output}: game {record.game_id or '(no id)'}, {len(record.events)} "
                f"events ({signed})",
                err=True,
            )


# ---------------------------------------------------------------- verify

_A_RECORD = "a GameRecord (JSON or protobuf)"
_WITHIN_BOUNDS = "a record within the bounds"


def _public_key(text: str | None) -> bytes | None:
    """``--public-key``: a key (base64, hex) or a file holding one (raw, text, PEM)."""
    if text is None:
        return None
    path = Path(text)
    try:
        if path.is_file():
            with open(path, "rb") as file:
                return parse_public_key(file.read(64 * 1024))
        return parse_public_key(text.encode("utf-8"))
    except BadKey as e:
        raise click.BadParameter(str(e), param_hint="--public-key") from None
    except OSError as e:
        raise click.FileError(text, hint=e.strerror or str(e)) from None


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--public-key",
    "key",
    metavar="KEY",
    help="The key the records must be signed by: base64 or hex (as `boneyard public-key` or "
    "`boneyard-server admin signing-key` print it), or a file holding it (or a PEM public key).",
)
def verify(files: tuple[str, ...], key: str | None) -> None:
    """Verify records offline: hash chain, seeds, every move, every score, the winner, and the
    server's signature.

    Exit 0 and a summary when every record is valid; exit 1 and the first discrepancy of each
    record that is not. With several files each line starts with the file's name. Without
    --public-key a signature is checked against the key it names (the line says which), and an
    unsigned record is valid; with it, each record must be signed by that key."""
    public_key = _public_key(key)
    valid = True
    for file in files:
        prefix = f"{file}: " if len(files) > 1 else ""
        try:
            record = _read_record(file)
        except OSError as e:
            raise click.FileError(file, hint=e.strerror or str(e)) from None
        except RecordTooLarge as e:
            verdict = Verdict(discrepancy=Discrepancy(0, "format", _WITHIN_BOUNDS, str(e)))
        except MalformedRecord as e:
            verdict = Verdict(discrepancy=Discrepancy(0, "format", _A_RECORD, str(e)))
        else:
            verdict = verify_record(record, public_key=public_key)
        click.echo(f"{prefix}{verdict}")
        valid = valid and verdict.valid
    sys.exit(0 if valid else 1)


# ---------------------------------------------------------------- replay


@dataclass(frozen=True, slots=True)
class Step:
    """One move of a replay: an action (or the deal) and the events that follow from it."""

    number: int
    """From 1."""
    events: tuple[tuple[int, events_pb2.Event, Event], ...]
    """``(seq, log-form message, engine event)`` of each event of the move."""
    state: GameState
    """The game after the move (shown through ``engine.view``)."""
    trick: tuple[tuple[int, int], ...]
    """The trick on the table after the move (the one just won, if the move won one)."""
    trick_number: int
    trick_winner: int | None
    rest: int
    """The tiles out of the hands: the Moon widow (after the exchange, the tile laid out), or
    the Texas 42 tiles out of play."""
    rest_label: str

    @property
    def hand_number(self) -> int:
        return self.state.deals

    def has(self, kind: type) -> bool:
        return any(type(e) is kind for _, _, e in self.events)


def replay_steps(record: archive_pb2.GameRecord, through: int | None = None) -> list[Step]:
    """The moves of a record's log (its first ``through`` events), each with the game after
    it. The events must be a valid log (``boneyard.records.verify`` says so, up to ``through``)."""
    steps: list[Step] = []
    group: list[tuple[int, events_pb2.Event, Event]] = []
    state: GameState | None = None
    trick: list[tuple[int, int]] = []
    trick_number = 0
    winner: int | None = None
    rest = 0
    rest_label = ""

    def close() -> None:
        assert state is not None
        steps.append(
            Step(
                len(steps) + 1,
                tuple(group),
                state,
                tuple(trick),
                trick_number,
                winner,
                rest,
                rest_label,
            )
        )

    messages = list(record.events)[:through]
    for recorded in messages:
        event = codec.event_from_proto(recorded.event)
        starts_move = type(event) is engine.GameCreated or command_of(event) is not None
        if starts_move and group:
            close()
            group = []
        if isinstance(event, HandDealt):
            trick, trick_number, winner, rest = [], 0, None, event.rest
            rest_label = "widow" if state is not None and state.rules.has_widow else "out of play"
        elif isinstance(event, WidowExchanged):
            rest, rest_label = 1 << event.discard, "laid out"
        elif isinstance(event, TilePlayed):
            if winner is not None:  # the first play of a new trick
                trick, winner = [], None
            if not trick:
                trick_number += 1
            trick.append((event.seat, event.tile))
        elif isinstance(event, TrickWon):
            winner = event.seat
        state = engine.evolve(state, event)
        group.append((recorded.event.seq, recorded.event, event))
    if group:
        close()
    return steps


def _event_line(
    message: events_pb2.Event, event: Event, previous: events_pb2.Event | None = None
) -> str:
    if isinstance(event, WidowExchanged):
        return (
            f"seat {event.seat} takes {tile_name(event.taken)} from the widow and lays out "
            f"{tile_name(event.discard)}"
        )
    if isinstance(event, HandDealt):
        first = (event.dealer + 1) % len(event.hands)
        return f"hand {event.number} dealt by seat {event.dealer}; seat {first} bids first"
    if isinstance(event, engine.GameCreated):
        rules = event.rules
        goal = (
            f"{rules.marks_to_win} marks"
            if rules.plays_for_marks
            else f"{rules.points_to_win} points"
        )
        return f"{rules.name}: {rules.players} players, to {goal}"
    return event_text(message, previous) or str(event)


def _team_text(rules: engine.Ruleset, team: int) -> str:
    seats = rules.teams[team]
    return f"seat{'s' if len(seats) > 1 else ''} {'+'.join(map(str, seats))}"


def render_step(step: Step, total: int, record: archive_pb2.GameRecord) -> list[str]:
    """The lines that show one move: what happened, then the whole table (every hand)."""
    state = step.state
    rules = state.rules
    first, last = step.events[0][0], step.events[-1][0]
    span = f"event {first}" if first == last else f"events {first}-{last}"
    where = f"hand {step.hand_number}" if step.hand_number else "before the deal"
    if step.trick_number:
        where += f" · trick {step.trick_number}"
    lines = [f"── step {step.number}/{total} · {span} · {where} ──"]
    messages = [m for _, m, _ in step.events]
    lines += [
        f"  {_event_line(m, e, messages[i - 1] if i else None)}"
        for i, (_, m, e) in enumerate(step.events)
    ]
    unit = "marks" if rules.plays_for_marks else "points"
    scores = " · ".join(f"{_team_text(rules, t)}: {s}" for t, s in enumerate(state.scores))
    lines.append(f"  scores ({unit}): {scores}")
    public = engine.view(state, engine.SPECTATOR)
    if public.hand_number and state.hand is not None:
        auction = ", ".join(
            f"{s}: {engine.bid_text(b, rules) if b is not None else 'pass'}" for s, b in public.bids
        )
        if auction:
            lines.append(f"  auction: {auction}")
        if public.contract is not None and public.high_bid is not None:
            lines.append(
                f"  contract: seat {public.bidder} bid {engine.bid_text(public.high_bid, rules)}; "
                f"seat {public.declarer} declared {public.contract}"
            )
        if step.trick:
            plays = "  ".join(f"{s}: {tile_name(t)}" for s, t in step.trick)
            won = f"  → seat {step.trick_winner}" if step.trick_winner is not None else ""
            lines.append(f"  trick {step.trick_number}: {plays}{won}")
        names = {s.seat: s.player_name for s in record.seats}
        width = max((len(n) for n in names.values()), default=0)
        for seat in range(rules.players):
            seen = engine.view(state, seat)
            mark = " (sits out)" if seat in public.sitting_out else ""
            turn = "  ← to act" if public.turn == seat else ""
            name = names.get(seat, "").ljust(width)
            lines.append(
                f"  seat {seat} {name} {format_tiles(seen.hand) or '-'}{mark}{turn}".rstrip()
            )
        if step.rest:
            lines.append(f"  {step.rest_label}: {format_tiles(step.rest)}")
        if public.taken is not None and any(public.tricks_won):
            taken = ", ".join(f"{_team_text(rules, t)}: {n}" for t, n in enumerate(public.taken))
            lines.append(f"  taken this hand: {taken}")
    if state.winner is not None:
        lines.append(f"  game over: {side_text(state.winner, rules.teams[state.winner])} won")
    return lines


_HELP = "Enter/n next · p previous · t next trick · h next hand · q quit · help/? this"


def _load_for_replay(source: str, server: str) -> archive_pb2.GameRecord:
    path = Path(source)
    if source == "-" or path.exists():
        try:
            return _read_record(source)
        except (MalformedRecord, RecordTooLarge) as e:
            raise click.ClickException(str(e)) from None
    try:
        uuid.UUID(source)
    except ValueError:
        raise click.BadParameter(
            f"{source!r} is neither a record file nor a game id", param_hint="GAME_ID|FILE"
        ) from None
    with ArchiveClient(server) as client:
        check(client.channel, server)
        return client.record(source)


@click.command()
@server_option
@click.argument("source", metavar="GAME_ID|FILE")
@click.option("--all", "show_all", is_flag=True, help="Print every step and stop (no prompt).")
@_guard
def replay(server: str, source: str, show_all: bool) -> None:
    """Step through a finished game, every hand shown, trick by trick.

    At the prompt: Enter or n for the next move, p the previous one, t to the end of the next
    trick, h to the next hand, q to quit."""
    record = _load_for_replay(source, server)
    verdict = verify_record(record)
    through: int | None = None
    if not verdict.valid:
        assert verdict.discrepancy is not None
        d = verdict.discrepancy
        # A wrong header or signature leaves every event replayable; else up to the first wrong one.
        whole = d.kind in ("header", "signature")
        through = len(record.events) if whole else max(d.event - 1, 0)
        click.echo(
            f"warning: the record does not verify ({d}); replaying its first {through} events",
            err=True,
        )
    steps = replay_steps(record, through)
    if not steps:
        raise click.ClickException("nothing to replay")
    total = len(steps)
    if show_all:
        for step in steps:
            click.echo("\n".join(render_step(step, total, record)))
        sys.exit(0 if verdict.valid else 1)
    click.echo(_HELP)
    at = 0
    click.echo("\n".join(render_step(steps[at], total, record)))
    while True:
        try:
            answer = input("replay> ").strip().lower()
        except EOFError:
            click.echo()
            break
        if not sys.stdin.isatty():
            click.echo(answer)  # a transcript of piped commands reads as if typed
        if answer in ("q", "quit"):
            break
        if answer in HELP_WORDS:
            click.echo(_HELP)
            continue
        target = _move(steps, at, answer)
        if target is None:
            click.echo(f"? {answer!r}: {_HELP}")
            continue
        if target == at:
            click.echo("(the end)" if answer != "p" else "(the start)")
            continue
        at = target
        click.echo("\n".join(render_step(steps[at], total, record)))
    sys.exit(0 if verdict.valid else 1)


def _move(steps: list[Step], at: int, answer: str) -> int | None:
    """The step a prompt answer goes to (``None``: not an answer)."""
    last = len(steps) - 1
    if answer in ("", "n", "next"):
        return min(at + 1, last)
    if answer in ("p", "prev", "previous"):
        return max(at - 1, 0)
    if answer in ("t", "trick"):
        return next((i for i in range(at + 1, last + 1) if steps[i].has(TrickWon)), last)
    if answer in ("h", "hand"):
        return next((i for i in range(at + 1, last + 1) if steps[i].has(HandDealt)), last)
    return None


# ---------------------------------------------------------------- list


def _date(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            f"{text!r}: write a date or time like 2026-05-01 or 2026-05-01T18:00"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


@click.command()
@server_option
@click.option("--preset", default="", help="Only games of this preset.")
@click.option("--player", default="", help="Only games where a seat was taken under this name.")
@click.option("--since", help="Only games finished at or after this date/time (UTC unless given).")
@click.option("--until", help="Only games finished before this date/time.")
@_guard
def archive(server: str, preset: str, player: str, since: str | None, until: str | None) -> None:
    """List finished games, the most recently finished first."""
    with ArchiveClient(server) as client:
        check(client.channel, server)
        listed = 0
        for game in client.games(preset, player, _date(since), _date(until)):
            players = ", ".join(s.player_name or "-" for s in game.seats)
            finished = game.finish_time.ToDatetime(tzinfo=UTC).strftime("%Y-%m-%d %H:%M:%S")
            click.echo(
                f"{game.game_id}  {finished}  {game.rules.preset:<14} "
                f"scores {' '.join(map(str, game.scores))}  "
                f"{side_text(game.winner, game.winning_seats)} won  "
                f"{game.events} events  [{players}]"
            )
            listed += 1
    if not listed:
        asked = preset or player or since or until
        click.echo("no finished games" + (" match these filters" if asked else " yet"))


# ---------------------------------------------------------------- public-key


@click.command("public-key")
@server_option
@_guard
def public_key(server: str) -> None:
    """Print the public key the server signs records with (base64), for verify --public-key,
    and its fingerprint on stderr (to compare by eye with the one the web app's archive and
    `boneyard-server admin signing-key` show).

    Ask the server you trust for it over a channel you trust (TLS): a key fetched from a
    server an attacker stands in for is the attacker's."""
    with ArchiveClient(server) as client:
        check(client.channel, server)
        answer = client.signing_key()
    click.echo(base64.b64encode(answer.public_key).decode("ascii"))
    click.echo(f"fingerprint {key_fingerprint(answer.public_key)}", err=True)


ARCHIVE_COMMANDS = (export, import_text, verify, replay, archive, public_key)
"""The commands this module adds to ``boneyard`` (clients/cli.py)."""
