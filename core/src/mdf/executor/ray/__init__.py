"""The Ray executor (``pip install "mdf-core[ray]"``), as a package: everything mdf knows about Ray lives here.

* :mod:`~mdf.executor.ray.executor`: :class:`RayExecutor` (registered as ``ray``), a run's life on Ray;
* :mod:`~mdf.executor.ray.params`: its parameters; :mod:`~mdf.executor.ray.metrics`: its figures and report;
* :mod:`~mdf.executor.ray.session`: joining or starting Ray, the cluster's totals for the report;
* :mod:`~mdf.executor.ray.placement`: replicas per stage, a pass's actors (:class:`Pipeline`) and their teardown;
* :mod:`~mdf.executor.ray.actors`: loaders, stage replicas, writers and whole-shard replicas, each a thin wrapper
  around the shard loop's pieces (:mod:`mdf.executor.shard`);
* :mod:`~mdf.executor.ray.chain` and :mod:`~mdf.executor.ray.shards`: the two drivers (batch chains, whole
  shards), keeping their counts in a :class:`~mdf.executor.ray.book.Book`;
* :mod:`~mdf.executor.ray.buckets`: the key state's buckets as actors (the transport :mod:`mdf.state` asks for);
* :mod:`~mdf.executor.ray.parts`: ``s3://`` part files uploaded from the node that wrote them;
* :mod:`~mdf.executor.ray.errors`: Ray's errors as one line.

Importing the package imports none of them: an inline run imports :mod:`~mdf.executor.ray.executor` (to ask
:meth:`RayExecutor.claims`) and nothing of Ray's machinery.
"""
