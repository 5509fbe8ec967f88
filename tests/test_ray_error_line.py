"""The one line a Ray run fails with when a worker node is lost (seen in tests/test_cluster_s3.py: every process
of a worker host killed mid-run), built from Ray's own exception types without a cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

rex = pytest.importorskip("ray.exceptions")


def test_an_actor_lost_under_a_task_is_one_line_naming_it_not_an_internal_error(tmp_path: Path) -> None:
    """A task whose actor became unavailable arrives as ``RayTaskError(ActorUnavailableError)``, which has no
    ``function_name``. (Fails on the code before: local_error raised AttributeError: 'ActorUnavailableError'
    object has no attribute 'function_name', and the user saw 'unexpected AttributeError ... please report it':
    seen, in the cluster test and here.)"""
    from mdf.executor.ray.errors import local_error

    lost = rex.ActorUnavailableError("The actor is temporarily unavailable: RpcError: connection refused", None)
    exc = rex.RayTaskError("StageWorker.process", "remote traceback", lost).as_instanceof_cause()
    err = local_error(exc, str(tmp_path / "out"))
    line = str(err)
    assert line.startswith("Ray: ActorUnavailableError: The actor") and "temporarily unavailable" in line, line
    assert "\n" not in line and "run.log" in line


def test_a_ray_version_mismatch_is_one_line_with_both_versions_and_the_node() -> None:
    """Joining a cluster of another Ray or Python version: Ray's own check (``check_version_info``, given the
    metadata of a cluster started with another Ray) raises six lines; the user gets one, with both versions and
    this process's node (issue 30). Fails on the code before: only 'Version mismatch: The cluster was started
    with:' was kept (seen)."""
    import sys

    utils = pytest.importorskip("ray._private.utils")
    from mdf.executor.ray.session import join_error

    python = ".".join(map(str, sys.version_info[:3]))
    with pytest.raises(RuntimeError) as raised:
        utils.check_version_info({"ray_version": "2.0.0", "python_version": python}, "node 10.77.0.1", True)
    line = join_error("10.77.0.1:6379", raised.value)
    assert "\n" not in line and "Ray: 2.0.0" in line and f"Python: {python}" in line and "node 10.77.0.1" in line
    import ray

    assert f"Ray: {ray.__version__}" in line
