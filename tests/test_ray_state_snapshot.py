"""Key-state snapshots on Ray are written and read by the driver, in the driver's folders.

A bucket actor may live on another machine: had it written the snapshot path itself, the file would land on that
machine's disk (or, for a relative output path, under the actor's working directory), while the checkpoint
manifest, its S3 mirror and ``--resume`` look for it in the driver's output folder. The bucket actors send their
bytes and the driver writes them (and reads them back for a restore).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from mdf.state import KeyState

pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("local_ray")  # mdf.testing's: one Ray for the module's runs


def u64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def test_snapshot_files_land_in_the_drivers_folder_and_restore_from_it(tmp_path, monkeypatch):
    """A relative snapshot folder resolves against the driver's working directory, as the output path does.
    Fails when the bucket actors write and read the paths themselves (seen: the actors' snapshot() raised
    FileNotFoundError, the folder not being there under their own working directory)."""
    monkeypatch.chdir(tmp_path)
    os.makedirs("out/_mdf/state")
    s = KeyState.on_ray(2, "snapshot-test-a")
    try:
        s.claim("ns", u64(1, 2, 3), "done", u64(0, 1, 2))
        s.claim("ns", u64(4, 5), "open", u64(0, 1))
        paths = s.snapshot("out/_mdf/state", 1, completed=["done"])
    finally:
        s.close()
    assert sorted(os.listdir("out/_mdf/state")) == ["bucket-0.1.pkl", "bucket-1.1.pkl"]
    assert all(os.path.getsize(p) > 0 for p in paths)
    r = KeyState.on_ray(2, "snapshot-test-b")
    try:
        r.restore(paths)
        assert r.claim("ns", u64(4, 5, 6), "open", u64(0, 1, 2)).tolist() == [True, True, True]  # its own claims
        assert r.claim("ns", u64(1, 2), "done", u64(0, 1)).tolist() == [False, False]  # completed: forgotten
        assert r.stats()["ns"]["keys"] == 6
    finally:
        r.close()
