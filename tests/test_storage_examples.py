"""The example recipes where a crawl lives: ``examples/commoncrawl.yaml`` and ``examples/fineweb.yaml`` run s3 -> s3
against a real SeaweedFS, input, blocklist, output and rejected rows all ``s3://``, and publish exactly the part
files the same recipe writes local -> local on the same data (issue 25's "done when").

Every ``mdf run`` is a subprocess, the way users run it; the S3 output is downloaded with boto3 and compared part
file for part file (same names, same rows in the same order).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import ROOT, run_mdf
from .ray_helpers import assert_same_outputs
from .test_storage_write import env, objects

if TYPE_CHECKING:
    from tests.storage_servers import SeaweedS3

pytest_plugins = ["tests.storage_fixtures"]
pytest.importorskip("mdf_text")
pytest.importorskip("mdf_dedup")


def _upload(seaweed: SeaweedS3, bucket: str, folder: Path, prefix: str) -> None:
    client = seaweed.client()
    for path in sorted(folder.iterdir()):
        client.upload_file(str(path), bucket, f"{prefix}/{path.name}")


def _download(seaweed: SeaweedS3, bucket: str, prefix: str, into: Path) -> Path:
    into.mkdir(parents=True)
    for name, blob in objects(seaweed, bucket, prefix).items():
        if "/" not in name and not name.startswith(("_", ".")):
            (into / name).write_bytes(blob)
    return into


def _run_both(tmp: Path, seaweed: SeaweedS3, bucket: str, base: dict[str, Any], local_in: list[str]) -> Path:
    """The recipe local -> local and s3 -> s3 (its input already uploaded under ``s3://bucket/in/``); return the
    local run's folder after checking the S3 one published the same parts."""
    local = {**base, "reader": {**base["reader"], "paths": local_in},
             "writer": {**base["writer"], "path": str(tmp / "local" / "out")},
             "rejected": {**base["rejected"], "path": str(tmp / "local" / "rejected")}}  # fmt: skip
    remote = {**base, "reader": {**base["reader"], "paths": [f"s3://{bucket}/in/*"]},
              "writer": {**base["writer"], "path": f"s3://{bucket}/out"},
              "rejected": {**base["rejected"], "path": f"s3://{bucket}/rejected"}}  # fmt: skip
    for name, recipe in (("local", local), ("remote", remote)):
        (tmp / f"{name}.yaml").write_text(yaml.safe_dump(recipe))
        result = run_mdf("run", "-q", str(tmp / f"{name}.yaml"), env=env(seaweed, tmp))
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
    for role in ("out", "rejected"):
        got = _download(seaweed, bucket, role, tmp / "remote" / role)
        assert any(got.iterdir()), f"nothing published under s3://{bucket}/{role}"
        if "warc_file" in pq.read_schema(next(got.glob("*.parquet"))).names:
            _same_but_warc_file(got, tmp / "local" / role, f"s3://{bucket}/in/", local_in)
        else:
            assert_same_outputs(got, tmp / "local" / role)
    return tmp / "local"


def _same_but_warc_file(got: Path, want: Path, url_prefix: str, local_in: list[str]) -> None:
    """Rows equal, ``warc_file`` naming the same file by its URL instead of its local path."""
    folder = str(Path(local_in[0]).parent) + "/"
    names = sorted(p.name for p in got.glob("*.parquet"))
    assert names == sorted(p.name for p in want.glob("*.parquet"))
    for name in names:
        a, b = pq.read_table(got / name), pq.read_table(want / name)
        urls = [u.removeprefix(url_prefix) for u in a.column("warc_file").to_pylist()]
        assert urls == [p.removeprefix(folder) for p in b.column("warc_file").to_pylist()], name
        assert a.drop_columns(["warc_file"]).equals(b.drop_columns(["warc_file"])), name


def test_the_commoncrawl_recipe_s3_to_s3_equals_the_local_run(tmp_path: Path, seaweed: SeaweedS3, bucket: str):
    """WARC -> html_extract -> language -> length -> URL blocklist (itself on S3) -> exact + MinHash dedup. Fails
    on the code before: ``url_filter``'s ``blocklist`` took local files only ('Path does not point to a file',
    exit 2: seen)."""
    pytest.importorskip("fastwarc", reason='the warc reader needs FastWARC: pip install "mdf-text[web]"')
    from mdf_text.demo_warc import write_warc

    folder = tmp_path / "warc"
    write_warc(str(folder), pages=300, seed=5)
    _upload(seaweed, bucket, folder, "in")
    seaweed.client().upload_file(str(ROOT / "examples" / "blocklist.txt"), bucket, "lists/blocklist.txt")
    base = yaml.safe_load((ROOT / "examples" / "commoncrawl.yaml").read_text())
    url_filter = base["stages"][0]["operators"][4]["url_filter"]
    url_filter["blocklist"] = f"s3://{bucket}/lists/blocklist.txt"
    local = _run_both(tmp_path, seaweed, bucket, base, [str(folder / "*.warc.gz")])
    parts = (local / "rejected").glob("*.parquet")
    reasons = {r for p in parts for r in pq.read_table(p).column("_reason").to_pylist()}
    assert any(r.startswith("exact_dedup") for r in reasons), reasons  # the demo crawl's planted copies
    assert any(r.startswith("url_filter") for r in reasons), reasons  # the blocklist from S3 was applied


def test_the_fineweb_recipe_s3_to_s3_equals_the_local_run(tmp_path: Path, seaweed: SeaweedS3, bucket: str):
    """Gopher, C4 and FineWeb rules then MinHash, Parquet on S3 read by range."""
    from mdf.demo_data import DemoSpec, write_dataset

    folder = tmp_path / "data"
    write_dataset(str(folder), DemoSpec(rows=3000, files=3, mean_chars=1200, seed=3), row_group_rows=500)
    _upload(seaweed, bucket, folder, "in")
    base = yaml.safe_load((ROOT / "examples" / "fineweb.yaml").read_text())
    local = _run_both(tmp_path, seaweed, bucket, base, [str(folder / "*.parquet")])
    kept = sum(pq.read_metadata(p).num_rows for p in (local / "out").glob("*.parquet"))
    assert 0 < kept < 3000
    shutil.rmtree(folder)


def test_a_score_cut_estimated_from_a_scored_output_on_s3(tmp_path: Path, seaweed: SeaweedS3, bucket: str):
    """``score_filter``'s ``top_fraction`` with ``estimate_from`` naming Parquet on S3 sets the cut a local copy
    sets: the same rows kept. Fails on the code before: the URL went to ``pyarrow.dataset`` as a local path
    (exit 2 naming ``estimate_from``: seen)."""
    import numpy as np
    import pyarrow as pa

    folder = tmp_path / "scored"
    folder.mkdir()
    rng = np.random.default_rng(4)
    for i in range(3):
        scores = rng.random(2000).astype(np.float32)
        pq.write_table(pa.table({"id": np.arange(i * 2000, (i + 1) * 2000), "fasttext_hq": scores}),
                       folder / f"part-{i}.parquet", row_group_size=500)  # fmt: skip
    _upload(seaweed, bucket, folder, "scored")
    kept = {}
    for name, place in (("local", str(folder / "*.parquet")), ("remote", f"s3://{bucket}/scored/*.parquet")):
        recipe = {
            "reader": {"type": "parquet", "paths": [place]},
            "stages": [{"name": "cut", "operators": [
                {"score_filter": {"column": "fasttext_hq", "top_fraction": 0.1, "estimate_from": [place]}}]}],
            "writer": {"type": "parquet", "path": str(tmp_path / name / "out")},
            "executor": {"type": "inline"},
        }  # fmt: skip
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(recipe))
        result = run_mdf("run", "-q", str(tmp_path / f"{name}.yaml"), env=env(seaweed, tmp_path))
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        kept[name] = sorted(i for p in (tmp_path / name / "out").glob("*.parquet")
                            for i in pq.read_table(p).column("id").to_pylist())  # fmt: skip
    assert kept["remote"] == kept["local"] and 550 <= len(kept["local"]) <= 650


def test_a_fasttext_model_named_by_its_s3_url(tmp_path: Path, seaweed: SeaweedS3, bucket: str):
    """``fasttext_classifier``'s ``model: s3://...`` is fetched once into the machine's cache and scores as the
    local file does; a URL naming no object is one line at validate time (exit 2). Fails on the code before:
    the URL was taken for a local path ('... is no file', exit 2: seen)."""
    import importlib.util

    import pyarrow as pa

    spec = importlib.util.spec_from_file_location(
        "fasttext_helpers", ROOT / "plugins" / "mdf-text" / "tests" / "fasttext_helpers.py"
    )
    assert spec is not None and spec.loader is not None
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    (tmp_path / "models").mkdir()
    models = helpers.train(tmp_path / "models")
    seaweed.client().upload_file(str(models["bin"]), bucket, "models/quality.bin")
    texts = ["theorem proof lemma study", "buy click free casino deal", "minister said council vote", ""]
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"text": texts * 50}), tmp_path / "in" / "t.parquet")
    scores = {}
    for name, model in (("local", str(models["bin"])), ("remote", f"s3://{bucket}/models/quality.bin"),
                        ("missing", f"s3://{bucket}/models/nothing.bin")):  # fmt: skip
        recipe = {
            "reader": {"type": "parquet", "paths": [str(tmp_path / "in" / "t.parquet")]},
            "stages": [{"name": "score", "operators": [{"fasttext_classifier": {"model": model}}]}],
            "writer": {"type": "parquet", "path": str(tmp_path / name / "out")},
            "rejected": {"type": "parquet", "path": str(tmp_path / name / "rejected")},
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(recipe))
        result = run_mdf("run", "-q", str(tmp_path / f"{name}.yaml"), env=env(seaweed, tmp_path))
        if name == "missing":
            assert result.returncode == 2 and "nothing.bin" in result.stderr, result.stderr[-2000:]
            assert "Traceback" not in result.stderr
            continue
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        scores[name] = pq.read_table(tmp_path / name / "out")
    assert scores["remote"].equals(scores["local"]) and scores["local"].num_rows == 200
    assert len(list((tmp_path / "cache" / "models").glob("*-quality.bin"))) == 1  # fetched once, kept


def test_webdataset_tars_read_from_s3(tmp_path: Path, seaweed: SeaweedS3, bucket: str):
    """``webdataset`` reads tar shards by URL, streamed by ranged requests: the rows of the local run, a cut tar
    reported the same way. Fails on the code before: ``os.path.getsize`` of the URL (FileNotFoundError: seen)."""
    pytest.importorskip("mdf_image")
    import io
    import tarfile

    folder = tmp_path / "wds"
    folder.mkdir()
    for t in range(3):
        with tarfile.open(folder / f"shard-{t}.tar", "w") as tar:
            for k in range(40):
                for ext, data in (("jpg", bytes([t, k]) * 300), ("txt", f"caption {t} {k}".encode())):
                    info = tarfile.TarInfo(f"{t:02d}{k:04d}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    cut = (folder / "shard-2.tar").read_bytes()
    (folder / "shard-2.tar").write_bytes(cut[: len(cut) // 2 + 100])  # damaged: rows up to the cut, then a reason
    _upload(seaweed, bucket, folder, "wds")
    out = {}
    for name, place in (("local", str(folder / "*.tar")), ("remote", f"s3://{bucket}/wds/*.tar")):
        recipe = {
            "reader": {"type": "webdataset", "paths": [place]},
            "stages": [{"name": "s", "operators": [{"noop_refiner": {}}]}],
            "writer": {"type": "parquet", "path": str(tmp_path / name / "out")},
            "rejected": {"type": "parquet", "path": str(tmp_path / name / "rejected")},
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(recipe))
        result = run_mdf("run", "-q", str(tmp_path / f"{name}.yaml"), env=env(seaweed, tmp_path))
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        out[name] = tmp_path / name
    assert_same_outputs(out["remote"] / "out", out["local"] / "out")
    assert_same_outputs(out["remote"] / "rejected", out["local"] / "rejected")
    kept = sum(pq.read_metadata(p).num_rows for p in (out["local"] / "out").glob("*.parquet"))
    assert 80 < kept < 120


def test_an_image_folder_read_from_s3(tmp_path: Path, seaweed: SeaweedS3, bucket: str):
    """``image_folder`` lists a folder URL (one listing, sizes included) and reads its images 16 requests at a
    time: the rows and ids of the local folder. Fails on the code before: the URL was taken for a local glob
    ('no image file ... under', exit 2: seen)."""
    pytest.importorskip("mdf_image")
    folder = tmp_path / "imgs"
    for sub in ("a", "b/c"):
        (folder / sub).mkdir(parents=True)
    for k in range(30):
        (folder / ("a" if k % 2 else "b/c") / f"img-{k:03d}.jpg").write_bytes(bytes([k]) * (100 + k))
    client = seaweed.client()
    for path in sorted(folder.rglob("*.jpg")):
        client.upload_file(str(path), bucket, f"imgs/{path.relative_to(folder).as_posix()}")
    out = {}
    for name, place in (("local", str(folder)), ("remote", f"s3://{bucket}/imgs")):
        recipe = {
            "reader": {"type": "image_folder", "paths": [place], "files_per_shard": 8},
            "stages": [{"name": "s", "operators": [{"noop_refiner": {}}]}],
            "writer": {"type": "parquet", "path": str(tmp_path / name / "out")},
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(recipe))
        result = run_mdf("run", "-q", str(tmp_path / f"{name}.yaml"), env=env(seaweed, tmp_path))
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        tables = [pq.read_table(p) for p in sorted((tmp_path / name / "out").glob("*.parquet"))]
        out[name] = [t.drop_columns(["path"]) for t in tables]
    assert len(out["local"]) == 4 and all(a.equals(b) for a, b in zip(out["remote"], out["local"], strict=True))
    assert sum(t.num_rows for t in out["local"]) == 30
