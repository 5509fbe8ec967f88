"""The cores a run takes: the process's affinity mask and its cgroup CPU quota, not the machine's count."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from mdf.cpus import cgroup_cpu_limit

COUNT = "from mdf.cpus import usable_cores; print(usable_cores())"


def _machine_cores() -> int:
    return len(os.sched_getaffinity(0))


@pytest.mark.skipif(shutil.which("taskset") is None, reason="no taskset (util-linux)")
def test_a_run_pinned_to_one_core_starts_one_worker(tmp_path):
    """Under ``taskset -c 0`` the inline executor's ``workers: auto`` is 1, as the kernels' rayon pool counts.
    Seen red with ``os.cpu_count()`` in ``InlineParams.worker_count`` (the code before ``mdf.cpus``): "2 worker
    threads" on this 2-core machine."""
    if _machine_cores() < 2:
        pytest.skip("one core here: a pinned run and a free one look the same")
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "in").mkdir()
    for i in range(3):
        pq.write_table(pa.table({"score": [float(i)] * 10}), tmp_path / "in" / f"part-{i}.parquet")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        f"reader: {{type: parquet, paths: ['{tmp_path / 'in'}']}}\n"
        "stages: [{name: s, operators: [{score_filter: {column: score, min: 0}}]}]\n"
        f"writer: {{type: parquet, path: '{tmp_path / 'out'}'}}\n"
    )
    code = "import sys; from mdf.cli import main; sys.argv = ['mdf', 'run', sys.argv[1]]; main()"
    out = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code, str(recipe)], capture_output=True,
                         text=True, timeout=180)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    log = (tmp_path / "out" / "_mdf" / "run.log").read_text()
    assert "inline (1 worker thread" in log, log


def test_a_cgroup_cpu_quota_lowers_the_count(tmp_path):
    """A real cgroup with a CPU quota of one core (v1 ``cpu.cfs_quota_us`` or v2 ``cpu.max``, whichever this
    kernel mounts): a process moved into it counts 1 core although its affinity allows every core. Seen red with
    the quota ignored (``usable_cores`` returning the affinity alone): 2 here."""
    if os.geteuid() != 0 or _machine_cores() < 2:
        pytest.skip("needs root (to make a cgroup) and 2 or more cores")
    v1, v2 = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup")
    name = f"mdf-test-{uuid.uuid4().hex[:8]}"
    if (v1 / "cpu.cfs_quota_us").exists():
        group = v1 / name
        files = {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "100000"}
    elif (v2 / "cgroup.controllers").exists() and "cpu" in (v2 / "cgroup.subtree_control").read_text().split():
        group = v2 / name
        files = {"cpu.max": "100000 100000"}
    else:
        pytest.skip("no writable cgroup CPU controller here")
    try:
        group.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot make a cgroup here: {exc}")
    try:
        for key, value in files.items():
            (group / key).write_text(value)
        move = f"import os; open('{group / 'cgroup.procs'}', 'w').write(str(os.getpid()))\n"
        out = subprocess.run([sys.executable, "-c", move + COUNT], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "1"
    finally:
        group.rmdir()  # the child has exited, so the group is empty


def test_quota_files_are_read_up_the_tree_and_the_tightest_wins(tmp_path):
    """The parser on cgroup v2 files laid out as the kernel does (a hybrid host: v2 at ``unified``): a parent's
    quota of 2.5 cores binds a child without one (ceil: 3); ``max`` is no limit; a container whose mount shows only
    its own subtree (``root`` of the mount = its cgroup path) reads its quota at the mount point, not in a
    sub-cgroup that happens to have its path's name below it (seen red with the mount's root not stripped: 2, not
    4). Seen red with only the process's own folder read (no walk up): None, not 3."""
    mount = tmp_path / "unified"
    (mount / "kubepods" / "pod1").mkdir(parents=True)
    (mount / "kubepods" / "cpu.max").write_text("250000 100000\n")
    (mount / "kubepods" / "pod1" / "cpu.max").write_text("max 100000\n")
    info = tmp_path / "mountinfo"
    info.write_text(f"30 25 0:26 / {mount} rw,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n")
    cgroup = tmp_path / "cgroup"
    cgroup.write_text("0::/kubepods/pod1\n")
    assert cgroup_cpu_limit(cgroup, info) == 3
    (mount / "kubepods" / "pod1" / "cpu.max").write_text("50000 100000\n")
    assert cgroup_cpu_limit(cgroup, info) == 1
    container = tmp_path / "container"  # the pod's own cgroup, mounted as the container's root
    (container / "kubepods" / "pod1").mkdir(parents=True)
    (container / "cpu.max").write_text("400000 100000\n")
    (container / "kubepods" / "pod1" / "cpu.max").write_text("200000 100000\n")  # a sub-cgroup, not ours
    info.write_text(f"30 25 0:26 /kubepods/pod1 {container} rw - cgroup2 cgroup2 rw\n")
    assert cgroup_cpu_limit(cgroup, info) == 4
    cgroup.write_text("0::/other\n")
    info.write_text(f"30 25 0:26 / {mount} rw - cgroup2 cgroup2 rw\n")
    assert cgroup_cpu_limit(cgroup, info) is None
