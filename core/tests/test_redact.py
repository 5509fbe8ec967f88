"""``mdf.storage.redact``: what a URL keeps and loses before mdf writes it down (issue 46, item 3).

The end-to-end check (every file of a real run searched for the secrets) is ``tests/test_storage_secrets.py``;
this is the documented list, case by case. Seen red on eefbc81: the module did not exist (every URL was
written whole)."""

from __future__ import annotations

import json

import pytest

from mdf.storage import redact_text, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:pw@h:8/x.warc.gz?token=abc&part=2", "http://***@h:8/x.warc.gz?token=***&part=2"),
        ("https://TOKEN@github.com/x", "https://***@github.com/x"),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F1&X-Amz-Date=1"
            "&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=dead&versionId=3",
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=***&X-Amz-Credential=***&X-Amz-Date=***"
            "&X-Amz-Expires=***&X-Amz-SignedHeaders=***&X-Amz-Signature=***&versionId=3",
        ),
        (
            "https://h/k?AWSAccessKeyId=AKIA&Expires=9&Signature=x%2B",
            "https://h/k?AWSAccessKeyId=***&Expires=9&Signature=***",
        ),
        (
            "https://storage.googleapis.com/b/o?X-Goog-Signature=ab&x=1",
            "https://storage.googleapis.com/b/o?X-Goog-Signature=***&x=1",
        ),
        (
            "https://a.blob.core.windows.net/c/b?sv=2022&se=2024&sp=r&sr=b&sig=abc%3D",
            "https://a.blob.core.windows.net/c/b?sv=***&se=***&sp=***&sr=***&sig=***",
        ),
        ("https://h/x?st=1&se=2", "https://h/x?st=1&se=2"),  # SAS field names without a SAS signature: kept
        (
            "https://h/x?key=AIza&API_KEY=1&client_secret=2&pageToken=3",
            "https://h/x?key=***&API_KEY=***&client_secret=***&pageToken=***",
        ),
        ("https://h/x?password=p&auth=a&q=cats#frag", "https://h/x?password=***&auth=***&q=cats#frag"),
        ("s3://bucket/crawl/a.warc.gz", "s3://bucket/crawl/a.warc.gz"),
        ("/data/a@b?.parquet", "/data/a@b?.parquet"),  # a local path is not parsed
        ("https://h/a@b.warc.gz", "https://h/a@b.warc.gz"),  # '@' in the path is not userinfo
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert redact_url(shown) == shown  # idempotent: a redacted URL passes through again unchanged


def test_redact_text_keeps_json_valid_and_finds_every_url() -> None:
    doc = {"paths": ["http://u:pw@h/a?token=t1", "s3://b/k"], "error": "GET 'https://h/x?sig=s&sv=1' failed"}
    out = redact_text(json.dumps(doc, indent=1))
    assert json.loads(out) == {
        "paths": ["http://***@h/a?token=***", "s3://b/k"],
        "error": "GET 'https://h/x?sig=***&sv=***' failed",
    }
