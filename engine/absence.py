"""Who has stopped playing: how many times in a row each seat ran out of time without acting
itself, read from a game's log.

A seat whose clock runs out under ``auto_play`` is played for (``ClockExpired`` and then the
events of its lowest legal action); when it acts again itself, its count starts over. The
server ends a game in which every seat it does not play itself has run out of time a given
number of times in a row (``engine.Abandon("absent")``): nobody is there, and the server would
otherwise play the whole game for nobody.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from boneyard.engine.events import (
    BidPlaced,
    ClockExpired,
    ContractDeclared,
    Event,
    Passed,
    Resigned,
    TilePlayed,
    WidowDeclined,
    WidowExchanged,
)

__all__ = ["Absence", "absence"]

_SEAT_ACTIONS = (BidPlaced, Passed, WidowExchanged, WidowDeclined, ContractDeclared, TilePlayed, Resigned)
"""The events a seat's own command begins with: each names the seat that acted."""


@dataclass(frozen=True, slots=True)
class Absence:
    """Each seat's timeouts in a row (``timeouts[seat]``), and the seat whose clock just ran
    out, whose next action is the one played for it (``None``: none is pending)."""

    timeouts: tuple[int, ...]
    played_for: int | None = None

    def after(self, event: Event) -> Absence:
        """The absence once ``event`` is in the log."""
        if isinstance(event, ClockExpired):
            timeouts = list(self.timeouts)
            timeouts[event.seat] += 1
            return Absence(tuple(timeouts), event.seat)
        if isinstance(event, _SEAT_ACTIONS):
            seat = event.seat
            if seat == self.played_for:
                return Absence(self.timeouts, None)
            if self.timeouts[seat]:
                timeouts = list(self.timeouts)
                timeouts[seat] = 0
                return Absence(tuple(timeouts), self.played_for)
        return self

    def all_absent(self, seats: Iterable[int], times: int) -> bool:
        """Whether every one of ``seats`` (at least one) ran out of time ``times`` times in a
        row."""
        found = False
        for seat in seats:
            if self.timeouts[seat] < times:
                return False
            found = True
        return found


def absence(events: Iterable[Event], players: int) -> Absence:
    """The absence after a whole log."""
    found = Absence((0,) * players)
    for event in events:
        found = found.after(event)
    return found
