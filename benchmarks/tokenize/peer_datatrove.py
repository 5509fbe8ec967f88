"""DataTrove's DocumentTokenizer on the same Parquet text with the same tokenizer (and ``<|endoftext|>`` after each
document), one task, one worker, as DataTrove's own examples run it: its ParquetReader, then the tokenizer writing
DataTrove's token files (``.ds`` + ``.ds.index``; DataTrove has no Megatron writer). No shuffling.

Run in benchmarks/.venv-tokenize: ``python peer_datatrove.py DATA_DIR OUT_DIR TOKENIZER EOS BATCH_ROWS``.
"""

from __future__ import annotations

import sys
import time

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import ParquetReader
from datatrove.pipeline.tokens import DocumentTokenizer


def main() -> None:
    data, out, tok_path, eos, batch_rows = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    start = time.perf_counter()
    LocalPipelineExecutor(
        pipeline=[
            ParquetReader(data, glob_pattern="*.parquet", text_key="text", id_key="id"),
            DocumentTokenizer(
                output_folder=out, tokenizer_name_or_path=tok_path, eos_token=eos, batch_size=batch_rows,
                shuffle_documents=False, save_filename="tokens",
            ),
        ],
        tasks=1, workers=1, logging_dir=f"{out}/_logs", skip_completed=False,
    ).run()  # fmt: skip
    print(f'{{"seconds": {time.perf_counter() - start:.3f}}}')


if __name__ == "__main__":
    main()
