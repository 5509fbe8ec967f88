"""What a run is: the recipe after overrides and the input listing, hashed; ``--resume`` continues only the same.

The recipe is taken without ``executor``, ``source`` and ``on_damaged_input`` (how to run and when to stop do not
change what is written), output paths made absolute, and the input listing as (path, size, mtime). For an
object (``s3://...``) size and mtime come from the listing the reader made (:func:`mdf.io.sharding.file_info`):
an object rewritten under the same key gets a new last-modified time, so ``--resume`` sees it changed. URLs are
taken without their credentials (:mod:`mdf.storage.redact`): they are written into ``run.json``, and a presigned
URL signed again after a kill names the same object, so ``--resume`` still continues its run. Written to
``_mdf/run.json`` before any data (:mod:`mdf.output.local`) and into the checkpoint manifest.

The files the recipe names besides its input (a model, a blocklist, a dedup index: :mod:`mdf.named_files`) are
recorded beside it (``files``) and compared by ``--resume`` too, but are not part of the hash: the hash names the
run (a dedup index knows the generation a run added by it), and what the run added to a file it names must not
make its own resume look like another run.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

from mdf.io.sharding import file_info
from mdf.named_files import changed, identities
from mdf.output_paths import output_dirs
from mdf.storage.errors import StorageError
from mdf.storage.redact import redact_tree, redact_url
from mdf.storage.urls import is_remote


@dataclass(frozen=True)
class Fingerprint:
    """What a run is: the canonical recipe and the input listing, and their hash."""

    recipe: dict[str, Any]
    inputs: list[list[Any]]
    files: dict[str, Any] = field(default_factory=dict)  # yaml key -> {path: identity} (mdf.named_files)

    @property
    def sha(self) -> str:
        blob = json.dumps({"recipe": self.recipe, "inputs": self.inputs}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    @classmethod
    def of(cls, plan: Any) -> Fingerprint:
        # how to run (executor) and when to stop (on_damaged_input) do not change what is written
        recipe = plan.recipe.model_dump(mode="json", exclude={"executor", "source", "on_damaged_input"})
        for role, path in output_dirs(plan.recipe):
            recipe[role]["path"] = path if is_remote(path) else os.path.abspath(path)
        inputs = []
        for path in dict.fromkeys(plan.reader.input_files(plan.shards)):
            try:
                inputs.append([redact_url(path), *file_info(path)])
            except (OSError, StorageError):
                inputs.append([redact_url(path), None, None])
        recipe = redact_tree(recipe)
        made = cls(recipe, inputs)
        return cls(recipe, inputs, identities(plan, made.sha))

    def differs(self, record: dict[str, Any]) -> str | None:
        """Why ``--resume`` must not continue the run of ``record`` (its ``run.json``), or ``None``: another recipe
        or input listing (:meth:`changes`), or a file the recipe names that changed since the run began."""
        if record.get("fingerprint") != self.sha:
            return self.changes(record)
        before = record.get("files")
        if not isinstance(before, dict):  # a record of an mdf that did not note them: nothing to compare
            return None
        why = changed(before, self.files)
        if why is None:
            return None
        return f"{why}, so the rows still to do would be made with another file than those done"

    def changes(self, record: dict[str, Any]) -> str:
        """What differs from a run record, in one line (the first few recipe keys, then input files)."""
        parts = []
        old, new = _flatten(record.get("recipe", {})), _flatten(self.recipe)
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                parts.append(f"{key}: {old.get(key)!r} -> {new.get(key)!r}")
        if len(parts) > 3:
            parts = [*parts[:3], f"{len(parts) - 3} more key(s)"]
        before = {p: (s, m) for p, s, m in record.get("inputs", [])}
        now = {p: (s, m) for p, s, m in self.inputs}
        for what, names in (
            ("added", [p for p in now if p not in before]),
            ("removed", [p for p in before if p not in now]),
            ("changed", [p for p in now if p in before and before[p] != now[p]]),
        ):
            if names:
                parts.append(f"{len(names)} input file(s) {what} (e.g. {names[0]})")
        return "; ".join(parts) or "the run record is unreadable"


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"stages[0].operators[1].min_length": 200, ...}``: YAML paths as the user writes them."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "params" and prefix.endswith("]"):
                out.update(_flatten(v, prefix))
            else:
                out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = value
    return out
