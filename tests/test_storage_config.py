"""The recipe's ``storage:`` block, glob translation, and secrets kept out of every printed form."""

from __future__ import annotations

import re

import pytest

from mdf.errors import RecipeError
from mdf.storage import S3Settings, StorageSettings, parse_storage
from mdf.storage.urls import glob_regex, join, literal_prefix, scheme_of, strip_scheme

SECRET = "s3cr3t-Value-that-must-not-print"


def test_validation_errors_name_the_yaml_path() -> None:
    with pytest.raises(RecipeError) as err:
        parse_storage({"s3": {"endpoint_url": "localhost:9000"}})
    assert str(err.value).startswith("storage.s3.endpoint_url: ") and "http://" in str(err.value)
    with pytest.raises(RecipeError) as err:
        parse_storage({"s3": {"endpoint": "http://x"}})
    assert str(err.value).startswith("storage.s3.endpoint: unknown key") and "endpoint_url" in str(err.value)
    with pytest.raises(RecipeError, match=r"^storage\.s3\.max_attempts: "):
        parse_storage({"s3": {"max_attempts": 0}})
    with pytest.raises(RecipeError, match=r"^storage: must be a mapping"):
        parse_storage(["s3"])
    assert parse_storage(None) == StorageSettings()


def test_secrets_never_in_repr_str_dump_or_errors() -> None:
    """Fails with the key fields typed ``str`` (seen: the secret in repr) and with the plain pydantic error
    formatter on a bad secret (seen: 'Input should be a valid string (got 987654321)')."""
    s = parse_storage({"s3": {"access_key_id": "AKIAEXAMPLE", "secret_access_key": SECRET, "session_token": SECRET}})
    for text in (repr(s), str(s), s.model_dump_json(), repr(s.model_dump()), str(s.s3), repr(s.s3)):
        assert SECRET not in text and "AKIAEXAMPLE" not in text, text
    assert s.s3.key_pair() == ("AKIAEXAMPLE", SECRET, SECRET)
    for bad in ({"secret_access_key": 987654321}, {"secret_access_key": [SECRET]}, {"session_token": 1.5e9}):
        with pytest.raises(RecipeError) as err:
            parse_storage({"s3": bad})
        msg = str(err.value)
        assert SECRET not in msg and "987654321" not in msg and "1500000000" not in msg, msg
        assert "value not shown" in msg, msg
        assert str(err.value).startswith("storage.s3.")


def test_endpoint_from_the_standard_variables(monkeypatch) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://general:1")
    assert S3Settings().resolved_endpoint() == "http://general:1"
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://s3-only:2")
    assert S3Settings().resolved_endpoint() == "http://s3-only:2"
    assert S3Settings(endpoint_url="http://recipe:3/").resolved_endpoint() == "http://recipe:3"


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("b/cc/**/*.warc.gz", ["b/cc/x.warc.gz", "b/cc/s/1/x.warc.gz"], ["b/cc/x.warc", "b/ccx/y.warc.gz"]),
        ("b/*/x.parquet", ["b/a/x.parquet"], ["b/a/c/x.parquet", "b/x.parquet"]),
        ("b/part-[0-3].parquet", ["b/part-2.parquet"], ["b/part-7.parquet"]),
        ("b/part-[!0-3].parquet", ["b/part-7.parquet"], ["b/part-2.parquet"]),
        ("b/f?.jsonl", ["b/f1.jsonl"], ["b/f12.jsonl", "b/f/.jsonl"]),
        ("b/a+b(1).txt", ["b/a+b(1).txt"], ["b/aab1.txt"]),
    ],
)
def test_glob_semantics(pattern: str, yes: list[str], no: list[str]) -> None:
    rx = glob_regex(pattern)
    assert all(rx.match(p) for p in yes) and not any(rx.match(p) for p in no)


def test_url_helpers() -> None:
    assert scheme_of("S3://b/k") == "s3" and scheme_of("data/x") == "file" and scheme_of("/abs") == "file"
    assert strip_scheme("s3://b/k/x") == "b/k/x" and re.match(r"^/.*x$", strip_scheme("file://x"))
    assert join("s3://b/out/", "_mdf", "lock") == "s3://b/out/_mdf/lock"
    assert literal_prefix("b/cc/*/x/**") == "b/cc" and literal_prefix("b/k") == "b/k" and literal_prefix("*.x") == ""
