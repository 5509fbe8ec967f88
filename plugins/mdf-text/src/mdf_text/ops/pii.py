"""``pii_refiner``: replace e-mail addresses and public IP addresses in text, as DataTrove 0.10.1's
``PIIFormatter`` does (its e-mail pattern; IPv4 replaced only where ``ipaddress`` says global).

E-mails are replaced by one RE2 pass over the column. IPv4 candidates need a check RE2 cannot do (is the
address global?), so only rows with a candidate are visited in Python, with DataTrove's own regex and
validator. Replacement counts go to the operator's counters.
"""

from __future__ import annotations

import ipaddress
import re

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import Field

from mdf import Params, Refiner

EMAIL = (
    r"\b[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:(?:[A-Za-z0-9](?:["
    r"A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?|\[(?:(?:25[0-5]|2[0-4][0-9]|["
    r"01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?|[A-Za-z0-9-]*[A-Za-z0-9]:)])"
)
IPV4 = r"(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
_IPV4_RX = re.compile(IPV4)


def _ip_ok(ip: str, public_only: bool) -> bool:
    try:
        return not public_only or ipaddress.ip_address(ip).is_global
    except ValueError:
        return False


class PiiRefiner(Refiner):
    """Replace e-mail addresses and public IPv4 addresses in text (DataTrove's PIIFormatter rules)."""

    name = "pii_refiner"

    class Params(Params):
        column: str = Field("text", description="string column to clean")
        remove_emails: bool = Field(True, description="replace e-mail addresses")
        remove_ips: bool = Field(True, description="replace IPv4 addresses")
        only_remove_public_ips: bool = Field(True, description="replace only global addresses (ipaddress)")
        email_replacement: str = Field("email@example.com", description="what an e-mail address becomes")
        ip_replacement: str = Field("22.214.171.124", description="what an IP address becomes")

    def refine(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        p = self.params
        idx = batch.schema.get_field_index(p.column)
        text = batch.column(idx)
        if p.remove_emails:
            n = pc.sum(pc.count_substring_regex(text, EMAIL)).as_py() or 0
            if n:
                self.metrics.count("emails_replaced", n)
                text = pc.replace_substring_regex(text, EMAIL, p.email_replacement)
        if p.remove_ips:
            text = self._replace_ips(text)
        return batch.set_column(idx, batch.schema.field(idx), text)

    def _replace_ips(self, text: pa.Array) -> pa.Array:
        cand = pc.fill_null(pc.match_substring_regex(text, IPV4), False)
        if not pc.any(cand).as_py():
            return text
        rows = pc.indices_nonzero(cand)
        replaced = 0

        def sub(m: re.Match[str]) -> str:
            nonlocal replaced
            if _ip_ok(m.group(0), self.params.only_remove_public_ips):
                replaced += 1
                return self.params.ip_replacement
            return m.group(0)

        new = [_IPV4_RX.sub(sub, t) for t in pc.take(text, rows).to_pylist()]
        self.metrics.count("ips_replaced", replaced)
        return pc.replace_with_mask(text, cand, pa.array(new, text.type))
