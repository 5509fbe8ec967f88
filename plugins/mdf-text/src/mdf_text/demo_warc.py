"""Write a CommonCrawl-like ``.warc.gz`` of synthetic pages, for the demo and end-to-end tests (no network).

``python -m mdf_text.demo_warc OUT_DIR [--pages N] [--seed S] [--wet]`` writes ``OUT_DIR/demo-00000.warc.gz``: a
warcinfo record, then for each capture a request, a response and a metadata record, each its own gzip member
(as CommonCrawl writes them). Pages are HTML with boilerplate (navigation, cookie banner, related links,
footer) around an article in English, German, French or Spanish; some are exact copies under another URL,
some near copies (one sentence changed), some too short, some on blocklisted domains; a few responses are not
HTML (robots.txt, PDF, PNG) or not 200. Most bodies are UTF-8 with the charset in the HTTP header; some are
windows-1252 with the charset only in ``<meta>``; most pages carry CommonCrawl's ``X-Crawler-Content-Encoding``
(body already decoded), a couple are still gzip content-encoded. Records are written with FastWARC's writer.
"""

from __future__ import annotations

import argparse
import gzip
import html
import io
import os
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from mdf_text.demo_sentences import CHROME, PARTS

LANGUAGES = ("en", "de", "fr", "es")
_WEIGHTS = (0.4, 0.2, 0.2, 0.2)
_SITES = {
    "en": ["dailyharbour.example.com", "northgazette.example.org", "citypost.example.net"],
    "de": ["stadtanzeiger.example.de", "hafenblatt.example.de"],
    "fr": ["lejournal.example.fr", "quotidien-du-port.example.fr"],
    "es": ["eldiario.example.es", "noticiasdelpuerto.example.es"],
}
BLOCKED = ("spam-farm.example", "casino-bonus.example")  # listed in examples/blocklist.txt


@dataclass
class Page:
    url: str
    lang: str
    title: str
    paragraphs: list[str]
    charset: str = "utf-8"
    charset_in_header: bool = True
    gzip_encoded: bool = False


def sentence(rng: random.Random, lang: str) -> str:
    parts = PARTS[lang]
    text = rng.choice(parts["template"]).format(**{k: rng.choice(parts[k]) for k in ("S", "V", "O", "T")})
    return text[0].upper() + text[1:]


def article(rng: random.Random, lang: str, paragraphs: int) -> list[str]:
    return [" ".join(sentence(rng, lang) for _ in range(rng.randint(2, 4))) for _ in range(paragraphs)]


def render(page: Page, rng: random.Random) -> str:
    """The page's HTML: the article inside the furniture a real news site wraps around it."""
    chrome = CHROME[page.lang]
    host = page.url.split("/")[2]
    nav = "".join(f'<li><a href="https://{host}/{n.lower()}">{n}</a></li>' for n in chrome["nav"])
    links = [(rng.randint(1000, 9999), html.escape(sentence(rng, page.lang)[:60])) for _ in range(4)]
    related = "".join(f'<li><a href="https://{host}/a/{n}">{label}</a></li>' for n, label in links)
    body = "\n".join(f"<p>{html.escape(p)}</p>" for p in page.paragraphs)
    meta = "" if page.charset_in_header else f'<meta charset="{page.charset}">'
    return (
        f'<!DOCTYPE html>\n<html lang="{page.lang}"><head>{meta}<title>{html.escape(page.title)}</title>'
        f'<link rel="canonical" href="{page.url}"></head>\n<body>\n'
        f'<div id="cookie-banner" class="cookie-consent"><p>{chrome["cookie"]}</p><button>OK</button></div>\n'
        f'<header><nav class="main-nav"><ul>{nav}</ul></nav></header>\n'
        f"<main><article><h1>{html.escape(page.title)}</h1>\n{body}\n</article></main>\n"
        f'<aside class="related"><h2>{chrome["related"]}</h2><ul>{related}</ul></aside>\n'
        f'<footer class="site-footer"><p>© 2024 {host}. {chrome["footer"]}</p></footer>\n</body></html>\n'
    )


def make_pages(n: int, seed: int = 7) -> list[Page]:
    """``n`` pages: mostly fresh articles, ~8 % exact copies, ~5 % near copies, ~3 % short, ~3 % blocked."""
    rng = random.Random(seed)
    pages: list[Page] = []
    for i in range(n):
        roll = rng.random()
        if pages and roll < 0.08:  # exact copy of an earlier article on another URL (syndication)
            src = rng.choice(pages)
            host = rng.choice(_SITES[src.lang])
            pages.append(Page(f"https://{host}/syndicated/{i}", src.lang, src.title, list(src.paragraphs)))
            continue
        if pages and roll < 0.13:  # near copy: one sentence of one paragraph rewritten
            src = rng.choice(pages)
            paras = list(src.paragraphs)
            k = rng.randrange(len(paras))
            paras[k] = paras[k] + " " + sentence(rng, src.lang)
            host = rng.choice(_SITES[src.lang])
            pages.append(Page(f"https://{host}/update/{i}", src.lang, src.title + " (update)", paras))
            continue
        lang = rng.choices(LANGUAGES, _WEIGHTS)[0]
        blocked, short = 0.13 <= roll < 0.16, 0.16 <= roll < 0.19
        host = f"www.{rng.choice(BLOCKED)}" if blocked else rng.choice(_SITES[lang])
        paras = article(rng, lang, 1 if short else rng.randint(5, 12))
        title = " ".join(sentence(rng, lang).rstrip(".").split()[:9])
        page = Page(f"https://{host}/{lang}/article/{i}", lang, title, paras)
        if lang != "en" and rng.random() < 0.15:  # legacy site: windows-1252, declared only in <meta>
            page.charset, page.charset_in_header = "windows-1252", False
        page.gzip_encoded = rng.random() < 0.02
        pages.append(page)
    return pages


def _record(record_type: Any, url: str, date: datetime, rng: random.Random, block: bytes, ctype: str) -> bytes:
    from fastwarc.warc import WarcRecord

    rec = WarcRecord()
    rec.init_headers(record_type, f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128), version=4)}>".encode())
    rec.record_date = date
    rec.headers.append("WARC-Target-URI", url)
    rec.headers.append("Content-Type", ctype)
    rec.set_bytes_content(block)
    out = io.BytesIO()
    rec.write(out, checksum_data=True)
    return gzip.compress(out.getvalue(), compresslevel=6, mtime=0)


def _http(status: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _response(page: Page, rng: random.Random) -> bytes:
    body = render(page, rng).encode(page.charset, errors="xmlcharrefreplace")
    ctype = f"text/html; charset={page.charset}" if page.charset_in_header else "text/html"
    headers = [("Date", "Tue, 05 Mar 2024 10:00:00 GMT"), ("Server", "nginx"), ("Content-Type", ctype)]
    if page.gzip_encoded:
        body = gzip.compress(body, mtime=0)
        headers += [("Content-Encoding", "gzip"), ("Content-Length", str(len(body)))]
    else:  # as CommonCrawl stores it: decoded by the crawler, the original headers renamed
        headers += [("X-Crawler-Content-Encoding", "gzip"), ("Content-Length", str(len(body)))]
    return _http("200 OK", headers, body)


def _other_responses(host: str) -> list[tuple[str, bytes]]:
    """Non-HTML and non-200 responses a crawl always has."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
    return [
        (f"https://{host}/robots.txt", _http("200 OK", [("Content-Type", "text/plain")], b"User-agent: *\nAllow: /\n")),
        (f"https://{host}/logo.png", _http("200 OK", [("Content-Type", "image/png")], png)),
        (f"https://{host}/report.pdf", _http("200 OK", [("Content-Type", "application/pdf")], pdf)),
        (f"https://{host}/old", _http("301 Moved Permanently", [("Location", f"https://{host}/")], b"")),
        (f"https://{host}/missing", _http("404 Not Found", [("Content-Type", "text/html")], b"<h1>Not found</h1>")),
    ]


def write_warc(out_dir: str, pages: int = 1000, seed: int = 7) -> str:
    """Write the demo WARC file into ``out_dir``; return its path."""
    from fastwarc.warc import WarcRecordType as T

    rng = random.Random(seed + 1)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "demo-00000.warc.gz")
    date = datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
    http_resp = "application/http; msgtype=response"
    with open(path + ".tmp", "wb") as f:
        info = b"software: mdf-text demo_warc\r\nformat: WARC File Format 1.1\r\n"
        f.write(_record(T.warcinfo, "", date, rng, info, "application/warc-fields"))
        captures = [(p.url, _response(p, rng)) for p in make_pages(pages, seed)]
        for host in ("dailyharbour.example.com", "stadtanzeiger.example.de"):
            captures += _other_responses(host)
        for i, (url, block) in enumerate(captures):
            when = date + timedelta(seconds=i)
            host = url.split("/")[2]
            request = f"GET /{url.split('/', 3)[-1]} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: CCBot/2.0\r\n\r\n"
            f.write(_record(T.request, url, when, rng, request.encode(), "application/http; msgtype=request"))
            f.write(_record(T.response, url, when, rng, block, http_resp))
            meta = f"fetchTimeMs: {rng.randint(50, 900)}\r\n".encode()
            f.write(_record(T.metadata, url, when, rng, meta, "application/warc-fields"))
    os.replace(path + ".tmp", path)
    return path


def write_wet(out_dir: str, pages: int = 1000, seed: int = 7) -> str:
    """Write the text of the same pages as CommonCrawl's WET files do: one ``conversion`` record per page."""
    from fastwarc.warc import WarcRecordType as T

    rng = random.Random(seed + 2)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "demo-00000.warc.wet.gz")
    date = datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
    with open(path + ".tmp", "wb") as f:
        info = b"software: mdf-text demo_warc\r\nformat: WARC File Format 1.1\r\n"
        f.write(_record(T.warcinfo, "", date, rng, info, "application/warc-fields"))
        for i, page in enumerate(make_pages(pages, seed)):
            text = page.title + "\n" + "\n".join(page.paragraphs)
            when = date + timedelta(seconds=i)
            f.write(_record(T.conversion, page.url, when, rng, text.encode("utf-8"), "text/plain"))
    os.replace(path + ".tmp", path)
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mdf_text.demo_warc", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="folder to write demo-00000.warc.gz into")
    parser.add_argument("--pages", type=int, default=1000, help="HTML pages (plus 10 non-HTML responses)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (same seed, same file)")
    parser.add_argument("--wet", action="store_true", help="also write the pages' text as a WET file")
    args = parser.parse_args(argv)
    paths = [write_warc(args.out_dir, args.pages, args.seed)]
    if args.wet:
        paths.append(write_wet(args.out_dir, args.pages, args.seed))
    for path in paths:
        print(f"wrote {path} ({os.path.getsize(path):,} bytes)")


if __name__ == "__main__":
    main()
