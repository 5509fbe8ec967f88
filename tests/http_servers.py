"""Loopback HTTP servers for the storage tests: a bounded threaded server and a Range file server.

* :class:`RangeServer` serves files read in place over plain HTTP (or HTTPS with a test CA's certificate) with
  ``Range``/``HEAD`` support, the way ``https://data.commoncrawl.org/`` serves WARC files to fsspec's HTTP file
  system.
* :class:`_Server` and :class:`_Running` are what it and :class:`tests.storage_servers.FaultProxy` run on: bound to
  127.0.0.1, a daemon thread per connection, at most ``_MAX_CONNECTIONS`` at once.
"""

from __future__ import annotations

import http.server
import socketserver
import ssl
import sys
import threading
import urllib.request
from pathlib import Path

_MAX_CONNECTIONS = 64


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = _MAX_CONNECTIONS

    def __init__(self, handler: type, **attrs: object) -> None:
        self._slots = threading.BoundedSemaphore(_MAX_CONNECTIONS)
        for k, v in attrs.items():
            setattr(self, k, v)
        super().__init__(("127.0.0.1", 0), handler)

    def process_request(self, request, client_address):
        self._slots.acquire()  # bounded: at most _MAX_CONNECTIONS handler threads
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request, client_address):
        """Quiet for a client that drops the connection or refuses the TLS handshake (a test's untrusted CA)."""
        if not isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError)):
            super().handle_error(request, client_address)


class _Running:
    """Start/stop of a :class:`_Server` on a background thread."""

    server: _Server

    def _serve(self) -> None:
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _RangeHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        files: dict[str, Path] = self.server.files  # type: ignore[attr-defined]
        path = files.get(self.path.split("?", 1)[0].lstrip("/"))
        if path is None or not path.is_file():
            self.send_error(404)
            return
        size = path.stat().st_size
        start, end, status = 0, size - 1, 200
        spec = self.headers.get("Range")
        if spec and spec.startswith("bytes=") and "," not in spec:
            a, b = spec[6:].split("-", 1)
            if a:
                start, end = int(a), min(int(b), size - 1) if b else size - 1
            else:
                start = max(0, size - int(b))
            if start >= size or start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start + 1))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if head:
            return
        with open(path, "rb") as f:
            f.seek(start)
            left = end - start + 1
            while left:
                piece = f.read(min(left, 1 << 16))
                if not piece:
                    break
                self.wfile.write(piece)
                left -= len(piece)


class RangeServer(_Running):
    """File server on loopback with single-range ``Range`` requests and ``HEAD`` (sizes): plain HTTP, or HTTPS
    with ``tls`` (a server-side :class:`ssl.SSLContext` holding the certificate, e.g. one a test CA issued).

    :param files: URL path (without the leading ``/``) -> file on disk, read in place.
    """

    def __init__(self, files: dict[str, Path], tls: ssl.SSLContext | None = None) -> None:
        self.server = _Server(_RangeHandler, files=dict(files))
        self.scheme = "http"
        if tls is not None:  # each accepted connection does its handshake in its handler thread
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True, do_handshake_on_connect=False)
            self.scheme = "https"
        self._serve()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"


def fetch(url: str) -> bytes:
    """GET ``url`` (for tests checking a server by hand)."""
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read()
