"""Counts of a run, one record for everything that adds them up: the run's metrics, the per-shard tally and the
checkpoint that lets ``metrics.json`` after ``--resume`` cover the whole run.

:class:`Counts` is rows read, kept and rejected, batches, the reader's reject reasons, damaged files and the
operators' counters (recipe order). A batch's counts, a shard's, the committed shards' and a resumed run's
restored ones are the same record, added with :meth:`Counts.merge`; :meth:`Counts.add_to` adds one to a
:class:`~mdf.metrics.RunMetrics`. Executors have several shards in flight at once (inline: one per worker thread;
Ray: one per replica or loader), so :class:`ShardTally` keeps each shard's counts apart until its commit: a
checkpoint holds exactly the committed shards' counts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from mdf.metrics import OperatorMetrics, RunMetrics
from mdf.run_stats import DamagedInput

_ROWS = ("rows_read", "rows_written", "rows_rejected", "batches")


@dataclass
class Counts:
    """Rows, batches, reader reasons, damaged files and per-operator counters (by position in the recipe)."""

    reader_reasons: dict[str, int] = field(default_factory=dict)
    damaged: list[DamagedInput] = field(default_factory=list)
    operators: list[OperatorMetrics] = field(default_factory=list)
    """Per operator of the recipe, in recipe order (a batch's carry every operator its chain ran)."""
    rows_read: int = 0
    """Rows the reader gave, its rejections included (= written + rejected once every batch is done)."""
    rows_written: int = 0
    rows_rejected: int = 0
    """The reader's rejections and the operators'."""
    batches: int = 0

    def merge(self, other: Counts) -> Counts:
        """Add ``other`` to this record (operators by position; ``other``'s extra ones are copied) and return it."""
        for k in _ROWS:
            setattr(self, k, getattr(self, k) + getattr(other, k))
        for k, v in other.reader_reasons.items():
            self.reader_reasons[k] = self.reader_reasons.get(k, 0) + v
        self.damaged.extend(other.damaged)
        for i, op in enumerate(other.operators):
            if i < len(self.operators):
                self.operators[i].merge(op)
            else:
                self.operators.append(OperatorMetrics.from_dict(asdict(op)))
        return self

    def add_to(self, metrics: RunMetrics, first: bool = False) -> None:
        """Add the rows, reasons and damaged files to ``metrics`` (``first``: the damaged files go before its own,
        as a resumed run's restored ones do), and the operators' counters to the operators ``metrics`` lists."""
        for k in _ROWS:
            setattr(metrics, k, getattr(metrics, k) + getattr(self, k))
        for k, v in self.reader_reasons.items():
            metrics.reader_reasons[k] = metrics.reader_reasons.get(k, 0) + v
        if first:
            metrics.damaged[:0] = self.damaged
        else:
            metrics.damaged.extend(self.damaged)
        for op, mine in zip(metrics.operators(), self.operators, strict=False):
            op.merge(mine)

    def to_dict(self) -> dict[str, Any]:
        """Plain data, as the checkpoint manifest keeps it (JSON)."""
        return {
            **{k: getattr(self, k) for k in _ROWS},
            "reader_reasons": dict(self.reader_reasons),
            "damaged": [d.to_dict() for d in self.damaged],
            "operators": [asdict(op) for op in self.operators],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Counts:
        d = d or {}
        return cls(
            **{k: int(d.get(k, 0)) for k in _ROWS},
            reader_reasons=dict(d.get("reader_reasons") or {}),
            damaged=[DamagedInput.from_dict(x) for x in d.get("damaged") or []],
            operators=[OperatorMetrics.from_dict(x) for x in d.get("operators") or []],
        )


class ShardTally:
    """Per-shard counts while shards are in flight; :meth:`commit` returns the committed shards' counts so far."""

    def __init__(self) -> None:
        self.open: dict[str, Counts] = {}
        self.committed = Counts()

    def add(self, shard: str, counts: Counts) -> None:
        self.open.setdefault(shard, Counts()).merge(counts)

    def commit(self, shard: str) -> Counts:
        self.committed.merge(self.open.pop(shard, Counts()))
        return self.committed
