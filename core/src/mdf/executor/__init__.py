"""Executors: ``inline`` (this machine, every core; the default) and ``ray`` (a cluster), registered as plugins
like any third-party executor. This package holds executors and what they share, nothing above them: a run's
life (``prepare``, ``run_recipe``) is :mod:`mdf.run`, a recipe resolved against the plugins is :mod:`mdf.plan`.

Layers, bottom up: :mod:`~mdf.executor.api` (the executor base class, its params and ``workers: auto``),
:mod:`~mdf.executor.base` (the per-batch chain every executor shares),
:mod:`~mdf.executor.batches` (the shard loop's typed messages, its read step with the one offset rule, and the
driver's bookkeeping, shared by every executor), :mod:`~mdf.executor.passes` (key state, cluster-dedup passes,
checkpoints), :mod:`~mdf.executor.shard` (the shard runner every executor runs), and the executors with their
metrics records (``inline``/``inline_pass``/``inline_metrics``, and the package ``ray``). Importing this package
(the plugin manager does, for the base class) imports nothing.
"""
