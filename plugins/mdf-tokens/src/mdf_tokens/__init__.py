"""mdf-tokens: training-ready output for mdf.

* ``tokenize`` (operator): a text column to token ids with a Hugging Face ``tokenizer.json``, in Rust (the
  ``tokenizers`` crate, through ``mdf_kernels.TextTokenizer``), on every kernel thread without the GIL;
* ``token_stats`` (operator): tokens, tokens per source and a histogram of document lengths for runs over ids;
* ``megatron`` (writer): Megatron-Core indexed datasets (``.bin`` + ``.idx``), one file pair per input shard;
* ``megatron`` (reader): Megatron datasets back as rows, one source or several mixed by weight to a token budget.
"""
