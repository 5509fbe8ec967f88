"""The report's "Operator counters" section: what operators count beyond rows (``OperatorMetrics.counters``).

A counter is a name and a whole number summed over every worker. Plain names (``tokens``, ``truncated``) are listed
per operator with their rate over the run's wall time (tokens/s for ``tokens``). Names of the form
``<group>/<key>`` form a group: ``tokens_by_source/web``, ``tokens_by_source/code`` are one table with each key's
share; a group whose keys are bins (``doc_tokens/<=64``: every key starts with ``<=`` or ``>``) is a histogram,
drawn as bars in the keys' order. Operators need nothing but :meth:`mdf.OperatorMetrics.count` to appear here.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from mdf.metrics import RunMetrics
from mdf.report import plots
from mdf.report.html import plot, section, table


def _is_histogram(keys: list[str]) -> bool:
    return bool(keys) and all(k.startswith(("<=", ">")) for k in keys)


def counters(m: RunMetrics) -> Markup:
    parts: list[Markup | str] = []
    wall = m.wall_s
    for stage in m.stages:
        for op in stage.operators:
            if not op.counters:
                continue
            label = f"{stage.name}/{op.name}"
            plain: list[list[Any]] = []
            groups: dict[str, dict[str, int]] = {}
            for name, value in op.counters.items():
                group, sep, key = name.partition("/")
                if sep:
                    groups.setdefault(group, {})[key] = value
                else:
                    plain.append([name, value, round(value / wall, 1) if wall > 0 else 0.0])
            parts.append(Markup("<h3>{}</h3>").format(label))
            if plain:
                parts.append(table(["counter", "count", "per second of wall time"], sorted(plain), numeric=(1, 2)))
            for group, values in groups.items():
                keys = list(values)
                total = sum(values.values())
                if _is_histogram(keys):  # bins in the order the operator counted them from: sort by bound
                    keys.sort(key=_bound)
                    rows = [[k, values[k], round(100 * values[k] / total, 2) if total else 0.0] for k in keys]
                    img = plots.safely(plots.bars, keys, [values[k] for k in keys], group, f"histogram of {group}")
                    parts += [Markup("<p><b>{}</b> (histogram)</p>").format(group), plot(img)]
                else:
                    keys.sort(key=lambda k: -values[k])
                    rows = [[k, values[k], round(100 * values[k] / total, 2) if total else 0.0] for k in keys]
                    parts.append(Markup("<p><b>{}</b></p>").format(group))
                what = group.split("_by_")[-1] if "_by_" in group else "bin"
                parts.append(table([what, "count", "%"], rows, numeric=(1, 2)))
    if not parts:
        return section("counters", "Operator counters", "no operator counted anything beyond rows")
    return section("counters", "Operator counters", *parts)


def _bound(key: str) -> tuple[int, float]:
    """``<=64`` -> (0, 64); ``>65536`` -> (1, 65536): ``<=`` bins by their bound, the open ``>`` bin last."""
    try:
        return (0, float(key[2:])) if key.startswith("<=") else (1, float(key[1:]))
    except ValueError:
        return (2, 0.0)
