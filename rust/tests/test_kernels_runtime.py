"""Thread pool, GIL release and no-panic guarantees."""

import os
import subprocess
import sys
import threading

import pyarrow as pa

import mdf_kernels as mk


def run_py(code, **env):
    proc = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    return proc


def test_num_threads_from_env():
    proc = run_py("import mdf_kernels as mk; print(mk.num_threads())", MDF_NUM_THREADS="3")
    assert proc.stdout.strip() == "3", proc.stderr


def test_one_kernel_thread_runs_each_call_on_its_caller():
    """With ``MDF_NUM_THREADS=1`` no pool thread is started: each call runs on the thread that made it, and two
    Python threads calling at once get what one call gives. Seen red with a shared pool of one thread (an
    ``mdf-kernels-0`` thread appeared)."""
    code = (
        "import os, threading, pyarrow as pa, mdf_kernels as mk\n"
        "texts = pa.array([f'text {i} with words' for i in range(20000)])\n"
        "want = mk.minhash(texts, num_perm=32).to_pylist()\n"
        "got = []\n"
        "ts = [threading.Thread(target=lambda: got.append(mk.minhash(texts, num_perm=32).to_pylist())) "
        "for _ in range(2)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "names = [open(f'/proc/self/task/{t}/comm').read().strip() for t in os.listdir('/proc/self/task')]\n"
        "print(mk.num_threads(), got == [want, want], sorted(n for n in names if n.startswith('mdf-kernels')))\n"
    )
    proc = run_py(code, MDF_NUM_THREADS="1")
    assert proc.stdout.strip() == "1 True []", proc.stderr


def test_bad_env_value_is_a_value_error():
    code = (
        "import pyarrow as pa, mdf_kernels as mk\n"
        "try:\n    mk.hash64(pa.array(['x']))\nexcept ValueError as e:\n    print(e)\n"
    )
    proc = run_py(code, MDF_NUM_THREADS="lots")
    assert "MDF_NUM_THREADS must be a positive integer" in proc.stdout, proc.stderr


def test_calls_from_several_python_threads():
    texts = pa.array([f"text number {i} with some words in it" for i in range(20000)])
    want = mk.minhash(texts, num_perm=32).to_pylist()
    results = []

    def work():
        results.append(mk.minhash(texts, num_perm=32).to_pylist())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4


def test_public_api():
    expected = {
        "hash64",
        "hash128",
        "url_host",
        "DomainSet",
        "domain_blocked",
        "registered_domain",
        "minhash",
        "lsh_band_keys",
        "optimal_bands_rows",
        "union_find",
        "KeySet",
        "KeySet128",
        "num_threads",
    }
    assert expected <= set(mk.__all__)
    for name in expected:
        assert getattr(mk, name).__doc__, name


def test_arrow_c_array_producers_other_than_pyarrow_classes():
    class Wrapper:
        def __init__(self, arr):
            self.arr = arr

        def __arrow_c_array__(self, requested_schema=None):
            return self.arr.__arrow_c_array__(requested_schema)

    assert mk.hash64(Wrapper(pa.array(["a"]))).to_pylist() == mk.hash64(pa.array(["a"])).to_pylist()
