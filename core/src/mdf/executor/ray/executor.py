"""The Ray executor: a run's life on Ray, from joining (or starting) Ray to the last pass's teardown.

A run connects (:mod:`~mdf.executor.ray.session`), keeps its key state in bucket actors
(:mod:`~mdf.executor.ray.buckets`) that outlive the passes, and runs each pass with actors of its own, placed by
:mod:`~mdf.executor.ray.placement`: batch chains through loaders, stage replicas and writers
(:mod:`~mdf.executor.ray.chain`), or, when every stage runs in one actor, replicas that run whole shards
(:mod:`~mdf.executor.ray.shards`); both drivers keep their counts in a :class:`~mdf.executor.ray.book.Book`.

Actors, placement and S3 parts are imported where a run needs them: an inline run imports this module for
:meth:`RayExecutor.claims` and should not pay for Ray's machinery (~75 ms with ``rich.markup``).
"""

from __future__ import annotations

import os
import time
from typing import Any

from mdf.errors import MissingDependencyError
from mdf.executor.api import Executor
from mdf.executor.passes import run_passes
from mdf.executor.ray.metrics import RayMetrics
from mdf.executor.ray.params import RAY_PIP, RayParams
from mdf.metrics import RunMetrics
from mdf.plan import Plan
from mdf.state import Checkpoint, KeyState


class RayExecutor(Executor):
    """Runs on a Ray cluster (joined by address) or a local Ray: stages as actors with their own replicas."""

    name = "ray"
    Params = RayParams
    Metrics = RayMetrics
    params: RayParams

    @classmethod
    def check_requirements(cls) -> None:
        import importlib.util

        spec = importlib.util.find_spec("ray")
        # a folder named ray in the working directory (Ray's own temp dir is /tmp/ray) is a namespace package
        if spec is None or spec.origin in (None, "namespace"):
            raise MissingDependencyError(f"executor 'ray' needs Ray, an optional extra of mdf-core: {RAY_PIP}")

    @classmethod
    def claims(cls, params: dict[str, Any]) -> str | None:
        """A recipe without ``type`` goes to Ray when it gives ``address`` or ``RAY_ADDRESS`` is set."""
        if params.get("address"):
            return f"the recipe gives executor.address {params['address']!r}"
        env = os.environ.get("RAY_ADDRESS")
        return f"RAY_ADDRESS={env} is set" if env else None

    def summary(self) -> str:
        from mdf.executor.ray.session import cluster_address

        address = cluster_address(self.params)
        return f"cluster at {address}" if address else "a local Ray started for this run"

    def run(self, progress: Any = None) -> RunMetrics:
        from mdf.executor.ray.errors import local_error
        from mdf.executor.ray.placement import Pipeline
        from mdf.executor.ray.session import cluster_info, connect

        output = self.plan.output_dir  # the writer's: collect passes write nothing
        session = connect(self.params)
        run_id = f"mdf-{int(time.time() * 1000) % 10**10}"
        placed: list[Pipeline] = []  # every pass's actors, torn down however the pass ends
        states: list[KeyState] = []
        passes = 0

        def make_state(num_buckets: int) -> KeyState:
            from mdf.executor.ray.buckets import ray_key_state

            states.append(ray_key_state(num_buckets, run_id))
            return states[-1]

        def run_pass(plan: Plan, state: KeyState | None, checkpoint: Checkpoint | None, progress: Any) -> RunMetrics:
            """One pass: its own actors (the key state outlives them)."""
            nonlocal passes
            passes += 1
            try:
                return _run_pass(plan, self.params, f"{run_id}-p{passes}", state, checkpoint, progress, placed)
            finally:  # the last pass (the one with a checkpoint) on a Ray shut down next needs no waiting
                while placed:
                    placed.pop().teardown(wait=checkpoint is None or not session.started_here)

        try:
            metrics = run_passes(self.plan, run_pass, make_state, progress)
            if isinstance(metrics.executor_metrics, RayMetrics):
                metrics.executor_metrics.ray_logs = session.log_dir or None
                metrics.executor_metrics.cluster = cluster_info()  # while connected: the report's Ray line
            return metrics
        except Exception as exc:  # a remote failure reads as one line, its traceback goes to the log file
            raise local_error(exc, output) from None
        finally:
            for pipe in placed:
                pipe.teardown()
            for state in states:
                state.close()
            session.close()


def _run_pass(
    plan: Plan, params: RayParams, run_id: str, state: KeyState | None, checkpoint: Checkpoint | None,
    progress: Any, placed: list[Any],
) -> RunMetrics:  # fmt: skip
    from mdf.executor.ray.book import Book
    from mdf.executor.ray.placement import start

    began = time.perf_counter()
    book = Book(start(plan, params, run_id, state, placed), checkpoint, progress, started=began)
    if book.pipe.whole_shards:
        from mdf.executor.ray.shards import run_shards

        return run_shards(book)
    from mdf.executor.ray.chain import run_chains

    return run_chains(book, params)
