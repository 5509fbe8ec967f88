"""Run each extractor over raw page bytes and return its texts; peers run in their own venv and are cached.

Every extractor gets the page's bytes as a crawler stores them and decodes them its own way, as trafilatura's
``tests/evaluate.py`` does: trafilatura takes bytes, readability-lxml gets trafilatura's ``decode_file``,
resiliparse its own ``detect_encoding``, mdf the binary column (the kernel's charset detection).

Peers run in ``benchmarks/.venv-html`` (made with uv on first use: trafilatura 2.3.x, readability-lxml 0.9,
resiliparse 2.0.x), one subprocess per extractor, and their texts are cached in ``benchmarks/.data/html-quality``
under the peer's version and a hash of the pages, since they take minutes and never change. mdf runs in this
process with the installed ``mdf_kernels``, so a rebuilt kernel is always what is measured.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_html_extract import peer_python  # the peers' venv, shared by every html benchmark

HERE = Path(__file__).resolve().parent
CACHE = HERE.parent / ".data" / "html-quality"
PEERS = ("trafilatura", "readability", "resiliparse")
FAVORS = ("precision", "balanced", "recall")


def mdf_texts(pages: list[bytes], favor: str = "balanced", model: bytes | None = None) -> list[str]:
    """mdf's main text of every page (one call, the kernel's threads); ``model``: the text of a block model
    (the shipped one or a cross-validation fold's), ``None`` for the rules alone."""
    import pyarrow as pa

    import mdf_kernels

    kw = {"model": model} if model is not None else {}
    out = mdf_kernels.html_extract(pa.array(pages, pa.binary()), favor=favor, **kw)
    return out.field("text").to_pylist()


def _peer_fn(name: str):  # runs in the peer venv only
    if name == "trafilatura":
        import trafilatura

        return lambda raw: trafilatura.extract(raw, include_comments=False, include_tables=True) or ""
    if name == "readability":
        import lxml.html
        from readability import Document
        from trafilatura.utils import decode_file

        def readability(raw: bytes) -> str:
            summary = Document(decode_file(raw)).summary(html_partial=True)
            return lxml.html.fromstring(summary).text_content() if summary.strip() else ""

        return readability
    if name == "resiliparse":
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.encoding import bytes_to_str, detect_encoding
        from resiliparse.parse.html import HTMLTree

        def resiliparse(raw: bytes) -> str:
            tree = HTMLTree.parse(bytes_to_str(raw, detect_encoding(raw)))
            return extract_plain_text(tree, main_content=True)

        return resiliparse
    raise ValueError(name)


def peer_worker(name: str, pages_file: Path, out_file: Path) -> None:
    """Inside the peer venv: extract every page (a failure is ``None``), write texts, seconds and version."""
    from importlib.metadata import version

    pages = pickle.loads(pages_file.read_bytes())
    fn = _peer_fn(name)
    texts: list[str | None] = []
    start = time.perf_counter()
    for raw in pages:
        try:
            texts.append(fn(raw))
        except Exception:  # a crash scores as finding nothing, as in trafilatura's evaluation
            texts.append(None)
    seconds = time.perf_counter() - start
    package = {"readability": "readability-lxml"}.get(name, name)
    out_file.write_text(json.dumps({"texts": texts, "seconds": seconds, "version": version(package)}))


def _fingerprint(pages: list[bytes]) -> str:
    h = hashlib.sha1()
    for raw in pages:
        h.update(hashlib.sha1(raw).digest())
    return h.hexdigest()[:16]


def peer_texts(name: str, pages: list[bytes], refresh: bool = False) -> tuple[list[str | None], str]:
    """A peer's texts for ``pages`` and its version: from the cache, else by running it (minutes)."""
    python = peer_python()
    CACHE.mkdir(parents=True, exist_ok=True)
    cache = CACHE / f"{name}-{_fingerprint(pages)}.json"
    if cache.exists() and not refresh:
        got = json.loads(cache.read_text())
        return got["texts"], got["version"]
    with tempfile.TemporaryDirectory() as tmp:
        pages_file = Path(tmp) / "pages.pickle"
        pages_file.write_bytes(pickle.dumps(pages))
        out = Path(tmp) / "out.json"
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(HERE.parent)}
        cmd = [str(python), "-m", "html_quality.runners", name, str(pages_file), str(out)]
        subprocess.run(cmd, check=True, env=env, cwd=HERE.parent)
        cache.write_text(out.read_text())
        got = json.loads(out.read_text())
    return got["texts"], got["version"]


if __name__ == "__main__":
    peer_worker(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
