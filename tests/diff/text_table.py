"""Reading the text report's tables back: each row's cells, put together from their wrapped lines.

The text report wraps long cells onto more lines to stay within 100 columns (mcptape.diff.columns):
after a space, a `/`, a `,` or a word's hyphen. A test that looks for a path or a message in a
row reads it here rather than on one line of the output.
"""

from __future__ import annotations

import re

_DASHES = re.compile(r"^-+(  +-+)*$")


def _spans(dashes: str) -> list[tuple[int, int | None]]:
    starts = [m.start() for m in re.finditer(r"-+", dashes)]
    return [(s, starts[i + 1] if i + 1 < len(starts) else None) for i, s in enumerate(starts)]


def _join(pieces: list[str]) -> str:
    out = ""
    for p in pieces:
        glue = "" if not out or out.endswith(("/", "-")) else " "
        out += glue + p
    return out


def text_rows(text: str) -> list[dict[str, str]]:
    """Every row of every table in `text`, as {header: cell}, the cell's lines joined."""
    lines = text.splitlines()
    rows: list[dict[str, str]] = []
    for i, line in enumerate(lines):
        if i == 0 or not _DASHES.match(line):
            continue
        spans = _spans(line)
        heads = [lines[i - 1][s:e].strip() for s, e in spans]
        parts: list[list[str]] | None = None
        for row_line in lines[i + 1 :]:
            if not row_line.strip():
                continue  # between two rows that wrap
            if not row_line.startswith(" ") and (
                row_line.endswith(":") or row_line.startswith("[")
            ):
                break  # the next title, or the notes under the table
            if parts is None or not row_line.startswith(" "):  # a row's first line
                if parts is not None:
                    rows.append({h: _join(p) for h, p in zip(heads, parts, strict=True)})
                parts = [[] for _ in spans]
            for cell, (s, e) in zip(parts, spans, strict=True):
                piece = row_line[s:e].strip()
                if piece:
                    cell.append(piece)
        if parts is not None:
            rows.append({h: _join(p) for h, p in zip(heads, parts, strict=True)})
    return rows
