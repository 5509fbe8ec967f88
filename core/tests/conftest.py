from __future__ import annotations

import pytest
from mdf.plugins import _load


@pytest.fixture(autouse=True)
def fresh_plugins():
    """Plugin loading is cached per process; tests that change env or sys.path need a fresh load."""
    _load.cache_clear()
    yield
    _load.cache_clear()
