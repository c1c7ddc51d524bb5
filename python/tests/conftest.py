"""One instance for the session's client tests (`instance`), reset before each test that uses it."""

from __future__ import annotations

import os
from typing import Iterator

import pytest

import localplane


@pytest.fixture(scope="session")
def _started_instance() -> Iterator[localplane.StartedLocalplane]:
    with localplane.start(bin=os.environ.get("LOCALPLANE_BIN"), freeze_clock=True) as started:
        yield started


@pytest.fixture
def instance(_started_instance: localplane.StartedLocalplane) -> localplane.StartedLocalplane:
    _started_instance.reset()
    return _started_instance
