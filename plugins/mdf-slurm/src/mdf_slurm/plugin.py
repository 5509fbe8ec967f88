"""Entry point ``slurm``: adds ``mdf slurm`` (``run``, ``status``) to the ``mdf`` command.

Registered by reference, so loading the plugin (every ``mdf run`` does) imports none of its code.
"""

from __future__ import annotations

from typing import Any

from mdf import hookimpl


@hookimpl
def mdf_register_commands(registry: Any) -> None:
    registry.add_lazy("slurm", "mdf_slurm.cli:command")
