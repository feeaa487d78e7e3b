"""The live lobby of one ``WatchLobby`` stream: which games it shows, and what changed.

A stream shows the games of the statuses it asked for (open, playing), at most ``limit`` of
each, the oldest first: exactly what ListGames's first page of each status shows. It follows
every game (``Feed.follow``: nothing polls), and when a game changes it looks at the game's
summary again (``LobbyBoard.update``); what a lobby shows of it (``shown``: not the version
nor the time of its last action) decides whether anything is sent. When the games are more
than fit, or notifications may have been missed, it lists them again from the database
(``LobbyBoard.relist``) and sends the difference. Messages are encoded here; the summaries
are the servicer's (no hidden information: what GetGame shows).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from boneyard.api.v1 import game_pb2, game_service_pb2

__all__ = ["LobbyBoard", "shown"]


def shown(summary: game_pb2.GameSummary) -> bytes:
    """What a lobby shows of a game: its summary without the version and the time of its
    last change, which every action moves."""
    copy = game_pb2.GameSummary()
    copy.CopyFrom(summary)
    copy.ClearField("version")
    copy.ClearField("update_time")
    copy.ClearField("turn_deadline")
    for seat in copy.seats:
        seat.ClearField("bank_remaining_ms")
    return copy.SerializeToString(deterministic=True)


@dataclass(slots=True)
class _Held:
    status: int
    order: tuple[int, int, str]
    """Where ListGames puts it: (created seconds, nanos, id)."""
    shown: bytes


def _order(summary: game_pb2.GameSummary) -> tuple[int, int, str]:
    return (summary.create_time.seconds, summary.create_time.nanos, summary.game_id)


@dataclass(slots=True)
class LobbyBoard:
    """The games one stream holds, and the changes not yet sent."""

    statuses: frozenset[int]
    limit: int
    _held: dict[str, _Held] = field(default_factory=dict)
    _full: set[int] = field(default_factory=set)
    """Statuses of which games were left out for want of room: a place freed is filled by
    listing again."""
    _changed: dict[str, game_pb2.GameSummary] = field(default_factory=dict)
    _removed: set[str] = field(default_factory=set)

    @property
    def needs_relist(self) -> bool:
        """A place was freed in a status with games left out."""
        return any(self._count(status) < self.limit for status in self._full)

    def holds(self, game_id: str) -> bool:
        return game_id in self._held

    def _count(self, status: int) -> int:
        return sum(1 for h in self._held.values() if h.status == status)

    def relist(self, listed: dict[int, tuple[list[game_pb2.GameSummary], bool]]) -> None:
        """The games of each status as listed now (``(oldest first, whether more were
        left)``): hold exactly those."""
        now = {s.game_id: s for games, _ in listed.values() for s in games}
        for game_id in [g for g in self._held if g not in now]:
            self._remove(game_id)
        self._full = {status for status, (_, more) in listed.items() if more}
        for summary in now.values():
            self._put(summary)

    def update(self, game_id: str, summary: game_pb2.GameSummary | None) -> None:
        """The game is now ``summary`` (``None``: gone from the store)."""
        if summary is None or summary.status not in self.statuses:
            if game_id in self._held:
                self._remove(game_id)
            return
        held = self._held.get(game_id)
        if held is not None and held.status == summary.status:
            self._put(summary)
            return
        # New to this status: does it fit among the oldest ``limit``?
        status = summary.status
        mine = [(h.order, g) for g, h in self._held.items() if h.status == status and g != game_id]
        if len(mine) >= self.limit:
            self._full.add(status)
            newest_order, newest = max(mine)
            if _order(summary) > newest_order:
                if held is not None:
                    self._remove(game_id)
                return
            self._remove(newest)
        self._put(summary)

    def _put(self, summary: game_pb2.GameSummary) -> None:
        key = shown(summary)
        held = self._held.get(summary.game_id)
        if held is not None and held.shown == key and held.status == summary.status:
            return
        self._held[summary.game_id] = _Held(summary.status, _order(summary), key)
        self._changed[summary.game_id] = summary
        self._removed.discard(summary.game_id)

    def _remove(self, game_id: str) -> None:
        del self._held[game_id]
        self._changed.pop(game_id, None)
        self._removed.add(game_id)

    def reset(self) -> bytes:
        """Every game held, encoded as a ``reset`` message (the stream's first)."""
        games = sorted(self._changed.values(), key=_order)
        self._changed.clear()
        self._removed.clear()
        return game_service_pb2.WatchLobbyResponse(reset=True, games=games).SerializeToString()

    def changes(self) -> bytes | None:
        """The changes not yet sent, encoded; ``None`` if there are none."""
        if not self._changed and not self._removed:
            return None
        message = game_service_pb2.WatchLobbyResponse(
            games=sorted(self._changed.values(), key=_order),
            removed_game_ids=sorted(self._removed),
        )
        self._changed.clear()
        self._removed.clear()
        return message.SerializeToString()
