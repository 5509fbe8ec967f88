"""``mdf index info`` and ``mdf index compact`` on an index built by real runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pyarrow.compute as pc
from click.testing import CliRunner
from dedup_helpers import exact_corpus
from index_helpers import ids, run, split

from mdf_dedup.cli import command
from mdf_dedup.index.files import IndexFiles
from mdf_dedup.index.manifest import read_manifest


def test_info_and_compact_keep_every_decision(tmp_path):
    """Three generations compacted into one (other bucket count) answer as before; info reads only the manifest.
    Fails if compaction mixes up the source ids of the keys it sorts: seen."""
    table = exact_corpus(3000, seed=12)
    globs = split(tmp_path, table)
    index = str(tmp_path / "index")
    op = {"exact_dedup": {"index": index, "index_mode": "update", "index_source": "id"}}
    for i, buckets in enumerate((1, 2, 4)):
        part = split(tmp_path / f"p{i}", table.slice(i * 500, 500))
        run(tmp_path, part["ab"], op, f"p{i}", buckets=buckets)
    runner = CliRunner()
    res = runner.invoke(command, ["info", index, "--json"])
    assert res.exit_code == 0, res.output
    before = json.loads(res.output)
    assert len(before["generations"]) == 3 and before["key_bytes_per_key"] <= 16
    res = runner.invoke(command, ["compact", index, "--buckets", "3"])
    assert res.exit_code == 0 and "3 generation(s) -> 1" in res.output, res.output
    (gen,) = read_manifest(IndexFiles(index))["generations"]
    assert gen["keys"] == before["keys"] and gen["buckets"] == 3
    assert sorted(p.name for p in (tmp_path / "index").iterdir()) == sorted(["manifest.json", gen["id"]])
    read = {"exact_dedup": {"index": index, "index_source": "id"}}
    kept, rejected, _ = run(tmp_path, globs["b"], read, "b", buckets=2)
    one, _, _ = run(tmp_path, split(tmp_path / "one", table.slice(0, 1500))["ab"], {"exact_dedup": {}}, "one")
    whole, _, _ = run(tmp_path, globs["ab"], {"exact_dedup": {}}, "whole")
    assert ids(one) | ids(kept) == ids(whole)
    index_rows = rejected.filter(pc.equal(rejected.column("_reason"), "exact_dedup:duplicate_of_index"))
    text_of = dict(zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True))
    pairs = zip(index_rows.column("text").to_pylist(), index_rows.column("_duplicate_of").to_pylist(), strict=True)
    assert index_rows.num_rows > 50 and all(text_of[earlier] == text for text, earlier in pairs)
    res = runner.invoke(command, ["info", index])
    assert res.exit_code == 0 and "1 generation(s)" in res.output and "normalize=none" in res.output, res.output


def test_info_reads_the_manifest_only(tmp_path):
    """info of a manifest listing 100 M keys whose files are absent: answered from the manifest, well under 1 s."""
    index = tmp_path / "index"
    index.mkdir()
    gens = [{"id": f"g-{i}", "created": "2026-01-01T00:00:00Z", "buckets": 64, "keys": 10_000_000,
             "key_bytes": 80_000_128 * 1, "source_bytes": 400_000_000, "run": {"output": f"/crawl/{i}"},
             "files": [{"bucket": b, "keys": 156_250, "key_bytes": 1_250_128, "source_bytes": 6_250_000}
                       for b in range(64)]} for i in range(10)]  # fmt: skip
    manifest = {"format": 1, "mdf_version": "0.1.0", "operator": "exact_dedup",
                "settings": {"hash": "xxh3_64", "normalize": "none"}, "generations": gens}  # fmt: skip
    (index / "manifest.json").write_text(json.dumps(manifest))
    start = time.perf_counter()
    res = CliRunner().invoke(command, ["info", str(index)])
    elapsed = time.perf_counter() - start
    assert res.exit_code == 0 and "100,000,000 keys in 10 generation(s)" in res.output, res.output
    assert elapsed < 1.0


def test_info_of_no_index_is_one_line(tmp_path):
    res = CliRunner().invoke(command, ["info", str(tmp_path)])
    assert res.exit_code != 0 and "no index at" in str(res.exception)


def test_mdf_lists_index_only_where_the_plugin_is_loaded():
    """The plugin adds ``mdf index`` through ``mdf_register_commands``: listed by ``mdf --help`` and run by ``mdf``
    where mdf-dedup is loaded, absent (click's "No such command", exit 2) where it is disabled, as where it is not
    installed. Seen red on eefbc81: core listed ``index`` with the plugin disabled (and, not installed, answered
    ``mdf index`` with an install hint: core named the plugin's private modules)."""
    mdf = [sys.executable, "-c", "from mdf.cli import main; main()"]
    env = {k: v for k, v in os.environ.items() if k != "MDF_DISABLE_PLUGINS"}
    listed = subprocess.run([*mdf, "--help"], capture_output=True, text=True, env=env)
    assert listed.returncode == 0 and "\n  index " in listed.stdout, listed.stderr
    ran = subprocess.run([*mdf, "index", "--help"], capture_output=True, text=True, env=env)
    assert ran.returncode == 0 and "compact" in ran.stdout and "info" in ran.stdout
    env["MDF_DISABLE_PLUGINS"] = "dedup"
    listed = subprocess.run([*mdf, "--help"], capture_output=True, text=True, env=env)
    assert listed.returncode == 0 and " index " not in listed.stdout and "\n  run " in listed.stdout
    ran = subprocess.run([*mdf, "index", "info", "somewhere"], capture_output=True, text=True, env=env)
    assert ran.returncode == 2 and "No such command 'index'" in ran.stderr, ran.stderr
