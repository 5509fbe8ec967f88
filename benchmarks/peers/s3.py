"""W1 s3 -> s3 on a SeaweedFS started here: ``mdf run`` (``mdf.sh`` with s3:// input and output) against the
Polars peer's query on ``scan_parquet``/``sink_parquet`` with ``storage_options`` (``polars_s3.py``), same server,
same objects, interleaved; each whole process timed; the first output of each downloaded and checked by the
peers' ``verify.py``. The server's CPU a run is printed beside it: on loopback it takes the run's cores.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peers.venvs import HERE, ROOT, shared_peers

sys.path.insert(0, str(ROOT))
from tests.storage_servers import SeaweedS3

BUCKET = "peers-w1"


def server_cpu(pid: int) -> float:
    """User + sys seconds of the server process so far (``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def download(client, prefix: str, dest: Path) -> None:
    """The data objects under ``prefix`` (not ``_``-prefixed run metadata) into ``dest/output/``."""
    out = dest / "output"
    out.mkdir(parents=True)
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix + "/"):
        for obj in page.get("Contents", []):
            rel = obj["Key"][len(prefix) + 1 :]
            if rel.endswith(".parquet") and not any(p.startswith(("_", ".")) for p in rel.split("/")):
                client.download_file(BUCKET, obj["Key"], str(out / rel.replace("/", "_")))


def run_s3(data: Path, reps: int, venv_root: Path, work: Path) -> dict:
    """Interleaved reps of mdf and Polars, s3 -> s3; {name: {walls, wall_med, rec_per_s, verify, server_cpu}}."""
    n = json.loads((data / "meta.json").read_text())["n"]
    peers = shared_peers()
    res: dict[str, dict] = {"mdf": {"walls": [], "server_cpu": []}, "polars": {"walls": [], "server_cpu": []}}
    with tempfile.TemporaryDirectory(prefix="peers-s3-", dir=work) as tmp:
        server = SeaweedS3(Path(tmp) / "seaweedfs")
        endpoint = server.start()
        try:
            client = server.client()
            client.create_bucket(Bucket=BUCKET)
            for f in sorted((data / "parquet").glob("*.parquet")):
                client.upload_file(str(f), BUCKET, f"in/{f.name}")
            env = {**os.environ, **endpoint.env(), "MDF_CACHE_DIR": str(Path(tmp) / "cache"), "BENCH_CPUS": "2"}
            env["POLARS_MAX_THREADS"] = env["BENCH_CPUS"]
            for r in range(reps):
                for name in ("mdf", "polars"):
                    prefix = f"out-{name}-{r}"
                    out = Path(tmp) / prefix
                    out.mkdir()
                    if name == "mdf":
                        cmd = [str(HERE / "mdf.sh"), "W1", str(data), str(out)]
                        env_run = {**env, "MDF_INPUT": f"s3://{BUCKET}/in/*.parquet",
                                   "MDF_OUTPUT": f"s3://{BUCKET}/{prefix}"}  # fmt: skip
                    else:
                        cmd = [str(venv_root / "polars" / "bin" / "python"), str(HERE / "polars_s3.py"),
                               str(peers / "peers"), str(data / "blocklist.txt"), f"s3://{BUCKET}/in",
                               f"s3://{BUCKET}/{prefix}/part-00000.parquet"]  # fmt: skip
                        env_run = env
                    cpu0 = server_cpu(server.proc.pid)  # type: ignore[union-attr]
                    t = time.perf_counter()
                    done = subprocess.run(cmd, env=env_run, capture_output=True, text=True, cwd=ROOT)
                    wall = time.perf_counter() - t
                    if done.returncode != 0:
                        res[name]["error"] = (done.stdout[-400:] + done.stderr[-1200:]).strip()
                        continue
                    res[name]["walls"].append(wall)
                    res[name]["server_cpu"].append(server_cpu(server.proc.pid) - cpu0)  # type: ignore[union-attr]
                    if r == 0:
                        download(client, prefix, out)
                        v = subprocess.run([sys.executable, str(peers / "verify.py"), "W1", str(data), str(out)],
                                           capture_output=True, text=True)  # fmt: skip
                        res[name]["verify"] = json.loads(v.stdout) if v.returncode == 0 else {"failed": v.stderr[-400:]}
        finally:
            server.stop()
    for d in res.values():
        if d["walls"]:
            d["wall_med"] = round(statistics.median(d["walls"]), 3)
            d["rec_per_s"] = round(n / d["wall_med"])
            d["server_cpu_med"] = round(statistics.median(d["server_cpu"]), 2)
    return res
