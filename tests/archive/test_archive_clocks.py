"""Records of games where clocks ran out (issue 6): a ``ClockExpired`` is rebuilt into the
command ``TimeOut`` and the engine decides what follows it, so a record verifies only when each
timeout is followed by exactly its policy's events: the seat's lowest legal action
(``auto_play``) or the forfeit's ``GameWon``. Records of one-hand games (``hand_limit``) verify
too."""

from __future__ import annotations

import random

import pytest
from archive_helpers import (
    copy,
    engine_event,
    positions,
    random_game,
    rechain,
    record_of,
    set_event,
)

from boneyard import engine
from boneyard.api.v1 import archive_pb2
from boneyard.clients.describe import event_text
from boneyard.engine import ClockExpired, Event, GameWon, Phase, TilePlayed, TimeOut
from boneyard.records.record import dump_record
from boneyard.records.verify import command_of, verify_bytes, verify_record

PRESETS = ("texas42", "texas42-house", "moon", "moon-s1")


def _found(record: archive_pb2.GameRecord) -> tuple[int, str]:
    verdict = verify_record(record)
    assert verdict.discrepancy is not None, f"not found: {verdict}"
    return verdict.discrepancy.event, verdict.discrepancy.kind


def _timed_out_game(preset: str, seed: int = 5) -> list[Event]:
    events = random_game(preset, seed, timeouts=0.25)
    assert any(isinstance(e, ClockExpired) for e in events)
    return events


# ---------------------------------------------------------------- valid records


@pytest.mark.parametrize("preset", PRESETS)
def test_a_record_of_a_game_with_timeouts_verifies(preset: str) -> None:
    events = _timed_out_game(preset)
    verdict = verify_record(record_of(events))
    assert verdict.valid, verdict
    state = engine.replay(events)
    assert verdict.summary is not None
    assert (verdict.summary.scores, verdict.summary.winner) == (state.scores, state.winner)


def test_a_record_with_timeouts_verifies_as_json_and_as_protobuf() -> None:
    record = record_of(_timed_out_game("texas42"))
    assert verify_bytes(dump_record(record)).valid
    assert verify_bytes(dump_record(record, binary=True)).valid


@pytest.mark.parametrize("preset", PRESETS)
def test_a_record_of_a_game_lost_by_forfeit_verifies(preset: str) -> None:
    events = random_game(preset, 9, forfeit_at=30)
    expired, won = events[-2:]
    assert isinstance(expired, ClockExpired) and expired.policy == "forfeit"
    assert isinstance(won, GameWon)
    rules = engine.replay(events[:1]).rules
    assert won.team != rules.team_of[expired.seat]
    verdict = verify_record(record_of(events))
    assert verdict.valid, verdict
    assert verdict.summary is not None and verdict.summary.winner == won.team


@pytest.mark.parametrize("preset", ["texas42", "moon"])
def test_a_record_of_a_one_hand_game_verifies(preset: str) -> None:
    events = random_game(preset, 4, timeouts=0.1, options={"hand_limit": 1})
    state = engine.replay(events)
    assert state.phase is Phase.GAME_OVER and len(state.results) == 1
    record = record_of(events)
    assert record.rules.hand_limit == 1
    verdict = verify_record(record)
    assert verdict.valid, verdict
    assert verdict.summary is not None and verdict.summary.rules.hand_limit == 1


# ---------------------------------------------------------------- edits are caught


def _auto_played_tile(record: archive_pb2.GameRecord) -> tuple[int, list[int]]:
    """The first event that a timeout played as a tile, and the other tiles the seat could
    have played there."""
    for at in positions(record, "clock_expired"):
        follows = engine_event(record, at + 1)
        if not isinstance(follows, TilePlayed):
            continue
        state = engine.replay(engine_event(record, i) for i in range(1, at + 1))
        others = [
            a.tile
            for a in engine.legal_actions(state, follows.seat)
            if isinstance(a, engine.PlayTile) and a.tile != follows.tile
        ]
        if others:
            return at + 1, others
    raise AssertionError("no timeout played a tile where another was legal")


@pytest.mark.parametrize("preset", PRESETS)
def test_another_legal_play_after_a_timeout_is_caught(preset: str) -> None:
    record = record_of(_timed_out_game(preset))
    at, others = _auto_played_tile(record)
    played = engine_event(record, at)
    assert isinstance(played, TilePlayed)
    out = copy(record)
    other = random.Random(at).choice(others)
    set_event(out, at, TilePlayed(played.seat, other))
    assert _found(out) == (at, "hash_chain")
    forged = rechain(out)
    assert _found(forged) == (at, "event")
    discrepancy = verify_record(forged).discrepancy
    assert discrepancy is not None
    assert discrepancy.expected == f"TilePlayed with tile {engine.tile_name(played.tile)}"
    assert discrepancy.found == f"TilePlayed with tile {engine.tile_name(other)}"


def test_a_forfeit_won_by_the_forfeiting_team_is_caught() -> None:
    events = random_game("texas42", 9, forfeit_at=30)
    expired = events[-2]
    assert isinstance(expired, ClockExpired)
    rules = engine.replay(events[:1]).rules
    loser = rules.team_of[expired.seat]
    out = copy(record_of(events))
    at = len(out.events)
    set_event(out, at, GameWon(loser, rules.teams[loser]))
    out.result.winner = loser
    del out.result.winning_seats[:]
    out.result.winning_seats.extend(rules.teams[loser])
    assert _found(rechain(out)) == (at, "outcome")


def test_a_timeout_of_a_seat_not_to_act_is_caught() -> None:
    record = record_of(_timed_out_game("texas42"))
    at = positions(record, "clock_expired")[0]
    expired = engine_event(record, at)
    assert isinstance(expired, ClockExpired)
    out = copy(record)
    set_event(out, at, ClockExpired((expired.seat + 1) % 4, expired.policy))
    assert _found(rechain(out)) == (at, "illegal_action")


def test_a_forfeit_recorded_as_auto_play_is_caught() -> None:
    events = random_game("moon", 9, forfeit_at=30)
    expired = events[-2]
    assert isinstance(expired, ClockExpired)
    out = copy(record_of(events))
    at = len(out.events) - 1
    set_event(out, at, ClockExpired(expired.seat, "auto_play"))
    # The rules now expect the seat's lowest legal action where the record has its GameWon.
    assert _found(rechain(out)) == (at + 1, "event")


# ---------------------------------------------------------------- words


def test_a_clock_expired_is_the_command_timeout() -> None:
    assert command_of(ClockExpired(2, "forfeit")) == TimeOut(2, "forfeit")


def test_the_replay_tells_what_a_timeout_did() -> None:
    record = record_of(random_game("moon", 9, forfeit_at=30))
    forfeit = record.events[-2].event
    seat = forfeit.clock_expired.seat
    assert event_text(forfeit) == f"seat {seat}'s clock ran out: seat {seat} forfeits"
    auto = record_of(_timed_out_game("moon"))
    message = auto.events[positions(auto, "clock_expired")[0] - 1].event
    seat = message.clock_expired.seat
    assert event_text(message) == f"seat {seat}'s clock ran out: its lowest legal action is played"
