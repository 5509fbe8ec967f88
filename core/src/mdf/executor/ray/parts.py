"""Part files of an ``s3://`` output written by Ray's writer actors, on whichever node they run.

The inline executor writes every part into the driver's working folder, and the driver's mirror
(:func:`mdf.output.mirror.sync_all`) uploads them at each checkpoint. A Ray writer actor may run on another
machine, which cannot see that folder and whose files the driver cannot see either. So on Ray each writer
actor writes its parts in a working folder of its own (on its own node, under its own
:func:`~mdf.output.remote.cache_root`) and, in :meth:`PartUploads.commit`, uploads a shard's committed part
files itself before the commit returns, as the driver's mirror would: open multipart uploads to their final
keys (:mod:`mdf.storage.multipart`), whose ids the commit returns. The driver learns of the commit only then and
notes the uploads (:func:`record`) before its checkpoint, so the manifest it mirrors next never names a shard
whose parts are not on S3 yet, and the publish completes them. The driver keeps mirroring what it alone
writes: ``_mdf/`` (run record, shard map, key-state snapshots, the open uploads, the manifest last).

Why the writer uploads rather than ships the bytes to the driver: the parts would cross the cluster twice and
pass through one process; an upload from the node that wrote the file is what the inline run does, per node.
Each part of an upload is retried whole; after the last retry the commit fails, the run fails in one line
naming the object, and ``--resume`` redoes the shard.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mdf import layout
from mdf.io import rejected
from mdf.output.mirror import mirror_at, mirror_of
from mdf.output.remote import cache_root
from mdf.storage import multipart, urls
from mdf.storage.errors import StorageError
from mdf.storage.fs import Storage


@dataclass(frozen=True)
class PartTarget:
    """One ``s3://`` output as a writer actor needs it: where its parts go and what its folder must hold."""

    url: str
    run_id: str
    storage: Storage  # pickled as its settings: the actor's node uses its own AWS chain and environment
    schema: bytes | None = None  # <folder>/_mdf/rejected_schema.arrow, fixed by the driver before any data


def targets(specs: dict[str, Any]) -> dict[str, PartTarget]:
    """``{role: target}`` for the writer specs (by role: ``writer``, ``rejected``; ``None`` for none) whose
    ``path`` is an ``s3://`` output's local working folder in this driver; the others write where they say."""
    out = {}
    for role, spec in specs.items():
        local = spec.params.get("path") if spec is not None else None
        remote = mirror_of(str(local)) if local else None
        if remote is None:
            continue
        schema_file = layout.meta_dir(local) / rejected.FILE
        schema = schema_file.read_bytes() if schema_file.exists() else None
        out[role] = PartTarget(remote.url, remote.run_id, remote.storage, schema)
    return out


class PartUploads:
    """A writer actor's side: a working folder per ``s3://`` output on this node, uploads on commit."""

    def __init__(self, targets: dict[str, PartTarget]) -> None:
        self.targets = targets
        self.folders: dict[str, Path] = {}
        for role, t in targets.items():
            # "<key>-..." like the driver's folder: the next claim of this output on this node sweeps it
            key = hashlib.sha256(t.url.encode()).hexdigest()[:12]
            folder = cache_root() / f"{key}-{t.run_id}-{role}-{uuid.uuid4().hex[:8]}"
            folder.mkdir(parents=True, exist_ok=True)
            if t.schema is not None:
                layout.meta_dir(folder).mkdir(exist_ok=True)
                (layout.meta_dir(folder) / rejected.FILE).write_bytes(t.schema)
            self.folders[role] = folder

    def localize(self, spec: Any, role: str) -> Any:
        """``spec`` writing into this node's working folder for ``role`` (unchanged for a local output)."""
        folder = self.folders.get(role)
        if spec is None or folder is None:
            return spec
        return type(spec).model_validate({"type": spec.type, **spec.params, "path": str(folder)})

    def commit(self, paths: list[str]) -> list[Any]:
        """Upload the committed part files among ``paths`` as open multipart uploads to their final keys, then
        delete them here (the node's disk holds one shard at a time); return, for each, ``{output, name,
        upload}`` (for :func:`record`), and a local output's paths as they are."""
        done = []
        for path in paths:
            role = next((r for r, f in self.folders.items() if Path(path).parent == f), None)
            if role is None:  # a local output's part: it stays where the writer put it
                done.append(path)
                continue
            out, name = self.targets[role], os.path.basename(path)
            target = urls.join(out.url, name)
            try:
                upload = multipart.begin(out.storage, path, target)
            except StorageError as exc:  # the one line names the node: one host without a route or keys
                raise StorageError(
                    target,
                    f"{exc.message} (uploading from the node at {node_address()}: every node that runs a writer "
                    "must reach the S3 endpoint and hold credentials)",
                ) from exc
            os.unlink(path)
            done.append({"output": out.url, "name": name, "upload": upload})
        return done

    def close(self) -> None:
        """Remove the working folders (open shards' temp files; committed parts are on S3 already)."""
        for folder in self.folders.values():
            shutil.rmtree(folder, ignore_errors=True)


def record(done: list[Any]) -> None:
    """Driver side: note the open uploads a writer's commit returned with their outputs' mirrors."""
    for item in done:
        if isinstance(item, dict):
            mirror_at(item["output"]).add_upload(item["name"], item["upload"])


def node_address() -> str:
    """This process's node as Ray names it (its IP), else the host name."""
    try:
        import ray

        if ray.is_initialized():
            return str(ray.util.get_node_ip_address())
    except Exception:  # no Ray, or not in a Ray worker: the host name says where it ran
        pass
    return socket.gethostname()
