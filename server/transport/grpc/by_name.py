"""Services whose methods the gRPC port finds by name instead of registering them.

grpc.aio keeps one call request waiting in its core for each *registered* method, and for
every call that arrives it waits on all of them again (one ``asyncio.wait`` over a future per
method: with every service of Boneyard registered, ~40 futures, each given a callback and
having it taken back, at every call; about a tenth of the event loop's work an action). The
methods of a game (``GameService``: every action) and the health checks stay registered, as
the anchor's are; the other services (accounts, tournaments, matches, the archive ...), called
far less often, are found by name among the generic handlers, as grpc did before it had
registered methods. A call is answered the same either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import grpc

__all__ = ["ByName"]


class ByName:
    """``server`` as a generated ``add_...Servicer_to_server`` sees it: its handlers are added
    as generic handlers only (found by the method's name), never registered."""

    def __init__(self, server: grpc.aio.Server) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(tuple(handlers))

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        """Not registered: the generic handler added beside them finds them by name."""
