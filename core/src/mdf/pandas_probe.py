"""Keeps pyarrow from importing pandas in an mdf process that never uses pandas.

pyarrow's first conversion of Python objects (``pa.array([...])``, ``pa.scalar(4)``, ``pc.less(arr, 4)``, even
``pa.array(numpy_array)``) asks its pandas shim (``pyarrow.lib._pandas_api``) whether pandas is installed, and
the shim finds out by importing it. Most users' environments have pandas (Ray Data and Hugging Face
``datasets`` depend on it): there the 10-row run of ``benchmarks/bench_fixed_cost.py`` took 3.1-3.5x the bare
``import pyarrow.parquet, pyarrow.compute`` instead of 1.9-2.1x, the difference all ``import pandas``, for a run
that never makes a pandas object.

:func:`defer_pandas` asks the shim once while ``import pandas`` is made to fail, so the shim records "no
pandas". A hook stays on ``import pandas``: the moment anything imports it (a user's operator, Ray Data), the
shim is told again, and from then on pyarrow's pandas integration is what it always was. Before pandas is
imported no pandas object can exist, so pyarrow answers differently only where it would make pandas objects
itself: ``as_py()`` of a nanosecond timestamp or duration gives ``datetime``/``timedelta``, or raises
``ValueError`` for a value with nanoseconds (what it does where pandas is not installed), instead of
``pandas.Timestamp``/``Timedelta``. ``to_pandas()``, ``from_pandas()`` and ``pa.array(series)`` import pandas as
before.

pyarrow's C++ side imports pandas by other ways, which this cannot defer without breaking pandas objects later
(it tries once, and a failure sticks): type inference for a Python value and ``Array.to_numpy``. mdf's run paths
avoid both (:mod:`mdf.arrowpy`).

Only mdf's own processes do this (the ``mdf`` command, mdf's Ray actors): importing :mod:`mdf` as a library
changes nothing in the caller's pyarrow. If a pyarrow release renames the shim, nothing is changed here.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any


def defer_pandas() -> bool:
    """Make pyarrow's shim record "no pandas" until pandas is imported; True when it did (pandas is installed,
    not yet imported, and the shim had not imported it)."""
    if "pandas" in sys.modules or any(isinstance(f, _WhenPandasLoads) for f in sys.meta_path):
        return False
    shim = _shim()
    if shim is None or getattr(shim, "_pd", None) is not None:
        return False
    blocker = _Blocked()
    sys.meta_path.insert(0, blocker)
    try:
        _ = shim.have_pandas  # the shim's one import attempt: it fails here, and the shim remembers that
    finally:
        sys.meta_path.remove(blocker)
    sys.meta_path.insert(0, _WhenPandasLoads())
    return True


def _shim() -> Any:
    try:
        import pyarrow.lib
    except ImportError:
        return None
    shim = getattr(pyarrow.lib, "_pandas_api", None)
    return shim if shim is not None and hasattr(type(shim), "have_pandas") else None


class _Blocked(importlib.abc.MetaPathFinder):
    """``import pandas`` fails while this is first on ``sys.meta_path`` (nothing of pandas is loaded)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("pandas deferred by mdf", name=name)
        return None


class _WhenPandasLoads(importlib.abc.MetaPathFinder):
    """On the first ``import pandas``: the usual finders find it, and once its ``__init__`` has run, pyarrow's
    shim is told (its ``pd`` attribute imports pandas again, which is then only a ``sys.modules`` lookup)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != "pandas":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenTellPyarrow(spec.loader)
                return spec
        return None


class _ThenTellPyarrow(importlib.abc.Loader):
    """pandas's own loader, then pyarrow's shim told that pandas is there."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self._loader  # what pandas sees of itself is its own loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        shim = _shim()
        if shim is None:
            return
        # the property imports pandas into the shim; a pandas pyarrow does not support stays unused, as before
        with contextlib.suppress(ImportError):
            shim.pd  # noqa: B018

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
