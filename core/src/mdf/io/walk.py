"""Local ``**`` globs that walk each real folder once, so symlink loops end.

``glob.glob(pattern, recursive=True)`` follows symlinked folders without remembering where it has been: one
loop (``d/loop -> d``) makes it list ``d/a``, ``d/loop/a``, ``d/loop/loop/a``... until the path is too long,
two loops make that 2^depth paths, and ``mdf run``/``mdf validate`` on ``d/**`` grew past 2 GB without
returning (issue 46, item 6). Here the walk keeps the real folders it has entered (device and inode, before it
descends) and enters each once, under the first path that reaches it (names sorted, parents before children);
a symlink to a folder already entered is skipped and named in a note, so the run says what it did not walk.

Matching is :func:`mdf.storage.urls.glob_regex` (``*`` and ``?`` inside one name, ``**`` across folders, the same
rules as for object keys); names starting with ``.`` are left out unless the pattern names one, as ``glob`` does.
"""

from __future__ import annotations

import glob
import os

from mdf.storage.urls import glob_regex, literal_prefix


def glob_files(pattern: str, notes: list[str]) -> list[str]:
    """The files ``pattern`` matches (sorted); each skipped loop or repeated folder adds one line to ``notes``."""
    if "**" not in pattern:  # one level per wildcard: no recursion, no loop
        return sorted(f for f in glob.glob(pattern) if os.path.isfile(f))
    root = literal_prefix(pattern)
    rx = glob_regex(pattern)
    hidden = "/." in "/" + pattern
    found: list[str] = []
    skipped: list[str] = []
    start = root or "."
    try:
        st = os.stat(start)
    except OSError:
        return []
    entered = {(st.st_dev, st.st_ino): start}
    for folder, dirs, files in os.walk(start, followlinks=True):
        keep = []
        for name in sorted(dirs):
            path = os.path.join(folder, name)
            if name.startswith(".") and not hidden:
                continue
            try:
                st = os.stat(path)
            except OSError:  # a dangling or self-referencing link: nothing to walk
                continue
            key = (st.st_dev, st.st_ino)
            if key in entered:
                skipped.append(f"{path} -> {entered[key]}")
                continue
            entered[key] = path
            keep.append(name)
        dirs[:] = keep
        for name in files:
            if name.startswith(".") and not hidden:
                continue
            path = os.path.join(folder, name)
            shown = path if root else os.path.relpath(path, ".")
            if rx.match(shown) and os.path.isfile(path):
                found.append(shown)
    if skipped:
        notes.append(
            f"{pattern!r}: {len(skipped)} symlinked folder(s) lead to a folder already walked and were skipped "
            f"(a symlink loop or a second link), e.g. {skipped[0]}; their files are read once"
        )
    return sorted(found)
