"""Readers contributed by mdf-text (``warc``)."""
