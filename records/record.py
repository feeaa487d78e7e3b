"""Game records: a finished game as one message that anyone can replay and verify offline.

A record (``boneyard.v1.GameRecord``, docs/record-format.md) holds the complete ruleset, the
seats, each hand's seed commitment and revealed seed, and every event of the game's log in the
log form with its hash:

    hash[0] = GENESIS_HASH (32 zero bytes)
    hash[n] = SHA-256(hash[n - 1] || canonical_bytes(event n))

``canonical_bytes`` is the event's ``Event`` message with ``seq`` = 0, serialized
deterministically: exactly the payload the server's store keeps (``codec.encode_event``), so a
record's hashes are the database's.

``build_record`` is the one record builder: the server feeds it the rows of its store, the
benchmarks and tests feed it logs made in-process (``stored_log``). Pure functions, no I/O: the
server, the clients and the verifier (``boneyard.records.verify``) all import this module.

A record anyone may hand to a verifier is bounded (``MAX_RECORD_BYTES``, ``MAX_RECORD_EVENTS``
...; docs/record-format.md, "Bounds"): legal games have no longest length (hands redealt after
everyone passed, Moon's setbacks), so without bounds a record could make a verifier work, and
hold memory, without end.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import DecodeError

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import archive_pb2, events_pb2
from boneyard.engine import Event, GameState, HandDealt, Phase
from boneyard.records.hashing import GENESIS_HASH, HASH_SIZE, chain_hash, seed_commitment

__all__ = [
    "FORMAT_VERSION",
    "GENESIS_HASH",
    "HASH_SIZE",
    "MAX_GAME_ID",
    "MAX_GAME_NAME",
    "MAX_PLAYER_NAME",
    "MAX_RECORD_BYTES",
    "MAX_RECORD_EVENTS",
    "MAX_RECORD_FILE_BYTES",
    "MAX_RECORD_HANDS",
    "GameNotOver",
    "MalformedRecord",
    "RecordError",
    "RecordTooLarge",
    "Row",
    "StoredRow",
    "build_record",
    "canonical_bytes",
    "chain_hash",
    "dump_record",
    "load_record",
    "record_bounds_error",
    "record_from_json",
    "record_to_json",
    "stored_log",
]

FORMAT_VERSION = 1
"""The record format this module writes and ``boneyard.records.verify`` reads."""

# The bounds of a record (docs/record-format.md, "Bounds"). The longest game that cannot go
# back or start over (Texas 42 to the most marks, 100, with seven players who each play for
# themselves: 7 * 99 + 1 = 694 hands of at most 43 events) has about 29,900 events, 1.6 MB of
# protobuf and 5.4 MB of JSON; every bound is about twice what that game needs.
MAX_RECORD_EVENTS = 60_000
MAX_RECORD_HANDS = 1_500
MAX_RECORD_BYTES = 4 * 1024 * 1024
"""The protobuf bytes of a record (a ``--binary`` file, VerifyRecord's request): 4 MiB, which
is also gRPC's default message size, so such a record fits any client's default channel."""
MAX_RECORD_FILE_BYTES = 16 * 1024 * 1024
"""A record file in either form: JSON takes about 3.5 times the bytes of protobuf."""
MAX_GAME_ID = 100
MAX_GAME_NAME = 200
MAX_PLAYER_NAME = 100
"""Characters of the header's texts (the server's own limits are 36, 200 and 100)."""


class RecordError(ValueError):
    """No record can be made or read."""


class GameNotOver(RecordError):
    """The game is not over: its record would show hidden tiles (hands, seeds)."""


class MalformedRecord(RecordError):
    """Bytes or text that are not a ``GameRecord`` (protobuf or its JSON mapping)."""


class RecordTooLarge(RecordError):
    """A record (or a file) over one of the bounds: refused before any work on it."""


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


def record_bounds_error(record: archive_pb2.GameRecord) -> str | None:
    """What bound ``record`` is over, in words, or ``None`` when it is within them all."""
    if len(record.events) > MAX_RECORD_EVENTS:
        return f"{len(record.events)} events; a record has at most {MAX_RECORD_EVENTS}"
    if len(record.hands) > MAX_RECORD_HANDS:
        return f"{len(record.hands)} hands; a record has at most {MAX_RECORD_HANDS}"
    size = record.ByteSize()
    if size > MAX_RECORD_BYTES:
        return f"{size} bytes of protobuf; a record has at most {_mib(MAX_RECORD_BYTES)}"
    if len(record.game_id) > MAX_GAME_ID:
        return f"a game id of {len(record.game_id)} characters; at most {MAX_GAME_ID}"
    if len(record.name) > MAX_GAME_NAME:
        return f"a game name of {len(record.name)} characters; at most {MAX_GAME_NAME}"
    for seat in record.seats:
        if len(seat.player_name) > MAX_PLAYER_NAME:
            return (
                f"a player name of {len(seat.player_name)} characters (seat {seat.seat}); at "
                f"most {MAX_PLAYER_NAME}"
            )
    return None


class StoredRow(NamedTuple):
    """One event as a store keeps it: its number, canonical bytes and chain hash."""

    seq: int
    payload: bytes
    hash: bytes


class Row(Protocol):
    """What ``build_record`` reads of a stored event (the store's ``StoredEvent`` is one)."""

    @property
    def seq(self) -> int: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def hash(self) -> bytes: ...


# ---------------------------------------------------------------- the hash chain


def canonical_bytes(event: events_pb2.Event) -> bytes:
    """The bytes an event's hash covers: the message with ``seq`` = 0, serialized
    deterministically (the store's payload)."""
    data = event.SerializeToString(deterministic=True)
    seq = event.seq
    if seq == 0:
        return data
    # seq is field 1, so a deterministic serialization writes it first: the bytes after its
    # tag and value are those of the message with seq 0 (nothing else depends on it). When
    # they do not start so, copy the message and clear seq, which is what this means.
    prefix = _SEQ_FIELDS[seq] if seq < len(_SEQ_FIELDS) else _seq_field(seq)
    if data.startswith(prefix):
        return data[len(prefix) :]
    bare = events_pb2.Event()
    bare.CopyFrom(event)
    bare.seq = 0
    return bare.SerializeToString(deterministic=True)


def _seq_field(seq: int) -> bytes:
    """Field 1 (``seq``) as a varint, tag and value, as protobuf writes it."""
    out = bytearray(b"\x08")
    while seq > 0x7F:
        out.append(seq & 0x7F | 0x80)
        seq >>= 7
    out.append(seq)
    return bytes(out)


_SEQ_FIELDS = tuple(_seq_field(seq) for seq in range(4096))
"""The seq fields of the first events of a log, made once."""


def stored_log(events: Iterable[Event]) -> list[StoredRow]:
    """A log of engine events as a store would keep it (payloads and hashes): how records of
    games played in-process are made (tests, benchmarks)."""
    rows: list[StoredRow] = []
    prev = GENESIS_HASH
    for seq, event in enumerate(events, start=1):
        _, payload = codec.encode_event(event)
        prev = chain_hash(prev, payload)
        rows.append(StoredRow(seq, payload, prev))
    return rows


# ---------------------------------------------------------------- building


def build_record(
    game_id: str,
    rows: Iterable[Row],
    *,
    name: str = "",
    players: Mapping[int, str] | None = None,
    seeds: Mapping[int, tuple[bytes, bytes]] | None = None,
    create_time: datetime | None = None,
    finish_time: datetime | None = None,
) -> archive_pb2.GameRecord:
    """The record of a finished game from its stored log.

    ``rows`` (``seq``, ``payload``, ``hash``) are the log in order, as the store keeps it; they are copied
    into the record as they are (the verifier, not the builder, judges them). ``players`` maps a
    seat to its player's name; ``seeds`` maps a hand number to ``(commitment, seed)`` from the
    store's seed table (a hand left out takes the seed of its ``HandDealt`` event).

    Raises ``GameNotOver`` unless the log ends with the game over, and ``MalformedRecord`` for
    a payload that is not an event in the log form.
    """
    record = archive_pb2.GameRecord(format_version=FORMAT_VERSION, game_id=game_id, name=name)
    state: GameState | None = None
    dealt: list[HandDealt] = []
    for row in rows:
        seq, payload, stored_hash = row.seq, row.payload, row.hash
        message = events_pb2.Event()
        try:
            message.ParseFromString(payload)
            event = codec.event_from_proto(message)
        except (DecodeError, codec.MalformedEvent) as e:
            raise MalformedRecord(f"game {game_id} event {seq}: {e}") from e
        try:
            state = engine.evolve(state, event)
        except (ValueError, AssertionError, AttributeError) as e:
            raise MalformedRecord(
                f"game {game_id} event {seq}: does not follow the log: {e}"
            ) from e
        if type(event) is HandDealt:
            dealt.append(event)
        message.seq = seq
        record.events.add(event=message, hash=stored_hash)
    if state is None or state.phase is not Phase.GAME_OVER or state.winner is None:
        where = "has no events" if state is None else f"is in the {state.phase.value} phase"
        raise GameNotOver(
            f"game {game_id} is not over (it {where}): its record would show hidden tiles"
        )
    rules = state.rules
    record.rules.CopyFrom(codec.rules_to_proto(rules))
    names = players or {}
    for seat in range(rules.players):
        record.seats.add(seat=seat, player_name=names.get(seat, ""), team=rules.team_of[seat])
    table = seeds or {}
    for hand in dealt:
        commitment, seed = table.get(hand.number, (seed_commitment(hand.seed), hand.seed))
        record.hands.add(number=hand.number, seed_commitment=commitment, seed=seed)
    record.result.scores.extend(state.scores)
    record.result.winner = state.winner
    record.result.winning_seats.extend(rules.teams[state.winner])
    if create_time is not None:
        record.create_time.FromDatetime(create_time)
    if finish_time is not None:
        record.finish_time.FromDatetime(finish_time)
    return record


# ---------------------------------------------------------------- reading and writing


def record_to_json(record: archive_pb2.GameRecord) -> str:
    """The record in protobuf's JSON mapping, for people: every field (defaults included) in
    the order of the .proto file, and whatever fits on a line on one line (an event, a hand)."""
    tree = json_format.MessageToDict(record, always_print_fields_with_no_presence=True)
    return _pretty(_ordered(tree, record.DESCRIPTOR), 0) + "\n"


_WIDTH = 100


def _ordered(value: Any, descriptor: Descriptor | None) -> Any:
    """``value`` (from ``MessageToDict``) with each object's keys in field-number order."""
    if isinstance(value, list):
        return [_ordered(v, descriptor) for v in value]
    if not isinstance(value, dict) or descriptor is None:
        return value
    out: dict[str, Any] = {}
    for field in sorted(descriptor.fields, key=lambda f: f.number):
        if field.json_name in value:
            out[field.json_name] = _ordered(value[field.json_name], field.message_type)
    out.update((k, v) for k, v in value.items() if k not in out)
    return out


def _pretty(value: Any, indent: int, column: int | None = None) -> str:
    """JSON of ``value`` nested at ``indent``, starting at ``column`` (after a key)."""
    flat = json.dumps(value, ensure_ascii=False)
    start = indent if column is None else column
    if not isinstance(value, dict | list) or start + len(flat) <= _WIDTH or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            return flat  # a list of numbers or strings stays on one line, however long
        items = [inner + _pretty(v, indent + 2) for v in value]
    else:
        items = []
        for k, v in value.items():
            key = json.dumps(k) + ": "
            items.append(inner + key + _pretty(v, indent + 2, indent + 2 + len(key)))
    opening, closing = ("[", "]") if isinstance(value, list) else ("{", "}")
    return opening + "\n" + ",\n".join(items) + "\n" + " " * indent + closing


def record_from_json(text: str | bytes) -> archive_pb2.GameRecord:
    """Read a record written by ``record_to_json`` (or by hand). Raises ``MalformedRecord``."""
    record = archive_pb2.GameRecord()
    try:
        # Fields this reader does not know are left out: harmless in the header; inside an
        # event they change its canonical bytes, which the hash chain then shows.
        json_format.Parse(text, record, ignore_unknown_fields=True)
    except (json_format.ParseError, UnicodeDecodeError, ValueError) as e:
        raise MalformedRecord(f"not a GameRecord in JSON: {e}") from e
    return record


def dump_record(record: archive_pb2.GameRecord, *, binary: bool = False) -> bytes:
    """The record as a file holds it: JSON (UTF-8), or with ``binary`` the protobuf bytes."""
    if binary:
        return record.SerializeToString(deterministic=True)
    return record_to_json(record).encode("utf-8")


def load_record(data: bytes) -> archive_pb2.GameRecord:
    """Read a record file, JSON or protobuf (a JSON record starts with ``{``; a protobuf one
    with the tag of ``format_version``). Raises ``MalformedRecord``, and ``RecordTooLarge``
    before parsing anything over ``MAX_RECORD_FILE_BYTES`` (JSON) or ``MAX_RECORD_BYTES``
    (protobuf)."""
    if len(data) > MAX_RECORD_FILE_BYTES:
        raise RecordTooLarge(
            f"a file of {len(data)} bytes; a record file is at most {_mib(MAX_RECORD_FILE_BYTES)}"
        )
    if data.lstrip()[:1] == b"{":
        return record_from_json(data)
    if len(data) > MAX_RECORD_BYTES:
        raise RecordTooLarge(
            f"{len(data)} bytes of protobuf; a record has at most {_mib(MAX_RECORD_BYTES)}"
        )
    record = archive_pb2.GameRecord()
    try:
        record.ParseFromString(data)
    except (DecodeError, ValueError) as e:
        raise MalformedRecord(f"not a GameRecord (neither JSON nor protobuf bytes): {e}") from e
    return record
