"""The table of ``boneyard play`` as one screen that fits 80×24: the seats around the table
with their names, bids and the tiles of the trick in progress; trump, the score in marks (or
points) as players say them, the points of this hand; your hand sorted by suit, trumps first,
count tiles marked; then the last events, the choices on a few wrapped lines, and a message.

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
    ``moon``): ``nello``, ``no nello``, ``marks_to_win=5``, ``widow=may_exchange``."""
    base = engine.ruleset(family_preset(rules))
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


def _hand_line(view: view_pb2.SeatView) -> Text:
    hand = Text()
    hand.append("hand  ", style="dim")
    for i, (suit, tiles) in enumerate(hand_by_suit(view)):
        if i:
            hand.append(" · ", style="dim")
        hand.append(f"{suit} ", style="dim")
        for j, t in enumerate(tiles):
            if j:
                hand.append(" ")
            if COUNT[t]:
                hand.append(f"{tile_name(t)}*", style="bold yellow")
            else:
                hand.append(tile_name(t), style="bold")
    legend = "   (* counts)"
    if any(COUNT[t] for t in view.hand) and len(hand.plain) + len(legend) <= WIDTH - 4:
        hand.append(legend, style="dim")
    return hand


def _score_line(view: view_pb2.SeatView, names: Sequence[str]) -> Text:
    unit = _unit(view)
    line = Text()
    for team, score in enumerate(view.scores):
        if team:
            line.append("  ·  ", style="dim")
        line.append(f"{_team_name(view, team, names)} ", style="bold")
        line.append(count_text(score, unit))
    goal = view.rules.points_to_win or (0 if view.rules.family == rules_pb2.FAMILY_MOON else view.rules.marks_to_win)
    if goal:
        line.append(f"   (to {goal})", style="dim")
    return line


def _this_hand(view: view_pb2.SeatView, names: Sequence[str]) -> Text | None:
    if not view.completed_tricks and not view.current_trick:
        return None
    moon = view.rules.family == rules_pb2.FAMILY_MOON
    parts = []
    for team in range(len(view.teams)):
        won = view.tricks_won[team] if team < len(view.tricks_won) else 0
        took = view.taken[team] if team < len(view.taken) else 0
        text = count_text(won, "tricks") if moon else f"{count_text(took, 'points')} ({won})"
        parts.append(f"{_team_name(view, team, names)} {text}")
    hidden = " (tricks face down)" if view.tricks_hidden else ""
    line = Text("this hand  " + "  ·  ".join(parts) + hidden)
    if view.completed_tricks and not view.current_trick and not view.tricks_hidden:
        last = view.completed_tricks[-1]
        plays = " ".join(tile_name(p.tile) for p in last.plays if not p.face_down)
        line.append(f"   last trick {plays} → {_seat_name(view, last.winner, names)}", style="dim")
    return line


def _panel(view: view_pb2.SeatView, info: TableInfo) -> Panel:
    names = info.names
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
    lines: list[RenderableType] = [_score_line(view, names), grid]
    this_hand = _this_hand(view, names)
    if this_hand is not None:
        lines.append(this_hand)
    if view.phase == view_pb2.PHASE_BIDDING and view.bids:
        auction = " · ".join(
            f"{b.seat} {bid_text(b.bid) if b.HasField('bid') else 'pass'}" for b in view.bids
        )
        lines.append(Text(f"bids  {auction}", no_wrap=True, overflow="ellipsis"))
    if _mine(view) is not None and view.hand:
        lines.append(_hand_line(view))
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
) -> Group:
    """The whole screen but the prompt's line: as many of the last ``log`` lines as fit."""
    measure = Console(width=width, file=io.StringIO(), color_system=None)
    parts: list[RenderableType] = [_panel(view, info)]
    tail: list[RenderableType] = []
    tail.extend(menu_lines(menu, width))
    if message:
        tail.append(Text(message, style="red"))
    used = sum(len(measure.render_lines(p, measure.options)) for p in parts + tail)
    room = max(0, height - 1 - used)
    shown = list(log)[-room:] if room else []
    logs = [Text(line, style="dim", no_wrap=True, overflow="ellipsis") for line in shown]
    return Group(*parts, *logs, *tail)
