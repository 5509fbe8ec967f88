from __future__ import annotations

import os

# Ray started by these tests binds to 127.0.0.1 only; must be set before ray is imported anywhere.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
