"""Readers and writers that need no plugin: Parquet and JSONL (plain, gzip, zstd)."""

from mdf.io.base import Reader, Shard, Writer

__all__ = ["Reader", "Shard", "Writer"]
