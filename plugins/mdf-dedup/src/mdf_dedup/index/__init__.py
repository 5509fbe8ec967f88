"""A persistent dedup index: each new crawl deduplicated against every earlier one without re-reading them.

:mod:`~mdf_dedup.index.files` (every file access of a local index), :mod:`~mdf_dedup.index.objects` (the
same on ``s3://`` and other URLs), :mod:`~mdf_dedup.index.manifest` (generations, settings,
lock), :mod:`~mdf_dedup.index.store` (per-bucket key files), :mod:`~mdf_dedup.index.bloom` (or
Bloom filters of them, ``index_kind: bloom``), :mod:`~mdf_dedup.index.state` (the bucket side
during a run), :mod:`~mdf_dedup.index.client` (the operator side), :mod:`~mdf_dedup.index.admin` (info, compact).
"""
