"""Where pandas is installed (most users' environments: Ray Data and ``datasets`` depend on it), an
``mdf run`` that never makes a pandas object does not import it: pyarrow would, on its first Python-value
conversion, type inference or ``to_numpy`` (0.5 s; the 10-row run of ``benchmarks/bench_fixed_cost.py`` went
from 1.9x to 3.5x the bare pyarrow import). :mod:`mdf.pandas_probe` and :mod:`mdf.arrowpy` keep it out, and
pyarrow's pandas integration is unchanged once something does import pandas.

The ``all`` session installs pandas for these tests; elsewhere they skip without it (and fail under ``CI=true``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from mdf.demo_data import DemoSpec, make_table

from .conftest import ROOT, modules_after_mdf


def _need_pandas() -> None:
    if importlib.util.find_spec("pandas") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pandas is not installed: the nox session 'all' installs it for these tests")
        pytest.skip("pandas is not installed here: nothing for mdf to keep out")


def _text_rows(tmp: Path) -> list[str]:
    tmp.joinpath("data").mkdir()
    path = tmp / "data" / "rows.parquet"
    pq.write_table(make_table(DemoSpec(rows=600)), path)
    return [str(path)]


def _warc(tmp: Path) -> list[str]:
    from mdf_text.demo_warc import write_warc

    return [write_warc(str(tmp / "warc"), pages=60)]


BLOCKLIST = str(ROOT / "examples" / "blocklist.txt")
RECIPES = {
    # bench_fixed_cost.py's recipe: one filter, rejected rows, the report
    "length": (_text_rows, "parquet", [{"text_length_filter": {"min_length": 100}}]),
    # examples/text.yaml's operators (the README demo)
    "text": (_text_rows, "parquet", [
        {"url_filter": {"blocklist": BLOCKLIST}},
        {"text_length_filter": {"min_length": 200, "max_length": 100000}},
        {"exact_dedup": {"column": "text", "normalize": "nfc_ws"}},
        {"minhash_dedup": {"column": "text", "threshold": 0.7}},
    ]),
    # examples/commoncrawl.yaml's operators, from a WARC
    "commoncrawl": (_warc, "warc", [
        {"html_extract": {"column": "body", "charset_column": "charset"}},
        {"language_id": {"column": "text"}},
        {"language_filter": {"languages": ["en", "de"], "min_score": 0.65}},
        {"text_length_filter": {"min_length": 200, "max_length": 100000}},
        {"url_filter": {"blocklist": BLOCKLIST}},
        {"exact_dedup": {"column": "text", "normalize": "nfc_ws"}},
        {"minhash_dedup": {"column": "text", "threshold": 0.7}},
    ]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(RECIPES))
def test_a_run_imports_no_pandas_where_pandas_is_installed(tmp_path, name):
    """Seen red: ``length`` without :func:`~mdf.pandas_probe.defer_pandas` (pyarrow's shim, probed by the first
    ``pa.scalar``) and with ``text_length_filter`` passing bare ints again (type inference); ``text`` with the
    deduplicator's ``to_numpy`` back; ``commoncrawl`` with ``language_filter``'s bare ``min_score`` back."""
    _need_pandas()
    make, kind, operators = RECIPES[name]
    recipe = {
        "reader": {"type": kind, "paths": make(tmp_path)},
        "stages": [{"name": "all", "operators": operators}],
        "writer": {"type": "parquet", "path": str(tmp_path / "out")},
        "rejected": {"type": "parquet", "path": str(tmp_path / "rejected")},
        "executor": {"type": "inline"},
    }
    (tmp_path / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    names = modules_after_mdf(tmp_path / "modules.txt", "run", "-q", "--overwrite", str(tmp_path / "recipe.yaml"))
    assert pq.read_table(tmp_path / "out").num_rows > 0  # the run did work
    assert "pandas" not in names


INTEROP = r"""
import sys
import pyarrow as pa, pyarrow.compute as pc
if sys.argv[1] == "deferred":
    from mdf.pandas_probe import defer_pandas
    assert defer_pandas()
    from mdf import as_numpy, lit
    a = pa.array([1, 2, 3], pa.int64())
    pc.less(a, lit(2)); as_numpy(a); pa.table({"x": a}); pa.scalar(1000, pa.timestamp("ns")).as_py()
    assert "pandas" not in sys.modules, "imported before anything asked for it"
import pandas as pd
def show(f):
    try:
        print(repr(f()))
    except Exception as exc:
        print(type(exc).__name__, str(exc)[:100])
show(lambda: pa.array(pd.Series([1.0, None])).null_count)
show(lambda: pa.array([pd.Timestamp("2020-01-01 00:00:00.000000001"), pd.NaT], from_pandas=True).null_count)
show(lambda: pa.array([pd.NA, 1], from_pandas=True).null_count)
show(lambda: str(pa.array([pd.DateOffset(months=1)]).type))
show(lambda: type(pa.scalar(1, pa.timestamp("ns")).as_py()).__name__)
show(lambda: type(pa.scalar(1, pa.duration("ns")).as_py()).__name__)
show(lambda: pa.Table.from_pandas(pd.DataFrame({"a": [1, None]})).column(0).null_count)
show(lambda: type(pa.table({"a": [1]}).to_pandas()).__name__)
show(lambda: str(pa.array(pd.Categorical(["a", "b", "a"])).type))
"""


def test_pyarrows_pandas_integration_is_unchanged_once_pandas_is_imported():
    """After :func:`~mdf.pandas_probe.defer_pandas`, the first ``import pandas`` tells pyarrow's shim, so a
    Series, NaT, NA, DateOffset, categorical and nanosecond scalars convert exactly as in a process without mdf.
    Seen red without the hook on ``import pandas``: the Series' NaN stayed a value (null count 0 against 1), and
    ``as_py()`` of 1 ns raised ``ValueError`` where pyarrow gives a ``Timestamp`` and a ``Timedelta``."""
    _need_pandas()
    out = {}
    for mode in ("plain", "deferred"):
        run = subprocess.run([sys.executable, "-c", INTEROP, mode], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        out[mode] = run.stdout
    assert out["deferred"] == out["plain"]
    assert "Timestamp" in out["plain"] and "1\n" in out["plain"]  # the script did see pandas objects
