"""Exact-dedup peer of ``bench_dedup_exact.py``: DataTrove's exact dedup as its documentation runs it; run with
the DataTrove venv's python (``benchmarks/.venv-datatrove``), not mdf's.

DataTrove's ``datatrove.pipeline.dedup.exact_dedup`` is three pipelines, each under ``LocalPipelineExecutor``:

1. ``ParquetReader -> ExactDedupSignature`` (tasks = files): xxhash64 of each text's UTF-8 bytes (the default
   ``HashConfig()``),
   sorted signatures written per task;
2. ``ExactFindDedups`` (1 task): a heap merge of all signature files, the ids of the duplicates written out;
3. ``ParquetReader -> ExactDedupFilter -> ParquetWriter(zstd)`` (tasks = files): re-reads the input and drops the
   duplicates.

Every duplicate but one per hash goes, so the kept count equals mdf's. The reader keeps its default
``read_metadata=True`` so the other columns are written too, as mdf and the plain script do.

Usage: ``python exact_datatrove.py --data DIR --work DIR --out DIR --tasks N --workers N``; prints the kept rows.
"""

import argparse
import glob
import os


def text_of(doc) -> bytes:  # the content getter; DataTrove's default xxhash64 needs bytes (a str fails)
    return doc.text.encode("utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True, help="folder for signatures, duplicate lists and logs")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tasks", type=int, required=True)
    ap.add_argument("--workers", type=int, required=True)
    args = ap.parse_args()

    import pyarrow.parquet as pq
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import ExactDedupConfig, ExactDedupFilter, ExactDedupSignature, ExactFindDedups
    from datatrove.pipeline.readers import ParquetReader
    from datatrove.pipeline.writers import ParquetWriter

    config = ExactDedupConfig(content_getter=text_of)
    sigs, dups, logs = (os.path.join(args.work, d) for d in ("sigs", "dups", "logs"))

    def reader():
        return ParquetReader(args.data, glob_pattern="*.parquet")

    stages = [
        ([reader(), ExactDedupSignature(sigs, config)], args.tasks, args.workers),
        ([ExactFindDedups(sigs, dups, config)], 1, 1),
        (
            [reader(), ExactDedupFilter(dups, config), ParquetWriter(args.out, compression="zstd")],
            args.tasks,
            args.workers,
        ),
    ]
    for i, (pipeline, tasks, workers) in enumerate(stages, 1):
        log = os.path.join(logs, f"stage{i}")
        LocalPipelineExecutor(pipeline, tasks=tasks, workers=workers, logging_dir=log).run()
    outputs = glob.glob(os.path.join(args.out, "**", "*.parquet"), recursive=True)
    print(sum(pq.read_metadata(p).num_rows for p in outputs))


if __name__ == "__main__":
    main()
