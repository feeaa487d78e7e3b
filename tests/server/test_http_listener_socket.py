"""The HTTP listener's accepted connections send each piece of an answer at once.

bench-asgi found every request after a connection's first, and every HTTP/2 request, taking
40 ms or more whatever the call: asyncio sets TCP_NODELAY only on the sockets it makes itself,
the listener's come from ``socket.create_server``, and Nagle's algorithm then held the second
piece of each answer Hypercorn writes until the client's delayed ACK. The option is read back
here from the connection the listener accepted (in this process, found by its ports), not
timed.
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any

from boneyard.server.transport.http.listener import HttpListener


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"ok"})


def _accepted_socket(server_port: int, client_port: int) -> socket.socket:
    """This process's socket of the connection between the two ports, seen from the server."""
    for name in os.listdir("/proc/self/fd"):
        try:
            found = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        try:
            if (
                found.family == socket.AF_INET
                and found.type == socket.SOCK_STREAM
                and found.getsockname()[1] == server_port
                and found.getpeername()[1] == client_port
            ):
                return found
        except OSError:
            pass
        found.close()
    raise AssertionError(f"no accepted connection from port {client_port} to {server_port}")


def test_an_accepted_connection_sends_without_waiting_for_acks() -> None:
    async def scenario() -> int:
        listener = HttpListener(_hello)
        port = await listener.start("127.0.0.1", 0)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            await writer.drain()
            assert (await reader.readline()).startswith(b"HTTP/1.1 200"), "no answer"
            client_port = writer.get_extra_info("sockname")[1]
            accepted = _accepted_socket(port, client_port)
            with accepted:
                nodelay = accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            writer.close()
            await writer.wait_closed()
            return nodelay
        finally:
            await listener.stop()

    assert asyncio.run(scenario()) != 0
