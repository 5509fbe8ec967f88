"""Idle CPU of this machine over a time window, sampled from ``/proc/stat``.

A throughput test on a shared machine cannot know how many CPUs a run *could* have had from the run's own CPU
time: a run that scales badly uses less CPU, and dividing by what it used hides exactly that. What the run left
unused can be measured independently: the machine's idle time while it ran. CPUs available to the run =
(its own CPU time + the machine's idle time) / wall time. A run that keeps every free CPU busy reaches the
projection at that CPU count; one that leaves CPUs idle falls short of it, whatever the load.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from types import TracebackType

_TICK = os.sysconf("SC_CLK_TCK")


def _idle_s() -> float:
    """Seconds of idle + iowait summed over every CPU since boot (the ``cpu`` line of ``/proc/stat``)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return (int(fields[4]) + int(fields[5])) / _TICK


class IdleSampler:
    """Samples the machine's cumulative idle CPU-seconds every ``every`` seconds in a thread while in use."""

    def __init__(self, every: float = 0.05) -> None:
        self.every = every
        self.times: list[float] = []
        self.idle: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> IdleSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            self.times.append(time.time())
            self.idle.append(_idle_s())
            if self._stop.wait(self.every):
                self.times.append(time.time())
                self.idle.append(_idle_s())
                return

    def _at(self, t: float) -> float:
        """Cumulative idle seconds at epoch time ``t``, interpolated between samples."""
        i = bisect.bisect_left(self.times, t)
        if i <= 0:
            return self.idle[0]
        if i >= len(self.times):
            return self.idle[-1]
        t0, t1 = self.times[i - 1], self.times[i]
        share = (t - t0) / (t1 - t0) if t1 > t0 else 0.0
        return self.idle[i - 1] + share * (self.idle[i] - self.idle[i - 1])

    def idle_between(self, start: float, end: float) -> float:
        """Idle CPU-seconds (all CPUs together) between two epoch times."""
        if not self.times or end <= start:
            return 0.0
        return max(0.0, self._at(end) - self._at(start))
