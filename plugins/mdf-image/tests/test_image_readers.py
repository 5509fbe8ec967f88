"""The three readers on real files: columns, order, rejected rows, and shards that cover every row once."""

from __future__ import annotations

import gzip
import os
import tarfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mdf.errors import InputError, RecipeError
from mdf.metrics import REASON
from mdf_image import testdata
from mdf_image.io.folder import ImageFolderReader
from mdf_image.io.laion import LaionParquetReader
from mdf_image.io.webdataset import WebDatasetReader, split_key


def read_all(reader, batch_rows: int = 7) -> tuple[list[pa.RecordBatch], list]:
    shards = reader.shards()
    batches = [b for s in shards for b in reader.read(s, batch_rows)]
    assert all(b.num_rows <= batch_rows for b in batches)
    return batches, shards


def rows_of(batches: list[pa.RecordBatch]) -> list[dict]:
    return [row for b in batches for row in b.to_pylist()]


# --- image_folder -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder(tmp_path_factory, photos) -> str:
    root = tmp_path_factory.mktemp("folder") / "photos"
    testdata.write_image_folder(photos, str(root))
    testdata.write_image_folder(testdata.format_variants(), str(root / "variants"))
    (root / "notes.txt").write_text("not an image")
    (root / ".hidden.jpg").write_bytes(b"hidden")
    return str(root)


def test_folder_reads_every_image_once_sorted_with_relative_ids(folder, photos):
    batches, _ = read_all(ImageFolderReader(paths=[folder]))
    rows = rows_of(batches)
    ids = [r["id"] for r in rows]
    expected = sorted(
        [f"{i}.jpg" for i in photos.column("id").to_pylist()]
        + [f"variants/chelsea/{v}" for v in ("jpeg_exif_rotated.jpg", "jpeg_grey.jpg", "jpeg_rgb.jpg")]
        + ["variants/chelsea/png_rgb.png", "variants/chelsea/png_rgba.png", "variants/chelsea/webp_rgb.webp"]
        + ["variants/chelsea/gif_palette.gif"]
    )
    assert ids == expected  # notes.txt and the hidden file are not images
    by_id = dict(zip(photos.column("id").to_pylist(), photos.column("image").to_pylist(), strict=True))
    for r in rows:
        assert r["path"] == os.path.join(folder, r["id"])
        if r["id"].endswith(".jpg") and not r["id"].startswith("variants/"):
            assert r["image"] == by_id[r["id"][:-4]]
    assert batches[0].schema.field("image").type == pa.large_binary()


@pytest.mark.parametrize(("files", "nbytes"), [(10, 1 << 40), (1000, 200_000), (3, 100_000), (1, 1)])
def test_folder_shards_cover_every_file_exactly_once(folder, files, nbytes):
    whole = [r["id"] for r in rows_of(read_all(ImageFolderReader(paths=[folder]))[0])]
    reader = ImageFolderReader(paths=[folder], files_per_shard=files, bytes_per_shard=nbytes)
    batches, shards = read_all(reader, batch_rows=4)
    assert [r["id"] for r in rows_of(batches)] == whole
    assert len({s.id for s in shards}) == len(shards)
    for s in shards:
        assert s.rows <= files and (s.size <= nbytes or s.rows == 1)
        assert sum(b.num_rows for b in reader.read(s, 1000)) == s.rows
    if files == 1:
        assert len(shards) == len(whole)


@pytest.mark.parametrize("nbytes", [1, 150_000, 1 << 40])
def test_folder_batches_are_cut_by_bytes_too(folder, nbytes):
    """A batch holds at most ``bytes_per_batch`` bytes of files (a bigger file alone) as well as at most the run's
    batch_rows, and the batches of a shard read each of its files once, in order. Red with the reader cutting by
    rows only (one batch for the shard at 1 and 150,000 bytes): seen."""
    whole = [r["id"] for r in rows_of(read_all(ImageFolderReader(paths=[folder]))[0])]
    reader = ImageFolderReader(paths=[folder], bytes_per_batch=nbytes)
    (shard,) = reader.shards()
    batches = list(reader.read(shard, 1000))
    assert [r["id"] for r in rows_of(batches)] == whole
    for b in batches:
        sizes = [len(x) for x in b.column("image").to_pylist()]
        assert sum(sizes) <= nbytes or len(sizes) == 1
    if nbytes == 1:
        assert len(batches) == len(whole)
    if nbytes == 1 << 40:  # then batch_rows alone cuts
        assert len(batches) == 1
        assert max(b.num_rows for b in reader.read(shard, 3)) == 3


def test_folder_shards_are_disjoint_across_loaders(folder):
    """Two readers built apart (two loaders) split the shard list and together read each file once."""
    shards = ImageFolderReader(paths=[folder], files_per_shard=9).shards()
    a, b = ImageFolderReader(paths=[folder], files_per_shard=9), ImageFolderReader(paths=[folder], files_per_shard=9)
    ids = [r["id"] for s in shards[::2] for r in rows_of(list(a.read(s, 5)))]
    ids += [r["id"] for s in shards[1::2] for r in rows_of(list(b.read(s, 5)))]
    assert len(ids) == len(set(ids)) == sum(s.rows for s in shards)


def test_folder_that_changed_after_planning_is_reported(tmp_path, photos):
    testdata.write_image_folder(photos.slice(0, 6), str(tmp_path))
    shards = ImageFolderReader(paths=[str(tmp_path)], files_per_shard=2).shards()
    (tmp_path / "astronaut" / "aaa_new.jpg").write_bytes(photos.column("image")[0].as_py())
    with pytest.raises(InputError, match="changed after the run was planned"):
        list(ImageFolderReader(paths=[str(tmp_path)], files_per_shard=2).read(shards[1], 10))
    (tmp_path / "astronaut" / "aaa_new.jpg").unlink()
    assert len(list(ImageFolderReader(paths=[str(tmp_path)], files_per_shard=2).read(shards[1], 10))) == 1
    victim = sorted((tmp_path / "astronaut").iterdir())[3]  # inside shard 1, after its first file
    victim.write_bytes(victim.read_bytes()[:-10])
    with pytest.raises(InputError, match="no longer holds the same files"):
        list(ImageFolderReader(paths=[str(tmp_path)], files_per_shard=2).read(shards[1], 10))
    for _ in range(4):
        sorted((tmp_path / "astronaut").iterdir())[-1].unlink()  # the folder shrank below the shard
    with pytest.raises(InputError, match="changed after the run was planned"):
        list(ImageFolderReader(paths=[str(tmp_path)], files_per_shard=2).read(shards[2], 10))


def test_file_gone_after_listing_is_a_rejected_row_and_dangling_links_are_skipped(tmp_path, photos):
    testdata.write_image_folder(photos.slice(0, 3), str(tmp_path))
    (tmp_path / "astronaut" / "zz_link.jpg").symlink_to(tmp_path / "nowhere.jpg")
    reader = ImageFolderReader(paths=[str(tmp_path)])
    (shard,) = reader.shards()
    assert shard.rows == 3
    (tmp_path / "astronaut" / "jpeg_q30.jpg").unlink()  # after the listing, before the read
    (batch,) = reader.read(shard, 10)
    reasons = dict(zip(batch["id"].to_pylist(), batch[REASON].to_pylist(), strict=True))
    assert reasons["astronaut/jpeg_q30.jpg"].startswith("reader:unreadable_file")
    assert [k for k, r in reasons.items() if r is None] == ["astronaut/original.jpg", "astronaut/resize_half.jpg"]


def test_folder_glob_and_extensions(folder):
    reader = ImageFolderReader(paths=[os.path.join(folder, "**", "*.png")], extensions=["PNG"])
    ids = [r["id"] for r in rows_of(read_all(reader)[0])]
    assert ids == ["variants/chelsea/png_rgb.png", "variants/chelsea/png_rgba.png"]
    with pytest.raises(RecipeError, match=r"reader.paths\[0\].*no image file"):
        ImageFolderReader(paths=[os.path.join(folder, "*.tiff")]).shards()


# --- laion_parquet ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def laion(tmp_path_factory, photos) -> str:
    """Two files in img2dataset's layout: ``key``, ``jpg``, url, caption, a failed download with a null image."""
    folder = tmp_path_factory.mktemp("laion")
    t = photos.rename_columns(["key", "jpg", "group", "source", "transform"])
    failed = pa.table({"key": ["failed/0"], "jpg": pa.array([None], pa.large_binary())})
    t = pa.concat_tables([t.select(["key", "jpg"]), failed])
    t = t.append_column("url", pa.array([f"https://x.example/{k}" for k in t.column("key").to_pylist()]))
    t = t.append_column("caption", pa.array([f"caption of {k}" for k in t.column("key").to_pylist()]))
    half = t.num_rows // 2
    testdata.write_laion_parquet(t.slice(0, half), str(folder / "part-00000.parquet"), row_group_rows=8)
    testdata.write_laion_parquet(t.slice(half), str(folder / "part-00001.parquet"), row_group_rows=8)
    return str(folder)


def test_laion_renames_columns_and_rejects_rows_without_image(laion, photos):
    reader = LaionParquetReader(paths=[laion], image_column="jpg", id_column="key")
    batches, _ = read_all(reader)
    rows = rows_of(batches)
    assert set(batches[0].schema.names) >= {"id", "image", "url", "caption"}
    assert [r["id"] for r in rows] == [*photos.column("id").to_pylist(), "failed/0"]
    bad = [r for r in rows if r.get(REASON)]
    assert [(r["id"], r[REASON]) for r in bad] == [("failed/0", "reader:missing_image")]
    assert rows[0]["image"] == photos.column("image")[0].as_py()
    assert rows[0]["caption"] == f"caption of {rows[0]['id']}"


def test_laion_row_group_shards_cover_every_row_once(laion):
    whole = [
        r["id"] for r in rows_of(read_all(LaionParquetReader(paths=[laion], image_column="jpg", id_column="key"))[0])
    ]
    reader = LaionParquetReader(paths=[laion], image_column="jpg", id_column="key", row_groups_per_shard=2)
    batches, shards = read_all(reader, batch_rows=5)
    assert [r["id"] for r in rows_of(batches)] == whole
    groups = [pq.read_metadata(os.path.join(laion, f)).num_row_groups for f in sorted(os.listdir(laion))]
    assert len(shards) == sum(-(-g // 2) for g in groups) > 2
    assert sum(s.rows for s in shards) == len(whole)


def test_laion_missing_or_wrong_columns_fail_before_work(laion, tmp_path):
    with pytest.raises(RecipeError, match="image_column"):
        LaionParquetReader(paths=[laion]).shards()  # default 'image' is not in the file
    pq.write_table(pa.table({"image": ["base64..."], "url": ["u"], "caption": ["c"]}), tmp_path / "s.parquet")
    with pytest.raises(RecipeError, match="not binary"):
        LaionParquetReader(paths=[str(tmp_path / "s.parquet")]).shards()
    reader = LaionParquetReader(paths=[laion], image_column="jpg", url_column=None, caption_column=None)
    assert next(reader.read(reader.shards()[0], 3)).schema.names == ["image"]


# --- webdataset -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tars(tmp_path_factory, photos) -> str:
    folder = tmp_path_factory.mktemp("wds")
    testdata.write_webdataset(photos, str(folder), samples_per_tar=20)
    return str(folder)


def test_webdataset_one_row_per_key_with_caption_and_json(tars, photos):
    batches, shards = read_all(WebDatasetReader(paths=[tars]), batch_rows=6)
    rows = rows_of(batches)
    assert len(shards) == -(-photos.num_rows // 20)
    assert [r["id"] for r in rows] == photos.column("id").to_pylist()
    assert [r["image"] for r in rows] == photos.column("image").to_pylist()
    assert rows[3]["caption"] == rows[3]["id"].replace("/", " ")
    assert '"group"' in rows[3]["json"] and REASON not in batches[0].schema.names
    assert sum(b.num_rows for s in shards for b in WebDatasetReader(paths=[tars]).read(s, 100)) == len(rows)


def test_webdataset_key_without_image_and_truncated_tar_become_rejected_rows(tmp_path, photos):
    jpeg = photos.column("image")[0].as_py()
    path = tmp_path / "a.tar"
    with tarfile.open(path, "w") as tar:
        testdata.add_member(tar, "s/0001.jpg", jpeg)
        testdata.add_member(tar, "s/0001.txt", b"first")
        testdata.add_member(tar, "s/0002.txt", b"caption only")
        testdata.add_member(tar, "s/0002.json", b"{}")
        testdata.add_member(tar, "s/0003.seg.png", b"not the image")
        testdata.add_member(tar, "s/0003.webp", jpeg)
    data = path.read_bytes()
    (tmp_path / "b.tar").write_bytes(data[: len(data) - 2048 - 700])  # cut inside the last member
    rows = rows_of(read_all(WebDatasetReader(paths=[str(path)]))[0])
    assert [(r["id"], r["image"] is not None, r.get(REASON)) for r in rows] == [
        ("s/0001", True, None),
        ("s/0002", False, "reader:missing_image"),
        ("s/0003", True, None),
    ]
    cut = rows_of(read_all(WebDatasetReader(paths=[str(tmp_path / "b.tar")]))[0])
    assert [r["id"] for r in cut][:2] == ["s/0001", "s/0002"]
    assert cut[-1][REASON].startswith("reader:bad_tar")


def test_webdataset_reads_gzipped_tars(tmp_path, photos):
    src = tmp_path / "plain"
    (path,) = testdata.write_webdataset(photos.slice(0, 5), str(src), samples_per_tar=10)
    gz = tmp_path / "gz" / "shard.tar.gz"
    gz.parent.mkdir()
    with open(path, "rb") as f:
        gz.write_bytes(gzip.compress(f.read()))
    rows = rows_of(read_all(WebDatasetReader(paths=[str(gz.parent)]))[0])
    assert [r["id"] for r in rows] == photos.column("id").to_pylist()[:5]


def test_split_key_follows_webdataset():
    assert split_key("a/b/000123.seg.PNG") == ("a/b/000123", "seg.png")
    assert split_key("x.y/k.jpg") == ("x.y/k", "jpg")
    assert split_key("noext") == ("noext", "")
