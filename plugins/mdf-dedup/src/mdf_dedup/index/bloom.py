"""``index_kind: bloom``: the index as Bloom filters of the keys (Dolma-style), where memory matters more than
exactness.

Each generation writes, per bucket file, a filter sized for the keys it adds: ``m = -n ln p / (ln 2)^2`` bits
and ``k = round(m / n * ln 2)`` probes (1.44 log2(1/p) bits a key: 1.8 bytes at p = 0.001), a bit array saved as
``.npy`` (``np.packbits``, little bit order; memory-mapped when local). The keys are already xxh3-64 hashes, so
the probes are double hashing (Kirsch and Mitzenmacher 2006) over the two halves of a splitmix64 mix of the
key, all numpy arrays: no per-key Python. A key is asked only of the file of its own bucket (``key % m == f``), once per
generation: the chance that a key no run added is taken for one is about ``p`` times the generations holding
that bucket's keys. A filter has no false negatives and keeps no source ids (``_duplicate_of`` is null), and
generations cannot be merged (``mdf index compact`` refuses).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mdf import OperatorError
from mdf_dedup.index.files import IndexFiles, publish_hashed

CHUNK = 1 << 16  # keys probed at once: their k positions (~5 MiB) stay in cache; 1 << 20 was 5x slower
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MAX_BITS = 1 << 32  # a filter file's bits: 512 MiB (the probes are 32-bit)


def shape(keys: int, rate: float) -> tuple[int, int]:
    """Bits and probes of a filter holding ``keys`` keys at false-positive rate ``rate``."""
    bits = max(64, math.ceil(-max(keys, 1) * math.log(rate) / math.log(2) ** 2))
    if bits > MAX_BITS:
        raise OperatorError(f"a Bloom filter for {keys:,} keys at false_positive_rate {rate} needs {bits:,} bits, "
                            f"over {MAX_BITS:,} a file; use more state buckets (state: num_buckets)")  # fmt: skip
    return bits, max(1, round(bits / max(keys, 1) * math.log(2)))


def expected_rate(keys: int, bits: int, probes: int) -> float:
    """The false-positive rate of a filter of ``bits`` bits and ``probes`` probes holding ``keys`` keys."""
    return (1 - math.exp(-probes * keys / bits)) ** probes


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every output bit depends on every input bit (uint64 arithmetic wraps)."""
    z = x + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _probes(keys: np.ndarray, bits: int, probes: int) -> np.ndarray:
    """Bit positions, ``(len(keys), probes)``: ``g_i = h1 + i * h2`` in 32 bits, mapped onto ``[0, bits)`` by
    ``g_i * bits >> 32`` (Lemire's multiply-shift: no division)."""
    h = _mix(np.asarray(keys, dtype=np.uint64))
    h1 = (h >> np.uint64(32)).astype(np.uint32)
    g = np.multiply.outer(h.astype(np.uint32) | np.uint32(1), np.arange(probes, dtype=np.uint32))
    g += h1[:, None]  # wraps mod 2**32
    pos = g.astype(np.uint64)
    pos *= np.uint64(bits)
    pos >>= np.uint64(32)
    return pos.astype(np.intp)


def build(keys: np.ndarray, bits: int, probes: int) -> np.ndarray:
    """The packed filter (``uint8``, little bit order) of ``keys``."""
    flags = np.zeros(bits, dtype=bool)
    for start in range(0, len(keys), CHUNK):
        flags[_probes(keys[start : start + CHUNK], bits, probes).ravel()] = True
    return np.packbits(flags, bitorder="little")


def test(packed: np.ndarray, bits: int, probes: int, keys: np.ndarray) -> np.ndarray:
    """Per key: every probed bit is set (the key may be in the filter; ``False``: it is not)."""
    out = np.empty(len(keys), dtype=bool)
    for start in range(0, len(keys), CHUNK):
        pos = _probes(keys[start : start + CHUNK], bits, probes)
        byte = np.take(packed, pos >> 3)  # np.take: 5x faster than packed[...] on a memory map
        byte >>= (pos & 7).astype(np.uint8)
        out[start : start + CHUNK] = (byte & 1).all(axis=1)
    return out


def filter_file(gen: dict[str, Any], bucket: int) -> str:
    return f"{gen['id']}/b{bucket:04d}-of-{gen['buckets']:04d}.bloom.npy"


def write_bloom(files: IndexFiles, gen: dict[str, Any], bucket: int, keys: np.ndarray, rate: float) -> dict[str, Any]:
    """Write one bucket's filter of its new keys; the manifest entry that lists it (bits, probes)."""
    bits, probes = shape(len(keys), rate)
    packed = build(keys, bits, probes)
    key_bytes, key_sum = publish_hashed(files, filter_file(gen, bucket), lambda f: np.save(f, packed))
    return {"bucket": bucket, "keys": len(keys), "key_bytes": key_bytes, "source_bytes": 0, "bits": bits,
            "probes": probes, "key_xxh3": key_sum}  # fmt: skip


class LoadedBloom:
    """The filters of every generation (but those of ``skip_run``) that bucket ``bucket`` of ``buckets`` asks:
    :class:`~mdf_dedup.index.store.LoadedIndex`'s interface, without source ids."""

    def __init__(self, files: IndexFiles, manifest: dict[str, Any], bucket: int, buckets: int, skip_run: Any) -> None:
        self.files = files
        self.parts: list[tuple[np.ndarray, int, int, int, int, int]] = []  # filter, m, f, bits, probes, keys
        for gen in manifest["generations"]:
            if gen["run"] == skip_run:
                continue
            m = gen["buckets"]
            for entry in gen["files"]:
                f = entry["bucket"]
                # file f holds keys % m == f; this bucket's keys have key % buckets == bucket: both can hold
                # when f and bucket agree modulo gcd(m, buckets)
                if (f - bucket) % math.gcd(m, buckets) == 0:
                    self._load(gen, entry, m)

    def _load(self, gen: dict[str, Any], entry: dict[str, Any], m: int) -> None:
        name = filter_file(gen, entry["bucket"])
        size = self.files.size(name)
        if size != entry["key_bytes"]:
            what = "missing" if size is None else f"truncated or altered ({size} bytes, the manifest says " \
                f"{entry['key_bytes']})"  # fmt: skip
            raise OperatorError(f"index generation file {self.files.path(name)} is {what}; restore it, or rebuild "
                                "the index")  # fmt: skip
        packed = self.files.load_keys(name, entry["key_bytes"], entry.get("key_xxh3"))
        self.parts.append((packed, m, entry["bucket"], entry["bits"], entry["probes"], entry["keys"]))

    def __len__(self) -> int:
        return sum(p[5] for p in self.parts)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Per key: a filter of its bucket file says it may be there (never ``False`` for a key a run added)."""
        found = np.zeros(len(keys), dtype=bool)
        for packed, m, f, bits, probes, _ in self.parts:
            ask = np.flatnonzero(~found & (keys % np.uint64(m) == f))
            if len(ask):
                found[ask] = test(packed, bits, probes, keys[ask])
        return found

    def memory_bytes(self) -> int:
        """Bytes of the filters (memory-mapped locally, read whole from object storage)."""
        return sum(p[0].nbytes for p in self.parts)
