"""Every check runs through nox: a session per package, ``all`` with everything installed together, ``demo``.

Sessions install packages the way users do (``pip install ./core ./plugins/mdf-text``), not editable, so a
missing file in a package's build config fails here rather than on a user's machine. ``uv`` is used for
installs when present (much faster on a fresh machine), plain pip otherwise.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "core", "text", "quality", "kernels", "dedup", "image", "all"]
nox.options.error_on_missing_interpreters = False

PYTHON = "3.11"
CORE = "./core"
TEXT = "./plugins/mdf-text"
DEDUP = "./plugins/mdf-dedup"
KERNELS = "./rust"
# extras: test = real photographs (scikit-image) encoded by Pillow, imagehash as the pHash reference; embedding =
# torch + transformers for the embedding refiner's tiny saved CLIP (plain PyPI wheels: the only index CI reaches)
IMAGE = "./plugins/mdf-image[test,embedding]"
EXAMPLE = "./examples/mdf-example-plugin"


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and format check over every Python file."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def core(session: nox.Session) -> None:
    """mdf-core alone: no plugin installed."""
    session.install(CORE, "pytest")
    session.run("pytest", "core/tests", *session.posargs)


@nox.session(python=PYTHON)
def text(session: nox.Session) -> None:
    """mdf-text with the core it needs."""
    session.install(CORE, TEXT, "pytest")
    session.run("pytest", "plugins/mdf-text/tests", *session.posargs)


@nox.session(python=PYTHON)
def quality(session: nox.Session) -> None:
    """mdf-text's quality filters with the kernels they run on (and mdf-dedup for examples/fineweb.yaml)."""
    session.install(CORE, KERNELS, TEXT, DEDUP, "pytest")
    session.run(
        "pytest",
        "plugins/mdf-text/tests/test_quality.py",
        "plugins/mdf-text/tests/test_quality_recipe.py",
        *session.posargs,
    )


@nox.session(python=PYTHON)
def dedup(session: nox.Session) -> None:
    """mdf-dedup with the core and kernels it needs: operators, key state on inline and Ray, recovery."""
    session.install(CORE, KERNELS, DEDUP, "pytest")
    session.run("pytest", "plugins/mdf-dedup/tests", *session.posargs)


@nox.session(python=PYTHON)
def kernels(session: nox.Session) -> None:
    """mdf-kernels: cargo test and clippy on the plain-Rust kernels, then the Python tests against references."""
    manifest = ["--manifest-path", "rust/Cargo.toml"]
    session.run("cargo", "test", *manifest, "--quiet", external=True)
    session.run("cargo", "clippy", *manifest, "--all-targets", "--quiet", "--", "-D", "warnings", external=True)
    session.install(KERNELS, "pytest", "xxhash", "datasketch", "numpy", "pillow", "imagehash", "scikit-image")
    session.run("pytest", "rust/tests", *session.posargs)


@nox.session(python=PYTHON)
def image(session: nox.Session) -> None:
    """mdf-image with the core and kernels it needs: readers, operators, recipes inline and on a local Ray."""
    session.install(CORE, KERNELS, IMAGE)
    session.run("pytest", "plugins/mdf-image/tests", *session.posargs)


@nox.session(python=PYTHON)
def all(session: nox.Session) -> None:
    """Everything installed together, then every test: packages, cross-package, the example plugin.

    With the kernels installed, mdf-text's url_filter runs its native path (the ``text`` session covers the
    pure-pyarrow one) and the key state uses the native key set."""
    session.install(CORE, KERNELS, TEXT, DEDUP, IMAGE, EXAMPLE, "pytest", "xxhash")
    session.run(
        "pytest",
        "core/tests",
        "plugins/mdf-text/tests",
        "plugins/mdf-dedup/tests",
        "plugins/mdf-image/tests",
        "examples/mdf-example-plugin/tests",
        "tests",
        *session.posargs,
    )


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """Generate a small CommonCrawl-like set and run examples/text.yaml on it (kept in ./mdf-demo)."""
    session.install(CORE, KERNELS, TEXT, DEDUP)
    session.run("mdf", "demo", *session.posargs)
