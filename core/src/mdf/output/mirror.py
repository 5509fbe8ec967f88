"""The S3 outputs of this process and the thread that mirrors them to their staging prefixes while the run goes on.

Why a thread: the checkpoint after each shard used to upload that shard's parts before the shard loop went on;
on W1 200 K rows s3 -> s3 that held the loop 1.16 s of its 2.39 s (cProfile, SeaweedFS on loopback). Now a
checkpoint only asks for a round (:func:`sync_all`); rounds run one at a time, in checkpoint order, and one round
covers every checkpoint asked for before it began. A round reads every output's checkpoint manifest first, then
uploads each output's changed files (the rejected output first), then the manifests
(:meth:`mdf.output.remote.RemoteOutput.sync`): S3 always holds a consistent checkpoint, as before, and a killed
run resumes from it. A round's error stays with its output and fails the run at its next checkpoint or at the
publish; the publish, a failed run's last record and the release of the lock wait for the rounds asked for.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol


class RemoteOutput(Protocol):
    """What the mirror and the parts uploaded from Ray's nodes need of an S3 output
    (:class:`mdf.output.remote.RemoteOutput`, which registers itself here: this module sits below it)."""

    url: str
    role: str
    run_id: str
    storage: Any
    work: Path
    failed: BaseException | None

    def manifest_now(self) -> bytes | None: ...

    def sync(self, manifest: bytes | None) -> None: ...

    def add_upload(self, rel: str, upload: dict[str, Any]) -> None: ...


_MIRRORS: dict[str, RemoteOutput] = {}  # local working folder -> its S3 output
_GUARD = threading.Lock()


def register(out: RemoteOutput) -> None:
    with _GUARD:
        _MIRRORS[str(out.work)] = out


def forget(out: RemoteOutput) -> None:
    with _GUARD:
        _MIRRORS.pop(str(out.work), None)


def mirror_of(local: str) -> RemoteOutput | None:
    """The S3 output a local working folder stands for (``None`` for a plain local output)."""
    with _GUARD:
        return _MIRRORS.get(str(Path(local).absolute()))


def mirror_at(url: str) -> RemoteOutput:
    """The S3 output of this process at ``url`` (a writer actor names its output by URL)."""
    with _GUARD:
        return next(out for out in _MIRRORS.values() if out.url == url)


def url_of(local: str) -> str | None:
    out = mirror_of(local)
    return out.url if out else None


class _Mirror:
    """One daemon thread per process, started by the first round asked for; idle between rounds."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.asked = self.done = 0
        self.thread: threading.Thread | None = None

    def ask(self) -> None:
        with self.cond:
            self.asked += 1
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._loop, name="mdf-s3-mirror", daemon=True)
                self.thread.start()
            self.cond.notify_all()

    def wait(self) -> None:
        with self.cond:
            target = self.asked
            while self.done < target:
                self.cond.wait()

    def _loop(self) -> None:
        while True:
            with self.cond:
                while self.done == self.asked:
                    self.cond.wait()
                target = self.asked
            with _GUARD:
                outs = sorted(_MIRRORS.values(), key=lambda o: o.role != "rejected")
            marks = [(out, out.manifest_now()) for out in outs]  # before any output's files are looked at
            for out, manifest in marks:
                if out.failed is None:
                    try:
                        out.sync(manifest)
                    except BaseException as exc:  # kept for the run's thread, which raises it
                        out.failed = exc
            with self.cond:
                self.done = target
                self.cond.notify_all()


_MIRROR = _Mirror()


def sync_all() -> None:
    """Ask for a mirror round of every S3 output of this process; raise the error of an earlier round."""
    with _GUARD:
        outs = list(_MIRRORS.values())
    for out in outs:
        if out.failed is not None:
            raise out.failed
    if outs:
        _MIRROR.ask()


def wait_mirrored(out: RemoteOutput | None = None) -> None:
    """Wait for the rounds asked for so far; then raise ``out``'s error if one of them failed."""
    _MIRROR.wait()
    if out is not None and out.failed is not None:
        raise out.failed
