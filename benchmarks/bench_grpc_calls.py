"""What grpc itself costs a server for one exchange: a unary call against one message each way
on an open bidirectional stream, with nothing of Boneyard's in between.

    .venv/bin/python benchmarks/bench_grpc_calls.py   # last line: `grpc calls: unary N us, ...`

Starts a bare ``grpc.aio`` echo server in a subprocess (generic handlers, bytes in and out)
and, from this process, ``--calls`` echoes of ``--size`` bytes from ``--parallel`` clients
at once: first as unary calls, then as messages on one bidirectional stream per client,
alternating ``--rounds`` times. Prints the server process's CPU an exchange (from /proc: Linux)
for each: the floor under any per-action API, and what a bot answering its turns on one
stream would save against a ``SubmitAction`` per action.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import grpc

SERVICE = "bench.Echo"


def _same(data: bytes) -> bytes:
    return data


async def _unary(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


async def _bidi(requests: object, context: grpc.aio.ServicerContext) -> object:
    async for message in requests:  # type: ignore[attr-defined]
        yield message


async def serve(port: int) -> None:
    server = grpc.aio.server()
    handlers = grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Unary": grpc.unary_unary_rpc_method_handler(
                _unary, request_deserializer=_same, response_serializer=_same
            ),
            "Bidi": grpc.stream_stream_rpc_method_handler(
                _bidi, request_deserializer=_same, response_serializer=_same
            ),
        },
    )
    server.add_generic_rpc_handlers((handlers,))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(bound, flush=True)
    await server.wait_for_termination()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(address: str, pid: int, calls: int, parallel: int, size: int) -> tuple[float, float]:
    """Server CPU (µs) an exchange: unary, then bidirectional."""
    payload = b"x" * size
    each = max(1, calls // parallel)
    async with grpc.aio.insecure_channel(address) as channel:
        unary = channel.unary_unary(
            f"/{SERVICE}/Unary", request_serializer=_same, response_deserializer=_same
        )
        bidi = channel.stream_stream(
            f"/{SERVICE}/Bidi", request_serializer=_same, response_deserializer=_same
        )

        async def by_calls() -> None:
            for _ in range(each):
                await unary(payload)

        async def on_a_stream() -> None:
            call = bidi()
            for _ in range(each):
                await call.write(payload)
                await call.read()
            await call.done_writing()

        figures = []
        for client in (by_calls, on_a_stream):
            before = cpu_seconds(pid)
            await asyncio.gather(*(client() for _ in range(parallel)))
            figures.append((cpu_seconds(pid) - before) / (each * parallel) * 1e6)
        return figures[0], figures[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--size", type=int, default=100, help="bytes a message")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(serve(args.serve))
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        address = f"127.0.0.1:{port}"
        asyncio.run(measure(address, server.pid, args.calls // 5, args.parallel, args.size))  # warm
        unary, bidi = [], []
        for _ in range(args.rounds):
            began = time.perf_counter()
            u, b = asyncio.run(measure(address, server.pid, args.calls, args.parallel, args.size))
            unary.append(u)
            bidi.append(b)
            print(
                f"round: unary {u:.0f} us, bidirectional {b:.0f} us of server CPU an exchange "
                f"({time.perf_counter() - began:.1f} s)"
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    u, b = sorted(unary)[len(unary) // 2], sorted(bidi)[len(bidi) // 2]
    print(
        f"grpc calls: unary {u:.0f} us, a message each way on an open stream {b:.0f} us of "
        f"server CPU an exchange ({u / b:.1f} x; medians of {args.rounds}, {args.parallel} "
        f"clients at once, {args.size} bytes)"
    )


if __name__ == "__main__":
    main()
