"""The team's shared peers (``../shared/peers``) made runnable from this repository: their venvs and a root.

The peers' ``run.sh`` expect their venvs at ``venvs/NAME`` beside ``peers/`` (they find them from their own
path). The shared folder is read in place and never written, so :func:`peer_root` builds a folder of two links,
``peers -> ../shared/peers/peers`` and ``venvs -> VENV_ROOT``, and each ``run.sh`` is called through it: bash's
``cd "$(dirname "$0")" && pwd`` keeps the link's path, so the script finds the venvs under the link folder.

The venvs hold the versions the team measured (the peers' README). They are made once with ``uv`` (or
``python -m venv`` + pip) and compiled to bytecode once: ``uv`` installs without ``.pyc`` and this machine runs
with ``PYTHONDONTWRITEBYTECODE=1``, so without it every run of every peer (and of mdf) compiles its imports
again, 0.3-0.5 s a process that no user who installs with pip pays. A Python that finds ``.pyc`` files reads
them whatever that variable says.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent  # benchmarks/peers
ROOT = HERE.parent.parent
SHARED = ROOT.parent / "shared" / "peers"
DEFAULT_VENVS = ROOT / "benchmarks" / ".venv-peers"
DEFAULT_WORK = ROOT / "benchmarks" / ".data" / "peers"

COMMON = ["pyarrow==26.0.1", "numpy==2.4.6"]
PINS = {  # ../shared/peers/README.md, "Versions measured"
    "polars": ["polars==2.1.0", *COMMON],
    "plain": COMMON,
    "duckdb": ["duckdb==2.0.1", *COMMON],
    "datasketch": ["datasketch==2.0.0", "scipy==1.17.1", "xxhash==4.1.0", *COMMON],
    "rensa": ["rensa==0.5.0", *COMMON],
}


def shared_peers() -> Path:
    if not (SHARED / "peer_run.py").exists():
        sys.exit(f"{SHARED} is missing: the benchmark runs the team's peers from ../shared/peers in place")
    return SHARED


def ensure_venvs(venv_root: Path, names: list[str]) -> None:
    """Create the venvs in ``names`` that are missing (pinned versions), each compiled to bytecode once."""
    venv_root.mkdir(parents=True, exist_ok=True)
    uv = shutil.which("uv")
    for name in names:
        venv = venv_root / name
        python = venv / "bin" / "python"
        if not (venv / ".complete").exists():
            print(f"creating peer venv {venv} ({' '.join(PINS[name])}) ...", flush=True)
            shutil.rmtree(venv, ignore_errors=True)
            if uv:
                subprocess.run([uv, "venv", "-q", "-p", "3.11", str(venv)], check=True)
                subprocess.run([uv, "pip", "install", "-q", "-p", str(python), *PINS[name]], check=True)
            else:
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
                subprocess.run([str(python), "-m", "pip", "install", "-q", *PINS[name]], check=True)
            site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
            compile_tree(str(python), site)
            (venv / ".complete").write_text(" ".join(PINS[name]))


def compile_tree(python: str, folder: str) -> None:
    """``python -m compileall`` on ``folder`` (quiet; files that do not compile are left as they are)."""
    subprocess.run([python, "-m", "compileall", "-q", "-j", "0", folder], capture_output=True)


def compile_mdf() -> None:
    """Bytecode for mdf's venv and this repository's packages (editable installs), as ``pip install`` leaves it."""
    marker = DEFAULT_WORK / ".mdf-compiled"
    # the installed distributions and when each was installed: a package reinstalled since (``uv pip install
    # --reinstall`` of the kernels' wheel reinstalls pyarrow too) has no bytecode, and with the old stamp (the
    # venv's path only) it ran from source in every timed process, pyarrow.compute alone ~0.1 s
    purelib = Path(sysconfig.get_path("purelib"))
    dists = sorted(f"{d.name}@{d.stat().st_mtime_ns}" for d in purelib.glob("*.dist-info"))
    stamp = f"{sys.prefix} {sorted(p.name for p in ROOT.glob('*/src'))} {dists}"
    if marker.exists() and marker.read_text() == stamp:
        compile_tree(sys.executable, str(ROOT / "core" / "src"))  # cheap when up to date; sources change
        for src in ROOT.glob("plugins/*/src"):
            compile_tree(sys.executable, str(src))
        return
    compile_tree(sys.executable, str(purelib))
    compile_tree(sys.executable, str(ROOT / "core" / "src"))
    for src in ROOT.glob("plugins/*/src"):
        compile_tree(sys.executable, str(src))
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(stamp)


def peer_root(work: Path, venv_root: Path) -> Path:
    """``work/root`` with ``peers`` -> the shared peers and ``venvs`` -> ``venv_root`` (links)."""
    root = work / "root"
    root.mkdir(parents=True, exist_ok=True)
    for name, target in (("peers", shared_peers() / "peers"), ("venvs", venv_root.resolve())):
        link = root / name
        if link.is_symlink() and os.readlink(link) == str(target):
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return root


def ensure_words() -> None:
    """gen.py draws its words from Debian's ``wamerican`` list."""
    if not Path("/usr/share/dict/words").exists():
        sys.exit("/usr/share/dict/words is missing: apt-get install wamerican (the peers' corpus generator needs it)")


def ensure_data(work: Path, n: int, venv_root: Path) -> Path:
    """gen.py's corpus of ``n`` records under ``work/data/nN`` (where peer_run.py looks), made once."""
    data = work / "data" / f"n{n}"
    if not (data / "meta.json").exists():
        ensure_words()
        print(f"generating the peers' corpus of {n:,} records under {data} ...", flush=True)
        gen = [str(venv_root / "plain" / "bin" / "python"), str(shared_peers() / "gen.py"), "--n", str(n)]
        subprocess.run([*gen, "--out", str(data)], check=True, stdout=subprocess.DEVNULL)
    return data
