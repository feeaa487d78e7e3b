"""The table of ``boneyard play`` as one screen that fits 80×24: the seats around the table
with their names, bids and the tiles of the trick in progress; trump, the score in marks (or
points) as players say them, the points of this hand; your hand sorted by suit, trumps first,
count tiles marked where counts score (Texas 42, not Moon); then the last events, the choices
on a few wrapped lines, and a message. No line is wrapped mid-phrase: a line that would not
fit is said shorter (seats by number instead of names), or breaks between its phrases.

Everything is drawn from the seat's view (and the game's seat names): no rule is computed
here.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from boneyard import engine
from boneyard.api.v1 import game_pb2, rules_pb2, view_pb2
from boneyard.clients.describe import (
    bid_text,
    contract_text,
    count_text,
    family_preset,
    hand_by_suit,
    phase_text,
)
from boneyard.engine.tiles import COUNT, tile_name

__all__ = ["TableInfo", "menu_lines", "rule_differences", "table_screen"]

WIDTH = 80
HEIGHT = 24


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What the view does not carry: the game's name and the players' names by seat."""

    name: str = ""
    names: Sequence[str] = field(default_factory=tuple)

    @classmethod
    def of(cls, summary: game_pb2.GameSummary) -> TableInfo:
        return cls(summary.name, tuple(s.player_name for s in summary.seats))


def rule_differences(rules: rules_pb2.Ruleset) -> list[str]:
    """The options in which ``rules`` differ from their game's standard preset (``texas42``,
    ``moon``) as a server plays them: ``nello``, ``no nello``, ``marks_to_win=5``,
    ``widow=may_exchange``. (A server gives every game a ``deal_limit``, ``engine.DEAL_LIMIT``
    unless asked for another: that one is no difference.)"""
    base = engine.ruleset(family_preset(rules), deal_limit=engine.DEAL_LIMIT)
    out: list[str] = []
    present = {fd.name for fd, _ in rules.ListFields()}  # the options set: HasField, by name
    for fd in rules_pb2.Ruleset.DESCRIPTOR.fields:
        name = fd.name
        if not hasattr(base, name) or name in ("preset", "family") or name not in present:
            continue
        value = getattr(rules, name)
        if fd.enum_type is not None:
            prefix = fd.enum_type.values[0].name.removesuffix("UNSPECIFIED")
            value = fd.enum_type.values_by_number[value].name.removeprefix(prefix).lower()
        if value == getattr(base, name):
            continue
        if isinstance(value, bool):
            out.append(name if value else f"no {name}")
        else:
            out.append(f"{name}={value}")
    return out


def _unit(view: view_pb2.SeatView) -> str:
    return "points" if view.rules.points_to_win or view.rules.family == rules_pb2.FAMILY_MOON else "marks"


def _mine(view: view_pb2.SeatView) -> int | None:
    return view.seat if view.HasField("seat") else None


def _team_of(view: view_pb2.SeatView, seat: int) -> int:
    return next((i for i, t in enumerate(view.teams) if seat in t.seats), -1)


def _team_name(view: view_pb2.SeatView, team: int, names: Sequence[str]) -> str:
    seats = list(view.teams[team].seats)
    mine = _mine(view)
    if mine in seats:
        return "you" if len(seats) == 1 else "us"
    if len(seats) == 1:
        return _seat_name(view, seats[0], names)
    if len(view.teams) == 2:
        return "them"
    return "seats " + "+".join(map(str, seats))


def _seat_name(view: view_pb2.SeatView, seat: int, names: Sequence[str]) -> str:
    if seat == _mine(view):
        return "you"
    name = names[seat] if seat < len(names) and names[seat] else f"seat {seat}"
    return name


def _around(view: view_pb2.SeatView) -> tuple[list[int], list[int], list[int], int]:
    """The other seats by where they sit from this seat, in the order of play: the next to the
    left, the last to the right, the ones between across the table (top)."""
    me = _mine(view) if _mine(view) is not None else 0
    assert me is not None
    n = view.players or len(view.scores)
    others = [(me + k) % n for k in range(1, n)]
    if len(others) == 1:
        return [], others, [], me
    return [others[0]], others[1:-1], [others[-1]], me


def _seat_cell(view: view_pb2.SeatView, seat: int, names: Sequence[str]) -> Text:
    """Two lines: the seat and its player; then partner/dealer and what it bid or played."""
    mine = _mine(view)
    turn = view.HasField("turn") and view.turn == seat and view.phase != view_pb2.PHASE_GAME_OVER
    first = Text(no_wrap=True, overflow="ellipsis")
    if turn:
        first.append("▶ ", style="bold green")
    first.append(f"{seat} {_seat_name(view, seat, names)}", style="bold" if seat == mine else "")
    second = Text(no_wrap=True, overflow="ellipsis")
    marks = []
    if mine is not None and seat != mine and _team_of(view, seat) == _team_of(view, mine):
        marks.append("partner")
    if view.HasField("dealer") and view.dealer == seat:
        marks.append("shakes")
    if seat in view.sitting_out:
        marks.append("sits out")
    if marks:
        second.append(" ".join(marks) + " ", style="dim")
    played = next((p for p in view.current_trick if p.seat == seat), None)
    if played is not None:
        tile = "face down" if played.face_down else tile_name(played.tile)
        second.append(f"[{tile}]", style="bold yellow")
    elif view.phase == view_pb2.PHASE_BIDDING:
        # The seat's latest word: an auction that goes round hears a seat more than once.
        bid = next((b for b in reversed(list(view.bids)) if b.seat == seat), None)
        if bid is not None:
            said = f"bid {bid_text(bid.bid)}" if bid.HasField("bid") else "pass"
            second.append(said, style="cyan")
    return Text("\n", justify="center", no_wrap=True).join([first, second])


def _center(view: view_pb2.SeatView) -> Text:
    text = Text(justify="center", no_wrap=True, overflow="ellipsis")
    text.append(f"hand {view.hand_number} · {phase_text(view.phase)}", style="bold")
    text.append("\n")
    if view.HasField("contract"):
        text.append(f"{contract_text(view.contract)}", style="bold cyan")
        text.append(f" · {bid_text(view.high_bid)} by {view.bidder}", style="cyan")
    return text


def _counts_score(view: view_pb2.SeatView) -> bool:
    """Whether the count tiles score at this table: in Texas 42, not in Moon, which scores
    tricks alone (RULES.md, Moon: "Scoring")."""
    return view.rules.family != rules_pb2.FAMILY_MOON


def _fitted(candidates: Sequence[Text], width: int) -> Text:
    """The first of ``candidates`` (the fullest first) that fits ``width`` on one line; else
    the last, cut with an ellipsis rather than wrapped mid-phrase."""
    for text in candidates:
        if len(text.plain) <= width:
            return text
    last = candidates[-1].copy()
    last.no_wrap, last.overflow = True, "ellipsis"
    return last


def _packed(head: str, phrases: Sequence[Text], width: int, sep: str = " · ") -> list[Text]:
    """``head`` then ``phrases`` joined by ``sep``, on as few lines as fit ``width``, a phrase
    never cut across two lines (a line after the first starts under the first phrase)."""
    lines = [Text(head, style="dim")]
    indent = " " * len(head)
    for phrase in phrases:
        line = lines[-1]
        if len(line.plain) > len(indent) and len(line.plain) + len(sep) + len(phrase) > width:
            line = Text(indent)
            lines.append(line)
        if len(line.plain) > len(indent):
            line.append(sep, style="dim")
        line.append_text(phrase)
    for line in lines:
        line.no_wrap, line.overflow = True, "ellipsis"
    return lines


def _hand_lines(view: view_pb2.SeatView, width: int) -> list[Text]:
    """The hand by suit (``sixes 6-6 6-4*``), each suit whole on a line, count tiles starred
    where counts score."""
    starred = _counts_score(view)
    groups = []
    for suit, tiles in hand_by_suit(view):
        group = Text(f"{suit} ", style="dim")
        for j, t in enumerate(tiles):
            if j:
                group.append(" ")
            if starred and COUNT[t]:
                group.append(f"{tile_name(t)}*", style="bold yellow")
            else:
                group.append(tile_name(t), style="bold")
        groups.append(group)
    lines = _packed("hand  ", groups, width)
    legend = "   (* counts)"
    if starred and any(COUNT[t] for t in view.hand) and len(lines[-1].plain) + len(legend) <= width:
        lines[-1].append(legend, style="dim")
    return lines


def _short_name(view: view_pb2.SeatView, team: int) -> str:
    """A side in the fewest letters: ``you``, ``us``, ``them``, a seat's number alone."""
    seats = list(view.teams[team].seats)
    if len(seats) == 1 and seats[0] != _mine(view):
        return str(seats[0])
    return _team_name(view, team, ())


def _sides_line(
    head: str,
    labels: Sequence[str],
    amounts: Sequence[str],
    sep: str,
    tail: str = "",
) -> Text:
    line = Text()
    if head:
        line.append(head, style="dim")
    for i, (label, amount) in enumerate(zip(labels, amounts, strict=True)):
        if i:
            line.append(sep, style="dim")
        # "bot 1: 0 points", not "bot 1 0 points": a name's number is not the score.
        line.append(f"{label}{':' if label[-1:].isdigit() else ''} ", style="bold")
        line.append(amount)
    if tail:
        line.append(tail, style="dim")
    return line


def _score_line(view: view_pb2.SeatView, names: Sequence[str], width: int) -> Text:
    """The score on one line: by the players' names where they fit, else by seat, else
    shortest (``points  you: 4 · 1: 12 · 2: -21   (to 21)``)."""
    unit = _unit(view)
    sides = range(len(view.scores))
    goal = view.rules.points_to_win or (0 if view.rules.family == rules_pb2.FAMILY_MOON else view.rules.marks_to_win)
    to = f"   (to {goal})" if goal else ""
    counted = [count_text(score, unit) for score in view.scores]
    named = [_team_name(view, team, names) for team in sides]
    seated = [_team_name(view, team, ()) for team in sides]
    short = [_short_name(view, team) for team in sides]
    return _fitted(
        [
            _sides_line("", named, counted, "  ·  ", to),
            _sides_line("", named, counted, " · ", to),
            _sides_line("", seated, counted, " · ", to),
            _sides_line(f"{unit}  ", short, [str(s) for s in view.scores], " · ", to),
        ],
        width,
    )


def _this_hand(view: view_pb2.SeatView, names: Sequence[str], width: int) -> list[Text]:
    """What each side took this hand on one line, and the last trick beside it where it fits
    (else on a line of its own)."""
    if not view.completed_tricks and not view.current_trick:
        return []
    moon = view.rules.family == rules_pb2.FAMILY_MOON
    took = []
    for team in range(len(view.teams)):
        won = view.tricks_won[team] if team < len(view.tricks_won) else 0
        points = view.taken[team] if team < len(view.taken) else 0
        took.append(count_text(won, "tricks") if moon else f"{count_text(points, 'points')} ({won})")
    hidden = " (tricks face down)" if view.tricks_hidden else ""
    sides = range(len(view.teams))
    named = [_team_name(view, team, names) for team in sides]
    seated = [_team_name(view, team, ()) for team in sides]
    line = _fitted(
        [
            _sides_line("this hand  ", named, took, "  ·  ", hidden),
            _sides_line("this hand  ", seated, took, " · ", hidden),
        ],
        width,
    )
    lines = [line]
    if view.completed_tricks and not view.current_trick and not view.tricks_hidden:
        last = view.completed_tricks[-1]
        plays = " ".join(tile_name(p.tile) for p in last.plays if not p.face_down)
        said = f"last trick {plays} → {_seat_name(view, last.winner, names)}"
        if len(line.plain) + 3 + len(said) <= width:
            line.append(f"   {said}", style="dim")
        else:
            lines.append(Text(said, style="dim", no_wrap=True, overflow="ellipsis"))
    return lines


def _panel(view: view_pb2.SeatView, info: TableInfo, width: int = WIDTH) -> Panel:
    names = info.names
    inner = width - 4  # the border and the padding
    left, top, right, me = _around(view)
    grid = Table.grid(expand=True)
    for _ in range(3):
        grid.add_column(ratio=1, justify="center")
    if len(top) == 1:
        grid.add_row(Text(), _seat_cell(view, top[0], names), Text())
    elif top:  # several across the table (Texas 42 for 5 to 7): a row of their own
        across = Table.grid(expand=True)
        for _ in top:
            across.add_column(ratio=1, justify="center")
        across.add_row(*(_seat_cell(view, s, names) for s in top))
        grid.add_row(Text(), across, Text())
    grid.add_row(
        _seat_cell(view, left[0], names) if left else Text(),
        _center(view),
        _seat_cell(view, right[0], names) if right else Text(),
    )
    grid.add_row(Text(), _seat_cell(view, me, names) if _mine(view) is not None else Text(), Text())
    lines: list[RenderableType] = [_score_line(view, names, inner), grid]
    lines.extend(_this_hand(view, names, inner))
    if view.phase == view_pb2.PHASE_BIDDING and view.bids:
        auction = " · ".join(
            f"{b.seat} {bid_text(b.bid) if b.HasField('bid') else 'pass'}" for b in view.bids
        )
        lines.append(Text(f"bids  {auction}", no_wrap=True, overflow="ellipsis"))
    if _mine(view) is not None and view.hand:
        lines.extend(_hand_lines(view, inner))
    if view.HasField("discard"):
        lines.append(Text(f"you laid out {tile_name(view.discard)}", style="dim"))
    if view.HasField("winner"):
        lines.append(Text(f"game over: {_team_name(view, view.winner, names)} won", style="bold green"))
    preset = view.rules.preset or family_preset(view.rules)
    title = preset + (f" · {info.name}" if info.name else "")
    differences = rule_differences(view.rules)
    subtitle = (" · ".join(differences) + " · " if differences else "") + f"version {view.version}"
    return Panel(Group(*lines), title=title, subtitle=subtitle, padding=(0, 1))


def menu_lines(labels: Sequence[str], width: int = WIDTH) -> list[Text]:
    """The choices packed on as few lines as fit ``width``, each whole on its line:
    ``[1] pass  [2] 31  [3] 32 ...``."""
    lines: list[Text] = []
    line = Text(no_wrap=True)
    for i, label in enumerate(labels, 1):
        item = f"[{i}] {label}"
        if line.plain and len(line.plain) + 2 + len(item) > width:
            lines.append(line)
            line = Text(no_wrap=True)
        if line.plain:
            line.append("  ")
        line.append(f"[{i}]", style="bold")
        line.append(f" {label}")
    if line.plain:
        lines.append(line)
    return lines


def table_screen(
    view: view_pb2.SeatView,
    info: TableInfo,
    log: Sequence[str] = (),
    menu: Sequence[str] = (),
    message: str = "",
    width: int = WIDTH,
    height: int = HEIGHT,
    notes: Sequence[str] = (),
) -> Group:
    """The whole screen but the prompt's line: as many of the last ``log`` lines as fit, the
    menu, ``notes`` (the prompt's help, each line whole) and the message."""
    measure = Console(width=width, file=io.StringIO(), color_system=None)
    parts: list[RenderableType] = [_panel(view, info, width)]
    tail: list[RenderableType] = []
    tail.extend(menu_lines(menu, width))
    tail.extend(Text(note, no_wrap=True, overflow="ellipsis") for note in notes)
    if message:
        tail.append(Text(message, style="red"))
    used = sum(len(measure.render_lines(p, measure.options)) for p in parts + tail)
    room = max(0, height - 1 - used)
    shown = list(log)[-room:] if room else []
    logs = [Text(line, style="dim", no_wrap=True, overflow="ellipsis") for line in shown]
    return Group(*parts, *logs, *tail)
