"""Fixtures of the server's integration tests: a real gRPC server on loopback (port 0) over a
fresh database of each backend (SQLite always; PostgreSQL when BONEYARD_TEST_DATABASE_URL is
set), and clients whose channels are closed when the test ends. The helpers behind them are in
api_helpers.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from api_helpers import BACKENDS, Client, RunningServer, running_server
from sqlalchemy.engine import Engine


@pytest.fixture(scope="session")
def pg_admin(postgres_url: str) -> Iterator[Engine]:
    """An AUTOCOMMIT engine on the test server's database, to create and drop databases."""
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    yield admin
    admin.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """A server on a fresh database of each backend, shared by the tests of a module (each
    test makes games of its own)."""
    with running_server(request.param, request, tmp_path_factory) as running:
        yield running


@pytest.fixture(params=BACKENDS)
def fresh_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """A server on a database of its own for one test (for tests that look at every game)."""
    with running_server(request.param, request, tmp_path_factory) as running:
        yield running


@pytest.fixture
def client(server: RunningServer) -> Iterator[Client]:
    c = Client(server.address)
    yield c
    c.close()


@pytest.fixture
def clients(server: RunningServer) -> Iterator[Callable[[], Client]]:
    """Make more clients (channels of their own), all closed when the test ends."""
    made: list[Client] = []

    def make() -> Client:
        c = Client(server.address)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def backend_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """A server on a database of its own, on the backend given by indirect parametrization
    (``"sqlite"`` or ``"postgresql"``)."""
    with running_server(request.param, request, tmp_path_factory) as running:
        yield running
