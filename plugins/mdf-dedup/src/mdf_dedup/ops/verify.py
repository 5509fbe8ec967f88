"""``minhash_dedup(verify: true)``: a band collision counts only if the signatures agree enough.

LSH flags pairs whose similarity is *near* the threshold: the S-curve lets some pairs below it through. With
``verify``, each row's band keys go to a multi-index of the key state (``KeyState.nearest`` with every entry a
match: it returns, per band key, the first row that had it, idempotently per position), each row's signature is
stored in compact form (the low 8 bits of every value: ``num_perm`` bytes), and a flagged row is a duplicate
only if the estimated Jaccard similarity to one of the rows that had its bands first reaches the threshold.

With 8-bit values two unrelated signatures agree on 1/256 of the values by chance, so the estimate is
``(agree - 1/256) / (1 - 1/256)`` (b-bit MinHash, Li and König 2010).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from mdf import BatchContext
from mdf.state.bucket import NO_MATCH
from mdf.state.cluster import positions as row_positions

CHANCE = 1 / 256


def verified_duplicates(op: Any, batch: pa.RecordBatch, ctx: BatchContext) -> np.ndarray:
    """Boolean per row: a duplicate of an earlier row by band *and* by estimated Jaccard >= threshold."""
    from mdf_kernels import lsh_band_keys

    n, bands, num_perm = batch.num_rows, op.bands, op.params.num_perm
    sigs = op.signatures(batch)
    valid = sigs.is_valid().to_numpy(zero_copy_only=False)
    compact = (sigs.values.to_numpy(zero_copy_only=False).reshape(n, num_perm) & 0xFF).astype(np.uint8)
    keys = lsh_band_keys(sigs, bands, op.rows).fill_null(0).to_numpy(zero_copy_only=False)
    rows = row_positions(ctx.shard_index, ctx.row_offset, n)
    key_valid = np.repeat(valid, bands)
    key_rows = np.repeat(rows, bands)
    owners = np.full(n * bands, NO_MATCH, dtype=np.uint64)
    if key_valid.any():
        zeros = np.zeros(int(key_valid.sum()), dtype=np.uint64)
        owners[key_valid] = op.state.nearest(f"{op.namespace}/bands", keys[key_valid], zeros, key_rows[key_valid], 64)
    op.state.put_payloads(f"{op.namespace}/sigs", rows[valid], compact[valid])
    hit = owners != NO_MATCH
    if not hit.any():
        return np.zeros(n, dtype=bool)
    pairs = np.unique(np.stack([np.arange(n * bands)[hit] // bands, owners[hit]], axis=1), axis=0)
    row_idx, owner_pos = pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.uint64)
    owner_sigs, found = op.state.get_payloads(f"{op.namespace}/sigs", owner_pos, num_perm)
    agree = (compact[row_idx] == owner_sigs).mean(axis=1)
    jaccard = np.where(found, (agree - CHANCE) / (1 - CHANCE), 1.0)  # no signature stored: trust the bands
    best = np.zeros(n)
    np.maximum.at(best, row_idx, jaccard)
    return best >= op.params.threshold
