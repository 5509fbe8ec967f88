"""The strongest plain script: Parquet text -> tokenizers' ``encode_batch_fast`` -> Megatron ``.bin``/``.idx`` files,
one pair per input file, the same files mdf writes (benchmarks/bench_tokenize.py checks they are byte-identical).

Run in benchmarks/.venv-tokenize: ``python peer_encode_batch.py DATA_DIR OUT_DIR TOKENIZER EOS BATCH_ROWS``. The thread
count is tokenizers' own (``RAYON_NUM_THREADS``, set by the benchmark to the cores it gives every side). The ids of
a batch go to numpy through one flat list per batch (``np.fromiter`` over the encodings' ids), the fastest way out
of the Python objects ``encode_batch`` returns that we found.
"""

from __future__ import annotations

import struct
import sys
import time
from itertools import chain
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from tokenizers import Tokenizer


def write_idx(path: Path, dtype: np.dtype, lengths: np.ndarray) -> None:
    code = {np.dtype(np.uint16): 8, np.dtype(np.int32): 4}[dtype]
    pointers = np.zeros(len(lengths), np.int64)
    if len(lengths) > 1:
        np.cumsum(lengths[:-1], out=pointers[1:])
    pointers *= dtype.itemsize
    docs = np.arange(len(lengths) + 1, dtype=np.int64)
    with open(path, "wb") as f:
        f.write(b"MMIDIDX\x00\x00" + struct.pack("<QBQQ", 1, code, len(lengths), len(docs)))
        f.write(lengths.astype(np.int32).tobytes() + pointers.tobytes() + docs.tobytes())


def main() -> None:
    data, out, tok_path, eos, batch_rows = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
    start = time.perf_counter()
    tok = Tokenizer.from_file(tok_path)
    tok.no_padding()
    tok.no_truncation()
    eos_id = tok.token_to_id(eos)
    dtype = np.dtype(np.uint16) if tok.get_vocab_size() < 65500 else np.dtype(np.int32)
    out.mkdir(parents=True, exist_ok=True)
    tokens = 0
    for path in sorted(Path(data).glob("*.parquet")):
        lengths = []
        with open(out / (path.stem + ".bin"), "wb") as binf:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows, columns=["text"]):
                texts = [t for t in batch.column(0).to_pylist()]
                encs = tok.encode_batch_fast([t or "" for t in texts], add_special_tokens=True)
                ids_lists = [[*e.ids, eos_id] if t else [] for t, e in zip(texts, encs, strict=True)]
                n = np.fromiter(map(len, ids_lists), np.int64, len(ids_lists))
                flat = np.fromiter(chain.from_iterable(ids_lists), dtype, int(n.sum()))
                binf.write(flat.tobytes())
                lengths.append(n)
                tokens += int(n.sum())
        write_idx(out / (path.stem + ".idx"), dtype, np.concatenate(lengths) if lengths else np.zeros(0, np.int64))
    print(f'{{"tokens": {tokens}, "seconds": {time.perf_counter() - start:.3f}}}')


if __name__ == "__main__":
    main()
