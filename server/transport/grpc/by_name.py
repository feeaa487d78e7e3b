"""Every service of the gRPC port found by name instead of registering its methods.

grpc.aio keeps one call request waiting in its core for each *registered* method, and for
every call that arrives it waits on all of them again: one ``asyncio.wait`` over a future per
method, each given a callback and having it taken back, at every call. With every service of
Boneyard registered (~40 methods) that was about a tenth of the event loop's work an action;
with the game's methods and the health checks alone (12), still about 1,400 of the ~9,600
Python opcodes an action of ``bench_server``'s load (``make bench-server-instructions
BENCH_SERVER_INSTRUCTIONS_ARGS=--opcodes``), every call paying for the ten methods it is not.
Found by name, a call costs one look-up among the generic handlers, the game's first. (The
anchor of ``bench_server`` registers its methods, as the generated code does: it still pays
that wait.) A call is answered the same either way.
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
