"""A Mermaid sequence diagram of a cassette's timeline (renders on GitHub and in the HTML page).

Labels keep their real characters through Mermaid's entity escapes (`#35;` for `#`, `#59;` for
`;`), never look-alike glyphs that stock fonts lack. HTTP transport-only rows (a 202, a GET
stream opening, a stream's end) are folded into one note per run; each client session is a
shaded block of its own, so ids that restart in a second session are not read as the first's.
"""

from __future__ import annotations

from .timeline import Row

_ESCAPED = frozenset("#;:<>&\"'%{}|\\`")
"""Characters Mermaid may read as syntax (or HTML) in a message label: written as `#NN;`."""

_SHADES = ("rgb(236, 242, 255)", "rgb(240, 250, 240)")
"""Alternating backgrounds of the session blocks."""


def escape(text: str) -> str:
    """A label with Mermaid's numeric entity escape for each character it would misread."""
    return "".join(f"#{ord(c)};" if c in _ESCAPED else c for c in " ".join(text.split()))


def _arrow(r: Row) -> str:
    answer = r.what.startswith(("result", "error", "[batch] result", "[batch] error"))
    if r.direction == "client->server":
        return "C-->>S" if answer else "C->>S"
    return "S-->>C" if answer else "S->>C"


def _label(r: Row) -> str:
    label = r.what + (f" #{r.id}" if r.id is not None else "")
    if r.latency_ms is not None:
        label += f" ({r.latency_ms:.1f} ms)"
    return label + (f": {r.summary}" if r.summary else "")


def _notable(r: Row) -> bool:
    """A transport row worth its own note: an HTTP error status or a DELETE (the rest is folded)."""
    parts = r.summary.split()
    return "DELETE" in parts or any(p.isdigit() and int(p) >= 400 for p in parts)


def _folded_note(count: int) -> list[str]:
    if not count:
        return []
    return [
        f"    Note over C,S: {count} HTTP transport event{'s' if count != 1 else ''} folded (202s, streams opened and ended)"
    ]


def diagram(timeline: list[Row]) -> str:
    """The sequence diagram: one arrow per message, stderr and exits as notes, sessions apart."""
    lines = ["sequenceDiagram", "    participant C as Client", "    participant S as Server"]
    several = len({r.session for r in timeline}) > 1
    current: int | None = None
    folded = 0
    for r in timeline:
        if r.session != current:
            lines += _folded_note(folded)
            folded = 0
            if several:
                lines += (["    end"] if current is not None else []) + [
                    f"    rect {_SHADES[(r.session - 1) % 2]}",
                    f"    Note over C,S: client session {r.session}",
                ]
            current = r.session
        if r.transport_only and not _notable(r):
            folded += 1
            continue
        lines += _row_lines(r)
    lines += _folded_note(folded)
    if several and current is not None:
        lines.append("    end")
    return "\n".join(lines) + "\n"


def _row_lines(r: Row) -> list[str]:
    if r.transport_only:
        return [f"    Note over C,S: {escape('http ' + r.summary)}"]
    if r.direction in ("client->server", "server->client"):
        return [f"    {_arrow(r)}: {escape(_label(r))}"]
    if r.what in ("exit", "stderr"):
        return [f"    Note over S: {escape(r.what + ' ' + r.summary)}"]
    return []
