"""The text notation (docs/notation.md, ``boneyard.records.notation``): a record written as text and
read back is the same record, event for event, on every preset; the doc's examples import and
verify; a text the rules refuse is an error at its line and column; and against a real server,
``boneyard export --format text`` / ``boneyard import`` / ``boneyard verify`` and the bulk
export of an account's and a tournament's games."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from archive_helpers import NAMES, ArchiveServer, play_over_grpc, random_game, record_of
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boneyard import engine
from boneyard.api.v1 import archive_pb2, competition_pb2, competition_pb2_grpc
from boneyard.engine import Bid, Ruleset, bid_text, parse_bid
from boneyard.records.notation import (
    NotationError,
    parse_contract_text,
    record_to_text,
    split_games,
    text_to_record,
)
from boneyard.records.record import record_from_json
from boneyard.records.signing import public_key_of, sign_record
from boneyard.records.verify import verify_record
from tests.clients.cli_helpers import Background, run_admin
from tests.server.process_helpers import ServerProcess, clean_env, free_port

BONEYARD = Path(sys.executable).parent / "boneyard"
DOC = Path(__file__).resolve().parents[2] / "docs" / "notation.md"


def run(*args: str, server: str | None = None) -> subprocess.CompletedProcess[str]:
    env = clean_env(BONEYARD_SERVER=server or f"127.0.0.1:{free_port()}")
    return subprocess.run(
        [str(BONEYARD), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def explain(result: subprocess.CompletedProcess[str]) -> str:
    return f"$ {' '.join(map(str, result.args))}\nexit {result.returncode}\n{result.stdout}\n{result.stderr}"


def round_trip(record: archive_pb2.GameRecord) -> archive_pb2.GameRecord:
    back = text_to_record(record_to_text(record))
    assert back == record, "the text gives back another record"
    verdict = verify_record(back)
    assert verdict.valid, str(verdict)
    return back


# ---------------------------------------------------------------- every preset, in process


@pytest.mark.parametrize("preset", engine.preset_names())
def test_a_whole_game_of_every_preset_comes_back_from_text_event_for_event(preset: str) -> None:
    for seed in range(3):
        round_trip(record_of(random_game(preset, seed)))


@pytest.mark.parametrize("preset", engine.preset_names())
def test_timeouts_and_forfeits_come_back_from_text(preset: str) -> None:
    timed = record_of(random_game(preset, 11, timeouts=0.1))
    assert "timeout " in record_to_text(timed)
    round_trip(timed)
    forfeited = record_of(random_game(preset, 12, forfeit_at=9))
    assert "\nforfeit: " in record_to_text(forfeited)
    round_trip(forfeited)


def _stuck_dealer_given(events: list[engine.Event]) -> list[engine.AuctionWon]:
    """The auctions a dealer won by passing (all_pass = forced_dealer_any_bid)."""
    return [
        e
        for before, e in itertools.pairwise(events)
        if isinstance(e, engine.AuctionWon)
        and isinstance(before, engine.Passed)
        and before.seat == e.seat
    ]


def test_an_overcall_and_a_stuck_dealers_pass_come_back_from_text() -> None:
    events = random_game("moon-overcall", 6)  # this seed's random play has both
    overcalls = [
        e for e in events if isinstance(e, engine.BidPlaced) and e.bid == Bid.overcall()
    ]
    given = _stuck_dealer_given(events)
    assert overcalls and given
    text = record_to_text(record_of(events))
    assert re.search(rf"^bids: .*\b{overcalls[0].seat} overcall\b", text, re.MULTILINE), text
    assert f"{{seat {given[0].seat} is given 5}}" in text
    round_trip(record_of(events))


def test_moon_without_a_widow_writes_no_widow_and_comes_back_from_text() -> None:
    events = random_game("moon-no-widow", 0)
    assert _stuck_dealer_given(events)
    text = record_to_text(record_of(events))
    assert "\nwidow:" not in text and "\nexchange:" not in text
    assert re.search(r"\{seat \d is given 3\}", text)
    round_trip(record_of(events))


def test_the_overcall_is_refused_where_the_table_does_not_play_it() -> None:
    events = random_game("moon", 1)
    text = record_to_text(record_of(events))
    first_bids = next(line for line in text.split("\n") if line.startswith("bids: "))
    opener = first_bids.removeprefix("bids: ").split()[0]
    with pytest.raises(NotationError, match="overcall is off"):
        text_to_record(text.replace(first_bids, f"bids: {opener} overcall", 1))


def test_a_resignation_in_the_middle_of_a_trick_comes_back_from_text() -> None:
    events = random_game("texas42", 3)
    # Cut the game at the second play of a trick and let seat 1 resign there.
    cut = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, engine.TilePlayed) and isinstance(events[i - 1], engine.TilePlayed)
    )
    state = engine.replay(events[: cut + 1])
    log = events[: cut + 1] + engine.decide(state, engine.Resign(1))
    text = record_to_text(record_of(log))
    assert "\nresign: 1\nwinner: team 0\n" in text
    round_trip(record_of(log))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    preset=st.sampled_from(engine.preset_names()),
    seed=st.integers(0, 2**32),
    timeouts=st.sampled_from([0.0, 0.05]),
)
def test_any_game_comes_back_from_text(preset: str, seed: int, timeouts: float) -> None:
    round_trip(record_of(random_game(preset, seed, timeouts=timeouts)))


def test_a_signed_record_keeps_its_signature_through_text_and_an_edit_breaks_it() -> None:
    key = Ed25519PrivateKey.generate()
    record = record_of(random_game("moon", 5))
    record.create_time.FromJsonString("2026-12-01T20:15:03.123456789Z")
    sign_record(record, key)
    text = record_to_text(record)
    back = round_trip(record)
    assert verify_record(back, public_key=public_key_of(key)).valid
    edited = text_to_record(text.replace('[Seat1 "player 1"]', '[Seat1 "mallory"]'))
    verdict = verify_record(edited)
    assert not verdict.valid and verdict.discrepancy is not None
    assert verdict.discrepancy.kind == "signature"


def test_without_its_signature_tags_the_text_imports_as_an_unsigned_record() -> None:
    record = record_of(random_game("texas42", 8))
    sign_record(record, Ed25519PrivateKey.generate())
    text = "\n".join(
        line for line in record_to_text(record).split("\n") if not line.startswith("[Sig")
    )
    back = text_to_record(text)
    assert not back.HasField("signature")
    assert str(verify_record(back)).endswith("unsigned")


# ---------------------------------------------------------------- the words


@pytest.mark.parametrize(
    ("said", "preset", "bid"),
    [
        ("30", "texas42", Bid.points(30)),
        ("42", "texas42", Bid.marks(1)),
        ("84", "texas42", Bid.marks(2)),
        ("1 mark", "texas42", Bid.marks(1)),
        ("2 marks", "texas42", Bid.marks(2)),
        ("plunge 4", "texas42-house", Bid.plunge(4)),
        ("splash 2", "texas42-house", Bid.splash(2)),
        ("5", "moon", Bid.tricks(5)),
        ("shoot the moon", "moon", Bid.moon()),
        ("3", "moon-no-widow", Bid.tricks(3)),
        ("overcall", "moon-overcall", Bid.overcall()),
        ("42", "moon-overcall", Bid.overcall()),
        ("shoot for 42", "moon-overcall", Bid.overcall()),
    ],
)
def test_bids_are_read_as_players_write_them(said: str, preset: str, bid: Bid) -> None:
    assert parse_bid(said, engine.ruleset(preset)) == bid


def test_at_a_table_of_three_42_is_a_point_bid_and_a_mark_is_written_as_such() -> None:
    rules: Ruleset = engine.ruleset("texas42", players=3)
    assert parse_bid("42", rules) == Bid.points(42)
    assert bid_text(Bid.marks(1), rules) == "1 mark"
    assert parse_bid("1 mark", rules) == Bid.marks(1)


def test_contracts_are_read_in_their_common_spellings() -> None:
    fives = engine.Contract.of_trump(5)
    for said in ("fives", "5s", "trump fives", "FIVES"):
        assert parse_contract_text(said) == fives
    for said in ("follow-me", "follow me", "no trump"):
        assert parse_contract_text(said) == engine.Contract.of_trump(engine.FOLLOW_ME)
    assert parse_contract_text("nello") == engine.Contract.nello()


# ---------------------------------------------------------------- the doc's examples


def doc_games() -> list[str]:
    return re.findall(r"```boneyard-game\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_the_examples_of_the_notation_doc_import_and_verify_signed() -> None:
    games = doc_games()
    assert len(games) == 2
    families = set()
    for text in games:
        record = text_to_record(text)
        verdict = verify_record(record, public_key=record.signature.public_key)
        assert verdict.valid, str(verdict)
        site = re.search(r'^\[Site "(.*)"\]$', text, re.MULTILINE)
        assert site, "the examples say where they were played"
        assert record_to_text(record, site=site.group(1)) == text, "as the exporter writes it"
        families.add(engine.replay([engine.GameCreated(verdict.summary.rules)]).rules.family)  # type: ignore[union-attr]
    assert families == {"texas42", "moon"}


def test_a_hand_written_game_needs_only_the_moves() -> None:
    """The doc's Texas 42 example with every derived line, tag and comment left out, plays
    and scores the same."""
    full = doc_games()[0]
    keep = []
    for line in full.split("\n"):
        if re.match(r"^(\d+|out|widow|result|winner):", line) or line.startswith(
            ("[Result", "[Winner", "[Sig", "[Date", "[Site")
        ):
            continue
        keep.append(re.sub(r" -> .*$", "", line) + "  ; my notes")
    record = text_to_record("\n".join(keep))
    assert str(verify_record(record)).endswith("unsigned")
    assert list(record.result.scores) == list(text_to_record(full).result.scores)


# ---------------------------------------------------------------- errors


def where(error: pytest.ExceptionInfo[NotationError]) -> tuple[int, int]:
    return error.value.line, error.value.column


def example_lines() -> list[str]:
    return doc_games()[0].split("\n")


def test_an_illegal_play_is_an_error_at_its_line_and_column_with_the_engines_reason() -> None:
    lines = example_lines()
    at = next(i for i, line in enumerate(lines) if line.startswith("trick 2:"))
    # Seat 2 plays 4-1 to a 5-0 lead in the example; make it play a tile it does not hold.
    assert lines[at] == "trick 2: 1 5-0, 2 4-1, 3 5-1, 0 5-4 -> 0 takes 11"
    lines[at] = "trick 2: 1 5-0, 2 6-6, 3 5-1, 0 5-4 -> 0 takes 11"
    with pytest.raises(NotationError) as error:
        text_to_record("\n".join(lines))
    assert where(error) == (at + 1, len("trick 2: 1 5-0, ") + 1)
    assert "seat 2 plays 6-6 is illegal" in error.value.message
    assert "does not hold 6-6" in error.value.message


def test_a_wrong_trick_winner_or_score_is_an_error_not_another_game() -> None:
    lines = example_lines()
    at = next(i for i, line in enumerate(lines) if line.startswith("trick 1:"))
    wrong = lines[:]
    wrong[at] = wrong[at].replace("-> 1 takes 11", "-> 2 takes 11")
    with pytest.raises(NotationError) as error:
        text_to_record("\n".join(wrong))
    assert where(error) == (at + 1, wrong[at].index("->") + 1)
    assert error.value.message == "seat 1 takes this trick, worth 11; not -> 2 takes 11"
    scored = next(i for i, line in enumerate(lines) if line.startswith("result:"))
    wrong = lines[:]
    wrong[scored] = wrong[scored].replace("scores 1 0", "scores 0 1")
    with pytest.raises(NotationError, match="scores 1 0, not 0 1"):
        text_to_record("\n".join(wrong))


def test_a_seat_out_of_turn_a_bad_tile_and_a_bad_bid_are_refused_where_they_are() -> None:
    lines = example_lines()
    bids = next(i for i, line in enumerate(lines) if line.startswith("bids:"))
    for replacement, column, message in (
        ("bids: 2 pass, 2 30, 3 31, 0 pass", 7, "seat 2 passes is illegal"),
        ("bids: 1 pass, 2 30, 3 thirty-one, 0 pass", 23, "not a bid"),
        ("bids: 1 pass, 2 30, 9 31, 0 pass", 21, "not a seat: '9'"),
    ):
        changed = lines[:]
        changed[bids] = replacement
        with pytest.raises(NotationError) as error:
            text_to_record("\n".join(changed))
        assert where(error) == (bids + 1, column), error.value
        assert message in error.value.message
    trick = next(i for i, line in enumerate(lines) if line.startswith("trick 1:"))
    changed = lines[:]
    changed[trick] = changed[trick].replace("0 6-4", "0 6-9")
    with pytest.raises(NotationError, match="not a double-six tile"):
        text_to_record("\n".join(changed))


def test_a_deal_line_the_seed_does_not_deal_is_an_error() -> None:
    lines = example_lines()
    at = next(i for i, line in enumerate(lines) if line.startswith("0: "))
    lines[at] = "0: 6-6 6-5 6-4 6-3 6-2 6-1 6-0"
    with pytest.raises(NotationError) as error:
        text_to_record("\n".join(lines))
    assert error.value.line == at + 1
    assert error.value.message.startswith("the seed deals seat 0's hand 6-6 6-4 6-3")


def test_an_unknown_tag_a_missing_rules_tag_and_an_open_comment_are_errors() -> None:
    text = doc_games()[0]
    with pytest.raises(NotationError, match=r"\[MarksToWn \"3\"\]: no such tag") as error:
        text_to_record(text.replace("[MarksToWin", "[MarksToWn"))
    assert where(error) == (8, 1)
    with pytest.raises(NotationError, match=r"no \[Rules"):
        text_to_record(text.replace('[Rules "texas42"]\n', ""))
    with pytest.raises(NotationError, match="never closed") as error:
        text_to_record(text.replace("hand 2 ", "{ hand 2 "))
    with pytest.raises(NotationError, match="no option|choose one of|must be"):
        text_to_record(text.replace('[MarksToWin "3"]', '[MarksToWin "0"]'))


def test_a_text_that_stops_before_the_game_ends_says_what_comes_next() -> None:
    lines = example_lines()
    last_bids = max(i for i, line in enumerate(lines) if line.startswith("bids:"))
    with pytest.raises(NotationError) as error:
        text_to_record("\n".join(lines[: last_bids + 1]))
    assert error.value.message == (
        "the text ends before the game does: the contract by seat 0 is next"
    )


# ---------------------------------------------------------------- a real server


def test_export_text_import_and_verify_with_a_real_server(
    archive_server: ArchiveServer, finished: dict[str, str], tmp_path: Path
) -> None:
    key = run("public-key", server=archive_server.address)
    assert key.returncode == 0, explain(key)
    for preset, game_id in finished.items():
        text = tmp_path / f"{preset}.txt"
        done = run("export", game_id, "--format", "text", "-o", str(text),
                   server=archive_server.address)  # fmt: skip
        assert done.returncode == 0, explain(done)
        assert all(f'"{name}"]' in text.read_text() for name in NAMES[preset])
        record = tmp_path / f"{preset}.json"
        done = run("import", str(text), "-o", str(record))
        assert done.returncode == 0, explain(done)
        assert f"wrote {record}: game {game_id}" in done.stderr and "(signed)" in done.stderr
        checked = run("verify", "--public-key", key.stdout.strip(), str(record))
        assert checked.returncode == 0, explain(checked)
        assert checked.stdout.startswith(f"valid: game {game_id}")
        served = archive_server.archive.GetRecord(
            archive_pb2.GetRecordRequest(game_id=game_id), timeout=60
        ).record
        assert record_from_json(record.read_text()) == served


def test_import_says_where_a_text_is_wrong_and_exits_1(tmp_path: Path) -> None:
    lines = example_lines()
    at = next(i for i, line in enumerate(lines) if line.startswith("trick 1:"))
    lines[at] = lines[at].replace("-> 1 takes 11", "-> 2 takes 11")
    path = tmp_path / "wrong.txt"
    path.write_text("\n".join(lines))
    out = tmp_path / "out.json"
    done = run("import", str(path), "-o", str(out))
    assert done.returncode == 1, explain(done)
    column = lines[at].index("->") + 1
    assert done.stderr == (
        f"{path}: line {at + 1}, column {column}: seat 1 takes this trick, worth 11; not "
        "-> 2 takes 11\n"
    )
    assert not out.exists()


def test_bulk_export_of_a_players_games_streams_every_one_as_text_or_json_lines(
    archive_server: ArchiveServer, tmp_path: Path
) -> None:
    player = "Zoe"
    for preset, seed in (("texas42", 21), ("moon", 22)):
        others = [f"{preset} rival {i}" for i in range(len(NAMES[preset]) - 1)]
        play_over_grpc(archive_server.games, preset, seed=seed, names=[*others, player])
    mine = {
        g.game_id
        for g in archive_server.archive.ListArchivedGames(
            archive_pb2.ListArchivedGamesRequest(player_name=player, page_size=200), timeout=60
        ).games
    }
    assert len(mine) == 2
    lines = tmp_path / "games.jsonl"
    done = run("export", "--player", player, "--format", "jsonl", "-o", str(lines),
               server=archive_server.address)  # fmt: skip
    assert done.returncode == 0, explain(done)
    records = [record_from_json(line) for line in lines.read_text().splitlines()]
    assert {r.game_id for r in records} == mine
    assert all(verify_record(r).valid for r in records)
    text = tmp_path / "games.txt"
    done = run("export", "--player", player, "-o", str(text), server=archive_server.address)
    assert done.returncode == 0, explain(done)
    assert f"{len(mine)} finished games of player {player} (text)" in done.stderr
    games = list(split_games(text.read_text()))
    assert [text_to_record(g, first_line=n) for n, g in games] == records
    imported = tmp_path / "imported.jsonl"
    done = run("import", str(text), "-o", str(imported))
    assert done.returncode == 0, explain(done)
    assert [record_from_json(line) for line in imported.read_text().splitlines()] == records


def test_bulk_export_needs_one_source_and_a_format_that_holds_several_games() -> None:
    both = run("export", "some-id", "--player", "x")
    assert both.returncode == 2 and "one of them" in both.stderr, explain(both)
    one = run("export", "--player", "x", "--format", "json")
    assert one.returncode == 2 and "holds one game" in one.stderr, explain(one)


KEY_LINE = re.compile(r"^key: (byk_\S+)$", re.MULTILINE)
TOURNAMENT_LINE = re.compile(r"^tournament ([0-9a-f-]{36})$", re.MULTILINE)


def test_a_tournaments_games_export_in_one_stream_and_each_verifies(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'boneyard.db'}"
    bots: list[Background] = []
    with ServerProcess.start(tmp_path / "server.log", url) as server:
        try:
            keys = {}
            for name in ("organiser", "north", "east", "south", "west"):
                kind = "player" if name == "organiser" else "bot"
                made = run_admin(f"create-{kind}", "--database-url", url, name, timeout=60)
                assert made.returncode == 0, made.explain()
                keys[name] = KEY_LINE.findall(made.stdout)[0]
            entrants = ["north", "east", "south", "west"]
            for i, name in enumerate(entrants):
                bots.append(
                    Background(
                        ["bot", "--server", server.address, "--key", keys[name], "--seed", str(i)],
                        tmp_path / "bots",
                    )
                )
            created = run(
                "tournament", "create", "--name", "notation cup", "--game", "texas42",
                *[a for e in entrants for a in ("--entrant", e)], "--deals", "1",
                "--key", keys["organiser"], server=server.address,
            )  # fmt: skip
            assert created.returncode == 0, explain(created)
            found = TOURNAMENT_LINE.search(created.stdout)
            assert found, explain(created)
            tid = found.group(1)
            ran = run("tournament", "run", tid, "--key", keys["organiser"], server=server.address)
            assert ran.returncode == 0, explain(ran) + "\n".join(b.explain() for b in bots)
            stream = tmp_path / "cup.txt"
            done = run("export", "--tournament", tid, "-o", str(stream), server=server.address)
            assert done.returncode == 0, explain(done)
            games = list(split_games(stream.read_text()))
            assert games and f"{len(games)} finished games of tournament {tid}" in done.stderr
            ids = set()
            for first_line, game in games:
                record = text_to_record(game, first_line=first_line)
                assert verify_record(record).valid
                ids.add(record.game_id)
            stub = competition_pb2_grpc.TournamentServiceStub(server.channel())
            played = stub.GetTournament(
                competition_pb2.GetTournamentRequest(tournament_id=tid), timeout=30
            ).games
            assert ids == {g.game_id for g in played}
            nothing = run("export", "--tournament", "no-such-cup", "--format", "jsonl",
                          server=server.address)  # fmt: skip
            assert nothing.returncode == 0 and nothing.stdout == "", explain(nothing)
        finally:
            for bot in bots:
                bot.kill()
