"""The patterns ``pii_refiner`` matches, and the checks a regular expression cannot make.

Each kind has two patterns: a loose RE2 ``*_CANDIDATE`` that pyarrow runs over the whole column to find the few
rows that may hold one (RE2 has no lookaround, so it cannot see boundaries), and a Python ``re`` pattern with
the boundaries, run only on those rows, whose matches are then checked (``ipaddress`` for IPs, digit count and
groupings for phones). IP and phone candidates are rare in web text, so the Python part touches few rows.

IPv6: full, compressed (``::``), IPv4-mapped (``::ffff:1.2.3.4``) and with a zone id (``fe80::1%eth0``). A
match must parse with ``ipaddress``, which rejects times (``12:30:45``), 48-bit MAC addresses, key fingerprints
and C++ scopes (``std::vector``: a letter before ``::`` is no start). "Public" mirrors DataTrove's IPv4 rule
(``is_global``), narrowed to the allocated global unicast block 2000::/3 so ``a::b``-shaped identifiers stay;
an IPv4-mapped address is as public as the IPv4 address inside it.

Phones: international (``+CC`` then groups, optional ``(0)``), NANP (``(555) 123-4567``, ``555-123-4567``,
``555.123.4567`` with one separator throughout) and trunk-0 national forms (``030 12345678``, ``020 7946 0958``,
``01 23 45 67 89``, ``012 34 56 78``, ``03-1234-5678``). National forms without a trunk 0 (Spain, Poland,
Chinese mobiles) are not matched: written without ``+CC`` they look like any other digit groups. A match has 7
to 15 digits (E.164's maximum is 15), never sits inside a longer run of digits, letters, dots or hyphens (so
no ISBNs, versions, dates with ``.``/``-``, prices with ``,``), and a national form always has separators (a
bare ``0123456789`` is as likely an ID as a phone).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

# "::" next to a hex digit, or four groups: a time (12:30:45) has too few colons to make a row a candidate
IPV6_CANDIDATE = r"[0-9A-Fa-f]::|::[0-9A-Fa-f]|(?:[0-9A-Fa-f]{1,4}:){3}[0-9A-Fa-f]"
# each pattern opens with a one-character lookahead: ``re`` then skips most positions at once (3x on real text)
IPV6 = re.compile(
    r"(?=[0-9A-Fa-f:])(?<![\w.%])(?<![0-9A-Fa-f:]:)"  # not mid-address; "Address:2001:..." may start one
    r"(?=[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:)"  # two colons at least: no ``12:30``
    r"[0-9A-Fa-f:]{2,39}"
    r"(?:(?<=:)(?:\d{1,3}\.){3}\d{1,3})?"  # IPv4-mapped / -compatible tail
    r"(?:%[0-9A-Za-z_.\-]+)?"  # zone id
    r"(?![\w:]|\.\d)"
)

PHONE_CANDIDATE = r"\+\d|\d\d\d\)? ?[ .\-]?\d\d\d[ .\-]\d|0\d{1,5}\)?[ /\-.]\d\d"
# atomic groups: optional separators let a long digit run split many ways, and backtracking through them all
# took 60 ms per "+<46 digits>"; committing to the greedy split keeps a miss linear
_INTL = r"\+[1-9]\d{0,2}(?:[ .\-]?\(0\))?(?>(?:[ .\-]?(?:\(\d{1,4}\)|\d{1,6})){1,7})"
_NANP = r"(?:1[ .\-]?)?(?:\([2-9]\d\d\) ?\d{3}[ .\-]\d{4}|[2-9]\d\d(?P<s>[ .\-])\d{3}(?P=s)\d{4})"
_FR = r"0[1-9](?P<f>[ .\-])\d\d(?:(?P=f)\d\d){3}"
_NATIONAL = r"(?:\(0\d{1,4}\) ?|0\d{1,5}[ /\-])\d{3,10}(?:[ \-]\d{2,5}){0,2}"
_PAIRS = r"0\d{1,3}(?: \d\d){3}"  # Belgian and Dutch mobile groupings: 012 34 56 78, 0450 00 12 34
_PAREN = r"\([2-9]\d\d\) ?\d{3}[ .\-]\d{4}|\(0\d{1,4}\) ?\d{3,10}(?:[ \-]\d{2,5}){0,2}"
# a number opening with "(" may follow a word ("...@spokesman.com(509) 459-5382"), any other form may not
PHONE = re.compile(
    rf"(?=[+(\d])(?:(?<![\w+.,/\-])(?:{_INTL}|{_NANP}|{_FR}|{_NATIONAL}|{_PAIRS})|(?<![\d(])(?:{_PAREN}))"
    r"(?![\w]|[.,/\-]\d)",
)
_NOT_DIGIT = re.compile(r"\D")


def ipv4_ok(ip: str, public_only: bool) -> bool:
    """DataTrove's rule: an address that parses, and (by default) only a global one."""
    try:
        return not public_only or ipaddress.IPv4Address(ip).is_global
    except ValueError:
        return False


def ipv6_ok(ip: str, public_only: bool) -> bool:
    """An address ``ipaddress`` parses; with ``public_only``, global unicast (or a mapped global IPv4)."""
    if not ip.strip(":"):
        return False  # a bare "::" is punctuation in text before it is the unspecified address
    try:
        addr = ipaddress.IPv6Address(ip)
    except ValueError:
        return False
    if not public_only:
        return True
    mapped = addr.ipv4_mapped
    if mapped is not None:
        return mapped.is_global
    return addr.is_global and int(addr) >> 125 == 1  # 2000::/3, global unicast


def phone_ok(number: str) -> bool:
    """7 to 15 digits, not counting a ``(0)`` trunk marker after the country code."""
    digits = len(_NOT_DIGIT.sub("", number.replace("(0)", "", 1) if number.startswith("+") else number))
    return 7 <= digits <= 15


def substitute(pattern: re.Pattern[str], ok: Callable[[str], bool], repl: str) -> Callable[[str], tuple[str, int]]:
    """A function replacing every match of ``pattern`` that passes ``ok`` by ``repl``; returns the new text and
    how many it replaced."""

    def run(text: str) -> tuple[str, int]:
        n = 0

        def sub(m: re.Match[str]) -> str:
            nonlocal n
            if ok(m.group(0)):
                n += 1
                return repl
            return m.group(0)

        return pattern.sub(sub, text), n

    return run
