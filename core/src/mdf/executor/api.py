"""What an executor is, for plugins that add one: a registered class with its own parameter model.

An executor is registered through :func:`mdf.hookspecs.mdf_register_executors` like an operator. The recipe's
``executor:`` mapping holds the fields every executor understands (``type``, ``batch_rows``, ``resume``; see
:class:`mdf.recipe.ExecutorSpec`) and the executor's own, which its ``Params`` model validates; a bad value is
reported with its YAML path (``executor.max_in_flight``) before any work.

This module sits below the plugin manager and the recipe, so it imports neither.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from mdf.operators import Component, Params
from mdf.run_stats import ExecutorMetrics

if TYPE_CHECKING:
    from mdf.metrics import RunMetrics
    from mdf.plan import Plan


def auto_workers(cores: int, shards: int) -> int:
    """What ``workers: auto`` means, in one place: one worker per core, no more than there are shards (a worker
    takes one shard at a time), at least one. The inline executor runs with it and ``mdf plan`` prints it (and
    sizes batches in flight from it), so the plan and the run agree."""
    return max(1, min(cores, shards))


class ExecutorParams(Params):
    """Base of an executor's own parameters (the keys of ``executor:`` besides the common ones)."""


class Executor(Component):
    """Runs a planned recipe. Subclasses set ``name`` and ``Params`` and implement :meth:`run`.

    The executor is constructed in the driver with the :class:`~mdf.plan.Plan` (recipe checked, input
    listed) and its validated parameters; :meth:`run` returns the run's metrics (``metrics.json``), with
    its own figures in an instance of :attr:`Metrics`.
    """

    kind: ClassVar[str] = "executor"
    Params: ClassVar[type[Params]] = ExecutorParams
    Metrics: ClassVar[type[ExecutorMetrics]] = ExecutorMetrics
    """The record :meth:`run` puts in ``RunMetrics.executor_metrics``; ``metrics.json`` is read back with it,
    and its methods put the executor's figures in ``mdf run``'s table and the report."""

    def __init__(self, plan: Plan, params: Params | None = None, **kwargs: Any) -> None:
        """``params``: the validated ``Params`` the recipe's check made (not validated again); else ``kwargs``
        are validated here."""
        if params is None:
            super().__init__(**kwargs)
        else:
            self.check_requirements()
            self.params = params
        self.plan = plan

    @classmethod
    def claims(cls, params: dict[str, Any]) -> str | None:
        """Why a recipe without ``executor.type`` should run on this executor (its own keys, the environment),
        or None. Ray claims a recipe that gives ``address`` or a shell with ``RAY_ADDRESS`` set."""
        return None

    def summary(self) -> str:
        """A few words on how it will run (``2 worker threads``, ``cluster at 10.0.0.5:6379``) for ``mdf run``."""
        return ""

    @abstractmethod
    def run(self, progress: Any = None) -> RunMetrics:
        """Run every pass of the plan; write the output; return the metrics."""
