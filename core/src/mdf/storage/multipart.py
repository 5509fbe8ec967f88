"""Part files uploaded straight to their final keys as multipart uploads left open, completed at the publish.

This is S3A's "magic" committer. An S3 multipart upload is invisible to every listing and every GET until
``CompleteMultipartUpload``, which takes no data (a few ms: 0.006-0.008 s for 35 MB on SeaweedFS, against
0.09-0.12 s for a server-side copy). So a part file is uploaded once, while the run goes on, and the publish
makes it appear; nothing of a running or killed run is visible at ``<output>/``, as with staging.

Why it pays: the publish used to copy every part from the staging prefix. On W1 200 K rows s3 -> s3 the copies
were the publish (0.3-1.1 s) and a third of SeaweedFS's CPU (0.16-0.19 s of CPU a 35 MB part, against
0.27-0.44 s for its upload), taken from the run's own two cores on loopback and, on a real store, billed
as requests that move bytes.

What it needs (done by :class:`mdf.output.remote.RemoteOutput` and :mod:`mdf.output.publish`): the open
uploads' ids, written to the staging prefix (``_mdf/uploads.json``) before the checkpoint manifest that
counts on them, so ``--resume`` and a publish cut by SIGKILL find them; a part written again (a redone shard)
aborts its earlier upload; the publish completes the run's uploads, then aborts every other open upload under
the output (a killed run's, or a retried ``CreateMultipartUpload`` whose answer was lost), as does a fresh
claim. Writers on Ray nodes still upload to the staging prefix and are copied (:mod:`mdf.executor.ray.parts`).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from mdf.runlog import LOG
from mdf.storage import urls
from mdf.storage.errors import StorageError
from mdf.storage.retry import call, error_code

if TYPE_CHECKING:
    from mdf.storage.fs import Storage

PART_BYTES = 32 << 20  # S3 allows 10,000 parts: 320 GB a file; 8 uploads in flight hold 256 MB at most


def _where(url: str) -> tuple[str, str]:
    bucket, _, key = urls.strip_scheme(url).partition("/")
    return bucket, key


def begin(storage: Storage, local_path: str, url: str) -> dict[str, Any]:
    """Upload ``local_path`` as an open multipart upload to ``url``; returns ``{upload_id, parts, size}``.

    The file is opened before any request, so a file already gone raises ``FileNotFoundError`` and leaves
    nothing on the store. Each part is retried whole (an ``UploadPart`` of the same number replaces it)."""
    client, (bucket, key) = storage.s3_client(), _where(url)
    with open(local_path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        created = call(lambda: client.create_multipart_upload(Bucket=bucket, Key=key), url, "upload", storage.policy)
        upload_id = created["UploadId"]
        parts: list[list[Any]] = []
        for number, offset in enumerate(range(0, max(size, 1), PART_BYTES), start=1):
            src.seek(offset)
            body = src.read(PART_BYTES)

            def attempt(number: int = number, body: bytes = body) -> str:
                sent = client.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body)
                return str(sent["ETag"])

            parts.append([number, call(attempt, url, f"upload part {number}", storage.policy)])
    return {"upload_id": upload_id, "parts": parts, "size": size}


def complete(storage: Storage, url: str, upload: dict[str, Any]) -> None:
    """Make ``url`` appear with the upload's bytes. Done twice (a retry whose answer was lost, a publish rolled
    forward) it is no error while the object is there with the upload's size."""
    client, (bucket, key) = storage.s3_client(), _where(url)
    listed = {"Parts": [{"PartNumber": n, "ETag": e} for n, e in upload["parts"]]}

    def attempt() -> None:
        try:
            client.complete_multipart_upload(
                Bucket=bucket, Key=key, UploadId=upload["upload_id"], MultipartUpload=listed
            )
        except Exception as exc:
            if error_code(exc) != "NoSuchUpload":
                raise
            with contextlib.suppress(StorageError):
                if storage.info(url).size == upload["size"]:
                    return
            raise StorageError(url, f"its upload {upload['upload_id']} is gone (aborted or expired): "
                                    "run again with --overwrite") from None  # fmt: skip

    call(attempt, url, "complete upload", storage.policy)


def abort(storage: Storage, url: str, upload_id: str) -> None:
    """Best effort: an upload left open costs storage until the bucket's lifecycle rule or the next sweep."""
    client, (bucket, key) = storage.s3_client(), _where(url)
    with contextlib.suppress(Exception):
        call(lambda: client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id), url, "abort",
             storage.policy)  # fmt: skip


def sweep(storage: Storage, output: str, keep: frozenset[str] = frozenset()) -> int:
    """Abort every open upload under ``output/`` whose id is not in ``keep``; returns how many. The caller holds
    the output's lock, so no live run of ours is uploading there. Best effort: an upload left open holds storage,
    not data anyone sees, so a listing refused (a policy without ``s3:ListBucketMultipartUploads``) is a warning
    in the run log, not a failed run."""
    client, (bucket, key) = storage.s3_client(), _where(output.rstrip("/") + "/")
    found: list[tuple[str, str]] = []
    marker: dict[str, str] = {}

    def listing(after: dict[str, str]) -> Any:
        return call(lambda: client.list_multipart_uploads(Bucket=bucket, Prefix=key, **after), output, "list uploads",
                    storage.policy)  # fmt: skip

    while True:
        try:
            page = listing(marker)
        except StorageError as exc:  # e.g. a policy without s3:ListBucketMultipartUploads: the run needs no sweep
            LOG.warning("%s: open uploads not swept (%s); a bucket lifecycle rule can abort them", output, exc.message)
            return 0
        found += [(u["Key"], u["UploadId"]) for u in page.get("Uploads", []) if u["UploadId"] not in keep]
        if not page.get("IsTruncated"):
            break
        marker = {"KeyMarker": page["NextKeyMarker"], "UploadIdMarker": page["NextUploadIdMarker"]}
    for k, upload_id in found:
        abort(storage, urls.with_scheme(urls.scheme_of(output), f"{bucket}/{k}"), upload_id)
    return len(found)
