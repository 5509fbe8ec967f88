"""Fixtures for the mdf_kernels tests (helpers to import live in kernel_layouts.py)."""

import pytest


@pytest.fixture(params=["plain", "sliced", "chunked"])
def layout(request):
    return request.param
