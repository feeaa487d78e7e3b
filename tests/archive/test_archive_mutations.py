"""Every single edit of a record is found, at the event it touches.

Each mutation is made two ways:

- **naive**: the edit alone, hashes left as they were: the hash chain (or the numbering) breaks
  at the edited event;
- **forged**: the edit, then the whole chain renumbered and recomputed (what a forger who knows
  the format does): the chain holds, so the seed and rules checks must find it, at that event.

And the server's VerifyRecord, over gRPC, says exactly what the offline verifier says about
every record here, valid or not.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from archive_helpers import (
    ArchiveServer,
    copy,
    engine_event,
    event_message,
    positions,
    random_game,
    rechain,
    record_of,
    set_event,
)
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from boneyard import engine
from boneyard.api.v1 import archive_pb2
from boneyard.engine import Bid, HandScored, TrickWon
from boneyard.records.signing import MAX_SECONDS, MIN_SECONDS, sign_record
from boneyard.records.verify import verdict_from_proto, verify_record

PRESETS = ("texas42", "texas42-house", "moon", "moon-s1")
TRIALS = 3
"""Records per preset; each mutation is tried at a random place of each."""


@dataclass(frozen=True)
class Mutation:
    record: archive_pb2.GameRecord
    """The edited record, hashes as they were (the naive form)."""
    naive: tuple[int, str]
    """Where and what the verifier must find in the naive form."""
    forged: tuple[int, str] | None
    """... and in the forged form (rechained); ``None`` when rechaining undoes the edit."""


Mutator = Callable[[archive_pb2.GameRecord, random.Random], Mutation | None]


def _state_before(record: archive_pb2.GameRecord, position: int) -> engine.GameState:
    return engine.replay(engine_event(record, i) for i in range(1, position))


def _pick(record: archive_pb2.GameRecord, kind: str, rng: random.Random) -> int | None:
    found = positions(record, kind)
    return rng.choice(found) if found else None


# ---------------------------------------------------------------- the mutations


def change_tile(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A play of a tile the seat does not hold."""
    at = _pick(record, "tile_played", rng)
    assert at is not None
    event = engine_event(record, at)
    state = _state_before(record, at)
    assert state.hand is not None
    held = state.hand.hands[event.seat]
    others = [t for t in engine.iter_tiles(state.rules.tiles) if not held >> t & 1]
    out = copy(record)
    set_event(out, at, engine.TilePlayed(event.seat, rng.choice(others)))
    return Mutation(out, (at, "hash_chain"), (at, "illegal_action"))


def change_tile_against_suit(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A play of a tile the seat holds but may not play (it must follow suit)."""
    candidates = []
    for at in positions(record, "tile_played"):
        event = engine_event(record, at)
        state = _state_before(record, at)
        assert state.hand is not None
        legal = {a.tile for a in engine.legal_actions(state, event.seat)}  # type: ignore[union-attr]
        illegal = [t for t in engine.iter_tiles(state.hand.hands[event.seat]) if t not in legal]
        if illegal:
            candidates.append((at, event.seat, illegal))
    if not candidates:
        return None
    at, seat, illegal = rng.choice(candidates)
    out = copy(record)
    set_event(out, at, engine.TilePlayed(seat, rng.choice(illegal)))
    return Mutation(out, (at, "hash_chain"), (at, "illegal_action"))


def change_bid(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A bid under the minimum."""
    at = _pick(record, "bid_placed", rng)
    if at is None:
        return None
    event = engine_event(record, at)
    rules = _state_before(record, 2).rules
    low = Bid.tricks(3) if rules.is_moon else Bid.points(rules.min_bid - 1)
    out = copy(record)
    set_event(out, at, engine.BidPlaced(event.seat, low))
    return Mutation(out, (at, "hash_chain"), (at, "illegal_action"))


def change_passer(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A pass by a seat whose turn it is not."""
    at = _pick(record, "passed", rng)
    if at is None:
        return None
    event = engine_event(record, at)
    players = _state_before(record, 2).rules.players
    out = copy(record)
    set_event(out, at, engine.Passed((event.seat + 1) % players))
    return Mutation(out, (at, "hash_chain"), (at, "illegal_action"))


def change_seed_byte(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """One byte of a seed changed (commitment left)."""
    at = _pick(record, "hand_dealt", rng)
    assert at is not None
    out = copy(record)
    seed = bytearray(event_message(out, at).hand_dealt.deal.seed)
    seed[rng.randrange(len(seed))] ^= 0x5A
    event_message(out, at).hand_dealt.deal.seed = bytes(seed)
    return Mutation(out, (at, "hash_chain"), (at, "seed"))


def change_seed_and_commitment(
    record: archive_pb2.GameRecord, rng: random.Random
) -> Mutation | None:
    """Another seed, its commitment recomputed everywhere: it deals other hands."""
    at = _pick(record, "hand_dealt", rng)
    assert at is not None
    out = copy(record)
    dealt = event_message(out, at).hand_dealt
    seed = bytearray(dealt.deal.seed)
    seed[rng.randrange(len(seed))] ^= 0xA5
    dealt.deal.seed = bytes(seed)
    dealt.seed_commitment = hashlib.sha256(seed).digest()
    entry = next(h for h in out.hands if h.number == dealt.number)
    entry.seed, entry.seed_commitment = dealt.deal.seed, dealt.seed_commitment
    return Mutation(out, (at, "hash_chain"), (at, "deal"))


def change_commitment(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A commitment that is not the seed's hash."""
    at = _pick(record, "hand_dealt", rng)
    assert at is not None
    out = copy(record)
    event_message(out, at).hand_dealt.seed_commitment = hashlib.sha256(b"another").digest()
    return Mutation(out, (at, "hash_chain"), (at, "seed"))


def stack_the_deal(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """Two seats' hands trade a tile: not what the seed deals."""
    at = _pick(record, "hand_dealt", rng)
    assert at is not None
    event = engine_event(record, at)
    a, b = rng.sample(range(len(event.hands)), 2)
    ta = rng.choice(list(engine.iter_tiles(event.hands[a])))
    tb = rng.choice(list(engine.iter_tiles(event.hands[b])))
    hands = list(event.hands)
    hands[a] = hands[a] & ~(1 << ta) | 1 << tb
    hands[b] = hands[b] & ~(1 << tb) | 1 << ta
    out = copy(record)
    set_event(
        out, at, engine.HandDealt(event.number, event.dealer, event.seed, tuple(hands), event.rest)
    )
    return Mutation(out, (at, "hash_chain"), (at, "deal"))


def change_dealer(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    at = _pick(record, "hand_dealt", rng)
    assert at is not None
    event = engine_event(record, at)
    out = copy(record)
    dealer = (event.dealer + 1) % len(event.hands)
    set_event(out, at, engine.HandDealt(event.number, dealer, event.seed, event.hands, event.rest))
    return Mutation(out, (at, "hash_chain"), (at, "deal"))


def change_score(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A team's score after a hand, one more."""
    at = _pick(record, "hand_scored", rng)
    assert at is not None
    event = engine_event(record, at)
    assert isinstance(event, HandScored)
    team = rng.randrange(len(event.scores))
    scores = tuple(s + (team == i) for i, s in enumerate(event.scores))
    out = copy(record)
    set_event(
        out, at, HandScored(event.bidder, event.bid, event.made, event.taken, event.changes, scores)
    )
    return Mutation(out, (at, "hash_chain"), (at, "score"))


def change_marks(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A hand's result turned over: made for set (the changes and scores adjusted to agree)."""
    at = _pick(record, "hand_scored", rng)
    assert at is not None
    event = engine_event(record, at)
    assert isinstance(event, HandScored)
    out = copy(record)
    set_event(
        out,
        at,
        HandScored(
            event.bidder, event.bid, not event.made, event.taken, event.changes, event.scores
        ),
    )
    return Mutation(out, (at, "hash_chain"), (at, "score"))


def change_trick_winner(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    at = _pick(record, "trick_won", rng)
    assert at is not None
    event = engine_event(record, at)
    assert isinstance(event, TrickWon)
    players = _state_before(record, 2).rules.players
    out = copy(record)
    set_event(out, at, TrickWon((event.seat + 1) % players, event.points))
    return Mutation(out, (at, "hash_chain"), (at, "event"))


def change_winner(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    at = len(record.events)
    event = engine_event(record, at)
    assert isinstance(event, engine.GameWon)
    rules = _state_before(record, 2).rules
    team = (event.team + 1) % len(rules.teams)
    out = copy(record)
    set_event(out, at, engine.GameWon(team, rules.teams[team]))
    return Mutation(out, (at, "hash_chain"), (at, "outcome"))


def swap_two_plays(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """Two plays of one trick in the other order (their numbers and hashes where they were)."""
    plays = positions(record, "tile_played")
    pairs = [p for p in plays if p + 1 in plays]
    at = rng.choice(pairs)
    out = copy(record)
    first, second = engine_event(out, at), engine_event(out, at + 1)
    set_event(out, at, second)
    set_event(out, at + 1, first)
    return Mutation(out, (at, "hash_chain"), (at, "illegal_action"))


def swap_two_entries(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """Two whole entries (event, number and hash) in the other order."""
    plays = positions(record, "tile_played")
    at = rng.choice([p for p in plays if p + 1 in plays])
    out = copy(record)
    a, b = copy_entry(out.events[at - 1]), copy_entry(out.events[at])
    out.events[at - 1].CopyFrom(b)
    out.events[at].CopyFrom(a)
    return Mutation(out, (at, "sequence"), (at, "illegal_action"))


def copy_entry(entry: archive_pb2.RecordedEvent) -> archive_pb2.RecordedEvent:
    out = archive_pb2.RecordedEvent()
    out.CopyFrom(entry)
    return out


def drop_play(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A play left out, in the middle of a trick."""
    plays = positions(record, "tile_played")
    at = rng.choice([p for p in plays if p + 1 in plays])
    out = copy(record)
    del out.events[at - 1]
    return Mutation(out, (at, "sequence"), (at, "illegal_action"))


def drop_trick_won(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    at = _pick(record, "trick_won", rng)
    assert at is not None
    out = copy(record)
    del out.events[at - 1]
    return Mutation(out, (at, "sequence"), (at, "event"))


def drop_hand_scored(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    at = _pick(record, "hand_scored", rng)
    assert at is not None
    out = copy(record)
    del out.events[at - 1]
    return Mutation(
        out, (at, "sequence") if at <= len(out.events) else (at, "score"), (at, "score")
    )


def drop_the_end(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """The last event (GameWon) left out: the chain of what is left holds."""
    out = copy(record)
    at = len(out.events)
    del out.events[at - 1]
    return Mutation(out, (at, "outcome"), (at, "outcome"))


def duplicate_play(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """A play (not the last of its trick) recorded twice."""
    plays = positions(record, "tile_played")
    at = rng.choice([p for p in plays if p + 1 in plays])
    out = copy(record)
    out.events.insert(at, copy_entry(out.events[at - 1]))
    return Mutation(out, (at + 1, "sequence"), (at + 1, "illegal_action"))


def play_after_the_end(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    at = _pick(record, "tile_played", rng)
    assert at is not None
    out = copy(record)
    extra = copy_entry(out.events[at - 1])
    extra.event.seq = len(out.events) + 1
    out.events.append(extra)
    return Mutation(out, (len(out.events), "hash_chain"), (len(out.events), "outcome"))


def edit_hash(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    at = rng.randrange(1, len(record.events) + 1)
    out = copy(record)
    digest = bytearray(out.events[at - 1].hash)
    digest[rng.randrange(len(digest))] ^= 1
    out.events[at - 1].hash = bytes(digest)
    return Mutation(out, (at, "hash_chain"), None)


def renumber_event(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    at = rng.randrange(1, len(record.events) + 1)
    out = copy(record)
    out.events[at - 1].event.seq += 1
    return Mutation(out, (at, "sequence"), None)


def change_declarer(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """The auction's winner names another seat to declare."""
    at = _pick(record, "auction_won", rng)
    if at is None:
        return None
    event = engine_event(record, at)
    players = _state_before(record, 2).rules.players
    out = copy(record)
    set_event(out, at, engine.AuctionWon(event.seat, event.bid, (event.declarer + 1) % players))
    return Mutation(out, (at, "hash_chain"), (at, "event"))


def change_widow_discard(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """Moon: the bidder lays out a tile it was not dealt."""
    at = _pick(record, "widow_exchanged", rng)
    if at is None:
        return None
    event = engine_event(record, at)
    state = _state_before(record, at)
    assert state.hand is not None
    held = state.hand.hands[event.seat]
    others = [t for t in engine.iter_tiles(state.rules.tiles) if not held >> t & 1]
    out = copy(record)
    set_event(out, at, engine.WidowExchanged(event.seat, event.taken, rng.choice(others)))
    return Mutation(out, (at, "hash_chain"), (at, "illegal_action"))


def change_the_rules(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """The game rewritten as one to 1 mark or 1 point (in the event and the header): it should
    have ended after its first hand."""
    out = copy(record)
    rules = event_message(out, 1).game_created.rules
    if rules.points_to_win:
        rules.points_to_win = 1
    else:
        rules.marks_to_win = 1
    out.rules.CopyFrom(rules)
    first_score = positions(out, "hand_scored")[0]
    return Mutation(out, (1, "hash_chain"), (first_score + 1, "outcome"))


def header_seed(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    """The seed table (not hashed) disagrees with a deal event."""
    out = copy(record)
    hand = rng.choice(list(out.hands))
    hand.seed = b"\x00" + hand.seed[1:]
    at = next(
        i
        for i in positions(out, "hand_dealt")
        if event_message(out, i).hand_dealt.number == hand.number
    )
    return Mutation(out, (at, "seed"), (at, "seed"))


def header_result(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    out = copy(record)
    out.result.scores[0] += 1
    return Mutation(out, (0, "header"), (0, "header"))


def header_rules(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    out = copy(record)
    out.rules.may_trump_when_able_to_follow = not out.rules.may_trump_when_able_to_follow
    return Mutation(out, (0, "header"), (0, "header"))


def header_teams(record: archive_pb2.GameRecord, rng: random.Random) -> Mutation | None:
    out = copy(record)
    out.seats[0].team += 1
    return Mutation(out, (0, "header"), (0, "header"))


MUTATIONS: tuple[Mutator, ...] = (
    change_tile,
    change_tile_against_suit,
    change_bid,
    change_passer,
    change_seed_byte,
    change_seed_and_commitment,
    change_commitment,
    stack_the_deal,
    change_dealer,
    change_score,
    change_marks,
    change_trick_winner,
    change_winner,
    swap_two_plays,
    swap_two_entries,
    drop_play,
    drop_trick_won,
    drop_hand_scored,
    drop_the_end,
    duplicate_play,
    play_after_the_end,
    edit_hash,
    renumber_event,
    change_declarer,
    change_widow_discard,
    change_the_rules,
    header_seed,
    header_result,
    header_rules,
    header_teams,
)


MOON_ONLY = {change_widow_discard}
CASES = [
    pytest.param(preset, mutator, id=f"{preset}-{mutator.__name__}")
    for preset in PRESETS
    for mutator in MUTATIONS
    if mutator not in MOON_ONLY or engine.ruleset(preset).is_moon
]


# ---------------------------------------------------------------- the records


_RECORDS: dict[tuple[str, int], archive_pb2.GameRecord] = {}


def base_record(preset: str, trial: int) -> archive_pb2.GameRecord:
    key = (preset, trial)
    if key not in _RECORDS:
        record = record_of(random_game(preset, seed=100 + trial))
        assert verify_record(record).valid
        _RECORDS[key] = record
    return _RECORDS[key]


def mutated(preset: str, trial: int, mutator: Mutator) -> Mutation | None:
    rng = random.Random(f"{preset}/{trial}/{mutator.__name__}")
    return mutator(base_record(preset, trial), rng)


def _found(record: archive_pb2.GameRecord) -> tuple[int, str]:
    verdict = verify_record(record)
    assert verdict.discrepancy is not None, f"not found: {verdict}"
    return verdict.discrepancy.event, verdict.discrepancy.kind


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("trial", range(TRIALS))
@pytest.mark.parametrize(("preset", "mutator"), CASES)
def test_a_naive_edit_is_found_at_its_event(preset: str, mutator: Mutator, trial: int) -> None:
    mutation = mutated(preset, trial, mutator)
    if mutation is None:
        pytest.skip(f"no place for {mutator.__name__} in this {preset} game")
    assert _found(mutation.record) == mutation.naive


@pytest.mark.parametrize("trial", range(TRIALS))
@pytest.mark.parametrize(("preset", "mutator"), CASES)
def test_a_forged_edit_with_the_chain_recomputed_is_found_at_its_event(
    preset: str, mutator: Mutator, trial: int
) -> None:
    mutation = mutated(preset, trial, mutator)
    if mutation is None:
        pytest.skip(f"no place for {mutator.__name__} in this {preset} game")
    forged = rechain(copy(mutation.record))
    if mutation.forged is None:  # rechaining undoes this edit
        assert verify_record(forged).valid
        return
    assert _found(forged) == mutation.forged


def test_the_discrepancy_says_what_was_expected_and_what_was_found() -> None:
    record = base_record("texas42", 0)
    mutation = change_tile(record, random.Random(1))
    assert mutation is not None
    verdict = verify_record(rechain(copy(mutation.record)))
    d = verdict.discrepancy
    assert d is not None
    event = engine_event(mutation.record, d.event)
    assert d.expected.startswith(f"a play by seat {event.seat}")
    assert d.found.startswith(
        f"seat {event.seat} plays {engine.tile_name(event.tile)}, which is illegal"
    )
    assert "does not hold" in d.found
    assert str(d).startswith(f"event {d.event}: illegal action: expected a play by seat")

    score = change_score(record, random.Random(2))
    assert score is not None
    d = verify_record(rechain(copy(score.record))).discrepancy
    assert d is not None and d.kind == "score"
    assert d.expected.startswith("HandScored with scores [") and d.found.startswith(
        "HandScored with scores ["
    )


@pytest.mark.parametrize(
    ("seconds", "nanos"),
    [(0, -1), (0, 1_000_000_000), (MAX_SECONDS + 1, 0), (MIN_SECONDS - 1, 0)],
)
def test_a_time_no_clock_can_sign_is_a_bad_signature_not_an_error(seconds: int, nanos: int) -> None:
    # The RPC fuzzer's VerifyRecord of a signed record with a time of nanos -1 answered
    # INTERNAL: the signed bytes had no form for it (struct.error).
    record = copy(base_record("texas42", 0))
    sign_record(record, Ed25519PrivateKey.generate())
    assert verify_record(record).valid
    record.finish_time.seconds, record.finish_time.nanos = seconds, nanos
    d = verify_record(record).discrepancy
    assert d is not None and d.kind == "signature", d
    assert d.found == f"seconds {seconds}, nanos {nanos}"


@pytest.mark.parametrize("preset", PRESETS)
def test_the_server_and_the_offline_verifier_agree_on_every_record(
    archive_server: ArchiveServer, preset: str
) -> None:
    records = []
    for trial in range(TRIALS):
        records.append(base_record(preset, trial))
        for mutator in MUTATIONS:
            mutation = mutated(preset, trial, mutator)
            if mutation is not None:
                records += [mutation.record, rechain(copy(mutation.record))]
    kinds: set[str] = set()
    for record in records:
        offline = verify_record(record)
        response = archive_server.archive.VerifyRecord(
            archive_pb2.VerifyRecordRequest(record=record), timeout=60
        )
        assert verdict_from_proto(response) == offline
        assert response.valid == offline.valid
        if offline.discrepancy is not None:
            assert response.discrepancy.message == str(offline.discrepancy)
            kinds.add(offline.discrepancy.kind)
        # None of these games was played on this server.
        assert response.stored_copy == archive_pb2.STORED_COPY_ABSENT
    assert {"hash_chain", "sequence", "illegal_action", "seed", "deal", "score", "outcome"} <= kinds
