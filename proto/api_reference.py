"""Write the API reference, ``docs/api-reference.md``, from the API's descriptor set with its
comments (``api/v1/descriptors.binpb``, which ``generate.py`` makes with protoc's source info):
every service and method (request, response, streaming, side effects, the reasons it may be
refused with), every message and field, every enum and value, and every error reason with the
methods that send it, each with its comment from the .proto files. ``make proto`` runs it
(through ``generate.py``); ``tests/api/test_reference_is_fresh.py`` fails when the checked-in
reference is not what the .proto files make.

A method's comment ends with the reasons it may be refused with, besides those of every method
(named once, in ``ErrorReason``'s comment)::

    // Refusals: BAD_GAME_ID, GAME_NOT_FOUND.

and the reference refuses to be written when a method names none (``Refusals: none.`` says so
outright) or names a reason that is not an ``ErrorReason``: a refusal is documented where a
client author reads the method, and cannot name a reason the API does not have.

    python proto/api_reference.py [--descriptor-set FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from protobuf import (
    DescEnum,
    DescField,
    DescFieldValueEnum,
    DescFieldValueList,
    DescFieldValueMap,
    DescFieldValueMessage,
    DescFieldValueScalar,
    DescFile,
    DescMessage,
    DescMethod,
    DescOneof,
    DescService,
    Registry,
    ScalarType,
)
from protobuf.plugin import get_comments, get_syntax_comments
from protobuf.wkt import FileDescriptorSet

__all__ = [
    "API_PACKAGE",
    "COMMON_REFUSALS",
    "REFUSALS",
    "Api",
    "ReferenceError",
    "load",
    "main",
    "method_refusals",
    "render",
]

ROOT = Path(__file__).resolve().parents[1]
API_PACKAGE = "boneyard.v1"
REASONS_ENUM = f"{API_PACKAGE}.ErrorReason"
REASON_PREFIX = "ERROR_REASON_"
REFUSALS = "Refusals:"
"""Starts the line of a method's comment that names its own refusals."""
COMMON_REFUSALS = "Refusals of every method:"
"""Starts the line of ``ErrorReason``'s comment that names those every method may answer."""
_REASON = re.compile(r"[A-Z][A-Z0-9_]*")


class ReferenceError(Exception):
    """The comments break a rule of the reference (see the module's doc)."""


@dataclass(frozen=True)
class Api:
    """The API's descriptors: its files (in a stable order) and their registry."""

    files: tuple[DescFile, ...]
    registry: Registry

    @property
    def services(self) -> list[DescService]:
        """Every service, GameService (where a client starts) first, then as the files
        declare them."""
        found = [s for f in self.files for s in f.services]
        return sorted(found, key=lambda s: s.name != "GameService")

    def reasons(self) -> DescEnum:
        found = self.registry.enum(REASONS_ENUM)
        if found is None:
            raise ReferenceError(f"the API has no enum {REASONS_ENUM}")
        return found

    def reason_names(self) -> list[str]:
        return [v.name.removeprefix(REASON_PREFIX) for v in self.reasons().values if v.number != 0]


def load(descriptor_set: bytes) -> Api:
    """The API's files (``boneyard/...``, by name) of a ``FileDescriptorSet``."""
    registry = FileDescriptorSet.from_binary(descriptor_set).to_registry()
    files = sorted(
        (f for f in registry if isinstance(f, DescFile) and f.proto.package == API_PACKAGE),
        key=lambda f: f.name,
    )
    if not files:
        raise ReferenceError(f"no file of the package {API_PACKAGE} in the descriptor set")
    return Api(tuple(files), registry)


# ---------------------------------------------------------------- comments


def _comment(text: str | None) -> list[str]:
    """A comment's lines, without the one space after ``//`` and the blank edges."""
    if not text:
        return []
    lines = [line.removeprefix(" ") for line in text.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


def _doc(desc: object) -> list[str]:
    comments = get_comments(desc)  # type: ignore[arg-type]
    lines = _comment(comments.leading)
    trailing = _comment(comments.trailing)
    if lines and trailing:
        lines.append("")
    return lines + trailing


def _split_refusals(lines: list[str], marker: str) -> tuple[list[str], list[str] | None]:
    """The comment without its refusals paragraph, and the reasons it names (``None``: no
    such paragraph)."""
    for i, line in enumerate(lines):
        if line.startswith(marker):
            end = i + 1
            while end < len(lines) and lines[end].strip():
                end += 1
            words = " ".join(lines[i:end])[len(marker) :].strip().rstrip(".")
            rest = lines[:i] + lines[end:]
            while rest and not rest[-1].strip():
                rest.pop()
            if words.lower() == "none":
                return rest, []
            return rest, [w.strip() for w in words.split(",")]
    return lines, None


def method_refusals(api: Api) -> dict[str, list[str]]:
    """Each method's own reasons (``/package.Service/Method`` to names without the prefix),
    as its comment names them, each checked to be an ``ErrorReason``."""
    known = set(api.reason_names())
    found: dict[str, list[str]] = {}
    for service in api.services:
        for method in service.methods:
            path = f"/{service.type_name}/{method.name}"
            _, reasons = _split_refusals(_doc(method), REFUSALS)
            if reasons is None:
                raise ReferenceError(
                    f"{path}: its comment names no refusals (a last paragraph "
                    f"'{REFUSALS} A, B.', or '{REFUSALS} none.')"
                )
            _check_reasons(path, reasons, known)
            found[path] = reasons
    return found


def common_refusals(api: Api) -> list[str]:
    """The reasons every method may answer, as ``ErrorReason``'s comment names them."""
    _, reasons = _split_refusals(_doc(api.reasons()), COMMON_REFUSALS)
    if reasons is None:
        raise ReferenceError(f"{REASONS_ENUM}: its comment has no '{COMMON_REFUSALS}' line")
    _check_reasons(REASONS_ENUM, reasons, set(api.reason_names()))
    return reasons


def _check_reasons(where: str, reasons: list[str], known: set[str]) -> None:
    for reason in reasons:
        if not _REASON.fullmatch(reason):
            raise ReferenceError(f"{where}: {reason!r} is not a reason's name")
        if reason not in known:
            raise ReferenceError(f"{where}: {reason} is not an {REASONS_ENUM} value")
    if len(set(reasons)) != len(reasons):
        raise ReferenceError(f"{where}: a reason is named twice")


# ---------------------------------------------------------------- markdown


def _escaped(text: str) -> str:
    """``<`` and ``>`` outside code spans, which markdown would take for HTML."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _paragraphs(lines: Iterable[str], indent: str = "") -> list[str]:
    return [f"{indent}{_escaped(line)}".rstrip() for line in lines]


def _anchor(name: str) -> str:
    """An id for a name (a type's full name, a file's path) that markdown keeps as it is."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower())


def _link(desc: DescMessage | DescEnum) -> str:
    if desc.file.proto.package != API_PACKAGE:
        return f"`{desc.type_name}`"
    return f"[`{_short(desc)}`](#{_anchor(desc.type_name)})"


def _short(desc: DescMessage | DescEnum) -> str:
    return desc.type_name.removeprefix(API_PACKAGE + ".")


def _scalar(kind: ScalarType) -> str:
    return kind.name.lower()


def _element(element: DescMessage | DescEnum | ScalarType) -> str:
    if isinstance(element, ScalarType):
        return f"`{_scalar(element)}`"
    return _link(element)


def _field_type(field: DescField) -> str:
    match field.value:
        case DescFieldValueScalar(scalar=scalar):
            kind = f"`{_scalar(scalar)}`"
        case DescFieldValueEnum(enum=enum):
            kind = _link(enum)
        case DescFieldValueMessage(message=message):
            kind = _link(message)
        case DescFieldValueList(element=element):
            kind = f"repeated {_element(element)}"
        case DescFieldValueMap(key=key, value=value):
            kind = f"map of `{_scalar(key)}` to {_element(value)}"
        case _:  # pragma: no cover - every kind of field is above
            raise ReferenceError(f"{field.parent.type_name}.{field.name}: unknown kind")
    if field.proto.proto3_optional:
        kind = f"optional {kind}"
    return kind


def _oneof_of(field: DescField) -> DescOneof | None:
    value = field.value
    if isinstance(value, DescFieldValueScalar | DescFieldValueEnum | DescFieldValueMessage):
        return value.oneof
    return None


def _method_kind(method: DescMethod) -> str:
    return {
        "unary": "unary",
        "server_streaming": "server stream",
        "client_streaming": "client stream",
        "bidi_streaming": "bidirectional stream",
    }[method.method_kind]


def _side_effects(method: DescMethod) -> str:
    level = method.proto.options.idempotency_level if method.proto.options else 0
    if level == 1:  # NO_SIDE_EFFECTS
        return (
            "none (`idempotency_level = NO_SIDE_EFFECTS`): a read, which a Connect client "
            "may also send as an HTTP GET"
        )
    if level == 2:  # IDEMPOTENT
        return "idempotent (`idempotency_level = IDEMPOTENT`)"
    return "may change something"


def _reason_link(reason: str) -> str:
    return f"[`{reason}`](#reason-{reason.lower().replace('_', '-')})"


def _service_section(service: DescService, refusals: dict[str, list[str]]) -> Iterator[str]:
    yield f'<a id="{_anchor(service.type_name)}"></a>'
    yield ""
    yield f"### `{service.name}`"
    yield ""
    yield from _paragraphs(_doc(service))
    yield ""
    yield f"Defined in `{service.file.name}`."
    yield ""
    for method in service.methods:
        path = f"/{service.type_name}/{method.name}"
        yield f'<a id="{_anchor(service.type_name + "." + method.name)}"></a>'
        yield ""
        yield f"#### `{service.name}.{method.name}`"
        yield ""
        text, _ = _split_refusals(_doc(method), REFUSALS)
        yield from _paragraphs(text)
        yield ""
        stream = " (a stream of them)" if method.method_kind == "server_streaming" else ""
        yield f"- Request: {_link(method.input)}; response: {_link(method.output)}{stream}"
        yield f"- Kind: {_method_kind(method)}; path `{path}`"
        yield f"- Side effects: {_side_effects(method)}"
        own = refusals[path]
        named = ", ".join(_reason_link(r) for r in own)
        every = "[those of every method](#refusals-of-every-method)"
        yield f"- Refusals: {named + ', and ' + every if own else every}"
        yield ""


def _field_lines(field: DescField) -> Iterator[str]:
    oneof = _oneof_of(field)
    where = f", one of `{oneof.name}`" if oneof is not None else ""
    doc = _doc(field)
    head = f"- `{field.name}` ({_field_type(field)}, {field.number}{where})"
    if not doc:
        yield head
        return
    yield f"{head}: {_escaped(doc[0])}".rstrip()
    yield from _paragraphs(doc[1:], "  ")


def _message_section(message: DescMessage, level: int) -> Iterator[str]:
    yield f'<a id="{_anchor(message.type_name)}"></a>'
    yield ""
    yield f"{'#' * level} `{_short(message)}`"
    yield ""
    yield from _paragraphs(_doc(message))
    yield ""
    for field in message.fields:
        yield from _field_lines(field)
    yield "" if message.fields else "No fields."
    if not message.fields:
        yield ""
    for oneof in message.oneofs:
        doc = _doc(oneof)
        names = ", ".join(f"`{f.name}`" for f in oneof.fields)
        yield f"One of `{oneof.name}` ({names}): {_escaped(' '.join(doc))}".rstrip()
        yield ""
    for enum in message.nested_enums:
        yield from _enum_section(enum, level + 1)
    for nested in message.nested_messages:
        yield from _message_section(nested, level + 1)


def _enum_section(enum: DescEnum, level: int) -> Iterator[str]:
    yield f'<a id="{_anchor(enum.type_name)}"></a>'
    yield ""
    yield f"{'#' * level} `{_short(enum)}`"
    yield ""
    yield from _paragraphs(_doc(enum))
    yield ""
    for value in enum.values:
        doc = _doc(value)
        head = f"- `{value.name}` ({value.number})"
        if doc:
            yield f"{head}: {_escaped(doc[0])}".rstrip()
            yield from _paragraphs(doc[1:], "  ")
        else:
            yield head
    yield ""


def _reasons_section(api: Api, refusals: dict[str, list[str]], common: list[str]) -> Iterator[str]:
    reasons = api.reasons()
    text, _ = _split_refusals(_doc(reasons), COMMON_REFUSALS)
    yield '<a id="boneyard-v1-errorreason"></a>'
    yield ""
    yield "## Error reasons"
    yield ""
    yield (
        "A refusal's `google.rpc.ErrorInfo` has the domain `boneyard.v1` and as its `reason` "
        "one of these names (the `ErrorReason` value's name without `ERROR_REASON_`)."
    )
    yield ""
    yield from _paragraphs(text)
    yield ""
    yield '<a id="refusals-of-every-method"></a>'
    yield ""
    yield "### Refusals of every method"
    yield ""
    yield "Any call may be refused with " + ", ".join(_reason_link(r) for r in common) + "."
    yield ""
    yield "### The reasons"
    yield ""
    senders: dict[str, list[str]] = {}
    for path, own in refusals.items():
        for reason in own:
            senders.setdefault(reason, []).append(path)
    for value in reasons.values:
        if value.number == 0:
            continue
        # The enum's comments between its groups of values ("The request itself ...").
        for detached in get_comments(value).leading_detached:
            yield from _paragraphs(_comment(detached))
            yield ""
        name = value.name.removeprefix(REASON_PREFIX)
        yield f'<a id="reason-{name.lower().replace("_", "-")}"></a>'
        yield ""
        yield f"#### `{name}`"
        yield ""
        yield from _paragraphs(_doc(value))
        yield ""
        methods = [
            f"[`{p.split('/')[1].removeprefix(API_PACKAGE + '.')}.{p.split('/')[2]}`]"
            f"(#{_anchor(p.split('/')[1] + '.' + p.split('/')[2])})"
            for p in senders.get(name, [])
        ]
        if name in common:
            yield "Sent by: any method."
        elif methods:
            yield "Sent by: " + ", ".join(methods) + "."
        else:
            yield "Sent by: no method of this version."
        yield ""
        yield f"Enum value: `{value.name}` = {value.number}."
        yield ""


def render(descriptor_set: bytes) -> str:
    """The reference (markdown) of the API in ``descriptor_set``."""
    api = load(descriptor_set)
    refusals = method_refusals(api)
    common = common_refusals(api)
    out: list[str] = [
        f"# API reference: `{API_PACKAGE}`",
        "",
        (
            "<!-- Generated by `make proto` (proto/api_reference.py) from the comments of "
            "proto/boneyard/v1/*.proto: edit those, not this file. -->"
        ),
        "",
        (
            "Every service, method, message, field, enum and error reason of the API, with its "
            "documentation from the `.proto` files in "
            "[`proto/boneyard/v1/`](../proto/boneyard/v1/). The same comments come with server "
            "reflection on both of the server's ports, so `grpcurl describe` and `buf curl` "
            "show them too. Generated by `make proto`; a test fails when it is stale."
        ),
        "",
        "## Contents",
        "",
        "- [Services](#services): "
        + ", ".join(f"[`{s.name}`](#{_anchor(s.type_name)})" for s in api.services),
        "- Messages and enums, by file: "
        + ", ".join(f"[`{f.name}`](#{_anchor(f.name)})" for f in api.files),
        "- [Error reasons](#boneyard-v1-errorreason)",
        "",
        "## Services",
        "",
    ]
    for service in api.services:
        out.extend(_service_section(service, refusals))
    for file in api.files:
        out.append(f'<a id="{_anchor(file.name)}"></a>')
        out.append("")
        out.append(f"## `{file.name}`")
        out.append("")
        about = _comment(get_syntax_comments(file).leading)
        if about:
            out.extend(_paragraphs(about))
            out.append("")
        for message in file.messages:
            out.extend(_message_section(message, 3))
        for enum in file.enums:
            if enum.type_name == REASONS_ENUM:
                out.append(
                    f"The enum `ErrorReason`: see [Error reasons](#{_anchor(REASONS_ENUM)})."
                )
                out.append("")
                continue
            out.extend(_enum_section(enum, 3))
    out.extend(_reasons_section(api, refusals, common))
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--descriptor-set", type=Path, default=ROOT / "api" / "v1" / "descriptors.binpb"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "api-reference.md")
    args = parser.parse_args(argv)
    try:
        args.out.write_text(render(args.descriptor_set.read_bytes()))
    except ReferenceError as error:
        raise SystemExit(f"api_reference: {error}") from None
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
