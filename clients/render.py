"""The table in a terminal, drawn with rich: scores, the auction, trump, the trick on the
table, and the hand sorted by suit."""

from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from boneyard.api.v1 import rules_pb2, view_pb2
from boneyard.clients.describe import (
    bid_text,
    contract_text,
    count_text,
    family_preset,
    hand_by_suit,
    phase_text,
)
from boneyard.engine.tiles import tile_name

__all__ = ["render_view"]


def _team_label(view: view_pb2.SeatView, team: int) -> str:
    seats = list(view.teams[team].seats)
    mine = view.HasField("seat") and view.seat in seats
    label = "you" if mine and len(seats) == 1 else ("us" if mine else "")
    names = "+".join(str(s) for s in seats)
    return f"seat{'s' if len(seats) > 1 else ''} {names}" + (f" ({label})" if label else "")


def render_view(view: view_pb2.SeatView, game_name: str = "") -> Panel:
    # The view carries its ruleset: Moon, and Texas 42 played to points, keep points.
    moon = view.rules.family == rules_pb2.FAMILY_MOON
    unit = "points" if view.rules.points_to_win else "marks"
    scores = Table.grid(padding=(0, 2))
    for team, score in enumerate(view.scores):
        scores.add_row(_team_label(view, team), count_text(score, unit))

    lines: list[Text] = []
    header = f"hand {view.hand_number} · {phase_text(view.phase)}"
    if view.HasField("dealer"):
        header += f" · seat {view.dealer} shakes"
    lines.append(Text(header, style="bold"))
    if view.bids:
        auction = ", ".join(
            f"{b.seat}: {bid_text(b.bid) if b.HasField('bid') else 'pass'}" for b in view.bids
        )
        lines.append(Text(f"bids  {auction}"))
    if view.HasField("contract"):
        lines.append(
            Text(
                f"seat {view.bidder} bid {bid_text(view.high_bid)}; "
                f"{contract_text(view.contract)} declared by seat {view.declarer}",
                style="cyan",
            )
        )
    if view.sitting_out:
        lines.append(Text(f"sitting out: seat {', '.join(map(str, view.sitting_out))}"))
    if view.completed_tricks:
        won = ", ".join(
            f"{_team_label(view, t)} {n}" for t, n in enumerate(view.tricks_won) if n
        )
        hidden = " (face down)" if view.tricks_hidden else ""
        lines.append(Text(f"tricks won{hidden}: {won}"))
        if view.taken:
            took = " · ".join(
                f"{_team_label(view, t)} {count_text(n, 'tricks' if moon else 'points')}"
                for t, n in enumerate(view.taken)
            )
            lines.append(Text(f"taken this hand: {took}"))
    if view.current_trick:
        trick = "   ".join(f"seat {p.seat}: {tile_name(p.tile)}" for p in view.current_trick)
        lines.append(Text(f"on the table  {trick}", style="bold yellow"))
    elif view.completed_tricks and not view.tricks_hidden:
        last = view.completed_tricks[-1]
        trick = "   ".join(f"{p.seat}: {tile_name(p.tile)}" for p in last.plays)
        lines.append(Text(f"last trick  {trick}  → seat {last.winner}", style="dim"))
    if view.HasField("seat"):
        hand = Text("your hand  ")
        for suit, tiles in hand_by_suit(view):
            hand.append(f"{suit}: ", style="dim")
            hand.append(" ".join(tile_name(t) for t in tiles) + "   ", style="bold")
        lines.append(hand)
        if view.HasField("discard"):
            lines.append(Text(f"you laid out {tile_name(view.discard)}", style="dim"))
    if view.HasField("turn") and view.phase != view_pb2.PHASE_GAME_OVER:
        who = "your" if view.HasField("seat") and view.turn == view.seat else f"seat {view.turn}'s"
        lines.append(Text(f"{who} turn", style="green"))
    if view.HasField("winner"):
        lines.append(Text(f"game over: {_team_label(view, view.winner)} won", style="bold green"))
    preset = view.rules.preset or family_preset(view.rules)
    title = preset + (f" · {game_name}" if game_name else "")
    seat = f"seat {view.seat}" if view.HasField("seat") else "spectator"
    return Panel(Group(scores, *lines), title=title, subtitle=f"{seat} · version {view.version}")
