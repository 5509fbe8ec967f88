"""The key state's buckets as Ray actors: the :class:`mdf.state.service.Buckets` transport of a Ray run.

One actor per bucket, ``max_restarts=0``: a restarted bucket would be empty, so a dead bucket fails the run, in
one line naming it (:func:`mdf.executor.ray.errors.local_error`), and ``--resume`` continues from the last
snapshot. A batch's per-bucket requests are all submitted before any is awaited, so they run in parallel and a
batch costs one round trip.

The transport travels to the stage replicas as the buckets' actor names, not their handles: a handle inside an
actor's constructor arguments counts as an argument in the object store, which Ray warns about (its issue 53727:
such an actor cannot be restarted once the argument is gone) on every run with ``max_restarts > 0``; a name is
looked up again wherever it lands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mdf.errors import OperatorError
from mdf.runlog import LOG
from mdf.state import KeyState, StateBucket
from mdf.state.bucket import write_atomically
from mdf.state.service import Call

BUCKET = "bucket"


def bucket_name(prefix: str, i: int) -> str:
    """The actor name of bucket ``i`` of the run (or pass) ``prefix``: what a lost bucket's error names."""
    return f"{prefix}-{BUCKET}-{i}"


class KeyStateLost(OperatorError):
    """A bucket actor died (its process or its node): the keys it held are gone, so the run cannot go on."""


class RayBuckets:
    """Bucket actors, reached by name."""

    def __init__(self, names: list[str], handles: list[Any] | None = None) -> None:
        self.names = names
        self._handles = handles

    @classmethod
    def start(cls, num_buckets: int, prefix: str) -> RayBuckets:
        """One zero-CPU actor per bucket, waited for (a bucket that cannot start fails the run here).

        A bucket whose node dies before the bucket ran holds no keys yet, so it is started again (under a new
        name: Ray may not have freed the dead one's), up to twice. This is the ``--resume`` right after a lost
        host: Ray places actors on the killed node until its health check gives up on it, and the test of a
        worker host lost mid-run failed so in CI (the resumed run's bucket died "before it started running")."""
        import ray
        from ray.exceptions import ActorDiedError

        actor = ray.remote(StateBucket)
        names = [bucket_name(prefix, i) for i in range(num_buckets)]

        def place(i: int) -> Any:
            return actor.options(name=names[i], num_cpus=0, max_restarts=0).remote(i)

        handles = [place(i) for i in range(num_buckets)]
        for again in (1, 2, 0):
            died = []
            for i, h in enumerate(handles):
                try:
                    ray.get(h.__ray_ready__.remote())
                except ActorDiedError:
                    if not again:
                        raise
                    died.append(i)
            if not died:
                break
            for i in died:
                LOG.warning("key-state bucket %s died before it ran (its node was lost): starting it again", names[i])
                names[i] = f"{bucket_name(prefix, i)}-again{again}"
                handles[i] = place(i)
        where = ray.get([h.__ray_call__.remote(_node_address) for h in handles])
        for name, node in zip(names, where, strict=True):  # a lost node takes these keys with it: say where they are
            LOG.info("key-state bucket %s on the node at %s", name, node)
        return cls(names, handles)

    @property
    def handles(self) -> list[Any]:
        if self._handles is None:
            import ray

            self._handles = [ray.get_actor(name) for name in self.names]
        return self._handles

    def __len__(self) -> int:
        return len(self.names)

    def __getstate__(self) -> dict[str, Any]:
        return {"names": self.names}  # looked up by name where it lands (see the module docstring)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.names, self._handles = state["names"], None

    def call(self, calls: Sequence[Call]) -> list[Any]:

        handles = self.handles
        return self._get(
            [getattr(handles[i], method).remote(*args) for i, method, args in calls], [c[0] for c in calls]
        )

    def _get(self, refs: list[Any], asked: list[int]) -> list[Any]:
        import ray

        try:
            return ray.get(refs)  # type: ignore[no-any-return]
        except ray.exceptions.RayActorError as exc:
            raise self._lost(exc, asked) from None

    def _lost(self, exc: BaseException, asked: list[int]) -> KeyStateLost:
        """The one line a dead bucket becomes: which bucket, and the way on (the last snapshot)."""
        import ray

        dead = [i for i in dict.fromkeys(asked) if not _alive(ray, self.names[i])] or list(dict.fromkeys(asked))
        names = ", ".join(f"{i} ({self.names[i]})" for i in dead)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return KeyStateLost(
            f"key-state bucket {names} was lost ({first}): the keys it held are gone, so the run stops; "
            "`mdf run --resume` continues from the last snapshot (a bucket is never restarted empty)"
        )

    def save(self, paths: list[str], completed: list[str]) -> None:
        """Each bucket sends its bytes (one bucket's in memory at a time) and this process writes them."""

        for i, (handle, path) in enumerate(zip(self.handles, paths, strict=True)):
            write_atomically(path, self._get([handle.dump.remote(completed)], [i])[0])

    def load(self, paths: list[str]) -> None:

        for i, (handle, path) in enumerate(zip(self.handles, paths, strict=True)):  # read here: the driver's files
            with open(path, "rb") as f:
                self._get([handle.load.remote(f.read())], [i])

    def close(self) -> None:
        import ray

        for handle in self.handles:
            ray.kill(handle, no_restart=True)


def _node_address(_bucket: Any) -> str:
    from mdf.executor.ray.parts import node_address

    return node_address()


def _alive(ray: Any, name: str) -> bool:
    try:
        ray.get_actor(name)
        return True
    except ValueError:  # no live actor of that name
        return False


def ray_key_state(num_buckets: int, prefix: str) -> KeyState:
    """A :class:`~mdf.state.KeyState` whose buckets are actors named ``<prefix>-bucket-<i>``."""
    return KeyState(RayBuckets.start(num_buckets, prefix))
