"""Build the mdf-kernels wheel with one progress line instead of cargo's screenfuls.

A first ``nox -s demo`` spends most of its time compiling the crate (about a hundred crates in release mode);
``pip install ./rust`` shows nothing meanwhile, which reads like a hang. This runs ``maturin build`` with cargo's
own progress counter forced on, and prints ``mdf-kernels: compiling 45/101 crates (1m02s) arrow-array``: one
updating line on a terminal, a line per tenth otherwise (CI logs). On failure the whole build output is shown.

Usage: ``python rust/build_wheel.py OUT_DIR`` (needs maturin); prints the wheel's path last.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

PROGRESS = re.compile(r"Building \[[^\]]*\]\s+(\d+)/(\d+)(?::\s*([\w-]+))?")
COMPILING = re.compile(r"^\s*Compiling ([\w-]+) v")


def _chunks(stream: IO[bytes]) -> Iterator[str]:
    """Lines of ``stream`` split on ``\\r`` as well as ``\\n`` (cargo redraws its bar with ``\\r``)."""
    buf = b""
    while block := os.read(stream.fileno(), 4096):
        buf += block
        *lines, buf = re.split(rb"[\r\n]", buf)
        yield from (line.decode("utf-8", "replace") for line in lines)
    if buf:
        yield buf.decode("utf-8", "replace")


def build(out_dir: str) -> Path:
    here = Path(__file__).resolve().parent
    env = {**os.environ, "CARGO_TERM_PROGRESS_WHEN": "always", "CARGO_TERM_PROGRESS_WIDTH": "120"}
    cmd = [sys.executable, "-m", "maturin", "build", "--release", "-m", str(here / "Cargo.toml"), "-o", out_dir]
    tty = sys.stdout.isatty()
    start, shown_tenth, crate, log = time.monotonic(), -1, "", []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    for line in _chunks(proc.stdout):
        if not line.strip():
            continue
        if m := COMPILING.match(line):
            crate = m.group(1)
        m = PROGRESS.search(line)
        if not m:
            log.append(line)
            continue
        done, total = int(m.group(1)), int(m.group(2))
        crate = m.group(3) or crate
        minutes, seconds = divmod(int(time.monotonic() - start), 60)
        status = f"mdf-kernels: compiling {done}/{total} crates ({minutes}m{seconds:02d}s) {crate}"
        if tty:
            print(f"\r{status:<100}", end="", flush=True)
        elif (tenth := done * 10 // max(total, 1)) > shown_tenth:
            shown_tenth = tenth
            print(status, flush=True)
    code = proc.wait()
    if tty:
        print()
    if code != 0:
        print("\n".join(log), file=sys.stderr)
        raise SystemExit(f"mdf-kernels: the build failed (exit {code}); cargo's output is above")
    wheels = sorted(Path(out_dir).glob("mdf_kernels-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        print("\n".join(log), file=sys.stderr)
        raise SystemExit(f"mdf-kernels: maturin reported success but wrote no wheel into {out_dir}")
    minutes, seconds = divmod(int(time.monotonic() - start), 60)
    print(f"mdf-kernels: built in {minutes}m{seconds:02d}s -> {wheels[-1]}", flush=True)
    return wheels[-1]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    build(sys.argv[1])
