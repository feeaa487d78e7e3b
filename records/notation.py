"""The Boneyard text notation: a whole game as text people read and write, like PGN for chess.

``record_to_text(record)`` writes a game record (``boneyard.records.record``) as text;
``text_to_record(text)`` reads a text game back into a record that ``boneyard.records.verify`` checks;
``split_games`` cuts a stream of several games (``boneyard export --player``) into games.
docs/notation.md specifies the notation completely; in short:

    [Event "Friday night"]
    [GameId "80370141-..."]
    [Rules "texas42"]
    [Seat0 "Alice"]
    ...
    [Result "7-3"]

    hand 1 dealer 3 seed 6a7d63c6...
    0: 6-6 6-4 5-5 ...
    bids: 0 pass, 1 30, 2 pass, 3 pass
    contract: 1 fives
    trick 1: 1 5-5, 2 5-0, 3 5-1, 0 6-5 -> 1 takes 21
    ...
    result: made, taken 31 11, change +1 +0, scores 1 0

The text holds the *actions* (the seeds that deal, the bids, the exchange, the contract, the
plays, timeouts and resignations) and the header; everything else (the deal itself, trick
winners, scores, the winner) follows from them by the rules, so the importer replays the actions
through the engine and makes every event as the server made it. What the text also writes of
those (the hands dealt, ``-> 1 takes 21``, ``result:``, ``winner:``) is checked, never trusted.
A text written from a record gives back that very record, event for event and byte for byte,
and with ``[SignedBy]`` and ``[Signature]`` its signature still holds (it covers nothing the
text does not hold).

Errors are ``NotationError``: the line and column, and what was expected there.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC

from google.protobuf.timestamp_pb2 import Timestamp

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import archive_pb2
from boneyard.engine import (
    AllPassed,
    AuctionWon,
    BidPlaced,
    ClockExpired,
    Command,
    Contract,
    ContractDeclared,
    Event,
    GameCreated,
    GameState,
    GameWon,
    HandDealt,
    HandScored,
    Passed,
    Phase,
    Resigned,
    Ruleset,
    TilePlayed,
    TrickWon,
    WidowDeclined,
    WidowExchanged,
    bid_text,
    parse_bid,
)
from boneyard.engine.contracts import DOUBLES, FOLLOW_ME, trump_name
from boneyard.engine.tiles import format_tiles, parse_tile, tile_name
from boneyard.records.record import (
    MAX_GAME_ID,
    MAX_GAME_NAME,
    MAX_PLAYER_NAME,
    MAX_RECORD_EVENTS,
    RecordError,
    build_record,
    stored_log,
)
from boneyard.records.verify import command_of

__all__ = [
    "INFORMATIONAL_TAGS",
    "MAX_TEXT_CHARS",
    "NotationError",
    "contract_text",
    "option_tag",
    "parse_contract_text",
    "record_to_text",
    "split_games",
    "text_to_record",
]

MAX_TEXT_CHARS = 16 * 1024 * 1024
"""A text game is refused beyond this (a record file's bound; a long game is some 100 kB)."""

INFORMATIONAL_TAGS = ("Site", "Date", "Round", "Annotator", "Result", "Winner")
"""Tags for people: written by the exporter, read and ignored by the importer except ``Result``
and ``Winner``, which are checked against the game's end when present."""

_HEADER_TAGS = (
    "Event", "GameId", "Created", "Finished", "Rules", "SignedBy", "Signature",
)


class NotationError(RecordError):
    """A text that is not a game in the notation, or whose moves the rules refuse: where
    (line and column, from 1) and why."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column
        self.message = message


# ---------------------------------------------------------------- words for values


def option_tag(option: str) -> str:
    """The tag of a ruleset option: ``marks_to_win`` -> ``MarksToWin``."""
    return "".join(part.capitalize() for part in option.split("_"))


_OPTION_OF_TAG = {option_tag(name).lower(): name for name in engine.option_names()}


def _option_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_TRUMP_WORDS = {
    **{trump_name(n): n for n in range(7)},
    **{f"{n}s": n for n in range(7)},
    "aces": 1, "deuces": 2, "treys": 3, "doubles": DOUBLES,
    "follow-me": FOLLOW_ME, "followme": FOLLOW_ME, "follow me": FOLLOW_ME,
    "no trump": FOLLOW_ME, "no-trump": FOLLOW_ME, "notrump": FOLLOW_ME, "nt": FOLLOW_ME,
}


def contract_text(contract: Contract) -> str:
    """``fives``, ``doubles``, ``follow-me``, ``nello``, ``sevens``."""
    return str(contract)


def parse_contract_text(text: str) -> Contract:
    """Read a contract: a trump (``fives``, ``5s``, ``trump fives``, ``doubles``,
    ``follow-me``, ``no trump``), ``nello`` or ``sevens``; ``ValueError`` otherwise."""
    words = text.lower().split()
    if words[:1] == ["trump"] or words[:1] == ["trumps"]:
        words = words[1:]
    elif words[-1:] == ["trump"] and len(words) > 1 and words[:-1] != ["no"]:
        words = words[:-1]
    said = " ".join(words)
    if said == "nello":
        return Contract.nello()
    if said == "sevens":
        return Contract.sevens()
    if said in _TRUMP_WORDS:
        return Contract.of_trump(_TRUMP_WORDS[said])
    raise ValueError(
        f"not a contract: {text!r} (blanks, ones ... sixes, doubles, follow-me, nello, sevens)"
    )


def _scores_text(scores: tuple[int, ...] | list[int]) -> str:
    """``7-3``; a negative score in parentheses: ``21-(-4)-9``."""
    return "-".join(str(s) if s >= 0 else f"({s})" for s in scores)


_SCORES = re.compile(r"^(?:\d+|\(-\d+\))(?:-(?:\d+|\(-\d+\)))*$")


def _parse_scores(text: str) -> list[int] | None:
    if not _SCORES.match(text.strip()):
        return None
    return [int(part.strip("()")) for part in re.findall(r"\(-\d+\)|\d+", text)]


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------- writing


def record_to_text(record: archive_pb2.GameRecord, *, site: str = "") -> str:
    """The game of ``record`` in the notation (the record should verify: a record whose events
    are no game is written as far as its events can be read). ``site``: where it was played
    (the server's address), for people."""
    events = [codec.event_from_proto(recorded.event) for recorded in record.events]
    created = events[0]
    if not isinstance(created, GameCreated):
        raise RecordError(f"game {record.game_id}: the first event is not GameCreated")
    rules = created.rules
    tags: list[tuple[str, str]] = []
    if record.name:
        tags.append(("Event", record.name))
    if site:
        tags.append(("Site", site))
    if record.HasField("create_time"):
        tags.append(("Date", record.create_time.ToDatetime(tzinfo=UTC).strftime("%Y.%m.%d")))
    if record.game_id:
        tags.append(("GameId", record.game_id))
    if record.HasField("create_time"):
        tags.append(("Created", record.create_time.ToJsonString()))
    if record.HasField("finish_time"):
        tags.append(("Finished", record.finish_time.ToJsonString()))
    tags.append(("Rules", rules.name))
    base = engine.PRESETS.get(rules.name)
    for name, value in rules.options().items():
        if base is None or getattr(base, name) != value:
            tags.append((option_tag(name), _option_value(value)))
    for seat in record.seats:
        if seat.player_name:
            tags.append((f"Seat{seat.seat}", seat.player_name))
    tags.append(("Result", _scores_text(list(record.result.scores))))
    tags.append(("Winner", str(record.result.winner)))
    if record.HasField("signature") and record.signature.version == 1:
        signature = record.signature
        tags.append(("SignedBy", base64.b64encode(signature.public_key).decode("ascii")))
        tags.append(("Signature", base64.b64encode(signature.signature).decode("ascii")))
    lines = [f"[{name} {_quote(value)}]" for name, value in tags]
    lines += _Writer(rules).moves(events[1:])
    return "\n".join(lines) + "\n"


class _Writer:
    """The move text of a log: one line per deal, auction, exchange, contract, trick, result."""

    def __init__(self, rules: Ruleset) -> None:
        self.rules = rules
        self.lines: list[str] = []
        self.open: str | None = None  # "bids" or "trick": the line items are added to
        self.items: list[str] = []
        self.head = ""
        self.timeout = ""
        self.trick = 0
        self.passed: int | None = None  # the seat of the auction's latest pass

    def close(self, suffix: str = "") -> None:
        if self.open is not None:
            self.lines.append(self.head + ", ".join(self.items) + suffix)
        self.open, self.items = None, []

    def item(self, kind: str, head: str, text: str) -> None:
        if self.open != kind:
            self.close()
            self.open, self.head = kind, head
        self.items.append(text)

    def line(self, text: str) -> None:
        self.close()
        self.lines.append(text)

    def take_timeout(self) -> str:
        marker, self.timeout = self.timeout, ""
        return marker

    def moves(self, events: list[Event]) -> list[str]:
        rules = self.rules
        for event in events:
            if isinstance(event, HandDealt):
                self.close()
                self.lines.append("")
                self.lines.append(
                    f"hand {event.number} dealer {event.dealer} seed {event.seed.hex()}"
                )
                for seat, hand in enumerate(event.hands):
                    self.lines.append(f"{seat}: {format_tiles(hand)}")
                if event.rest:
                    rest = "widow" if rules.is_moon else "out"
                    self.lines.append(f"{rest}: {format_tiles(event.rest)}")
                self.trick = 0
            elif isinstance(event, BidPlaced):
                said = f"{event.seat} {self.take_timeout()}{bid_text(event.bid, rules)}"
                self.item("bids", "bids: ", said)
                self.passed = None
            elif isinstance(event, Passed):
                self.item("bids", "bids: ", f"{event.seat} {self.take_timeout()}pass")
                self.passed = event.seat
            elif isinstance(event, AuctionWon):
                # A winner whose last word was a pass: the stuck dealer (all_pass =
                # forced_dealer_any_bid), given the lowest bid.
                given = self.passed == event.seat
                said = bid_text(event.bid, rules)
                self.close(f" {{seat {event.seat} is given {said}}}" if given else "")
                self.passed = None
            elif isinstance(event, AllPassed):
                self.close(" {all passed: the next dealer deals}")
            elif isinstance(event, WidowExchanged):
                self.line(
                    f"exchange: {event.seat} {self.take_timeout()}takes {tile_name(event.taken)} "
                    f"lays out {tile_name(event.discard)}"
                )
            elif isinstance(event, WidowDeclined):
                self.line(f"exchange: {event.seat} {self.take_timeout()}declines")
            elif isinstance(event, ContractDeclared):
                out = "".join(f" {{seat {s} sits out}}" for s in event.sitting_out)
                self.line(
                    f"contract: {event.seat} {self.take_timeout()}"
                    f"{contract_text(event.contract)}{out}"
                )
            elif isinstance(event, TilePlayed):
                if self.open != "trick":
                    self.trick += 1
                said = f"{event.seat} {self.take_timeout()}{tile_name(event.tile)}"
                self.item("trick", f"trick {self.trick}: ", said)
            elif isinstance(event, TrickWon):
                self.close(f" -> {event.seat} takes {event.points}")
            elif isinstance(event, HandScored):
                self.line(
                    f"result: {'made' if event.made else 'set'}, "
                    f"taken {' '.join(map(str, event.taken))}, "
                    f"change {' '.join(f'{c:+d}' for c in event.changes)}, "
                    f"scores {' '.join(map(str, event.scores))}"
                )
            elif isinstance(event, GameWon):
                self.line(f"winner: team {event.team}")
            elif isinstance(event, ClockExpired):
                if event.policy == "auto_play":
                    self.timeout = "timeout "
                else:
                    self.line(f"forfeit: {event.seat}")
            elif isinstance(event, Resigned):
                self.line(f"resign: {event.seat}")
            else:  # GameAbandoned: such a game has no record
                self.line(f"abandoned: {getattr(event, 'reason', '')}")
        self.close()
        return self.lines


# ---------------------------------------------------------------- reading: the text


def split_games(text: str) -> Iterator[tuple[int, str]]:
    """The games of a text holding one or more (``boneyard export --player`` writes them one
    after the other, a blank line between): ``(first line number, text)`` of each. A game
    starts at a tag line that follows move text."""
    start = 0
    seen_moves = False
    lines = text.split("\n")
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and seen_moves:
            yield start + 1, "\n".join(lines[start:number])
            start, seen_moves = number, False
        elif stripped and not stripped.startswith("[") and not stripped.startswith(";"):
            seen_moves = True
    rest = "\n".join(lines[start:])
    if rest.strip():
        yield start + 1, rest


def _strip_comments(text: str, first_line: int) -> list[str]:
    """The lines with comments (``; ...`` to the end of the line, ``{ ... }`` across lines)
    blanked out, columns kept; quoted tag values are not searched for comments."""
    out: list[str] = []
    in_brace: tuple[int, int] | None = None
    for number, line in enumerate(text.split("\n"), start=first_line):
        chars = list(line)
        quoted = False
        i = 0
        while i < len(chars):
            c = chars[i]
            if in_brace is not None:
                if c == "}":
                    in_brace = None
                chars[i] = " "
            elif quoted:
                if c == "\\":
                    i += 1
                elif c == '"':
                    quoted = False
            elif c == '"' and line.lstrip().startswith("["):
                quoted = True
            elif c == "{":
                in_brace = (number, i + 1)
                chars[i] = " "
            elif c == ";":
                chars[i:] = [" "] * (len(chars) - i)
                break
            i += 1
        out.append("".join(chars))
    if in_brace is not None:
        raise NotationError(*in_brace, "a comment opened with { is never closed with }")
    return out


_TAG = re.compile(r'^\s*\[\s*([A-Za-z][A-Za-z0-9_]*)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    column: int


def _words(line: str, start: int = 0, end: int | None = None) -> list[_Word]:
    segment = line[start:end]
    return [_Word(m.group(), start + m.start() + 1) for m in re.finditer(r"\S+", segment)]


def _parts(line: str, start: int, end: int) -> list[tuple[int, int]]:
    """The comma-separated parts of ``line[start:end]``: (start, end) of each."""
    parts: list[tuple[int, int]] = []
    at = start
    while True:
        comma = line.find(",", at, end)
        if comma < 0:
            parts.append((at, end))
            return parts
        parts.append((at, comma))
        at = comma + 1


# ---------------------------------------------------------------- reading: the game


def text_to_record(text: str, *, first_line: int = 1) -> archive_pb2.GameRecord:
    """The record of one text game: the header's tags, then its moves replayed through the
    engine. Raises ``NotationError`` (line and column) for anything that is not the notation,
    a move the rules refuse, or a written outcome (a trick's winner, a score) the moves do not
    give. ``first_line``: the number of the text's first line in its file."""
    if len(text) > MAX_TEXT_CHARS:
        raise NotationError(1, 1, f"a text of {len(text)} characters; at most {MAX_TEXT_CHARS}")
    return _Reader(_strip_comments(text, first_line), first_line).record()


class _Reader:
    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first = first_line
        self.tags: dict[str, tuple[str, int]] = {}
        self.state: GameState | None = None
        self.events: list[Event] = []
        self.number = first_line  # the line being read
        self.last: dict[type, int] = {}  # event type -> index in self.events of the latest

    # -- errors

    def fail(self, column: int, message: str) -> NotationError:
        return NotationError(self.number, column, message)

    # -- the header

    def record(self) -> archive_pb2.GameRecord:
        body = 0
        for index, line in enumerate(self.lines):
            self.number = self.first + index
            if not line.strip():
                continue
            if not line.lstrip().startswith("["):
                body = index
                break
            match = _TAG.match(line)
            if match is None:
                raise self.fail(
                    line.index("[") + 1, 'not a tag: write it [Name "value"] on a line of its own'
                )
            name, value = match.group(1), re.sub(r"\\(.)", r"\1", match.group(2))
            if name in self.tags:
                raise self.fail(line.index(name) + 1, f"the tag {name} is given twice")
            self.tags[name] = (value, self.number)
        else:
            body = len(self.lines)
        rules = self.rules()
        self.events = list(engine.start(rules))
        self.state = engine.replay(self.events)
        for index in range(body, len(self.lines)):
            self.number = self.first + index
            line = self.lines[index]
            if line.strip():
                self.move_line(line)
        return self.finish()

    def tag_fail(self, name: str, message: str) -> NotationError:
        value, number = self.tags[name]
        return NotationError(number, 1, f"[{name} {_quote(value)}]: {message}")

    def rules(self) -> Ruleset:
        known = {t.lower() for t in (*_HEADER_TAGS, *INFORMATIONAL_TAGS)}
        options: dict[str, str] = {}
        for name in self.tags:
            low = name.lower()
            if low in _OPTION_OF_TAG:
                options[_OPTION_OF_TAG[low]] = self.tags[name][0]
            elif re.fullmatch(r"seat\d+", low):
                continue
            elif low not in known:
                raise self.tag_fail(
                    name,
                    "no such tag; the tags are "
                    + ", ".join((*_HEADER_TAGS, *INFORMATIONAL_TAGS, "Seat0, Seat1 ..."))
                    + " and one per ruleset option ("
                    + ", ".join(option_tag(o) for o in engine.option_names())
                    + ")",
                )
        if "Rules" not in self.tags:
            raise NotationError(
                self.first, 1, 'no [Rules "..."] tag: the preset the game was played by'
            )
        preset = self.tags["Rules"][0]
        try:
            return engine.ruleset(preset, options)
        except engine.RulesetError as e:
            culprit = "Rules"
            for name in self.tags:
                if _OPTION_OF_TAG.get(name.lower(), "") in str(e):
                    culprit = name
            raise self.tag_fail(culprit, str(e)) from None

    # -- the moves

    def move_line(self, line: str) -> None:
        words = _words(line)
        first = words[0]
        key = first.text.lower()
        state = self.state
        assert state is not None
        rules = state.rules
        colon = line.find(":")
        if key == "hand":
            self.hand_line(line, words)
            return
        if colon < 0:
            raise self.fail(
                first.column,
                f"not a line of the notation: {first.text!r} (hand, bids:, exchange:, contract:,"
                " trick N:, result:, winner:, resign:, forfeit:, or a seat's deal 0: ...)",
            )
        head = line[:colon].strip().lower()
        after = colon + 1
        if head.isdigit() or head in ("widow", "out"):
            self.deal_line(line, head, after)
        elif head == "bids":
            for start, end in _parts(line, after, len(line)):
                self.bid_item(line, start, end)
        elif head in ("exchange", "contract"):
            self.one_item(line, head, after)
        elif head.startswith("trick"):
            self.trick_line(line, head, after, first.column)
        elif head == "result":
            self.result_line(line, after)
        elif head == "winner":
            self.winner_line(line, after)
        elif head in ("resign", "forfeit"):
            seat = self.seat(_words(line, after), line, after, rules)
            command: Command = (
                engine.Resign(seat) if head == "resign" else engine.TimeOut(seat, "forfeit")
            )
            self.apply(command, self.column_of(line, after))
        elif head == "abandoned":
            raise self.fail(
                first.column,
                "an abandoned game has no winner and no record: there is nothing to import",
            )
        else:
            raise self.fail(first.column, f"not a line of the notation: {line[:colon].strip()!r}")

    def column_of(self, line: str, at: int) -> int:
        words = _words(line, at)
        return words[0].column if words else at + 1

    def seat(self, words: list[_Word], line: str, at: int, rules: Ruleset) -> int:
        if not words:
            raise self.fail(at + 1, "a seat number is missing here")
        word = words[0]
        if not word.text.isdigit() or int(word.text) >= rules.players:
            raise self.fail(
                word.column, f"not a seat: {word.text!r} (seats are 0..{rules.players - 1})"
            )
        return int(word.text)

    def apply(self, command: Command, column: int) -> list[Event]:
        state = self.state
        assert state is not None
        if len(self.events) >= MAX_RECORD_EVENTS:
            raise self.fail(column, f"more than {MAX_RECORD_EVENTS} events: no record holds them")
        if state.phase is Phase.GAME_OVER:
            raise self.fail(column, f"the game is over (team {state.winner} won): no more moves")
        try:
            produced = engine.decide(state, command)
        except engine.IllegalAction as e:
            raise self.fail(column, f"{_command_text(command)} is illegal: {e}") from None
        for event in produced:
            state = engine.evolve(state, event)
            self.last[type(event)] = len(self.events)
            self.events.append(event)
        self.state = state
        return produced

    def seat_action(
        self, line: str, start: int, end: int, what: str
    ) -> tuple[int, bool, list[_Word], int]:
        """``SEAT [timeout] ...`` in ``line[start:end]``: the seat, whether it timed out, the
        words of the action and the column of the item."""
        words = _words(line, start, end)
        state = self.state
        assert state is not None
        if not words:
            raise self.fail(start + 1, f"{what} is missing here: write the seat, then {what}")
        seat = self.seat(words, line, start, state.rules)
        rest = words[1:]
        timeout = bool(rest) and rest[0].text.lower() == "timeout"
        return seat, timeout, rest[1:] if timeout else rest, words[0].column

    def timed_out(self, seat: int, column: int, wanted: Command | None, said: str) -> None:
        """The seat's clock ran out (auto-play): its lowest legal action was played; it must be
        the one written, if one is."""
        produced = self.apply(engine.TimeOut(seat, "auto_play"), column)
        if wanted is None:
            return
        played = command_of(produced[1]) if len(produced) > 1 else None
        if played != wanted:
            raise self.fail(
                column,
                f"seat {seat}'s clock ran out, so its lowest legal action was played for it: "
                f"{_command_text(played) if played else 'nothing'}, not {said}",
            )

    def act(self, seat: int, timeout: bool, command: Command, column: int, said: str) -> None:
        if timeout:
            self.timed_out(seat, column, command, said)
        else:
            self.apply(command, column)

    def bid_item(self, line: str, start: int, end: int) -> None:
        seat, timeout, words, column = self.seat_action(line, start, end, "a bid or pass")
        state = self.state
        assert state is not None
        said = " ".join(w.text for w in words)
        if not words:
            if timeout:
                self.timed_out(seat, column, None, "")
                return
            raise self.fail(column, f"seat {seat}'s bid is missing (a bid, or pass)")
        command: Command
        if said.lower() == "pass":
            command = engine.Pass(seat)
        else:
            try:
                command = engine.PlaceBid(seat, parse_bid(said, state.rules))
            except ValueError as e:
                raise self.fail(words[0].column, str(e)) from None
        self.act(seat, timeout, command, column, said)

    def one_item(self, line: str, head: str, after: int) -> None:
        seat, timeout, words, column = self.seat_action(line, after, len(line), head)
        said = " ".join(w.text.lower() for w in words)
        if not words and timeout:
            self.timed_out(seat, column, None, "")
            return
        if not words:
            raise self.fail(column, f"seat {seat}'s {head} is missing")
        command: Command
        if head == "contract":
            try:
                command = engine.DeclareContract(seat, parse_contract_text(said))
            except ValueError as e:
                raise self.fail(words[0].column, str(e)) from None
            self.act(seat, timeout, command, column, said)
            return
        if said in ("declines", "leaves the widow", "declines the widow"):
            self.act(seat, timeout, engine.DeclineWidow(seat), column, said)
            return
        match = re.fullmatch(r"(?:takes (\S+) )?(?:lays out|discards) (\S+)", said)
        if match is None:
            raise self.fail(
                words[0].column,
                f"not a widow exchange: {said!r} (write 'takes 4-1 lays out 6-2', "
                "'lays out 6-2', or 'declines')",
            )
        taken_text, discard_text = match.groups()
        discard = self.tile(discard_text, words)
        taken = None if taken_text is None else self.tile(taken_text, words)
        self.act(seat, timeout, engine.ExchangeWidow(seat, discard), column, said)
        if taken is not None:
            exchanged = self.events[self.last[WidowExchanged]]
            assert isinstance(exchanged, WidowExchanged)
            if exchanged.taken != taken:
                raise self.fail(
                    column,
                    f"the widow was {tile_name(exchanged.taken)}, not {tile_name(taken)}",
                )

    def tile(self, text: str, words: list[_Word]) -> int:
        column = next((w.column for w in words if w.text.lower() == text), words[0].column)
        try:
            return parse_tile(text)
        except ValueError as e:
            raise self.fail(column, str(e)) from None

    def trick_line(self, line: str, head: str, after: int, column: int) -> None:
        state = self.state
        assert state is not None
        hand = state.hand
        number = head.removeprefix("trick").strip()
        if not number.isdigit():
            raise self.fail(column, f"a trick line starts 'trick N:', not {head!r}")
        if state.phase is not Phase.PLAY or hand is None:
            raise self.fail(column, f"no trick is played now: {_awaited(state)}")
        if hand.trick:
            raise self.fail(
                column,
                f"trick {len(hand.tricks) + 1} is not over: {_awaited(state)} (a trick line "
                "holds a whole trick)",
            )
        if int(number) != len(hand.tricks) + 1:
            raise self.fail(
                column + len("trick "),
                f"this is trick {len(hand.tricks) + 1} of the hand, not trick {number}",
            )
        arrow = line.find("->", after)
        end = arrow if arrow >= 0 else len(line)
        before = len(self.events)
        for start, stop in _parts(line, after, end):
            seat, timeout, words, item = self.seat_action(line, start, stop, "a tile")
            if any(isinstance(e, TrickWon) for e in self.events[before:]):
                raise self.fail(
                    item, "the trick is over already: start the next trick on a line of its own"
                )
            if not words:
                if timeout:
                    self.timed_out(seat, item, None, "")
                    continue
                raise self.fail(item, f"seat {seat}'s tile is missing")
            if len(words) > 1:
                raise self.fail(words[1].column, "one tile per play; plays are separated by commas")
            t = self.tile(words[0].text, words)
            self.act(seat, timeout, engine.PlayTile(seat, t), item, words[0].text)
        if arrow >= 0:
            won = [e for e in self.events[before:] if isinstance(e, TrickWon)]
            said = _words(line, arrow + 2)
            match = re.fullmatch(r"(\d+)(?: takes (\d+))?", " ".join(w.text for w in said))
            if match is None:
                raise self.fail(arrow + 3, "after -> write the winner and its points: -> 2 takes 11")
            if not won:
                raise self.fail(arrow + 1, "the trick is not over: nobody has won it yet")
            winner, points = int(match.group(1)), match.group(2)
            if winner != won[0].seat or (points is not None and int(points) != won[0].points):
                said_text = " ".join(w.text for w in said)
                raise self.fail(
                    arrow + 1,
                    f"seat {won[0].seat} takes this trick, worth {won[0].points}; not "
                    f"-> {said_text}",
                )

    def deal_line(self, line: str, head: str, after: int) -> None:
        dealt_at = self.last.get(HandDealt)
        if dealt_at is None:
            raise self.fail(1, "a deal line comes after its 'hand N dealer D seed ...' line")
        dealt = self.events[dealt_at]
        assert isinstance(dealt, HandDealt)
        try:
            tiles = engine.parse_tiles(line[after:])
        except ValueError as e:
            raise self.fail(after + 2, str(e)) from None
        if head.isdigit():
            seat = int(head)
            if seat >= len(dealt.hands):
                raise self.fail(1, f"no seat {seat} at this table")
            wanted, what = dealt.hands[seat], f"seat {seat}'s hand"
        else:
            wanted, what = dealt.rest, "the widow" if head == "widow" else "the tiles out of play"
        if tiles != wanted:
            raise self.fail(
                after + 2,
                f"the seed deals {what} {format_tiles(wanted) or '(none)'}, not "
                f"{format_tiles(tiles) or '(none)'}",
            )

    def hand_line(self, line: str, words: list[_Word]) -> None:
        texts = [w.text.lower() for w in words]
        if len(words) != 6 or texts[2] != "dealer" or texts[4] != "seed":
            raise self.fail(words[0].column, "a hand starts 'hand N dealer D seed HEX'")
        try:
            seed = bytes.fromhex(words[5].text)
        except ValueError:
            raise self.fail(words[5].column, "the seed is written in hex") from None
        self.apply(engine.Deal(seed), words[0].column)
        dealt = self.events[self.last[HandDealt]]
        assert isinstance(dealt, HandDealt)
        if texts[1] != str(dealt.number):
            raise self.fail(words[1].column, f"this is hand {dealt.number}, not {words[1].text}")
        if texts[3] != str(dealt.dealer):
            raise self.fail(
                words[3].column, f"seat {dealt.dealer} deals hand {dealt.number}, not {words[3].text}"
            )

    def result_line(self, line: str, after: int) -> None:
        scored_at = self.last.get(HandScored, -1)
        if scored_at < self.last.get(HandDealt, -1):
            state = self.state
            assert state is not None
            raise self.fail(after + 1, f"the hand is not over: {_awaited(state)}")
        scored = self.events[scored_at]
        assert isinstance(scored, HandScored)
        actual = {
            "made": "made" if scored.made else "set",
            "taken": [*scored.taken],
            "change": [*scored.changes],
            "scores": [*scored.scores],
        }
        for start, end in _parts(line, after, len(line)):
            words = _words(line, start, end)
            if not words:
                raise self.fail(start + 1, "an empty part of the result")
            key = words[0].text.lower()
            if key in ("made", "set") and len(words) == 1:
                if key != actual["made"]:
                    raise self.fail(words[0].column, f"the bid was {actual['made']}, not {key}")
                continue
            if key not in ("taken", "change", "scores"):
                raise self.fail(
                    words[0].column, "a result says made or set, taken ..., change ..., scores ..."
                )
            try:
                numbers = [int(w.text) for w in words[1:]]
            except ValueError:
                raise self.fail(words[0].column, f"{key} is followed by one number per team") from None
            if numbers != actual[key]:
                shown = " ".join(map(str, actual[key]))
                raise self.fail(words[0].column, f"{key} {shown}, not {' '.join(map(str, numbers))}")

    def winner_line(self, line: str, after: int) -> None:
        state = self.state
        assert state is not None
        words = _words(line, after)
        said = " ".join(w.text.lower() for w in words)
        match = re.fullmatch(r"(?:team )?(\d+)", said)
        if match is None:
            raise self.fail(after + 1, "write the winning team: winner: team 0")
        if state.winner is None:
            raise self.fail(after + 1, f"the game is not over: {_awaited(state)}")
        if int(match.group(1)) != state.winner:
            raise self.fail(words[0].column, f"team {state.winner} won, not team {match.group(1)}")

    # -- the record

    def finish(self) -> archive_pb2.GameRecord:
        state = self.state
        assert state is not None
        self.number = self.first + len(self.lines)
        if state.phase is not Phase.GAME_OVER or state.winner is None:
            raise self.fail(1, f"the text ends before the game does: {_awaited(state)}")
        tags = {name: value for name, (value, _) in self.tags.items()}
        rules = state.rules
        players: dict[int, str] = {}
        for name in self.tags:
            if re.fullmatch(r"Seat\d+", name, re.IGNORECASE):
                seat = int(name[4:])
                if seat >= rules.players:
                    raise self.tag_fail(name, f"no such seat (seats are 0..{rules.players - 1})")
                players[seat] = tags[name]
        for name, value, most in (
            ("GameId", tags.get("GameId", ""), MAX_GAME_ID),
            ("Event", tags.get("Event", ""), MAX_GAME_NAME),
            *((f"Seat{s}", n, MAX_PLAYER_NAME) for s, n in players.items()),
        ):
            if len(value) > most:
                raise self.tag_fail(
                    next(t for t in self.tags if t.lower() == name.lower()),
                    f"at most {most} characters",
                )
        record = build_record(
            tags.get("GameId", ""),
            stored_log(self.events),
            name=tags.get("Event", ""),
            players=players,
        )
        for name, field in (("Created", "create_time"), ("Finished", "finish_time")):
            if name in tags:
                stamp = Timestamp()
                try:
                    stamp.FromJsonString(tags[name])
                except ValueError:
                    raise self.tag_fail(
                        name, "a time in RFC 3339 form, like 2026-12-01T20:15:03.123456Z"
                    ) from None
                getattr(record, field).CopyFrom(stamp)
        self.check_end_tags(record)
        if ("SignedBy" in tags) != ("Signature" in tags):
            missing = "Signature" if "SignedBy" in tags else "SignedBy"
            raise self.tag_fail(
                "SignedBy" if "SignedBy" in tags else "Signature", f"needs its [{missing}] tag too"
            )
        if "SignedBy" in tags:
            try:
                key = base64.b64decode(tags["SignedBy"], validate=True)
                signature = base64.b64decode(tags["Signature"], validate=True)
            except (binascii.Error, ValueError):
                raise self.tag_fail("SignedBy", "the key and the signature are base64") from None
            record.signature.CopyFrom(
                archive_pb2.RecordSignature(
                    version=1,
                    algorithm=archive_pb2.SIGNATURE_ALGORITHM_ED25519,
                    public_key=key,
                    signature=signature,
                )
            )
        return record

    def check_end_tags(self, record: archive_pb2.GameRecord) -> None:
        if "Result" in self.tags:
            scores = _parse_scores(self.tags["Result"][0])
            if scores is None:
                raise self.tag_fail("Result", "the final scores, like 7-3 (a negative one as (-4))")
            if scores != list(record.result.scores):
                raise self.tag_fail(
                    "Result", f"the game ends {_scores_text(list(record.result.scores))}"
                )
        if "Winner" in self.tags:
            said = self.tags["Winner"][0].strip().lower().removeprefix("team").strip()
            if said != str(record.result.winner):
                raise self.tag_fail("Winner", f"team {record.result.winner} won")


def _awaited(state: GameState) -> str:
    """What the game waits for next, in words."""
    if state.phase is Phase.DEAL:
        return f"hand {state.deals + 1} is to be dealt (a 'hand N dealer D seed HEX' line)"
    hand = state.hand
    assert hand is not None
    what = {
        Phase.BIDDING: "a bid or a pass",
        Phase.WIDOW: "the widow exchange",
        Phase.TRUMP: "the contract",
        Phase.PLAY: "a play",
    }.get(state.phase, "nothing")
    return f"{what} by seat {hand.turn} is next"


def _command_text(command: Command | None) -> str:
    if isinstance(command, engine.Deal):
        return f"the deal of seed {command.seed.hex()[:16]}..."
    return str(command)


