"""Records archived before the house-rule options (issue 19) still read, encode and verify byte
for byte: ``records/`` holds one signed game on each older preset, made by the code of a8e0b94
(``records/make_records.py``). New options are left unset at their "as before" values, so the
ruleset and every event encode as they did, and the hash chain and the signature still hold."""

from pathlib import Path

import pytest

from boneyard.api import codec
from boneyard.api.v1 import events_pb2
from boneyard.records import record, signing, verify

RECORDS = Path(__file__).parent / "records"
PRESETS = ("texas42", "texas42-house", "texas42-redeal", "texas42-points", "moon", "moon-s1", "moon-pagat")
PUBLIC_KEY = signing.parse_public_key((RECORDS / "public_key.txt").read_bytes())


def stored(preset: str) -> bytes:
    return (RECORDS / f"{preset}.json").read_bytes()


@pytest.mark.parametrize("preset", PRESETS)
def test_a_record_made_before_the_house_rules_verifies_with_its_signature(preset: str) -> None:
    verdict = verify.verify_record(record.load_record(stored(preset)), public_key=PUBLIC_KEY)
    assert verdict.valid, str(verdict)
    assert verdict.summary is not None and verdict.summary.rules.name == preset


@pytest.mark.parametrize("preset", PRESETS)
def test_a_record_made_before_the_house_rules_writes_back_to_the_same_bytes(preset: str) -> None:
    data = stored(preset)
    loaded = record.load_record(data)
    assert record.dump_record(loaded) == data
    binary = record.dump_record(loaded, binary=True)
    assert record.dump_record(record.load_record(binary)) == data


@pytest.mark.parametrize("preset", PRESETS)
def test_every_event_of_a_record_made_before_the_house_rules_encodes_as_it_was_stored(
    preset: str,
) -> None:
    loaded = record.load_record(stored(preset))
    for entry in loaded.events:
        payload = record.canonical_bytes(entry.event)
        bare = events_pb2.Event()
        bare.ParseFromString(payload)
        assert codec.encode_event(codec.event_from_proto(bare))[1] == payload


@pytest.mark.parametrize("preset", PRESETS)
def test_a_record_made_before_the_house_rules_is_rebuilt_to_the_same_bytes(preset: str) -> None:
    # The whole record made again from its events by today's builder: same ruleset message,
    # same hashes, same signed bytes.
    loaded = record.load_record(stored(preset))
    events = [
        codec.event_from_proto(events_pb2.Event.FromString(record.canonical_bytes(e.event)))
        for e in loaded.events
    ]
    rebuilt = record.build_record(
        loaded.game_id,
        record.stored_log(events),
        name=loaded.name,
        players={s.seat: s.player_name for s in loaded.seats},
        create_time=loaded.create_time.ToDatetime(),
        finish_time=loaded.finish_time.ToDatetime(),
    )
    rebuilt.signature.CopyFrom(loaded.signature)
    assert rebuilt.rules == loaded.rules
    assert signing.signed_bytes(rebuilt) == signing.signed_bytes(loaded)
    assert rebuilt.SerializeToString(deterministic=True) == loaded.SerializeToString(
        deterministic=True
    )
