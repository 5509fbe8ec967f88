"""Operators that ship with mdf-core: engine tools only (content operators live in plugins)."""
