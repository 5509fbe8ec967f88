"""Train a byte-level BPE ``tokenizer.json`` on the text column of Parquet files, with Hugging Face ``tokenizers``.

For the examples and tests: ``examples/tokenize.yaml`` tokenizes with a tokenizer trained this way on the demo data,
so nothing is downloaded. GPT-2's scheme (byte-level pre-tokenizer and decoder, BPE), with ``<|endoftext|>`` as its
one special token. A real run uses the tokenizer of the model it trains (any ``tokenizer.json``).

Usage: ``python -m mdf_tokens.train INPUT_FOLDER_OR_FILES... --out tokenizer.json [--vocab-size 8000]``
(needs ``pip install "mdf-tokens[train]"``).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pyarrow.parquet as pq

from mdf import expand_paths

END_OF_TEXT = "<|endoftext|>"


def texts(paths: list[str], column: str, max_chars: int) -> Iterator[str]:
    """The non-empty texts of ``column``, file by file, until ``max_chars`` characters were given."""
    given = 0
    for path in expand_paths(paths, "paths", extensions=(".parquet",)):
        for batch in pq.ParquetFile(path).iter_batches(columns=[column]):
            for text in batch.column(0).to_pylist():
                if text:
                    yield text
                    given += len(text)
                    if given >= max_chars:
                        return


def train(
    paths: list[str], out: str, vocab_size: int = 8000, column: str = "text", max_chars: int = 50_000_000
) -> None:
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:
        raise SystemExit('training needs Hugging Face tokenizers: pip install "mdf-tokens[train]"') from None
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[END_OF_TEXT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts(paths, column, max_chars), trainer)
    tok.save(out)
    print(f"{out}: byte-level BPE, {tok.get_vocab_size()} tokens, end of text {END_OF_TEXT!r}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mdf_tokens.train", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="Parquet files, folders or globs")
    parser.add_argument("--out", required=True, help="where to write tokenizer.json")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--column", default="text")
    args = parser.parse_args(argv)
    train(args.paths, args.out, args.vocab_size, args.column)


if __name__ == "__main__":
    main()
