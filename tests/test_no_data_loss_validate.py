"""Issue 46, item 10: what ``mdf validate`` let through and the run then failed on mid-way (exit 1) is exit 2 before
any work, one line, in ``validate`` and ``run`` alike (the S3 cases, a read-only identity and a missing botocore,
are in ``test_storage_no_data_loss_iii.py``).

Each test says how it was seen failing on eefbc81 (the code before this change). Real files and the real CLI in
process: what is checked here is decided before any executor starts.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .conftest import ROOT
from .reliability import cli, error_lines, write_recipe

pytest.importorskip("mdf_text")

TEXTS = ["theorem proof lemma study result", "buy click free casino deal now", "minister said council vote today"]


def refused_everywhere(capsys, recipe: Path, *flags: str) -> str:
    """``mdf validate`` and ``mdf run`` both exit 2 with the same one line, and the run writes nothing."""
    lines = []
    for command in (("validate",), ("run", "-q")):
        code, _, err = cli(capsys, *command, str(recipe), *flags)
        assert code == 2, err
        (line,) = error_lines(err)
        assert len(err.strip().splitlines()) == 1, err
        lines.append(line)
    assert lines[0] == lines[1], lines
    assert not (recipe.parent / "out").exists()
    return lines[0]


def parquet(tmp: Path, table: pa.Table) -> list[str]:
    (tmp / "in").mkdir(exist_ok=True)
    pq.write_table(table, tmp / "in" / "t.parquet")
    return [str(tmp / "in")]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    spec = importlib.util.spec_from_file_location(
        "fasttext_helpers", ROOT / "plugins" / "mdf-text" / "tests" / "fasttext_helpers.py"
    )
    assert spec is not None and spec.loader is not None
    helpers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helpers)
    return helpers.trained(tmp_path_factory)


@pytest.mark.parametrize("cut", ["two_thirds", "last_bytes"])
def test_a_fasttext_model_cut_after_its_dictionary_is_refused_at_validate(tmp_path, capsys, models, cut):
    """A model cut short past its dictionary passed ``validate`` (the header and labels read fine) and the run
    failed at its first batch (seen red on eefbc81: validate exit 0; the run failing later is the issue's report).
    Now the kernel loads it at validate time and its reason is the one line."""
    pytest.importorskip("mdf_kernels")
    model = tmp_path / "model.bin"
    data = models["bin"].read_bytes()
    model.write_bytes(data[: len(data) * 2 // 3] if cut == "two_thirds" else data[:-7])
    recipe = write_recipe(
        tmp_path, parquet(tmp_path, pa.table({"text": TEXTS})), reader="parquet",
        ops=[{"fasttext_classifier": {"model": str(model)}}],
    )  # fmt: skip
    line = refused_everywhere(capsys, recipe)
    assert line.startswith(f"error: stages[0].operators[0].model: '{model}': ") and "fetch or copy it again" in line
    shutil.copy(models["bin"], model)
    assert cli(capsys, "validate", str(recipe))[0] == 0


def test_score_filter_on_a_string_column_after_a_classifier_is_refused(tmp_path, capsys, models):
    """``score_filter`` after ``fasttext_classifier`` was not checked at all (the classifier did not say what it
    writes, and the column check stopped there): on ``text`` or the ``top_label`` column the run failed at its
    first batch (seen red on eefbc81: validate exit 0). The classifier now declares its columns from the model's
    labels; a score column still passes."""
    pytest.importorskip("mdf_kernels")
    paths = parquet(tmp_path, pa.table({"text": TEXTS * 10}))
    for column, shown in (("text", "string"), ("best", "string")):
        ops = [
            {"fasttext_classifier": {"model": str(models["bin"]), "top_label": "best"}},
            {"score_filter": {"column": column, "min": 0.5}},
        ]
        recipe = write_recipe(tmp_path, paths, reader="parquet", ops=ops)
        line = refused_everywhere(capsys, recipe)
        assert line == (
            f"error: stages[0].operators[1].column: score_filter reads column '{column}' as number, but it is "
            f"{shown} in the input; name a number column or cast it upstream"
        ), line
    ops[1] = {"score_filter": {"column": "fasttext_hq", "min": 0.5}}
    recipe = write_recipe(tmp_path, paths, reader="parquet", ops=ops)
    code, _, err = cli(capsys, "run", "-q", str(recipe))
    assert code == 0, err


def test_duplicate_null_and_view_columns_are_refused(tmp_path, capsys):
    """A Parquet file with two ``text`` columns, a ``text`` of type null, or a ``string_view`` column passed
    ``validate``; the run failed at its first batch (seen red on eefbc81: validate exit 0, run exit 1
    "KeyError: 'Field \"text\" exists 2 times in schema'", "no kernel matching input types (null)", "(string_view)";
    a string_view column failed every operator, even one reading another column: Arrow's take has no kernel)."""
    ops = [{"text_length_filter": {"min_length": 3}}]
    cases = [
        (pa.Table.from_arrays([pa.array(TEXTS), pa.array(TEXTS)], names=["text", "text"]),
         "has 2 columns named 'text'; mdf reads a column by its name: rename them in the file"),
        (pa.table({"id": [1, 2, 3], "text": pa.nulls(3)}),
         "score"),
        (pa.table({"id": [1, 2, 3], "text": pa.array(TEXTS, pa.string_view())}),
         "column 'text' of {file} is string_view, a view type mdf's operators do not read"),
        (pa.table({"text": TEXTS, "note": pa.array(TEXTS, pa.string_view())}),
         "column 'note' of {file} is string_view, a view type mdf's operators do not read"),
    ]  # fmt: skip
    for table, says in cases:
        shutil.rmtree(tmp_path / "in", ignore_errors=True)
        recipe = write_recipe(tmp_path, parquet(tmp_path, table), reader="parquet", ops=ops)
        line = refused_everywhere(capsys, recipe)
        if says == "score":
            assert line == (
                "error: stages[0].operators[0].column: text_length_filter reads column 'text' as string|binary, but it "
                "is null in the input; name a string|binary column or cast it upstream"
            ), line
        else:
            assert line.startswith("error: reader.paths: ") and says.format(file=tmp_path / "in" / "t.parquet") in line


def test_an_integer_beyond_int64_is_refused_naming_its_key(tmp_path, capsys):
    """``--set stages[0].operators[0].min_length=99999999999999999999`` passed ``validate`` and the run failed at
    its first batch (seen red on eefbc81: validate exit 0, run exit 1 "OverflowError"). The same in the file."""
    recipe = write_recipe(tmp_path, parquet(tmp_path, pa.table({"text": TEXTS})), reader="parquet",
                          ops=[{"text_length_filter": {"min_length": 3}}])  # fmt: skip
    big = "99999999999999999999"
    line = refused_everywhere(capsys, recipe, "--set", f"stages[0].operators[0].min_length={big}")
    assert line == (
        f"error: stages[0].operators[0].min_length: {big} is outside the 64-bit integers mdf holds (at most "
        "9,223,372,036,854,775,807); give a smaller number, or a float (~1e19) where a float is meant"
    ), line
    recipe.write_text(recipe.read_text().replace("min_length: 3", f"min_length: {big}"))
    assert refused_everywhere(capsys, recipe) == line
