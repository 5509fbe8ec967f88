"""Type stub and contract of ``mdf_kernels._native``.

Common rules
------------
* Array arguments accept a ``pyarrow.Array``, a ``pyarrow.ChunkedArray`` or any object that
  implements ``__arrow_c_array__``. Input data is read in place (zero copy, offsets of sliced
  arrays respected); the result is always one contiguous ``pyarrow.Array`` with one row per
  input row (``lsh_band_keys``: ``bands`` rows per input row).
* Null input rows give null output rows unless a function says otherwise.
* Errors: a wrong Arrow or Python type raises ``TypeError``, a bad value ``ValueError``; both
  messages start with the kernel name (``"hash64: ..."``). An internal bug raises
  ``RuntimeError("<kernel>: internal error ...")``; no Rust panic reaches Python.
* Heavy calls release the GIL and run on a rayon pool of ``MDF_NUM_THREADS`` threads
  (default: all cores), read once at the first call that needs the pool. With one thread
  there is no pool: each call runs on the thread that made it (a caller that is another rayon pool's
  worker runs it on one shared thread instead).

Text normalisation (``normalize=`` of ``hash64``/``hash128``, and MinHash shingling)
-------------------------------------------------------------------------------------
* ``"lower"``: Unicode lowercase (full case mapping; final sigma handled).
* ``"nfc_ws"``: Unicode NFC, then lowercase, then every run of Unicode ``White_Space``
  characters becomes one space, and leading/trailing whitespace is removed.
* ``"alnum"``: like ``"nfc_ws"``, but characters of general category P* (punctuation) and
  S* (symbols) are deleted before whitespace is collapsed: ``"Don't -- stop!"`` ->
  ``"dont stop"``. Letters, marks, numbers and control characters are kept.
Invalid UTF-8 in a string column is decoded with U+FFFD replacement before normalising.
"""

from collections.abc import Iterable
from typing import Any, Literal, final

import pyarrow as pa

__all__ = [
    "C4_LINE_COUNTERS",
    "ENV_NUM_THREADS",
    "MAX_PIXELS",
    "DomainSet",
    "FastTextModel",
    "KeySet",
    "KeySet128",
    "NearIndex",
    "SortedKeys",
    "TextTokenizer",
    "WarcScanner",
    "c4_quality",
    "domain_blocked",
    "fineweb_quality",
    "gopher_quality",
    "gopher_repetition",
    "hash64",
    "hash128",
    "html_block_features",
    "html_block_model",
    "html_blocks",
    "html_extract",
    "image_hashes",
    "image_metadata",
    "image_quality",
    "image_thumbnails",
    "lsh_band_keys",
    "merge_sorted_runs",
    "mih_block_keys",
    "minhash",
    "num_threads",
    "optimal_bands_rows",
    "registered_domain",
    "sentence_count",
    "sort_unique_pairs",
    "text_words",
    "union_find",
    "url_host",
    "url_verdicts",
]

# Stub-only aliases (private: the extension module has no such names).
_ArrayLike = pa.Array | pa.ChunkedArray | Any
_Normalize = Literal["lower", "nfc_ws", "alnum"] | None

ENV_NUM_THREADS: str
"""Name of the environment variable that sizes the kernel thread pool (``"MDF_NUM_THREADS"``)."""

def num_threads() -> int:
    """Number of threads of the kernel pool (starts the pool if needed; 1: calls run on their
    callers).

    Raises ``ValueError`` if ``MDF_NUM_THREADS`` is set to something other than a positive integer.
    """

def hash64(arr: _ArrayLike, normalize: _Normalize = None) -> pa.UInt64Array:
    """xxh3-64 (seed 0) of every row, equal to ``xxhash.xxh3_64_intdigest(row_bytes)``.

    :param arr: string, large_string, binary or large_binary column. Strings are hashed as
        their UTF-8 bytes, binary rows as their raw bytes.
    :param normalize: ``None`` (hash as is), ``"lower"``, ``"nfc_ws"`` or ``"alnum"`` (see the
        module docstring); the hash is then ``xxh3_64(normalized.encode())``. Only allowed on
        string columns: on binary columns it raises ``ValueError``.
    :returns: ``uint64`` array; null rows stay null.
    """

def hash128(arr: _ArrayLike, normalize: _Normalize = None) -> pa.FixedSizeBinaryArray:
    """xxh3-128 (seed 0) of every row as 16 bytes, equal to ``xxhash.xxh3_128_digest(row_bytes)``
    (big-endian, the canonical xxHash digest).

    Arguments as for :func:`hash64`.

    :returns: ``fixed_size_binary(16)`` array; null rows stay null.
    """

def url_host(urls: _ArrayLike) -> pa.StringArray:
    """Host of every URL, as ``urllib.parse.urlsplit(url).hostname`` (CPython 3.11+) gives it.

    Leading C0 controls/spaces are stripped and tab/CR/LF removed as ``urlsplit`` does; the host
    is lowercased, userinfo and port are dropped and IPv6 brackets removed (an IPv6 zone id after
    ``%`` keeps its case). A URL without ``//`` netloc (``"example.com/x"``, ``"mailto:a@b"``)
    has no host.

    :param urls: string or large_string column (binary is read as UTF-8; invalid UTF-8 gives null).
    :returns: ``string`` array; null where the input is null, there is no host, or ``urlsplit``
        would raise ``ValueError`` (unbalanced brackets, invalid bracketed IP, NFKC-unsafe netloc).
    """

def registered_domain(hosts: _ArrayLike) -> pa.StringArray:
    """Registrable domain (public suffix + one label) of every host, using the Public Suffix
    List compiled into the crate (``psl`` crate; ICANN and private sections, so
    ``a.b.github.io`` -> ``b.github.io``). Hosts are lowercased and trailing dots stripped first;
    an unlisted TLD counts as a public suffix (PSL default rule ``*``).

    :param hosts: string or large_string column of host names (e.g. from :func:`url_host`).
    :returns: ``string`` array; null for null hosts, IP addresses, hosts that are themselves a
        public suffix (``co.uk``) and empty hosts.
    """

@final
class DomainSet:
    """Immutable set of domains for :func:`domain_blocked`.

    :param domains: iterable of ``str`` (or a pyarrow string array; nulls skipped). Each domain
        is stripped of surrounding whitespace, lowercased and stripped of trailing dots; empty
        entries are ignored. A single ``str`` is rejected with ``TypeError``.
    """

    def __new__(cls, domains: Iterable[str] | pa.Array | pa.ChunkedArray) -> DomainSet: ...
    def __len__(self) -> int:
        """Number of distinct domains."""
    def __contains__(self, domain: str, /) -> bool:
        """Exact membership of the canonical form of ``domain`` (parents are not checked)."""

def domain_blocked(hosts: _ArrayLike, domain_set: DomainSet) -> pa.BooleanArray:
    """Whether each host or one of its parent domains is in ``domain_set``.

    ``a.b.c.com`` checks ``a.b.c.com``, ``b.c.com``, ``c.com`` and ``com``. Hosts are lowercased
    and trailing dots stripped before the lookup. Typical use:
    ``domain_blocked(url_host(urls), DomainSet(blocklist))``.

    :param hosts: string or large_string column.
    :param domain_set: a :class:`DomainSet`.
    :returns: ``bool`` array; null host -> null; empty host or invalid UTF-8 -> ``False``.
    """

def url_verdicts(urls: _ArrayLike, domain_set: DomainSet) -> pa.UInt8Array:
    """``url_filter``'s decision for every URL in one pass, without a host column: ``0`` keep,
    ``1`` bad URL (no host as :func:`url_host` gives it, or, less its trailing dots, an empty one
    or one holding tab, LF, FF, CR, space or one of ``<>"{}|\\^`%``), ``2`` blocked (the host or
    a parent domain is in ``domain_set``, as :func:`domain_blocked`).

    :param urls: string or large_string column (binary is read as UTF-8; invalid UTF-8 is a bad URL).
    :param domain_set: a :class:`DomainSet`.
    :returns: ``uint8`` array without nulls (a null URL is a bad URL).
    """

def minhash(
    texts: _ArrayLike,
    num_perm: int = 128,
    ngram: int = 5,
    tokenizer: Literal["word", "char"] = "word",
    seed: int = 1,
) -> pa.FixedSizeListArray:
    """MinHash signature of every text.

    Shingling: the text is normalised as with ``normalize="alnum"`` (NFC, lowercase,
    punctuation and symbols deleted, whitespace collapsed to single spaces, trimmed).

    * ``tokenizer="word"``: shingles are the ``ngram`` consecutive tokens (whitespace-separated
      words) of the normalised text, joined by single spaces.
    * ``tokenizer="char"``: shingles are the ``ngram`` consecutive characters (code points) of
      the normalised text, spaces included.
    * A text with fewer than ``ngram`` tokens (characters) gives exactly one shingle: the whole
      normalised text. An empty normalised text gives no shingle and a signature of all
      ``0xFFFFFFFF``.

    Hashing scheme: each shingle is hashed once, ``x = xxh3_64(shingle.encode()) & 0xFFFFFFFF``;
    permutation ``i`` is ``h_i(x) = ((a_i * x + b_i) mod 2**64) >> 32`` (multiply-add-shift, a
    strongly universal family for 32-bit keys) and ``signature[i] = min(h_i(x) for x in shingles)``.
    ``a_0, b_0, a_1, b_1, ...`` are consecutive outputs of SplitMix64 seeded with ``seed``.
    The fraction of equal positions of two signatures estimates the Jaccard similarity of the
    two shingle sets (standard error ``sqrt(J(1-J)/num_perm)``). Signatures are only comparable
    when ``num_perm``, ``ngram``, ``tokenizer`` and ``seed`` are equal.

    :param texts: string or large_string column (binary is decoded as UTF-8, lossy).
    :param num_perm: signature length, 1..65536.
    :param ngram: shingle size in tokens or characters, >= 1.
    :param tokenizer: ``"word"`` or ``"char"``.
    :param seed: 0 <= seed < 2**64.
    :returns: ``fixed_size_list<item: uint32>[num_perm]``; null text -> null signature.
    """

def lsh_band_keys(signatures: _ArrayLike, bands: int, rows: int) -> pa.UInt64Array:
    """LSH band keys of MinHash signatures.

    Band ``j`` of a signature covers values ``[j*rows, (j+1)*rows)``. Its key holds ``j`` in the
    top ``B = ceil(log2(bands))`` bits and ``xxh3_64`` (seed 0) of the band's values as
    little-endian uint32 bytes, shifted right by ``B``, in the rest: keys of different bands
    never collide, equal bands in the same position always collide.

    :param signatures: ``fixed_size_list<uint32>[num_perm]`` column, as :func:`minhash` returns.
    :param bands: number of bands, >= 1.
    :param rows: values per band, >= 1; ``bands * rows <= num_perm`` or ``ValueError``.
    :returns: ``uint64`` array of length ``len(signatures) * bands``, row-major: the key of
        signature ``i`` band ``j`` is at ``i * bands + j``. A null signature gives ``bands`` nulls.
    """

def optimal_bands_rows(
    threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5
) -> tuple[int, int]:
    """``(bands, rows)`` with ``bands * rows <= num_perm`` minimising
    ``fp_weight * ∫_0^t P(s) ds + fn_weight * ∫_t^1 (1 - P(s)) ds`` where
    ``P(s) = 1 - (1 - s**rows)**bands`` is the probability that two documents of Jaccard
    similarity ``s`` share a band key, and ``t = threshold`` (as datasketch's ``MinHashLSH``;
    integrals by composite Simpson's rule with 1000 intervals).

    :param threshold: Jaccard threshold in (0, 1).
    :param num_perm: signature length, 1..65536.
    :param fp_weight: weight of false positives, >= 0.
    :param fn_weight: weight of false negatives, >= 0 (not both 0).
    """

def merge_sorted_runs(keys: _ArrayLike, values: _ArrayLike) -> tuple[pa.UInt64Array, pa.UInt64Array]:
    """Merge sorted runs of keys: every key once, ascending, with the value of its first occurrence.

    A run is one chunk: ``pyarrow.chunked_array([run_0, run_1, ...])`` (no copy of numpy arrays). On
    equal keys the earlier run's value wins, and within a run the first. Key ranges are merged in
    parallel on the kernel pool.

    :param keys: uint64 chunks, each sorted ascending (``ValueError`` naming the first that is not),
        no nulls.
    :param values: uint64 or uint32 chunks of the same lengths as ``keys``' (``ValueError`` if not),
        no nulls.
    :returns: ``(keys, values)``: ``uint64`` arrays of equal length, keys strictly increasing.
    """

def sort_unique_pairs(keys: _ArrayLike, values: _ArrayLike) -> tuple[pa.UInt64Array, pa.UInt64Array | pa.UInt32Array]:
    """Sort keys with a value each: every key once, ascending, with the value of its first occurrence.

    The keys need no order (``merge_sorted_runs`` is for runs already sorted). The input may be chunked
    (``pyarrow.chunked_array([batch_0, batch_1, ...])``, no copy of numpy arrays): on equal keys the earlier
    chunk's value wins, and within a chunk the first. Made for hashed keys: they are split by their top bits
    into parts of ~32 K keys, sorted side by side on the kernel pool; other keys sort too, more slowly.

    :param keys: uint64, no nulls.
    :param values: uint64 or uint32 chunks of the same lengths as ``keys``' (``ValueError`` if not), no nulls.
    :returns: ``(keys, values)`` of equal length, keys (``uint64``) strictly increasing; values ``uint32`` when
        every chunk given was, else ``uint64``.
    """

def union_find(left: _ArrayLike, right: _ArrayLike, num_nodes: int | None = None) -> pa.UInt64Array:
    """Connected components of the undirected graph with edges ``(left[k], right[k])``.

    Union by rank with path compression. The component id of a node is the smallest node
    index in its component, so the result does not depend on edge order.

    :param left: int32/int64/uint32/uint64 column of node indices (no nulls, no negatives).
    :param right: same type rules and same length as ``left``.
    :param num_nodes: number of nodes ``n``; default ``max(left, right) + 1`` (0 without edges).
        Every index must be ``< n`` or ``ValueError``.
    :returns: ``uint64`` array of length ``n``; element ``i`` is the id of node ``i``'s component.
    """

@final
class KeySet:
    """Insert-only set of 64-bit keys (e.g. :func:`hash64` values) for exact deduplication.

    Open addressing with linear probing: 10.7-21.3 bytes a key. Not thread-safe for concurrent
    mutation from several Python threads (a concurrent call raises ``RuntimeError``: already
    borrowed). Picklable (through :meth:`to_bytes`).

    :param capacity: number of keys to hold without growing (0..2**40); ``None`` or 0 allocates at
        the first insert and grows by doubling.
    """

    def __new__(cls, capacity: int | None = None) -> KeySet: ...
    def insert_new(self, keys: _ArrayLike) -> pa.BooleanArray:
        """Insert ``keys`` (uint64, or int64 read bit for bit) and say which were new.

        :returns: ``bool`` array: ``True`` where the key was not in the set before this key was
            inserted, so a key repeated within ``keys`` is ``True`` only at its first occurrence.
            Null keys are not inserted and give null.
        """
    def contains(self, keys: _ArrayLike) -> pa.BooleanArray:
        """Membership of each key (uint64 or int64); null keys give null."""
    def __len__(self) -> int: ...
    def memory_bytes(self) -> int:
        """Bytes held by the set's table."""
    def to_bytes(self) -> bytes:
        """Snapshot: ``b"MDFKSET\\0"``, u32 format version (1), u32 key width in bytes,
        u64 key count, then the keys little-endian (all integers little-endian)."""
    @staticmethod
    def from_bytes(data: bytes) -> KeySet:
        """Rebuild a set from :meth:`to_bytes`; ``ValueError`` on a corrupt or 128-bit snapshot."""

@final
class KeySet128:
    """Like :class:`KeySet` for 128-bit keys given as ``fixed_size_binary(16)`` (e.g.
    :func:`hash128` values); 16 bytes a slot, 21.3-42.7 bytes a key. ``capacity`` as for
    :class:`KeySet`."""

    def __new__(cls, capacity: int | None = None) -> KeySet128: ...
    def insert_new(self, keys: _ArrayLike) -> pa.BooleanArray:
        """As :meth:`KeySet.insert_new`, keys ``fixed_size_binary(16)``."""
    def contains(self, keys: _ArrayLike) -> pa.BooleanArray:
        """Membership of each ``fixed_size_binary(16)`` key; null keys give null."""
    def __len__(self) -> int: ...
    def memory_bytes(self) -> int: ...
    def to_bytes(self) -> bytes:
        """Snapshot in the :meth:`KeySet.to_bytes` format with key width 16."""
    @staticmethod
    def from_bytes(data: bytes) -> KeySet128: ...

@final
class SortedKeys:
    """Lookups in a sorted ``uint64`` array, in place: the array is kept, not copied (a
    memory-mapped file stays in the page cache, shared by every process that maps it).

    A directory of where each run of the keys' top bits starts (8 bytes an entry, one entry per 8-16
    keys: at most a byte a key) leaves a binary search of one or two cache lines a lookup when
    the keys are hashes; other keys are still found, by longer searches.

    :param keys: one ``uint64`` array (not chunked), no nulls, ascending (repeats allowed);
        ``ValueError`` names the first key out of order.
    """

    def __new__(cls, keys: _ArrayLike) -> SortedKeys: ...
    def contains(self, queries: _ArrayLike) -> pa.BooleanArray:
        """Whether the keys hold each query (uint64, or int64 read bit for bit); a null query gives
        null."""
    def locate(self, queries: _ArrayLike) -> pa.Int64Array:
        """The position of the first key equal to each query, or -1 (also for a null query)."""
    def __len__(self) -> int: ...
    def memory_bytes(self) -> int:
        """Bytes of the directory (the keys are the caller's)."""

@final
class NearIndex:
    """State of a Hamming-distance near-duplicate search by multi-index hashing (one bucket of it).

    Maps a block key to the ``(hash, position)`` entries inserted under it, in insertion order.
    Entries take 16 bytes plus list and map overhead. Picklable (through :meth:`to_bytes`).
    """

    def __new__(cls) -> NearIndex: ...
    def query_insert(
        self, keys: _ArrayLike, hashes: _ArrayLike, positions: _ArrayLike, max_distance: int, stride: int = 1
    ) -> pa.UInt64Array:
        """For each ``i`` in order: the smallest position among entries under ``keys[i]`` whose hash
        is within ``max_distance`` bits of ``hashes[i]`` and that were inserted before
        ``positions[i]``'s own entry (all entries if it has none yet), or null; then insert
        ``(hashes[i], positions[i])`` under ``keys[i]`` unless that position is already there. So a
        repeated call for the same positions (a retried batch) answers as the first one did.

        :param keys: uint64 block keys (no nulls).
        :param hashes: uint64 hashes, one per key.
        :param positions: uint64 row positions, one per key (unique per row across the run).
        :param max_distance: 0..64 bits.
        :param stride: entries per row (several hashes of one image at positions ``row * stride + c``);
            entries with equal ``position // stride`` never match each other.
        """
    def __len__(self) -> int:
        """Entries held."""
    def memory_bytes(self) -> int:
        """Approximate heap bytes."""
    def to_bytes(self) -> bytes:
        """Snapshot: ``b"MDFNEAR\\0"``, u64 key count, then per key: u64 key, u64 entry count and the
        entries as (u64 hash, u64 position), all little-endian."""
    @staticmethod
    def from_bytes(data: bytes) -> NearIndex:
        """Rebuild from :meth:`to_bytes`; ``ValueError`` on a corrupt snapshot."""

# --- Images -----------------------------------------------------------------------------------
#
# Common rules of the image kernels
# * ``blobs`` is a binary or large_binary column (string columns are read as bytes) of encoded
#   JPEG, PNG, WebP or GIF files; other formats (BMP, TIFF, ...) give ``"unsupported_format"``.
# * A bad row never raises: its struct row is valid, ``error`` says why and every other field is
#   null. Errors: ``"empty"`` (zero bytes), ``"unsupported_format"`` (unknown magic bytes),
#   ``"too_many_pixels"`` (``width * height > max_pixels``), ``"decode_error: <what>"`` (a
#   truncated or invalid header or pixel stream). A null input row gives a null output row.
# * ``max_pixels=None`` means :data:`MAX_PIXELS`. The header is parsed and the pixel count checked
#   before any pixel buffer is allocated, so a decompression bomb costs microseconds.
# * EXIF orientation is reported by :func:`image_metadata` but not applied: quality, hashes and
#   thumbnails see the stored pixel orientation (as ``PIL.Image.open`` without ``exif_transpose``).
# * Animated GIF and WebP: the first frame (GIF: on its logical screen, as Pillow's frame 0).

MAX_PIXELS: int
"""Default pixel-count limit (178,956,970): the size above which Pillow raises
``DecompressionBombError`` (``2 * Image.MAX_IMAGE_PIXELS``)."""

def image_metadata(blobs: _ArrayLike, max_pixels: int | None = None) -> pa.StructArray:
    """Header-only metadata (no pixel is decoded).

    :returns: ``struct<format: string ("jpeg", "png", "webp", "gif"), width: uint32,
        height: uint32, mode: string, orientation: uint8, num_bytes: uint64, error: string>``.
        ``mode`` is what ``PIL.Image.open(...).mode`` says ("L", "LA", "RGB", "RGBA", "CMYK",
        "P", "1", "I;16"); ``orientation`` the EXIF orientation tag (1..8, 1 when absent), read
        from JPEG APP1, PNG eXIf before IDAT and the WebP EXIF chunk; ``num_bytes`` the blob size.
    """

def image_quality(blobs: _ArrayLike, max_side: int = 512, max_pixels: int | None = None) -> pa.StructArray:
    """Technical quality metrics.

    Definitions (a numpy reference is in ``tests/test_kernels_image.py``):

    1. The image is decoded to RGB at full size (alpha dropped); ``grey`` is Pillow's
       ``convert("L")``: ``(19595 R + 38470 G + 7471 B + 0x8000) >> 16``.
    2. ``blockiness``, on the full-size grey image: the mean absolute difference of neighbour
       pairs (horizontal and vertical) that straddle the 8-pixel JPEG block grid
       (``(x + 1) % 8 == 0``), plus 0.01, divided by the same mean over all other pairs plus 0.01.
       About 1 for clean images, higher when compression blocks show.
    3. With ``k = ceil(max(width, height) / max_side)``, the RGB image is reduced by ``k`` in both
       directions when ``k > 1`` (``Image.reduce(k)``: box means with Pillow's fixed-point rounding, the boxes at the
       right and bottom edges averaged over the pixels they cover), then converted to grey as in 1.
    4. On the reduced grey image: ``brightness`` (mean, 0..255), ``contrast`` (population std),
       ``entropy`` (Shannon entropy in bits of the 256-bin histogram), ``sharpness`` (population
       variance of the Laplacian ``[0,1,0; 1,-4,1; 0,1,0]`` over interior pixels, no padding;
       0 when a side is under 3 pixels).
    5. On the reduced RGB image: ``colorfulness`` (Hasler & Süsstrunk): with ``rg = R - G`` and
       ``yb = (R + G) / 2 - B``, ``sqrt(std(rg)² + std(yb)²) + 0.3 sqrt(mean(rg)² + mean(yb)²)``.

    :returns: ``struct<sharpness, entropy, brightness, contrast, colorfulness, blockiness: double,
        width: uint32, height: uint32, error: string>``; ``width``/``height`` of the original.
    """

def image_hashes(blobs: _ArrayLike, max_pixels: int | None = None) -> pa.StructArray:
    """Perceptual hashes as 64-bit integers (``int(str(imagehash_hash), 16)``).

    * ``phash``: ``imagehash.phash``: grey, LANCZOS resize to 32x32, DCT-II along both axes,
      top-left 8x8, bit = coefficient > median of the 64, row-major, first bit most significant.
    * ``dhash``: ``imagehash.dhash``: grey, LANCZOS resize to 9x8, bit = right pixel > left pixel.
    * ``phash_crop``: ``phash`` of the centre box without 5 % of the width/height on each side.
      A copy cropped by about that much has a ``phash`` close to the original's ``phash_crop``:
      compare each image's ``phash`` with the other's ``phash`` and ``phash_crop``.
    * ``phash_flip``: ``phash`` of the left-right mirror of the same 32x32 thumbnail; a mirrored
      copy's ``phash`` is close to it.

    Resampling is Pillow's, bit for bit. For speed, images larger than 256 pixels a side are
    first box-reduced to 128..255 pixels a side, and JPEGs with both sides >= 1024 are decoded
    at 1/8 scale; JPEG grey is the decoded Y plane. Measured agreement with imagehash on
    re-encoded photos: ``phash`` within 2 bits on 98 %, ``dhash`` within 2 bits on 91 %; exact
    (up to floating-point ties in the median) on images of at most 255 pixels a side.

    :returns: ``struct<phash: uint64, dhash: uint64, phash_crop: uint64, phash_flip: uint64, error: string>``.
    """

def mih_block_keys(hashes: _ArrayLike, max_hamming: int) -> pa.UInt64Array:
    """Multi-index-hashing keys: ``max_hamming + 1`` keys per hash, row-major (hash ``i``, block
    ``j`` at ``i * (max_hamming + 1) + j``).

    The 64 bits are cut into ``max_hamming + 1`` contiguous blocks, most significant first, the
    first ``64 % (max_hamming + 1)`` of them one bit longer. Key of block ``j`` with bits ``b``:
    MurmurHash3's ``fmix64(j << 56 | b)`` (``fmix64(hash)`` when ``max_hamming == 0``), so keys of
    different blocks never collide. Two hashes within ``max_hamming`` bits share at least one
    key (pigeonhole); verify candidates by popcount.

    :param hashes: uint64 (or int64, reinterpreted) column, e.g. ``image_hashes(...).field("phash")``.
    :param max_hamming: 0..63 bits.
    :returns: ``uint64`` array; a null hash gives ``max_hamming + 1`` null keys.
    """

def image_thumbnails(blobs: _ArrayLike, size: int = 224, max_pixels: int | None = None) -> pa.FixedSizeListArray:
    """Square RGB thumbnails for embedding models: the whole image (no crop, aspect ratio not
    kept) resized to ``size`` x ``size`` with Pillow's BILINEAR filter, as ``size * size * 3``
    uint8 values, row-major RGB. Images larger than ``2 * size`` a side are first box-reduced to
    ``2 * size .. 4 * size - 1`` pixels a side (JPEGs with both sides >= ``16 * size`` decoded at
    1/8), like Pillow's ``reducing_gap=2``; smaller ones equal ``img.convert("RGB").resize((size,
    size), Image.BILINEAR)``.

    :returns: ``fixed_size_list<uint8>[size * size * 3]``; null for null and bad rows.
    """

# --- web-text quality (DataTrove 0.10.1's rules; reasons named as DataTrove's, null = keep) ---------------------
#
# ``params`` holds the thresholds keyed as DataTrove's constructor arguments (absent = DataTrove's default; for
# Gopher a ``None`` value, or 0, disables the rule); an unknown key is a ``ValueError``. ``language``: "en" (also
# "eng", "en_*", "eng_*") tokenizes with a port of spaCy 3.8's ``blank("en")`` rules, any other code with Unicode
# word boundaries (UAX #29). A null text gives the reason ``null_text``; binary rows that are not UTF-8 are read
# with U+FFFD replacement. Every row gets a decision; nothing raises on text content.

C4_LINE_COUNTERS: list[str]
"""Keys of ``c4_quality``'s line counters (DataTrove's ``stat_update`` names), in order."""

def gopher_quality(texts: _ArrayLike, params: dict[str, object] | None = None, language: str = "en") -> pa.StringArray:
    """GopherQualityFilter: first failing rule of gopher_short_doc, gopher_long_doc,
    gopher_below_avg_threshold, gopher_above_avg_threshold, gopher_too_many_hashes, gopher_too_many_ellipsis,
    gopher_too_many_bullets, gopher_too_many_end_ellipsis, gopher_below_alpha_threshold,
    gopher_enough_stop_words. Keys: min_doc_words, max_doc_words, min_avg_word_length, max_avg_word_length,
    max_symbol_word_ratio, max_bullet_lines_ratio, max_ellipsis_lines_ratio, max_non_alpha_words_ratio,
    min_stop_words, stop_words."""

def gopher_repetition(
    texts: _ArrayLike, params: dict[str, object] | None = None, language: str = "en"
) -> pa.StringArray:
    """GopherRepetitionFilter: empty, dup_para_frac, dup_para_char_frac, dup_line_frac, dup_line_char_frac,
    top_{n}_gram, duplicated_{n}_n_grams. Keys: dup_line_frac, dup_para_frac, dup_line_char_frac,
    dup_para_char_frac, top_n_grams and dup_n_grams (lists of (n, fraction))."""

def fineweb_quality(texts: _ArrayLike, params: dict[str, object] | None = None, language: str = "en") -> pa.StringArray:
    """FineWebQualityFilter: empty, line_punct_ratio, short_line_ratio, char_dup_ratio, list_ratio. Keys:
    line_punct_thr, line_punct_exclude_zero, stop_chars (list of str; None = DataTrove's terminal
    punctuation), short_line_thr, short_line_length, char_duplicates_ratio, new_line_ratio."""

def c4_quality(
    texts: _ArrayLike, params: dict[str, object] | None = None, language: str = "en"
) -> tuple[pa.StringArray, pa.StringArray, dict[str, int]]:
    """C4QualityFilter: ``(cleaned texts, reasons, line counters)``; a dropped or null row has a null cleaned
    text. Reasons: lorem_ipsum, curly_bracket, too_few_sentences. Keys: split_paragraph, remove_citations,
    filter_no_terminal_punct, min_num_sentences, min_words_per_line, max_word_length (-1 disables these three),
    filter_lorem_ipsum, filter_javascript, filter_curly_bracket, filter_policy."""

def text_words(texts: _ArrayLike, language: str = "en") -> pa.ListArray:
    """DataTrove's ``split_into_words`` of every row (spaCy tokens without whitespace); null for null."""

def sentence_count(texts: _ArrayLike, language: str = "en") -> pa.UInt32Array:
    """Sentences spaCy's sentencizer finds (``len(split_into_sentences(text))``, 1 for empty); null for null."""

def html_extract(
    pages: _ArrayLike,
    charsets: _ArrayLike | None = None,
    with_metadata: bool = False,
    max_bytes: int = 67108864,
    favor: str = "balanced",
    model: bytes | None = None,
) -> pa.StructArray:
    """Main text and title of every HTML page, one page per task on the kernel pool, without the GIL.

    Binary pages are decoded as a browser would: a byte-order mark, else the row's ``charsets`` label (the HTTP
    ``Content-Type`` charset), else a ``<meta charset>`` / ``http-equiv`` prescan of the first 1,024 bytes, else
    valid UTF-8 is UTF-8 and chardetng guesses the rest; decoding is lossy (U+FFFD), never an error. String pages
    are taken as already decoded. Pages are tokenized by html5gum (WHATWG tokenizer) into a light tree; Mozilla
    Readability's rules (tag, ARIA role, class/id words, hidden styles, link density, block text scores, sibling
    joining, conditional cleaning) pick the article's text. With ``model``, a block model (gradient-boosted trees
    over each text block's text, tags, ancestors' class words, containers, neighbours, place and the rules' pick)
    decides block by block instead.

    :param pages: string, large_string, binary or large_binary column of HTML.
    :param charsets: string column of HTTP charset labels, same length (null = none); ignored for string pages.
    :param with_metadata: also return ``canonical_url``, ``html_lang``, ``description`` and ``encoding``.
    :param max_bytes: bytes of (decoded) HTML read per page; a longer page is extracted from its first
        ``max_bytes`` bytes (cut at a character boundary) and flagged ``truncated``. A budget in bytes, not time,
        so the output depends on the page alone.
    :param favor: ``"balanced"`` (default), ``"precision"`` (less boilerplate, some article text lost) or
        ``"recall"`` (more of the article, more boilerplate; with a model: the bar each block must reach); any
        other value is a ValueError.
    :param model: the text of a block model file: ``html_block_model()`` (the shipped one) or one
        ``benchmarks/train_html_blocks.py`` writes; ``None`` (default): the rules alone. A file that does not
        parse, or was trained on other features, is a ValueError naming the line.
    :returns: ``struct<text, title, truncated, error[, canonical_url, html_lang, description, encoding]>``:
        ``text`` is the main content, paragraphs separated by blank lines (``""`` when the page has none),
        ``title`` the ``<title>``, ``truncated`` (bool) whether ``max_bytes`` cut the page, ``error`` null unless
        extracting the page panicked (a bug; the message, and empty other fields); metadata fields are null when
        absent; the whole row is null where the page is null.
    """

def html_blocks(pages: _ArrayLike, charsets: _ArrayLike | None = None, max_bytes: int = 67108864) -> pa.StructArray:
    """The block model's training data: one row per text block of every page, in document order,
    ``struct<page: uint32, text: string, features: fixed_size_list<float32>>`` (``page``: the row of ``pages``;
    ``features`` in ``html_block_features()`` order). Pages are read as ``html_extract`` reads them."""

def html_block_features() -> list[str]:
    """Names of ``html_blocks``' features, in order (the header of a block model file)."""

def html_block_model() -> bytes:
    """The text of the block model shipped with the kernel (trained by ``benchmarks/train_html_blocks.py``), for
    ``html_extract(model=...)``."""

@final
class FastTextModel:
    """A supervised fastText model (fastText 0.9 ``.bin``, or quantized ``.ftz`` with or without ``qnorm``,
    ``qout`` and a cut-off), memory-mapped and read once; share one per process between threads (it is
    immutable, and ``predict`` keeps its state per call).

    :param path: the model file. ``ValueError`` (message naming the path) for a missing file, a file that is
        not a fastText model, an unsupervised (word-vector) model or a damaged one.
    """

    def __new__(cls, path: str) -> FastTextModel: ...
    @property
    def labels(self) -> list[str]:
        """Label names as in the file (``__label__`` kept), in the model's label order."""
    @property
    def loss(self) -> str:
        """The training loss: ``"softmax"``, ``"hs"``, ``"ova"`` or ``"ns"``."""
    @property
    def dim(self) -> int:
        """Dimension of the word vectors."""
    def predict(
        self, lines: _ArrayLike, labels: list[int] | None = None, whole_text: bool = False
    ) -> tuple[list[pa.FloatArray], pa.UInt32Array]:
        """fastText's ``predict(line, k=-1, threshold=0.0)`` of every line, on the kernel pool without the GIL.

        Each line is read as fastText reads a stream: tokens split on space, tab, CR, LF, VT, FF and NUL, a
        newline is the token ``</s>`` and the line ends after the first one (give one line per row ending in
        ``"\\n"``, as fastText's Python ``predict`` does); known words, character n-grams, word n-grams and the
        output layer (softmax, hierarchical softmax, one-vs-all, negative sampling) as fastText computes them.

        :param lines: string or binary column (bytes are taken as they are).
        :param labels: indices into :attr:`labels` to return probabilities for (default: all, in order).
        :param whole_text: read each row as one line: the scores of the row with every newline replaced by a
            space and ``"\\n"`` appended, without that copy of the column.
        :returns: one float32 array per requested label (the probability ``exp(log(p + 1e-5))`` fastText
            reports; 0 where it did not return the label: hierarchical softmax drops paths below 1e-5) and the
            index of the most probable label (fastText's first prediction). Null where the line is null or has
            no feature at all (fastText returns no prediction then).
        """

@final
class TextTokenizer:
    """A Hugging Face ``tokenizer.json`` loaded by the ``tokenizers`` crate (the library its Python package wraps),
    once; share one per process between threads (it is immutable). The file's padding and truncation settings are
    switched off (padding would make ids depend on the batch; truncation would cut documents silently).

    :param path: the ``tokenizer.json``. ``ValueError`` (message naming the path) when it cannot be read or is not
        a tokenizer file (not JSON, or JSON of another shape).
    :param fast: encode byte-level BPE files (GPT-2's scheme, Llama 3's regex then byte level) with the kernel's
        own pre-tokenizer and merges, the same ids without the crate's per-piece offsets and strings; other files,
        and ``fast=False``, go through the crate's ``encode``.
    """

    def __new__(cls, path: str, fast: bool = True) -> TextTokenizer: ...
    @property
    def fast(self) -> bool:
        """True when :meth:`encode` takes the kernel's byte-level BPE path."""
    @property
    def vocab_size(self) -> int:
        """Tokens in the vocabulary, added tokens included."""
    @property
    def id_bound(self) -> int:
        """One more than the largest id in the vocabulary (added tokens included)."""
    def token_to_id(self, token: str) -> int | None:
        """The id of a token (added tokens included), None when the vocabulary lacks it."""
    def id_to_token(self, id: int) -> str | None:
        """The token of an id, None when there is none."""
    def encode(
        self,
        texts: _ArrayLike,
        add_special_tokens: bool = True,
        bos: int | None = None,
        eos: int | None = None,
        max_tokens: int | None = None,
        split: bool = False,
    ) -> tuple[pa.ListArray, pa.Int64Array, dict[str, int]]:
        """Every text's ids, on the kernel pool without the GIL: for a non-empty text, the ids
        ``Tokenizer.encode_batch([text], add_special_tokens)`` of the Python package gives, then ``bos`` before and
        ``eos`` after. A null or empty text (or one that gives no id at all) gives no id, not even BOS/EOS.

        :param texts: string or large_string column, read in place.
        :param max_tokens: most ids per row, BOS/EOS included (ValueError if they leave no room): a longer row
            keeps its first ids (``split=False``), or is cut into pieces of ``max_tokens - framing`` ids, each
            framed, one after the other in the row (``split=True``: every piece but the last is ``max_tokens``).
        :returns: ``list<uint32>`` ids (never null; ``large_list`` past 2**31 ids in one call), int64 ids per row,
            and counts: ``null``, ``empty``, ``truncated``, ``tokens_cut`` (ids truncation removed), ``split``,
            ``pieces`` (of the split rows), ``invalid_utf8`` (rows decoded with U+FFFD replacement).
        """

@final
class WarcScanner:
    """A ``.warc`` / ``.warc.gz`` byte stream split into records and Arrow batches (the ``warc`` reader's engine).

    Fed the file's bytes in chunks of any size (the reader reads them through ``mdf.storage``), it inflates gzip
    members, parses WARC and HTTP headers as FastWARC 2.0 does, keeps the records whose WARC-Type bit is in
    ``wanted`` and whose mime type passes the filter, and builds one struct array per ``batch_rows`` records (or
    ``max_batch_bytes`` body bytes). Every byte is accounted for: input that is not whole records (a cut gzip
    member or record, bad gzip data, bytes that are no record, a record without Content-Length) is one entry of
    ``damages`` and the scan goes on at the next good gzip member or ``WARC/1.x`` line; a record whose framing
    is whole but that cannot be read is a row with a ``reason`` (``bad_http``, ``bad_warc_header``,
    ``record_too_large``). A gzip member's bytes are read only once its CRC checked (or, in a member over
    1 MiB, 1 MiB behind its end).

    :param gzip: the input is gzip members (``.warc.gz``), else a plain WARC.
    :param base: file offset of the first byte fed (a shard's start).
    :param wanted: mask of WARC-Type bits (warcinfo 2, response 4, resource 8, request 16, metadata 32,
        revisit 64, conversion 128, continuation 256).
    :param mime_exact: keep records whose lower-cased mime type is one of these; None keeps every record.
    :param mime_prefixes: ... or starts with one of these (``"text/"`` for ``text/*``).
    :param max_record_bytes: a record block longer than this is a ``record_too_large`` row (no body), skipped
        as it streams past: never held whole.
    """

    def __new__(
        cls,
        gzip: bool,
        base: int,
        wanted: int,
        mime_exact: list[str] | None,
        mime_prefixes: list[str],
        batch_rows: int,
        max_batch_bytes: int,
        max_record_bytes: int,
    ) -> WarcScanner: ...
    def feed(self, data: bytes, last: bool) -> list[pa.StructArray]:
        """Feed the next bytes (``last``: they end the input); returns the batches they completed, as
        ``struct<id, url, date, warc_type, http_status: int16, content_type, body: binary, offset: int64,
        member_index: int32, chunked: bool, content_encoding, mime, charset, reason, reason_detail>``: ``date`` is
        WARC-Date as written,
        ``content_type`` the HTTP (else WARC) Content-Type value, ``mime`` and ``charset`` its lower-cased mime
        type and charset (null where the value is not ASCII: the caller splits those), ``body`` raw (``chunked``
        / ``content_encoding`` say what is left to undo), ``offset`` the file offset of the record (of its gzip
        member in a ``.warc.gz``) and ``member_index`` its place among the records of that member; ``reason`` and
        ``reason_detail`` say why a row is rejected (null for a good one). The last feed returns the last batch."""
    def feed_file(self, path: str, offset: int, size: int, last: bool) -> tuple[list[pa.StructArray], int]:
        """Like :meth:`feed` with ``size`` bytes of the local file ``path`` from ``offset``, read by the kernel
        without the GIL (no copy through a Python ``bytes``); fewer bytes than ``size`` (the file's end) also end
        the input. Returns the batches and how many bytes were read; an I/O error raises ``OSError``."""
    def map_file(self, path: str, start: int, stop: int) -> bool:
        """Memory-map bytes ``start..stop`` of the local file ``path`` (to its end if it is shorter now) for
        :meth:`advance`, which scans them in place (no copy through a read buffer). False, and nothing mapped,
        when the file is not on a local disk filesystem (NFS, FUSE: a read error there would be a SIGBUS in a
        map): then read it with :meth:`feed_file`. An I/O error raises ``OSError``."""
    def advance(self, n: int) -> list[pa.StructArray]:
        """Scan the next ``n`` bytes of the mapped range (its last bytes end the input); the batches they
        completed, as :meth:`feed` returns them."""
    @property
    def done(self) -> bool:
        """True once the scan ended (the end of the input); later input is ignored."""
    @property
    def damages(self) -> list[tuple[int, str]]:
        """``(file offset, message)`` of each damaged part of the input, in file order (all of them once
        ``done``)."""
