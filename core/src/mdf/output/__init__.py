"""Owning a run's outputs: the rules that decide whether a run may write an output folder or ``s3://`` prefix.

:mod:`~mdf.output.claim` holds the one claim decision; :mod:`mdf.ownership` (local folders: ``flock``, staging
and swap) and :mod:`mdf.storage.output` (``s3://``: an object lock, a staging prefix, a publish) read what is
at the output with their own I/O and ask it.
"""
