"""Key-state service used by deduplicators: "has an earlier row claimed this key?", sharded into buckets.

See :mod:`mdf.state.bucket` (one bucket: native key set, claimant bits, cluster pairs, plugins' state),
:mod:`mdf.state.types` (the base of the state types plugins register),
:mod:`mdf.state.service` (routing by bucket, one round trip a batch, inline or Ray actors),
:mod:`mdf.state.cluster` (the union-find between the passes of cluster mode) and
:mod:`mdf.state.checkpoint` (snapshots and resume).
"""

from mdf.state.bucket import StateBucket, new_key_set
from mdf.state.checkpoint import Checkpoint
from mdf.state.service import KeyState, auto_buckets
from mdf.state.types import NO_MATCH, StateType

__all__ = ["NO_MATCH", "Checkpoint", "KeyState", "StateBucket", "StateType", "auto_buckets", "new_key_set"]
