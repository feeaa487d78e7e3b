"""The house-rule options (issue 19) through the gRPC API on a real server, SQLite and
PostgreSQL: set in CreateGame, complete in every response, played by the server's engine (the
auction going round, the overcall, no widow, the stuck dealer) and stored in the log."""

from __future__ import annotations

from api_helpers import Client, RunningServer, log_events
from test_api import complete_rules, turn_of

from boneyard import engine
from boneyard.api.v1 import actions_pb2, rules_pb2, view_pb2

PASS = actions_pb2.Action(pass_bid=actions_pb2.Pass())


def bid(kind: int, amount: int = 0) -> actions_pb2.Action:
    return actions_pb2.Action(bid=rules_pb2.Bid(kind=kind, amount=amount))


def test_a_moon_table_with_house_rules_bids_round_overcalls_and_has_no_widow(
    server: RunningServer, client: Client
) -> None:
    table = client.seated(
        "moon",
        auction_goes_round=True,
        moon_overcall=True,
        moon_min_bid=3,
        widow=rules_pb2.WIDOW_RULE_NONE,
        hand_limit=1,
    )
    rules = client.game(table.game_id).rules
    complete_rules(rules)
    assert (rules.auction_goes_round, rules.moon_overcall, rules.moon_min_bid) == (True, True, 3)
    assert rules.widow == rules_pb2.WIDOW_RULE_NONE
    assert not rules.HasField("missed_moon_loses_game")  # as before: left unset

    first, view = turn_of(client, table)
    assert list(view.hand_sizes) == [7, 7, 7]
    lowest = next(a.bid for a in view.legal_actions if a.HasField("bid"))
    assert (lowest.kind, lowest.amount) == (rules_pb2.BID_KIND_TRICKS, 3)
    client.submit(table, first, bid(rules_pb2.BID_KIND_TRICKS, 3), view.version)
    second, view = turn_of(client, table)
    client.submit(table, second, bid(rules_pb2.BID_KIND_MOON), view.version)
    third, view = turn_of(client, table)
    offered = [a.bid.kind for a in view.legal_actions if a.HasField("bid")]
    assert offered == [rules_pb2.BID_KIND_OVERCALL]
    client.submit(table, third, bid(rules_pb2.BID_KIND_OVERCALL), view.version)

    seat, view = turn_of(client, table)
    assert seat == third and view.phase == view_pb2.PHASE_TRUMP  # no widow to take
    assert (view.high_bid.kind, view.high_bid.amount) == (rules_pb2.BID_KIND_OVERCALL, 42)
    trumps = [a.declare_contract.trump for a in view.legal_actions]
    assert rules_pb2.TRUMP_BLANKS not in trumps and rules_pb2.TRUMP_SIXES in trumps

    client.play_to_end(table)
    events = [e for _, e in log_events(server, table.game_id)]
    scored = next(e for e in events if isinstance(e, engine.HandScored))
    assert scored.bid == engine.Bid.overcall() and scored.changes[third] in (42, -42)
    assert engine.replay(events).phase is engine.Phase.GAME_OVER


def test_a_stuck_dealer_who_passes_is_given_the_lowest_bid(
    server: RunningServer, client: Client
) -> None:
    table = client.seated("texas42", all_pass=rules_pb2.ALL_PASS_FORCED_DEALER_ANY_BID)
    for _ in range(3):
        seat, view = turn_of(client, table)
        client.submit(table, seat, PASS, view.version)
    dealer, view = turn_of(client, table)
    assert view.legal_actions[0] == PASS and len(view.legal_actions) > 1
    client.submit(table, dealer, PASS, view.version)
    seat, view = turn_of(client, table)
    assert seat == dealer and view.phase == view_pb2.PHASE_TRUMP
    assert (view.high_bid.kind, view.high_bid.amount, view.bidder) == (
        rules_pb2.BID_KIND_POINTS,
        30,
        dealer,
    )
    events = [e for _, e in log_events(server, table.game_id)]
    assert events[-1] == engine.AuctionWon(dealer, engine.Bid.points(30), dealer)
