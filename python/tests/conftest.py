"""The client tests' instance: the plugin's `localplane` fixture (the session's instance, reset before each test) with
its clock frozen, under a name that leaves `localplane` to the package."""

from __future__ import annotations

import pytest

from localplane import Localplane


@pytest.fixture
def instance(localplane: Localplane) -> Localplane:
    localplane.clock.freeze()
    return localplane
