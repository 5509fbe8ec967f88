"""Where mdf's W1 s3 -> s3 wall goes: the seconds its reading threads sit blocked in ranged GETs, against the run's
wall and CPU and the server's CPU (SeaweedFS started here, the peers' corpus uploaded, ``mdf.sh``'s recipe).

The run is ``mdf run`` in a child process with :meth:`mdf.storage.retry.ResumingReader._read_at` (one ranged GET)
timed; the sum is over threads, so with two shards read at once it can pass half the wall. A profile, not a
benchmark: the wrapper's own cost is one ``perf_counter`` pair a GET (~100 a run).

    python benchmarks/peers/s3_wait.py --reps 2 --peer-venvs /work/peer-venvs --work /work/peer-work
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from peers.s3 import server_cpu
from peers.venvs import DEFAULT_VENVS, DEFAULT_WORK, HERE, ROOT, ensure_data

sys.path.insert(0, str(ROOT))
from tests.storage_servers import SeaweedS3

TIMED_RUN = r"""
import atexit, resource, sys, threading, time
from mdf.storage import retry
acc, lock, real = {"s": 0.0, "gets": 0, "bytes": 0}, threading.Lock(), retry.ResumingReader._read_at
def timed(self, offset, n):
    t = time.perf_counter()
    got = real(self, offset, n)
    with lock:
        acc["s"] += time.perf_counter() - t; acc["gets"] += 1; acc["bytes"] += len(got)
    return got
retry.ResumingReader._read_at = timed
t0 = time.perf_counter()
def report():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"mdf wall {time.perf_counter() - t0:.2f} s, CPU {ru.ru_utime + ru.ru_stime:.2f} s; blocked in ranged GETs "
          f"{acc['s']:.2f} s (all threads) over {acc['gets']} GETs, {acc['bytes'] / 1e6:.0f} MB", file=sys.stderr)
atexit.register(report)
from mdf.cli import main
sys.argv = ["mdf", "run", "-q", sys.argv[1]]
sys.exit(main())
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--peer-venvs", type=Path, default=DEFAULT_VENVS)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = ap.parse_args()
    work = args.work.resolve()
    data = ensure_data(work, args.n, args.peer_venvs)
    with tempfile.TemporaryDirectory(prefix="peers-s3-wait-", dir=work) as tmp:
        server = SeaweedS3(Path(tmp) / "seaweedfs")
        endpoint = server.start()
        try:
            client = server.client()
            client.create_bucket(Bucket="wait")
            for f in sorted((data / "parquet").glob("*.parquet")):
                client.upload_file(str(f), "wait", f"in/{f.name}")
            env = {**os.environ, **endpoint.env(), "MDF_CACHE_DIR": str(Path(tmp) / "cache"), "BENCH_CPUS": "2"}
            for r in range(args.reps):
                out = Path(tmp) / f"run{r}"
                paths = {"MDF_INPUT": "s3://wait/in/*.parquet", "MDF_OUTPUT": f"s3://wait/out{r}"}
                # mdf.sh with MDF=true writes the recipe only; the timed process is the wrapper above
                subprocess.run([str(HERE / "mdf.sh"), "W1", str(data), str(out)], env={**env, **paths, "MDF": "true"},
                               check=True)  # fmt: skip
                cpu0, t = server_cpu(server.proc.pid), time.perf_counter()  # type: ignore[union-attr]
                done = subprocess.run([sys.executable, "-c", TIMED_RUN, str(out / "recipe.yaml")], env=env,
                                      capture_output=True, text=True)  # fmt: skip
                server_s = server_cpu(server.proc.pid) - cpu0  # type: ignore[union-attr]
                print(f"run {r}: exit {done.returncode}, wall {time.perf_counter() - t:.2f} s, server CPU "
                      f"{server_s:.2f} s; {done.stderr.strip()[-800:]}", flush=True)  # fmt: skip
        finally:
            server.stop()


if __name__ == "__main__":
    main()
