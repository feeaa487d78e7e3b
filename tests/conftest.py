"""Shared fixtures for the Boneyard test suite."""

import os

import pytest


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
