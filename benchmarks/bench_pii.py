"""pii_refiner against its peers in one process: speed ratios, and what each finds on real and planted text.

Peers (DataTrove 0.10.1 has no IPv6 or phone rule; mdf's e-mail/IPv4 patterns are its, but nothing here or in
bench_quality_filters compares the two outputs: see the README for how they differ):

* Data-Juicer's ``clean_email_mapper`` + ``clean_ip_mapper`` patterns (IPv4, and IPv6 in full 8-group form only),
  run per row with ``re`` as Data-Juicer does (it uses ``regex``; same patterns);
* ``phonenumbers``' ``PhoneNumberMatcher`` (Google libphonenumber's Python port; region US, leniency VALID), the
  reference for phone recall/precision; NeMo Curator's PII modifier reaches phones through Presidio, which
  uses the same library.

Texts, read in place from ``../shared/data``: the 181 AEB pages as articleBody, as mdf's ``html_extract`` main
text and (if resiliparse is installed) as all-text extraction with navigation and footers, where contact
details live; plus the HTML responses of ``warc/resili-warcfile.warc.gz`` (CommonCrawl). "planted": the real
paragraphs with known e-mails, IPs, phones and look-alike traps (times, MACs, C++ scopes, hashes, dates, ISBNs,
prices, versions) inserted, ``--planted`` rows.

    python benchmarks/bench_pii.py [--planted 20000] [--show 30]

``--show N`` prints N phone hits of mdf on the real texts with their context, to judge false positives by eye.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pyarrow as pa

from mdf.testing import run_operator
from mdf_text.ops.html import HtmlExtract
from mdf_text.ops.pii import PiiRefiner
from mdf_text.ops.pii_patterns import PHONE, phone_ok

T = TypeVar("T")
ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
DJ_EMAIL = r"[A-Za-z0-9.\-+_]+@[a-z0-9.\-+_]+\.[a-z]+"
DJ_IP = (
    r"(?:(?:1[0-9][0-9]\.)|(?:2[0-4][0-9]\.)|(?:25[0-5]\.)|(?:[1-9][0-9]\.)|(?:[0-9]\.)){3}(?:(?:1[0-9][0-9])|"
    r"(?:2[0-4][0-9])|(?:25[0-5])|(?:[1-9][0-9])|(?:[0-9]))|([\da-fA-F]{1,4}:){7}[\da-fA-F]{1,4}"
)
PHONES = [
    "+1 (415) 555-2671", "(212) 555-0143", "646-555-0199", "617.555.0123", "+44 20 7946 0958", "020 7946 0958",
    "+49 30 12345678", "+49 (0)89 1234567", "030 12345678", "+33 1 42 68 53 00", "01 42 68 53 00", "+34 912 345 678",
    "+39 06 1234 5678", "+31 20 123 4567", "+81-3-1234-5678", "+91 98765 43210", "+61 2 9876 5432",
]  # fmt: skip
IPV6 = ["2001:4860:4860::8888", "2a00:1450:4001:82a::200e", "2606:4700:4700::1111", "::ffff:8.8.4.4"]
TRAPS = [
    "at 12:30:45", "MAC 00:1A:2B:3C:4D:5E", "std::vector<int>", "sha 9f86d081884c7d659a2feaa0c55ad015",
    "on 2023-10-05", "on 05.10.2023", "ISBN 978-3-16-148410-0", "for $1,234,567", "version 10.2.345",
    "fd12:3456:789a::1", "fe80::1%eth0", "2001:db8::42", "10.0.0.1", "order 123456789012", "ref 4111 1111 1111 1111",
]  # fmt: skip


def real_texts() -> dict[str, list[str]]:
    """The real texts by source; absent data gives empty lists (said in the output)."""
    out: dict[str, list[str]] = {}
    aeb = SHARED / "aeb"
    if (aeb / "ground-truth.json").exists():
        truth = json.loads((aeb / "ground-truth.json").read_text())
        ids = sorted(truth)
        out["aeb_body"] = [truth[i]["articleBody"] for i in ids]
        pages = [gzip.decompress((aeb / "html" / f"{i}.html.gz").read_bytes()) for i in ids]
        out["aeb_main"] = extract(pages)
        try:
            from resiliparse.extract.html2text import extract_plain_text
        except ImportError:
            print("resiliparse absent: no all-text extraction (pip install resiliparse)")
        else:
            out["aeb_all"] = [extract_plain_text(p.decode("utf-8", "replace"), main_content=False) for p in pages]
    warc = SHARED / "warc" / "resili-warcfile.warc.gz"
    if warc.exists():
        from fastwarc.warc import ArchiveIterator, WarcRecordType

        with warc.open("rb") as f:
            pages = [r.reader.read() for r in ArchiveIterator(f, record_types=WarcRecordType.response)]
        out["warc_main"] = extract(pages)
    return out


def extract(pages: list[bytes]) -> list[str]:
    kept, _ = run_operator(HtmlExtract(), pa.RecordBatch.from_pydict({"body": pa.array(pages, pa.binary())}))
    return kept.column("text").to_pylist()


def planted(paragraphs: list[str], n: int) -> tuple[list[str], int, int]:
    """Rows of real paragraphs with one planted phone, IPv6 address or trap each; returns (rows, phones, ipv6s)."""
    rng = random.Random(7)
    rows, phones, v6 = [], 0, 0
    for _ in range(n):
        kind = rng.random()
        item = rng.choice(PHONES if kind < 0.4 else IPV6 if kind < 0.55 else TRAPS)
        phones += kind < 0.4
        v6 += 0.4 <= kind < 0.55
        a, b = rng.choice(paragraphs), rng.choice(paragraphs)
        rows.append(f"{a[:300]} contact {item}. {b[:300]}")
    return rows, phones, v6


def timed(fn: Callable[..., T], *args: object, **kwargs: object) -> tuple[float, T]:
    start = time.perf_counter()
    res = fn(*args, **kwargs)
    return time.perf_counter() - start, res


def mdf_run(texts: list[str], **params: object) -> tuple[list[str], dict[str, int]]:
    op = PiiRefiner(**params)
    out = []
    for i in range(0, len(texts), 1000):
        kept, _ = run_operator(op, pa.RecordBatch.from_pydict({"text": texts[i : i + 1000]}))
        out.extend(kept.column("text").to_pylist())
    return out, dict(op.metrics.counters)


def dj_run(texts: list[str]) -> list[str]:
    email, ip = re.compile(DJ_EMAIL), re.compile(DJ_IP)
    out = []
    for t in texts:
        if email.search(t):
            t = email.sub("", t)
        if ip.search(t):
            t = ip.sub("", t)
        out.append(t)
    return out


def pn_run(texts: list[str]) -> tuple[list[str], int]:
    import phonenumbers

    out, n = [], 0
    for t in texts:
        spans = [(m.start, m.end) for m in phonenumbers.PhoneNumberMatcher(t, "US")]
        n += len(spans)
        for s, e in reversed(spans):
            t = t[:s] + "+1 555-0100" + t[e:]
        out.append(t)
    return out, n


def mdf_phone_spans(t: str) -> list[tuple[int, int]]:
    return [m.span() for m in PHONE.finditer(t) if phone_ok(m.group(0))]


def compare_phones(texts: list[str]) -> tuple[int, int, int]:
    """(mdf hits, phonenumbers hits, mdf hits overlapping a phonenumbers hit)."""
    import phonenumbers

    mine = theirs = both = 0
    for t in texts:
        a = mdf_phone_spans(t)
        b = [(m.start, m.end) for m in phonenumbers.PhoneNumberMatcher(t, "US")]
        mine, theirs = mine + len(a), theirs + len(b)
        both += sum(any(s < e2 and s2 < e for s2, e2 in b) for s, e in a)
    return mine, theirs, both


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--planted", type=int, default=20000, help="rows of real paragraphs with planted items")
    ap.add_argument("--show", type=int, default=0, help="print this many mdf phone hits on real text")
    args = ap.parse_args()
    real = real_texts()
    if not real:
        raise SystemExit(f"{SHARED} is missing: the benchmark reads ../shared/data in place")
    all_real = [t for ts in real.values() for t in ts if t]
    paragraphs = [p for t in real.get("aeb_body", all_real) for p in t.split("\n") if len(p) > 80]
    rows, n_phones, n_v6 = planted(paragraphs, args.planted)
    mb = sum(len(t.encode()) for t in all_real + rows) / 1e6
    print(f"real: { {k: len(v) for k, v in real.items()} }, planted: {len(rows)} rows ({n_phones} phones, "
          f"{n_v6} IPv6); {mb:.1f} MB; one process, machine shared with other jobs: ratios matter")  # fmt: skip
    print("\nphones on real text (mdf phone=True vs phonenumbers US VALID):")
    hits = []
    for src, texts in real.items():
        mine, theirs, both = compare_phones([t for t in texts if t])
        print(f"  {src:10s} mdf {mine:4d}  phonenumbers {theirs:4d}  both {both:4d}")
        hits += [(src, t[max(0, s - 40) : e + 25]) for t in texts if t for s, e in mdf_phone_spans(t)]
    print(f"  mdf phone hits on real text: {len(hits)}")
    for src, ctx in random.Random(3).sample(hits, min(args.show, len(hits))):
        print(f"    [{src}] {ctx!r}")
    mine, theirs, both = compare_phones(rows)
    print(f"  planted rows: {n_phones} phones planted (the paragraphs hold a few more); mdf {mine}, "
          f"phonenumbers {theirs}, both {both}")  # fmt: skip

    data = all_real + rows
    mdf_run(data[:100])  # imports and regex compilation are start-up, not work
    t_mdf, (_, cnt) = timed(mdf_run, data)
    t_dj, _ = timed(dj_run, data)
    print(f"\ne-mail + IPv4 + IPv6, {len(data)} rows: mdf {t_mdf:.3f}s  Data-Juicer regexes {t_dj:.3f}s "
          f"= {t_dj / t_mdf:.1f}x; mdf counters {cnt}")  # fmt: skip
    _, v6 = mdf_run(rows, remove_emails=False, remove_ips=False)
    print(f"  IPv6 in planted rows: mdf replaced {v6.get('ipv6_replaced', 0)} of {n_v6} planted public ones "
          f"(Data-Juicer's pattern finds only the full 8-group form: "
          f"{sum(bool(re.search(DJ_IP.split('|')[-1], v)) for v in IPV6)} of {len(IPV6)} forms)")  # fmt: skip
    reps = all_real * 10
    t_on = t_off = float("inf")
    for _ in range(3):  # interleaved, best of 3: the difference is small beside the machine's noise
        t_on = min(t_on, timed(mdf_run, reps)[0])
        t_off = min(t_off, timed(mdf_run, reps, remove_ipv6=False)[0])
    print(f"  default rules on real text x10 ({len(reps)} rows, best of 3): with IPv6 {t_on:.3f}s, without (DataTrove's "
          f"rules) {t_off:.3f}s: the IPv6 rule costs {100 * (t_on / t_off - 1):+.0f}%")  # fmt: skip
    flags = {"remove_emails": False, "remove_ips": False, "remove_ipv6": False, "phone": True}
    for label, texts in [("real text x4", all_real * 4), ("planted rows", rows)]:
        t_ph, (_, pcnt) = timed(mdf_run, texts, **flags)
        t_pn, (_, pn_n) = timed(pn_run, texts)
        print(f"phones, {label} ({len(texts)} rows): mdf {t_ph:.3f}s ({pcnt.get('phones_replaced', 0)} replaced)  "
              f"phonenumbers {t_pn:.3f}s ({pn_n} found) = {t_pn / t_ph:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
