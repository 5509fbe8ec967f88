"""``minhash_dedup(verify: true)``: a band collision counts only if the signatures agree enough.

LSH flags pairs whose similarity is *near* the threshold: the S-curve lets some pairs below it through. With
``verify``, each row's band keys go to a :class:`~mdf_dedup.state.BandOwners` state (per band key, the first
row that had it), each row's signature is stored in compact form (the low 8 bits of every value: ``num_perm``
bytes, :class:`~mdf_dedup.state.Signatures`), and a flagged row is a duplicate only if the estimated Jaccard
similarity to one of the rows that had its bands first reaches the threshold.

With 8-bit values two unrelated signatures agree on 1/256 of the values by chance, so the estimate is
``(agree - 1/256) / (1 - 1/256)`` (b-bit MinHash, Li and König 2010).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from mdf import NO_MATCH, as_numpy
from mdf_dedup.state import BandOwners, Signatures

CHANCE = 1 / 256


def verified_matches(op: Any, batch: pa.RecordBatch, rows: np.ndarray) -> np.ndarray:
    """Per row: the position of the earlier row it duplicates by band *and* by estimated Jaccard >= threshold
    (the most similar of the rows that owned its bands), or ``NO_MATCH``."""
    from mdf_kernels import lsh_band_keys

    n, bands, num_perm, state = batch.num_rows, op.bands, op.params.num_perm, op.state
    sigs = op.signatures(batch)
    valid = as_numpy(sigs.is_valid())
    compact = (as_numpy(sigs.values).reshape(n, num_perm) & 0xFF).astype(np.uint8)
    keys = as_numpy(lsh_band_keys(sigs, bands, op.rows).fill_null(0))
    key_valid = np.repeat(valid, bands)
    key_rows = np.repeat(rows, bands)
    owners = np.full(n * bands, NO_MATCH, dtype=np.uint64)
    if key_valid.any():
        kv, rv = keys[key_valid], key_rows[key_valid]
        pieces = state.request(BandOwners, f"{op.namespace}/bands", "owners", kv, (kv, rv))
        found = state.gather(pieces, np.empty(len(kv), dtype=np.uint64))
        owners[key_valid] = np.where(found == rv, NO_MATCH, found)  # its own band: no earlier row had it
    state.request(Signatures, f"{op.namespace}/sigs", "put", rows[valid], (rows[valid], compact[valid]))
    match = np.full(n, NO_MATCH, dtype=np.uint64)
    hit = owners != NO_MATCH
    if not hit.any():
        return match
    pairs = np.unique(np.stack([np.arange(n * bands)[hit] // bands, owners[hit]], axis=1), axis=0)
    row_idx, owner_pos = pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.uint64)
    pieces = state.request(Signatures, f"{op.namespace}/sigs", "get", owner_pos, (owner_pos,), num_perm)
    owner_sigs = state.gather([(ix, s) for ix, (s, _) in pieces], np.zeros((len(owner_pos), num_perm), np.uint8))
    found = state.gather([(ix, f) for ix, (_, f) in pieces], np.zeros(len(owner_pos), dtype=bool))
    agree = (compact[row_idx] == owner_sigs).mean(axis=1)
    jaccard = np.where(found, (agree - CHANCE) / (1 - CHANCE), 1.0)  # no signature stored: trust the bands
    best = np.full(n, -1.0)
    np.maximum.at(best, row_idx, jaccard)
    dup = best >= op.params.threshold
    # the owner it agrees with best (the smallest such position on a tie)
    order = np.lexsort((owner_pos, -jaccard, row_idx))
    first = np.unique(row_idx[order], return_index=True)[1]
    match[row_idx[order][first]] = owner_pos[order][first]
    match[~dup] = NO_MATCH
    return match
