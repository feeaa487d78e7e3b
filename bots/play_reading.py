"""What the plays say about the hands: a model of how players play, to weigh sampled deals.

The last seat to play to a trick sees the whole trick, and what it does there is nearly
forced by what it holds: it throws count on a trick its partner has won, keeps its count off
a trick the opponents have won, and takes a trick the opponents are winning when it can. So
a seat that played a blank on its partner's trick seldom held a count tile it could have
played, and one that let the opponents have a trick of count seldom held a tile that beat it.
``PlayReading`` reads every such play of the hand's visible tricks (``moments``) and gives a
deal of the other hands a weight: the chance that seats holding those hands would have
played as they did, by ``CHANCES``, each measured on how the sampling bots play
(``benchmarks/calibrate_play_reading.py``). Only the surprising plays weigh anything (a play
the model expects is as likely whatever else the hand holds), so a deal is weighed by the
product of ``1 - chance`` over the rules each seat broke in it.

Read only where the ruleset has a fixed partnership of two and a trump (a suit, the doubles
or follow-me): not in Moon (no partner to throw count to), nello or sevens, nor when the
tricks lie face down. The seat's own plays say nothing to itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from boneyard.engine import ContractKind, SeatView
from boneyard.engine.contracts import SuitTable, suit_table
from boneyard.engine.tiles import ALL_TILES, COUNT, TileSet

__all__ = ["CHANCES", "Moment", "PlayReading", "moment", "rules_met"]

COUNT_TILES: TileSet = sum(1 << t for t in ALL_TILES if COUNT[t])

CHANCES: dict[str, float] = {
    "count_to_partner": 0.86,
    "count_off_opponents": 0.97,
    "take_count": 0.97,
    "take_bare": 0.92,
}
"""How often the last seat to a trick does what each rule says, when it holds a tile that
lets it (measured, see the module's doc):

- ``count_to_partner``: its partner is winning and it has a count tile it may play: it plays
  count.
- ``count_off_opponents``: an opponent is winning and it has a tile that is neither count nor
  able to win: it does not play a count tile that loses.
- ``take_count``: an opponent is winning a trick with count on it and it may play a tile that
  beats: it takes the trick.
- ``take_bare``: the same, with no count on the trick.

Measured by ``benchmarks/calibrate_play_reading.py`` on 300 texas42 hands of the sampler and
the expert at 100 ms a decision (seed 60): kept 86% of 93 times, 97% of 1,160, 97% of 97 and
92% of 86. The heuristic keeps them more strictly (600 hands: 99%, 100%, 100%, 87%)."""

FLOOR = 0.05
"""The least weight one broken rule gives a deal: players misplay, and a model that ruled
deals out would be sure of what it cannot know."""


@dataclass(frozen=True, slots=True)
class Moment:
    """The last play to a trick: ``seat`` played ``tile`` with its partner (``partner_winning``)
    or an opponent winning, ``count`` points on the trick before it, ``beats`` the tiles that
    would have won it; ``then`` the tiles of the seat's hand that were seen played from this
    play on (its hand then is its hand now and these)."""

    seat: int
    tile: int
    then: TileSet
    led_members: TileSet
    may_trump: TileSet
    beats: TileSet
    partner_winning: bool
    count: int


def moment(
    table: SuitTable,
    may_trump_when_able_to_follow: bool,
    team: Sequence[int],
    before: Sequence[tuple[int, int]],
    seat: int,
    tile: int,
    then: TileSet,
) -> Moment:
    """The moment ``seat`` (of ``team``) plays ``tile`` last to a trick after ``before``."""
    lead = before[0][1]
    led = table.lead_suit[lead]
    power = table.power[led]
    winner, best = before[0][0], power[lead]
    for s, t in before[1:]:
        if power[t] > best:
            winner, best = s, power[t]
    beats = sum(1 << t for t in ALL_TILES if power[t] > best)
    may_trump = (
        table.trumps if may_trump_when_able_to_follow and not table.trumps >> lead & 1 else 0
    )
    return Moment(
        seat, tile, then, table.members[led], may_trump, beats, winner in team,
        sum(COUNT[t] for _, t in before),
    )


def rules_met(m: Moment, hand: TileSet) -> list[tuple[str, bool]]:
    """The rules of ``CHANCES`` that applied to ``m`` had the seat held ``hand`` then, each
    with whether its play kept it."""
    follow = hand & m.led_members
    legal = follow | (hand & m.may_trump) if follow else hand
    tile = m.tile
    out: list[tuple[str, bool]] = []
    if m.partner_winning:
        if legal & COUNT_TILES:
            out.append(("count_to_partner", COUNT[tile] > 0))
        return out
    wins = bool(m.beats >> tile & 1)
    if legal & ~COUNT_TILES & ~m.beats:
        out.append(("count_off_opponents", wins or not COUNT[tile]))
    if legal & m.beats:
        out.append(("take_count" if m.count else "take_bare", wins))
    return out


def moments(view: SeatView) -> tuple[Moment, ...]:
    """The last plays of the view's visible tricks by the other seats."""
    contract = view.contract
    rules = view.rules
    if (
        rules.is_moon
        or view.tricks_hidden
        or contract is None
        or contract.kind is not ContractKind.TRUMP
        or len(view.teams) != 2
        or any(len(t) != 2 for t in view.teams)
        or view.sitting_out
    ):
        return ()
    table = suit_table(contract.trump)
    team_of = {s: t for t in view.teams for s in t}
    tricks = [t.plays for t in view.tricks if t.plays is not None]
    # What each seat played from each trick on (the current trick included).
    then: list[list[TileSet]] = []
    later = [0] * view.players
    for plays in reversed([*tricks, view.trick]):
        for s, t in plays:
            later[s] |= 1 << t
        then.append(list(later))
    then.reverse()
    out: list[Moment] = []
    for i, plays in enumerate(tricks):
        if len(plays) < 2:
            continue
        seat, tile = plays[-1]
        if seat == view.seat:
            continue
        out.append(
            moment(
                table, rules.may_trump_when_able_to_follow, team_of[seat], plays[:-1], seat,
                tile, then[i][seat],
            )
        )
    return tuple(out)


class PlayReading:
    """The weight of deals against the plays of one view."""

    def __init__(self, view: SeatView) -> None:
        self.moments = moments(view)

    def weight(self, hands: Sequence[TileSet]) -> float:
        """The chance, by the model, that seats holding ``hands`` now played as they did
        (each broken rule at least ``FLOOR``)."""
        w = 1.0
        for m in self.moments:
            for rule, kept in rules_met(m, hands[m.seat] | m.then):
                if not kept:
                    w *= max(FLOOR, 1.0 - CHANCES[rule])
        return w
