"""From an acknowledged action to its arrival in a watching browser page; and the web app's
size and time to the first legal click, beside the app before issue 33.

    make bench-browser   # last line: `browser: p99 X ms after the ack (anchor: gRPC stream p99 Y ms)`

First, the app itself (``--load-rounds``): the build the server serves now ("after") and the
build committed at ``--baseline`` (df921a7, where issue 33 was filed: "before"), both from temp
folders through one static server in the Chromium script's process (bench_browser_page.mjs),
which sends every other path of an app's folder (its API calls) on to the server. Its size is
what Chromium received of the document, the script and the stylesheet (their bodies, gzip if
the server compresses them, else raw: it says which, asking the server). The time to the first
legal click: a game of three house bots where it is seat 0's turn (its first bid), opened in a
new browser context holding that seat (nothing cached), from the navigation's start to the
moment a legal tile or bid button can be clicked. The two builds alternate round by round;
medians.

Then the latency:

Starts ``boneyard-server`` on a temporary SQLite file with the HTTP listener, and Debian's
Chromium (npm playwright-core, ``bench_browser_page.mjs``) with one page of the web app
watching a game as a spectator: the app's WatchGame stream over Connect marks the moment it
delivers each version (``performance.mark``). Beside it, the anchor: a Python gRPC WatchGame
stream of the same game in a process of its own, taking ``time.time()`` as each message
arrives. This process takes every seat and plays random legal actions one at a time, pausing
between them (latency, not throughput, is measured): an action's time is when its
SubmitAction returns here (t_ack), its arrival is when a watcher receives the message of the
version that answer gave. latency = arrival - t_ack, as measured (a watcher may be told before
the actor, so a latency may be negative). The page's clock is matched to this process's at
the start of each round (the reading with the shortest round trip of several).

Rounds repeat; each plays a new game, and which watcher subscribes first alternates. Client,
browser and server share this machine's CPUs. It prints figures and never judges them (the
target is a p99 under 100 ms).
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

import grpc
from bench_server import Server, StartError, server_binary, start_process

from boneyard.api.v1 import game_service_pb2, game_service_pb2_grpc, rules_pb2, view_pb2
from boneyard.server.transport.http.connect import web_app_dir

REPO = Path(__file__).resolve().parents[1]
BASELINE = "df921a7"
"""The commit issue 33 was filed at: the web app before it."""
BASELINE_DIRS = ("server/webapp", "server/transport/http/webapp")
"""Where the built web app was committed (server/webapp before the house moved it)."""
PAGE_SCRIPT = Path(__file__).with_name("bench_browser_page.mjs")
HTTP = re.compile(r"serving HTTP on (https?://\S+)")
RPC_TIMEOUT = 30.0


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# --- the anchor: a gRPC stream in its own process -----------------------------------------


def _anchor(address: str, game_id: str, from_version: int, conn: Connection) -> None:
    channel = grpc.insecure_channel(address)
    stub = game_service_pb2_grpc.GameServiceStub(channel)
    call = stub.WatchGame(
        game_service_pb2.WatchGameRequest(game_id=game_id, from_version=from_version)
    )
    arrivals: list[tuple[int, float]] = []

    def read() -> None:
        try:
            for message in call:
                arrivals.append((message.version, time.time()))
        except grpc.RpcError:
            pass  # cancelled below

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    conn.send("live")
    conn.recv()  # "stop"
    call.cancel()
    reader.join(timeout=10)
    conn.send(arrivals)
    channel.close()


def _connect_watcher(http_url: str, game_id: str, from_version: int, conn: Connection) -> None:
    """The same over the HTTP listener with connectrpc's Python client: what the HTTP path
    costs, apart from the browser."""
    import asyncio

    from boneyard.api.v1 import game_service_connect

    async def main() -> list[tuple[int, float]]:
        client = game_service_connect.GameServiceClient(http_url)
        arrivals: list[tuple[int, float]] = []

        async def read() -> None:
            request = game_service_pb2.WatchGameRequest(game_id=game_id, from_version=from_version)
            async for message in client.watch_game(request):
                arrivals.append((message.version, time.time()))

        task = asyncio.create_task(read())
        await asyncio.sleep(0.5)  # (the stream is open once the first bytes could flow)
        conn.send("live")
        await asyncio.get_running_loop().run_in_executor(None, conn.recv)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.close()
        return arrivals

    conn.send(asyncio.run(main()))


class Anchor:
    """A watcher in a process of its own: ``target`` is ``_anchor`` (gRPC) or
    ``_connect_watcher`` (Connect from Python)."""

    def __init__(self, address: str, game_id: str, from_version: int, target=_anchor) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._proc = context.Process(target=target, args=(address, game_id, from_version, child))
        self._proc.start()
        if self._conn.recv() != "live":
            raise RuntimeError("the anchor stream did not start")

    def stop(self) -> dict[int, float]:
        self._conn.send("stop")
        arrivals = self._conn.recv()
        self._proc.join(timeout=30)
        return {version: at for version, at in arrivals}


# --- the browser ------------------------------------------------------------------------


class Browser:
    def __init__(self, node: str) -> None:
        env = {**os.environ, "CHROMIUM": os.environ.get("CHROMIUM", "/usr/bin/chromium")}
        self._proc = subprocess.Popen(
            [node, str(PAGE_SCRIPT)],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def ask(self, line: str) -> str:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()
        answer = self._proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the browser script ended (exit {self._proc.poll()})")
        return answer.strip()

    def offset(self, samples: int = 15) -> float:
        """Page clock minus this process's clock, in seconds (the shortest round trip's)."""
        best: tuple[float, float] | None = None
        for _ in range(samples):
            before = time.time()
            page = float(self.ask("clock").split()[1]) / 1000
            after = time.time()
            if best is None or after - before < best[0]:
                best = (after - before, page - (before + after) / 2)
        assert best is not None
        return best[1]

    def marks(self) -> dict[int, float]:
        return {int(v): at / 1000 for v, at in json.loads(self.ask("marks").split(" ", 1)[1])}

    def close(self) -> None:
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write("quit\n")  # (no answer: the script closes the browser)
            self._proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


# --- playing ------------------------------------------------------------------------------


@dataclass
class Round:
    acks: dict[int, float] = field(default_factory=dict)
    """Version answered by SubmitAction -> time.time() of the answer."""
    page: dict[int, float] = field(default_factory=dict)
    anchor: dict[int, float] = field(default_factory=dict)
    connect: dict[int, float] = field(default_factory=dict)
    """Python's Connect client on the HTTP listener (with --connect-too)."""
    offset_ms: float = 0.0

    def latencies(self, arrivals: dict[int, float]) -> list[float]:
        return [(arrivals[v] - t) * 1000 for v, t in self.acks.items() if v in arrivals]


def _new_game(stub: game_service_pb2_grpc.GameServiceStub) -> tuple[str, int, list[str]]:
    created = stub.CreateGame(
        game_service_pb2.CreateGameRequest(
            # Long enough that no round runs out of game.
            rules=rules_pb2.Ruleset(preset="texas42", marks_to_win=50),
            name="bench-browser",
        ),
        timeout=RPC_TIMEOUT,
    )
    tokens = []
    for seat in range(4):
        taken = stub.TakeSeat(
            game_service_pb2.TakeSeatRequest(
                game_id=created.game_id, seat=seat, player_name=f"b{seat}"
            ),
            timeout=RPC_TIMEOUT,
        )
        tokens.append(taken.seat_token)
    version = stub.GetGame(
        game_service_pb2.GetGameRequest(game_id=created.game_id), timeout=RPC_TIMEOUT
    ).game.version
    return created.game_id, version, tokens


def _play(
    stub: game_service_pb2_grpc.GameServiceStub,
    game_id: str,
    tokens: list[str],
    actions: int,
    pause: float,
    rng: random.Random,
    acks: dict[int, float],
) -> None:
    views: dict[int, view_pb2.SeatView] = {}
    for _ in range(actions):
        public = stub.GetView(
            game_service_pb2.GetViewRequest(game_id=game_id), timeout=RPC_TIMEOUT
        ).view
        if public.phase == view_pb2.PHASE_GAME_OVER or not public.HasField("turn"):
            return
        seat = public.turn
        auth = (("authorization", f"Bearer {tokens[seat]}"),)
        view = views.get(seat)
        if view is None or view.version != public.version:
            view = stub.GetView(
                game_service_pb2.GetViewRequest(game_id=game_id), metadata=auth, timeout=RPC_TIMEOUT
            ).view
        answer = stub.SubmitAction(
            game_service_pb2.SubmitActionRequest(
                game_id=game_id,
                expected_version=view.version,
                request_id=str(uuid.uuid4()),
                action=rng.choice(list(view.legal_actions)),
            ),
            metadata=auth,
            timeout=RPC_TIMEOUT,
        )
        acks[answer.version] = time.time()
        views[seat] = answer.view
        time.sleep(pause * (0.5 + rng.random()))


def run_round(
    number: int,
    server: Server,
    http_url: str,
    browser: Browser,
    stub: game_service_pb2_grpc.GameServiceStub,
    args: argparse.Namespace,
    rng: random.Random,
) -> Round:
    game_id, version, tokens = _new_game(stub)
    result = Round()
    page_first = number % 2 == 0
    anchor: Anchor | None = None
    if not page_first:
        anchor = Anchor(server.address, game_id, version)
    if browser.ask(f"open {http_url}/#/game/{game_id}") != "ok":
        raise RuntimeError("the page did not follow the game")
    if page_first:
        anchor = Anchor(server.address, game_id, version)
    assert anchor is not None
    python_connect = (
        Anchor(http_url, game_id, version, target=_connect_watcher) if args.connect_too else None
    )
    result.offset_ms = browser.offset() * 1000
    _play(stub, game_id, tokens, args.actions, args.pause_ms / 1000, rng, result.acks)
    time.sleep(1.0)  # the last arrivals
    offset = result.offset_ms / 1000
    result.page = {v: at - offset for v, at in browser.marks().items()}
    result.anchor = anchor.stop()
    if python_connect is not None:
        result.connect = python_connect.stop()
    return result


# --- the app: its size and the time to the first legal click ------------------------------


def export_baseline(ref: str, into: Path) -> str | None:
    """The web app as built and committed at `ref`, written into `into`; None (and why, on
    stderr) when this checkout cannot give it."""
    for folder in BASELINE_DIRS:
        listed = subprocess.run(
            ["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", ref, folder],
            check=False,
            capture_output=True,
            text=True,
        )
        if listed.returncode != 0:
            print(f"bench: no commit {ref} here ({listed.stderr.strip()})", file=sys.stderr)
            return None
        names = listed.stdout.split()
        if not names:
            continue
        for name in names:
            blob = subprocess.run(
                ["git", "-C", str(REPO), "show", f"{ref}:{name}"], capture_output=True, check=True
            ).stdout
            target = into / Path(name).relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob)
        return folder
    print(f"bench: {ref} has no built web app in {' or '.join(BASELINE_DIRS)}", file=sys.stderr)
    return None


def server_compresses(http_url: str) -> bool:
    """Whether the server sends the web app's files gzip-compressed to a browser that accepts
    it (its index and the files it names)."""

    def fetch(path: str) -> tuple[bytes, str]:
        request = urllib.request.Request(http_url + path, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=RPC_TIMEOUT) as answer:
            return answer.read(), answer.headers.get("Content-Encoding", "")

    index, encoding = fetch("/")
    encodings = [encoding]
    if encoding == "gzip":
        index = gzip.decompress(index)
    for asset in re.findall(rb'(?:src|href)="\./(assets/[^"]+)"', index):
        encodings.append(fetch("/" + asset.decode())[1])
    return all(e == "gzip" for e in encodings)


def gzipped_size(folder: Path) -> int:
    """What the app's document, script and stylesheet come to gzip-compressed (level 6)."""
    files = [folder / "index.html", *folder.glob("assets/*.js"), *folder.glob("assets/*.css")]
    return sum(len(gzip.compress(f.read_bytes(), compresslevel=6)) for f in files)


def seat_for_load(stub: game_service_pb2_grpc.GameServiceStub) -> dict[str, str]:
    """A Texas 42 game of three house bots and seat 0, waiting at seat 0's first turn (nobody
    else can act, so it waits there for every round): the localStorage entry that holds the
    seat, as the app keeps it."""
    created = stub.CreateGame(
        game_service_pb2.CreateGameRequest(
            rules=rules_pb2.Ruleset(preset="texas42"),
            name="bench-browser load",
            house_bots=[game_service_pb2.HouseBot(seat=s, strategy="heuristic") for s in (1, 2, 3)],
        ),
        timeout=RPC_TIMEOUT,
    )
    taken = stub.TakeSeat(
        game_service_pb2.TakeSeatRequest(game_id=created.game_id, seat=0, player_name="bench"),
        timeout=RPC_TIMEOUT,
    )
    auth = (("authorization", f"Bearer {taken.seat_token}"),)
    watch = stub.WatchGame(
        game_service_pb2.WatchGameRequest(game_id=created.game_id), metadata=auth, timeout=120
    )
    try:
        for message in watch:
            if (
                message.view.HasField("turn")
                and message.view.turn == 0
                and message.view.legal_actions
            ):
                break
    finally:
        watch.cancel()
    value = {"gameId": created.game_id, "seat": 0, "token": taken.seat_token, "name": "bench"}
    return {
        "key": f"boneyard.seat.{created.game_id}",
        "value": json.dumps(value),
        "game": created.game_id,
    }


def measure_load(
    browser: Browser,
    http_url: str,
    stub: game_service_pb2_grpc.GameServiceStub,
    args: argparse.Namespace,
) -> None:
    """Print the app's size and time to the first legal click, before and after."""
    with tempfile.TemporaryDirectory(prefix="bench-browser-apps-") as tmp:
        apps: dict[str, Path] = {}
        built = web_app_dir()
        if built is None:
            print("load: the server has no built web app (make web)")
            return
        apps["after"] = Path(tmp) / "after"
        shutil.copytree(built, apps["after"])
        if export_baseline(args.baseline, Path(tmp) / "before"):
            apps["before"] = Path(tmp) / "before"
        compressed = server_compresses(http_url)
        config = {
            "apps": {k: str(v) for k, v in apps.items()},
            "upstream": http_url,
            "gzip": compressed,
        }
        static = browser.ask(f"serve {json.dumps(config)}").split()[1]
        seat = seat_for_load(stub)
        order = [name for name in ("before", "after") if name in apps]
        times: dict[str, list[float]] = {name: [] for name in order}
        sizes: dict[str, dict[str, int]] = {}
        for number in range(args.load_rounds):
            line = []
            for name in order if number % 2 == 0 else order[::-1]:
                url = f"{static}/{name}/#/game/{seat['game']}"
                answer = browser.ask(f"load {json.dumps({'url': url, 'seat': seat})}")
                if not answer.startswith("load "):
                    sys.exit(f"bench: the {name} app did not reach a legal click: {answer}")
                figures = json.loads(answer.split(" ", 1)[1])
                times[name].append(figures["ms"])
                sizes[name] = figures
                line.append(f"{name} {figures['ms']:.0f} ms")
            print(f"load round {number + 1}: {', '.join(line)}", flush=True)
        how = (
            "gzip, as the server sends them"
            if compressed
            else "raw: the server sends them uncompressed"
        )
        label = {"before": f"before ({args.baseline})", "after": "after"}
        print(
            "app transferred (document, script, stylesheet; "
            + how
            + "): "
            + ", ".join(
                f"{label[n]} {sizes[n]['bodies']:,} bytes ({gzipped_size(apps[n]):,} gzip -6)"
                for n in order
            )
        )
        print(
            "first legal click (navigation start to a legal bid button enabled, a new context each "
            f"time, {args.load_rounds} alternating rounds): "
            + ", ".join(
                f"{label[n]} median {statistics.median(times[n]):.0f} ms "
                f"(min {min(times[n]):.0f}, max {max(times[n]):.0f})"
                for n in order
            )
        )


def _line(name: str, values: list[float], expected: int) -> str:
    missing = expected - len(values)
    gone = f", {missing} not received" if missing else ""
    return (
        f"{name}: n={len(values)} p50 {quantile(values, 0.5):.1f} ms, p90 {quantile(values, 0.9):.1f} ms, "
        f"p99 {quantile(values, 0.99):.1f} ms, max {max(values):.1f} ms{gone}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=6, help="latency rounds (a new game each; 0: none)"
    )
    parser.add_argument("--actions", type=int, default=150, help="actions per round")
    parser.add_argument("--pause-ms", type=float, default=25.0, help="mean pause between actions")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--load-rounds",
        type=int,
        default=10,
        help="rounds of opening the app at a seat's turn, each build once a round (0: none)",
    )
    parser.add_argument(
        "--baseline", default=BASELINE, help="the commit whose built web app is 'before'"
    )
    parser.add_argument(
        "--connect-too",
        action="store_true",
        help="also watch with connectrpc's Python client on the HTTP listener (the HTTP path "
        "without the browser)",
    )
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None or not (REPO / "node_modules" / "playwright-core").exists():
        sys.exit("bench: node and the npm packages are needed (make setup-web)")
    if not os.access(os.environ.get("CHROMIUM", "/usr/bin/chromium"), os.X_OK):
        sys.exit("bench: /usr/bin/chromium is missing (apt-get install chromium)")
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-browser-") as tmp:
        try:
            server = start_process(
                [
                    server_binary(),
                    "--database-url",
                    f"sqlite:///{Path(tmp) / 'bench.db'}",
                    "--listen",
                    "127.0.0.1:0",
                    "--http-listen",
                    "127.0.0.1:0",
                    "--log-level",
                    "WARNING",
                ],
                Path(tmp) / "server.log",
            )
        except StartError as e:
            sys.exit(f"bench: {e}")
        browser = Browser(node)
        channel = grpc.insecure_channel(server.address)
        try:
            deadline = time.monotonic() + 30
            while not (match := HTTP.search(server.log_path.read_text(errors="replace"))):
                if time.monotonic() > deadline:
                    sys.exit("bench: the HTTP listener did not start")
                time.sleep(0.05)
            http_url = match[1]
            stub = game_service_pb2_grpc.GameServiceStub(channel)
            if args.load_rounds > 0:
                measure_load(browser, http_url, stub, args)
            rounds: list[Round] = []
            for number in range(args.rounds):
                r = run_round(number, server, http_url, browser, stub, args, rng)
                rounds.append(r)
                first = "page" if number % 2 == 0 else "anchor"
                print(
                    f"round {number + 1} ({first} subscribed first, clock offset "
                    f"{r.offset_ms:+.2f} ms, {len(r.acks)} actions):",
                    flush=True,
                )
                print("  " + _line("browser (Connect)", r.latencies(r.page), len(r.acks)))
                print("  " + _line("anchor (gRPC)    ", r.latencies(r.anchor), len(r.acks)))
                if args.connect_too:
                    print("  " + _line("Python Connect   ", r.latencies(r.connect), len(r.acks)))
            if not rounds:
                return
            page = [x for r in rounds for x in r.latencies(r.page)]
            anchor = [x for r in rounds for x in r.latencies(r.anchor)]
            expected = sum(len(r.acks) for r in rounds)
            print("all rounds:")
            print("  " + _line("browser (Connect)", page, expected))
            print("  " + _line("anchor (gRPC)    ", anchor, expected))
            if args.connect_too:
                connect = [x for r in rounds for x in r.latencies(r.connect)]
                print("  " + _line("Python Connect   ", connect, expected))
            p99s = sorted(quantile(r.latencies(r.page), 0.99) for r in rounds)
            print(f"  browser p99 per round: {', '.join(f'{p:.1f}' for p in p99s)} ms")
            print(
                f"browser: p99 {quantile(page, 0.99):.1f} ms after the ack "
                f"(anchor: gRPC stream p99 {quantile(anchor, 0.99):.1f} ms; target < 100 ms)"
            )
        finally:
            channel.close()
            browser.close()
            server.stop()


if __name__ == "__main__":
    main()
