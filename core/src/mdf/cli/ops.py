"""``mdf ops``: every registered operator, reader and executor: kind, plugin, parameters (type, default), doc.

Operators and readers also show what batch sizing reads from them, their ``modality`` and ``cost_class``,
marked ``(default)`` where left to the kind's base class, so a media operator that forgot to declare is
visible here rather than silently sized for text."""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import click
from pydantic_core import PydanticUndefined
from rich.console import Console
from rich.table import Table

from mdf.operators import is_declared
from mdf.plugins import load_plugins


def describe(cls: Any, common: dict[str, Any] | None = None) -> dict[str, Any]:
    """``common``: fields every component of the kind has besides its own (an executor's batch_rows, resume)."""
    params = []
    for name, f in {**(common or {}), **cls.Params.model_fields}.items():
        default = None if f.default is PydanticUndefined else f.default
        if f.default_factory is not None:
            default = f.default_factory()
        params.append(
            {
                "name": name,
                "type": _type_name(f.annotation),
                "choices": _choices(f.annotation),
                "default": default,
                "required": f.is_required(),
                "doc": f.description or "",
            }
        )
    reads = [{"param": k, "types": v} for k, v in (getattr(cls, "reads", None) or {}).items()]
    out = {"name": cls.name, "kind": cls.kind, "doc": cls.doc(), "params": params, "reads": reads}
    for attr in ("modality", "cost_class"):  # what batch sizing reads; "default" when left to the kind's base
        if hasattr(cls, attr):
            out[attr] = {"value": getattr(cls, attr), "declared": is_declared(cls, attr)}
            if attr in cls.Params.model_fields:
                out[attr]["parameter"] = attr  # the recipe says it (the Parquet reader's modality)
    return out


def _type_name(annotation: Any) -> str:
    """Readable type: ``int | None``, ``list[str]``, ``file path`` (pydantic's FilePath)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        meta = " ".join(str(m) for m in args[1:])
        return "file path" if "file" in meta else _type_name(args[0])
    if origin is typing.Literal:
        return "|".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None:
        inner = ", ".join(_type_name(a) for a in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]" if inner else str(origin.__name__)
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def _choices(annotation: Any) -> list[Any] | None:
    """The allowed values of a ``Literal`` parameter (also inside ``Annotated`` or ``| None``), else None."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return list(args)
    if origin is typing.Annotated:
        return _choices(args[0])
    if origin in (typing.Union, types.UnionType):
        found = [c for a in args if (c := _choices(a)) is not None]
        return [c for group in found for c in group] or None
    return None


def _param_line(p: dict[str, Any]) -> str:
    """``normalize: none|lower|nfc_ws|alnum = none``: a choice's default is shown bare, like the choices."""
    if p["required"]:
        return f"{p['name']}: {p['type']} (required)"
    default = p["default"] if p["choices"] and p["default"] in p["choices"] else repr(p["default"])
    return f"{p['name']}: {p['type']} = {default}"


@click.command("ops")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def command(as_json: bool) -> None:
    """List every operator, reader and executor with its parameters."""
    from mdf.recipe import ExecutorSpec

    plugins = load_plugins()
    plugins.resolve_all()  # every class registered by reference; a broken one is listed as its plugin's error
    rows = []
    common = {k: f for k, f in ExecutorSpec.model_fields.items() if k != "type"}
    for registry, shared in ((plugins.operators, None), (plugins.readers, None), (plugins.executors, common)):
        for name, cls in registry.items():
            d = describe(cls, shared)
            d["plugin"] = registry.owner(name).plugin
            d["distribution"] = registry.owner(name).distribution
            rows.append(d)
    failed = [i for i in plugins.infos if i.error]
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    console = Console(width=160)
    for title, kinds in (
        ("operator", lambda k: k not in ("executor", "reader")),
        ("reader", lambda k: k == "reader"),
        ("executor", lambda k: k == "executor"),
    ):
        console.print(_table(title, [d for d in rows if kinds(d["kind"])]))
    for info in failed:  # after the tables, where it is seen: its operators are missing from the lists above
        first = info.error.splitlines()[0] if info.error else ""
        console.print(f"[red]plugin '{info.name}' ({info.distribution}) failed to load: {first}[/]", highlight=False)


def _declaration(attr: str, d: dict[str, Any]) -> str:
    """``modality: image``, ``cost_class: filter (default)``, ``modality: its modality parameter``."""
    if "parameter" in d:
        return f"{attr}: its {d['parameter']} parameter"
    if d["value"] is None:
        return f"{attr}: undeclared"
    return f"{attr}: {d['value']}" + ("" if d["declared"] else " (default)")


def _table(title: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=f"{len(rows)} {title}(s)", title_justify="left", show_lines=True)
    for col in (title, "kind", "plugin", "parameters", "doc"):
        table.add_column(col)
    for d in rows:
        params = "\n".join(_param_line(p) for p in d["params"])
        reads = "; ".join(f"reads {r['param']}: {r['types']}" for r in d["reads"])
        sizing = "; ".join(_declaration(k, d[k]) for k in ("modality", "cost_class") if k in d)
        notes = "".join(f"\n{n}" for n in (reads, sizing) if n)
        table.add_row(d["name"], d["kind"], d["plugin"], params or "-", d["doc"] + notes)
    return table
