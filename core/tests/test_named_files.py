""":mod:`mdf.named_files`: which parameters name files (by their types, however nested), and what is recorded
and compared for each (issue 46, item 4; the end-to-end refusals are in ``tests/test_no_data_loss_resume_files.py``).
"""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import Field, FilePath

import mdf.named_files as nf
from mdf import InputFile, Params, ReadsFile


class Listed(Params):
    model: InputFile
    maybe: InputFile | None = None
    many: list[InputFile] = Field(default_factory=list)
    words: dict[str, FilePath] = Field(default_factory=dict)
    scores: list[Annotated[str, ReadsFile(extensions=(".parquet",))]] = Field(default_factory=list)
    name: str = "not a file"


def test_every_file_parameter_is_found_through_its_type(tmp_path):
    """Alone, ``| None``, in a list, a dict's values, pydantic's ``FilePath``; a plain ``str`` is not one."""
    (tmp_path / "w.txt").write_text("x")
    params = Listed(model="m.bin", many=["a", "b"], words={"en": tmp_path / "w.txt"}, scores=["s/"])
    found = [(key, value) for key, value, _ in nf.named(Listed, params, "op")]
    assert found == [
        ("op.model", "m.bin"),
        ("op.many[0]", "a"),
        ("op.many[1]", "b"),
        ("op.words.en", str(tmp_path / "w.txt")),
        ("op.scores[0]", "s/"),
    ]


def test_a_large_file_is_read_once_per_version_and_a_touched_copy_is_the_same_file(tmp_path, monkeypatch):
    """The digest of a file over 1 MiB is kept by (device, inode, size, mtime, ctime): a second claim does not read
    it; a rewrite (new ctime) is read again. Same bytes with a new time compare equal; other bytes do not."""
    monkeypatch.setenv("MDF_CACHE_DIR", str(tmp_path / "cache"))
    big = tmp_path / "model.bin"
    big.write_bytes(os.urandom(3 << 20))
    reads = []
    real = nf._hash
    monkeypatch.setattr(nf, "_hash", lambda path: reads.append(path) or real(path))
    first = nf.file_identity(str(big))
    assert nf.file_identity(str(big)) == first and len(reads) == 1
    data = big.read_bytes()
    big.write_bytes(data)  # the same bytes written again: new mtime and ctime
    again = nf.file_identity(str(big))
    assert len(reads) == 2 and again["sha256"] == first["sha256"]
    assert nf.changed({"k": {"p": first}}, {"k": {"p": again}}) is None
    big.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert nf.changed({"k": {"p": first}}, {"k": {"p": nf.file_identity(str(big))}}) == (
        "k: 'p' changed since the run began (same size, other content)"
    )
    big.unlink()
    assert nf.changed({"k": {"p": first}}, {"k": {"p": nf.file_identity(str(big))}}) == "k: 'p' is missing now"
