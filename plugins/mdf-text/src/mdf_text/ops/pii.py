"""``pii_refiner``: replace e-mail addresses, public IP addresses and (opt-in) phone numbers in text.

E-mails and IPv4 follow DataTrove 0.10.1's ``PIIFormatter`` (its e-mail pattern; IPv4 replaced only where
``ipaddress`` says global, private addresses kept). Beyond DataTrove, as Data-Juicer's ``clean_ip_mapper`` and
NeMo Curator's PII modifier do: IPv6 (same public-only policy, ``remove_ipv6``) and phone numbers (``phone``,
off by default: see ``pii_patterns`` for the forms and the traps they avoid).

E-mails are replaced by one RE2 pass over the column. IPs and phones need checks RE2 cannot do (boundaries,
is the address global, digit count), so a loose RE2 pattern first finds the rows that may hold one, and only
those rows are visited in Python. Replacement counts per kind go to the operator's counters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from mdf import Params, Refiner
from mdf_text.ops.pii_patterns import (
    IPV6,
    IPV6_CANDIDATE,
    PHONE,
    PHONE_CANDIDATE,
    ipv4_ok,
    ipv6_ok,
    phone_ok,
    substitute,
)

EMAIL = (
    r"\b[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:(?:[A-Za-z0-9](?:["
    r"A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?|\[(?:(?:25[0-5]|2[0-4][0-9]|["
    r"01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?|[A-Za-z0-9-]*[A-Za-z0-9]:)])"
)
IPV4 = r"(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
_IPV4_RX = re.compile(IPV4)
Fix = Callable[[str], tuple[str, int]]


class PiiRefiner(Refiner):
    """Replace e-mail addresses, public IPv4/IPv6 addresses and, if asked, phone numbers in text.

    E-mails and IPv4 as DataTrove's PIIFormatter; IPv6 with the same public-only rule; phones opt-in.
    """

    name = "pii_refiner"

    class Params(Params):
        column: str = Field("text", description="string column to clean")
        remove_emails: bool = Field(True, description="replace e-mail addresses")
        remove_ips: bool = Field(True, description="replace IPv4 addresses")
        remove_ipv6: bool = Field(True, description="replace IPv6 addresses (full, ::, IPv4-mapped, zone id)")
        only_remove_public_ips: bool = Field(
            True, description="replace only global addresses (ipaddress; IPv6 also within 2000::/3)"
        )
        phone: bool = Field(False, description="replace phone numbers (+CC, NANP, European national forms)")
        email_replacement: str = Field("email@example.com", description="what an e-mail address becomes")
        ip_replacement: str = Field("22.214.171.124", description="what an IPv4 address becomes")
        ipv6_replacement: str = Field("2001:db8::1", description="what an IPv6 address becomes")
        phone_replacement: str = Field("+1 555-0100", description="what a phone number becomes")

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        p = self.params
        idx = batch.schema.get_field_index(p.column)
        text = batch.column(idx)
        if p.remove_emails:
            n = pc.sum(pc.count_substring_regex(text, EMAIL)).as_py() or 0
            if n:
                self.metrics.count("emails_replaced", n)
                text = pc.replace_substring_regex(text, EMAIL, p.email_replacement)
        public = p.only_remove_public_ips
        ips: list[tuple[str, Fix, str]] = []  # one RE2 pass finds the rows of both IP kinds
        # IPv6 before IPv4, so the IPv4 tail of ::ffff:1.2.3.4 goes with its address
        if p.remove_ipv6:
            fix = substitute(IPV6, partial(ipv6_ok, public_only=public), p.ipv6_replacement)
            ips.append((IPV6_CANDIDATE, fix, "ipv6_replaced"))
        if p.remove_ips:
            fix = substitute(_IPV4_RX, partial(ipv4_ok, public_only=public), p.ip_replacement)
            ips.append((IPV4, fix, "ips_replaced"))
        if ips:
            text = self._visit(text, "|".join(c for c, _, _ in ips), [(f, n) for _, f, n in ips])
        if p.phone:
            fix = substitute(PHONE, phone_ok, p.phone_replacement)
            text = self._visit(text, PHONE_CANDIDATE, [(fix, "phones_replaced")])
        return batch.set_column(idx, batch.schema.field(idx), text)

    def _visit(self, text: pa.Array, candidate: str, fixes: list[tuple[Fix, str]]) -> pa.Array:
        """Run the ``fixes`` in turn on the rows RE2's ``candidate`` pattern matches; other rows are not touched."""
        cand = pc.fill_null(pc.match_substring_regex(text, candidate), False)
        if not pc.any(cand).as_py():
            return text
        new = pc.filter(text, cand).to_pylist()
        for fix, counter in fixes:
            replaced = 0
            for i, t in enumerate(new):
                new[i], n = fix(t)
                replaced += n
            if replaced:
                self.metrics.count(counter, replaced)
        return pc.replace_with_mask(text, cand, pa.array(new, text.type))
