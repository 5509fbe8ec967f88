"""``https://`` reading over real TLS: a loopback Range server whose certificate a test CA issued (``trustme``),
trusted the standard way (``SSL_CERT_FILE``, which Python's default context and so aiohttp's honour). The real WARC
files of ``../shared/data/warc`` and a JSONL file give the local run's rows; the same server with the CA not
trusted stops the run in one line naming the URL (the certificate is really checked)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
import yaml

from .conftest import run_mdf
from .test_storage_read_paths import parts, recipe

pytest.importorskip("fsspec", reason="http(s):// reads go through fsspec's HTTP file system")
pytest.importorskip("aiohttp", reason="http(s):// reads go through fsspec's HTTP file system (aiohttp)")
trustme = pytest.importorskip("trustme", reason="the test CA: pip install trustme (the storage session has it)")

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "warc"
WARCS = ("warcio-example.warc.gz", "resili-warcfile.warc.gz")


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory):
    """A Range server on loopback speaking TLS 1.2+ with a certificate for 127.0.0.1 from a fresh CA; yields the
    server and the CA's PEM file."""
    import ssl

    from tests.storage_servers import RangeServer

    if not DATA.is_dir():
        pytest.skip(f"real WARC files not found at {DATA} (../shared/data/warc)")
    tmp = tmp_path_factory.mktemp("https")
    ca = trustme.CA()
    ca_pem = tmp / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_pem))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    lines = [json.dumps({"id": i, "text": f"document {i} over TLS " + "words " * (i % 9)}) for i in range(3000)]
    (tmp / "docs.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    files = {f"warc/{name}": DATA / name for name in WARCS}
    files["j/docs.jsonl.gz"] = tmp / "docs.jsonl.gz"
    server = RangeServer(files, tls=context)
    assert server.url.startswith("https://127.0.0.1:")
    yield server, ca_pem, files
    server.stop()


def _env(ca_pem: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    if ca_pem is not None:
        env["SSL_CERT_FILE"] = str(ca_pem)
    return env


@pytest.mark.parametrize("reader", ["warc", "jsonl"])
def test_https_gives_the_local_rows(tls_server, tmp_path: Path, reader: str) -> None:
    """WARC (streamed in ranged requests) and gzipped JSONL over https://: the rows of the same files read from
    disk, part for part."""
    server, ca_pem, files = tls_server
    keys = [k for k in files if k.startswith("warc/" if reader == "warc" else "j/")]
    spec = {"type": reader}
    remote = run(tmp_path / "https", {**spec, "paths": [f"{server.url}/{k}" for k in keys]}, _env(ca_pem))
    assert remote.returncode == 0, remote.stderr[-3000:]
    local = run(tmp_path / "local", {**spec, "paths": [str(files[k]) for k in keys]}, _env(None))
    assert local.returncode == 0, local.stderr[-3000:]
    got, want = parts(tmp_path / "https" / "out"), parts(tmp_path / "local" / "out")
    assert got.keys() == want.keys() and sum(len(rows) for rows in want.values()) > 0
    for name in want:  # a WARC row names its file: the URL read, the path read
        for a, b in zip(got[name], want[name], strict=True):
            assert a.pop("warc_file", server.url).startswith(server.url)
            assert b.pop("warc_file", "") in ("", *map(str, files.values()))
            assert a == b


def test_an_untrusted_certificate_stops_the_run_in_one_line(tls_server, tmp_path: Path) -> None:
    """The same server, its CA not trusted: exit 2 before any work, one line naming the URL, no traceback. Seen
    red with the server's certificate check off in the client (``ssl=False`` in the aiohttp session fsspec
    opens): the run read the file and exited 0."""
    url = f"{tls_server[0].url}/j/docs.jsonl.gz"
    result = run(tmp_path / "untrusted", {"type": "jsonl", "paths": [url]}, _env(None))
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert url in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "untrusted" / "out").exists()


def run(tmp: Path, reader: dict, env: dict[str, str]):
    """``mdf run`` of the storage tests' recipe (a WARC's rows have no ``text``: there a no-op stage)."""
    tmp.mkdir(parents=True, exist_ok=True)
    path = recipe(tmp, reader)
    if reader["type"] == "warc":
        spec = yaml.safe_load(path.read_text())
        spec["stages"] = [{"name": "s", "operators": ["noop_refiner"]}]
        path.write_text(yaml.safe_dump(spec))
    return run_mdf("run", str(path), env=env, replace_env=True)
