"""Rules every pytest run of the repository follows, whichever session runs it (rootdir conftest).

* Tests that read the real third-party data in ``../shared/data`` skip with a reason naming that path when it is
  absent on a developer's machine; in CI (``CI=true``) such a skip is a failure: the data is always beside the
  clone there, so a skip would hide a broken path and the only checks against real data would vanish unnoticed.
* In CI a session whose tests all skipped (an interpreter or package missing, an import-time skip of every
  module) fails instead of exiting 0 having tested nothing.

Skip reasons are printed by every run (``-rfEs`` in pytest.ini).
"""

from __future__ import annotations

import os

import pytest

SHARED_MARKS = ("/shared/data", "../shared")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _needs_shared(report: pytest.TestReport | pytest.CollectReport) -> bool:
    reason = str(report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr)
    return any(mark in reason for mark in SHARED_MARKS)


def _fail_shared_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and _in_ci() and _needs_shared(report):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"CI=true and the real data is missing: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    _fail_shared_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    outcome = yield
    _fail_shared_skip(outcome.get_result())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if not _in_ci() or reporter is None or exitstatus != 0:
        return
    passed = len(reporter.stats.get("passed", []))
    if passed == 0 and session.testscollected > 0:
        reporter.write_line("CI=true: every collected test was skipped; failing the session", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
