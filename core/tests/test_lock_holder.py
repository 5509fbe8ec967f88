"""Whether a lock's holder is gone (:func:`mdf.storage.dead_on_this_host`), the question every object lock asks
before its ttl: the output's and the dedup index's."""

from __future__ import annotations

import socket
import subprocess
import sys

from mdf.storage import dead_on_this_host


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_live_actor_holding_for_a_killed_driver_is_stale() -> None:
    """A Ray actor took a dedup index's lock for a run whose driver was killed with -9: the actor lives on for
    seconds (longer on a loaded host) and renews the lock, and the run's ``--resume`` must take it over anyway.

    Seen red without the ``driver`` check (the holder's own pid alive, so "held"): on a host at load ~10,
    ``tests/test_storage_no_data_loss.py::test_item14_a_killed_runs_s3_index_lock_does_not_hold_its_own_resume_off[ray]``
    failed with exit 2 "is being updated by the run writing ... lock renewed 3 s ago"."""
    host = socket.gethostname()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        holder = {"pid": alive.pid, "host": host, "driver": {"pid": _dead_pid(), "host": host}}
        assert dead_on_this_host(holder)
        holder["driver"] = {"pid": alive.pid, "host": host}
        assert not dead_on_this_host(holder)
        # a driver on another host: this host cannot tell, so the ttl decides
        assert not dead_on_this_host({"pid": alive.pid, "host": host, "driver": {"pid": 1, "host": "elsewhere"}})
    finally:
        alive.kill()
        alive.wait()


def test_a_holder_without_a_usable_pid_is_judged_by_its_ttl() -> None:
    host = socket.gethostname()
    assert dead_on_this_host({"pid": _dead_pid(), "host": host})
    assert not dead_on_this_host({"pid": -1, "host": host})
    assert not dead_on_this_host({"pid": "x", "host": host, "driver": "damaged"})
    assert not dead_on_this_host({"pid": _dead_pid(), "host": "elsewhere"})
