"""What the RPC fuzzer (``fuzz_rpc.py``) sends: every method of every service of the API, found
from the descriptors of ``boneyard.api.v1`` (a new RPC is fuzzed without a line here), and for
request number ``i`` of seed ``s`` a request made by ``random.Random`` seeded with ``(s, i)``
alone, so that any request of a run can be made again on its own (``fuzz_rpc --only i``).

A request is one of: random bytes; the encoding of a plausible message, cut or mutated;
a message of hostile values (edges of every integer type, 20,000-character and control-character
and non-ASCII strings, enum numbers no enum has, Timestamps outside years 1..9999); a message
grown to about the server's size limit; unknown groups nested deeper than any parser recurses.
Plausible and hostile values alike come from ``Pools``: the ids, names, tokens and encoded
messages of a world of real games made before the run (``fuzz_world.py``). Each request goes
with one kind of credentials: none, a real seat token or account key, or a bogus one.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
import string
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message

import boneyard.api.v1

__all__ = [
    "MAX_REQUEST_BYTES",
    "Credential",
    "Method",
    "Pools",
    "Request",
    "make_request",
    "method_of",
    "methods",
]

MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""gRPC's default limit on a received message, which the server keeps."""

F = FieldDescriptor


@dataclass(frozen=True)
class Method:
    """One RPC: ``/package.Service/Name``, its request message and whether it streams."""

    path: str
    name: str
    service: str
    request: Descriptor
    server_streaming: bool

    @property
    def read_only(self) -> bool:
        """Whether the method only reads, by the API's naming of standard methods (Get, List,
        Watch) and of VerifyRecord; an accepted call of any other method may change a game."""
        return self.name.startswith(("Get", "List", "Watch", "Verify"))


def methods() -> list[Method]:
    """Every method of every service declared by the modules of ``boneyard.api.v1``."""
    found: dict[str, Method] = {}
    for module_info in pkgutil.iter_modules(boneyard.api.v1.__path__):
        if not module_info.name.endswith("_pb2"):
            continue
        module = importlib.import_module(f"boneyard.api.v1.{module_info.name}")
        for service in module.DESCRIPTOR.services_by_name.values():
            for m in service.methods:
                found[f"/{service.full_name}/{m.name}"] = _method(service.full_name, m)
    return [found[path] for path in sorted(found)]


def _method(service: str, m: MethodDescriptor) -> Method:
    # One request per call: a stream each way (PlayTurns) gets one message, its first, and
    # then the client's side closes.
    assert not m.client_streaming or m.server_streaming, f"{m.full_name}: client stream only"
    return Method(f"/{service}/{m.name}", m.name, service, m.input_type, m.server_streaming)


@dataclass(frozen=True)
class Credential:
    """The ``authorization`` metadata of a call (none, one or two headers) and what it is."""

    kind: str
    metadata: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Pools:
    """Real things of the world the requests refer to."""

    game_ids: Sequence[str]
    tournament_ids: Sequence[str]
    account_names: Sequence[str]
    seat_tokens: Sequence[str]
    account_keys: Sequence[str]
    versions: Sequence[int]
    corpus: Mapping[str, Sequence[bytes]] = field(default_factory=dict)
    """Encoded real messages by full message name (a record, a ruleset, a legal action ...)."""


@dataclass(frozen=True)
class Request:
    index: int
    method: Method
    kind: str
    payload: bytes
    credential: Credential


# ------------------------------------------------------------------------------ values

_INT32 = (0, 1, -1, 2, 3, 6, 7, 27, 28, 42, 250, 2**15, 2**31 - 1, -(2**31), 1_653_443_733)
_UINT32 = (0, 1, 2, 3, 4, 5, 6, 7, 27, 28, 42, 84, 250, 2**31 - 1, 2**31, 2**32 - 1, 1_653_443_733)
_INT64 = (*_INT32, 2**32, 2**53 + 1, 2**63 - 1, -(2**63))
_UINT64 = (*_UINT32, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1)
_RANGES = {
    F.TYPE_INT32: (-(2**31), 2**31 - 1, _INT32),
    F.TYPE_SINT32: (-(2**31), 2**31 - 1, _INT32),
    F.TYPE_SFIXED32: (-(2**31), 2**31 - 1, _INT32),
    F.TYPE_UINT32: (0, 2**32 - 1, _UINT32),
    F.TYPE_FIXED32: (0, 2**32 - 1, _UINT32),
    F.TYPE_INT64: (-(2**63), 2**63 - 1, _INT64),
    F.TYPE_SINT64: (-(2**63), 2**63 - 1, _INT64),
    F.TYPE_SFIXED64: (-(2**63), 2**63 - 1, _INT64),
    F.TYPE_UINT64: (0, 2**64 - 1, _UINT64),
    F.TYPE_FIXED64: (0, 2**64 - 1, _UINT64),
}
_FLOATS = (0.0, -0.0, 1.5, -1.0, 1e308, -1e308, float("inf"), float("-inf"), float("nan"))

_SECONDS = (
    0, 1, -1, 1_700_000_000,
    253_402_300_799, 253_402_300_800,  # the last second of the year 9999, and the next
    -62_135_596_800, -62_135_596_801,  # the first second of the year 1, and the one before
    2**63 - 1, -(2**63),
)  # fmt: skip
_NANOS = (0, 1, 999_999_999, 1_000_000_000, -1, 2**31 - 1, -(2**31))

_HOSTILE_TEXT = (
    "",
    " ",
    "A" * 20_000,
    "é" * 101,
    "\x00",
    "a\x00b",
    "\t\n\r",
    "\x1b[2J",
    "\u202eevil",
    "\u2028line",
    "\ufeff",
    "😀" * 60,
    "𝕏" * 7,
    "名前",
    "'; DROP TABLE games; --",
    "%s%n%x",
    "{}",
    "../../etc/passwd",
    "Bearer x",
    "null",
    "-1",
)
_PRESETS = (
    "texas42", "moon", "texas42-house", "moon-pagat", "moon-no-widow", "moon-overcall", "",
    "TEXAS42", "chess", " moon",
)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _printable(rng: random.Random, most: int) -> str:
    return "".join(rng.choices(string.printable, k=rng.randint(1, most)))


def _unicode(rng: random.Random, most: int) -> str:
    """Code points from the whole range (no surrogates, which UTF-8 cannot encode)."""
    out = []
    for _ in range(rng.randint(1, most)):
        c = rng.randrange(0x110000)
        out.append(chr(c if not 0xD800 <= c <= 0xDFFF else 0xFFFD))
    return "".join(out)


def _id_variant(rng: random.Random, real: str) -> str:
    """A real id as written in another of the forms a UUID parser may accept, or nearly."""
    return rng.choice(
        (
            real,
            real,
            real.upper(),
            "{" + real + "}",
            "urn:uuid:" + real,
            real.replace("-", ""),
            real[:-1],
            real + "0",
            " " + real,
            real + "\x00",
        )
    )


class _Values:
    """Field values for one request: plausible or hostile, by the field's type and name."""

    def __init__(self, rng: random.Random, pools: Pools, hostility: float) -> None:
        self.rng = rng
        self.pools = pools
        self.hostility = hostility
        """The chance that a value is hostile rather than plausible."""

    def hostile(self) -> bool:
        return self.rng.random() < self.hostility

    def integer(self, f: FieldDescriptor) -> int:
        rng = self.rng
        low, high, edges = _RANGES[f.type]
        if self.hostile():
            return rng.choice(edges) if rng.random() < 0.8 else rng.randint(low, high)
        if "version" in f.name and self.pools.versions and rng.random() < 0.6:
            return rng.choice(self.pools.versions)
        value = rng.choice((rng.randint(0, 7), rng.randint(0, 60), rng.randint(0, 27)))
        return max(low, min(high, value))

    def enum(self, f: FieldDescriptor) -> int:
        if self.hostile():
            return self.rng.choice((-1, 99, 2**31 - 1, -(2**31), self.rng.randint(-5, 40)))
        return self.rng.choice(f.enum_type.values).number

    def text(self, f: FieldDescriptor) -> str:
        rng, pools, name = self.rng, self.pools, f.name
        if self.hostile():
            roll = rng.random()
            if roll < 0.6:
                return rng.choice(_HOSTILE_TEXT)
            if roll < 0.8:
                return _unicode(rng, 40)
            return _printable(rng, 300)
        if name.endswith("game_id") and pools.game_ids:
            return _id_variant(rng, rng.choice(pools.game_ids))
        if name.endswith("tournament_id") and pools.tournament_ids:
            return _id_variant(rng, rng.choice(pools.tournament_ids))
        if name.endswith("_id"):
            return _uuid(rng)
        names = name in ("account_name", "entrants", "player_name") and pools.account_names
        if names and rng.random() < 0.7:
            return rng.choice(pools.account_names)
        if name == "preset":
            return rng.choice(_PRESETS)
        return rng.choice(("fuzz", "north", "a b", _printable(rng, 12), _uuid(rng)))

    def blob(self, f: FieldDescriptor) -> bytes:
        rng = self.rng
        if self.hostile():
            return rng.choice((b"", b"\x00" * 32, rng.randbytes(rng.randint(1, 300)), b"\xff" * 9))
        return rng.randbytes(rng.choice((32, 16, 0, 64)))


# ---------------------------------------------------------------------------- messages


def _message_class(descriptor: Descriptor) -> type[Message]:
    return message_factory.GetMessageClass(descriptor)


def _is_map(f: FieldDescriptor) -> bool:
    return f.type == F.TYPE_MESSAGE and f.message_type.GetOptions().map_entry


def _scalar(values: _Values, f: FieldDescriptor) -> object:
    if f.type in _RANGES:
        return values.integer(f)
    if f.type == F.TYPE_BOOL:
        return values.rng.random() < 0.5
    if f.type == F.TYPE_ENUM:
        return values.enum(f)
    if f.type == F.TYPE_STRING:
        return values.text(f)
    if f.type == F.TYPE_BYTES:
        return values.blob(f)
    if f.type in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return values.rng.choice(_FLOATS)
    raise AssertionError(f"no values for field {f.full_name} of type {f.type}")


def _fill(message: Message, values: _Values, depth: int) -> None:
    """Set some of ``message``'s fields (at most one of each oneof), down to ``depth``."""
    rng = values.rng
    descriptor = message.DESCRIPTOR
    if descriptor.full_name == "google.protobuf.Timestamp":
        message.seconds = rng.choice(_SECONDS) if values.hostile() else 1_700_000_000  # type: ignore[attr-defined]
        message.nanos = rng.choice(_NANOS) if values.hostile() else 0  # type: ignore[attr-defined]
        return
    real = values.pools.corpus.get(descriptor.full_name)
    if real and rng.random() < 0.4:
        message.MergeFromString(rng.choice(real))
        if rng.random() < 0.5:
            return  # the real message as it is; else a few fields changed below
    chosen_oneof: dict[str, str] = {}
    for oneof in descriptor.oneofs:
        chosen_oneof[oneof.name] = rng.choice(oneof.fields).name
    for f in descriptor.fields:
        oneof = f.containing_oneof
        if oneof is not None and chosen_oneof[oneof.name] != f.name:
            continue
        if rng.random() < 0.35:
            continue
        _set(message, f, values, depth)


def _set(message: Message, f: FieldDescriptor, values: _Values, depth: int) -> None:
    rng = values.rng
    if _is_map(f):
        entries = getattr(message, f.name)
        for _ in range(rng.randint(0, 3)):
            key_field, value_field = (
                f.message_type.fields_by_name["key"],
                f.message_type.fields_by_name["value"],
            )
            key = _scalar(values, key_field)
            if value_field.type == F.TYPE_MESSAGE:
                _fill(entries[key], values, depth - 1)
            else:
                entries[key] = _scalar(values, value_field)
        return
    if f.type == F.TYPE_MESSAGE:
        if depth <= 0:
            return
        if f.is_repeated:
            for _ in range(rng.choice((0, 1, 1, 2, 3, 8))):
                _fill(getattr(message, f.name).add(), values, depth - 1)
        else:
            child = getattr(message, f.name)
            child.SetInParent()
            _fill(child, values, depth - 1)
        return
    if f.is_repeated:
        count = rng.choice((0, 1, 2, 3, 4, 5, 7, 100)) if values.hostile() else rng.randint(0, 5)
        getattr(message, f.name).extend(_scalar(values, f) for _ in range(count))
    else:
        setattr(message, f.name, _scalar(values, f))


def _message(method: Method, values: _Values) -> Message:
    message = _message_class(method.request)()
    _fill(message, values, depth=4)
    return message


def _one_hostile(method: Method, rng: random.Random, pools: Pools) -> Message:
    """A plausible message with one field, anywhere in it, given a hostile value: the other
    fields pass validation, so the value reaches as far as it may (a lookup, the database)."""
    message = _message(method, _Values(rng, pools, hostility=0.0))
    paths = _scalar_paths(method.request, [])
    if not paths:
        return message
    *outer, leaf = rng.choice(paths)
    holder = message
    for f in outer:
        if f.is_repeated:
            items = getattr(holder, f.name)
            holder = rng.choice(items) if len(items) and rng.random() < 0.7 else items.add()
        else:
            holder = getattr(holder, f.name)
            holder.SetInParent()
    value = _scalar(_Values(rng, pools, hostility=1.0), leaf)
    if leaf.is_repeated:
        getattr(holder, leaf.name).append(value)
    else:
        setattr(holder, leaf.name, value)
    return message


def _scalar_paths(
    descriptor: Descriptor, prefix: list[FieldDescriptor]
) -> list[list[FieldDescriptor]]:
    """Every path (message fields, then a field not of a message) within four levels."""
    paths: list[list[FieldDescriptor]] = []
    for f in descriptor.fields:
        if _is_map(f):
            continue
        if f.type != F.TYPE_MESSAGE:
            paths.append([*prefix, f])
        elif len(prefix) < 3:
            paths.extend(_scalar_paths(f.message_type, [*prefix, f]))
    return paths


def _encode(message: Message) -> bytes:
    return message.SerializeToString()


# ------------------------------------------------------------------------------- bytes


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _tag(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _field_numbers(descriptor: Descriptor) -> list[int]:
    return [f.number for f in descriptor.fields] or [1]


def _mutate(data: bytes, rng: random.Random, descriptor: Descriptor) -> bytes:
    """``data`` with one to three random edits: cut, changed, inserted or repeated bytes, a
    field of another wire type, an overlong varint, a length prefix past the end."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        edit = rng.randrange(8)
        at = rng.randint(0, len(out))
        if edit == 0 and out:
            del out[rng.randrange(len(out)) :]
        elif edit == 1 and out:
            for _ in range(rng.randint(1, 4)):
                out[rng.randrange(len(out))] = rng.randrange(256)
        elif edit == 2:
            out[at:at] = rng.randbytes(rng.randint(1, 8))
        elif edit == 3 and out:
            start = rng.randrange(len(out))
            piece = out[start : start + rng.randint(1, 32)]
            out[at:at] = piece * rng.randint(2, 50)
        elif edit == 4:
            number = rng.choice([*_field_numbers(descriptor), rng.randint(1, 2**29 - 1)])
            out[at:at] = _tag(number, rng.choice((0, 1, 2, 5))) + rng.randbytes(rng.randint(0, 9))
        elif edit == 5:
            number = rng.choice(_field_numbers(descriptor))
            out += _tag(number, 0) + b"\xff" * rng.randint(9, 12) + b"\x01"
        elif edit == 6:
            number = rng.choice(_field_numbers(descriptor))
            out += _tag(number, 2) + _varint(rng.choice((2**31, 2**32 + 5, 2**63))) + b"xyz"
        elif out:
            out = out[: rng.randrange(len(out))]
    return bytes(out)


def _deep(rng: random.Random, descriptor: Descriptor) -> bytes:
    """A known field's number opening groups (or length-delimited fields) nested thousands
    deep: a parser that recursed without a limit would exhaust the stack."""
    number = rng.choice(_field_numbers(descriptor))
    depth = rng.choice((101, 200, 5_000, 50_000))
    if rng.random() < 0.5:
        return _tag(number, 3) * depth + _tag(number, 4) * depth
    inner = b""
    for _ in range(min(depth, 5_000)):
        inner = _tag(number, 2) + _varint(len(inner)) + inner
    return inner


def _grown(method: Method, values: _Values) -> bytes:
    """A plausible message with one repeated, string or bytes field (perhaps of a
    sub-message) grown to just under, or just over, the size limit (over it: gRPC itself
    answers RESOURCE_EXHAUSTED). Built as bytes: a field repeated on the wire merges, so the
    growth can follow the message."""
    rng = values.rng
    base = _encode(_message(method, values))
    target = MAX_REQUEST_BYTES + rng.choice((-4096, -64 * 1024, 1024)) - len(base)
    path = _growable(method.request, rng)
    if not path:
        return base + _tag(rng.randint(1000, 2000), 2) + _varint(target) + b"\x00" * target
    *outer, f = path
    if f.type == F.TYPE_MESSAGE:
        item = _message_class(f.message_type)()
        _fill(item, values, 2)
        one = _tag(f.number, 2) + _varint(len(_encode(item))) + _encode(item)
        inner = one * max(target // len(one), 1)
    elif f.type in (F.TYPE_STRING, F.TYPE_BYTES):
        if f.is_repeated:
            one = _tag(f.number, 2) + _varint(97) + b"x" * 97
            inner = one * (target // len(one))
        else:
            inner = _tag(f.number, 2) + _varint(target) + b"A" * target
    else:
        wire = {
            F.TYPE_FIXED64: 1,
            F.TYPE_SFIXED64: 1,
            F.TYPE_DOUBLE: 1,
            F.TYPE_FIXED32: 5,
            F.TYPE_SFIXED32: 5,
            F.TYPE_FLOAT: 5,
        }.get(f.type, 0)
        value = {0: b"\x01", 1: b"\x00" * 8, 5: b"\x00" * 4}[wire]
        one = _tag(f.number, wire) + value
        inner = one * (target // len(one))
    for parent in reversed(outer):
        inner = _tag(parent.number, 2) + _varint(len(inner)) + inner
    return base + inner


def _growable(descriptor: Descriptor, rng: random.Random) -> list[FieldDescriptor]:
    """The path (message fields, then the field) to a field within two levels of
    ``descriptor`` that can hold a lot: a repeated field, a string or bytes."""
    paths: list[list[FieldDescriptor]] = []

    def walk(d: Descriptor, prefix: list[FieldDescriptor]) -> None:
        for f in d.fields:
            if _is_map(f):
                continue
            if f.is_repeated or f.type in (F.TYPE_STRING, F.TYPE_BYTES):
                paths.append([*prefix, f])
            elif f.type == F.TYPE_MESSAGE and len(prefix) < 2:
                walk(f.message_type, [*prefix, f])

    walk(descriptor, [])
    return rng.choice(paths) if paths else []


# ------------------------------------------------------------------------- credentials


def _credential(rng: random.Random, pools: Pools) -> Credential:
    roll = rng.random()
    if roll < 0.3:
        return Credential("none")
    if roll < 0.5 and pools.seat_tokens:
        return _bearer("seat token", rng.choice(pools.seat_tokens))
    if roll < 0.65 and pools.account_keys:
        return _bearer("account key", rng.choice(pools.account_keys))
    bogus: tuple[Callable[[], Credential], ...] = (
        lambda: _bearer("bogus token", rng.choice(string.ascii_letters) + _uuid(rng)),
        lambda: _bearer("bogus key", "byk_" + _uuid(rng)),
        lambda: _bearer("empty bearer", ""),
        lambda: Credential("no scheme", (("authorization", _uuid(rng)),)),
        lambda: Credential("basic", (("authorization", "Basic dXNlcjpwYXNz"),)),
        lambda: _bearer("long token", "A" * rng.choice((4_000, 7_000))),
        lambda: _bearer("unprintable-ish token", _printable(rng, 60).strip() or "x"),
        lambda: Credential(
            "two headers",
            (("authorization", "Bearer " + _uuid(rng)), ("authorization", "Bearer zz")),
        ),
    )
    return rng.choice(bogus)()


def _bearer(kind: str, token: str) -> Credential:
    text = "".join(ch for ch in f"Bearer {token}" if " " <= ch <= "~")  # metadata is ASCII
    return Credential(kind, (("authorization", text),))


# ---------------------------------------------------------------------------- requests

_KINDS: tuple[tuple[str, float], ...] = (
    ("plausible", 0.2),
    ("one hostile value", 0.2),
    ("hostile", 0.15),
    ("mutated", 0.2),
    ("random bytes", 0.15),
    ("deep", 0.04),
    ("real", 0.05),
    ("grown", 0.01),
)


def make_request(seed: int, index: int, all_methods: Sequence[Method], pools: Pools) -> Request:
    """Request ``index`` of the run with ``seed``: the same pools make the same request."""
    rng = random.Random(f"{seed}:{index}")
    method = rng.choice(all_methods)  # the first draw: method_of() makes it alone
    kind = rng.choices([k for k, _ in _KINDS], [w for _, w in _KINDS])[0]
    payload = _payload(kind, method, rng, pools)
    return Request(index, method, kind, payload, _credential(rng, pools))


def method_of(seed: int, index: int, all_methods: Sequence[Method]) -> Method:
    """The method request ``index`` of ``seed`` calls (whatever the pools)."""
    return random.Random(f"{seed}:{index}").choice(all_methods)


def _payload(kind: str, method: Method, rng: random.Random, pools: Pools) -> bytes:
    if kind == "random bytes":
        return rng.randbytes(rng.choice((1, 2, 5, 16, 64, 300, 4096)))
    if kind == "deep":
        return _deep(rng, method.request)
    if kind == "real":
        real = pools.corpus.get(method.request.full_name)
        if real:
            return rng.choice(real)
        kind = "plausible"
    if kind == "grown":
        return _grown(method, _Values(rng, pools, hostility=0.1))
    if kind == "one hostile value":
        return _encode(_one_hostile(method, rng, pools))
    hostility = {"plausible": 0.05, "hostile": 0.6, "mutated": 0.1}[kind]
    payload = _encode(_message(method, _Values(rng, pools, hostility)))
    if kind == "mutated":
        payload = _mutate(payload, rng, method.request)
    return payload
