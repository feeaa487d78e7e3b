"""A match over the network: two account bots on duplicate Texas 42 deals, played by a real
server, and the answer the match gives.

Starts its own ``boneyard-server`` subprocess on a temporary SQLite file (as
``bench_competition.py`` does, whose helpers it uses), makes two bot accounts and an organiser
in its database, runs each account's bot in this process (a ``Competitor``, as ``boneyard bot
--key`` runs: both of its partnership's seats of every game), and makes a match of ``--deals``
deals (``--sprt``: until the SPRT of H0 0 against H1 ``--m1`` marks a deal decides), at most
``--in-flight`` games at once. Prints the wall time from CreateMatch to FINISHED, deals and
games a second, the server's CPU seconds per wall second, and the match's answer: the mean
marks a deal with its 95% interval, the win rate with its Wilson interval, and the SPRT's LLR
between its bounds (for a fixed number of deals: what that SPRT says of the deals played).

Both sides play the same deterministic strategy by default (the heuristic, same seed): every
deal is then a tie, and the answer is that neither is stronger. A benchmark reports: the exit
code is 0 whatever the figures say.

    make bench-match                                   # 1,000 deals, heuristic vs heuristic
    python benchmarks/bench_match.py --deals 40        # a short run
    python benchmarks/bench_match.py --a heuristic --b random --sprt
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from bench_competition import make_accounts, start_server
from bench_server import cpu_seconds

from boneyard.api.v1 import matches_pb2
from boneyard.bots import strategy_names
from boneyard.clients.api import Client
from boneyard.clients.competitor import Competitor
from boneyard.server.competition.match_stats import Sprt, Tally, sprt_state

POLL = 0.2


def run(
    args: argparse.Namespace,
    address: str,
    organiser: str,
    accounts: list[tuple[str, str]],
    pid: int,
) -> str:
    (a, a_key), (b, b_key) = accounts
    clients = [Client(address) for _ in accounts]
    competitors = [
        Competitor(clients[0], a_key, args.a, seed=0, max_games_at_once=2 * args.in_flight),
        Competitor(clients[1], b_key, args.b, seed=0, max_games_at_once=2 * args.in_flight),
    ]
    threads = [threading.Thread(target=c.run, daemon=True) for c in competitors]
    for thread in threads:
        thread.start()
    try:
        with Client(address) as client:
            cpu_before = cpu_seconds(pid)
            began = time.perf_counter()
            made = client.create_match(
                organiser,
                a,
                b,
                "texas42",
                deals=None if args.sprt else args.deals,
                sprt=matches_pb2.MatchSprt(m0=0, m1=args.m1, max_deals=args.deals)
                if args.sprt
                else None,
                max_games_in_flight=args.in_flight,
                timeout=30,
            )
            while True:
                match = client.match(made.match_id, timeout=30)
                if match.status == matches_pb2.MATCH_STATUS_FINISHED:
                    break
                time.sleep(POLL)
            elapsed = time.perf_counter() - began
            cpu = cpu_seconds(pid) - cpu_before
    finally:
        for c in competitors:
            c.stop()
        for thread in threads:
            thread.join(timeout=30)
        for c in clients:
            c.close()
    deals = match.deals_finished
    print(
        f"match: {deals} deals ({2 * deals} one-hand games), {args.a} (A) vs {args.b} (B), "
        f"at most {args.in_flight} games at once, in {elapsed:.1f} s: "
        f"{deals / elapsed:.2f} deals/s, {2 * deals / elapsed:.2f} games/s; "
        f"server CPU {cpu / elapsed:.2f} s a second"
    )
    print(
        f"  A minus B a deal {match.mean:+.3f} marks, 95% interval "
        f"[{match.mean_interval.low:+.3f}, {match.mean_interval.high:+.3f}]; "
        f"A won {match.wins}, drew {match.draws}, lost {match.losses}: win rate "
        f"{match.win_rate:.1%} [{match.win_rate_interval.low:.1%}, "
        f"{match.win_rate_interval.high:.1%}]"
    )
    # The SPRT's view of the deals: the match's own for --sprt, else the same test worked out
    # from the deals' figures.
    if args.sprt:
        llr, lower, upper = match.llr, match.llr_lower_bound, match.llr_upper_bound
        verdict = matches_pb2.MatchVerdict.Name(match.verdict).removeprefix("MATCH_VERDICT_")
        verdict = verdict.lower().replace("_", " ")
        if match.deals_at_verdict:
            verdict += f" after {match.deals_at_verdict} deals"
    else:
        with Client(address) as client:
            state = sprt_state(Tally.of(_figures(client, made.match_id)), Sprt(0.0, args.m1))
        llr, lower, upper = state.llr, state.lower, state.upper
        verdict = state.verdict.value.replace("_", " ")
    answer = (
        f"LLR {llr:+.3f} in [{lower:+.3f}, {upper:+.3f}] (H0 0, H1 {args.m1:g} marks a deal): "
        f"{verdict}"
    )
    print(f"  {answer}")
    return (
        f"{deals} deals in {elapsed:.1f} s, {deals / elapsed:.2f} deals/s; "
        f"A - B {match.mean:+.3f} marks a deal; {answer}"
    )


def _figures(client: Client, match_id: str) -> list[float]:
    """Each deal's figure, A's marks minus B's, page after page."""
    figures: list[float] = []
    token = ""
    while True:
        page = client.match_deals(match_id, 200, token, timeout=30)
        figures += [d.score_a - d.score_b for d in page.deals if d.counted]
        token = page.next_page_token
        if not token:
            return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000, help="deals (with --sprt: at most)")
    parser.add_argument("--in-flight", type=int, default=8, help="games at once, 2..64")
    parser.add_argument("--a", choices=strategy_names(), default="heuristic")
    parser.add_argument("--b", choices=strategy_names(), default="heuristic")
    parser.add_argument("--sprt", action="store_true", help="stop when the SPRT decides")
    parser.add_argument("--m1", type=float, default=0.1, help="H1: A better by this, marks a deal")
    args = parser.parse_args()
    if not 1 <= args.deals <= 10_000 or not 2 <= args.in_flight <= 64:
        parser.error("--deals is 1..10000 and --in-flight 2..64")
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        accounts = make_accounts(url, 2, "bench")
        organiser = make_accounts(url, 1, "organiser", "player")[0][1]
        proc, address = start_server(url, Path(tmp) / "server.log")
        try:
            line = run(args, address, organiser, accounts, proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"match: {line}")


if __name__ == "__main__":
    main()
