"""Values volatile by shape: timestamps, UUIDs and wall-clock times, masked only where both sides have one.

Pure. Two runs of the same server differ in the time of day and in random ids; without
extra runs to learn the noise from (`noise`), such a difference is recognised by its
shape. A pair of strings is *masked* when each side holds a value of the same shape and
they are equal once every volatile part is replaced by its shape's name: `"at
2026-01-02T10:00:00Z"` vs `"at 2026-03-04T11:30:00Z"` is masked, `"at 10:00"` vs `"closed"`
is not (only one side has the shape), and neither is `"ok 10:00"` vs `"fail 11:00"` (the
rest differs). The report lists what was masked and as what.
"""

from __future__ import annotations

import re
from typing import Any

SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("timestamp", re.compile(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}|\s?UTC|\s?GMT)?\b"
    )),
    ("uuid", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b")),
    ("time", re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:\s?[AaPp][Mm])?(?:\s?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?\b")),
)  # fmt: skip
"""Shape name and pattern, most specific first (a timestamp contains a date and a time)."""


def shape_of(text: str) -> tuple[str, frozenset[str]]:
    """`text` with each volatile part replaced by `<shape>`, and the shapes found."""
    found: set[str] = set()
    for name, pattern in SHAPES:
        text, n = pattern.subn(f"<{name}>", text)
        if n:
            found.add(name)
    return text, frozenset(found)


def masked(a: Any, b: Any) -> str | None:
    """The shape(s) that make `a` and `b` the same value (`"timestamp"`, `"uuid, time"`), or None."""
    if not isinstance(a, str) or not isinstance(b, str) or a == b:
        return None
    ma, sa = shape_of(a)
    if not sa:
        return None
    mb, sb = shape_of(b)
    if sa != sb or ma != mb:
        return None
    return ", ".join(sorted(sa))
