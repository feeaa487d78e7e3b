"""The web app in Debian's Chromium, against a real ``boneyard-server`` (a fresh SQLite file,
the HTTP listener on a free port): the node scripts of ``web/e2e/`` click like a person and
report what the page showed; each test checks the report against what the server holds.

Screenshots are kept under the test's temporary directory (pytest prints where on failure;
``--basetemp`` keeps them in a known place).
"""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from boneyard.api.v1 import (
    archive_pb2,
    archive_pb2_grpc,
    challenges_pb2,
    challenges_pb2_grpc,
    competition_pb2,
    competition_pb2_grpc,
    events_pb2,
    game_pb2,
    game_service_pb2,
    game_service_pb2_grpc,
    matches_pb2,
    matches_pb2_grpc,
    ratings_pb2,
    ratings_pb2_grpc,
    rules_pb2,
)
from boneyard.records.notation import record_to_text
from boneyard.records.record import dump_record
from tests.clients.cli_helpers import run_admin
from tests.server.process_helpers import SERVER_BIN, ServerProcess, clean_env
from tests.web.web_helpers import BOT, Bots, ScriptRun, bots, chromium, run_script

pytestmark = pytest.mark.slow

ACTIONS = (
    "bid_placed",
    "passed",
    "widow_exchanged",
    "widow_declined",
    "contract_declared",
    "tile_played",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    chromium()  # skip (or fail, in CI) before starting anything
    root = tmp_path_factory.mktemp("browser")
    with ServerProcess.start(
        root / "server.log", f"sqlite:///{root / 'web.db'}", http_listen="127.0.0.1:0"
    ) as running:
        yield running
        assert "Traceback" not in running.log_text(), running.log_text()


@pytest.fixture
def game_stub(server: ServerProcess) -> game_service_pb2_grpc.GameServiceStub:
    return server.stub()


@pytest.fixture
def seated(server: ServerProcess, tmp_path: Path) -> Iterator[Bots]:
    with bots(server.address, tmp_path) as running:
        yield running


def _events(stub: game_service_pb2_grpc.GameServiceStub, game_id: str) -> list[events_pb2.Event]:
    """The game's events as a spectator sees them (the stream of a game not over is cut once
    it has sent what there is)."""
    version = stub.GetGame(
        game_service_pb2.GetGameRequest(game_id=game_id), timeout=30
    ).game.version
    out: list[events_pb2.Event] = []
    call = stub.WatchGame(game_service_pb2.WatchGameRequest(game_id=game_id), timeout=60)
    try:
        for message in call:
            out.append(message.event)
            if message.version >= version:
                break
    finally:
        call.cancel()
    return out


def _seat_of(event: events_pb2.Event) -> int:
    return getattr(event, event.WhichOneof("kind")).seat


def _ok(run: ScriptRun) -> dict:
    assert run.returncode == 0, run.explain()
    assert run.report, run.explain()
    for shot in run.screenshots:
        assert shot.is_file() and shot.stat().st_size > 0, shot
    return run.report


def _pages_clean(report: dict, *pages: str, key: str = "checked") -> None:
    """Every page the script checked (lib.mjs checkPage) was there: no sideways scroll, and
    no serious or critical finding of axe-core."""
    checked = report[key]
    assert set(pages) <= set(checked), (pages, checked)
    for name, seen in checked.items():
        assert not seen["sideways"] and not seen["findings"], (name, seen)


def test_a_person_plays_a_whole_texas42_game_against_three_house_bots(
    server: ServerProcess,
    game_stub: game_service_pb2_grpc.GameServiceStub,
    tmp_path: Path,
) -> None:
    report = _ok(run_script("texas42_game.mjs", server.http_url, tmp_path))
    game = game_stub.GetGame(
        game_service_pb2.GetGameRequest(game_id=report["gameId"]), timeout=30
    ).game
    assert game.status == game_pb2.GAME_STATUS_FINISHED
    # The lobby's form asked the server for its bots: no bot process was started.
    assert [s.house_bot for s in game.seats] == ["", "heuristic", "heuristic", "heuristic"]
    assert report["scores"] == list(game.scores)
    assert report["version"] == game.version
    winners = " and ".join(
        (s.player_name or f"seat {s.seat}") + (" (you)" if s.seat == 0 else "")
        for s in game.seats
        if s.seat % 2 == game.winner
    )
    won = game.scores[game.winner]
    assert report["final"].startswith(f"Game over: {winners} won with {won} marks"), report["final"]
    # Every click the page made was answered, and every action of seat 0 was one of them.
    record = (
        archive_pb2_grpc.ArchiveServiceStub(server.channel())
        .GetRecord(archive_pb2.GetRecordRequest(game_id=report["gameId"]), timeout=30)
        .record
    )
    mine = [
        e.event
        for e in record.events
        if e.event.WhichOneof("kind") in ACTIONS and _seat_of(e.event) == 0
    ]
    assert len(mine) == report["acted"], (len(mine), report)
    assert report["checked"] == report["turns"] and report["turns"] >= 7
    assert report["hands"] >= 4
    # The stale click was refused with the server's own reason; the page came back.
    assert "Someone acted first" in report["refusal"] and "is at version" in report["refusal"]
    assert report["resumed"] and report["reloaded"]
    _pages_clean(report, "lobby", "table", "refused", "game over", key="pages")
    verdict = archive_pb2_grpc.ArchiveServiceStub(server.channel()).VerifyRecord(
        archive_pb2.VerifyRecordRequest(record=record), timeout=60
    )
    assert verdict.valid, verdict.discrepancy


def test_a_moon_hand_with_the_widow_exchange(
    server: ServerProcess,
    game_stub: game_service_pb2_grpc.GameServiceStub,
    tmp_path: Path,
) -> None:
    game_id = game_stub.CreateGame(
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset="moon", opener_seat=0),
            name="moon in the browser",
            # A clock the person never runs out of: the table shows it.
            time_control=game_pb2.TimeControl(
                per_move_ms=600_000, bank_ms=600_000, policy=events_pb2.TIMEOUT_POLICY_AUTO_PLAY
            ),
            house_bots=[
                game_service_pb2.HouseBot(seat=1, strategy="sampler"),
                game_service_pb2.HouseBot(seat=2, strategy="heuristic"),
            ],
        ),
        timeout=30,
    ).game_id
    report = _ok(run_script("moon_widow.mjs", server.http_url, tmp_path, env={"GAME_ID": game_id}))
    assert report["taken"] not in report["before"] and report["discarded"] in report["before"]
    # Each seat's bank (10:00) and the countdown of the seat to act, ticking down.
    assert [b.strip() for b in report["clock"]["banks"]] == ["bank 10:00"] * 3, report["clock"]
    first, later = (_seconds(t) for t in report["clock"]["countdown"])
    # (The seat to act runs out when its move's time and then its bank are spent.)
    assert 20 * 60 >= first > later > 19 * 60, report["clock"]
    events = _events(game_stub, game_id)
    kinds = [e.WhichOneof("kind") for e in events]
    won = next(e.auction_won for e in events if e.WhichOneof("kind") == "auction_won")
    assert won.seat == 0 and won.bid.kind == rules_pb2.BID_KIND_MOON
    exchanged = next(e.widow_exchanged for e in events if e.WhichOneof("kind") == "widow_exchanged")
    assert exchanged.seat == 0
    scored = next(e.hand_scored for e in events if e.WhichOneof("kind") == "hand_scored")
    assert scored.bidder == 0 and scored.bid.kind == rules_pb2.BID_KIND_MOON
    assert ("made" if scored.made else "set") in report["result"]
    assert f"scores now {' / '.join(map(str, scored.scores))}" in report["result"]
    assert kinds.index("widow_exchanged") < kinds.index("contract_declared")
    _pages_clean(report, "lobby", "table with a clock", "widow", "after the hand")


def test_a_texas42_house_hand_reaches_a_special_contract(
    server: ServerProcess,
    game_stub: game_service_pb2_grpc.GameServiceStub,
    tmp_path: Path,
) -> None:
    report = _ok(run_script("special_contract.mjs", server.http_url, tmp_path))
    assert report["declared"] in ("nello", "sevens")
    # The house preset offers every special contract the hand allows.
    assert {"Declare nello", "Declare sevens"} <= set(report["offered"])
    events = _events(game_stub, report["gameId"])
    declared = [
        e.contract_declared
        for e in events
        if e.WhichOneof("kind") == "contract_declared"
        and e.contract_declared.seat == 0
        and e.contract_declared.contract.kind != rules_pb2.CONTRACT_KIND_TRUMP
    ]
    assert declared, report
    kind = (
        rules_pb2.CONTRACT_KIND_NELLO
        if report["declared"] == "nello"
        else rules_pb2.CONTRACT_KIND_SEVENS
    )
    assert declared[0].contract.kind == kind
    if kind == rules_pb2.CONTRACT_KIND_NELLO:
        assert list(declared[0].sitting_out) == [2] and "sits out" in report["sittingOut"]
    after = events[[e.contract_declared for e in events].index(declared[0]) :]
    scored = next(e.hand_scored for e in after if e.WhichOneof("kind") == "hand_scored")
    assert scored.bidder == 0
    assert ("made" if scored.made else "set") in report["result"]
    # Then seat 0 resigned: its team lost at once.
    assert events[-2].WhichOneof("kind") == "resigned" and events[-2].resigned.seat == 0
    assert events[-1].WhichOneof("kind") == "game_won" and events[-1].game_won.team == 1
    assert report["final"].startswith("Game over: heuristic bot 1 and heuristic bot 3 won"), report[
        "final"
    ]
    _pages_clean(report, f"table, {report['declared']}", "game over")


def test_a_spectator_follows_a_live_game_to_its_end(
    server: ServerProcess,
    game_stub: game_service_pb2_grpc.GameServiceStub,
    seated: Bots,
    tmp_path: Path,
) -> None:
    created = game_stub.CreateGame(
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset="texas42"),
            name="watched",
            house_bots=[game_service_pb2.HouseBot(seat=s, strategy="random") for s in (1, 2, 3)],
        ),
        timeout=30,
    )

    def on_line(line: str) -> None:
        # A table of house bots only is refused: a bot process plays the last seat.
        if line == "watching":
            seated.seat(created.game_id, [0])

    report = _ok(
        run_script(
            "spectator.mjs",
            server.http_url,
            tmp_path,
            env={"GAME_ID": created.game_id},
            on_line=on_line,
        )
    )
    game = game_stub.GetGame(
        game_service_pb2.GetGameRequest(game_id=created.game_id), timeout=30
    ).game
    assert game.status == game_pb2.GAME_STATUS_FINISHED
    # Every version from the one the page opened at to the last, each once, in order.
    assert report["versions"] == list(range(created.game.version + 1, game.version + 1))
    assert report["scores"] == list(game.scores)
    assert report["final"].startswith("Game over: ") and report["midGame"]
    assert report["leaks"] == 0
    _pages_clean(report, "waiting for players", "game over")


def test_the_replay_steps_through_an_archived_game_verified(
    server: ServerProcess, tmp_path: Path
) -> None:
    played = subprocess.run(
        [
            str(BOT),
            "bot",
            "--server",
            server.address,
            "--new",
            "texas42",
            "--strategy",
            "heuristic",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    game_id = played.stdout.split()[1]
    record = (
        archive_pb2_grpc.ArchiveServiceStub(server.channel())
        .GetRecord(archive_pb2.GetRecordRequest(game_id=game_id), timeout=30)
        .record
    )
    report = _ok(run_script("replay.mjs", server.http_url, tmp_path, env={"GAME_ID": game_id}))
    assert report["verdict"].startswith("Verified:")
    assert "stored copy is the same" in report["verdict"]
    fingerprint = (
        archive_pb2_grpc.ArchiveServiceStub(server.channel())
        .GetSigningKey(archive_pb2.GetSigningKeyRequest(), timeout=30)
        .fingerprint
    )
    assert f"Signed by this server (key fingerprint {fingerprint})." in report["verdict"]
    steps = report["steps"]
    total = len(record.events)
    assert steps["start"]["caption"].startswith(f"Event 2 of {total}: Hand 1 dealt")
    assert steps["start"]["inHands"] == 28  # every hand face up
    assert steps["move"]["caption"].startswith(f"Event 3 of {total}: ")
    assert "wins the trick" in steps["trick"]["caption"] and steps["trick"]["inHands"] == 24
    for name in ("hand", "hand2"):
        assert " and made it: " in steps[name]["caption"] or " was set: " in steps[name]["caption"]
    assert "Hand 2 dealt" in steps["back"]["caption"] and steps["back"]["inHands"] == 28
    assert steps["key"]["caption"].startswith(
        f"Event {int(steps['back']['caption'].split()[1]) + 1} of"
    )
    assert steps["end"]["caption"].startswith(f"Event {total} of {total}: Game over")
    assert report["scores"] == list(record.result.scores)
    _pages_clean(report, "archive", "replay", "replay at the end")


@pytest.fixture(scope="module")
def finished_game(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Texas 42 game played to its end: "bot 0" (a bot process) in seat 0, house bots in the
    others (a random one among them, so that some plays cost)."""
    stub = server.stub()
    game_id = stub.CreateGame(
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset="texas42"),
            name="Sunday 42",
            house_bots=[
                game_service_pb2.HouseBot(seat=1, strategy="heuristic"),
                game_service_pb2.HouseBot(seat=2, strategy="random"),
                game_service_pb2.HouseBot(seat=3, strategy="heuristic"),
            ],
        ),
        timeout=30,
    ).game_id
    with bots(server.address, tmp_path_factory.mktemp("nina")) as running:
        running.seat(game_id, [0])
        watch = stub.WatchGame(game_service_pb2.WatchGameRequest(game_id=game_id), timeout=600)
        for message in watch:
            if message.event.WhichOneof("kind") == "game_won":
                break
        watch.cancel()
    return game_id


def _tile_name(tile: int) -> str:
    high = 0
    while (high + 1) * (high + 2) // 2 <= tile:
        high += 1
    return f"{high}-{tile - high * (high + 1) // 2}"


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_the_replays_analysis_is_the_servers_for_every_play_of_every_hand(
    server: ServerProcess, finished_game: str, tmp_path: Path, screen: str
) -> None:
    report = _ok(
        run_script(
            "replay_analysis.mjs",
            server.http_url,
            tmp_path,
            env={"GAME_ID": finished_game, "SCREEN": screen},
        )
    )
    archive = archive_pb2_grpc.ArchiveServiceStub(server.channel())
    record = archive.GetRecord(archive_pb2.GetRecordRequest(game_id=finished_game), timeout=30)
    dealt = [
        e.event.hand_dealt.number for e in record.record.events if e.event.HasField("hand_dealt")
    ]
    shown = {hand["hand"]: hand for hand in report["hands"]}
    costs = 0
    for number in dealt:
        answer = archive.AnalyzeHand(
            archive_pb2.AnalyzeHandRequest(game_id=finished_game, hand_number=number), timeout=300
        )
        if not answer.plays:
            continue  # a redeal: no play to show (the replay's Next hand may pass it by)
        hand = shown[number]
        assert hand["state"] == "done"
        assert len(hand["plays"]) == len(answer.plays), (number, hand)
        for seen, play in zip(hand["plays"], answer.plays, strict=True):
            # Who played which tile, each legal tile's value, and the verdict, as the page reads.
            assert seen["seat"] == play.seat
            assert seen["head"].endswith(f" played {_tile_name(play.tile)}"), seen
            assert seen["values"] == [[_tile_name(o.tile), o.value] for o in play.options]
            if play.cost:
                unit = "point" if answer.measure == archive_pb2.ANALYSIS_MEASURE_POINTS else "trick"
                assert seen["verdict"] == f"✗ cost {play.cost} {unit}{'s' if play.cost > 1 else ''}"
                costs += 1
            else:
                assert seen["verdict"] == ("✓ only tile" if len(play.options) == 1 else "✓ best")
    if costs:
        assert report["worst"] and f"this play cost {report['worst']['cost']} " in report["note"]
    checked = report["checked"]["replay with analysis"]
    assert not checked["sideways"] and not checked["findings"], checked


def _seconds(clock: str) -> int:
    minutes, seconds = clock.split(":")
    return int(minutes) * 60 + int(seconds)


def test_the_new_game_form_offers_the_servers_presets_and_shows_their_values(
    server: ServerProcess, game_stub: game_service_pb2_grpc.GameServiceStub, tmp_path: Path
) -> None:
    report = _ok(run_script("lobby_presets.mjs", server.http_url, tmp_path))
    presets = game_stub.ListPresets(game_service_pb2.ListPresetsRequest(), timeout=30).presets
    assert report["offered"] == [[p.name, p.description] for p in presets]
    # moon-overcall: bids from 5, the overcall on, the widow as in Moon, seat 0 opening.
    assert report["shown"] == {
        "moon_min_bid": "5 (the preset's)",
        "moon_overcall": "on (the preset's)",
        "widow": "must exchange (the preset's)",
        "first_hand_opener": "opener seat 0 (the preset's)",
    }
    assert report["seats"] == 3
    _pages_clean(report, "lobby with the options")


def test_typing_in_the_lobby_survives_its_redraw(server: ServerProcess, tmp_path: Path) -> None:
    report = _ok(run_script("lobby_typing.mjs", server.http_url, tmp_path))
    assert report == {"focused": "lobby-name", "name": "alice"}


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_a_game_created_elsewhere_appears_in_the_open_lobby_and_leaves_it_when_over(
    server: ServerProcess,
    game_stub: game_service_pb2_grpc.GameServiceStub,
    tmp_path: Path,
    screen: str,
) -> None:
    report = _ok(run_script("lobby_live.mjs", server.http_url, tmp_path, env={"SCREEN": screen}))
    # The issue asks for under a second: the machine's speed, printed, not asserted (a change
    # that never shows fails the script).
    print(f"lobby on {screen}: shown after {report['ms']} ms")
    game = game_stub.GetGame(
        game_service_pb2.GetGameRequest(game_id=report["gameId"]), timeout=30
    ).game
    assert game.status == game_pb2.GAME_STATUS_FINISHED
    assert report["line"].startswith(f"made elsewhere ({screen}) · Texas 42")
    assert "3/4 seated" in report["line"], report["line"]
    assert "4/4 seated" in report["playingLine"] and "elsewhere" in report["playingLine"]
    # The first stream was cut by the network: the page said so and opened another by itself.
    assert report["cut"] == 1
    assert report["states"][-1] == "live" and "reconnecting" in report["states"], report
    assert all(not c["sideways"] and not c["findings"] for c in report["checked"].values())


def test_a_refusal_is_said_in_its_reasons_words_beside_the_servers_message(
    server: ServerProcess, tmp_path: Path
) -> None:
    report = _ok(run_script("refusal_words.mjs", server.http_url, tmp_path))
    missing, malformed = report["missing"], report["malformed"]
    assert missing["alert"].startswith("There is no such game. The server said: "), missing
    assert missing["id"] in missing["alert"], missing
    assert malformed["alert"].startswith("That is not a game id. The server said: "), malformed
    assert malformed["id"] in malformed["alert"], malformed


def test_a_stream_refused_for_good_is_said_beside_the_game_after_a_choice_too(
    server: ServerProcess, tmp_path: Path
) -> None:
    report = _ok(run_script("stream_refused.mjs", server.http_url, tmp_path))
    assert "not following the game (PermissionDenied" in report["stopped"], report
    assert report["alert"].startswith("PermissionDenied"), report
    # The choice succeeded (its answer cleared the refusal); the page still says it is not live.
    assert report["alerts"] == 0, report
    assert "not following the game" in report["after"], report
    _pages_clean(report, "not following")


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_a_new_player_plays_the_computer_from_one_click_in_the_lobby(
    server: ServerProcess,
    game_stub: game_service_pb2_grpc.GameServiceStub,
    tmp_path: Path,
    screen: str,
) -> None:
    report = _ok(
        run_script(
            "play_computer.mjs",
            server.http_url,
            tmp_path,
            env={"SCREEN": screen, "GAME": "Texas 42", "BOTS": "heuristic"},
        )
    )
    game = game_stub.GetGame(
        game_service_pb2.GetGameRequest(game_id=report["gameId"]), timeout=30
    ).game
    # One click made a Texas 42 game of house bots with the player in seat 0, played to its end.
    assert game.status == game_pb2.GAME_STATUS_FINISHED
    assert game.rules.preset == "texas42"
    assert [s.house_bot for s in game.seats] == ["", "heuristic", "heuristic", "heuristic"]
    assert game.seats[0].player_name == "nina"
    events = _events(game_stub, report["gameId"])
    scored = [e.hand_scored for e in events if e.WhichOneof("kind") == "hand_scored"]
    # Every hand's result was shown: between hands until Continue, and the last one at the end.
    assert len(report["summaries"]) == len(scored) - 1, report
    for shown, result in zip(report["summaries"], scored, strict=False):
        assert shown.startswith("Hand "), shown
        assert ("made it" if result.made else "set") in shown, (shown, result)
    assert ("made it" if scored[-1].made else "set") in report["finalSummary"]
    assert report["final"].startswith("Game over: ")
    assert report["keyboard"] and report["reloaded"] and report["spectated"]["lines"] >= 1
    # The other three hands are one picture each to a screen reader.
    assert report["faceDown"] == 3
    # No page scrolled sideways, and axe found nothing serious or critical on any.
    assert set(report["checked"]) == {
        "lobby",
        "table",
        "hand result",
        "game over",
        "help",
        "archive",
        "replay",
    }, report["checked"]
    assert all(n == 0 for n in report["checked"].values()) and report["axe"] == 0, report


# ---------------------------------------------------------------- accounts in the browser


@dataclass
class Arena:
    """A server of its own for the account tests (its leaderboard is theirs alone), and its
    database, where the operator's commands make the accounts."""

    server: ServerProcess
    database_url: str

    def create(self, kind: str, name: str) -> str:
        """``boneyard-server admin create-KIND NAME``: the key it printed once."""
        made = run_admin(f"create-{kind}", name, "--database-url", self.database_url)
        assert made.returncode == 0, made.stderr
        return _KEY_LINE.search(made.stdout).group(1)  # type: ignore[union-attr]

    def revoke(self, name: str) -> None:
        done = run_admin("revoke", name, "--database-url", self.database_url)
        assert done.returncode == 0, done.stderr


_KEY_LINE = re.compile(r"^key: (byk_\S+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    chromium()
    root = tmp_path_factory.mktemp("arena")
    url = f"sqlite:///{root / 'arena.db'}"
    with ServerProcess.start(root / "server.log", url, http_listen="127.0.0.1:0") as running:
        yield Arena(running, url)
        assert "Traceback" not in running.log_text(), running.log_text()


def _close(shown: str, value: float) -> bool:
    """The page's one decimal is the server's number (rounded either way at a tie)."""
    return abs(float(shown.replace("−", "-").replace("±", "")) - value) <= 0.05 + 1e-9


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_a_player_signs_in_challenges_bot_accounts_and_sees_the_rating_change(
    arena: Arena, tmp_path: Path, screen: str
) -> None:
    me = f"alice-{screen}"
    me_key = arena.create("player", me)
    names = [f"{bot}-{screen}" for bot in ("alpha", "beta", "gamma")]
    keys = [arena.create("bot", name) for name in names]
    revoked = f"mallory-{screen}"
    revoked_key = arena.create("player", revoked)
    arena.revoke(revoked)
    with bots(arena.server.address, tmp_path) as running:
        for name, key in zip(names, keys, strict=True):
            running.account(name, key, "--accept", "texas42")
        report = _ok(
            run_script(
                "accounts.mjs",
                arena.server.http_url,
                tmp_path,
                env={
                    "SCREEN": screen,
                    "ME": me,
                    "ME_KEY": me_key,
                    "REVOKED_KEY": revoked_key,
                    "BOTS": ",".join(names),
                    "CHALLENGER_KEY": keys[0],
                },
            )
        )
    channel = arena.server.channel()
    # Signing in: text that is no key, a key nobody has and a revoked key, each said plainly.
    refused = report["refusals"]
    assert refused["notAKey"].startswith(
        "That is not an account key: an account key starts with byk_"
    )
    assert refused["unknown"] == refused["revoked"]
    assert refused["unknown"].startswith(
        "The server does not know this key: it belongs to no account, or it was revoked"
    )
    assert report["name"] == report["navName"] == me
    # Signing out forgot the key (and the seats held with it).
    assert report["kept"] == [] and report["navAfter"] == "Sign in"

    # The challenges the page answered, as the server holds them.
    challenges = challenges_pb2_grpc.ChallengeServiceStub(channel)

    def challenge(challenge_id: str) -> challenges_pb2.Challenge:
        return challenges.GetChallenge(  # type: ignore[no-any-return]
            challenges_pb2.GetChallengeRequest(challenge_id=challenge_id),
            metadata=(("authorization", f"Bearer {keys[0]}"),),
            timeout=30,
        ).challenge

    declined = challenge(report["declinedId"])
    assert (
        declined.status == challenges_pb2.CHALLENGE_STATUS_DECLINED and declined.declined_by == me
    )
    assert report["declinedLine"] == "Declined by you."
    accepted = challenge(report["acceptedId"])
    assert accepted.status == challenges_pb2.CHALLENGE_STATUS_ACCEPTED
    assert accepted.game_id == report["shortGame"]
    stub = game_service_pb2_grpc.GameServiceStub(channel)
    short = stub.GetGame(game_service_pb2.GetGameRequest(game_id=accepted.game_id), timeout=30).game
    mine = next(p for p in accepted.participants if p.account == me)
    assert f"you play seat {mine.seat}" in report["seatedLine"]
    # The person resigned at the table the acceptance took them to: the bot's side won.
    assert short.status == game_pb2.GAME_STATUS_FINISHED and short.winner != mine.seat
    assert "name one for seat 2 and seat 3, or send it unrated" in report["ratedRefusal"]

    # The rated game: the four accounts, one hand, played to its end and rated.
    game = stub.GetGame(
        game_service_pb2.GetGameRequest(game_id=report["ratedGame"]), timeout=30
    ).game
    assert game.status == game_pb2.GAME_STATUS_FINISHED and game.rules.hand_limit == 1
    assert [s.player_name for s in game.seats] == [me, *names]
    assert report["final"].startswith("Game over: ")
    rating_stub = ratings_pb2_grpc.RatingServiceStub(channel)
    (texas,) = rating_stub.GetRating(
        ratings_pb2.GetRatingRequest(account_name=me), timeout=30
    ).ratings
    assert texas.rating.game_type == rules_pb2.FAMILY_TEXAS42 and texas.rating.games == 1
    (change,) = texas.history
    assert change.game_id == report["ratedGame"]
    before = change.mu_before - 3 * change.sigma_before
    after = change.mu_after - 3 * change.sigma_after
    # Your page, open all along and never reloaded, said the change as it came...
    shown = re.search(r"Your Texas 42 rating: (\S+) → (\S+), after game", report["ratedLine"])
    assert shown and _close(shown[1], before) and _close(shown[2], after), report["ratedLine"]
    assert _close(report["ratingShown"], texas.rating.ordinal)
    assert "1 rated game (provisional until 10 games)" in report["cardParts"]
    # ... after the game's start and end, all pushed by the account's stream.
    feed = report["feed"]
    assert feed[:3] == ["gameRated", "gameFinished", "gameStarted"], feed
    assert feed[3:6] == ["challengeAnswered"] * 3, feed  # the three bots' acceptances
    # Every event since the account was made, newest first, once the earlier are asked for:
    # the bot's two challenges (received, answered) and the short game, then the rated one.
    assert report["feedAll"][::-1] == [
        "challengeReceived",
        "challengeAnswered",
        "challengeReceived",
        "challengeAnswered",
        "gameStarted",
        "gameFinished",
        *["challengeAnswered"] * 3,
        "gameStarted",
        "gameFinished",
        "gameRated",
    ], report["feedAll"]
    assert "is yours: seat 0 (a challenge)" in report["startedLine"]

    # The leaderboard is the server's, line for line; the player's line is marked.
    board = rating_stub.GetLeaderboard(
        ratings_pb2.GetLeaderboardRequest(game_type=rules_pb2.FAMILY_TEXAS42), timeout=30
    ).entries
    rows = report["rows"]
    assert [r["account"] for r in rows] == [e.rating.account_name for e in board]
    for row, entry in zip(rows, board, strict=True):
        assert row["rank"] == str(entry.rank) and row["games"] == str(entry.rating.games)
        assert _close(row["rating"], entry.rating.ordinal)
        assert row["mine"] == (entry.rating.account_name == me)
    assert {me, *names} <= {r["account"] for r in rows}
    beta = rating_stub.GetRating(ratings_pb2.GetRatingRequest(account_name=names[1]), timeout=30)
    assert report["botPage"]["title"] == names[1]
    assert _close(report["botPage"]["rating"], beta.ratings[0].rating.ordinal)
    assert report["botPage"]["history"] == len(beta.ratings[0].history)
    assert set(report["checked"]) == {
        "sign in",
        "your page",
        "challenges",
        "table",
        "your page after",
        "leaderboard",
        "an account's page",
        "moon leaderboard",
    }
    assert all(not c["sideways"] and not c["findings"] for c in report["checked"].values())


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_a_player_seeks_a_table_cancels_and_is_seated_when_two_bots_seek_it_too_then_is_revoked(
    arena: Arena, tmp_path: Path, screen: str
) -> None:
    me = f"seeker-{screen}"
    me_key = arena.create("player", me)
    names = [f"moon-{n}-{screen}" for n in ("a", "b")]
    keys = [arena.create("bot", name) for name in names]
    with bots(arena.server.address, tmp_path) as running:

        def on_line(line: str) -> None:
            if line == "seeking":
                for name, key in zip(names, keys, strict=True):
                    running.account(name, key, "--seek", "moon", "--games", "1")
            elif line == "revoke":
                arena.revoke(me)

        report = _ok(
            run_script(
                "seek.mjs",
                arena.server.http_url,
                tmp_path,
                env={"SCREEN": screen, "ME": me, "ME_KEY": me_key},
                on_line=on_line,
            )
        )
    # The cancelled seek left the server: the second was again the only one waiting.
    assert report["first"].startswith("Seeking a Moon (moon) table: 1 of 3 players waiting, 2 more")
    assert report["again"] == report["first"]
    assert report["cancelled"] == "You stopped seeking."
    game = (
        game_service_pb2_grpc.GameServiceStub(arena.server.channel())
        .GetGame(game_service_pb2.GetGameRequest(game_id=report["gameId"]), timeout=30)
        .game
    )
    assert sorted(s.player_name for s in game.seats) == sorted([me, *names])
    seat = next(s.seat for s in game.seats if s.player_name == me)
    assert f"you play seat {seat}" in report["seated"]
    assert game.status == game_pb2.GAME_STATUS_FINISHED and game.winner != seat
    # The key revoked by the operator: the page signed out, said why, and forgot the key.
    assert report["revoked"].startswith("You are signed out. The server does not know this key")
    assert report["navAfter"] == "Sign in" and not report["keyKept"]
    assert not report["checked"]["seeking"]["sideways"]
    assert not report["checked"]["seeking"]["findings"]


def _database_url(server: ServerProcess) -> str:
    """The database of the module's server (the ``server`` fixture keeps it beside its log)."""
    return f"sqlite:///{server.log_path.parent / 'web.db'}"


def _account(database_url: str, kind: str, name: str) -> str:
    """A new account made as the operator makes one (``boneyard-server admin create-KIND``): its key."""
    made = subprocess.run(
        [str(SERVER_BIN), "admin", f"create-{kind}", name, "--database-url", database_url],
        check=False, capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    found = re.search(r"^key: (byk_\S+)$", made.stdout, re.MULTILINE)
    assert found, made.stdout
    return found.group(1)


def _standing_rows(standings: Iterable[competition_pb2.Standing]) -> list[list[str]]:
    """The lines of a standings table as the page writes them."""
    return [
        [str(place), s.name, f"{s.ordinal:.2f}", f"{s.rating:.2f}", f"{s.uncertainty:.2f}",
         str(s.games), str(s.wins), str(s.score_for), str(s.score_against)]
        for place, s in enumerate(standings, start=1)
    ]


def test_a_tournaments_page_follows_it_from_before_its_start_to_its_end(
    server: ServerProcess, tmp_path: Path
) -> None:
    """Texas 42, two duplicate deals of one hand, four bot entrants (``boneyard bot --key``
    processes), followed on a desktop and a phone at once; the fourth entrant's bot comes late
    and leaves after two games, so that the pages are seen at each stage: not started, deal 1
    behind closed doors, deal 1 over and deal 2 behind closed doors, and the end."""
    database = _database_url(server)
    tag = uuid.uuid4().hex[:6]
    organiser_name = f"organiser-{tag}"
    organiser = _account(database, "player", organiser_name)
    entrants = [f"{seat}-{tag}" for seat in ("north", "east", "south", "west")]
    keys = {name: _account(database, "bot", name) for name in entrants}
    late = entrants[3]

    def cli(*args: str) -> str:
        done = subprocess.run(
            [str(BOT), *args, "--server", server.address],
            check=False, capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    made = cli(
        "tournament", "create", "--name", f"Browser cup {tag}", "--game", "texas42", "--deals", "2",
        "--option", "hand_limit=1", *(a for e in entrants for a in ("--entrant", e)),
        # Two games at once: a deal's two playings, deal after deal, so each stage is seen.
        "--max-games-per-entrant", "2", "--key", organiser,
    )
    found = re.search(r"^tournament (\S+)$", made, re.MULTILINE)
    assert found, made
    tournament_id = found.group(1)
    made = cli(
        "tournament", "create", "--name", f"Called off {tag}", "--game", "texas42", "--deals", "1",
        *(a for e in entrants for a in ("--entrant", e)), "--key", organiser,
    )
    found = re.search(r"^tournament (\S+)$", made, re.MULTILINE)
    assert found, made
    cancelled_id = found.group(1)
    cli("tournament", "cancel", cancelled_id, "--key", organiser)
    bots: dict[str, subprocess.Popen[bytes]] = {}

    def bot(name: str, *extra: str) -> subprocess.Popen[bytes]:
        with open(tmp_path / f"bot-{name}.log", "ab") as log:
            return subprocess.Popen(
                [str(BOT), "bot", "--server", server.address, "--key", keys[name],
                 "--strategy", "heuristic", *extra],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=clean_env(),
            )

    def on_line(line: str) -> None:
        if line == "watching":
            cli("tournament", "run", tournament_id, "--detach", "--key", organiser)
        elif line == "closed":
            bots["late"] = bot(late, "--games", "2")
        elif line == "held":
            # (the first one has played its two games, and goes: one process per seat)
            assert bots["late"].wait(timeout=300) == 0
            bots["again"] = bot(late)

    try:
        for name in entrants[:3]:
            bots[name] = bot(name)
        report = _ok(
            run_script("tournament.mjs", server.http_url, tmp_path,
                       env={"TOURNAMENT_ID": tournament_id, "CANCELLED_ID": cancelled_id},
                       on_line=on_line)
        )
    finally:
        for proc in bots.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)

    done = competition_pb2_grpc.TournamentServiceStub(server.channel()).GetTournament(
        competition_pb2.GetTournamentRequest(tournament_id=tournament_id), timeout=60
    )
    assert done.tournament.status == competition_pb2.TOURNAMENT_STATUS_FINISHED
    assert len(done.games) == 4 and len(done.individuals) == 4 and len(done.partnerships) == 4

    # The list: the tournament not started, its game, entrants, progress and organiser.
    for line in report["listed"].values():
        assert line.startswith(f"Browser cup {tag} not started Texas 42 (texas42) · 2 deals, duplicate · 4 entrants: "), line
        assert all(e in line for e in entrants) and "0 of 4 games over" in line
        assert f"organised by {organiser_name}" in line
    # Before the start: the schedule, nothing played.
    before = report["notStarted"]
    assert before["status"] == "not started" and before["noStandings"] == "No game is played yet."
    assert [(g["deal"], g["state"], g["link"]) for g in before["games"]] == [
        (g.deal, "to come", None) for g in done.games
    ]
    # Deal 1 being played behind closed doors: shown, not linked, not in the standings.
    closed = report["closed"]
    assert closed["status"] == "being played" and closed["stateLine"].startswith("Playing deal 1 · 0 of 4 games over")
    assert [(g["deal"], g["state"], g["link"]) for g in closed["games"]] == [
        (0, "closed", None), (0, "closed", None), (1, "to come", None), (1, "to come", None)
    ]
    assert all("behind closed doors" in g["text"] for g in closed["games"][:2])
    assert not closed["individuals"] and closed["noStandings"].startswith("No deal is over yet")
    # Deal 1 over: its games linked to their replays and counted; deal 2 behind closed doors.
    held = report["held"]
    assert [(g["deal"], g["state"]) for g in held["games"]] == [
        (0, "finished"), (0, "finished"), (1, "closed"), (1, "closed")
    ]
    assert [g["link"] for g in held["games"]] == [
        f"#/replay/{done.games[0].game_id}", f"#/replay/{done.games[1].game_id}", None, None
    ]
    assert [row[5] for row in held["individuals"]] == ["2"] * 4  # each played deal 1 twice
    assert "2 of 4 games over · 1 of 2 deals done" in held["stateLine"]
    # The end, followed with no click: on each screen the server's standings, to the
    # hundredth, its winner and every game with its result and replay.
    teams = [list(team.seats) for team in done.tournament.teams]
    for screen, final in report["final"].items():
        assert final["status"] == "finished", screen
        assert final["individuals"] == _standing_rows(done.individuals), screen
        assert final["partnerships"] == _standing_rows(done.partnerships), screen
        assert final["winner"] == f"{done.individuals[0].name} won the tournament"
        assert final["connection"] is None, final  # no longer asking the server
        assert [(g["number"], g["gameId"], g["state"], g["link"]) for g in final["games"]] == [
            (g.number, g.game_id, "finished", f"#/replay/{g.game_id}") for g in done.games
        ]
        for shown, game in zip(final["games"], done.games, strict=True):
            won = " & ".join(game.seats[s] for s in teams[game.winner])
            marks = game.scores[game.winner]
            assert shown["text"].startswith(f"{won} won, {marks} mark{'s' if marks != 1 else ''} to "), shown
    # The page redrew as the tournament ended: the link a keyboard user was on kept its focus.
    assert report["focusKept"] == f"#/replay/{done.games[0].game_id}"
    assert report["replay"].startswith("Verified:"), report["replay"]
    assert report["bad"] == {
        "malformed": "This address does not name a tournament (not a tournament id: 'not-a-tournament').",
        "unknown": "There is no such tournament on this server "
        "(no tournament 00000000-0000-4000-8000-000000000000).",
    }
    cancelled = report["cancelled"]
    assert cancelled["stateLine"].startswith("Cancelled by its organiser"), cancelled
    assert cancelled["noStandings"] == "No deal was played out before it was cancelled."
    assert [g["state"] for g in cancelled["games"]] == ["not played"] * 2 and cancelled["winner"] is None
    assert report["small"] == [], report["small"]
    assert len(report["checked"]) == 14, sorted(report["checked"])


def test_a_swiss_tournaments_page_shows_its_rounds_byes_and_tie_breaks(
    server: ServerProcess, tmp_path: Path
) -> None:
    """Texas 42, three bot entrants (``boneyard bot --key`` processes, each holding both seats
    of its partnership), two Swiss rounds of one deal a pairing, played to the end; then its
    page on a desktop and a phone: the winner, the standings in the server's order with their
    tie-breaks, each round's pairing with its marks and its bye, the games deal by deal."""
    database = _database_url(server)
    tag = uuid.uuid4().hex[:6]
    organiser = _account(database, "player", f"swiss-organiser-{tag}")
    entrants = [f"{who}-{tag}" for who in ("ann", "bob", "cy")]
    keys = {name: _account(database, "bot", name) for name in entrants}

    def cli(*args: str) -> str:
        done = subprocess.run(
            [str(BOT), *args, "--server", server.address],
            check=False, capture_output=True, text=True, timeout=300, env=clean_env(), stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    made = cli(
        "tournament", "create", "--name", f"Swiss cup {tag}", "--game", "texas42", "--format", "swiss",
        "--rounds", "2", *(a for e in entrants for a in ("--entrant", e)), "--key", organiser,
    )
    found = re.search(r"^tournament (\S+)$", made, re.MULTILINE)
    assert found, made
    tournament_id = found.group(1)
    bots = []
    try:
        for name in entrants:
            with open(tmp_path / f"bot-{name}.log", "ab") as log:
                bots.append(subprocess.Popen(
                    [str(BOT), "bot", "--server", server.address, "--key", keys[name], "--strategy", "heuristic"],
                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=clean_env(),
                ))
        cli("tournament", "run", tournament_id, "--key", organiser)
    finally:
        for proc in bots:
            proc.kill()
            proc.wait(timeout=30)
    done = competition_pb2_grpc.TournamentServiceStub(server.channel()).GetTournament(
        competition_pb2.GetTournamentRequest(tournament_id=tournament_id), timeout=60
    )
    assert done.tournament.status == competition_pb2.TOURNAMENT_STATUS_FINISHED
    report = _ok(run_script("swiss.mjs", server.http_url, tmp_path, env={"TOURNAMENT_ID": tournament_id}))

    def pts(x: float) -> str:
        whole = int(x)
        return f"{whole or ''}½" if x - whole >= 0.5 else str(whole)

    for screen, seen in report["seen"].items():
        assert seen["meta"].startswith("Texas 42 (texas42), each game one hand · Swiss, 2 rounds of 1 deal a pairing"), seen
        assert "Finished · 4 of 4 games over · round 2 of 2" in seen["stateLine"], seen
        top = done.swiss_standings[0]
        assert seen["winner"] == f"{top.name} won the tournament", screen
        assert seen["head"][1:] == ["Entrant", "Score", "Buchholz", "Marks +/−", "Won", "Drawn", "Lost", "Byes"]
        assert seen["standings"] == [
            [str(i), s.name, pts(s.score), pts(s.buchholz),
             f"{s.marks_for - s.marks_against:+d}" if s.marks_for != s.marks_against else "0",
             str(s.wins), str(s.draws), str(s.losses), str(s.byes)]
            for i, s in enumerate(done.swiss_standings, 1)
        ], screen
        assert [r["title"] for r in seen["rounds"]] == ["Round 1", "Round 2"]
        for shown, r in zip(seen["rounds"], done.rounds, strict=True):
            assert shown["bye"] == r.bye
            assert [(p["first"], p["second"], p["state"]) for p in shown["pairings"]] == [
                (p.first, p.second, "over") for p in r.pairings
            ]
            for p, text in zip(r.pairings, (p["text"] for p in shown["pairings"]), strict=True):
                assert f"{p.first_marks}–{p.second_marks} marks" in text, text
        assert seen["deals"] == ["Deal 1 (round 1) · over", "Deal 2 (round 2) · over"]
        assert seen["games"] == 4
    assert len(report["checked"]) == 2, sorted(report["checked"])


def _signed(x: float, digits: int = 2) -> str:
    """A figure as the match page writes it: its sign, a true minus, no sign on 0."""
    shown = f"{abs(x):.{digits}f}"
    return shown if not shown.strip("0.") else ("+" if x > 0 else "\u2212") + shown


def _near(shown: str | None, value: float, digits: int = 2) -> bool:
    """The page's rounding is the server's figure (to the last digit shown, either way at a
    tie: JavaScript's toFixed and Python's format differ there)."""
    assert shown is not None
    number = float(shown.replace("\u2212", "-").replace("%", "").strip())
    return abs(number - value) <= 0.5 * 10**-digits + 1e-9


def test_a_matchs_page_follows_it_to_the_sprts_verdict_and_the_list_shows_every_answer(
    server: ServerProcess, tmp_path: Path
) -> None:
    """Texas 42, one hand a playing: two bot accounts, the heuristic (A) against random play
    (B), in an SPRT match, a match of three deals, and a match cancelled before its bots came.
    The pages are open on a desktop and a phone before any bot plays (the deals behind closed
    doors); then the bots (``boneyard bot --key`` processes) play, and the pages follow the SPRT
    match to its verdict with no click and show the server's figures, its verdict in words,
    and every deal's playings with their marks, linked to their replays."""
    database = _database_url(server)
    tag = uuid.uuid4().hex[:6]
    organiser_name = f"match-organiser-{tag}"
    organiser = _account(database, "player", organiser_name)
    a, b = f"smart-{tag}", f"dice-{tag}"
    keys = {a: _account(database, "bot", a), b: _account(database, "bot", b)}

    def cli(*args: str) -> str:
        done = subprocess.run(
            [str(BOT), *args, "--server", server.address],
            check=False, capture_output=True, text=True, timeout=120, env=clean_env(), stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def create(*length: str) -> str:
        made = cli("match", "create", a, b, *length, "--key", organiser)
        found = re.search(r"^match (\S+)$", made, re.MULTILINE)
        assert found, made
        return found.group(1)

    match_id = create("--sprt", "--m0", "0", "--m1", "0.1")
    fixed_id = create("--deals", "3", "--in-flight", "2")
    cancelled_id = create("--deals", "5", "--in-flight", "2")
    cli("match", "cancel", cancelled_id, "--key", organiser)
    bots: list[subprocess.Popen[bytes]] = []

    def on_line(line: str) -> None:
        if line != "watching":
            return
        for name, strategy in ((a, "heuristic"), (b, "random")):
            with open(tmp_path / f"bot-{name}.log", "ab") as log:
                bots.append(subprocess.Popen(
                    [str(BOT), "bot", "--server", server.address, "--key", keys[name],
                     "--strategy", strategy, "--concurrency", "8"],
                    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=clean_env(),
                ))

    try:
        report = _ok(run_script(
            "match.mjs", server.http_url, tmp_path, on_line=on_line,
            env={"MATCH_ID": match_id, "FIXED_ID": fixed_id, "CANCELLED_ID": cancelled_id},
        ))
    finally:
        for proc in bots:
            proc.kill()
            proc.wait(timeout=30)

    stub = matches_pb2_grpc.MatchServiceStub(server.channel())
    done = stub.GetMatch(matches_pb2.GetMatchRequest(match_id=match_id), timeout=60).match
    deals = stub.ListMatchDeals(matches_pb2.ListMatchDealsRequest(match_id=match_id, page_size=200), timeout=60).deals
    assert done.status == matches_pb2.MATCH_STATUS_FINISHED
    assert done.verdict == matches_pb2.MATCH_VERDICT_A_STRONGER, done
    games = server.stub()

    # Before the bots: listed being played, undecided; its page, no deal counted, the deals
    # started shown behind closed doors and not linked.
    for screen, seen in report["listedBefore"].items():
        line = seen[match_id]
        assert line["state"] == "being played" and line["answer"] == "undecided", (screen, line)
        assert line["line"] == "Undecided so far: LLR 0.00, bounds \u22122.94 and +2.94", line
        assert "Texas 42 (texas42), each game one hand · SPRT: better by 0.1 marks a deal or no better, " \
            "\u03b1 0.05, \u03b2 0.05, at most 10,000 deals" in line["text"], line
        assert f"organised by {organiser_name}" in line["text"], line
        assert seen[cancelled_id]["state"] == "cancelled", seen[cancelled_id]
    for screen, seen in report["before"].items():
        assert seen["title"] == f"{a} v {b}" and seen["status"] == "being played", (screen, seen)
        assert seen["stateLine"].startswith("Being played · 0 deals counted, "), seen
        assert seen["answer"]["kind"] == "undecided" and seen["answer"]["title"] == "Undecided so far", seen
        assert seen["noFigures"] == "No deal is counted yet: a deal counts once both its playings are over."
        assert seen["deals"] and all(not d["counted"] for d in seen["deals"]), seen["deals"]
        for deal in seen["deals"]:
            assert [p["link"] for p in deal["playings"]] == [None, None], deal
            assert all("behind closed doors" in p["text"] or p["state"] == "to-come" for p in deal["playings"]), deal
            assert deal["scores"] == ["\u2014", "\u2014"], deal
        assert seen["meter"]["now"] == "0" and seen["connection"] == "live", seen

    # The end, followed with no click, on each screen: the server's figures and verdict.
    unit = "marks"
    for screen, seen in report["final"].items():
        assert seen["status"] == "finished" and seen["connection"] is None, (screen, seen)
        assert seen["stateLine"] == f"Finished · {done.deals_finished} deals counted", seen
        assert seen["answer"]["kind"] == "stronger", seen["answer"]
        assert seen["answer"]["title"] == f"{a} is stronger than {b}", seen["answer"]
        reached = re.search(rf"after {done.deals_at_verdict} deals: its LLR reached (\S+), ", seen["answer"]["detail"])
        assert reached and _near(reached.group(1), done.llr_at_verdict), seen["answer"]
        assert seen["totals"] == (
            f"Over {done.deals_finished} deals ({2 * done.deals_finished} games): "
            f"{a} {done.total_a} {unit}, {b} {done.total_b}."
        ), seen["totals"]
        assert _near(seen["mean"], done.mean), (seen["mean"], done.mean)
        low, high = re.fullmatch(r"95% interval: (\S+) to (\S+)", seen["meanInterval"]).groups()  # type: ignore[union-attr]
        assert _near(low, done.mean_interval.low) and _near(high, done.mean_interval.high), seen
        assert _near(seen["winRate"], 100 * done.win_rate, 1), seen["winRate"]
        low, high = re.fullmatch(r"95% Wilson interval: (\S+) to (\S+)", seen["winRateInterval"]).groups()  # type: ignore[union-attr]
        assert _near(low, 100 * done.win_rate_interval.low, 1) and _near(high, 100 * done.win_rate_interval.high, 1)
        assert seen["wdl"] == f"{done.wins} won, {done.draws} drawn, {done.losses} lost (a draw counts half)"
        assert _near(seen["llr"], done.llr), (seen["llr"], done.llr)
        # The meter: its bounds, the LLR kept between them, and in words the LLR itself.
        meter = seen["meter"]
        assert float(meter["min"]) == pytest.approx(done.llr_lower_bound)
        assert float(meter["max"]) == pytest.approx(done.llr_upper_bound)
        assert float(meter["now"]) == pytest.approx(min(max(done.llr, done.llr_lower_bound), done.llr_upper_bound))
        assert meter["text"].startswith(f"LLR {seen['llr']}"), meter
        assert "lower bound \u22122.94: not stronger; upper bound +2.94: stronger" in meter["text"], meter
        assert seen["hypotheses"][:2] == [
            f"{a} minus {b} is 0 marks a deal: {a} is no better",
            f"{a} minus {b} is 0.1 marks a deal: better by 0.1",
        ], seen["hypotheses"]
        # Every deal: counted, its playings linked to their replays, each playing's marks
        # (A's first) from its game, and the deal's scores and figure from the server.
        assert [d["deal"] for d in seen["deals"]] == [d.deal for d in deals]
        for shown, deal in zip(seen["deals"], deals, strict=True):
            assert shown["counted"] and deal.counted, shown
            assert [p["link"] for p in shown["playings"]] == [f"#/replay/{g}" for g in deal.game_ids], shown
            marks = []
            for n, game_id in enumerate(deal.game_ids):
                scores = list(games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=30).game.scores)
                mine, theirs = (scores[0], scores[1]) if n == 0 else (scores[1], scores[0])
                marks.append(f"A {mine} · B {theirs}")
            assert [p["marks"] for p in shown["playings"]] == marks, (shown, deal)
            assert shown["scores"] == [str(deal.score_a), str(deal.score_b)], (shown, deal)
            assert shown["figure"] == _signed(deal.score_a - deal.score_b, 0), (shown, deal)

    # The list at the end: each match's answer in words.
    fixed = stub.GetMatch(matches_pb2.GetMatchRequest(match_id=fixed_id), timeout=60).match
    cancelled = stub.GetMatch(matches_pb2.GetMatchRequest(match_id=cancelled_id), timeout=60).match
    assert fixed.status == matches_pb2.MATCH_STATUS_FINISHED and fixed.deals_finished == 3
    assert cancelled.status == matches_pb2.MATCH_STATUS_CANCELLED
    low, high = fixed.mean_interval.low, fixed.mean_interval.high
    fixed_kind, fixed_title = (
        ("stronger", f"{a} is stronger than {b}") if low > 0
        else ("b-stronger", f"{b} is stronger than {a}") if high < 0
        else ("no-difference", "No clear difference")
    )
    for screen, seen in report["after"].items():
        line = seen[match_id]
        assert line["state"] == "finished" and line["answer"] == "stronger", (screen, line)
        assert line["line"] == f"{a} is stronger than {b} (after {done.deals_at_verdict} deals)", line
        assert f"{done.deals_finished} deals counted" in line["text"], line
        assert seen[fixed_id]["answer"] == fixed_kind and seen[fixed_id]["line"].startswith(f"{fixed_title}: "), seen[fixed_id]
        assert "3 of 3 deals counted" in seen[fixed_id]["text"], seen[fixed_id]
        assert seen[cancelled_id]["state"] == "cancelled", seen[cancelled_id]
        assert f"{cancelled.deals_finished} of 5 deals counted" in seen[cancelled_id]["text"], seen[cancelled_id]
    for screen, seen in report["fixed"].items():
        assert seen["meta"][0] == "Texas 42 (texas42), each game one hand · duplicate deals · 3 deals", seen["meta"]
        assert seen["stateLine"] == "Finished · 3 of 3 deals counted" and seen["progress"] == "3", seen
        assert seen["answer"]["kind"] == fixed_kind and seen["answer"]["title"] == fixed_title, (screen, seen["answer"])
        assert seen["meter"] is None and seen["llr"] is None, seen
        assert len(seen["deals"]) == 3 and all(len(d["playings"]) == 2 for d in seen["deals"]), seen["deals"]
    assert report["bad"] == {
        "malformed": "This address does not name a match (not a match id: 'not-a-match').",
        "unknown": "There is no such match on this server (no match 00000000-0000-4000-8000-000000000000).",
    }, report["bad"]
    assert report["small"] == [], report["small"]
    assert len(report["checked"]) == 12, sorted(report["checked"])


@pytest.fixture(scope="module")
def finished_moon(server: ServerProcess) -> str:
    """A Moon game played to its end by three bot processes."""
    played = subprocess.run(
        [str(BOT), "bot", "--server", server.address, "--new", "moon", "--strategy", "heuristic"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return played.stdout.split()[1]


def _seat_name(seat: archive_pb2.RecordSeat, seats: list[archive_pb2.RecordSeat]) -> str:
    """A seat as the archive names it: a name two seats share told apart by the seat."""
    if not seat.player_name:
        return f"seat {seat.seat}"
    shared = sum(s.player_name == seat.player_name for s in seats) > 1
    return f"{seat.player_name} (seat {seat.seat})" if shared else seat.player_name


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_the_archive_lists_winners_filters_by_preset_and_downloads_a_record_that_verifies(
    server: ServerProcess, finished_game: str, finished_moon: str, tmp_path: Path, screen: str
) -> None:
    report = _ok(
        run_script(
            "archive.mjs",
            server.http_url,
            tmp_path,
            env={"GAME_ID": finished_moon, "PRESET": "moon", "SCREEN": screen},
        )
    )
    archive = archive_pb2_grpc.ArchiveServiceStub(server.channel())
    # The preset filter offers exactly the server's presets.
    presets = server.stub().ListPresets(game_service_pb2.ListPresetsRequest(), timeout=30).presets
    assert report["presetOptions"] == [["", "any game"]] + [
        [p.name, f"{p.name}: {p.description}"] for p in presets
    ]
    # Each row: the preset, the seats' names and the winners the server lists.
    listed = archive.ListArchivedGames(archive_pb2.ListArchivedGamesRequest(), timeout=30).games
    assert {finished_game, finished_moon} <= {g.game_id for g in listed}
    shown = {row["game"]: row for row in report["all"]}
    assert list(shown) == [g.game_id for g in listed]
    for game in listed:
        row = shown[game.game_id]
        assert row["preset"] == game.rules.preset
        seats = list(game.seats)
        assert row["players"] == ", ".join(_seat_name(s, seats) for s in seats)
        winners = [_seat_name(s, seats) for s in seats if s.seat in game.winning_seats]
        assert winners and row["winner"] == " & ".join(winners)
        assert row["score"].startswith(" / ".join(map(str, game.scores)) + " ")
    moon = archive.ListArchivedGames(
        archive_pb2.ListArchivedGamesRequest(preset="moon"), timeout=30
    ).games
    assert [row["game"] for row in report["filtered"]] == [g.game_id for g in moon]
    assert finished_game not in {row["game"] for row in report["filtered"]}
    # One fingerprint: the archive's, the verdict's, the command line's.
    fingerprint = archive.GetSigningKey(archive_pb2.GetSigningKeyRequest(), timeout=30).fingerprint
    cli = subprocess.run(
        [str(BOT), "public-key", "--server", server.address],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert cli.stderr == f"fingerprint {fingerprint}\n"
    assert report["fingerprint"] == fingerprint
    assert f"Signed by this server (key fingerprint {fingerprint})." in report["verdict"]
    # The downloads are the files `boneyard export` writes; the JSON verifies with the key.
    record = archive.GetRecord(
        archive_pb2.GetRecordRequest(game_id=finished_moon), timeout=30
    ).record
    json_file = Path(report["json"]["path"])
    assert report["json"]["suggested"] == report["keyboard"] == f"boneyard-{finished_moon}.json"
    assert json_file.read_bytes() == dump_record(record)
    key_file = tmp_path / "server.key"
    key_file.write_text(cli.stdout)
    verified = subprocess.run(
        [str(BOT), "verify", "--public-key", str(key_file), str(json_file)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith(f"valid: game {finished_moon} ")
    assert f"(fingerprint {fingerprint})" in verified.stdout
    assert report["text"]["suggested"] == f"boneyard-{finished_moon}.txt"
    text = Path(report["text"]["path"]).read_text(encoding="utf-8")
    assert text == record_to_text(record, site=report["host"])
    for name, seen in report["checked"].items():
        assert not seen["sideways"] and not seen["findings"], (name, seen)


# What table.ts's seats look like from the trick: where each seat sits on a desktop.
_SEAT_SIDE = {1: "left", 2: "top", 3: "right"}


@pytest.mark.parametrize("screen", ["desktop", "phone"])
def test_played_tiles_glide_to_the_trick_and_a_won_trick_is_gathered_to_its_winner(
    server: ServerProcess, tmp_path: Path, screen: str
) -> None:
    report = _ok(run_script("table_motion.mjs", server.http_url, tmp_path, env={"SCREEN": screen}))
    # The tiles the person clicked glided up from their hand (below the table) to the trick
    # (most of them: the motion stands aside while the table is redrawn many times a second).
    assert report["glided"] >= 6 and report["mine"], report
    assert all(m["dy"] > 0 for m in report["mine"]), report["mine"]
    # A bot's tile came from its seat: on a desktop from its side of the table, on a phone
    # from the row of seats above the trick.
    assert report["bots"], report
    for m in report["bots"]:
        side = _SEAT_SIDE[m["seat"]] if screen == "desktop" else "top"
        assert {"left": m["dx"] < 0, "top": m["dy"] < 0, "right": m["dx"] > 0}[side], m
    # Each trick won went toward its winner's seat (the person's own below the trick).
    assert report["gathers"], report
    for m in report["gathers"]:
        side = (
            "bottom" if m["seat"] == 0 else _SEAT_SIDE[m["seat"]] if screen == "desktop" else "top"
        )
        assert {
            "left": m["dx"] < 0,
            "top": m["dy"] < 0,
            "right": m["dx"] > 0,
            "bottom": m["dy"] > 0,
        }[side], m
    # A trick the bots finished stayed whole in the middle for about a second (the hold is
    # 1.1 s from its first draw; the page's own drawing may take a little of it), while the
    # rest of the table was already the seat's turn with exactly the legal tiles to click.
    assert report["held"] and all(ms >= 800 for ms in report["held"]), report["held"]
    assert report["heldAtTurn"] >= 1 and report["legalWhileHeld"] == report["heldAtTurn"], report
    # prefers-reduced-motion: reduce: the same plays, and nothing moved.
    assert report["calm"] == {"plays": 4, "motion": 0}, report["calm"]
    assert report["checked"] == {"table with a held trick": 0}, report["checked"]
    assert report["shots"]["glide"] and report["shots"]["held"], report["shots"]


def test_the_table_is_played_by_the_keyboard_and_heard_by_a_screen_reader(
    server: ServerProcess, game_stub: game_service_pb2_grpc.GameServiceStub, tmp_path: Path
) -> None:
    report = _ok(run_script("table_keyboard.mjs", server.http_url, tmp_path))
    # A bid (or a pass) and a tile, each reached by Tab, shown with its focus ring, and sent
    # by Enter: the tile went to the trick.
    assert report["bid"]["ring"] and (
        report["bid"]["choice"] == "Pass" or report["bid"]["choice"].startswith("Bid ")
    ), report["bid"]
    assert report["play"]["ring"] and report["play"]["inTrick"] == 1, report["play"]
    # Every control Tab stopped on showed its ring; only a legal tile ever took the focus.
    assert report["ringless"] == [], report["ringless"]
    assert report["tileStops"] == [report["play"]["tile"]], report["tileStops"]
    # Another player's hand is one picture, "N tiles, face down", not a picture per tile.
    for seat, pictures in report["hands"].items():
        assert len(pictures) == 1 and pictures[0].endswith(" face down"), (seat, pictures)
        assert pictures[0].split()[1] in ("tile,", "tiles,"), pictures
    # The live region said the seat's turns and what the others did, and not the person's
    # own choices back to them.
    said = " ".join(report["said"])
    assert "Your turn: bid or pass" in said and "Your turn: play a tile" in said, said
    assert "heuristic bot" in said and "You play" not in said, said
    events = _events(game_stub, report["gameId"])
    mine = [e for e in events if e.WhichOneof("kind") in ACTIONS and _seat_of(e) == 0]
    assert any(e.WhichOneof("kind") in ("bid_placed", "passed") for e in mine), mine
    played = [e.tile_played.tile for e in mine if e.WhichOneof("kind") == "tile_played"]
    assert [_tile_name(t) for t in played][:1] == [report["play"]["tile"]], played


def test_a_hands_result_shows_after_a_click_that_raced_another_client(
    server: ServerProcess, tmp_path: Path
) -> None:
    report = _ok(run_script("hand_result_race.mjs", server.http_url, tmp_path))
    assert "Someone acted first" in report["alert"], report
    scored = report["scored"]
    bidder = "You" if scored.get("bidder", 0) == 0 else f"heuristic bot {scored['bidder']}"
    result = "made it" if scored.get("made") else "were set" if bidder == "You" else "was set"
    # The hand's own result, with its number, before any of the next hand was drawn.
    assert report["headline"].startswith(f"Hand {report['hand']}: {bidder} bid "), report
    assert report["headline"].endswith(f" and {result}"), report
    assert not report["laterBeforeResult"], report
    assert report["next"] == "over" or report["next"].startswith(f"Hand {report['hand'] + 1} "), (
        report
    )
