"""Trick play: which tiles a seat may play, and who wins a trick (RULES.md section 1).

A lead of a trump calls for trumps; any other lead calls for its higher end (or the doubles,
when they form a suit of their own). A player must follow the led suit when able; a trump of
the led number does not follow. Unable to follow, a player plays anything. The highest trump
wins, else the highest tile of the led suit. Sevens has no suits: everyone plays a tile of
their hand nearest 7 pips, and the nearest wins, ties going to the first played.
"""

from __future__ import annotations

from boneyard.engine.contracts import ContractKind, SuitTable, suit_name
from boneyard.engine.errors import MustFollowSuit, MustLeadTrump, MustPlayNearestSeven
from boneyard.engine.rulesets import Ruleset
from boneyard.engine.state import HandState, Play
from boneyard.engine.tiles import PIPS, TileSet, format_tiles, tile_name

__all__ = ["check_play", "legal_plays", "trick_winner"]

_DISTANCE = tuple(abs(p - 7) for p in PIPS)
_SEVENS = ContractKind.SEVENS  # read on every play: a member through its class is ten times slower


def _nearest_seven(tiles: TileSet) -> TileSet:
    best = 99
    nearest = 0
    while tiles:
        low = tiles & -tiles
        d = _DISTANCE[low.bit_length() - 1]
        if d < best:
            best, nearest = d, low
        elif d == best:
            nearest |= low
        tiles ^= low
    return nearest


def _must_lead_trump(rules: Ruleset, hand: HandState, seat: int) -> TileSet:
    """Trumps the bidder must lead from, when ``bidder_leads_trump`` binds; else 0."""
    if rules.bidder_leads_trump and not hand.tricks and seat == hand.bidder and hand.table:
        return hand.hands[seat] & hand.table.trumps
    return 0


def legal_plays(rules: Ruleset, hand: HandState, seat: int) -> TileSet:
    """The tiles ``seat`` may play now (it is assumed to be ``seat``'s turn)."""
    held = hand.hands[seat]
    contract = hand.contract
    if contract is not None and contract.kind is _SEVENS:
        return _nearest_seven(held)
    table = hand.table
    assert table is not None
    if not hand.trick:
        return _must_lead_trump(rules, hand, seat) or held
    led = table.lead_suit[hand.trick[0][1]]
    follow = held & table.members[led]
    if not follow:
        return held
    if rules.may_trump_when_able_to_follow and not table.trumps >> hand.trick[0][1] & 1:
        return follow | (held & table.trumps)
    return follow


def check_play(rules: Ruleset, hand: HandState, seat: int, tile: int) -> None:
    """Raise why ``seat`` may not play ``tile`` (held) now; return if it may."""
    if legal_plays(rules, hand, seat) >> tile & 1:
        return
    held = hand.hands[seat]
    name = tile_name(tile)
    where = f"hand {hand.number}, trick {len(hand.tricks) + 1}"
    if hand.contract is not None and hand.contract.kind is _SEVENS:
        raise MustPlayNearestSeven(
            f"seat {seat} must play a tile nearest 7 pips ({format_tiles(_nearest_seven(held))}), "
            f"not {name} ({where})",
            seat=seat,
            tile=name,
        )
    table = hand.table
    assert table is not None
    if not hand.trick:
        raise MustLeadTrump(
            f"seat {seat} holds trumps ({format_tiles(_must_lead_trump(rules, hand, seat))}) and "
            f"must lead one to the first trick, not {name} (bidder_leads_trump) ({where})",
            seat=seat,
            tile=name,
        )
    lead = hand.trick[0][1]
    led = table.lead_suit[lead]
    suit = "trumps" if table.trumps >> lead & 1 else suit_name(led)
    follow = held & table.members[led]
    raise MustFollowSuit(
        f"seat {seat} must follow {suit} ({tile_name(lead)} led) with "
        f"{format_tiles(follow)}, and may not play {name} ({where})",
        seat=seat,
        tile=name,
        suit=suit,
        led=tile_name(lead),
    )


def trick_winner(hand: HandState, plays: tuple[Play, ...]) -> int:
    """The seat that wins these plays."""
    contract = hand.contract
    if contract is not None and contract.kind is _SEVENS:
        best = min(range(len(plays)), key=lambda i: (_DISTANCE[plays[i][1]], i))
        return plays[best][0]
    table: SuitTable | None = hand.table
    assert table is not None
    power = table.power[table.lead_suit[plays[0][1]]]
    winner, best_power = plays[0]
    best_power = power[best_power]
    for seat, tile in plays[1:]:
        p = power[tile]
        if p > best_power:
            winner, best_power = seat, p
    return winner
