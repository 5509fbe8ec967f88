"""Run progress on disk, so ``mdf run --resume`` continues a killed run instead of starting over.

Under ``<output>/_mdf/state/`` a run keeps ``manifest.json`` (the run's fingerprint, the shards whose part files
are committed with their counts (:mod:`mdf.tally`), and the key-state snapshot that goes with them) and the
snapshot files themselves (one per bucket). A snapshot is
taken when a shard completes, at most every ``snapshot_every_s`` seconds; the manifest is replaced atomically
after every bucket has written its file, so a crash at any moment leaves the previous consistent pair.

Why this is enough for exactly-once dedup: a resumed run skips the shards the manifest lists and re-runs the
others. Keys those others claimed before the snapshot answer "new" to them again (the snapshot carries their
claimant bits, see :mod:`mdf.state.bucket`); keys they claimed after it are simply not in the snapshot. A shard
that completed after the snapshot is re-run and its part file replaced, never duplicated.

:meth:`Checkpoint.save` is the run's last step over the key state (``run_passes`` calls it once, after the
last pass; periodic snapshots go through :meth:`Checkpoint.shard_done`): around the final snapshot it lets
state that outlives the run act (:meth:`mdf.KeyState.finish` and :meth:`mdf.KeyState.commit`, e.g. a persistent
dedup index writes and then publishes the keys the run added). A resumed run that had already finished calls
them again; such state must notice (the index knows the runs it holds).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import time
from typing import Any

from mdf import layout
from mdf.output.mirror import sync_all, url_of
from mdf.tally import Counts

MANIFEST = "manifest.json"
FORMAT = 1


class Checkpoint:
    def __init__(
        self, output_dir: str, state: Any, every_s: float, resume: bool, fingerprint: str | None = None
    ) -> None:
        self.dir = str(layout.state_dir(output_dir))
        self.state = state
        self.every_s = every_s
        self.resume = resume
        self.fingerprint = fingerprint
        self.restored = Counts()  # counts of the shards a previous run committed
        self.totals = Counts()  # this run's committed counts
        self.completed: list[str] = []
        self.generation = 0
        self.snapshots = 0
        self._last = time.monotonic()
        if state is not None:  # which run the key state serves: the same on a resume (state types name it)
            state.run = {"fingerprint": fingerprint, "output": url_of(output_dir) or os.path.abspath(output_dir),
                         "driver": {"pid": os.getpid(), "host": socket.gethostname()}}  # fmt: skip
        if not resume:
            shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir, exist_ok=True)

    def load(self) -> set[str]:
        """With ``resume``: restore the last snapshot and return the shards already done (else nothing)."""
        path = os.path.join(self.dir, MANIFEST)
        if not self.resume or not os.path.exists(path):
            return set()
        with open(path) as f:
            manifest = json.load(f)
        self.completed = list(manifest["completed"])
        self.generation = manifest["generation"]
        self.restored = Counts.from_dict(manifest.get("totals"))
        if self.state is not None and manifest["buckets"]:
            self.state.restore([os.path.join(self.dir, p) for p in manifest["buckets"]])
        return set(self.completed)

    def shard_done(self, shard_id: str, totals: Counts | None = None) -> None:
        """``shard_id``'s part files are committed; ``totals``: this run's counts of its committed shards."""
        self.completed.append(shard_id)
        if totals is not None:
            self.totals = totals
        if self.state is None or time.monotonic() - self._last >= self.every_s:
            self._snapshot()

    def save(self) -> None:
        """The last snapshot of a run whose every shard is committed, between the key state's two last steps:
        each bucket's :meth:`~mdf.StateType.finish` runs before it, :meth:`~mdf.StateType.commit` after it.

        Why finish first: what a bucket's finish wrote (a dedup index's generation files) need not be in the
        snapshot as well. The index's update runs pickled every key they added into this snapshot only to write
        them again right after: 0.1-0.2 s of a 7 s run (the MinHash benchmark at 1 M rows). A crash between the
        finish and this snapshot resumes from the previous one and finishes again; a crash after it finds the
        buckets finished and only commits."""
        finished = self.state.finish() if self.state is not None else None
        self._snapshot()
        if self.state is not None:
            self.state.commit(finished)

    def _snapshot(self) -> None:
        self.generation += 1
        paths: list[str] = []
        if self.state is not None:
            paths = self.state.snapshot(self.dir, self.generation, list(self.completed))
            self.snapshots += 1
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "fingerprint": self.fingerprint,
            "generation": self.generation,
            "completed": self.completed,
            "totals": Counts().merge(self.restored).merge(self.totals).to_dict(),
            "buckets": [os.path.basename(p) for p in paths],
        }
        tmp = os.path.join(self.dir, f"{MANIFEST}.tmp")
        with open(tmp, "w") as f:
            json.dump(manifest, f)
        os.replace(tmp, os.path.join(self.dir, MANIFEST))
        for old in glob.glob(os.path.join(self.dir, "bucket-*.pkl")):
            if not old.endswith(f".{self.generation}.pkl"):
                os.remove(old)
        sync_all()  # an s3:// output: committed parts, then snapshots, then this manifest go to its staging prefix
        self._last = time.monotonic()
