"""Shared pieces of the Ray tests: recipes over hand-written data, and output comparison."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DATA = Path(__file__).parent / "data" / "cc_sample.jsonl"
BLOCKLIST = Path(__file__).parents[1] / "examples" / "blocklist.txt"


def text_recipe(tmp: Path, reader: dict, executor: dict, extra_ops: list | None = None, replicas: int = 1) -> dict:
    return {
        "reader": reader,
        "stages": [
            {
                "name": "clean",
                "operators": [{"url_filter": {"blocklist": str(BLOCKLIST)}}],
                "replicas": {"min": 1, "max": replicas},
            },
            {
                "name": "length",
                "operators": [{"text_length_filter": {"min_length": 200, "max_length": 100000}}, *(extra_ops or [])],
                "replicas": {"min": 1, "max": replicas},
            },
        ],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rejected")},
        "executor": executor,
    }


def many_rows_parquet(folder: Path, files: int = 3, rows: int = 4000) -> str:
    """Records cycled from the hand-written sample, ids made unique, split over several files."""
    base = [json.loads(line) for line in DATA.read_bytes().splitlines() if _is_json(line)]
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        recs = [{**base[i % len(base)], "id": f"f{f}-{i:06d}"} for i in range(rows)]
        pq.write_table(pa.Table.from_pylist(recs), folder / f"cc-{f:03d}.parquet", row_group_size=500)
    return str(folder / "*.parquet")


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line.decode())
        return True
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False


def part_files(folder: Path) -> dict[str, pa.Table]:
    return {p.name: pq.read_table(p) for p in sorted(folder.glob("*.parquet"))}


def assert_same_outputs(a: Path, b: Path) -> None:
    """Same part file names, and each file holds the same rows in the same order."""
    pa_, pb = part_files(a), part_files(b)
    assert list(pa_) == list(pb)
    for name in pa_:
        assert pa_[name].equals(pb[name]), name


def kill_when_named(
    suffix: str, killed: list[float], restart: bool = True, after: Path | None = None
) -> threading.Thread:
    """Kill the actor (a replica, a key-state bucket) whose name ends in ``suffix`` 1 s after it is named, or,
    with ``after`` (a run's output folder), once a shard's part is committed there: the run is then mid-way
    whatever the machine's speed. The kill's time goes into ``killed``."""
    import ray

    def killer() -> None:
        deadline = time.time() + 60
        while time.time() < deadline:
            names = [a for a in ray.util.list_named_actors(all_namespaces=False) if a.endswith(suffix)]
            if names and (after is None or any(after.glob("*.parquet"))):
                if after is None:
                    time.sleep(1.0)  # mid-shard: some batches written, the shard not committed
                ray.kill(ray.get_actor(names[0]), no_restart=not restart)
                killed.append(time.time())
                return
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    return thread
