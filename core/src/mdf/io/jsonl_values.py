"""JSON that is valid but that Arrow refuses or crashes on: found before Arrow sees it, rejected one line each.

Three kinds, all common in scraped JSON and each of which used to end the whole run: a lone UTF-16 surrogate
escape (``"\\ud83d"``: Python decodes it, UTF-8 cannot encode it, ``UnicodeEncodeError``), an integer outside
int64 (``OverflowError``), and deep nesting (100 K ``[``: a SIGSEGV in Arrow's JSON parser, a
``RecursionError`` in Python's). Each such line becomes one rejected row, reason :data:`BAD_VALUE`, what was
wrong in ``_reason_detail``. Clean blocks pay two ``bytes.count`` calls and one ``max(abs)`` per double column
(an integer past int64 in a field only some lines carry is read by Arrow as a rounded double: :func:`beyond_int64`);
the line-by-line checks run only where the cheap ones cannot rule the problem out.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

BAD_VALUE = "reader:bad_value"
MAX_DEPTH = 48
"""Deepest JSON nesting read (the record's own braces count as 1). Arrow parses a few thousand levels, then its
parser overflows the stack; Parquet readers refuse a schema nested much past 60 levels, so a deeper value would
write a file nobody can read back. Deeper lines are rejected as :data:`BAD_VALUE`."""
_INT64 = (-(1 << 63), (1 << 63) - 1)
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # an escape in the 0xD800-0xDFFF range, paired or not
_NOT_MARKS = bytes(b for b in range(256) if b not in b"[{\n")
_LONG_INT = re.compile(r"\d{19}")  # int64 holds 18 digits always, 19 sometimes


def depth(line: bytes) -> int:
    """The line's deepest ``[``/``{`` nesting, brackets inside strings not counted."""
    bare = _STRING.sub(b'""', line)
    a = np.frombuffer(bare, np.uint8)
    step = (a == ord("[")).astype(np.int32) + (a == ord("{")) - (a == ord("]")) - (a == ord("}"))
    return int(np.cumsum(step).max(initial=0))


def split_deep(block: bytes) -> tuple[bytes, list[bytes]]:
    """``(block without lines nested deeper than MAX_DEPTH, those lines)``.

    Only a line with more than ``MAX_DEPTH`` opening brackets can be that deep. They are counted per line on
    the block's brackets and newlines alone (``bytes.translate`` keeps those in one C pass, ~0.4 ns a byte,
    about a tenth of Arrow's parse of the block); only lines over the count are measured exactly."""
    marks = block.translate(None, _NOT_MARKS)
    if len(marks) - marks.count(b"\n") <= MAX_DEPTH:
        return block, []
    flags = np.frombuffer(marks, np.uint8)
    newlines = np.flatnonzero(flags == ord("\n"))
    per_line = np.diff(np.append(newlines, len(flags)), prepend=-1) - 1  # openers between newlines
    suspects = np.flatnonzero(per_line > MAX_DEPTH)
    if not len(suspects):
        return block, []
    lines = block.split(b"\n")  # line i of the block is run i of the marks
    deep = {int(i) for i in suspects if depth(lines[i]) > MAX_DEPTH}
    if not deep:
        return block, []
    rest = b"\n".join(line for i, line in enumerate(lines) if i not in deep)
    return rest, [lines[i] for i in sorted(deep)]


def beyond_int64(table: Any) -> bool:
    """Whether a parsed block may hold an integer outside int64 that Arrow read as a double: its JSON reader types
    a field it infers (one outside the sampled schema: only some lines carry it) as ``double`` when an integer does
    not fit int64, and writes the integer rounded (``123456789012345678901234`` -> ``1.2345678901234568e+23``).
    Such a value is at least 2**63 in magnitude; a block with a double that large (a float written so is too) is
    parsed again line by line, where :func:`bad_value` rejects the integer. One ``max(abs)`` per double column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def big(array: Any) -> bool:
        kind = array.type
        if pa.types.is_floating(kind):
            top = pc.max(pc.abs(array)).as_py() if len(array) > array.null_count else None
            return top is not None and top >= _INT64[1]
        if pa.types.is_struct(kind):
            return any(big(array.field(i)) for i in range(kind.num_fields))
        if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
            return big(array.flatten())
        return False

    return any(big(chunk) for column in table.columns for chunk in column.chunks)


def deep_detail() -> str:
    return f"nested deeper than {MAX_DEPTH} levels"


def bad_value(text: str, record: Any) -> str | None:
    """What in ``record`` (parsed from ``text``) Arrow cannot hold, or ``None``: a lone surrogate, an integer
    outside int64. The walk runs only when the raw text holds a surrogate escape or a 19-digit number."""
    surrogates = _SURROGATE.search(text) is not None
    long_ints = _LONG_INT.search(text) is not None
    if not (surrogates or long_ints):
        return None
    why = _walk(record, "", surrogates, long_ints)
    return None if why is None else why.encode("utf-8", "backslashreplace").decode("utf-8")  # a key may hold one


def _walk(value: Any, where: str, surrogates: bool, long_ints: bool) -> str | None:
    if isinstance(value, str):
        if surrogates:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"{where or 'value'}: lone surrogate {value[exc.start]!r} (not encodable as UTF-8)"
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if long_ints and not _INT64[0] <= value <= _INT64[1]:
            return f"{where or 'value'}: integer {value} outside int64"
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            why = _walk(k, f"{where}.{k}" if where else "key", surrogates, long_ints) or _walk(
                v, f"{where}.{k}" if where else str(k), surrogates, long_ints
            )
            if why:
                return why
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if why := _walk(v, f"{where}[{i}]", surrogates, long_ints):
                return why
    return None
