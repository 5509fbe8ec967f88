"""A run's outputs: who may write an output folder or ``s3://`` prefix, and how the run's files come to be there.

One protocol, two kinds of output, one claim decision:

* :mod:`~mdf.output.claim`: the one decision (resume, replace, start, or refuse with exit 2) that both kinds ask
  once they have looked at what is at the output with their own I/O.
* :mod:`~mdf.output.local`: local folders; ``flock``, the run record, a hidden staging folder swapped in at the
  end (the swap itself is :mod:`mdf.replace`). It also routes an ``s3://`` output to the remote side.
* :mod:`~mdf.output.remote`: ``s3://`` prefixes; an object lock, a local working folder mirrored to a staging
  prefix, a publish at the end.
* :mod:`~mdf.output.mirror`: the S3 outputs of this process and the background thread that mirrors them at each
  checkpoint.
* :mod:`~mdf.output.publish`: how a run's output appears on S3 (multipart uploads completed, ``_SUCCESS`` last) and
  how a publish cut by SIGKILL is rolled forward.

Object I/O (:mod:`mdf.storage`: the file-system layer, conditional writes, the S3 lock object, multipart uploads)
stays below this package, and the S3 layer (pyarrow.fs, botocore) is imported for an ``s3://`` output only: this
``__init__`` imports nothing, so ``mdf.output.claim`` and ``mdf.output.local`` cost a local run no S3 start-up.
"""
