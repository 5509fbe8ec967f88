"""Every check runs through nox: a session per package, ``all`` with everything installed together, ``demo``.

Sessions install packages the way users do (``pip install ./core ./plugins/mdf-text``), not editable, so a
missing file in a package's build config fails here rather than on a user's machine. ``uv`` is used for
installs when present (much faster on a fresh machine), plain pip otherwise.
"""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "core", "text", "all"]
nox.options.error_on_missing_interpreters = False

PYTHON = "3.11"
CORE = "./core"
TEXT = "./plugins/mdf-text"
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
def all(session: nox.Session) -> None:
    """Everything installed together, then every test: packages, cross-package, the example plugin."""
    session.install(CORE, TEXT, EXAMPLE, "pytest")
    session.run(
        "pytest",
        "core/tests",
        "plugins/mdf-text/tests",
        "examples/mdf-example-plugin/tests",
        "tests",
        *session.posargs,
    )


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """Generate a small CommonCrawl-like set and run examples/text.yaml on it (kept in ./mdf-demo)."""
    session.install(CORE, TEXT)
    session.run("mdf", "demo", *session.posargs)
