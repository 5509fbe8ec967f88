"""The Ray executor: pipeline parallelism by ObjectRef chaining, bounded in flight.

For every batch a loader hands out, the driver submits one chain without waiting::

    meta, data = loader.next()                       # the driver reads only ``meta`` (a few numbers)
    ref = stage_1[least loaded].process(meta, data)  # each call takes the previous call's ObjectRef
    ...
    ref = stage_k[least loaded].process(meta, ref)
    done = writer[owner of the shard].write(meta, ref)  # returns counts, never rows

so stage ``k`` works on batch ``n`` while stage ``k-1`` works on ``n+1``, and the rows move between actors
through the object store without passing through the driver. At most ``max_in_flight`` chains (and, if set,
``max_bytes_in_flight`` input bytes) are alive at once: when the bound is reached the driver waits for a chain
to finish before asking loaders for more, which is the backpressure that keeps a slow stage from filling
memory. Writers own disjoint shards, write a shard's batches in order and commit its part file atomically when
its last batch is written, so the files are the inline executor's, byte for byte in content. When every stage
runs in one actor, replicas run whole shards instead (:mod:`mdf.executor.ray_shards`, ``whole_shards``).

Actors, placement and S3 parts are imported where a run needs them: an inline run imports this module for
:meth:`RayExecutor.claims` and should not pay for Ray's machinery (~75 ms with ``rich.markup``).
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mdf.errors import MissingDependencyError
from mdf.executor.api import Executor
from mdf.executor.batches import BatchRead, LoaderDone, PassCounter, ShardEnd
from mdf.executor.failures import local_error
from mdf.executor.passes import run_passes
from mdf.executor.plan import Plan
from mdf.executor.ray_metrics import RayMetrics, collect
from mdf.executor.ray_params import RAY_PIP, RayParams, auto_max_in_flight
from mdf.metrics import RunMetrics
from mdf.state import Checkpoint, KeyState


@dataclass
class Chain:
    shard: str
    nbytes: int
    replicas: list[Any]


@dataclass
class Pipeline:
    loaders: list[Any]
    stages: list[list[Any]]
    writers: list[Any]
    load: dict[Any, int] = field(default_factory=lambda: defaultdict(int))
    whole_shards: bool = False  # stages[0] are ShardRunners, also listed as the writers (see ray_shards)
    lost: list[Any] = field(default_factory=list)  # whole-shard replicas dropped after their node died

    def least_loaded(self, stage: int) -> Any:
        """The replica of ``stage`` with the fewest chains in flight (ties: the first)."""
        return min(self.stages[stage], key=lambda a: self.load[a])


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

    def __init__(self, plan: Plan, params: RayParams | None = None, **kwargs: Any) -> None:
        super().__init__(plan, params, **kwargs)
        self.peak_in_flight = 0
        self.peak_bytes_in_flight = 0
        self.replicas: list[int] = []  # per stage group (see fuse_groups)
        self.groups: list[list[int]] = []
        self.max_in_flight = 0
        self._free_before: dict[str, float] = {}
        self.startup_s = 0.0
        self._passes = 0

    def summary(self) -> str:
        from mdf.executor.placement import cluster_address

        address = cluster_address(self.params)
        return f"cluster at {address}" if address else "a local Ray started for this run"

    def run(self, progress: Any = None) -> RunMetrics:
        from mdf.executor.placement import connect

        output = self.plan.output_dir  # the writer's: collect passes (self.plan later) write nothing
        session = self._session = connect(self.params)
        self._pipe: Pipeline | None = None
        self._state: KeyState | None = None
        self._run_id = f"mdf-{int(time.time() * 1000) % 10**10}"
        try:
            metrics = run_passes(self.plan, self._run_pass, self._make_state, progress)
            if session.log_dir and isinstance(metrics.executor_metrics, RayMetrics):
                metrics.executor_metrics.ray_logs = session.log_dir
            return metrics
        except Exception as exc:  # a remote failure reads as one line, its traceback goes to the log file
            raise local_error(exc, output) from None
        finally:
            self._teardown()
            if self._state is not None:
                self._state.close()
            session.close()

    def _make_state(self, num_buckets: int) -> KeyState:
        self._state = KeyState.on_ray(num_buckets, self._run_id)
        return self._state

    def _run_pass(self, plan: Plan, state: KeyState | None, checkpoint: Checkpoint | None, progress: Any) -> RunMetrics:
        """One pass: its own loaders, stage replicas and writers (the key state outlives them)."""
        self.plan = plan
        self.peak_in_flight = self.peak_bytes_in_flight = 0
        self._passes += 1
        try:
            return self._run(progress, state, checkpoint)
        finally:  # the last pass (the one with a checkpoint) on a Ray we shut down next needs no waiting
            self._teardown(wait=checkpoint is None or not self._session.started_here)
            self._pipe = None

    def _teardown(self, wait: bool = True) -> None:
        """Kill this run's actors and wait (briefly) until their resources are free again, so a following run
        or pass on the same cluster sees them; Ray frees them asynchronously. ``wait=False`` when nothing will
        follow on this Ray (the last pass on a local Ray that is shut down next)."""
        import ray

        pipe = self._pipe
        if pipe is None or not ray.is_initialized():
            return
        everyone = {id(a): a for a in [*pipe.loaders, *pipe.writers, *pipe.lost, *(a for g in pipe.stages for a in g)]}
        for actor in everyone.values():
            ray.kill(actor, no_restart=True)
        if not wait:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            free = ray.available_resources()
            if all(free.get(k, 0.0) + 1e-6 >= v for k, v in self._free_before.items()):
                return
            time.sleep(0.05)

    def _start(self, run_id: str, key_state: KeyState | None) -> Pipeline:
        import ray

        from mdf.executor import actors
        from mdf.executor.placement import actor_options, fuse_groups, replica_counts
        from mdf.storage.parts import targets

        plan, spec = self.plan, self.params
        stages = plan.recipe.stages
        available = ray.available_resources()
        self._free_before = {k: v for k, v in available.items() if k in ("CPU", "GPU")}
        self.groups = fuse_groups(stages, spec.fuse_stages)
        heads = [g[0] for g in self.groups]  # a group's stages share resources and replicas
        self.replicas = replica_counts([stages[i] for i in heads], available, heads)
        if self._whole_shards():
            from mdf.executor.ray_shards import start_runners

            runners = start_runners(self, run_id, key_state, available)
            self._pipe = Pipeline([], [runners], runners, whole_shards=True)  # before the wait: torn down on failure
            self._wait_ready(runners)
            self.max_in_flight = len(runners)
            return self._pipe
        n_loaders = spec.loaders if spec.loaders != "auto" else max(1, min(len(plan.shards), 2))
        n_loaders = min(n_loaders, max(1, len(plan.shards)))
        n_writers = spec.writers if spec.writers != "auto" else n_loaders
        io_opts = {"num_cpus": 0, "max_restarts": 0}
        loader_cls = ray.remote(actors.Loader).options(**io_opts)
        reader = plan.recipe.reader
        store = plan.recipe.storage  # each actor applies the recipe's storage: settings in its own process
        fail = plan.recipe.on_damaged_input == "fail"
        loaders = [
            loader_cls.remote(reader, plan.shards[i::n_loaders], plan.batch_rows, store, fail) for i in range(n_loaders)
        ]
        stage_actors = []
        cls = ray.remote(actors.StageWorker)
        for members, n in zip(self.groups, self.replicas, strict=True):
            name = "+".join(stages[i].name for i in members)
            specs = [(i, stages[i]) for i in members]
            resources = stages[members[0]].resources
            group = [
                cls.options(**actor_options(resources, spec, f"{run_id}-{name}-{k}")).remote(
                    specs, key_state, plan.recipe.rejected is not None, store
                )
                for k in range(n)
            ]
            stage_actors.append(group)
        rec = plan.recipe
        writer_cls = ray.remote(actors.ShardWriter).options(**io_opts)
        parts = targets({"writer": rec.writer, "rejected": rec.rejected})  # s3:// outputs: uploaded by the writers
        writers = [writer_cls.remote(rec.writer, rec.rejected, store, parts) for _ in range(n_writers)]
        self._pipe = Pipeline(loaders, stage_actors, writers)  # before the wait: torn down if it fails
        self._wait_ready(loaders + writers + [a for g in stage_actors for a in g])
        self.max_in_flight = (
            spec.max_in_flight
            if spec.max_in_flight != "auto"
            else plan.max_in_flight or auto_max_in_flight(self.replicas, n_loaders)
        )
        return self._pipe

    def _whole_shards(self) -> bool:
        """``whole_shards: auto``: on when all stages run in one actor (one fused group), no chain bound is set and
        every replica gets a shard: then a chain per batch pipelines nothing across actors and only adds
        object-store hops (see :mod:`mdf.executor.ray_shards`). ``max_in_flight`` or ``max_bytes_in_flight`` asks
        for chains; so do fewer shards than replicas, where chains spread one shard's batches over them."""
        p = self.params
        if p.whole_shards != "auto":
            return p.whole_shards
        one_group = len(self.groups) == 1 and len(self.plan.shards) >= self.replicas[0]
        return one_group and p.max_in_flight == "auto" and p.max_bytes_in_flight is None

    def _wait_ready(self, everyone: list[Any]) -> None:
        import ray

        timeout = self.params.placement_timeout_s
        ready, pending = ray.wait(
            [a.__ray_ready__.remote() for a in everyone], num_returns=len(everyone), timeout=timeout
        )
        ray.get(ready)  # surfaces a constructor error (bad params, missing dependency) as itself
        if pending:
            raise RuntimeError(f"{len(pending)} actor(s) did not start within {timeout}s")

    def _run(self, progress: Any, state: KeyState | None, checkpoint: Checkpoint | None) -> RunMetrics:
        import ray

        plan = self.plan
        start = time.perf_counter()
        pipe = self._start(f"{self._run_id}-p{self._passes}", state)
        self.startup_s = time.perf_counter() - start
        counter = PassCounter(RunMetrics(executor="ray", shards=len(plan.shards)), plan.recipe.stages)
        if progress is not None:
            placed = {i: n for g, n in zip(self.groups, self.replicas, strict=True) for i in g}  # per stage
            stages = plan.recipe.stages
            progress.start(plan, [s.name for s in stages], [placed.get(i, 1) for i in range(len(stages))])
        if pipe.whole_shards:
            from mdf.executor.ray_shards import run_shards

            return run_shards(self, pipe, counter, progress, checkpoint, start)
        shard_owner = {s.id: pipe.writers[i % len(pipe.writers)] for i, s in enumerate(plan.shards)}
        next_call: dict[Any, Any] = {}  # meta ref -> (loader, payload ref)
        for loader in pipe.loaders:
            meta_ref, payload_ref = loader.next.options(num_returns=2).remote()
            next_call[meta_ref] = (loader, payload_ref)
        queued: list[tuple[Any, BatchRead, Any]] = []  # loader, message, payload ref awaiting capacity
        in_flight: dict[Any, Chain] = {}
        bytes_in_flight = 0
        expected: dict[str, int] = {}
        written: dict[str, int] = defaultdict(int)
        commits: dict[Any, str] = {}  # commit ref -> shard: a shard is done (checkpoint) when its ref is
        with self._driving(pipe, progress):
            while next_call or queued or in_flight:
                while queued and self._has_room(len(in_flight), bytes_in_flight, queued[0][1].nbytes):
                    loader, meta, payload_ref = queued.pop(0)
                    ref, chain = self._submit(pipe, shard_owner, meta, payload_ref)
                    in_flight[ref] = chain
                    bytes_in_flight += chain.nbytes
                    meta_ref, payload_ref = loader.next.options(num_returns=2).remote()
                    next_call[meta_ref] = (loader, payload_ref)
                self.peak_in_flight = max(self.peak_in_flight, len(in_flight))
                self.peak_bytes_in_flight = max(self.peak_bytes_in_flight, bytes_in_flight)
                waiting = list(in_flight) + (list(next_call) if not queued else []) + list(commits)
                ready, _ = ray.wait(waiting, num_returns=1)
                ready, _ = ray.wait(waiting, num_returns=len(waiting), timeout=0)
                for ref in ready:
                    if ref in commits:
                        self._committed(ray.get(ref), commits.pop(ref), checkpoint, counter)
                        continue
                    if ref in in_flight:
                        chain = in_flight.pop(ref)
                        bytes_in_flight -= chain.nbytes
                        for actor in chain.replicas:
                            pipe.load[actor] -= 1
                        counter.done(ray.get(ref))
                        written[chain.shard] += 1
                        if written[chain.shard] == expected.get(chain.shard):
                            owner = shard_owner[chain.shard]
                            commits[owner.commit.remote(chain.shard, expected[chain.shard])] = chain.shard
                        continue
                    loader, payload_ref = next_call.pop(ref)
                    meta = ray.get(ref)
                    if isinstance(meta, LoaderDone):
                        continue
                    if isinstance(meta, ShardEnd):
                        expected[meta.shard] = meta.batches
                        if written[meta.shard] == meta.batches:
                            owner = shard_owner[meta.shard]
                            commits[owner.commit.remote(meta.shard, meta.batches)] = meta.shard
                        meta_ref, payload_ref = loader.next.options(num_returns=2).remote()
                        next_call[meta_ref] = (loader, payload_ref)
                        continue
                    counter.read(meta)
                    queued.append((loader, meta, payload_ref))
                if progress is not None:
                    progress.update_counts(counter.metrics)
            for ref, shard in commits.items():
                self._committed(ray.get(ref), shard, checkpoint, counter)
        return self._finish(counter, pipe, start)

    @contextmanager
    def _driving(self, pipe: Pipeline, progress: Any) -> Iterator[None]:
        """A driver loop's end, either mode: on a failure the writers drop their uncommitted parts."""
        try:
            yield
        except BaseException:
            for w in pipe.writers:  # whole shards: the replicas
                w.abort_all.remote()
            raise
        finally:
            if progress is not None:
                progress.stop()

    def _finish(self, counter: PassCounter, pipe: Pipeline, start: float) -> RunMetrics:
        metrics = counter.finish(time.perf_counter() - start)
        metrics.executor_metrics = self._stage_stats(pipe, metrics.wall_s)
        return metrics

    def _stage_stats(self, pipe: Pipeline, wall_s: float) -> RayMetrics:
        return collect(self, pipe, wall_s)

    @staticmethod
    def _committed(files: list[Any], shard: str, checkpoint: Checkpoint | None, counter: PassCounter) -> None:
        """A shard's parts are committed (``files``: what its writer's commit returned; getting it surfaced a
        failed commit): note their open uploads, then the counts and the checkpoint."""
        from mdf.storage.parts import record

        record(files)
        counter.committed(shard, checkpoint)

    def _has_room(self, chains: int, nbytes: int, next_bytes: int) -> bool:
        if chains >= self.max_in_flight:
            return False
        cap = self.params.max_bytes_in_flight
        return cap is None or chains == 0 or nbytes + next_bytes <= cap

    def _submit(self, pipe: Pipeline, owner: dict[str, Any], meta: BatchRead, ref: Any) -> tuple[Any, Chain]:
        used = []
        for k in range(len(pipe.stages)):
            actor = pipe.least_loaded(k)
            pipe.load[actor] += 1
            used.append(actor)
            ref = actor.process.remote(meta, ref)
        done = owner[meta.shard].write.remote(meta, ref)
        return done, Chain(meta.shard, meta.nbytes, used)
