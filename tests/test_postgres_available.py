"""CI really reaches PostgreSQL (skipped locally without BONEYARD_TEST_DATABASE_URL)."""

import pytest
import sqlalchemy as sa


@pytest.mark.postgres
def test_select_one_through_sqlalchemy(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1
    finally:
        engine.dispose()
