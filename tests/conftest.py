"""Shared fixtures for the Boneyard test suite."""

import os

import pytest

# The suite uses gRPC in this process and forks real server and client processes
# (subprocess, pexpect). With gRPC's fork support on, a child can restart gRPC's poller
# between fork and exec and die on "epoll_wait error: Bad file descriptor" (grpc/grpc#43055),
# which made the pexpect session test fail now and then. Set before anything imports grpc.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """SQLAlchemy URL of a throwaway PostgreSQL database, or skip the test."""
    url = os.environ.get("BONEYARD_TEST_DATABASE_URL")
    if not url:
        pytest.skip(
            "PostgreSQL tests need BONEYARD_TEST_DATABASE_URL=postgresql+psycopg://...; "
            ".ci/run starts a server and sets it"
        )
    return url
