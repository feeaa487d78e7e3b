"""What a person types at the table, read against the legal actions of the seat's view.

A choice is typed by its number in the menu (``3``, or ``#3``), by its key as the menu shows it
(``pass``, ``31``, ``42``, ``6-4``, ``sixes``), or as players say it (``84``, ``2 marks``,
``1 mark``, ``4-6``, ``follow me``, ``bid 30``, ``play 6-4``). Only the view's legal actions are
ever chosen: a text naming none of them raises ``NoSuchChoice``, one naming several raises
``AmbiguousChoice``. A well-formed action that is not legal now (a bid too low, a tile that does
not follow) raises ``NotLegal`` carrying it, so that the caller can ask the server, the rules'
authority, why (and show the engine's reason).

A number that is the label of a legal choice (a bid of ``30`` in Texas 42, ``5`` tricks in Moon,
a tile ``64``) is that choice; any other number in the menu's range is the menu's choice. In Moon
``42`` is the overcall (``overcall``, ``shoot for 42``), never a number of tricks.

``help`` or ``?`` (``HELP_WORDS``) at a prompt asks what may be typed there: ``help_lines``
says it for the choices of the moment, each line whole within 80 columns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from boneyard.api.v1 import actions_pb2, rules_pb2
from boneyard.clients.describe import bid_label, contract_text, count_text
from boneyard.engine.tiles import parse_tile, tile_name

__all__ = [
    "HELP_WORDS",
    "AmbiguousChoice",
    "ChoiceError",
    "NoSuchChoice",
    "NotLegal",
    "choice_label",
    "help_lines",
    "parse_choice",
]

HELP_WORDS = frozenset({"help", "?"})
"""What asks a prompt for its help: what may be typed there."""


class ChoiceError(ValueError):
    """Typed text that chooses no legal action; the message says why."""


class NoSuchChoice(ChoiceError):
    """The text names none of the legal actions (and no action at all)."""


class AmbiguousChoice(ChoiceError):
    """The text names more than one legal action."""


class NotLegal(ChoiceError):
    """The text names a well-formed action that is not legal now."""

    def __init__(self, message: str, action: actions_pb2.Action) -> None:
        super().__init__(message)
        self.action = action


_MARKS = rules_pb2.BID_KIND_MARKS
_MOON_KINDS = (rules_pb2.BID_KIND_TRICKS, rules_pb2.BID_KIND_MOON, rules_pb2.BID_KIND_OVERCALL)
_MOON_WORDS = {"moon", "the moon", "shoot the moon"}
_OVERCALL_WORDS = {"overcall", "the overcall", "42", "overcall 42", "shoot for 42"}
_VERBS = ("bid ", "play ", "declare ", "call ")


def choice_label(action: actions_pb2.Action) -> str:
    """The action as the menu shows it, short, and typeable as it stands."""
    which = action.WhichOneof("kind")
    if which == "bid":
        return bid_label(action.bid)
    if which == "pass_bid":
        return "pass"
    if which == "exchange_widow":
        return f"lay out {tile_name(action.exchange_widow.discard)}"
    if which == "decline_widow":
        return "leave the widow"
    if which == "declare_contract":
        return contract_text(action.declare_contract)
    if which == "play_tile":
        return tile_name(action.play_tile.tile)
    return "?"


def help_lines(
    legal: Sequence[actions_pb2.Action], *, resign: bool = True, width: int = 80
) -> list[str]:
    """What may be typed to choose among ``legal`` (and at the table besides), said with the
    choices of the moment as examples; each line within ``width`` columns."""
    n = len(legal)
    lines = [f"type a choice's number, 1 to {n} (#{n} is always the menu's), or as it is shown"]
    kinds = {a.WhichOneof("kind") for a in legal}
    bids = [a.bid for a in legal if a.WhichOneof("kind") == "bid"]
    if bids or "pass_bid" in kinds:
        said = _bids_as_said(bids) + (["pass (or p)"] if "pass_bid" in kinds else [])
        lines.extend(_packed("bid: ", said, width))
    named = [choice_label(a) for a in legal if a.WhichOneof("kind") == "declare_contract"]
    if named:
        example = "sixes" if "sixes" in named else named[0]
        singular = f" (or {_singular(example)})" if _singular(example) else ""
        lines.append(f"trump by its name as shown, e.g. {example}{singular}")
    if "play_tile" in kinds:
        tile = next(a.play_tile.tile for a in legal if a.WhichOneof("kind") == "play_tile")
        high, low = tile_name(tile).split("-")
        lines.append(f"a tile either way round: {high}-{low}, {low}-{high} or {high}{low}")
    discards = [a.exchange_widow.discard for a in legal if a.WhichOneof("kind") == "exchange_widow"]
    if discards:
        lines.append(f"the widow: lay out {tile_name(discards[0])} (a tile you give up for it)")
    if "decline_widow" in kinds:
        lines.append("leave (or keep): leave the widow as it lies")
    if resign:
        lines.append("resign: give up the game · Ctrl-C: leave the table (or keep your seat)")
    lines.append("help or ?: this list")
    return lines


def _packed(head: str, phrases: Sequence[str], width: int) -> list[str]:
    """``head`` and ``phrases`` separated by commas on as few lines as fit ``width``, each
    phrase whole (the lines after the first indented under the first phrase)."""
    lines, line, indent = [], head, " " * len(head)
    for i, phrase in enumerate(phrases):
        piece = f", {phrase}" if i else phrase
        if i and len(line) + len(piece) > width:
            lines.append(line + ",")
            line, piece = indent, phrase
        line += piece
    return [*lines, line]


def _bids_as_said(bids: Sequence[rules_pb2.Bid]) -> list[str]:
    """The bids of each kind as the help says them: ``30 to 41``, ``42 or 1 mark, 84 or 2
    marks ...``,
    ``plunge 4 marks``, Moon ``4 to 7``, ``moon or shoot the moon``, ``overcall or 42``."""
    by_kind: dict[rules_pb2.BidKind.ValueType, list[int]] = {}
    for bid in bids:
        by_kind.setdefault(bid.kind, []).append(bid.amount)
    said = []
    for kind, amounts in by_kind.items():
        low, high = min(amounts), max(amounts)
        if kind in (rules_pb2.BID_KIND_POINTS, rules_pb2.BID_KIND_TRICKS):
            said.append(str(low) if low == high else f"{low} to {high}")
        elif kind == _MARKS:
            more = f", {42 * (low + 1)} or {count_text(low + 1, 'marks')}" if high > low else ""
            said.append(f"{42 * low} or {count_text(low, 'marks')}{more}")
        elif kind == rules_pb2.BID_KIND_MOON:
            said.append("moon or shoot the moon")
        elif kind == rules_pb2.BID_KIND_OVERCALL:
            said.append("overcall or 42")
        else:
            said.append(bid_label(rules_pb2.Bid(kind=kind, amount=low)))
    return said


def _normal(text: str) -> str:
    s = " ".join(text.lower().replace("_", " ").split())
    for verb in _VERBS:
        s = s.removeprefix(verb)
    return s.strip()


def _spellings(action: actions_pb2.Action) -> set[str]:
    """Every normalised text that names ``action``."""
    which = action.WhichOneof("kind")
    label = _normal(choice_label(action))
    names = {label}
    if which == "bid":
        bid = action.bid
        n = bid.amount
        if bid.kind == _MARKS:
            names |= {str(42 * n), count_text(n, "marks"), f"{n} marks", f"{n} mark"}
        elif bid.kind == rules_pb2.BID_KIND_TRICKS:
            names |= {count_text(n, "tricks"), f"{n} tricks"}
        elif bid.kind == rules_pb2.BID_KIND_MOON:
            names |= _MOON_WORDS
        elif bid.kind == rules_pb2.BID_KIND_OVERCALL:
            names |= _OVERCALL_WORDS
        elif bid.kind in (rules_pb2.BID_KIND_PLUNGE, rules_pb2.BID_KIND_SPLASH):
            word = "plunge" if bid.kind == rules_pb2.BID_KIND_PLUNGE else "splash"
            names |= {word, f"{word} {n}", f"{word} {n} marks"}
    elif which == "pass_bid":
        names |= {"p"}
    elif which == "declare_contract":
        if label == "follow-me":
            names |= {"follow me", "followme", "no trump", "no trumps"}
        elif _singular(label):
            names.add(_singular(label))
    elif which == "play_tile":
        names |= _tile_spellings(action.play_tile.tile)
    elif which == "exchange_widow":
        t = action.exchange_widow.discard
        for s in _tile_spellings(t):
            names |= {s, f"lay out {s}", f"discard {s}", f"out {s}"}
    elif which == "decline_widow":
        names |= {"leave", "leave it", "keep", "no widow", "decline"}
    return names


def _singular(trump: str) -> str:
    """A contract's name in the singular, as it may be typed: ``six``, ``double``,
    ``blank`` (``""`` for one that has none: ``follow-me``, ``nello``)."""
    if trump == "sixes":
        return "six"
    return trump[:-1] if trump.endswith("s") else ""


def _tile_spellings(t: int) -> set[str]:
    high, low = tile_name(t).split("-")
    return {f"{high}-{low}", f"{low}-{high}", f"{high}{low}", f"{low}{high}"}


def parse_choice(text: str, legal: Sequence[actions_pb2.Action]) -> actions_pb2.Action:
    """The legal action ``text`` chooses (see the module's doc); raises a ``ChoiceError``."""
    typed = _normal(text)
    if not typed:
        raise NoSuchChoice("type a choice: its number, or as it is shown")
    if not legal:
        raise NoSuchChoice("there is nothing to choose now")
    menu = re.fullmatch(r"#\s*(\d+)", typed)
    if menu is None:
        matches = [a for a in legal if typed in _spellings(a)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            shown = " or ".join(f"'{choice_label(a)}'" for a in matches)
            raise AmbiguousChoice(f"{text.strip()!r} could be {shown}: type one of them")
    number = menu[1] if menu else typed
    if number.isdigit() and 1 <= int(number) <= len(legal):
        return legal[int(number) - 1]
    action = _well_formed(typed, legal)
    if action is not None:
        raise NotLegal(f"{choice_label(action)} is not a legal choice now", action)
    if number.isdigit():
        raise NoSuchChoice(f"there is no choice {number}: the choices are 1 to {len(legal)}")
    raise NoSuchChoice(f"{text.strip()!r} is none of the choices")


def _well_formed(typed: str, legal: Sequence[actions_pb2.Action]) -> actions_pb2.Action | None:
    """An action of a kind the seat may take now that ``typed`` spells, though not a legal
    one: a bid in the auction, a tile in the play, a discard at the widow."""
    kinds = {a.WhichOneof("kind") for a in legal}
    moon = any(a.bid.kind in _MOON_KINDS for a in legal if a.WhichOneof("kind") == "bid")
    if moon and typed in _MOON_WORDS | _OVERCALL_WORDS:
        # The moon or the overcall when it is not legal now: the server says why (over a 7
        # only, the overcall only over a moon, or not played at this table).
        bid_kind = rules_pb2.BID_KIND_MOON if typed in _MOON_WORDS else rules_pb2.BID_KIND_OVERCALL
        return actions_pb2.Action(bid=rules_pb2.Bid(kind=bid_kind))
    if kinds & {"bid", "pass_bid"} and typed.isdigit():
        n = int(typed)
        if moon:
            bid = rules_pb2.Bid(kind=rules_pb2.BID_KIND_TRICKS, amount=n)
        elif n >= 42 and n % 42 == 0:
            bid = rules_pb2.Bid(kind=_MARKS, amount=n // 42)
        else:
            bid = rules_pb2.Bid(kind=rules_pb2.BID_KIND_POINTS, amount=n)
        return actions_pb2.Action(bid=bid) if n > 0 else None
    marks = re.fullmatch(r"(\d+) marks?", typed)
    if "bid" in kinds and marks and int(marks[1]) > 0:
        return actions_pb2.Action(bid=rules_pb2.Bid(kind=_MARKS, amount=int(marks[1])))
    for kind in ("play_tile", "exchange_widow"):
        if kind in kinds:
            try:
                t = parse_tile(typed.removeprefix("lay out ").removeprefix("discard "))
            except ValueError:
                return None
            if kind == "play_tile":
                return actions_pb2.Action(play_tile=actions_pb2.PlayTile(tile=t))
            return actions_pb2.Action(exchange_widow=actions_pb2.ExchangeWidow(discard=t))
    return None
