"""``fasttext_classifier`` on supervised fastText models the tests train themselves (fasttext-wheel in an
environment of its own, see fasttext_train.py; word bigrams, three labels, a quantized ``.ftz``), checked against
fastText's own predict, in recipes, and at validate time."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

pytest.importorskip("fasttext_pybind", reason='fasttext_classifier needs fastText: pip install "mdf-text[quality]"')

from fasttext_helpers import WORDS, document, trained

from mdf import has_native_kernel
from mdf.testing import check_operator_contract, read_output, run_operator
from mdf_text.ops.fasttext_classifier import FastTextClassifier
from mdf_text.ops.fasttext_model import load, load_native


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    return trained(tmp_path_factory)


def reference(path: Path, texts: list[str | None]) -> list[dict[str, float] | None]:
    """fastText's predict as its Python wrapper calls it (newlines replaced as the recipe does, ``\\n`` added),
    through a freshly loaded model: every label's probability by name."""
    import fasttext_pybind

    model = fasttext_pybind.fasttext()
    model.loadModel(str(path))
    out: list[dict[str, float] | None] = []
    for text in texts:
        found = model.predict(text.replace("\n", " ") + "\n", -1, 0.0, "strict") if text is not None else None
        out.append(None if found is None else {label.removeprefix("__label__"): p for p, label in found})
    return out


def texts(n: int = 300) -> list[str | None]:
    rng = random.Random(11)
    out: list[str | None] = ["\n".join(document(rng, lab, 12) for _ in range(3)) for lab in [*WORDS] * (n // 3)]
    return [*out, "", "😀😀😀", "数据 данные", None]


@pytest.mark.parametrize("kind", ["bin", "ftz"])
def test_scores_are_fasttext_predict_on_whole_text(models, kind) -> None:
    """Each label's column holds fastText's probability for the whole text (newlines are not the end of it);
    the top label is the most probable. Fails without the newline replacement (scores of the first line only):
    seen."""
    data = texts()
    batch = pa.RecordBatch.from_pydict({"text": data})
    kept, rejected = run_operator(FastTextClassifier(model=str(models[kind]), top_label="label"), batch)
    assert rejected.column("_reason").to_pylist() == ["fasttext_classifier:null_text"]
    ref = [r for r in reference(models[kind], data) if r is not None]
    for label in WORDS:
        assert kept.column(f"fasttext_{label}").type == pa.float32()
        assert kept.column(f"fasttext_{label}").to_pylist() == pytest.approx([r[label] for r in ref], abs=1e-6)
    assert kept.column("label").to_pylist() == [max(r, key=r.get) for r in ref]
    truth = [lab for lab in WORDS] * 100
    assert sum(p == t for p, t in zip(kept.column("label").to_pylist(), truth, strict=False)) > 280  # it learned


def test_labels_prefix_max_chars_and_lowercase(models) -> None:
    """Only the named labels are written, under the prefix; max_chars and lowercase change what is scored."""
    text = "Theorem Proof Lemma " + "buy click free casino deal " * 40
    batch = pa.RecordBatch.from_pydict({"text": [text]})
    op = FastTextClassifier(model=str(models["bin"]), labels=["__label__hq"], prefix="q", max_chars=20, lowercase=True)
    kept, _ = run_operator(op, batch)
    assert [c for c in kept.schema.names if c != "text"] == ["q_hq"]
    assert kept.column("q_hq")[0].as_py() == pytest.approx(reference(models["bin"], ["theorem proof lemma "])[0]["hq"])
    whole, _ = run_operator(FastTextClassifier(model=str(models["bin"]), labels=["hq"]), batch)
    assert whole.column("fasttext_hq")[0].as_py() < 0.5 < kept.column("q_hq")[0].as_py()


def test_binary_column_and_contract(models) -> None:
    body = pa.array([b"theorem proof \xff lemma", None, b"buy now"], pa.binary())
    op = FastTextClassifier(model=str(models["ftz"]), column="body")
    kept, rejected = run_operator(op, pa.RecordBatch.from_pydict({"body": body, "id": [0, 1, 2]}))
    assert kept.column("id").to_pylist() == [0, 2] and rejected.column("id").to_pylist() == [1]
    batch = pa.RecordBatch.from_pydict({"text": texts(30)})
    check_operator_contract(FastTextClassifier(model=str(models["ftz"])), batch)


def test_one_model_per_process_shared_by_instances(models) -> None:
    """Worker threads build their own operator instances; they share one loaded model (a 2 GB model costs 2 GB
    per process, not per thread), whichever engine loads it. Fails when setup loads its own copy: seen."""
    for engine, loader in (("native", load_native), ("fasttext", load)):
        if engine == "native" and not has_native_kernel("FastTextModel"):
            continue
        a, b = (FastTextClassifier(model=str(models["bin"]), engine=engine) for _ in range(2))
        a.ensure_setup()
        b.ensure_setup()
        assert a._model is b._model is loader(str(models["bin"]))


def mdf(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mdf")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mdf.cli"]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([*cmd, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def recipe(tmp: Path, operators: list, paths: list[str] | None = None) -> Path:
    doc = {
        "reader": {"type": "parquet", "paths": paths or [str(tmp / "in")]},
        "stages": [{"name": "score", "operators": operators}],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rejected")},
        "executor": {"type": "inline"},
    }
    path = tmp / "recipe.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"model": "{tmp}/missing.bin"}, "missing.bin' is no file; give the path of a fastText model file"),
        ({"model": "{tmp}/notes.bin"}, "notes.bin' is not a fastText model"),
        ({"model": "{tmp}/vectors.bin"}, "is an unsupervised fastText model (skipgram"),
        ({"model": "{tmp}/quality.bin", "labels": ["hq", "spam"]}, "has no label 'spam'; its labels: "),
    ],
)
def test_bad_model_fails_validate_with_one_line(models, tmp_path, params, message) -> None:
    """Known before any work, from the file's header: one line, exit 2, the YAML path. Fails (validate exits 0)
    when the supervised check is skipped: seen."""
    tmp = models["bin"].parent
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"text": ["a b c"]}), tmp_path / "in" / "part.parquet")
    params = {k: v.format(tmp=tmp) if isinstance(v, str) else v for k, v in params.items()}
    res = mdf("validate", str(recipe(tmp_path, [{"fasttext_classifier": params}])), cwd=tmp_path)
    key = "labels" if "labels" in params else "model"
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert f"stages[0].operators[0].{key}: " in res.stderr and message in res.stderr


def test_rethreshold_an_earlier_run_without_the_model(models, tmp_path) -> None:
    """Run 1 scores and keeps rows above a given threshold; run 2 reads run 1's output and keeps its top
    quarter by the stored score, with the model file gone (so the model cannot have run again)."""
    data = texts(300)
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"id": range(len(data)), "text": data}), tmp_path / "in" / "part.parquet")
    model = tmp_path / "model.bin"
    model.write_bytes(models["bin"].read_bytes())
    ops = [{"fasttext_classifier": {"model": str(model)}}, {"score_filter": {"column": "fasttext_hq", "min": 0.05}}]
    res = mdf("run", "-q", str(recipe(tmp_path, ops)), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    kept, rejected = read_output(tmp_path / "out"), read_output(tmp_path / "rejected")
    assert kept.num_rows + rejected.num_rows == len(data)
    reasons = rejected.column("_reason").to_pylist()
    assert reasons.count("fasttext_classifier:null_text") == 1
    assert set(reasons) == {"fasttext_classifier:null_text", "score_filter:fasttext_hq"}
    assert min(kept.column("fasttext_hq").to_pylist()) >= 0.05

    model.unlink()
    run2 = tmp_path / "run2"
    run2.mkdir()
    cut = {"column": "fasttext_hq", "top_fraction": 0.25, "estimate_from": [str(tmp_path / "out")]}
    res = mdf("run", "-q", str(recipe(run2, [{"score_filter": cut}], [str(tmp_path / "out")])), cwd=run2)
    assert res.returncode == 0, res.stderr
    top = read_output(run2 / "out")
    scores = sorted(kept.column("fasttext_hq").to_pylist(), reverse=True)
    assert top.num_rows == pytest.approx(kept.num_rows / 4, abs=1)
    assert sorted(top.column("fasttext_hq").to_pylist(), reverse=True) == scores[: top.num_rows]
    assert read_output(run2 / "rejected").num_rows + top.num_rows == kept.num_rows


def test_dclm_example_end_to_end_on_demo_warc(models, tmp_path) -> None:
    """examples/dclm.yaml as shipped, with the placeholder model replaced by a trained one: WARC in, every row
    accounted for, kept rows scored above the cut; with the placeholder, validate stops on the model line."""
    pytest.importorskip("fastwarc", reason='the warc reader needs FastWARC: pip install "mdf-text[web]"')
    kernels = pytest.importorskip("mdf_kernels", reason="html_extract needs mdf-kernels: pip install ./rust")
    if not hasattr(kernels, "html_extract"):
        pytest.skip("installed mdf-kernels predates html_extract: pip install ./rust")
    from mdf_text.demo_warc import write_warc

    example = Path(__file__).resolve().parents[3] / "examples" / "dclm.yaml"
    res = mdf("validate", str(example), cwd=tmp_path)
    assert res.returncode == 2 and "stages[2].operators[0].model: 'models/dclm-fasttext.bin' is no file" in res.stderr
    write_warc(str(tmp_path / "mdf-demo" / "warc"), pages=120, seed=5)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "dclm-fasttext.bin").write_bytes(models["bin"].read_bytes())
    # the demo's English pages reuse a small vocabulary: Gopher's duplicated n-gram rule would drop them all
    res = mdf("run", "-q", str(example), "--set", "stages[1].operators[0].dup_n_grams=[]", cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    kept, rejected = (
        read_output(tmp_path / "mdf-demo" / "dclm-out"),
        read_output(tmp_path / "mdf-demo" / "dclm-rejected"),
    )
    metrics = yaml.safe_load((tmp_path / "mdf-demo" / "dclm-out" / "_mdf" / "metrics.json").read_text())
    assert metrics["balanced"] and (kept.num_rows if kept else 0) + rejected.num_rows == metrics["rows_read"]
    assert kept.num_rows > 10 and min(kept.column("dclm_hq").to_pylist()) >= 0.018112
