"""``boneyard play``'s table: the seat's view drawn as one screen (clients/table.py), redrawn as
the game moves, and the person's answers read against the legal actions (clients/choices.py).

In a terminal the screen is cleared and drawn whole at every event; piped or on a dumb
terminal, each event is one line and the table is printed once per question. Ctrl-C asks
whether to resign or to keep the seat (its token stays in the seat file, clients/seat_store.py,
for ``play --resume GAME_ID``). ``help`` or ``?`` at any of these questions says what may be
typed there; a refused action is told by the rule that refused it (the refusal's reason in
words, then the server's message).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import grpc
from rich.console import Console

from boneyard.api.v1 import actions_pb2, game_service_pb2, view_pb2
from boneyard.clients.api import Client, refusal
from boneyard.clients.bot import Bot
from boneyard.clients.choices import (
    HELP_WORDS,
    ChoiceError,
    NotLegal,
    choice_label,
    help_lines,
    parse_choice,
)
from boneyard.clients.describe import event_text, refusal_text
from boneyard.clients.seat_store import KeptSeat, SeatStore
from boneyard.clients.strategies import load_strategy
from boneyard.clients.table import TableInfo, table_screen
from boneyard.engine.tiles import tile_name

__all__ = ["PROMPT", "TableSession", "start_bots"]

PROMPT = "your choice> "
_RESIGN = actions_pb2.Action(resign=actions_pb2.Resign())


def start_bots(
    client: Client,
    game_id: str,
    tokens: dict[int, str],
    strategy_name: str,
    seed: int,
    move_ms: int | None = None,
) -> list[threading.Thread]:
    """Run a bot for each seat of ``tokens`` in this process (threads that end with it),
    each decision with ``move_ms`` (``None``: the strategy's own budget)."""
    threads = []
    for seat, token in sorted(tokens.items()):
        bot = Bot(client, game_id, token, load_strategy(strategy_name, seed + seat, move_ms))
        thread = threading.Thread(target=bot.run, name=f"bot-seat-{seat}", daemon=True)
        thread.start()
        threads.append(thread)
    return threads


@dataclass
class TableSession:
    """One person's seat at one game, until the game is over or the person leaves."""

    client: Client
    console: Console
    game_id: str
    kept: KeptSeat
    store: SeatStore
    info: TableInfo = field(default_factory=TableInfo)
    log: list[str] = field(default_factory=list)
    notice: str = ""
    view: view_pb2.SeatView | None = None
    """The view drawn last."""

    @property
    def token(self) -> str:
        return self.kept.token

    @property
    def full_screen(self) -> bool:
        return self.console.is_terminal

    # --- drawing ------------------------------------------------------------------------

    def draw(
        self,
        view: view_pb2.SeatView,
        menu: Sequence[str] = (),
        message: str = "",
        notes: Sequence[str] = (),
    ) -> None:
        self.view = view
        width = min(self.console.width, 200)
        height = self.console.height if self.full_screen else 24
        screen = table_screen(view, self.info, self.log, menu, message, width, height, notes)
        if self.full_screen:
            self.console.clear()
        self.console.print(screen)

    def tell(self, line: str, view: view_pb2.SeatView) -> None:
        self.log.append(line)
        del self.log[:-50]
        if self.full_screen:
            self.draw(view)
        else:
            self.console.print(line)

    # --- the game -----------------------------------------------------------------------

    def run(self) -> view_pb2.SeatView:
        """Play to the end of the game; the last view."""
        view = self.client.view(self.game_id, self.token)
        seat = self.kept.seat
        if not self.full_screen:
            self.draw(view)
        # One stream for the whole game, open while the person thinks: one asked for after this
        # seat acts may reach the server after the trick is won, and a trick won face down (2
        # marks or more) is then sent face down, this seat's own tile with it.
        stream = self.client.watch(self.game_id, self.token, view.version)
        try:
            while view.phase != view_pb2.PHASE_GAME_OVER:
                mine = view.HasField("turn") and view.turn == seat and view.legal_actions
                if mine and not self.ask_and_send(view):
                    view = self.client.view(self.game_id, self.token)
                    continue
                view = self.follow(stream)
        finally:
            stream.cancel()
        self.store.forget(self.game_id)
        self.draw(view)
        return view

    def follow(self, stream: Iterator[game_service_pb2.WatchGameResponse]) -> view_pb2.SeatView:
        """Tell the stream's next events until this seat is to act (at the latest version) or
        the game is over."""
        previous = None
        for message in stream:
            view = message.view
            self.note_widow(message)
            line = event_text(message.event, previous)
            previous = message.event
            if line:
                self.tell(line, view)
            if view.phase == view_pb2.PHASE_GAME_OVER:
                return view
            if view.HasField("turn") and view.turn == self.kept.seat:
                latest = self.client.view(self.game_id, self.token)
                if latest.version == message.version:
                    return latest
        return self.client.view(self.game_id, self.token)  # a seat's stream ends with the game

    def note_widow(self, message: game_service_pb2.WatchGameResponse) -> None:
        event = message.event
        if event.WhichOneof("kind") != "widow_exchanged":
            return
        e = event.widow_exchanged
        if e.seat == self.kept.seat and e.HasField("taken"):
            self.notice = (
                f"you received {tile_name(e.taken)} from the widow and laid out "
                f"{tile_name(e.discard)}"
            )
            self.log.append(self.notice)

    def ask_and_send(self, view: view_pb2.SeatView) -> bool:
        """Ask until an answer is legal and sent (``True``), or the server said the view is
        old (``False``: ask again on a fresh one)."""
        legal = list(view.legal_actions)
        menu = [choice_label(a) for a in legal]
        message, self.notice = self.notice, ""
        notes: list[str] = []
        while True:
            self.draw(view, menu, message, notes)
            answer = self.console.input(PROMPT).strip()
            message, notes = "", []
            if answer.lower() in HELP_WORDS:
                notes = help_lines(legal)
                continue
            if answer.lower() == "resign":
                if self.sure_to_resign(view):
                    return self.send(view, _RESIGN)[0]
                message = "not resigned"
                continue
            try:
                action = parse_choice(answer, legal)
            except NotLegal as not_legal:
                # Well formed but not legal: the server, which keeps the rules, says why.
                sent, why = self.send(view, not_legal.action)
                if sent:
                    return True
                message = f"refused — {why}" if why else str(not_legal)
                if why is None:
                    return False
                continue
            except ChoiceError as error:
                message = f"refused: {error} (help or ? lists what may be typed)"
                continue
            sent, why = self.send(view, action)
            if sent or why is None:
                return sent
            message = f"refused — {why}"

    def sure_to_resign(self, view: view_pb2.SeatView) -> bool:
        """Ask before resigning (``help`` or ``?`` says what the answers do)."""
        question = f"resign: {self.loss_words(view)} the game now. Sure? (y/N)> "
        while True:
            sure = self.console.input(question).strip().lower()
            if sure not in HELP_WORDS:
                return sure in ("y", "yes")
            self.console.print(f"y: resign, and {self.loss_words(view)} · n or Enter: play on")

    def loss_words(self, view: view_pb2.SeatView | None = None) -> str:
        """Who loses by this seat's resigning: ``you lose`` when the seat plays for itself
        (Moon), ``your team loses`` with a partner."""
        view = view if view is not None else self.view
        seat = self.kept.seat
        team = next((t for t in view.teams if seat in t.seats), None) if view is not None else None
        return "your team loses" if team is not None and len(team.seats) > 1 else "you lose"

    def send(self, view: view_pb2.SeatView, action: actions_pb2.Action) -> tuple[bool, str | None]:
        """Submit; ``(True, "")`` when accepted, ``(False, why)`` when refused (the rule in
        words, then the server's message), and ``(False, None)`` when the view was stale (the
        caller draws a fresh one)."""
        try:
            self.client.submit(self.game_id, self.token, view.version, action)
        except grpc.RpcError as error:
            answer = refusal(error)
            if answer.reason in ("STALE_VERSION", "NOT_YOUR_TURN"):
                self.log.append("the game moved on before your answer reached it: asking again")
                return False, None
            return False, refusal_text(answer.reason, answer.for_people())
        return True, ""

    def resign(self) -> view_pb2.SeatView:
        view = self.client.view(self.game_id, self.token)
        if view.phase != view_pb2.PHASE_GAME_OVER:
            self.client.resign(self.game_id, self.token, view.version)
            view = self.client.view(self.game_id, self.token)
        self.store.forget(self.game_id)
        return view
