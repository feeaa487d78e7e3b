"""The gRPC port's keepalive: what lets an idle watching stream live through NATs and proxies
that drop a connection after a few quiet minutes, and what pings the server accepts.

- The server pings a connection that has been quiet for ``KEEPALIVE_TIME_MS`` (even with no
  call open), and closes it when the ping is not answered within ``KEEPALIVE_TIMEOUT_MS``: a
  client that vanished (a laptop shut, a NAT that forgot the mapping) stops holding a stream.
- It accepts a client's pings as often as every ``MIN_CLIENT_PING_MS``, with or without calls
  and data (``boneyard.clients.api`` pings every 60 s); a client pinging more often gets
  GOAWAY ``too_many_pings``, as gRPC servers answer abusive pings.
"""

from __future__ import annotations

__all__ = ["KEEPALIVE_TIMEOUT_MS", "KEEPALIVE_TIME_MS", "MIN_CLIENT_PING_MS", "SERVER_OPTIONS"]

KEEPALIVE_TIME_MS = 60_000
KEEPALIVE_TIMEOUT_MS = 20_000
MIN_CLIENT_PING_MS = 30_000

SERVER_OPTIONS: list[tuple[str, int]] = [
    ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", MIN_CLIENT_PING_MS),
    ("grpc.http2.max_pings_without_data", 0),
]
"""Channel arguments of ``grpc.aio.server``."""
