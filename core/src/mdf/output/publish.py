"""How a run's output appears on S3: parts uploaded invisibly while the run goes on, made to appear at the end,
then committed by a ``_SUCCESS`` object that lists the published files.

The choice. S3 has no rename, so the local protocol (build in a hidden sibling folder, swap with one
``renameat2``) has no exact equivalent. We take:

* **Nothing visible while the run works**: each committed part file goes up as a multipart upload to its final
  key, left open (:mod:`mdf.storage.multipart`: S3A's "magic" committer); an open upload shows in no listing
  and no GET. The run's ``_mdf/`` files (checkpoint, snapshots, the open uploads' ids) go to a hidden staging
  prefix (``<output>/_mdf/staging/<run_id>/``), where ``--resume`` finds them; dataset readers skip
  ``_``-prefixed prefixes, and the lock covers both. Parts written by Ray writers on other nodes, and the parts
  of a completed output a ``--resume`` takes over, are staged objects there.
* **Publish, then commit with ``_SUCCESS``**: when the run succeeds, ``_SUCCESS`` is deleted first, an intent
  (``_mdf/publishing.json``: the names, the open uploads, and the earlier run's parts from its ``_SUCCESS``) is
  written, each upload is completed (a staged part is copied server-side), every other open upload under the
  output is aborted, the earlier run's parts that are not in the list are deleted (only those: an object a user
  put beside them stays, and ``--overwrite`` refuses a prefix holding one before any work), and ``_SUCCESS`` (a
  JSON manifest: run id, names, sizes) is written last. Spark, Hadoop and most table tools read ``_SUCCESS`` as
  "this folder is complete"; anyone else can read the exact file list from it (:func:`committed`).

What a reader sees: while a run works, the previous output, untouched (with its ``_SUCCESS``). During the
publish window (one ``CompleteMultipartUpload`` per part, a few ms each) a reader that lists ``<output>/``
without looking at ``_SUCCESS`` may see old and new parts together; a reader that honours ``_SUCCESS`` or the
manifest never does. We did not choose "write parts in place and commit a manifest" alone because then every
plain listing during the whole run mixes runs, and a killed run leaves half its parts beside the old output. A
publish cut by SIGKILL is rolled forward by the next run on the output (:func:`roll_forward`, from the intent):
completing an upload again, or copying again, is no error.

What it costs (W1 200 K rows, four ~35 MB parts, SeaweedFS on the same 2 cores): 0.04-0.06 s. It was 0.3-1.2
s when every part was staged as an object and copied here: a server-side copy is 0.09-0.12 s and 0.16-0.19 s
of the server's CPU for a 35 MB part, a completion 0.006-0.008 s (``benchmarks/bench_s3_write.py``). Measured
and not kept before that: ``UploadPartCopy`` in 8 or 18 MB ranges in parallel (0.67-1.42 s vs 0.76-0.81 s for
the plain copies: the server's CPU was the limit).
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from mdf import layout
from mdf.storage import urls

if TYPE_CHECKING:
    from mdf.storage.fs import Storage

SUCCESS = "_SUCCESS"
INTENT = "publishing.json"
_COPIES = 16  # parallel server-side copies: each is one small request, the server does the work


def staging_prefix(output: str, run_id: str) -> str:
    """``<output>/_mdf/staging/<run_id>``: where a run uploads its committed parts."""
    return urls.join(output, layout.META, "staging", run_id)


def publish(
    storage: Storage,
    output: str,
    run_id: str,
    names: list[str] | None = None,
    meta: list[str] | None = None,
    uploads: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Publish the staged parts of ``run_id`` at ``output`` and commit ``_SUCCESS``; returns the manifest.

    :param names: part names relative to the staging prefix (default: everything staged there).
    :param meta: the run's ``_mdf/...`` files, relative to the staging prefix, copied to ``<output>/_mdf/``
        before ``_SUCCESS`` (run record, metrics, key-state snapshots: what ``--resume`` and the report read);
        key-state files of an earlier run that are not among them are deleted.
    :param uploads: part name -> its open multipart upload to ``<output>/<name>`` (:mod:`mdf.storage.multipart`):
        completed rather than copied."""
    staging = staging_prefix(output, run_id)
    if names is None:
        names = [o.url[len(staging) + 1 :] for o in storage.list(staging, hidden=True)]
    replaces = committed_names(storage, output) or []  # the earlier run's parts: all this publish may delete
    storage.delete(urls.join(output, SUCCESS))
    intent = {"run_id": run_id, "names": sorted(names), "meta": sorted(meta or []), "uploads": uploads or {},
              "replaces": sorted(replaces)}  # fmt: skip
    storage.write_bytes(urls.join(output, layout.META, INTENT), json.dumps(intent).encode())
    return _finish(storage, output, intent)


def _finish(storage: Storage, output: str, intent: dict[str, Any]) -> dict[str, Any]:
    staging = staging_prefix(output, intent["run_id"])
    names: list[str] = intent["names"]
    staged = {o.url[len(staging) + 1 :]: o.size for o in storage.list(staging, hidden=True)}
    uploads: dict[str, dict[str, Any]] = intent.get("uploads", {})
    from mdf.storage import multipart  # the S3 layer: imported by an s3:// output's publish only

    def place(name: str) -> None:
        if name in uploads:  # uploaded to its final key, invisible until now
            multipart.complete(storage, urls.join(output, name), uploads[name])
        else:  # staged by a Ray writer, or the parts of a completed output a --resume took over
            storage.copy(urls.join(staging, name), urls.join(output, name))

    with ThreadPoolExecutor(_COPIES) as pool:
        list(pool.map(place, [n for n in names if n in uploads or n in staged]))
    if uploads:  # uploads of parts written again, of killed runs, of retried requests: none will be completed
        multipart.sweep(storage, output, keep=frozenset(u["upload_id"] for u in uploads.values()))
    keep = set(names)
    if "replaces" in intent:  # the earlier run's parts this run does not write again; a user's objects stay
        old = [urls.join(output, n) for n in intent["replaces"] if n not in keep]
    else:  # the intent of an mdf before the list (rolled forward): every data object not published
        old = [o.url for o in storage.list(output) if o.url[len(output.rstrip("/")) + 1 :] not in keep]
    storage.delete_many(old)
    meta: list[str] = intent.get("meta", [])
    with ThreadPoolExecutor(_COPIES) as pool:
        list(
            pool.map(
                lambda n: storage.copy(urls.join(staging, n), urls.join(output, n)), [m for m in meta if m in staged]
            )
        )
    # an earlier run's key-state files that this run's do not replace
    state = storage.list(urls.join(output, layout.META, "state"), hidden=True) if meta else []
    cut, replaced = len(output.rstrip("/")) + 1, set(meta)  # a listed url's name under the output
    storage.delete_many([o.url for o in state if o.url[cut:] not in replaced])
    sizes = {o.url[cut:]: o.size for o in storage.list(output)}
    manifest = {
        "run_id": intent["run_id"],
        "committed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": [{"name": n, "size": sizes.get(n)} for n in names],
    }
    storage.write_bytes(urls.join(output, SUCCESS), json.dumps(manifest, indent=1).encode())
    storage.delete_prefix(staging)
    storage.delete(urls.join(output, layout.META, INTENT))
    return manifest


def roll_forward(storage: Storage, output: str) -> dict[str, Any] | None:
    """Finish a publish that a killed run left half done (its intent is still there); ``None`` if none was."""
    url = urls.join(output, layout.META, INTENT)
    if not storage.exists(url):
        return None
    return _finish(storage, output, json.loads(storage.read_bytes(url)))


def committed(storage: Storage, output: str) -> list[str] | None:
    """URLs of the files of the last committed run, from ``_SUCCESS``; ``None`` while none is committed."""
    names = committed_names(storage, output)
    return None if names is None else [urls.join(output, n) for n in names]


def committed_names(storage: Storage, output: str) -> list[str] | None:
    """Names (below ``output``) of the files the last committed run published, from its ``_SUCCESS``; ``None``
    while none is committed (or the ``_SUCCESS`` there is not mdf's manifest)."""
    url = urls.join(output, SUCCESS)
    if not storage.exists(url):
        return None
    try:
        manifest = json.loads(storage.read_bytes(url))
        return [str(f["name"]) for f in manifest["files"]]
    except (ValueError, KeyError, TypeError):
        return None
