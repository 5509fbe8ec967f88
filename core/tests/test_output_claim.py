"""The one claim decision (mdf.output.claim.decide) that local folders and s3:// prefixes both ask: each refusal's
line for either kind of output is the one 49c4b5c printed from its two copies (ownership._claim_dir, now in
mdf.output.local, and RemoteOutput.claim), and what is not refused resumes or starts afresh."""

from __future__ import annotations

from typing import Any

import pytest

from mdf.errors import MdfError
from mdf.output.claim import LOCAL, REMOTE, Found, Words, decide


class Refused(MdfError):
    exit_code = 2


class Fp:
    """A fingerprint whose ``differs`` says the recipe changed for any record but ``{"fingerprint": "same"}``."""

    def differs(self, record: dict[str, Any]) -> str | None:
        return None if record.get("fingerprint") == "same" else "the recipe changed"


def _found(words: Words, **kw: Any) -> Found:
    base: dict[str, Any] = dict(record=None, resumable=False, busy=False, unrecorded=False, foreign=list)
    return Found("writer", "out", words, **{**base, **kw})


def _refusal(found: Found, resume: bool = False, overwrite: bool = False) -> str:
    with pytest.raises(Refused) as err:
        decide(found, Fp(), resume, overwrite, Refused)
    return str(err.value)


def test_resume_refusals_local_and_remote() -> None:
    assert _refusal(_found(LOCAL, resumable=True, busy=True), resume=True) == (
        "writer.path: 'out' holds no mdf run record to resume; use --overwrite"
    )
    assert _refusal(_found(REMOTE, resumable=True, busy=True), resume=True) == (
        "writer.path: 'out' holds no mdf run record to resume; use --overwrite"
    )
    other = {"fingerprint": "other"}
    assert _refusal(_found(LOCAL, record=other, resumable=True), resume=True) == (
        "writer.path: cannot --resume 'out': the recipe changed; use --overwrite"
    )
    assert _refusal(_found(REMOTE, record=other, resumable=True), resume=True) == (
        "writer.path: 'out': cannot --resume it: the recipe changed; use --overwrite"
    )
    assert decide(_found(LOCAL, record={"fingerprint": "same"}, resumable=True), Fp(), True, False, Refused)
    assert not decide(_found(REMOTE), Fp(), True, False, Refused)  # nothing there: a --resume starts it


def test_not_empty_and_crashed() -> None:
    line = (
        "writer.path: 'out' is not empty; pass --overwrite to replace it (kept until the new run succeeds) or "
        "--resume to continue the run that wrote it"
    )
    assert _refusal(_found(LOCAL, busy=True)) == line
    assert _refusal(_found(REMOTE, busy=True)) == line
    assert _refusal(_found(LOCAL, busy=True, crashed="the run was killed")) == (
        "writer.path: 'out': the run was killed; --resume continues it, --overwrite replaces it"
    )


def test_overwrite_refusals_name_files_or_objects() -> None:
    assert _refusal(_found(LOCAL, busy=True, unrecorded=True), overwrite=True) == (
        "writer.path: 'out' holds files no mdf run wrote (no _mdf/run.json), so --overwrite will not delete them; "
        "empty the folder yourself or write elsewhere"
    )
    assert _refusal(_found(REMOTE, busy=True, unrecorded=True), overwrite=True) == (
        "writer.path: 'out' holds objects no mdf run wrote (no _mdf/run.json), so --overwrite will not delete "
        "them; empty the prefix yourself or write elsewhere"
    )
    names = [f"n{i}" for i in range(7)]
    assert _refusal(_found(LOCAL, busy=True, foreign=lambda: names), overwrite=True) == (
        "writer.path: 'out' holds 7 file(s) the run that wrote it did not write ('n0', 'n1', 'n2', 'n3', 'n4' and 2 "
        "more); --overwrite deletes only that run's part files and _mdf/, so it will not replace the folder; move "
        "them out or write elsewhere"
    )
    assert _refusal(_found(REMOTE, busy=True, foreign=lambda: names[:1]), overwrite=True) == (
        "writer.path: 'out' holds 1 object(s) the run that wrote it did not publish ('n0'); --overwrite deletes "
        "only the objects its _SUCCESS lists and _mdf/, so it will not replace the prefix; move them out or write "
        "elsewhere"
    )
    assert not decide(_found(LOCAL, busy=True, record={"fingerprint": "x"}), Fp(), False, True, Refused)
