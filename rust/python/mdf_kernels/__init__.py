"""Native kernels for mdf over Apache Arrow.

Every function takes a ``pyarrow.Array`` or ``pyarrow.ChunkedArray`` (or any object exposing
``__arrow_c_array__``) and returns one contiguous ``pyarrow.Array`` without copying the input.
Heavy calls release the GIL and run on a pool of ``MDF_NUM_THREADS`` threads (default: all
cores; the variable is read at the first parallel call). See ``_native.pyi`` for the contract
of each function.
"""

from mdf_kernels._native import (
    C4_LINE_COUNTERS,
    ENV_NUM_THREADS,
    MAX_PIXELS,
    DomainSet,
    KeySet,
    KeySet128,
    NearIndex,
    c4_quality,
    domain_blocked,
    fineweb_quality,
    gopher_quality,
    gopher_repetition,
    hash64,
    hash128,
    html_extract,
    image_hashes,
    image_metadata,
    image_quality,
    image_thumbnails,
    lsh_band_keys,
    mih_block_keys,
    minhash,
    num_threads,
    optimal_bands_rows,
    registered_domain,
    sentence_count,
    text_words,
    union_find,
    url_host,
)

__all__ = [
    "C4_LINE_COUNTERS",
    "ENV_NUM_THREADS",
    "MAX_PIXELS",
    "DomainSet",
    "KeySet",
    "KeySet128",
    "NearIndex",
    "c4_quality",
    "domain_blocked",
    "fineweb_quality",
    "gopher_quality",
    "gopher_repetition",
    "hash64",
    "hash128",
    "html_extract",
    "image_hashes",
    "image_metadata",
    "image_quality",
    "image_thumbnails",
    "lsh_band_keys",
    "mih_block_keys",
    "minhash",
    "num_threads",
    "optimal_bands_rows",
    "registered_domain",
    "sentence_count",
    "text_words",
    "union_find",
    "url_host",
]
