"""A few S3 calls with boto3, run as ``python -m tests.s3_tool ...`` where the test process cannot reach the
server: inside a network namespace of :mod:`tests.netns_cluster`, whose SeaweedFS binds the head's address on a
bridge the machine's own namespace has no interface on. Files go through the file system every namespace
shares. The endpoint and keys come from the standard AWS variables, as for every client in the tests.

    probe                       create bucket mdf-probe, put and get an object
    mb BUCKET                   create a bucket
    put FOLDER s3://B/PREFIX    upload FOLDER's files (flat) under PREFIX
    get s3://B/PREFIX FOLDER    download every object under PREFIX (folder markers skipped) into FOLDER
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_tool(prefix: tuple[str, ...], env: dict[str, str], *args: str) -> None:
    """``python -m tests.s3_tool ARGS`` under ``prefix`` (e.g. ``ip netns exec NS``); raises with its stderr."""
    cmd = [*prefix, sys.executable, "-m", "tests.s3_tool", *args]
    out = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"s3_tool {' '.join(args)}: {out.stderr.strip()[-2000:]}")


def _client():
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL_S3"],
                        config=Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=3))  # fmt: skip


def _split(url: str) -> tuple[str, str]:
    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    return bucket, prefix.rstrip("/")


def main(argv: list[str]) -> None:
    client = _client()
    what = argv[0]
    if what == "probe":
        client.create_bucket(Bucket="mdf-probe")
        client.put_object(Bucket="mdf-probe", Key="probe", Body=b"ok")
        assert client.get_object(Bucket="mdf-probe", Key="probe")["Body"].read() == b"ok"
    elif what == "mb":
        client.create_bucket(Bucket=argv[1])
    elif what == "put":
        bucket, prefix = _split(argv[2])
        for p in sorted(Path(argv[1]).iterdir()):
            if p.is_file():
                client.put_object(Bucket=bucket, Key=f"{prefix}/{p.name}", Body=p.read_bytes())
    elif what == "get":
        bucket, prefix = _split(argv[1])
        dest = Path(argv[2])
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
            for o in page.get("Contents", []):
                if o["Key"].endswith("/"):
                    continue
                target = dest / o["Key"][len(prefix) + 1 :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(client.get_object(Bucket=bucket, Key=o["Key"])["Body"].read())
    else:
        raise SystemExit(f"unknown command {what!r}; see {__file__}")


if __name__ == "__main__":
    main(sys.argv[1:])
