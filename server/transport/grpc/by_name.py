"""Which methods of the gRPC port are *registered* with grpc, and which are found by name.

grpc.aio serves a method two ways. A registered method's calls are matched by grpc's core as
they arrive; a method found by name (a generic handler's) is matched in Python, and its call
takes more turns of the event loop to start. Under ``bench_server``'s load (32 games, 10 s,
``perf stat`` on each thread) a call found by name cost the event loop's thread 25.3
hand-overs of the GIL an action against 21.3 registered (the anchor's 21.1), and the writer's
thread 11.9 futex calls against 8.7 (it waits less for the GIL). But for every registered
method grpc.aio keeps one call request waiting in its core, and at every call it waits on all
of them again: one ``asyncio.wait`` over a future per method, each given a callback and
having it taken back (~1,400 Python opcodes an action with the game's twelve methods and the
health checks registered).

So only the two methods of an action are registered (``HOT``): a player's every action is a
GetView and a SubmitAction, and grpc's wait is over two futures. Every other method (the rest
of the game's service, the lobby, tournaments, health...) is found by name, by the generic
handler the generated code adds beside the registered ones. A call is answered the same
either way. Timed (``bench_server``, 32 games, alternating runs of 2 rounds), R went 0.83 to
0.87-0.89 and the server's CPU an action 1.18 to 1.11 x the anchor's; the game's twelve
methods registered measured the same as the two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import grpc

__all__ = ["HOT", "ByName"]

HOT: Mapping[str, frozenset[str]] = {
    "boneyard.v1.GameService": frozenset({"GetView", "SubmitAction"}),
}
"""The methods registered, by service: the ones every action calls."""


class ByName:
    """``server`` as a generated ``add_...Servicer_to_server`` sees it: its handlers are added
    as generic handlers (found by the method's name); of the methods ``HOT`` names, the
    handlers are registered too."""

    def __init__(self, server: grpc.aio.Server) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(tuple(handlers))

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        """Only the methods ``HOT`` names for ``service``: the generic handler added beside
        them finds the others by name."""
        names = HOT.get(service, frozenset())
        chosen = {name: handler for name, handler in handlers.items() if name in names}
        if chosen:
            self._server.add_registered_method_handlers(service, chosen)
