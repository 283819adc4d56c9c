"""Shared fixtures: the anyio backend and a fixed clock start."""

from datetime import UTC, datetime

import pytest

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
