"""``--option NAME=VALUE`` as typed on a command line (``boneyard play``, ``bot --new``,
``challenge``, ``tournament``): every house-rule option of issue 19 becomes the Ruleset message
field the server reads back as that rule; a bad value lists the choices as they are typed. The
real processes are in test_terminal_table.py (Moon) and below (Texas 42)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from boneyard import engine
from boneyard.api import codec
from boneyard.api.v1 import rules_pb2
from boneyard.clients.api import Client, OptionError, ruleset_request
from tests.clients.cli_helpers import run_cli
from tests.server.process_helpers import ServerProcess


@pytest.mark.parametrize(
    ("preset", "typed", "option", "value"),
    [
        ("moon", "auction_goes_round=true", "auction_goes_round", True),
        ("moon", "widow=none", "widow", "none"),
        ("moon", "moon_min_bid=3", "moon_min_bid", 3),
        ("moon", "moon_min_bid=5", "moon_min_bid", 5),
        ("moon", "moon_trumps=suits_and_doubles", "moon_trumps", "suits_and_doubles"),
        ("moon", "missed_moon_loses_game=on", "missed_moon_loses_game", True),
        ("moon", "tie_to_earliest_seat=yes", "tie_to_earliest_seat", True),
        ("moon", "moon_overcall=true", "moon_overcall", True),
        ("moon", "all_pass=forced_dealer_any_bid", "all_pass", "forced_dealer_any_bid"),
        ("texas42", "all_pass=forced_dealer_any_bid", "all_pass", "forced_dealer_any_bid"),
        ("texas42-house", "splash_capped=true", "splash_capped", True),
        ("moon-no-widow", "auction_goes_round=false", "auction_goes_round", False),
    ],
)
def test_each_house_rule_option_reaches_the_engine_as_typed(
    preset: str, typed: str, option: str, value: object
) -> None:
    name, text = typed.split("=")
    rules = codec.rules_from_proto(ruleset_request(preset, {name: text}))
    assert getattr(rules, option) == value
    assert rules == engine.ruleset(preset, {option: value})


def test_forced_dealer_is_still_the_forced_dealer_beside_any_bid() -> None:
    msg = ruleset_request("texas42-redeal", {"all_pass": "forced_dealer"})
    assert codec.rules_from_proto(msg).all_pass == "forced_dealer"


def test_a_bad_choice_lists_the_choices_as_they_are_typed() -> None:
    with pytest.raises(OptionError) as refused:
        ruleset_request("moon", {"widow": "sometimes"})
    assert "choose one of must_exchange, may_exchange, none" in str(refused.value)
    with pytest.raises(OptionError, match="forced_dealer, redeal, forced_dealer_any_bid$"):
        ruleset_request("moon", {"all_pass": "x"})


def test_a_texas42_house_game_with_a_capped_splash_is_played_by_bots(tmp_path: Path) -> None:
    with ServerProcess.start(tmp_path / "server.log", f"sqlite:///{tmp_path / 'b.db'}") as server:
        done = run_cli(
            "bot", "--server", server.address, "--new", "texas42-house", "--strategy", "random",
            "--option", "splash_capped=true", "--option", "all_pass=forced_dealer_any_bid",
            "--option", "hand_limit=1",
        )
        assert done.returncode == 0, done.stdout + done.stderr
        game_id = re.search(r"game ([0-9a-f-]{36})", done.stdout)
        assert game_id, done.stdout
        with Client(server.address) as client:
            rules = client.game(game_id[1]).rules
        assert rules.splash_capped and rules.all_pass == rules_pb2.ALL_PASS_FORCED_DEALER_ANY_BID
