"""Checks against the input before any work: output folders, the reader's modality, the columns operators read.

Each operator declares the columns it reads and the types it accepts (:attr:`mdf.Operator.reads`); here they
are followed through the recipe against the reader's schema (Parquet footers, a JSONL sample), adding the
columns refiners declare they write. A missing column or a wrong type fails ``validate`` and ``run`` with exit 2
and the YAML path of the parameter that names the column, instead of a ``KeyError`` halfway through a run.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from mdf.errors import RecipeError
from mdf.io.rejected import rejected_schema
from mdf.output.local import check_output_paths

_FAMILIES = {  # a view type (string_view) is none of them: the operators' Arrow kernels do not take it
    "string": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
    "path": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
    "binary": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t),
    "integer": pa.types.is_integer,
    "float": pa.types.is_floating,
    "number": lambda t: pa.types.is_integer(t) or pa.types.is_floating(t),
    "bool": pa.types.is_boolean,
    "list": lambda t: pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t),
    "struct": pa.types.is_struct,
    "any": lambda t: True,
}


def preflight(plan: Any) -> None:
    """Everything about outputs and columns that can be known before reading data; RecipeError (exit 2)."""
    check_output_paths(plan.recipe)
    check_modality(plan)
    check_columns(plan)


def check_modality(plan: Any) -> None:
    """A reader's ``modality`` parameter names a registered modality (a typo fails here, not when planning)."""
    name = plan.reader.output_modality()
    if name is not None:
        plan.plugins.modalities.get(name, "reader.modality")


def accepts(family: str, dtype: pa.DataType | str) -> bool:
    """Whether ``dtype`` (an Arrow type, or a family a refiner declared) is one of ``family``'s ``|`` parts."""
    parts = [p.strip() for p in family.split("|")]
    if isinstance(dtype, str):
        parts = ["string" if p == "path" else p for p in parts]  # a path is a string to the check
        dtype = "string" if dtype == "path" else dtype
        if dtype == "any":
            return True  # a refiner declared the column but not its type
        return "any" in parts or dtype in parts or (dtype in ("integer", "float") and "number" in parts)
    # a null column (a Parquet column of type null: no value at all) is none of them either: every operator reading
    # it failed at its first batch (a JSONL sample leaves out fields it saw only null, so none comes from there)
    return any(_FAMILIES[p](dtype) for p in parts if p in _FAMILIES)


def declared(cls: Any, params: Any, attr: str) -> list[tuple[str, str, str]]:
    """``(key, column, types)`` of an operator's ``reads`` or ``writes`` with its parameters filled in."""
    out = []
    for key, types in (getattr(cls, attr) or {}).items():
        value = getattr(params, key) if key in cls.Params.model_fields else key
        for column in value if isinstance(value, list | tuple) else [value]:
            if column:
                out.append((key, str(column), types))
    return out


def written_columns(plan: Any) -> dict[str, str]:
    """``{column: types}`` of every column a refiner of the recipe declares it writes (recipe order)."""
    out: dict[str, str] = {}
    for stage in plan.recipe.stages:
        for spec in stage.operators:
            cls = plan.plugins.operators.get(spec.name)
            params = cls.Params(**spec.params)
            for column, types in (cls.written_columns(params) or {}).items():
                out.setdefault(column, types)
            for _, column, types in declared(cls, params, "writes"):
                out.setdefault(column, types)
    return out


def rejected_folder_schema(plan: Any) -> pa.Schema | None:
    """The one schema of the run's ``rejected:`` part files (:mod:`mdf.io.rejected`); ``None``: unknown."""
    written = written_columns(plan)
    for stage in plan.recipe.stages:  # and what operators add to the rows they reject (an index's _duplicate_of)
        for spec in stage.operators:
            cls = plan.plugins.operators.get(spec.name)
            for column, family in cls.rejected_columns(cls.Params(**spec.params)).items():
                written.setdefault(column, family)
    return rejected_schema(plan.reader.schema(plan.shards), written)


def check_columns(plan: Any) -> None:
    schema = plan.reader.schema(plan.shards)
    if schema is None:
        return
    columns: dict[str, pa.DataType | str] = {f.name: f.type for f in schema}
    source = ", ".join(schema.names) or "none"
    for i, stage in enumerate(plan.recipe.stages):
        for j, spec in enumerate(stage.operators):
            cls = plan.plugins.operators.get(spec.name)
            params = cls.Params(**spec.params)
            path = f"stages[{i}].operators[{j}]"
            for key, column, types in declared(cls, params, "reads"):
                where = f"{path}.{key}" if key in cls.Params.model_fields else path
                if column not in columns:
                    raise RecipeError(
                        f"{spec.name} reads column '{column}', which the input does not have (input columns: "
                        f"{source}); name an existing column or add it to reader.columns",
                        where,
                    )
                if not accepts(types, columns[column]):
                    raise RecipeError(
                        f"{spec.name} reads column '{column}' as {types}, but it is {columns[column]} in the "
                        f"input; name a {types} column or cast it upstream",
                        where,
                    )
            written = cls.written_columns(params)
            if written is not None:
                columns.update(written)
                continue
            if cls.writes is None:
                return  # a refiner that does not say what it adds: the schema after it is unknown
            for _, column, types in declared(cls, params, "writes"):
                columns[column] = types
