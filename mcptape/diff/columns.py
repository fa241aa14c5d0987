"""Plain-text tables and lines that fit a terminal: nothing wider than `WIDTH` columns.

Pure. Each column gets its natural width while the table fits; when it does not, the
columns share the room (max-min fair: narrow columns keep their width, the wide ones
split the rest) and long cells wrap onto more lines, after a space, `/`, `,` or a word's
hyphen where there is one, so JSON pointers and lists break where they read well.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

WIDTH = 100
"""The widest line the text report prints."""

_GAP = 2
"""Spaces between two columns of tabulate's "simple" format."""

_HEAD_PAD = 2
"""tabulate makes a column at least its header plus this wide (its MIN_PADDING)."""

_BREAK = re.compile(r"(?<=[ /,])|(?<=[A-Za-z]-)")
"""Where a cell may wrap: after a space, a slash, a comma, or a hyphen within a word."""


def wrap(text: str, width: int, indent: str = "", *, anywhere: bool = True) -> list[str]:
    """`text` as lines of at most `width` characters (later lines start with `indent`).

    `anywhere=False` breaks only after spaces (a list of names is not cut inside a name
    unless the name alone is too long).
    """
    width = max(width, len(indent) + 1)
    out: list[str] = []
    for para in text.split("\n"):
        line = ""
        for piece in _BREAK.split(para) if anywhere else re.split(r"(?<= )", para):
            if line.strip() and len(line) + len(piece.rstrip()) > width:
                out.append(line.rstrip())
                line, piece = indent, piece.lstrip()
            line += piece
            while len(line.rstrip()) > width:  # no place to break: cut
                out.append(line[:width])
                line = indent + line[width:]
        out.append(line.rstrip())
    return out


def _share(
    natural: list[int], floors: list[int], weights: Sequence[float], budget: int
) -> list[int]:
    """Column widths within `budget`: weighted max-min fair, not below a column's floor while they fit.

    A column narrower than its share keeps its width; the others split what is left in
    proportion to their weights.
    """
    if sum(natural) <= budget:
        return natural
    if sum(floors) > budget:
        floors = [1] * len(natural)
    widths = list(natural)
    left, pending = budget, sorted(range(len(natural)), key=lambda c: natural[c] / weights[c])
    for done, col in enumerate(pending):
        fair = int(left * weights[col] / sum(weights[c] for c in pending[done:]))
        widths[col] = min(natural[col], max(fair, floors[col]))
        left -= widths[col]
    while sum(widths) > budget:  # floors took more than a fair share: the roomiest column gives
        col = max(range(len(widths)), key=lambda c: widths[c] - floors[c])
        widths[col] -= 1
    return widths


_FLOOR = 24
"""A column is kept at least as wide as its longest unbreakable piece, up to this."""


def _floor(head: int, cells: list[str]) -> int:
    pieces = (len(p.rstrip()) for c in cells for line in c.split("\n") for p in _BREAK.split(line))
    return max(head, min(_FLOOR, max(pieces, default=0)))


def _wrapped(cells: list[list[str]], widths: list[int]) -> list[list[str]]:
    return [["\n".join(wrap(c, w)) for c, w in zip(row, widths, strict=True)] for row in cells]


def _used(cells: list[list[str]], count: int) -> list[int]:
    """The widest line of each column."""
    return [max([0, *(max(map(len, row[i].split("\n"))) for row in cells)]) for i in range(count)]


def _fill(
    cells: list[list[str]], headers: Sequence[str], weights: Sequence[float], budget: int
) -> list[list[str]]:
    """The cells wrapped to widths that share `budget`.

    A cell wrapped at a space is narrower than its column's share: what that leaves over
    goes to the columns that still wrap, a few rounds over.
    """
    heads = [len(h) + _HEAD_PAD for h in headers]
    natural = [max(h, n) for h, n in zip(heads, _used(cells, len(headers)), strict=True)]
    floors = [_floor(h, [row[i] for row in cells]) for i, h in enumerate(heads)]
    wrapped = _wrapped(cells, _share(natural, floors, weights, budget))
    for _ in range(4):
        used = [max(h, n) for h, n in zip(heads, _used(wrapped, len(headers)), strict=True)]
        short = [i for i, w in enumerate(used) if w < natural[i]]
        spare = budget - sum(used)
        if spare <= 0 or not short:
            break
        more = [spare // len(short) if i in short else 0 for i in range(len(used))]
        more[short[0]] += spare % len(short)
        wrapped = _wrapped(cells, [w + m for w, m in zip(used, more, strict=True)])
    return wrapped


def table(
    rows: Sequence[Sequence[Any]],
    headers: Sequence[str],
    width: int = WIDTH,
    weights: Sequence[float] | None = None,
) -> str:
    """A tabulate "simple" table no wider than `width`; rows that wrap are set apart by a blank line.

    `weights` (one per column, default all 1) say which columns get more of the room when
    they must share it.
    """
    cells = [[str(c) for c in row] for row in rows]
    weights = weights or [1.0] * len(headers)
    wrapped = _fill(cells, headers, weights, width - _GAP * (len(headers) - 1))
    if any("\n" in c for row in wrapped for c in row):
        spaced: list[list[str]] = []
        for row in wrapped:
            spaced += [row, [""] * len(headers)]
        wrapped = spaced[:-1]
    text = tabulate(wrapped, headers=list(headers), tablefmt="simple", disable_numparse=True)
    return "\n".join(line.rstrip() for line in text.split("\n"))
