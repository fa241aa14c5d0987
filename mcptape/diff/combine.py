"""One report for many cassettes verified against one server: each finding once, with its cassettes.

Pure. `combine` folds per-cassette `DiffReport`s into one: rows that are the same finding
(same section, impact, exchange, path, message and values) become one row whose
`cassettes` names every cassette it occurred in, in the order given.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .canonical import freeze
from .types import MISSING, Difference, DiffOptions, DiffReport, Side


def _key(d: Difference) -> tuple[Any, ...]:
    def value(v: Any) -> str:
        return "<missing>" if v is MISSING else repr(freeze(v))

    return (d.section, d.change, d.impact, d.exchange, d.path, d.message, value(d.a), value(d.b))


def _fold(rows: list[tuple[str, Difference]]) -> list[Difference]:
    order: dict[tuple[Any, ...], int] = {}
    out: list[Difference] = []
    for name, d in rows:
        k = _key(d)
        at = order.get(k)
        if at is None:
            order[k] = len(out)
            out.append(replace(d, cassettes=(name,)))
        elif name not in out[at].cassettes:
            prev = out[at]
            out[at] = replace(prev, cassettes=(*prev.cassettes, name), count=prev.count + d.count)
    return out


def _side(name: str, sides: list[Side]) -> Side:
    """One side standing for many: their era and version where all agree ("mixed" / None where not)."""
    eras = sorted({s.era for s in sides})
    versions = sorted({s.protocol_version or "" for s in sides})
    version = (versions[0] or None) if len(versions) == 1 else None
    return Side(
        name,
        eras[0] if len(eras) == 1 else "mixed",
        version,
        sum(s.exchanges for s in sides),
        sum(s.calls for s in sides),
    )


def combine(reports: list[tuple[str, DiffReport]], live: str, options: DiffOptions) -> DiffReport:
    """The one report of a many-cassette verify; side A is the cassettes, side B the live server."""
    a = _side(f"{len(reports)} cassettes", [r.a for _, r in reports])
    b = _side(live, [r.b for _, r in reports])
    out = DiffReport(a, b, options)
    out.differences = _fold([(n, d) for n, r in reports for d in r.differences])
    out.envelope = _fold([(n, d) for n, r in reports for d in r.envelope])
    out.noise = _fold([(n, d) for n, r in reports for d in r.noise])
    out.masked = _fold([(n, d) for n, r in reports for d in r.masked])
    out.cassettes = [n for n, _ in reports]
    return out
