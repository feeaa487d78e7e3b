"""ListGames of games the server does not hold, against the same page of games it holds.

    make bench-listing    # last line: `listing: a page of 100 cold games N ms, R x the held page`

One server process (``--max-live-games 100``) on a fresh SQLite file; 200 games are created
(the newest 100 stay in memory, the oldest 100 do not, and a listing keeps none of them, the
cache being full). Each round lists, alternating the order, the page of the oldest 100 (every
game read back from the log) and the page of the newest 100 (the anchor: every game in
memory), ``--listings`` times each, one at a time; then ``--busy`` seconds of 4 clients
listing the cold page beside 4 clients creating games (the fuzzer's mix that once left
ListGames unanswered for 30 s). ``--baseline BINARY`` repeats it all on another install's
``boneyard-server`` (say, a checkout of an older commit) in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import grpc
from bench_server import boneyard_argv, quantile, server_binary, start_process

from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc, rules_pb2

GAMES = 200
HELD = 100
TEXAS = rules_pb2.Ruleset(preset="texas42")


def _start(binary: str, directory: Path) -> object:
    return start_process(
        [
            *boneyard_argv(f"sqlite:///{directory / 'listing.db'}", binary),
            "--max-live-games",
            str(HELD),
            "--max-games-per-minute",
            "1000000",
            "--max-game-loads-per-minute",
            "1000000",
        ],
        directory / "server.log",
    )


def _list(stub: game_service_pb2_grpc.GameServiceStub, token: str) -> tuple[float, str]:
    started = time.perf_counter()
    page = stub.ListGames(
        game_service_pb2.ListGamesRequest(page_size=HELD, page_token=token), timeout=300
    )
    return time.perf_counter() - started, page.next_page_token


def measure(binary: str, listings: int, busy: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-listing-") as tmp:
        server = _start(binary, Path(tmp))
        try:
            with grpc.insecure_channel(server.address) as channel:  # type: ignore[attr-defined]
                stub = game_service_pb2_grpc.GameServiceStub(channel)
                for _ in range(GAMES):
                    stub.CreateGame(game_service_pb2.CreateGameRequest(rules=TEXAS), timeout=60)
                _, newest = _list(stub, "")  # the token of the second page: the held games
                cold: list[float] = []
                held: list[float] = []
                for i in range(listings):
                    for page in ("", newest) if i % 2 == 0 else (newest, ""):
                        seconds, _ = _list(stub, page)
                        (cold if page == "" else held).append(seconds)
                loaded = _busy(server.address, busy)  # type: ignore[attr-defined]
        finally:
            server.stop()  # type: ignore[attr-defined]
    return {
        "cold_ms": statistics.median(cold) * 1000,
        "held_ms": statistics.median(held) * 1000,
        "busy_listings": len(loaded),
        "busy_p50_ms": statistics.median(loaded) * 1000,
        "busy_p99_ms": quantile(loaded, 0.99) * 1000,
    }


def _busy(address: str, seconds: float) -> list[float]:
    stop = time.monotonic() + seconds
    latencies: list[float] = []

    def lister() -> None:
        with grpc.insecure_channel(address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            while time.monotonic() < stop:
                latencies.append(_list(stub, "")[0])

    def creator() -> None:
        with grpc.insecure_channel(address) as channel:
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            while time.monotonic() < stop:
                stub.CreateGame(game_service_pb2.CreateGameRequest(rules=TEXAS), timeout=300)

    threads = [threading.Thread(target=f) for f in [lister] * 4 + [creator] * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def _line(label: str, figures: dict[str, float]) -> str:
    return (
        f"{label}: cold page {figures['cold_ms']:.0f} ms, held page {figures['held_ms']:.0f} ms "
        f"({figures['cold_ms'] / figures['held_ms']:.1f} x); beside 4 creators: "
        f"{figures['busy_listings']:.0f} cold listings, p50 {figures['busy_p50_ms']:.0f} ms, "
        f"p99 {figures['busy_p99_ms']:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listings", type=int, default=20)
    parser.add_argument("--busy", type=float, default=20.0, help="seconds of the mixed load")
    parser.add_argument("--baseline", help="another install's boneyard-server, measured too")
    args = parser.parse_args()
    ours = measure(server_binary(), args.listings, args.busy)
    if args.baseline:
        print(_line("baseline", measure(args.baseline, args.listings, args.busy)))
        print(_line("this tree", ours))
    print(
        f"listing: a page of {HELD} cold games {ours['cold_ms']:.0f} ms, "
        f"{ours['cold_ms'] / ours['held_ms']:.1f} x the held page"
    )


if __name__ == "__main__":
    main()
