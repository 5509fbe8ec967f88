"""One ``mdf run`` scans the installed distributions for ``mdf`` entry points once, not once per reader."""

from __future__ import annotations

import importlib.metadata

from mdf.metrics import executor_metrics_type
from mdf.plugins import load_plugins


def test_the_metrics_reader_reuses_the_plugin_managers_scan(monkeypatch):
    """A scan reads every distribution's metadata (10-20 ms of each run's start-up); the report's reader of
    ``metrics.json`` asked for the ``mdf`` group again after the plugin manager had. Seen red on 49c4b5c: one
    more ``distributions()`` walk for the metrics reader."""
    load_plugins()
    walks = []
    real = importlib.metadata.distributions

    def counting(**kwargs):
        walks.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "distributions", counting)
    ref = {"executor_metrics_type": "mdf.run_stats:ExecutorMetrics"}
    assert executor_metrics_type(ref).__name__ == "ExecutorMetrics"
    assert walks == []


def test_a_plugin_installed_after_a_scan_is_seen_by_the_next_load(tmp_path, monkeypatch):
    """The plugin manager scans afresh even where ``sys.path`` did not change: a dist-info written into a folder
    already on the path (as pip does) is found by the next load."""
    from mdf.plugins import _load

    monkeypatch.syspath_prepend(str(tmp_path))
    load_plugins()
    dist = tmp_path / "lateplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lateplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[mdf]\nlateplug = lateplug_mod\n")
    (tmp_path / "lateplug_mod.py").write_text("")
    _load.cache_clear()
    assert "lateplug" in {i.name for i in load_plugins().infos}
